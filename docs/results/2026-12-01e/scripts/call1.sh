#!/usr/bin/env bash
# Session 6, call 1: range kernel variants; Adaptive encode variants (selection parts off); SASS of the head build.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
xrun/range_bench > "$OUT/range.txt" 2>&1
(command -v cuobjdump && cuobjdump -sass xrun/codec-head | gzip > "$OUT/logs/sass-head.txt.gz") > /dev/null 2>&1 &
for round in 1 2; do
  vs="head nozr nohuf none nonect"; [ $round = 2 ] && vs="nonect none head"
  for v in $vs; do
    coders=fixed_length,huffman,adaptive; [ $v = head ] && coders=fixed_length,huffman,zero_run,adaptive
    for inp in smooth noise concat; do
      timeout 100 "xrun/codec-$v" --data data --only $inp --bounds 1e-3,1e-4 --coders $coders --runs 5 --size-mb 64 --seed 7 \
        >"$OUT/logs/codec-$v-$inp-$round.log" 2>&1
      grep -E "concat|^smooth |^noise " "$OUT/logs/codec-$v-$inp-$round.log" | awk -v w="$v" '{print w, $0}' | cut -c1-150 >> "$OUT/table.txt"
    done
  done
done
wait
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
cat range.txt
sort -k2,2 -k4,4 -k6,6 -s table.txt | awk '{printf "%-6s %-8s %-13s %s ratio %s enc %s dec %s abs %s tiles %s\n", $1, substr($2,1,8), $3, $6, $7, $8, $10, $12, $17}'
