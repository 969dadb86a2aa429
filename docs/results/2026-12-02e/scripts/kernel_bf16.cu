// One bf16 RelBound encode kernel of the codec bench (value source), for ncu's source counters of
// scripts/call2.sh: a cubin of it built here maps each profiled instruction to its source line
// (session 9's ncu_lines.py). Adaptive by default; -DCODER=Huffman for the other.
// nvcc -DNDEBUG -O3 -Iinclude -std=c++20 --expt-relaxed-constexpr -Xcompiler=-ffp-contract=off -lineinfo
//      -gencode=arch=compute_90,code=sm_90 -cubin -o adaptive.cubin THIS
#include <ncclz/ncclz.cuh>
#ifndef CODER
#define CODER Adaptive
#endif
using namespace ncclz;
template __global__ void kernels::encode_kernel<Codec<Quantizer<RelBound>, EntropyCoder<CODER>>, __nv_bfloat16,
                                                kernels::value_source<__nv_bfloat16>>(
    kernels::value_source<__nv_bfloat16>, std::uint64_t, std::byte*, std::uint64_t*, const kernels::range_keys*, double,
    std::uint32_t, std::uint64_t*, kernels::block_scales);
