#!/usr/bin/env bash
# Session 15, one call for scarce device time: the lean run of the prebuilt build with `runs`
# (count_deltas adds a run of equal symbols with one atomic), trimmed to GPU tests, the 4-part
# allreduce, FixedRate<4> and the cluster tests; then the codec bench of base (bbddd8d, xr13/c3/codec-base)
# and runs (prebuilt), rounds alternating, 64 MiB.
set -uo pipefail
tar xJf xr11/pack/data.tar.xz
start=$SECONDS
SKIP_STEPS="perf-adaptive perf-fixed perf-fixed-2parts perf-adaptive-phases perf-adaptive-bf16 perf-gradient-adaptive-f16 perf-gradient-fixed-f16 perf-gradient-adaptive-bf16 perf-gradient-adaptive perf-fixed8 codec_bench make_gradients lossless_bench" \
  LIMIT_S=${LEAN_S:-330} OUT="$OUT/final" bash scripts/device_run_lean.sh > "$OUT/lean.txt" 2>&1
echo "lean done at $((SECONDS - start)) s" >> "$OUT/status.txt"
export LD_LIBRARY_PATH="$PWD/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/logs"
one() {  # variant binary input coders round dtypes
  timeout 60 "$2" --data data --only $3 --bounds 1e-3,1e-4 --coders $4 --runs 7 --size-mb 64 --seed 7 --dtype $6 >"$OUT/logs/codec-$1-$3-$5.log" 2>&1
  echo "$1 $3 $5 rc=$? $(grep -E '^(OK|FAILED):' "$OUT/logs/codec-$1-$3-$5.log") at $((SECONDS - start)) s" >> "$OUT/status.txt"
  grep -E "^(concat|smooth|noise)" "$OUT/logs/codec-$1-$3-$5.log" | sed 's/concat(13 fields, tiled)x[0-9.]*/concat/' | awk -v w="$1" -v r="$5" '{print w, r, $0}' >> "$OUT/table.txt"
}
for round in 1 2 3; do
  [ $((SECONDS - start)) -gt 540 ] && break
  for v in base runs; do
    b=xr13/c3/codec-base; [ $v = runs ] && b=prebuilt/benchmarks/ncclz-codec-bench
    one $v $b concat huffman,adaptive,zero_run $round f32
    one $v $b noise huffman,adaptive $round f32
    one $v $b smooth huffman,adaptive $round f32
  done
done
cd "$OUT/logs" && tar czf ../logs.tgz . && cd .. && rm -rf logs
grep -E "^=== |rc=|passed|failed|Out of bounds|^ +[0-9]+ +[0-9]+ " lean.txt | head -40
grep -v "rc=0 OK" status.txt | head
awk '$3 != "smooth_f64" {k=$3" "$4" "$6; v[k" "$1]=v[k" "$1]" "$8; keys[k]=1} END{for (k in keys) print k, "|", v[k" base"], "|", v[k" runs"]}' table.txt | sort | python3 -c '
import sys,statistics as s
for l in sys.stdin:
    k,b,r=l.split("|"); b=[float(x) for x in b.split()]; r=[float(x) for x in r.split()]
    if b and r: print("%-32s base %6.1f runs %6.1f %+5.1f%%  (%s | %s)" % (k.strip(), s.median(b), s.median(r), 100*(s.median(r)/s.median(b)-1), " ".join(map(str,b)), " ".join(map(str,r))))'
