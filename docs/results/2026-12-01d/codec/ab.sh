#!/usr/bin/env bash
# Session 5, call 4: codec bench A/B of the encoder's estimate (one scan, early clear) and the look-back backoff.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
for round in 1 2; do
  for v in ${VARIANTS:-head est estlb}; do
    timeout 100 "xrun/codec-$v" --data data --bounds 1e-3,1e-4 --coders fixed_length,huffman,adaptive --runs 5 --size-mb 64 \
      >"$OUT/logs/codec-$v-$round.log" 2>&1
    echo "$v round $round rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$v-$round.log")" >> "$OUT/table.txt"
    grep -E "concat|^smooth |^noise " "$OUT/logs/codec-$v-$round.log" | grep -v raw | awk -v w="$v" '{print w, $0}' | cut -c1-125 >> "$OUT/table.txt"
  done
done
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
sort -k2,2 -k4,4 -k6,6 -s "$OUT/table.txt" | grep -v round | awk '{printf "%-6s %-14s %-13s %s ratio %s enc %s dec %s abs %s tiles %s\n", $1, $2, $3, $6, $7, $8, $10, $12, $17}'
