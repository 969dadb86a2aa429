#!/usr/bin/env bash
# Session 14: the lean run of the build with the peers' chunks quantized by their encoder and the
# own codes quantized into the sum, then NCCL_P2P_NET_CHUNKSIZE rows alternating with defaults.
set -uo pipefail
tar xJf xr11/pack/data.tar.xz
LIMIT_S=${LEAN_S:-430} OUT="$OUT/final" bash scripts/device_run_lean.sh | tail -30
R='--rel 1e-3 --coder adaptive'
C1=NCCL_P2P_NET_CHUNKSIZE=1048576
C2=NCCL_P2P_NET_CHUNKSIZE=2097152
LIMIT_S=${SWEEP_S:-140} OUT="$OUT/sweep" VARIANTS="base4||$R --chunk 64M
c1m4|$C1|$R --chunk 64M
c2m4|$C2|$R --chunk 64M
base4b||$R --chunk 64M
c1m4b|$C1|$R --chunk 64M
c2m4b|$C2|$R --chunk 64M
c1m2|$C1|$R --chunk 128M
c1m1|$C1|$R
base4c||$R --chunk 64M" bash scripts/perf_env_sweep.sh | grep -v "^===" | grep -v "ncclz 0 OK"
