// Block-wide scans: what every thread of a thread block calls together, CUB's block/ scope. The
// block has kWarps full warps (kWarps <= 32); `warp_totals` is shared memory of kWarps values.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ncclz/config.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace block {

/// Block-wide exclusive prefix sum of one value per thread (u32 or u64); every thread also gets
/// the total. Lane k of each warp then takes warp k's total: warp reductions (u32) or a scan over
/// kWarps lanes (u64) give what comes before the warp and the block's total, in fewer
/// instructions than every thread adding all kWarps (ncu: the scan was about 3% of the huffman
/// encoder's instructions where every tile is huffman).
template <std::uint32_t kWarps, class U>
__device__ __forceinline__ U exclusive_sum(U v, U* warp_totals, U& total) {
  static_assert(std::is_same_v<U, std::uint32_t> || std::is_same_v<U, std::uint64_t>, "a u32 or u64 sum");
  const unsigned lane = warp::lane_id(), w = threadIdx.x / 32;
  U inclusive = v;
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const U up = __shfl_up_sync(warp::kFullMask, inclusive, d);
    if (lane >= d) inclusive += up;
  }
  if (lane == 31) warp_totals[w] = inclusive;
  __syncthreads();
  const U warp_total = lane < kWarps ? warp_totals[lane] : U{0};
  U before;
  if constexpr (sizeof(U) == 4) {
    total = __reduce_add_sync(warp::kFullMask, warp_total);
    before = __reduce_add_sync(warp::kFullMask, lane < w ? warp_total : U{0});
  } else {
    U through = warp_total;  // lanes 0-7: warps 0..lane
#pragma unroll
    for (unsigned d = 1; d < kWarps; d <<= 1) {
      const U up = __shfl_up_sync(warp::kFullMask, through, d);
      if (lane >= d) through += up;
    }
    total = __shfl_sync(warp::kFullMask, through, kWarps - 1);
    const U through_before = __shfl_sync(warp::kFullMask, through, w > 0 ? w - 1 : 0);
    before = w > 0 ? through_before : U{0};
  }
  __syncthreads();  // warp_totals may be reused at once
  return before + inclusive - v;
}

}  // namespace block
NCCLZ_END_KERNEL_NAMESPACE
