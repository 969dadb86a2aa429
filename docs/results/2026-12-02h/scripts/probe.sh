#!/usr/bin/env bash
# Session 14 probe: where the 4-part allreduce's transfers lose rate.
set -uo pipefail
tar xJf xr11/pack/data.tar.xz
R='--rel 1e-3 --coder adaptive'
export LIMIT_S=${LIMIT_S:-480}
OUT="$OUT/p1" VARIANTS="base4||$R --chunk 64M --phases
a2a||$R -C alltoall -b 4M -e 64M -f 4
mps50|CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50|$R --chunk 64M --phases
mps25|CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25|$R --chunk 64M --phases
sock22|NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2|$R --chunk 64M --phases
ring||$R --schedule ring
p8||$R --chunk 32M --phases
a2a-sock22|NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2|$R -C alltoall -b 4M -e 64M -f 4
base4b||$R --chunk 64M --phases" bash scripts/perf_env_sweep.sh
