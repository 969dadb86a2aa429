// Single-pass exclusive scan of per-tile byte counts (Merrill & Garland's decoupled look-back, as
// in CUB's agent_scan): each tile publishes its size, then finds its offset by reading its
// predecessors' published sizes, so compression writes its output in one pass. What one thread
// block calls, by one thread and then one warp, to learn where its tile goes; the tile status words
// live in global memory, one per block of the grid.
#pragma once

#include <cuda/atomic>

#include <cstdint>

#include "ncclz/config.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace block {

/// One word per tile: 2 flag bits and 62 bits of value. Zero means "not published yet".
class tile_status {
 public:
  static constexpr std::uint64_t kAggregate = std::uint64_t{1} << 62;
  static constexpr std::uint64_t kInclusive = std::uint64_t{2} << 62;
  static constexpr std::uint64_t kValueMask = (std::uint64_t{1} << 62) - 1;

  __device__ static void publish(std::uint64_t* words, std::uint32_t tile, std::uint64_t flag, std::uint64_t value) {
    cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device> word(words[tile]);
    word.store(flag | value, cuda::memory_order_relaxed);
  }
  __device__ static std::uint64_t read(std::uint64_t* words, std::int64_t tile) {
    if (tile < 0) return kInclusive;  // before the first tile: an inclusive prefix of 0
    cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device> word(words[tile]);
    return word.load(cuda::memory_order_relaxed);
  }
};

/// By one thread: makes `value` visible to the tiles after `tile` (tile 0's is its inclusive
/// prefix already). A tile that publishes as soon as it knows its size, then does other work before
/// lookback_exclusive_prefix, finds its predecessors published by then more often.
__device__ inline void lookback_publish(std::uint64_t* words, std::uint32_t tile, std::uint64_t value) {
  tile_status::publish(words, tile, tile == 0 ? tile_status::kInclusive : tile_status::kAggregate, value);
}

/// Called by a whole warp after lookback_publish(words, tile, value); returns the sum of the values
/// of all tiles before `tile`. Tiles are numbered by blockIdx.x and blocks start in index order,
/// so every predecessor is running or done and the spin ends (the assumption CUB's single-pass
/// scans make too).
__device__ inline std::uint64_t lookback_exclusive_prefix(std::uint64_t* words, std::uint32_t tile, std::uint64_t value) {
  const unsigned lane = warp::lane_id();
  if (tile == 0) return 0;
  std::uint64_t exclusive = 0;
  std::int64_t window = static_cast<std::int64_t>(tile) - 1;
  while (true) {
    std::uint64_t s;
    do {
      s = tile_status::read(words, window - static_cast<std::int64_t>(lane));
    } while (__any_sync(warp::kFullMask, (s >> 62) == 0));
    const unsigned inclusive = __ballot_sync(warp::kFullMask, (s >> 62) == 2);
    const unsigned first = inclusive ? static_cast<unsigned>(__ffs(inclusive)) - 1 : 32u;
    std::uint64_t v = lane <= first ? (s & tile_status::kValueMask) : 0;
#pragma unroll
    for (unsigned d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(warp::kFullMask, v, d);
    exclusive += v;
    if (inclusive) break;
    window -= 32;
  }
  if (lane == 0) tile_status::publish(words, tile, tile_status::kInclusive, exclusive + value);
  return exclusive;
}

}  // namespace block
NCCLZ_END_KERNEL_NAMESPACE
