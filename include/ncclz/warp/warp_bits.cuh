// Warp-wide helpers over one block of 32 values, one value per lane.
#pragma once

#include <cstdint>

#include "ncclz/detail/config.hpp"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace warp {

inline constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }

/// Bits needed for the largest of the lanes' values (0 when all are 0).
__device__ __forceinline__ std::uint32_t block_width(std::uint32_t v) {
  return 32u - static_cast<std::uint32_t>(__clz(__reduce_or_sync(kFullMask, v)));
}

/// Inclusive prefix sum over the lanes, modulo 2^32.
__device__ __forceinline__ std::uint32_t inclusive_sum(std::uint32_t v) {
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const std::uint32_t up = __shfl_up_sync(kFullMask, v, d);
    if (lane_id() >= d) v += up;
  }
  return v;
}

/// Bit plane k of the block for lane k, for k < width; the planes a block is stored as.
__device__ __forceinline__ std::uint32_t transpose_to_planes(std::uint32_t value, std::uint32_t width) {
  std::uint32_t mine = 0;
  for (std::uint32_t k = 0; k < width; ++k) {
    const std::uint32_t plane = __ballot_sync(kFullMask, (value >> k) & 1u);
    if (lane_id() == k) mine = plane;
  }
  return mine;
}

/// The inverse: lane i gets bit i of each of the `width` planes held by lanes 0..width-1.
__device__ __forceinline__ std::uint32_t transpose_from_planes(std::uint32_t plane, std::uint32_t width) {
  std::uint32_t value = 0;
  const unsigned lane = lane_id();
  for (std::uint32_t k = 0; k < width; ++k) {
    const std::uint32_t p = __shfl_sync(kFullMask, plane, k);
    value |= ((p >> lane) & 1u) << k;
  }
  return value;
}

}  // namespace warp
NCCLZ_END_KERNEL_NAMESPACE
