// The Adaptive selector's gate before the huffman estimate: its tuning policy and the estimate it
// makes, on the host (host/huffman_reference.hpp) and the device (device/detail/tile/huffman/)
// alike. The gate counts the coded deltas of the selector's sample (in_selector_sample: elements
// 1, 9, 17, ...) under 256 literals; only where the sample's estimate comes under what huffman
// must beat is the whole tile counted and estimated. Not part of the wire format. What was
// measured to choose each constant is in docs/design.md, "Tuning constants".
#pragma once

#include <cstdint>

#include "ncclz/format.hpp"
#include "ncclz/format/huffman.hpp"
#include "ncclz/tuning/adaptive.hpp"

namespace ncclz::tuning {

/// The gate's constants, one line of evidence each (docs/design.md has the measurements).
struct huffman_policy {
  /// The estimate is raised by 1/128 (0.8%), about the sampling error of a 1024-delta entropy:
  /// 16-bit noise at REL 1e-4 passed 31-56% of tiles without it, 1 of 512 with it.
  static constexpr std::uint64_t gate_margin_divisor = 128;
  /// Bits added a symbol the sample holds: 4 for its stored code length, 6 for the entropy a
  /// sparse sample misses (Miller-Madow); 8 let f32 noise through, 12 stopped tiles huffman wins.
  static constexpr std::uint64_t gate_bits_per_symbol = 10;
};

/// The gate's estimate of a huffman tile of `elements` values from its sample
/// (selector_sample_size(elements) deltas, each coded) under 256 literals: the sample's order-0
/// entropy (S lg S - `sum_c_log_c`, 16.16, for S sampled deltas) and escape bits (`extra`) scaled
/// to the tile's coded deltas, gate_bits_per_symbol for each of the `symbols` the sample holds, in
/// a tile of one stored code length, plus the margin.
constexpr std::uint64_t huffman_gate_tile_bytes(std::uint64_t sum_c_log_c, std::uint64_t extra, std::uint32_t symbols,
                                                std::uint32_t elements, std::uint32_t outliers, std::uint32_t value_bytes) {
  const std::uint64_t coded = elements > 0 ? elements - 1 : 0;
  const std::uint32_t sampled = selector_sample_size(elements);
  const std::uint64_t entropy = sampled == 0 ? 0 : std::uint64_t{sampled} * format::huffman::log2_fixed(sampled) - sum_c_log_c;
  // A full tile samples 1024 deltas: a shift then, not a 64-bit division (the same quotient; every
  // thread of every tile works this out on the device).
  constexpr std::uint32_t kFullSample = format::kTileElements / adaptive_policy::selector_stride;
  static_assert(kFullSample == 1024u, "a full tile's sample scales by a shift of 10");
  const std::uint64_t scaled = (entropy + (extra << 16)) * coded;
  const std::uint64_t sample_bits = sampled == 0 ? 0 : (sampled == kFullSample ? scaled >> 10 : scaled / sampled) >> 16;
  const std::uint64_t bits = sample_bits + huffman_policy::gate_bits_per_symbol * symbols;
  const std::uint64_t bytes =
      format::huffman::tile_layout_of(1, format::huffman::subblock_count(elements), bits, outliers, value_bytes).total;
  return bytes + bytes / huffman_policy::gate_margin_divisor;
}

}  // namespace ncclz::tuning
