#include <ncclz/ncclz.cuh>
using C = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
template __global__ void ncclz::kernels::encode_kernel<C, __half>(ncclz::kernels::value_source<__half>, std::uint64_t, std::byte*, std::uint64_t*, const ncclz::kernels::range_keys*, double, std::uint32_t, std::uint64_t*, ncclz::kernels::block_scales);
