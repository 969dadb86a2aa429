#!/usr/bin/env bash
# One-off device call of this session (not committed): the huffman decoder's sub-blocks over 1, 2
# or 4 warps (NCCLZ_HUFFMAN_DECODE_WARPS builds of the codec bench), each run twice, alternating.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
for round in 1 2; do
  for w in 1 2 4; do
    timeout 90 "xrun/codec-w$w" --data data --bounds 1e-3,1e-4 --coders huffman,adaptive --runs 5 --size-mb 64 \
      >"$OUT/logs/codec-w$w-$round.log" 2>&1
    echo "w$w round $round rc=$?" >> "$OUT/table.txt"
    grep -E "concat|^smooth |^noise " "$OUT/logs/codec-w$w-$round.log" | grep -v raw | awk -v w="w$w" '{print w, $0}' | cut -c1-125 >> "$OUT/table.txt"
  done
done
cat "$OUT/table.txt"
