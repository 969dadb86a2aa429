#!/usr/bin/env bash
# One-off A/B of this session (not committed): tapered pipeline parts and the bit reader's look-ahead.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/xrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
row() { local name=$1 bin=$2; shift 2
  timeout 70 scripts/emulated_cluster.sh -n 4 --timeout 60 -- "$PWD/$bin" --data data -C allreduce -b 256M -e 256M \
    --json "$OUT/logs/$name.jsonl" "$@" >"$OUT/logs/$name.log" 2>&1
  echo "$name $(grep -E '^ +[0-9]+ +[0-9]+ ' "$OUT/logs/$name.log" | awk '{print "nccl", $7, "ncclz", $12, "x", $17, "ratio", $18, "wrong", $10, $15}')" | tee -a "$OUT/table.txt"
}
for c in 1 2; do
  row even4-$c xrun/ncclz-perf-even --coder adaptive --chunk 64M
  row taper4-$c xrun/ncclz-perf-taper --coder adaptive --chunk 64M
done
row even8 xrun/ncclz-perf-even --coder adaptive --chunk 32M
row taper8 xrun/ncclz-perf-taper --coder adaptive --chunk 32M
row taper6 xrun/ncclz-perf-taper --coder adaptive --chunk 40M
row even4-phases xrun/ncclz-perf-even --coder adaptive --chunk 64M --phases
row taper4-phases xrun/ncclz-perf-taper --coder adaptive --chunk 64M --phases
timeout 90 scripts/emulated_cluster.sh -n 4 --timeout 80 -- "$PWD/xrun/test_collectives-taper" >"$OUT/logs/collectives4-taper.log" 2>&1
echo "collectives4-taper rc=$?" | tee -a "$OUT/table.txt"; tail -3 "$OUT/logs/collectives4-taper.log"
for a in a1 a2 a4; do
  timeout 60 "xrun/codec-bench-$a" --data data --bounds 1e-3,1e-4 --coders huffman,adaptive --runs 5 --size-mb 64 >"$OUT/logs/codec-$a.log" 2>&1
  echo "codec $a rc=$?" >> "$OUT/table.txt"
  grep -E "concat|smooth |noise " "$OUT/logs/codec-$a.log" | grep -v raw | awk -v a=$a '{print a, $0}' | cut -c1-130 >> "$OUT/table.txt"
done
cat "$OUT/table.txt"
