// How a tile's thread block holds its codes: one thread block of 256 threads codes one tile of
// 8192 values; each of its 8 warps stages 1024 codes in shared memory.
#pragma once

#include <cstdint>

#include "ncclz/config.hpp"
#include "ncclz/detail/subblocks.hpp"
#include "ncclz/format.hpp"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail {

inline constexpr int kTileThreads = 256;
inline constexpr int kTileWarps = kTileThreads / 32;
inline constexpr int kBlocksPerWarp = format::kTileBlocks / kTileWarps;  // 32
static_assert(kBlocksPerWarp == 32, "a warp's block widths are held one per lane");

/// A warp's 1024 codes, staged in shared memory so they can move between the layout the input is
/// read in (consecutive elements across lanes) and the one they are coded in (lane l owns block
/// l). Rows are padded to 36 words: 16-byte accesses of 8 lanes to 8 rows hit distinct banks.
inline constexpr int kStageRow = 36;
using warp_stage = std::int32_t[kBlocksPerWarp][kStageRow];

/// Stream words the entropy decoders (huffman, zero_run) copy to shared memory first, with the
/// whole block and coalesced: a lane's reads of its own sub-block are then not global loads it
/// waits on one by one. 8 KB: within what their other shared memory leaves at 4 blocks an SM.
inline constexpr std::uint32_t kStagedStreamWords = 2048;

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

/// Sub-block rows, laid over the stage: the entropy decoders (huffman: one lane of warp 0 per
/// sub-block of 256 values, a sequential bit stream, or of warps 0-1 per half of one; zero_run: a
/// warp per sub-block) write value i of the 256 values of sub-block b to word b * kSubblockRow + i;
/// rows of 257 words put the 32 lanes' stores in 32 different banks.
inline constexpr std::uint32_t kSubblockRow = ncclz::detail::kSubblockElements + 1;
inline constexpr std::uint32_t kSubblockRowsBytes = format::kTileElements / ncclz::detail::kSubblockElements * kSubblockRow * 4;
static_assert(kSubblockRowsBytes <= sizeof(warp_stage) * kTileWarps, "the sub-block rows overlay the stage");

__device__ __forceinline__ std::uint32_t* subblock_rows(warp_stage* stages) { return reinterpret_cast<std::uint32_t*>(stages); }

/// What the stage holds past the sub-block rows: 256 bytes a warp (the zero_run decoder keeps a
/// sparse sub-block's nonzero positions there).
static_assert(kSubblockRowsBytes + kTileWarps * ncclz::detail::kSubblockElements <= sizeof(warp_stage) * kTileWarps,
              "a warp's 256 bytes of scratch fit after the sub-block rows");
__device__ __forceinline__ std::uint8_t* subblock_scratch(warp_stage* stages) {
  return reinterpret_cast<std::uint8_t*>(stages) + kSubblockRowsBytes;
}

/// After the rows are written (and a barrier): the values of this thread's block (block t =
/// threadIdx.x, values 32t..32t+31), 0 past the tile's end. Read them all before anything
/// overwrites the stage.
__device__ __forceinline__ void load_subblock_rows(const warp_stage* stages, std::uint32_t block_count, std::uint32_t (&z)[32]) {
  constexpr std::uint32_t kBlocksPerSubblock = ncclz::detail::kSubblockElements / format::kBlockElements;  // 8
  const auto* row = reinterpret_cast<const std::uint32_t*>(stages) + (threadIdx.x / kBlocksPerSubblock) * kSubblockRow +
                    (threadIdx.x % kBlocksPerSubblock) * format::kBlockElements;
#pragma unroll
  for (int i = 0; i < 32; ++i) z[i] = static_cast<std::uint32_t>(i) < block_count ? row[i] : 0u;
}

}  // namespace device::detail
NCCLZ_END_KERNEL_NAMESPACE
