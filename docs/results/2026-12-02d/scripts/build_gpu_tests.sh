#!/usr/bin/env bash
# build_gpu_tests.sh NAME INCLUDE_DIR: the GPU tests as meson builds them (build-me's flags and its Catch main), into xr10/NAME
set -e
name=$1; inc=$(realpath $2)
cd /work/main/build-me
mkdir -p ../xr10/$name.p
for f in device_codec zero_run_tile determinism; do
  /usr/local/cuda/bin/nvcc -DNDEBUG -Itest/gpu_tests.p -Xcompiler=-Wall,-Winvalid-pch,-Wextra -O3 -isystem /work/main/.deps -I/usr/local/cuda/include -I$inc -std=c++20 --expt-relaxed-constexpr -Xcompiler=-ffp-contract=off -lineinfo -gencode=arch=compute_90,code=sm_90 -I../test -Itest -Itest/gpu_tests.p -o ../xr10/$name.p/$f.o -c ../test/gpu/test_$f.cu
done
/usr/local/cuda/bin/nvcc -o ../xr10/$name test/gpu_tests.p/gpu_main.cu.o ../xr10/$name.p/*.o -std=c++20 -gencode arch=compute_90,code=sm_90 -lcudart -Xlinker=/usr/local/cuda/lib/libnccl.so
rm -rf ../xr10/$name.p
