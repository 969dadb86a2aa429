#!/usr/bin/env bash
# Session 14 probe 3: the peers' chunks encoded from values (NCCLZ_X_FUSED), tapered parts
# (NCCLZ_X_TAPER), NCCL_P2P_NET_CHUNKSIZE=1M; rows alternate.
set -uo pipefail
tar xJf xr11/pack/data.tar.xz
R='--rel 1e-3 --coder adaptive --phases'
C=NCCL_P2P_NET_CHUNKSIZE=1048576
export LIMIT_S=${LIMIT_S:-520}
OUT="$OUT/p3" VARIANTS="base4||$R --chunk 64M
fused4|NCCLZ_X_FUSED=1|$R --chunk 64M
taper4|NCCLZ_X_TAPER=1|$R --chunk 64M
both4|NCCLZ_X_FUSED=1 NCCLZ_X_TAPER=1|$R --chunk 64M
base4-c|$C|$R --chunk 64M
both4-c|$C NCCLZ_X_FUSED=1 NCCLZ_X_TAPER=1|$R --chunk 64M
both8-c|$C NCCLZ_X_FUSED=1 NCCLZ_X_TAPER=1|$R --chunk 32M
base4b||$R --chunk 64M
both4b|NCCLZ_X_FUSED=1 NCCLZ_X_TAPER=1|$R --chunk 64M
fused4b|NCCLZ_X_FUSED=1|$R --chunk 64M
taper4b|NCCLZ_X_TAPER=1|$R --chunk 64M
base4-cb|$C|$R --chunk 64M
both4-cb|$C NCCLZ_X_FUSED=1 NCCLZ_X_TAPER=1|$R --chunk 64M
fused2-c|$C NCCLZ_X_FUSED=1|$R --chunk 128M
fused-fixed4|NCCLZ_X_FUSED=1|--quantizer fixed4 --coder fixed_length --chunk 64M" bash scripts/perf_env_sweep.sh
