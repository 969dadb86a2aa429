#!/usr/bin/env bash
# Session 12, call D: the GPU tests of m and m3 (the whole count's first barrier dropped: its
# counts go to arrays of their own; m also counts with bit masks), then the codec bench of runs
# (ab5db55), m and m3: smooth and noise as f32, bf16, f16 (fixed_length, huffman, adaptive), three
# rounds, the tiled fields once.
#   run(command="bash docs/results/2026-12-02f/scripts/callD.sh", carry=["xr12/callD", "xr11/pack"])
set -uo pipefail
D=xr12/callD
tar xJf xr11/pack/data.tar.xz  # the fields
export LD_LIBRARY_PATH="$PWD/$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
for v in m m3; do
  timeout 150 $D/gpu_tests-$v > "$OUT/logs/gpu_tests-$v.log" 2>&1
  echo "gpu_tests $v rc=$? $(tail -3 "$OUT/logs/gpu_tests-$v.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
done
one() {  # variant input coders round [extra args]
  timeout 100 "$D/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in runs m m3; do
    for inp in smooth noise; do one $v $inp fixed_length,huffman,adaptive $round "--dtype f32,bf16,f16"; done
  done
done
for v in runs m m3; do one $v concat fixed_length,huffman,zero_run,adaptive 1 "--dtype f32,bf16,f16"; done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
sort status.txt | uniq -c | sort -rn | head -12
