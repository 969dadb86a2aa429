#!/usr/bin/env bash
# xrun/build_bench.sh NAME INCLUDE_DIR [nvcc flags...]: the codec bench, as meson builds it, into xrun/NAME
set -e
name=$1; inc=$2; shift 2
cd /work/main
nvcc -DNDEBUG -Xcompiler=-Wall,-Wextra -O3 -I/usr/local/cuda/include -I$inc -std=c++20 --expt-relaxed-constexpr -Xcompiler=-ffp-contract=off -lineinfo -gencode=arch=compute_90,code=sm_90 -Ibenchmarks "$@" -o xrun/$name.o -c benchmarks/codec_bench.cu
nvcc -o xrun/$name xrun/$name.o -std=c++20 -gencode arch=compute_90,code=sm_90 -lcudart -Xlinker=/usr/local/cuda/lib/libnccl.so
rm xrun/$name.o
