#!/usr/bin/env bash
# Runs `pe verify` on the samples as CI would on a user's table: every line
# of samples/reference/verify.tsv gives the expected exit code (0 pass,
# 1 a check failed) and the arguments. Fails if any verdict differs, or if
# pe exits 2 (an error) anywhere. With JUNIT_DIR set, each run also writes
# $JUNIT_DIR/<n>.xml (JUnit XML for the CI's test view).
# Usage: scripts/verify-samples.sh PE_BIN
set -uo pipefail
PE=$1
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 2
n=0
bad=0
while IFS=$'\t' read -r want args; do
  case "$want" in ''|'#'*) continue ;; esac
  n=$((n + 1))
  extra=()
  if [ -n "${JUNIT_DIR:-}" ]; then mkdir -p "$JUNIT_DIR" && extra=(--junit "$JUNIT_DIR/$n.xml"); fi
  # shellcheck disable=SC2086  # the arguments are words by design
  out=$("$PE" -q verify $args "${extra[@]}" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL: pe verify $args: exit $rc, want $want"
    echo "$out" | sed 's/^/    /'
    bad=$((bad + 1))
  fi
done < samples/reference/verify.tsv
echo "verify-samples: $((n - bad)) of $n verdicts as expected"
[ "$bad" -eq 0 ]
