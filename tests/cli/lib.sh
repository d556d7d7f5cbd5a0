# Shared harness of the CLI tests (sourced, not run): `pe` as a user sees it.
#   source lib.sh "$@"   with the test's arguments PE_BIN SCRATCH_DIR:
# sets PE, makes SCRATCH_DIR empty and enters it, and provides
#   ok / bad MESSAGE                    count a check
#   expect_error WHAT REGEX -- ARGS...  pe ARGS must exit 2 with one line
#                                       "pe: error: what: why" matching REGEX
#                                       (a "pe: hint:" may follow), print
#                                       nothing on stdout, leave no file
#   finish [NAME]                       print "N passed, M failed", set status
#   cpu_run ARGS...                     pe ARGS under a hang guard; sets rc and
#                                       cpu (CPU seconds, best of 3 runs)
#   cpu_ratio_under WHAT A B LIMIT      a check that cost A / cost B < LIMIT
# No test here asserts wall-clock time: a busy machine stretches it. Costs
# are compared as CPU-time ratios of two input sizes (a linear cost and a
# quadratic one differ by the size ratio, far more than the load changes a
# ratio), and the only wall-clock limit is a hang guard.
PE=$(realpath "$1")  # absolute: the tests cd into SCRATCH_DIR
DIR=$2
rm -rf "$DIR" && mkdir -p "$DIR" && cd "$DIR" || exit 2
fails=0
passes=0

ok() { passes=$((passes + 1)); }

# Under AddressSanitizer (scripts/sanitize.sh sets ASAN_OPTIONS) a peak RSS
# means nothing: shadow memory and quarantine multiply it. Memory bounds are
# checked with rss_under, which holds there whatever the figure; everything
# else a test checks still runs under the sanitizers.
sanitized() { [ -n "${ASAN_OPTIONS:-}" ]; }
rss_under() { sanitized || { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -lt "$2" ]; }; }  # rss_under KB LIMIT_KB
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

expect_error() {
  local what=$1 regex=$2
  shift 3
  local before after first rc
  before=$(ls -A | grep -v -x -e out.txt -e err.txt)
  "$PE" "$@" >out.txt 2>err.txt
  rc=$?
  after=$(ls -A | grep -v -x -e out.txt -e err.txt)
  first=$(head -n 1 err.txt)
  if [ "$rc" -ne 2 ]; then bad "$what: exit $rc, want 2 ($(cat err.txt))"; return; fi
  if ! [[ "$first" =~ ^pe:\ error:\ .+:\ .+ ]]; then bad "$what: stderr '$first' is not 'pe: error: what: why'"; return; fi
  if ! grep -Eq -- "$regex" err.txt; then bad "$what: stderr '$first' does not match /$regex/"; return; fi
  if [ "$(grep -vc '^pe: hint:' err.txt)" -ne 1 ]; then bad "$what: more than one error line: $(cat err.txt)"; return; fi
  if [ -s out.txt ]; then bad "$what: wrote to stdout"; return; fi
  if [ "$before" != "$after" ]; then bad "$what: left files behind: $after"; return; fi
  ok
}

# Hang guard: a limit only a real hang reaches (not a speed claim).
PE_HANG_GUARD_S=${PE_HANG_GUARD_S:-120}

# CPU seconds (user + system, pe and its children) of `pe ARGS`, the best
# of 3 runs (the load inflates a run's CPU time too, by cache and memory
# contention, never deflates it); stdout in out.txt, stderr in err.txt.
cpu_run() {
  local TIMEFORMAT='%3U %3S' t best="" i
  for i in 1 2 3; do
    t=$({ time timeout "$PE_HANG_GUARD_S" "$PE" "$@" >out.txt 2>err.txt; echo $? >rc.txt; } 2>&1)
    rc=$(cat rc.txt)
    [ "$rc" -eq 124 ] && { bad "pe $*: still running after the ${PE_HANG_GUARD_S} s hang guard"; cpu=0; return; }
    t=$(echo "$t" | awk '{ printf "%.3f", $1 + $2 }')
    best=$(awk -v a="$t" -v b="${best:-$t}" 'BEGIN { print (a < b ? a : b) }')
  done
  cpu=$best
}

# cpu_ratio_under WHAT A B LIMIT: A / B < LIMIT (B at least 5 ms: the
# resolution of the figures).
cpu_ratio_under() {
  local r
  r=$(awk -v a="$2" -v b="$3" 'BEGIN { if (b < 0.005) b = 0.005; printf "%.2f", a / b }')
  echo "$1: CPU time ratio $r ($2 s / $3 s; limit $4)"
  if awk -v r="$r" -v l="$4" 'BEGIN { exit !(r < l) }'; then ok
  else bad "$1: CPU time ratio $r ($2 s / $3 s), want under $4"; fi
}

finish() {
  echo "${1:+$1: }$passes passed, $fails failed"
  [ "$fails" -eq 0 ]
}
