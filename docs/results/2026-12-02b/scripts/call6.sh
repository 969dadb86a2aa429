#!/usr/bin/env bash
# Session 8, call 6: the GPU tests of the working tree (hy: the sampled zero count decides alone
# only outside 7/16..9/16, every element counted in between), then base, zsg and hy: smooth and
# noise as f32, bf16 and f16 (fixed_length, huffman, adaptive), three rounds; the tiled fields once.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xr8/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
timeout 240 xr8/gpu_tests > "$OUT/logs/gpu_tests.log" 2>&1
echo "gpu_tests rc=$? $(tail -3 "$OUT/logs/gpu_tests.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
tail -40 "$OUT/logs/gpu_tests.log" > "$OUT/gpu_tests-tail.txt"
one() {  # variant input coders round [extra args]
  timeout 100 "xr8/codec8-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" '{print w, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in ${VARIANTS:-base zsg hy}; do
    for inp in smooth noise; do one $v $inp fixed_length,huffman,adaptive $round "--dtype f32,bf16,f16"; done
  done
done
for v in ${VARIANTS:-base zsg hy}; do one $v concat fixed_length,zero_run,adaptive 1; done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT" && tar czf logs-bench.tgz logs/codec-* && rm -f logs/codec-*
sort status.txt | uniq -c | sort -rn | head -20
