#!/usr/bin/env bash
# Session 14 probe 2: NCCL's point-to-point and socket settings against ncclz's transfers.
set -uo pipefail
tar xJf xr11/pack/data.tar.xz
R='--rel 1e-3 --coder adaptive'
A='--rel 1e-3 --coder adaptive -C alltoall -b 16M -e 16M'
export LIMIT_S=${LIMIT_S:-480}
OUT="$OUT/p2" VARIANTS="base4||$R --chunk 64M --phases
peer1|NCCL_NCHANNELS_PER_NET_PEER=1|$R --chunk 64M --phases
peer1-a2a|NCCL_NCHANNELS_PER_NET_PEER=1|$A
a2a||$A
chunk1M|NCCL_P2P_NET_CHUNKSIZE=1048576|$R --chunk 64M --phases
sock11|NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1|$R --chunk 64M --phases
sock11-a2a|NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1|$A
sock12|NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=2|$R --chunk 64M --phases
sock21|NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=1|$R --chunk 64M --phases
peer1-p2|NCCL_NCHANNELS_PER_NET_PEER=1|$R --chunk 128M --phases
base4b||$R --chunk 64M --phases" bash scripts/perf_env_sweep.sh
