#!/usr/bin/env bash
# Session 12, call E: the GPU tests of f (74ef21d: the runs rule on zero deltas only, half zero
# codes always measured; a GPU test of both cases), then the codec bench of runs (ab5db55) and f:
# smooth and noise as f32, bf16, f16 (fixed_length, huffman, adaptive), three rounds, the tiled
# fields once.
#   run(command="bash docs/results/2026-12-02f/scripts/callE.sh", carry=["xr12/callE", "xr11/pack"])
set -uo pipefail
E=xr12/callE
tar xJf xr11/pack/data.tar.xz  # the fields
export LD_LIBRARY_PATH="$PWD/$E/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
timeout 150 $E/gpu_tests-f > "$OUT/logs/gpu_tests-f.log" 2>&1
echo "gpu_tests f rc=$? $(tail -3 "$OUT/logs/gpu_tests-f.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
tail -40 "$OUT/logs/gpu_tests-f.log" > "$OUT/gpu_tests-tail.txt"
one() {  # variant input coders round [extra args]
  timeout 100 "$E/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in runs f; do
    for inp in smooth noise; do one $v $inp fixed_length,huffman,adaptive $round "--dtype f32,bf16,f16"; done
  done
done
for v in runs f; do one $v concat fixed_length,huffman,zero_run,adaptive 1 "--dtype f32,bf16,f16"; done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
sort status.txt | uniq -c | sort -rn | head -12
