#!/usr/bin/env bash
# build_bench.sh NAME INCLUDE_DIR (from the repository root): the codec bench as meson builds it, into xr10/NAME
set -e
name=$1; inc=$2; shift 2
cd /work/main
/usr/local/cuda/bin/nvcc -DNDEBUG -Xcompiler=-Wall,-Wextra -O3 -I/usr/local/cuda/include -I$inc -std=c++20 --expt-relaxed-constexpr -Xcompiler=-ffp-contract=off -lineinfo -gencode=arch=compute_90,code=sm_90 -Ibenchmarks "$@" -o xr10/$name.o -c benchmarks/codec_bench.cu
/usr/local/cuda/bin/nvcc -o xr10/$name xr10/$name.o -std=c++20 -gencode arch=compute_90,code=sm_90 -lcudart -Xlinker=/usr/local/cuda/lib/libnccl.so
rm xr10/$name.o
