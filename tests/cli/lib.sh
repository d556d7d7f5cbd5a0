# Shared harness of the CLI tests (sourced, not run): `pe` as a user sees it.
#   source lib.sh "$@"   with the test's arguments PE_BIN SCRATCH_DIR:
# sets PE, makes SCRATCH_DIR empty and enters it, and provides
#   ok / bad MESSAGE                    count a check
#   expect_error WHAT REGEX -- ARGS...  pe ARGS must exit 2 with one line
#                                       "pe: error: what: why" matching REGEX
#                                       (a "pe: hint:" may follow), print
#                                       nothing on stdout, leave no file
#   finish [NAME]                       print "N passed, M failed", set status
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

finish() {
  echo "${1:+$1: }$passes passed, $fails failed"
  [ "$fails" -eq 0 ]
}
