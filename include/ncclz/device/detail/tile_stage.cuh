// How a tile's thread block holds its codes: one thread block of 256 threads codes one tile of
// 8192 values; each of its 8 warps stages 1024 codes in shared memory.
#pragma once

#include <cstdint>

#include "ncclz/detail/config.hpp"
#include "ncclz/format.hpp"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace kernels {

inline constexpr int kTileThreads = 256;
inline constexpr int kTileWarps = kTileThreads / 32;
inline constexpr int kBlocksPerWarp = format::kTileBlocks / kTileWarps;  // 32
static_assert(kBlocksPerWarp == 32, "a warp's block widths are held one per lane");

/// A warp's 1024 codes, staged in shared memory so they can move between the layout the input is
/// read in (consecutive elements across lanes) and the one they are coded in (lane l owns block
/// l). Rows are padded to 36 words: 16-byte accesses of 8 lanes to 8 rows hit distinct banks.
inline constexpr int kStageRow = 36;
using warp_stage = std::int32_t[kBlocksPerWarp][kStageRow];

/// Marks an outlier in the staged codes; no code reaches it (|q| < 2^30).
inline constexpr std::int32_t kOutlierCode = INT32_MIN;

/// The code of x under Q with parameters p, or kOutlierCode with x kept in `outlier_value`.
template <class Q, class T, class P>
__device__ __forceinline__ void quantize_or_keep(T x, const P& p, std::int32_t& code, T& outlier_value) {
  std::int32_t q;
  if (Q::template quantize<T>(x, p, q)) {
    code = q;
  } else {
    code = kOutlierCode;
    outlier_value = x;
  }
}

/// Element e (0..8191) of a tile in its block's stage (one warp_stage per warp).
__device__ __forceinline__ std::int32_t& staged(warp_stage* stages, std::uint32_t e) {
  return stages[e / 1024][(e % 1024) / 32][e % 32];
}

}  // namespace kernels
NCCLZ_END_KERNEL_NAMESPACE
