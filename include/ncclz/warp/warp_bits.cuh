// Warp-wide helpers: lane index, a prefix sum over the 32 lanes, a sum of per-warp values, and the
// value of the first lane that holds one.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclz/config.hpp"

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

/// The sum of v[0..N) (such as one count per warp of a block), modulo 2^32, by a whole warp: lane k
/// loads v[k] and one warp reduction adds them, fewer instructions than each thread adding all N.
template <std::size_t N>
__device__ __forceinline__ std::uint32_t sum_of(const std::uint32_t (&v)[N]) {
  static_assert(N <= 32, "a lane a value");
  return __reduce_add_sync(kFullMask, lane_id() < N ? v[lane_id()] : 0u);
}

/// The value of the lowest lane whose `value` is nonzero, or 0 where no lane's is: a result that
/// one lane found (a parse's end, say), handed to the whole warp.
__device__ __forceinline__ std::uint32_t first_nonzero(std::uint32_t value) {
  const unsigned holders = __ballot_sync(kFullMask, value != 0);
  return holders == 0 ? 0u : __shfl_sync(kFullMask, value, __ffs(static_cast<int>(holders)) - 1);
}

}  // namespace warp
NCCLZ_END_KERNEL_NAMESPACE
