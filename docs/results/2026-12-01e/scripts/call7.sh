#!/usr/bin/env bash
# Session 6, call 7: codec A/B of this session's build (cur) against p4 (parse: one stream word loaded a step, the sub-block's last two deltas in a loop of their own; encode: programmatic launch after the range pass).
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
cp prebuilt/benchmarks/ncclz-codec-bench /tmp/codec-cur
cp prebuilt/x/codec-p4 /tmp/codec-p4
one() {  # variant input coders round
  timeout 60 "/tmp/codec-$1" --data data --only $2 --bounds 1e-3,1e-4 --coders $3 --runs 5 --size-mb 64 --seed 7 >"$OUT/logs/codec-$1-$2-$4.log" 2>&1
  echo "$1 $2 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$2-$4.log")" >> "$OUT/status.txt"
  grep -E "concat|^smooth |^noise " "$OUT/logs/codec-$1-$2-$4.log" | sed 's/concat(13 fields, tiled)x3.4/concat/' | awk -v w="$1" '{print w, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  for v in cur p4; do
    for inp in noise concat smooth; do one $v $inp fixed_length,huffman,zero_run,adaptive $round; done
  done
done
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
cat status.txt | sort | uniq -c
