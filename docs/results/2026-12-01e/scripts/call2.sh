#!/usr/bin/env bash
# Session 6, call 2: decoder (spread parse warp, register window) and encoder (spread serial steps) A/B; estimate cost variants.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
one() {  # variant input coders round
  timeout 100 "xrun/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "concat|^smooth |^noise " "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" '{print w, $0}' >> "$OUT/table.txt"
}
for round in 1 2; do
  for v in head all nospread; do
    for inp in noise concat smooth; do one $v $inp fixed_length,huffman,adaptive $round; done
  done
  for v in e-base e-s4 e-nomatch e-noscore; do one $v smooth adaptive $round; done
done
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
cat status.txt | sort | uniq -c | sort -rn | head -5
awk '{printf "%-3s %-6s %-13s %-10s %6s enc %7s dec %7s abs %7s\n", substr($5,1,3) == "1e-" ? "" : "", $2, $3, $1, $6, $7, $9, $11}' table.txt | sort -k1,1 -k2,2 -k3,3 -s | awk '{print}' | head -0
sort -k2,2 -k5,5 -k3,3 -k1,1 -s table.txt | awk '{printf "%-7s %-6s %-13s %-10s ratio %6s enc %7s dec %7s abs %7s tiles %s\n", $2, $5, $3, $1, $6, $7, $9, $11, $NF}'
