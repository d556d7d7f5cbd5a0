#!/bin/bash
# Output files: temporary names, stale temporaries, every terminating
# signal, symbolic links (dangling, own, and the fs.protected_symlinks rule
# in sticky world-writable folders), targets the caller may not write.
source "$(dirname "$0")/lib.sh" "$@"
ulimit -c 0  # SIGQUIT, SIGSEGV, SIGABRT: no core files here

temps() { ls -A | grep 'pe-tmp'; }

# ---- the temporary file: visible, named after the target and the pid ------
set -m  # background jobs in their own group: SIGINT/SIGQUIT not ignored
"$PE" generate --d-model 1024 --max-len 3000000 -o big.csv 2>err.txt &
pid=$!
for _ in $(seq 1200); do [ -n "$(temps)" ] && break; sleep 0.05; done
name=$(temps)
[[ "$name" =~ ^big\.csv\.pe-tmp-$pid-[A-Za-z0-9]{6}$ ]] && ok || bad "temporary name '$name', want big.csv.pe-tmp-$pid-XXXXXX"
ls | grep -q 'pe-tmp' && ok || bad "the temporary file is hidden from ls"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
[ -n "$(temps)" ] && ok || bad "kill -9 left no temporary file (the test needs one)"
# An unrelated stale-looking name with a live pid (this shell) and a file
# of another target stay; the next run for big.csv removes its dead one.
: >"big.csv.pe-tmp-$$-abcdef"
: >"other.csv.pe-tmp-999999-abcdef"
: >".big.csv.pe-tmp-Xy12ab"; touch -d '2 days ago' ".big.csv.pe-tmp-Xy12ab"
: >".big.csv.pe-tmp-Xy34ab"
"$PE" generate --d-model 4 --max-len 4 -o big.csv 2>err.txt || bad "rerun: $(cat err.txt)"
[ -e "$name" ] && bad "stale temporary $name not removed by the next run" || ok
[ -e ".big.csv.pe-tmp-Xy12ab" ] && bad "a day-old legacy temporary not removed" || ok
[ -e ".big.csv.pe-tmp-Xy34ab" ] && ok || bad "a fresh legacy temporary was removed"
[ -e "big.csv.pe-tmp-$$-abcdef" ] && ok || bad "a temporary of a live process was removed"
[ -e "other.csv.pe-tmp-999999-abcdef" ] && ok || bad "a temporary of another target was removed"
rm -f ./*pe-tmp* .*pe-tmp* big.csv

# ---- every terminating signal removes the temporary file ------------------
signum() { kill -l "$1"; }
# (AddressSanitizer owns SIGSEGV and SIGBUS: under it they are its reports.)
sigs="HUP INT QUIT TERM USR1 USR2 ALRM VTALRM PROF XCPU SEGV ABRT BUS RTMIN+1"
sanitized && sigs=${sigs//SEGV /} && sigs=${sigs//BUS /}
for sig in $sigs; do
  for target in old new; do
    rm -f big.csv
    [ "$target" = old ] && echo "old contents" >big.csv
    "$PE" generate --d-model 1024 --max-len 3000000 -o big.csv 2>err.txt &
    pid=$!
    for _ in $(seq 1200); do [ -n "$(temps)" ] && break; sleep 0.05; done
    sleep 0.2
    kill -s "$sig" "$pid"
    wait "$pid"
    rc=$?
    want=$((128 + $(signum "$sig")))
    if [ "$rc" -ne "$want" ]; then bad "SIG$sig ($target target): exit $rc, want $want ($(cat err.txt))"
    elif [ -n "$(temps)" ]; then bad "SIG$sig ($target target): temporary file left: $(temps)"
    elif [ "$target" = old ] && [ "$(cat big.csv)" != "old contents" ]; then bad "SIG$sig: the old target was changed"
    elif [ "$target" = new ] && [ -e big.csv ]; then bad "SIG$sig: the target was created"
    else ok; fi
    rm -f ./*pe-tmp*
  done
done
# SIGPIPE and SIGXFSZ are ignored (EPIPE, EFBIG are reported by write()):
# the run goes on, then SIGTERM ends it cleanly.
for sig in PIPE XFSZ; do
  "$PE" generate --d-model 1024 --max-len 3000000 -o big.csv 2>err.txt &
  pid=$!
  for _ in $(seq 1200); do [ -n "$(temps)" ] && break; sleep 0.05; done
  kill -s "$sig" "$pid"
  sleep 0.2
  kill -0 "$pid" 2>/dev/null && ok || bad "SIG$sig ended the run"
  kill -TERM "$pid"
  wait "$pid"
  [ -z "$(temps)" ] && ok || bad "SIG$sig then SIGTERM: temporary file left"
  rm -f big.csv
done
# A signal ignored at start (nohup) stays ignored.
nohup "$PE" generate --d-model 1024 --max-len 3000000 -o big.csv >/dev/null 2>err.txt &
pid=$!
for _ in $(seq 1200); do [ -n "$(temps)" ] && break; sleep 0.05; done
kill -HUP "$pid"
sleep 0.2
kill -0 "$pid" 2>/dev/null && ok || bad "SIGHUP under nohup ended the run"
kill -TERM "$pid"
wait "$pid"
rm -f big.csv ./*pe-tmp*
set +m

# ---- symbolic links ----------------------------------------------------------
# A dangling link: the file is created where it points, the link stays.
mkdir -p links/sub
ln -s sub/new.csv links/dangling.csv
if ! "$PE" generate --d-model 2 --max-len 2 -o links/dangling.csv 2>err.txt; then bad "dangling link: $(cat err.txt)"
elif [ ! -L links/dangling.csv ]; then bad "dangling link: replaced by a file"
elif [ "$(head -1 links/sub/new.csv)" != "position,dim_0,dim_1" ]; then bad "dangling link: sub/new.csv not created"
elif [ -n "$(ls -A links/sub | grep pe-tmp)" ]; then bad "dangling link: temporary left"
else ok; fi
# A chain of links to one's own file is written through.
echo old >links/real.csv && ln -s real.csv links/l1.csv && ln -s l1.csv links/l2.csv
if ! "$PE" generate --d-model 2 --max-len 2 -o links/l2.csv 2>err.txt; then bad "link chain: $(cat err.txt)"
elif [ ! -L links/l2.csv ] || [ ! -L links/l1.csv ]; then bad "link chain: a link was replaced"
elif [ "$(head -1 links/real.csv)" != "position,dim_0,dim_1" ]; then bad "link chain: real.csv not written"
else ok; fi
ln -s loop.csv links/loop.csv
expect_error "link loop" "Too many levels of symbolic links" -- generate --d-model 2 --max-len 2 -o links/loop.csv

# A file one may not write is refused, as by the shell's '>' (root may
# write anything, so only when not root or through setpriv below).
if [ "$(id -u)" -ne 0 ]; then
  echo keep >ro.csv && chmod 444 ro.csv
  expect_error "read-only target" "cannot write 'ro.csv': Permission denied" -- generate --d-model 2 --max-len 2 -o ro.csv
  [ "$(cat ro.csv)" = keep ] && ok || bad "read-only target changed"
  rm -f ro.csv
fi

# As another user (needs root to switch): a sticky world-writable folder
# like /tmp with links planted by a third user.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
  T=$(mktemp -d /tmp/pe-sticky-XXXXXX)
  chmod 755 "$T"
  mkdir "$T/sticky" && chmod 1777 "$T/sticky"
  # root's file lies in a folder the caller owns: a rename over it would
  # succeed where the shell's '>' gets "Permission denied".
  mkdir "$T/nob" && chown 65534:65534 "$T/nob"
  echo "root data" >"$T/nob/root.csv" && chmod 644 "$T/nob/root.csv"
  # 1. a link owned by a third user (uid 12345) to root's file
  ln -s "$T/nob/root.csv" "$T/sticky/out.csv" && chown -h 12345 "$T/sticky/out.csv"
  as_nobody sh -c "echo x > '$T/sticky/shell.csv'" 2>/dev/null; rm -f "$T/sticky/shell.csv"
  as_nobody "$PE" generate --d-model 2 --max-len 2 -o "$T/sticky/out.csv" >out.txt 2>err.txt
  rc=$?
  if [ "$rc" -ne 2 ]; then bad "planted link: exit $rc, want 2 ($(cat err.txt))"
  elif ! grep -qE "^pe: error: cannot write '.*/sticky/out.csv': refusing to follow symlink '.*/sticky/out.csv' \(owned by uid 12345 in sticky folder '.*/sticky'\)$" err.txt; then
    bad "planted link: stderr $(cat err.txt)"
  elif [ "$(cat "$T/nob/root.csv")" != "root data" ]; then bad "planted link: root's file was replaced"
  elif [ -n "$(ls -A "$T/nob" "$T/sticky" | grep pe-tmp)" ]; then bad "planted link: temporary left"
  else ok; fi
  # 2. the caller's own link to root's file: followed, but the file is not
  #    the caller's to write: refused as '>' would be.
  rm -f "$T/sticky/out.csv"
  as_nobody ln -s "$T/nob/root.csv" "$T/sticky/mine.csv"
  as_nobody sh -c "echo x > '$T/sticky/mine.csv'" 2>/dev/null && bad "setup: the shell could write root's file"
  as_nobody "$PE" generate --d-model 2 --max-len 2 -o "$T/sticky/mine.csv" >out.txt 2>err.txt
  rc=$?
  if [ "$rc" -ne 2 ]; then bad "own link to root's file: exit $rc, want 2"
  elif ! grep -qE "^pe: error: cannot write '.*/sticky/mine.csv': Permission denied \(the file '.*/nob/root.csv' it links to\)$" err.txt; then
    bad "own link to root's file: stderr $(cat err.txt)"
  elif [ "$(cat "$T/nob/root.csv")" != "root data" ]; then bad "own link: root's file was replaced"
  else ok; fi
  # 3. the caller's read-only file in a folder the caller owns: refused.
  as_nobody sh -c "echo keep > '$T/nob/ro.csv' && chmod 444 '$T/nob/ro.csv'"
  as_nobody "$PE" generate --d-model 2 --max-len 2 -o "$T/nob/ro.csv" >out.txt 2>err.txt
  rc=$?
  if [ "$rc" -ne 2 ] || ! grep -qx "pe: error: cannot write '$T/nob/ro.csv': Permission denied" err.txt; then
    bad "read-only own file: exit $rc, $(cat err.txt)"
  elif [ "$(cat "$T/nob/ro.csv")" != keep ]; then bad "read-only own file was replaced"
  else ok; fi
  # 4. a link owned by the folder's owner (root) to the caller's file, and
  #    the caller's own link to the caller's file: written through.
  as_nobody sh -c "echo old > '$T/nob/mine.csv'"
  ln -s "$T/nob/mine.csv" "$T/sticky/byroot.csv"
  as_nobody ln -s "$T/nob/mine.csv" "$T/sticky/byme.csv"
  for l in byroot byme; do
    if ! as_nobody "$PE" generate --d-model 2 --max-len 2 -o "$T/sticky/$l.csv" 2>err.txt; then bad "link $l: $(cat err.txt)"
    elif [ ! -L "$T/sticky/$l.csv" ]; then bad "link $l: replaced by a file"
    elif [ "$(head -1 "$T/nob/mine.csv")" != "position,dim_0,dim_1" ]; then bad "link $l: not written through"
    elif [ "$(stat -c %U "$T/nob/mine.csv")" != nobody ]; then bad "link $l: owner changed"
    else ok; fi
    as_nobody sh -c "echo old > '$T/nob/mine.csv'"
  done
  # 5. a dangling link planted by a third user: refused, nothing created.
  ln -s "$T/nob/planted.csv" "$T/sticky/dang.csv" && chown -h 12345 "$T/sticky/dang.csv"
  as_nobody "$PE" generate --d-model 2 --max-len 2 -o "$T/sticky/dang.csv" >out.txt 2>err.txt
  rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q "refusing to follow symlink" err.txt; then bad "planted dangling link: exit $rc, $(cat err.txt)"
  elif [ -e "$T/nob/planted.csv" ]; then bad "planted dangling link: file created"
  else ok; fi
  # 6. verify --junit and dot -o go through the same writer.
  as_nobody "$PE" generate --d-model 4 --max-len 8 -o "$T/nob/t.npy" 2>/dev/null
  ln -s "$T/nob/root.csv" "$T/sticky/r.xml" && chown -h 12345 "$T/sticky/r.xml"
  as_nobody "$PE" verify "$T/nob/t.npy" --d-model 4 --junit "$T/sticky/r.xml" >out.txt 2>err.txt
  grep -q "refusing to follow symlink" err.txt && [ "$(cat "$T/nob/root.csv")" = "root data" ] && ok \
    || bad "verify --junit through a planted link: $(cat err.txt)"
  rm -rf "$T"
else
  echo "skipped: the other-user symlink checks need root and setpriv"
fi

finish output_files
