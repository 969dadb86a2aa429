#include <ncclz/ncclz.cuh>
using RelAd = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Adaptive>>;
template __global__ void ncclz::kernels::encode_kernel<RelAd, double>(ncclz::kernels::value_source<double>, std::uint64_t, std::byte*, std::uint64_t*, const ncclz::kernels::range_keys*, double, std::uint32_t, std::uint64_t*, ncclz::kernels::block_scales);
