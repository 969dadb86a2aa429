#!/usr/bin/env bash
# Session 21, call 4: 4-rank allreduce, 256 MiB f32, REL 1e-3, Adaptive in 4 parts: 560af6a (new) and
# session 20's prebuilt (old: built at 11:43-11:51, session 18's code), alternating.
set -uo pipefail
t0=$SECONDS
tar xJf xr16/prebuilt21.tar.xz && tar xJf xr11/pack/data.tar.xz && mkdir -p old && tar xJf xr16/prebuilt20.tar.xz -C old
for r in 1 2; do
  for v in old new; do
    dir=$PWD/prebuilt; [ $v = old ] && dir=$PWD/old/prebuilt
    LD_LIBRARY_PATH=$dir/lib timeout 40 scripts/emulated_cluster.sh -n 4 --timeout 35 -- $dir/benchmarks/ncclz-perf --data data \
      -C allreduce -b 256M -e 256M --rel 1e-3 --coder adaptive --chunk 64M > "$OUT/$v-$r.log" 2>&1
    echo "$v $r rc=$? $(grep -E '^ +[0-9]+ +[0-9]+ ' "$OUT/$v-$r.log" | awk -F'|' '{print $2 "|" $3 "|" $4}') at $((SECONDS - t0)) s"
  done
done
