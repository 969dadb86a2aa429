#!/usr/bin/env bash
# Session 14 call 7: after the encode_chunk refactor (95ecf31): the collectives on 4 ranks, one
# 4-part allreduce row, the reduction-chunk GPU test.
set -uo pipefail
tar xJf xr11/pack/data.tar.xz
export LD_LIBRARY_PATH="$PWD/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
timeout 40 prebuilt/test/gpu_tests "[reduction]" 2>&1 | tail -2
timeout 90 scripts/emulated_cluster.sh -n 4 --timeout 80 -- "$PWD/prebuilt/test/cluster/test_collectives" 2>&1 | tail -4
timeout 40 scripts/emulated_cluster.sh -n 4 --timeout 40 -- "$PWD/prebuilt/benchmarks/ncclz-perf" --data data -C allreduce -b 256M -e 256M \
  --rel 1e-3 --coder adaptive --chunk 64M 2>&1 | grep -E "^ +[0-9]+ +[0-9]+ |Out of bounds"
