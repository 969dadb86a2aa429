// The fixed_length tile mode on the device (docs/format.md, "Fixed-length tile"): where each
// thread's block of 32 deltas goes in the tile, and its bit planes. The encode kernel
// (encode_kernel.cuh) stages the codes and writes the widths and outliers around these.
#pragma once

#include <cstdint>

#include "ncclz/config.hpp"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/format.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail::tile::fixed_length {

/// Where a thread's block goes in a fixed_length tile, and the tile's totals, from its width, the
/// packed counts ((outliers << 16) | plane words) of its warp's earlier blocks, and every warp's
/// total in `warp_totals`.
struct block_place {
  std::uint32_t width;              ///< bits a delta (plane words) of the thread's block
  std::uint32_t words_before;       ///< plane words of the warp's earlier blocks
  std::uint32_t warp_words;         ///< plane words of the warp's blocks
  std::uint32_t words_before_warp;  ///< plane words of the tile's earlier warps
  std::uint32_t outliers_before;    ///< outliers of the tile's earlier blocks
  std::uint32_t plane_words;        ///< plane words of the tile
  std::uint32_t outliers;           ///< outliers of the tile
};
__device__ __forceinline__ block_place place_block(const std::uint32_t (&warp_totals)[kTileWarps], std::uint32_t width,
                                                   std::uint32_t packed_before, unsigned warp_index) {
  // The warps' packed totals, a lane each, summed by warp reductions: each half sums to at most a
  // tile's 8192, so neither carries into the other.
  block_place b{};
  const unsigned lane = warp::lane_id();
  const std::uint32_t warp_total = lane < kTileWarps ? warp_totals[lane] : 0u;
  const std::uint32_t tile_total = __reduce_add_sync(warp::kFullMask, warp_total);
  const std::uint32_t before_warp = __reduce_add_sync(warp::kFullMask, lane < warp_index ? warp_total : 0u);
  b.plane_words = tile_total & 0xffffu;
  b.outliers = tile_total >> 16;
  b.words_before_warp = before_warp & 0xffffu;
  const std::uint32_t outliers_before_warp = before_warp >> 16;
  b.width = width;
  b.words_before = packed_before & 0xffffu;
  b.warp_words = __shfl_sync(warp::kFullMask, b.words_before + width, 31);
  b.outliers_before = outliers_before_warp + (packed_before >> 16);
  return b;
}

/// place_block's per-thread inputs in one word: the earlier blocks' counts (under 1024 each: 10
/// bits at bits 0 and 16) and the width (bits 10-15).
__device__ __forceinline__ std::uint32_t park_place(std::uint32_t width, std::uint32_t packed_before) {
  static_assert(kBlocksPerWarp * format::kBlockElements <= 1024 && format::kMaxWidth < 64, "the counts take 10 bits, the width 6");
  return packed_before | width << 10;
}
__device__ __forceinline__ block_place place_parked(const std::uint32_t (&warp_totals)[kTileWarps], std::uint32_t parked,
                                                    unsigned warp_index) {
  return place_block(warp_totals, (parked >> 10) & 0x3Fu, parked & ~(0x3Fu << 10), warp_index);
}

/// Bit planes of this lane's block: planes[k], k < width, holds bit k of each of its 32 zig-zagged
/// deltas. By a whole warp (the lanes agree on the widest block).
__device__ __forceinline__ void write_planes(std::uint32_t* planes, const std::uint32_t (&zz)[32], std::uint32_t width) {
  const std::uint32_t max_width = __reduce_max_sync(warp::kFullMask, width);
  if (max_width <= 8) {
    // Narrow blocks (the common case): pack four deltas a word, one per byte, and gather bit k of
    // four bytes at once with a multiply (bytes' bit 0 land in bits 24..27, no carries).
    std::uint32_t packed[8];
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const std::uint32_t lo = __byte_perm(zz[4 * m], zz[4 * m + 1], 0x0040);
      const std::uint32_t hi = __byte_perm(zz[4 * m + 2], zz[4 * m + 3], 0x0040);
      packed[m] = __byte_perm(lo, hi, 0x5410);
    }
    for (std::uint32_t k = 0; k < max_width; ++k) {
      std::uint32_t plane = 0;
#pragma unroll
      for (int m = 0; m < 8; ++m) plane |= ((((packed[m] >> k) & 0x01010101u) * 0x01020408u) >> 24) << (4 * m);
      if (k < width) planes[k] = plane;
    }
  } else {
    for (std::uint32_t k = 0; k < max_width; ++k) {
      std::uint32_t plane = 0;
#pragma unroll
      for (int i = 0; i < 32; ++i) plane |= ((zz[i] >> k) & 1u) << i;
      if (k < width) planes[k] = plane;
    }
  }
}

}  // namespace device::detail::tile::fixed_length
NCCLZ_END_KERNEL_NAMESPACE
