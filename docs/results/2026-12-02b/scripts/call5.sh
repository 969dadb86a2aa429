#!/usr/bin/env bash
# Session 8, call 5: the 16-bit types. zsg (landed so far) encoded bf16 smooth data at 1e-4 with
# Adaptive at 125 GB/s where base did 151 (call 4, its bf16 rows). A/B of base, zsg, zsh (zsg with
# the sampled zeros counted after the block's loop, from zz and the stage) and nb4x: smooth and
# noise as f32, bf16 and f16, fixed_length, huffman and adaptive, two rounds; the tiled fields once.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xr8/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
one() {  # variant input coders round [extra args]
  timeout 100 "xr8/codec8-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" '{print w, $0}' >> "$OUT/table.txt"
}
for round in 1 2; do
  for v in ${VARIANTS:-base zsg zsh nb4x}; do
    for inp in smooth noise; do one $v $inp fixed_length,huffman,adaptive $round "--dtype f32,bf16,f16"; done
  done
done
for v in ${VARIANTS:-base zsg zsh nb4x}; do one $v concat fixed_length,zero_run,adaptive 1; done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT" && tar czf logs-bench.tgz logs/codec-* && rm -f logs/codec-*
sort status.txt | uniq -c | sort -rn | head -20
