#!/usr/bin/env bash
# Readers on legal but large or unusual inputs: many metadata keys cost
# linear time (a cap, and no quadratic Set), JSON/CSV readers cost about
# the table's bytes (peak RSS from /usr/bin/time), format detection by the
# top-level keys, and rows read out of order from a CSV equal Python's.
# Usage: parsers_test.sh PE_BIN SCRATCH_DIR
source "$(dirname "$0")/lib.sh" "$@"
PY=/usr/bin/python3

# Peak RSS in kB of `pe ARGS` (exit status in rc).
peak() { /usr/bin/time -f %M -o rss.txt "$PE" "$@" >/dev/null 2>err.txt; rc=$?; rss=$(tail -n 1 rss.txt); }

# ---- many metadata keys: more than 65,536 refused, up to 65,536 read -------
# In linear time: each cost is compared with the same command's on 8 times
# fewer keys (CPU time, best of 3). Linear costs give a ratio of about 8 or
# less (the start-up cost is shared), a quadratic Set, duplicate check or
# JSON report 64 (ordered_json's operator[] took 5 s for 65,536 keys).
$PY - <<'PY'
import json, struct
def st(name, n):
    meta = ",".join(f'"k{i}":"{i}"' for i in range(n))
    h = ('{"__metadata__":{' + meta + '},"pe":{"dtype":"F32","shape":[2,1],"data_offsets":[0,8]}}').encode()
    h += b" " * ((-len(h)) % 8)
    open(name, "wb").write(struct.pack("<Q", len(h)) + h + bytes(8))
for tag, n in (("meta8k", 8192), ("meta64k", 65536), ("meta200k", 200000), ("meta1600k", 1600000)):
    st(tag + ".safetensors", n)
    json.dump({"meta": {f"k{i}": i for i in range(n)}, "data": [[1.5]]}, open(tag + ".json", "w"))
PY
for ext in safetensors json; do
  for n in 200k 1600k; do
    cpu_run inspect "meta$n.$ext" --no-identify
    if [ "$rc" -eq 2 ] && grep -q "more than 65536 keys (pe reads at most 65536)" err.txt; then ok
    else bad "meta$n.$ext: exit $rc, want a refusal: $(head -c 200 err.txt)"; fi
    eval "refuse_$n=\$cpu"
  done
  cpu_ratio_under "refusing 1,600,000 against 200,000 keys ($ext)" "$refuse_1600k" "$refuse_200k" 24
  for n in 8192 65536; do
    cpu_run inspect "meta$((n / 1024))k.$ext" --no-identify
    if [ "$rc" -eq 0 ] && grep -q "k$((n - 1))" out.txt; then ok
    else bad "meta$((n / 1024))k.$ext: exit $rc, want it read: $(head -c 200 err.txt)"; fi
    eval "read_$n=\$cpu"
  done
  cpu_ratio_under "reading 65,536 against 8,192 keys ($ext)" "$read_65536" "$read_8192" 24
done
expect_error "200k safetensors keys" "__metadata__ has more than 65536 keys" -- inspect meta200k.safetensors
# The JSON report of those keys is linear too. (Not under the sanitizers,
# whose allocator changes the costs of the two sizes differently.)
sanitized || for ext in safetensors json; do
  for n in 8192 65536; do
    cpu_run inspect "meta$((n / 1024))k.$ext" --no-identify --json
    if [ "$rc" -eq 0 ] && $PY -c 'import json,sys; n=int(sys.argv[2]); m=json.load(open(sys.argv[1]))["metadata"]; assert len(m) == n and m[f"k{n-1}"] == n - 1' out.txt "$n"; then ok
    else bad "meta$((n / 1024))k.$ext --json: exit $rc, want all $n keys: $(head -c 200 err.txt)"; fi
    eval "json_$n=\$cpu"
  done
  cpu_ratio_under "the JSON report of 65,536 against 8,192 keys ($ext)" "$json_65536" "$json_8192" 24
done

