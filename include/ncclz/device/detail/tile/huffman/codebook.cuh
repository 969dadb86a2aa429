// What the device encoder and decoder of the huffman tile mode (docs/format.md, "Huffman tile")
// both build: the ranks of symbols within their code length and the first canonical code of each
// length. The format constants (ncclz/format/huffman.hpp) are read here unqualified.
#pragma once

#include <cstdint>

#include "ncclz/config.hpp"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/format.hpp"
#include "ncclz/format/huffman.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail::tile::huffman {

using namespace ncclz::format::huffman;
using format::bit_width;
using format::tile_header;

using format::bit_width;
using format::tile_header;

/// Symbols are grouped by 32 (a warp's lanes) to rank them within their code length.
inline constexpr std::uint32_t kSymbolGroups = (kMaxSymbols + 31) / 32;
using group_counts = std::uint16_t[kSymbolGroups][kMaxCodeLength + 1];

/// By all 256 threads: the rank of symbol threadIdx.x + 256 r (r = 0, 1) among the symbols of its
/// code length, by symbol (canonical codes are consecutive there). Lanes of one length find each
/// other with __match_any_sync; earlier groups of 32 add their counts. `counts` must be zero on
/// entry; ends with a barrier.
__device__ __forceinline__ void ranks_within_length(const std::uint8_t* length, std::uint32_t symbols, group_counts& counts,
                                                    std::uint32_t (&rank)[2]) {
#pragma unroll
  for (int round = 0; round < 2; ++round) {
    const std::uint32_t sym = threadIdx.x + round * kTileThreads;
    const std::uint32_t len = sym < symbols ? length[sym] : 0u;
    const std::uint32_t peers = __match_any_sync(warp::kFullMask, len);
    rank[round] = __popc(peers & ((1u << warp::lane_id()) - 1u));
    if (sym / 32 < kSymbolGroups && len != 0 && rank[round] == 0) counts[sym / 32][len] = static_cast<std::uint16_t>(__popc(peers));
  }
  __syncthreads();
#pragma unroll
  for (int round = 0; round < 2; ++round) {
    const std::uint32_t sym = threadIdx.x + round * kTileThreads;
    const std::uint32_t len = sym < symbols ? length[sym] : 0u;
    if (len == 0) continue;
    for (std::uint32_t g = 0; g < sym / 32; ++g) rank[round] += counts[g][len];
  }
}

/// The canonical code of the first symbol of length `len` (the host's next_code[len]).
__device__ __forceinline__ std::uint32_t first_canonical_code(const std::uint32_t* count_of_length, std::uint32_t len) {
  std::uint32_t code = 0;
  for (std::uint32_t k = 1; k <= len; ++k) code = (code + (k > 1 ? count_of_length[k - 1] : 0u)) << 1;
  return code;
}

}  // namespace device::detail::tile::huffman
NCCLZ_END_KERNEL_NAMESPACE
