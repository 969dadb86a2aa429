// The encode and decode kernels of every codec this project's programs run (libncclz, ncclz-perf,
// ncclz-codec-bench, gpu_tests), each compiled once: in src/kernels/<group>.cu, into the static
// library that kernels_dep (src/kernels/meson.build) links. Included after ncclz.cuh, this header
// declares each of them an explicit instantiation defined there (extern template), so that a
// translation unit that launches them compiles none of them; the header-only library itself is
// unchanged, and a program that does not include this file compiles its kernels as before.
//
// Kernels are the same code wherever they are compiled (same headers, same flags: the SASS does
// not depend on the translation unit), so launching the library's copy runs what a local copy
// would. That needs nvcc's -static-global-template-stub=false (kernels_dep passes it): with it a
// kernel template's host stub is a weak symbol another object can call, as before CUDA 13.
//
// A group is one translation unit; its size is what one core compiles in under a minute.
// Add a group: its macro here, in NCCLZ_KERNEL_GROUPS, a <group>.cu and a line in meson.build.
// A kernel a program launches that is not listed is compiled in that program's unit, as before.
#pragma once

#include <ncclz/ncclz.cuh>

namespace ncclz_kernels {
using ncclz::Codec;
using ncclz::EntropyCoder;
using ncclz::Integrity;
using ncclz::Quantizer;
using Unchecked = Integrity<ncclz::NoChecksums>;

using RelFL = Codec<Quantizer<ncclz::RelBound>, EntropyCoder<ncclz::FixedLength>>;
using AbsFL = Codec<Quantizer<ncclz::AbsBound>, EntropyCoder<ncclz::FixedLength>>;
using RelRaw = Codec<Quantizer<ncclz::RelBound>, EntropyCoder<ncclz::Raw>>;
using AbsRaw = Codec<Quantizer<ncclz::AbsBound>, EntropyCoder<ncclz::Raw>>;
using RelHuf = Codec<Quantizer<ncclz::RelBound>, EntropyCoder<ncclz::Huffman>>;
using AbsHuf = Codec<Quantizer<ncclz::AbsBound>, EntropyCoder<ncclz::Huffman>>;
using RelZR = Codec<Quantizer<ncclz::RelBound>, EntropyCoder<ncclz::ZeroRun>>;
using AbsZR = Codec<Quantizer<ncclz::AbsBound>, EntropyCoder<ncclz::ZeroRun>>;
using RelAd = Codec<Quantizer<ncclz::RelBound>, EntropyCoder<ncclz::Adaptive>>;
using AbsAd = Codec<Quantizer<ncclz::AbsBound>, EntropyCoder<ncclz::Adaptive>>;
using Fixed8 = Codec<Quantizer<ncclz::FixedRate<8>>, EntropyCoder<ncclz::FixedLength>>;
using Fixed4 = Codec<Quantizer<ncclz::FixedRate<4>>, EntropyCoder<ncclz::FixedLength>>;
using Fixed8Ad = Codec<Quantizer<ncclz::FixedRate<8>>, EntropyCoder<ncclz::Adaptive>>;
using Fixed4Ad = Codec<Quantizer<ncclz::FixedRate<4>>, EntropyCoder<ncclz::Adaptive>>;
using LosslessFL = Codec<Quantizer<ncclz::Lossless>, EntropyCoder<ncclz::FixedLength>>;
using LosslessRaw = Codec<Quantizer<ncclz::Lossless>, EntropyCoder<ncclz::Raw>>;
using LosslessHuf = Codec<Quantizer<ncclz::Lossless>, EntropyCoder<ncclz::Huffman>>;
using LosslessAd = Codec<Quantizer<ncclz::Lossless>, EntropyCoder<ncclz::Adaptive>>;
// Without tile checksums.
using RelFLUnchecked = Codec<Quantizer<ncclz::RelBound>, EntropyCoder<ncclz::FixedLength>, Unchecked>;
using RelRawUnchecked = Codec<Quantizer<ncclz::RelBound>, EntropyCoder<ncclz::Raw>, Unchecked>;
using RelHufUnchecked = Codec<Quantizer<ncclz::RelBound>, EntropyCoder<ncclz::Huffman>, Unchecked>;
using RelZRUnchecked = Codec<Quantizer<ncclz::RelBound>, EntropyCoder<ncclz::ZeroRun>, Unchecked>;
using RelAdUnchecked = Codec<Quantizer<ncclz::RelBound>, EntropyCoder<ncclz::Adaptive>, Unchecked>;
using Fixed8Unchecked = Codec<Quantizer<ncclz::FixedRate<8>>, EntropyCoder<ncclz::FixedLength>, Unchecked>;
}  // namespace ncclz_kernels

