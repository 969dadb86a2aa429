// One f32 encode kernel for ncclz's ncu line mapping (call 3): -DCODER=Adaptive or FixedLength.
// nvcc -DNDEBUG -O3 -I<include> -std=c++20 --expt-relaxed-constexpr -Xcompiler=-ffp-contract=off -lineinfo
//      -gencode=arch=compute_90,code=sm_90 -cubin -DCODER=Adaptive THIS
#include <ncclz/ncclz.cuh>
using namespace ncclz;
template __global__ void kernels::encode_kernel<Codec<Quantizer<RelBound>, EntropyCoder<CODER>>, float, kernels::value_source<float>>(
    kernels::value_source<float>, std::uint64_t, std::byte*, std::uint64_t*, const kernels::range_keys*, double, std::uint32_t,
    std::uint64_t*, kernels::block_scales);
