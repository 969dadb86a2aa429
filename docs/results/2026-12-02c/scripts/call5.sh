#!/usr/bin/env bash
# Session 9, call 5: the GPU tests of lb (the landed build, but warp 0 looks back first and
# stages its own planes after, so the tile's inclusive prefix is published as early as in base),
# then the codec bench of base, final (1260e62) and lb: smooth (smooth_f64 with it) and noise as
# f32, bf16, f16 (fixed_length, huffman, adaptive), two rounds (device time was short).
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xr9/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
timeout 150 xr9/gpu_tests > "$OUT/logs/gpu_tests.log" 2>&1
echo "gpu_tests rc=$? $(tail -3 "$OUT/logs/gpu_tests.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
tail -40 "$OUT/logs/gpu_tests.log" > "$OUT/gpu_tests-tail.txt"
one() {  # variant input coders round [extra args]
  timeout 100 "xr9/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2; do
  for v in ${VARIANTS:-base final lb}; do
    for inp in smooth noise; do one $v $inp fixed_length,huffman,adaptive $round "--dtype f32,bf16,f16"; done
  done
done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
sort status.txt | uniq -c | sort -rn | head -12