// What a use needs of codec C with elements of type T, K being NCCLZ_EXTERN_KERNEL or
// NCCLZ_INSTANTIATE_KERNEL:
//   ENCODE: device::compress (values in, raw tiles allowed);
//   CODEC: ENCODE and device::decompress (values out);
//   REDUCTION: a reduction's chunk, from quantize_kernel's codes or from values (no raw tiles);
//   COLLECTIVE: what a Communicator runs with that coder: CODEC, REDUCTION and codes out.
#define NCCLZ_KERNELS_ENCODE(K, C, T) K(encode_kernel<ncclz_kernels::C, T, value_source<T>>)
#define NCCLZ_KERNELS_CODEC(K, C, T) \
  NCCLZ_KERNELS_ENCODE(K, C, T)      \
  K(decode_kernel<ncclz_kernels::C, T, value_sink<typename ncclz_kernels::C::quantizer, T>>)
#define NCCLZ_KERNELS_REDUCTION(K, C, T)             \
  K(encode_kernel<ncclz_kernels::C, T, code_source<T>>) \
  K(encode_kernel<ncclz_kernels::C, T, value_source<T, false>>)
#define NCCLZ_KERNELS_COLLECTIVE(K, C, T) \
  NCCLZ_KERNELS_CODEC(K, C, T)            \
  NCCLZ_KERNELS_REDUCTION(K, C, T)        \
  K(decode_kernel<ncclz_kernels::C, T, code_sink<typename ncclz_kernels::C::quantizer, T>>)
#define NCCLZ_KERNELS_FOR_TYPES(WHAT, K, C) WHAT(K, C, float) WHAT(K, C, double) WHAT(K, C, __half) WHAT(K, C, __nv_bfloat16)

// The groups. The users: Communicator codecs (libncclz, ncclz-perf; EntropyCoder<Auto> runs the
// FixedLength and Adaptive ones) in every element type; ncclz-codec-bench, every coder in every
// element type, checked and unchecked (--checksums), AbsBound encoding only, the lossless codec
// in f32, f16 and bf16; gpu_tests (test/gpu/test_device_codec*.cu), the rest.
#define NCCLZ_KERNELS_REL_ADAPTIVE_F32_F16(K)             \
  NCCLZ_KERNELS_COLLECTIVE(K, RelAd, float)          \
  NCCLZ_KERNELS_COLLECTIVE(K, RelAd, __half)         \
  NCCLZ_KERNELS_CODEC(K, RelAdUnchecked, float)      \
  NCCLZ_KERNELS_CODEC(K, RelAdUnchecked, __half)
#define NCCLZ_KERNELS_REL_ADAPTIVE_F64_BF16(K)             \
  NCCLZ_KERNELS_COLLECTIVE(K, RelAd, double)         \
  NCCLZ_KERNELS_COLLECTIVE(K, RelAd, __nv_bfloat16)  \
  NCCLZ_KERNELS_CODEC(K, RelAdUnchecked, double)     \
  NCCLZ_KERNELS_CODEC(K, RelAdUnchecked, __nv_bfloat16)
#define NCCLZ_KERNELS_ABS_ADAPTIVE_F32_F16(K)     \
  NCCLZ_KERNELS_COLLECTIVE(K, AbsAd, float)  \
  NCCLZ_KERNELS_COLLECTIVE(K, AbsAd, __half)
#define NCCLZ_KERNELS_ABS_ADAPTIVE_F64_BF16(K)     \
  NCCLZ_KERNELS_COLLECTIVE(K, AbsAd, double) \
  NCCLZ_KERNELS_COLLECTIVE(K, AbsAd, __nv_bfloat16)
#define NCCLZ_KERNELS_FIXED8_ADAPTIVE_F32_F16(K)     \
  NCCLZ_KERNELS_COLLECTIVE(K, Fixed8Ad, float)  \
  NCCLZ_KERNELS_COLLECTIVE(K, Fixed8Ad, __half)
#define NCCLZ_KERNELS_FIXED8_ADAPTIVE_F64_BF16(K)     \
  NCCLZ_KERNELS_COLLECTIVE(K, Fixed8Ad, double) \
  NCCLZ_KERNELS_COLLECTIVE(K, Fixed8Ad, __nv_bfloat16)
#define NCCLZ_KERNELS_FIXED4_ADAPTIVE_F32_F16(K)     \
  NCCLZ_KERNELS_COLLECTIVE(K, Fixed4Ad, float)  \
  NCCLZ_KERNELS_COLLECTIVE(K, Fixed4Ad, __half)
#define NCCLZ_KERNELS_FIXED4_ADAPTIVE_F64_BF16(K)     \
  NCCLZ_KERNELS_COLLECTIVE(K, Fixed4Ad, double) \
  NCCLZ_KERNELS_COLLECTIVE(K, Fixed4Ad, __nv_bfloat16)
