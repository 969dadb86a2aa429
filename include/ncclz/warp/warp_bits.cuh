// Warp-wide helpers: lane index and a prefix sum over the 32 lanes.
#pragma once

#include <cstdint>

#include "ncclz/detail/config.hpp"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace warp {

inline constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }

/// Inclusive prefix sum over the lanes, modulo 2^32.
__device__ __forceinline__ std::uint32_t inclusive_sum(std::uint32_t v) {
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const std::uint32_t up = __shfl_up_sync(kFullMask, v, d);
    if (lane_id() >= d) v += up;
  }
  return v;
}

}  // namespace warp
NCCLZ_END_KERNEL_NAMESPACE
