// The compressed chunk format (docs/format.md is the prose version of this file).
//
// A chunk is: chunk_header (64 B) | tile table (tile_count x u32, padded to 8 B) | check table
// (a checksum per tile, where the header's flags say so) | step table (fixed_rate) | tiles.
// Tiles hold kTileElements consecutive values each (the last one may hold fewer) and start on
// 8-byte boundaries; the table gives each tile's offset from the end of the header in 8-byte
// units, so any tile can be decoded (and its checksum verified) without reading the others.
//
// This file holds the ids a header stores (element type, quantizer, coder, tile mode) and the
// element types' conversions; the wire layouts are in format/ (chunk.hpp, checksum.hpp and a file
// per tile mode), which it includes but for the entropy modes'. How a coder chooses among the
// modes is not format: that is tuning/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

// The 16-bit element types. Their conversions to and from float work in host code too (g++ or
// nvcc); ncclz calls only the conversion functions, so it also builds with
// __CUDA_NO_HALF_CONVERSIONS__ / __CUDA_NO_HALF_OPERATORS__ defined (as PyTorch builds do).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ncclz/config.hpp"
#include "ncclz/format/checksum.hpp"
#include "ncclz/format/chunk.hpp"
#include "ncclz/format/fixed_length.hpp"

namespace ncclz {

/// Element types a chunk can hold (the dtype byte of the header).
enum class dtype : std::uint8_t { f32 = 1, f64 = 2, f16 = 3, bf16 = 4 };

/// Which quantizer produced the codes (the quantizer byte of the header).
enum class quantizer_id : std::uint8_t { abs = 1, rel = 2, lossless = 3, fixed_rate = 4, user = 128 };

/// Which entropy-coder policy wrote the chunk (the coder byte of the header).
enum class coder_id : std::uint8_t { raw = 0, fixed_length = 1, huffman = 2, zero_run = 3, adaptive = 4 };

/// Whether a header's coder byte names a coder this build reads.
NCCLZ_HOST_DEVICE constexpr bool is_known_coder(std::uint8_t v) { return v <= static_cast<std::uint8_t>(coder_id::adaptive); }

/// How one tile is stored (the first byte of each tile).
enum class tile_mode : std::uint8_t {
  raw = 0,           ///< the input values, bit for bit
  fixed_length = 1,  ///< width bytes, bit planes of zig-zagged code deltas, outlier list
  huffman = 2,       ///< per-tile canonical Huffman code of the deltas, 32 or 64 sub-block streams, outlier list
  zero_run = 3,      ///< Rice-coded runs of zero codes or deltas, 32 sub-block streams, outlier list
};

template <class T>
inline constexpr bool is_supported_value_type_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                                  std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

template <class T>
constexpr dtype dtype_of() {
  static_assert(is_supported_value_type_v<T>, "ncclz: supported element types are float, double, __half and __nv_bfloat16");
  if constexpr (std::is_same_v<T, float>) return dtype::f32;
  else if constexpr (std::is_same_v<T, double>) return dtype::f64;
  else if constexpr (std::is_same_v<T, __half>) return dtype::f16;
  else return dtype::bf16;
}

/// Whether a header's dtype byte names an element type this build reads.
NCCLZ_HOST_DEVICE constexpr bool is_known_dtype(std::uint8_t v) {
  return v == static_cast<std::uint8_t>(dtype::f32) || v == static_cast<std::uint8_t>(dtype::f64) ||
         v == static_cast<std::uint8_t>(dtype::f16) || v == static_cast<std::uint8_t>(dtype::bf16);
}

/// The type the quantizer computes in: the element type itself for float and double; float for the
/// 16-bit types, which hold every one of their values exactly in a float but not a code of 2^30.
template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// x widened to the compute type (exact).
template <class T>
NCCLZ_HOST_DEVICE inline compute_t<T> to_compute(T x) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(x);
  else return x;
}

/// v rounded to the element type, to nearest even (once: float -> half directly, no detour).
template <class T>
NCCLZ_HOST_DEVICE inline T from_compute(compute_t<T> v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(v);
  else return v;
}

}  // namespace ncclz