# ---- memory: about the table's bytes ---------------------------------------
# 32 MiB of JSON holding 16 Mi zeros (a 64 MiB float32 table); the same as
# multi-tensor JSON; 32 MiB of "0\n" as CSV (16 Mi rows).
$PY - <<'PY'
row = "[" + ",".join(["0"] * 1024) + "]"
n = (32 << 20) // (len(row) + 2)
body = ",\n".join([row] * n)
open("dtype_first.json", "w").write('{"meta": {"dtype": "float32"}, "data": [\n' + body + "\n]}\n")
open("no_meta.json", "w").write('{"data": [\n' + body + "\n]}\n")
open("tensors.json", "w").write('{"meta": {}, "tensors": {"t": {"dtype": "float32", "shape": [%d, 1024], "data": [\n' % n
                                + body + "\n]}}}\n")
open("zeros.csv", "w").write("0\n" * (16 << 20))
open("rows.txt", "w").write(str(n))
PY
table_kb=$(( $(cat rows.txt) * 1024 * 4 / 1024 ))
check_peak() {  # FILE LIMIT_KB WHY
  peak inspect "$1" --no-identify
  echo "$1: peak RSS ${rss} kB (table ${table_kb} kB, limit $2 kB)"
  if [ "$rc" -eq 0 ] && rss_under "$rss" "$2"; then ok; else bad "$1: exit $rc, peak RSS $rss kB above $2 kB ($3)"; fi
}
check_peak dtype_first.json $(( table_kb * 5 / 4 + 30000 )) "numbers stored in the dtype given first"
check_peak no_meta.json $(( table_kb * 2 + 30000 )) "numbers stored as doubles"
check_peak tensors.json $(( table_kb * 5 / 4 + 30000 )) "multi-tensor JSON streamed, not a DOM"
check_peak zeros.csv 48000 "the CSV row index is sparse"

# ---- the shape of a JSON file is decided by its top-level keys -------------
$PY - <<'PY'
import json
pad = ["x" * 1000] * 70  # 70 KB of metadata before "tensors", each string within the 64 KiB cap
json.dump({"meta": {"note": pad}, "tensors": {"a": {"shape": [2], "data": [1, 2]}}}, open("late_tensors.json", "w"))
json.dump({"meta": {"tensors": {"data": 1}, "x": "\"tensors\""}, "data": [[3, 4]]}, open("word.json", "w"))
PY
"$PE" inspect late_tensors.json --no-identify >out.txt 2>err.txt
if [ $? -eq 0 ] && grep -q "2 x 1" out.txt; then ok; else bad "late_tensors.json: $(cat err.txt) $(head -3 out.txt)"; fi
"$PE" inspect word.json --no-identify >out.txt 2>err.txt
if [ $? -eq 0 ] && grep -q "1 x 2" out.txt; then ok; else bad "word.json: $(cat err.txt) $(head -3 out.txt)"; fi

# ---- CSV rows read in any order equal Python's reading ---------------------
$PY - <<'PY'
import random
random.seed(7)
lines = ["position,a,b,c"]
for p in range(60000):
    lines.append(f"{p},{random.random():.17g},{-p * 0.5},{random.randint(-9, 9)}e-3")
    if p % 977 == 0:
        lines.append("")  # blank lines are skipped
open("rows.csv", "w", newline="").write("\r\n".join(lines) + "\r\n")
PY
for range in 0:5 59990:60000 31000:31010 12345:12350 0:3; do
  "$PE" inspect rows.csv --no-identify --json --preview 0 --rows "$range" >"slice.json" 2>err.txt || { bad "rows $range: $(cat err.txt)"; continue; }
  if $PY - "$range" <<'PY'
import csv, json, sys
a, b = map(int, sys.argv[1].split(":"))
rows = [r for r in csv.reader(open("rows.csv", newline="")) if r][1:]
want = [[float(x) for x in r[1:]] for r in rows[a:b]]
got = [r["values"] for r in json.load(open("slice.json"))["slice"]["rows"]]
sys.exit(0 if got == want else 1)
PY
  then ok; else bad "rows $range of rows.csv differ from Python's csv + float()"; fi
done

finish parsers