#define NCCLZ_KERNELS_FIXED_LENGTH(K)                            \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_COLLECTIVE, K, RelFL)    \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_COLLECTIVE, K, AbsFL)    \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_CODEC, K, RelFLUnchecked)
#define NCCLZ_KERNELS_RAW(K)                                      \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_COLLECTIVE, K, RelRaw)    \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_COLLECTIVE, K, AbsRaw)    \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_CODEC, K, RelRawUnchecked)
#define NCCLZ_KERNELS_FIXED_RATE(K)                               \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_COLLECTIVE, K, Fixed8)    \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_COLLECTIVE, K, Fixed4)    \
  NCCLZ_KERNELS_CODEC(K, Fixed8Unchecked, float)                  \
  NCCLZ_KERNELS_CODEC(K, Fixed8Unchecked, double)
#define NCCLZ_KERNELS_HUFFMAN(K)                                  \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_CODEC, K, RelHuf)         \
  NCCLZ_KERNELS_REDUCTION(K, RelHuf, float)                       \
  NCCLZ_KERNELS_REDUCTION(K, RelHuf, __nv_bfloat16)               \
  NCCLZ_KERNELS_CODEC(K, AbsHuf, float)                           \
  NCCLZ_KERNELS_CODEC(K, AbsHuf, double)                          \
  NCCLZ_KERNELS_ENCODE(K, AbsHuf, __half)                         \
  NCCLZ_KERNELS_ENCODE(K, AbsHuf, __nv_bfloat16)                  \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_CODEC, K, RelHufUnchecked)
#define NCCLZ_KERNELS_ZERO_RUN(K)                                 \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_CODEC, K, RelZR)          \
  NCCLZ_KERNELS_REDUCTION(K, RelZR, float)                        \
  NCCLZ_KERNELS_CODEC(K, AbsZR, float)                            \
  NCCLZ_KERNELS_ENCODE(K, AbsZR, double)                          \
  NCCLZ_KERNELS_ENCODE(K, AbsZR, __half)                          \
  NCCLZ_KERNELS_ENCODE(K, AbsZR, __nv_bfloat16)                   \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_CODEC, K, RelZRUnchecked)
#define NCCLZ_KERNELS_LOSSLESS(K)                                 \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_CODEC, K, LosslessFL)     \
  NCCLZ_KERNELS_FOR_TYPES(NCCLZ_KERNELS_CODEC, K, LosslessRaw)    \
  NCCLZ_KERNELS_CODEC(K, LosslessHuf, float)                      \
  NCCLZ_KERNELS_CODEC(K, LosslessHuf, __half)                     \
  NCCLZ_KERNELS_CODEC(K, LosslessHuf, __nv_bfloat16)              \
  NCCLZ_KERNELS_CODEC(K, LosslessAd, float)                       \
  NCCLZ_KERNELS_CODEC(K, LosslessAd, __half)                      \
  NCCLZ_KERNELS_CODEC(K, LosslessAd, __nv_bfloat16)

#define NCCLZ_KERNEL_GROUPS(K)           \
  NCCLZ_KERNELS_REL_ADAPTIVE_F32_F16(K)       \
  NCCLZ_KERNELS_REL_ADAPTIVE_F64_BF16(K)       \
  NCCLZ_KERNELS_ABS_ADAPTIVE_F32_F16(K)       \
  NCCLZ_KERNELS_ABS_ADAPTIVE_F64_BF16(K)       \
  NCCLZ_KERNELS_FIXED8_ADAPTIVE_F32_F16(K)    \
  NCCLZ_KERNELS_FIXED8_ADAPTIVE_F64_BF16(K)    \
  NCCLZ_KERNELS_FIXED4_ADAPTIVE_F32_F16(K)    \
  NCCLZ_KERNELS_FIXED4_ADAPTIVE_F64_BF16(K)    \
  NCCLZ_KERNELS_FIXED_LENGTH(K)          \
  NCCLZ_KERNELS_RAW(K)                   \
  NCCLZ_KERNELS_FIXED_RATE(K)            \
  NCCLZ_KERNELS_HUFFMAN(K)               \
  NCCLZ_KERNELS_ZERO_RUN(K)              \
  NCCLZ_KERNELS_LOSSLESS(K)

// Declared (and, in a group's unit, defined) by name alone: the kernel's signature is its template's.
#define NCCLZ_EXTERN_KERNEL(...) extern template __global__ decltype(__VA_ARGS__) __VA_ARGS__;
#define NCCLZ_INSTANTIATE_KERNEL(...) template __global__ decltype(__VA_ARGS__) __VA_ARGS__;

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail {
NCCLZ_KERNEL_GROUPS(NCCLZ_EXTERN_KERNEL)
}  // namespace device::detail
NCCLZ_END_KERNEL_NAMESPACE

/// A group's unit: `NCCLZ_INSTANTIATE_KERNELS(NCCLZ_KERNELS_<GROUP>)`.
#define NCCLZ_INSTANTIATE_KERNELS(GROUP) \
  NCCLZ_BEGIN_KERNEL_NAMESPACE namespace device::detail { GROUP(NCCLZ_INSTANTIATE_KERNEL) } NCCLZ_END_KERNEL_NAMESPACE
