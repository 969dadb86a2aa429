// Tile checksums on the device (docs/format.md, "Checksums"): the encoder's thread block adds up
// the check terms of the words each thread writes, reads back what was written word by word in
// another thread's layout (the outlier list, entropy-coded streams), and stores the sum's
// checksum in the check table; the decoder's block does the same with what it reads, before any
// of the tile's values leaves the block. The terms are a sum, so every thread takes its own
// words in any order and the result is the host reference's.
#pragma once

#include <cstdint>
#include <cstring>

#include "ncclz/config.hpp"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/format.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail {

/// The bits of a value of the element type (2, 4 or 8 bytes), zero-extended.
template <class T>
__device__ __forceinline__ std::uint64_t value_bits(T x) {
  std::uint64_t b = 0;
  memcpy(&b, &x, sizeof x);
  return b;
}

/// The check terms of a 4- or 8-byte element stored at element index `e` of an array that starts
/// at word `first_word` of the tile.
template <class T>
__device__ __forceinline__ std::uint32_t element_terms(T x, std::uint32_t first_word, std::uint32_t e) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  const std::uint64_t b = value_bits(x);
  if constexpr (sizeof(T) == 4) {
    return format::check_term(static_cast<std::uint32_t>(b), first_word + e);
  } else {
    return format::check_term(static_cast<std::uint32_t>(b), first_word + 2 * e) +
           format::check_term(static_cast<std::uint32_t>(b >> 32), first_word + 2 * e + 1);
  }
}

/// The check terms of a tile's zero words from byte `from` (rounded up to a word) to byte `end`:
/// the padding after a layout's last field, which no thread writes as a word of its own.
__device__ __forceinline__ std::uint32_t zero_word_terms(std::uint64_t from, std::uint64_t end) {
  std::uint32_t sum = 0;
  for (std::uint64_t w = (from + 3) / 4; w < end / 4; ++w) sum += format::check_term(0, static_cast<std::uint32_t>(w));
  return sum;
}

/// The header check (format::header_check_of) by a whole warp, lane i holding the header's word i
/// (lanes past the header: anything): one term a lane instead of one thread's sixteen in a row.
__device__ __forceinline__ std::uint32_t warp_header_check_of(std::uint32_t word) {
  const unsigned lane = warp::lane_id();
  const std::uint32_t term = lane < format::kHeaderWords && format::header_word_checked(lane) ? format::check_term(word, lane) : 0u;
  return format::header_check(__reduce_add_sync(warp::kFullMask, term));
}

/// Where a tile's steps (fixed_rate) sit in the step table, as words: `count` of them (0 for
/// other quantizers), from `words`.
struct tile_step_words {
  const std::uint32_t* words;
  std::uint32_t count;
};
template <bool Blockwise>
__device__ __forceinline__ tile_step_words step_words_of(const std::byte* chunk, std::uint64_t count, std::uint32_t flags,
                                                         std::uint32_t value_bytes, std::uint32_t tile) {
  if constexpr (!Blockwise) {
    return {nullptr, 0};
  } else {
    constexpr std::uint32_t kBlocksPerTile = format::kTileElements / format::kScaleBlockElements;
    const std::uint32_t step_words = format::scale_bytes(value_bytes) / 4;
    const std::uint64_t first = std::uint64_t{tile} * kBlocksPerTile;
    const std::uint64_t blocks = format::scale_count(count);
    const std::uint64_t end = first + kBlocksPerTile < blocks ? first + kBlocksPerTile : blocks;
    const auto* table = reinterpret_cast<const std::uint32_t*>(chunk + sizeof(format::chunk_header) +
                                                                format::step_table_offset(format::tile_count(count), flags));
    return {table + first * step_words, static_cast<std::uint32_t>((end - first) * step_words)};
  }
}

/// The block's sum of `sum` (each thread's terms) and the terms of the tile's words from
/// `read_from` to `bytes`, read from `tile_bytes` after a barrier (writes of other threads of the
/// block that this thread reads), and of its steps. By the whole block, `read_from` the same in
/// every thread; `partials`: a word a warp of shared memory. Every thread gets the sum.
__device__ __forceinline__ std::uint32_t block_check_sum(std::uint32_t sum, const std::byte* tile_bytes, std::uint64_t read_from,
                                                         std::uint64_t bytes, tile_step_words steps,
                                                         std::uint32_t (&partials)[kTileWarps]) {
  if (read_from < bytes) {
    __syncthreads();
    const auto* words = reinterpret_cast<const std::uint32_t*>(tile_bytes);
    for (std::uint64_t w = read_from / 4 + threadIdx.x; w < bytes / 4; w += kTileThreads) {
      sum += format::check_term(words[w], static_cast<std::uint32_t>(w));
    }
  }
  if (threadIdx.x < steps.count) sum += format::check_term(steps.words[threadIdx.x], format::kStepCheckPosition + threadIdx.x);
  sum = __reduce_add_sync(warp::kFullMask, sum);
  if (warp::lane_id() == 0) partials[threadIdx.x / 32] = sum;
  __syncthreads();
  return warp::sum_of(partials);
}

}  // namespace device::detail
NCCLZ_END_KERNEL_NAMESPACE
