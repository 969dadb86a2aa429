#!/usr/bin/env bash
# Session 12, call F: the GPU tests of s (symbol_map: L - bit_width(L) worked out once per thread in
# the encoder's bit count and stream writer), then the codec bench of f (74ef21d, HEAD) and s:
# smooth and noise as f32, bf16, f16 (fixed_length, huffman, adaptive), three rounds, the tiled
# fields once.
#   run(command="bash docs/results/2026-12-02f/scripts/callF.sh", carry=["xr12/callF", "xr11/pack"])
set -uo pipefail
E=xr12/callF
tar xJf xr11/pack/data.tar.xz  # the fields
export LD_LIBRARY_PATH="$PWD/$E/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
timeout 150 $E/gpu_tests-s > "$OUT/logs/gpu_tests-s.log" 2>&1
echo "gpu_tests s rc=$? $(tail -3 "$OUT/logs/gpu_tests-s.log" | tr '\n' ' ') at $((SECONDS - start)) s" >> "$OUT/status.txt"
tail -40 "$OUT/logs/gpu_tests-s.log" > "$OUT/gpu_tests-tail.txt"
one() {  # variant input coders round [extra args]
  timeout 100 "$E/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" -v r="$4" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in f s; do
    for inp in smooth noise; do one $v $inp fixed_length,huffman,adaptive $round "--dtype f32,bf16,f16"; done
  done
done
for v in f s; do one $v concat fixed_length,huffman,zero_run,adaptive 1 "--dtype f32,bf16,f16"; done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
sort status.txt | uniq -c | sort -rn | head -12
