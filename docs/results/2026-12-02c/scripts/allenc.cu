// Every RelBound encode kernel of the four coders, value and code sources, four types (the
// byte-identity checks of session 9: sha1 of each kernel's .text).
#include <ncclz/ncclz.cuh>
using namespace ncclz;
#define ENC(C, T, S) template __global__ void kernels::encode_kernel<Codec<Quantizer<RelBound>, EntropyCoder<C>>, T, kernels::S<T>>(kernels::S<T>, std::uint64_t, std::byte*, std::uint64_t*, const kernels::range_keys*, double, std::uint32_t, std::uint64_t*, kernels::block_scales);
#define ALL(C, T) ENC(C, T, value_source) ENC(C, T, code_source)
#define TYPES(C) ALL(C, float) ALL(C, double) ALL(C, __half) ALL(C, __nv_bfloat16)
TYPES(FixedLength) TYPES(Huffman) TYPES(ZeroRun) TYPES(Adaptive)
