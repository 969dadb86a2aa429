#!/usr/bin/env bash
# Session 16, call 2: GPU tests of `opt` (huffman build_tile: the merge keeps each queue's next
# weight in registers; the length limiting starts at the deepest leaf, not at m); the codec bench of
# base (bbddd8d), jpeg (the length-limiting start only) and opt, three rounds alternating, 64 MiB.
set -uo pipefail
A=xr14/d1
tar xJf xr11/pack/data.tar.xz
mkdir -p "$OUT/logs"
start=$SECONDS
for v in base jpeg opt; do /usr/local/cuda/bin/cuobjdump --dump-resource-usage $A/codec-$v 2>/dev/null | grep -A1 "encode_kernel" | grep -o "Function [^:]*\|REG:[0-9]*\|STACK:[0-9]*\|LOCAL:[0-9]*" | paste - - - - | awk -v v=$v '{print v, $0}' | c++filt >> "$OUT/resources.txt"; done
timeout 150 $A/gpu_tests-opt > "$OUT/logs/gpu_tests-opt.log" 2>&1
echo "gpu_tests opt rc=$? $(tail -3 "$OUT/logs/gpu_tests-opt.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
tail -30 "$OUT/logs/gpu_tests-opt.log" > "$OUT/gpu_tests-tail.txt"
one() {  # variant input coders round dtypes
  timeout 60 "$A/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 7 --size-mb 64 --seed 7 --dtype $5 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 $4 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log") at $((SECONDS - start)) s" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x[0-9.]*/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3 4; do
  [ $((SECONDS - start)) -gt 420 ] && break
  for v in base jpeg opt; do
    one $v concat huffman,adaptive $round f32
    one $v noise huffman,adaptive $round f32
    one $v smooth huffman,adaptive $round f32
  done
done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
cat resources.txt | cut -c1-200
grep -v "rc=0 OK" status.txt | head
awk '$3 != "smooth_f64" && $4 != "raw" {k=$3" "$4" "$6; c[k" "$1]=c[k" "$1]" "$8; keys[k]=1} END{for (k in keys) print k, "|", c[k" base"], "|", c[k" jpeg"], "|", c[k" opt"]}' table.txt | sort | python3 -c '
import sys,statistics as s
for l in sys.stdin:
    k,b,j,o=l.split("|"); m=[s.median([float(x) for x in v.split()]) for v in (b,j,o)]
    print("%-26s base %6.1f jpeg %6.1f (%+5.1f%%) opt %6.1f (%+5.1f%%)  [%s| %s| %s]" % (k.strip(), m[0], m[1], 100*(m[1]/m[0]-1), m[2], 100*(m[2]/m[0]-1), b.strip(), j.strip(), o.strip()))'
