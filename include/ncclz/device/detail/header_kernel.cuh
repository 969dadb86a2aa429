// The one kernel of a call's header exchange: the value-range keys of every rank's header row,
// merged with max (order keys: the max of max, the max of ~min) into the range the encoders read.
// And the fault injection of communicator_config::flip_bit_in_chunks_of_rank.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclz/config.hpp"
#include "ncclz/device/detail/range_kernel.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail {

/// A template, as every kernel of this header-only library: a plain __global__ function would be
/// defined again by every translation unit that includes it.
template <class Word>
__global__ void merge_header_ranges(const Word* __restrict__ rows, int nranks, unsigned row_words, range_keys* __restrict__ out) {
  if (threadIdx.x != 0) return;
  unsigned long long hi = 0, not_lo = 0;
  for (int r = 0; r < nranks; ++r) {
    hi = rows[static_cast<std::size_t>(r) * row_words] > hi ? rows[static_cast<std::size_t>(r) * row_words] : hi;
    not_lo = rows[static_cast<std::size_t>(r) * row_words + 1] > not_lo ? rows[static_cast<std::size_t>(r) * row_words + 1] : not_lo;
  }
  out->hi = hi;
  out->not_lo = not_lo;
}

/// Flips bit 0 of the middle byte of the payload of the chunk at `chunk`, whose size in bytes is
/// at `size` (communicator_config::flip_bit_in_chunks_of_rank). One thread.
template <class Word>
__global__ void flip_chunk_bit(std::byte* chunk, const Word* size) {
  constexpr Word kHeader = 64;  // sizeof(format::chunk_header)
  if (threadIdx.x == 0 && *size > kHeader) chunk[kHeader + (*size - kHeader) / 2] ^= std::byte{1};
}

}  // namespace device::detail
NCCLZ_END_KERNEL_NAMESPACE
