#!/usr/bin/env bash
# Session 6, call 6: the lean run of this session's build (prebuilt), then codec A/B: it against p4 (parse with one word a step + the range -> encode programmatic launch).
set -uo pipefail
LIMIT_S=${LIMIT_S:-430} bash scripts/device_run_lean.sh > /tmp/lean.txt 2>&1
mv "$OUT/results.tgz" "$OUT/lean.tgz"
export LD_LIBRARY_PATH="$PWD/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
cp prebuilt/benchmarks/ncclz-codec-bench /tmp/codec-cur
one() {  # variant input coders round
  timeout 60 "/tmp/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "concat|^smooth |^noise " "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" '{print w, $0}' >> "$OUT/table.txt"
}
for round in 1 2; do
  for v in cur; do
    for inp in noise concat smooth; do one $v $inp fixed_length,huffman,adaptive $round; done
  done
done
cd "$OUT" && tar czf ab-logs.tgz logs && rm -rf logs
tail -45 /tmp/lean.txt
