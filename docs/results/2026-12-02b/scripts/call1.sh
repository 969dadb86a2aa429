#!/usr/bin/env bash
# Session 8, call 1: codec A/B, 64 MiB, three rounds: base (0279744), r2 (Adaptive recomputes its
# blocks after zero_run's measure), zs (r2 + zeros counted on the selector's sample), nozr
# (diagnostic: Adaptive without zero_run), bar16 (diagnostic: entropy bar 1/16). SASS of the
# Adaptive encoder (base, r2, zs) with line info, where the machine has nvdisasm.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xr8/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
start=$SECONDS
for v in base r2 zs; do
  if command -v nvdisasm >/dev/null; then nvdisasm -g -c xr8/adk-$v.cubin > "$OUT/logs/sass-$v.txt" 2>&1
  elif command -v cuobjdump >/dev/null; then cuobjdump -sass xr8/adk-$v.cubin > "$OUT/logs/sass-$v.txt" 2>&1; fi
done
echo "sass done at $((SECONDS - start)) s: $(command -v nvdisasm cuobjdump | tr '\n' ' ')" >> "$OUT/status.txt"
one() {  # variant input coders round
  timeout 100 "xr8/codec8-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "concat|^smooth |^noise " "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" '{print w, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in ${VARIANTS:-base r2 zs nozr bar16}; do
    for inp in noise concat smooth; do one $v $inp fixed_length,huffman,zero_run,adaptive $round; done
  done
done
echo "bench done at $((SECONDS - start)) s" >> "$OUT/status.txt"
cd "$OUT" && tar czf logs-bench.tgz logs/codec-* && rm -f logs/codec-*
sort status.txt | uniq -c | sort -rn | head -20
