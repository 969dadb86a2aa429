#!/usr/bin/env bash
# Session 8, call 4: codec A/B, 64 MiB, three rounds: base (0279744), zsn (zeros counted on the selector sample, zero_run magnitude sums as bit counts), zsg (zsn + the gate scaled by a shift on full tiles), nozr, nb4x.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xr8/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
one() {  # variant input coders round [extra args]
  timeout 100 "xr8/codec8-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 ${5:-} >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "concat|^smooth |^noise " "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" '{print w, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in ${VARIANTS:-base zsn zsg nozr nb4x}; do
    for inp in noise concat smooth; do one $v $inp fixed_length,huffman,zero_run,adaptive $round; done
  done
done
for round in 1 2; do
  for v in base zsg; do one $v smooth fixed_length,huffman,adaptive bf16-$round "--dtype bf16"; done
done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT" && tar czf logs-bench.tgz logs/codec-* && rm -f logs/codec-*
sort status.txt | uniq -c | sort -rn | head -20
