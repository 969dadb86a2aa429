// The huffman tile mode's layout and integer rules (docs/format.md, "Huffman tile"), shared by the
// host reference (host/huffman_reference.hpp) and the device coder (device/detail/tile/huffman/)
// so both compute the same alphabet, sizes and estimates. Everything here is constexpr and integer
// only: device code uses it through --expt-relaxed-constexpr and gets the same bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclz/detail/subblocks.hpp"
#include "ncclz/format.hpp"

namespace ncclz::format::huffman {

using ncclz::detail::kSubblockElements;  // 256: eight fixed-length blocks, one lane's stream
using ncclz::detail::subblock_count;
inline constexpr std::uint32_t kTileSubblocks = kTileElements / kSubblockElements;  // 32
inline constexpr std::uint32_t kMaxCodeLength = 11;     // a 2048-entry decode table (of 32-bit entries)
inline constexpr std::uint32_t kMaxLiterals = 256;
/// L literals, then an escape class for each width bit_width(L)..32: at most 280 symbols.
constexpr std::uint32_t max_symbols(std::uint32_t literals) { return literals + 33 - bit_width(literals); }
inline constexpr std::uint32_t kMaxSymbols = kMaxLiterals + 33 - 9;  // 9: bit_width(256)
inline constexpr std::uint32_t kMaxExtraBits = 31;  // a width-32 escape's bits, its top one implied
static_assert(kSubblockElements * (kMaxCodeLength + kMaxExtraBits) <= 0xFFFF, "a sub-block's bit length must fit its u16");
/// Codebook cost of one more symbol (a 4-bit length): what the alphabet choice weighs escapes against.
inline constexpr std::uint64_t kBitsPerCodeLength = 4;

/// huffman_header::flags: the tile's sub-blocks are halves, 128 values each (64 a full tile).
inline constexpr std::uint8_t kHalvedSubblocks = 1;
/// huffman_header::flags: the symbols code each element's code itself, zig-zagged, not its delta
/// from the element before (element 0 is the tile header's base either way). Encoders set it for
/// blockwise quantizers (FixedRate), where neighbouring gradients are close to independent and a
/// delta spreads twice as wide as the codes it joins; they pick it per tile, by the gate's sample.
inline constexpr std::uint8_t kCodesPredictor = 2;
inline constexpr std::uint32_t kHalfSubblockElements = kSubblockElements / 2;
inline constexpr std::uint32_t kMaxTileSubblocks = 2 * kTileSubblocks;  // 64

/// Follows the tile header.
struct huffman_header {
  std::uint16_t symbols;      ///< code lengths stored: the literals, then escape classes
  std::uint8_t last_literal;  ///< L - 1: deltas below L (1..256) are literals, the others escape by width
  std::uint8_t flags;         ///< kHalvedSubblocks, kCodesPredictor, both or neither
};
static_assert(sizeof(huffman_header) == 4);

/// The flags byte of a tile cut in half sub-blocks or in 256s, coding codes or deltas, and what a
/// reader takes from it.
constexpr std::uint8_t flags_for(bool halved, bool codes) {
  return static_cast<std::uint8_t>((halved ? kHalvedSubblocks : 0u) | (codes ? kCodesPredictor : 0u));
}
constexpr bool is_halved(const huffman_header& h) { return (h.flags & kHalvedSubblocks) != 0; }
constexpr bool uses_codes_predictor(const huffman_header& h) { return (h.flags & kCodesPredictor) != 0; }
constexpr bool has_unknown_flags(const huffman_header& h) { return (h.flags & ~(kHalvedSubblocks | kCodesPredictor)) != 0; }

/// A decoder parses each sub-block's stream on one thread, a code at a time, so a tile's parse is
/// as long as its sub-blocks: a wide stream (8 bits a value or more: noise, fine bounds) is coded
/// in twice the sub-blocks, which the device parses with twice the warps, for one more u16 a
/// sub-block (at most 16 bits in 2048, 0.8%). Narrower streams keep the 256s: their parse takes
/// two or three short codes a step, and their extra lengths would cost more of a smaller tile.
inline constexpr std::uint64_t kHalvingBitsPerValue = 8;
constexpr bool halves_subblocks(std::uint64_t stream_bits, std::uint32_t elements) {
  return elements > kHalfSubblockElements && stream_bits >= kHalvingBitsPerValue * elements;
}
constexpr std::uint32_t subblock_elements(bool halved) { return halved ? kHalfSubblockElements : kSubblockElements; }
constexpr std::uint32_t tile_subblocks(std::uint32_t elements, bool halved) {
  return (elements + subblock_elements(halved) - 1) / subblock_elements(halved);
}

/// The code length of `symbol` from `pair`, the byte of the tile's code lengths that holds it
/// (tile_layout::code_lengths + symbol / 2: 4 bits a symbol, low nibble first).
constexpr std::uint32_t stored_code_length(std::byte pair, std::uint32_t symbol) {
  return (static_cast<std::uint32_t>(pair) >> (4 * (symbol % 2))) & 0xFu;
}

/// Where the parts of a huffman tile start, relative to the tile, and its total size.
struct tile_layout : stream_tail {
  std::uint64_t code_lengths;   ///< 4 bits per symbol, low nibble first
  std::uint64_t subblock_bits;  ///< u16 per sub-block: the bits of its stream
  std::uint64_t stream;         ///< the sub-blocks' streams back to back, LSB first
};

constexpr tile_layout tile_layout_of(std::uint32_t symbols, std::uint32_t subblocks, std::uint64_t stream_bits,
                                     std::uint32_t outliers, std::uint32_t value_bytes) {
  tile_layout l{};
  l.code_lengths = sizeof(tile_header) + sizeof(huffman_header);
  l.subblock_bits = align_up(l.code_lengths + (symbols + 1) / 2, 2);
  l.stream = align_up(l.subblock_bits + 2ull * subblocks, 4);
  static_cast<stream_tail&>(l) = stream_tail_of(l.stream, stream_bits, outliers, value_bytes);
  return l;
}

/// The symbol of zig-zagged delta `z` under L literals: z itself below L, else the escape class
/// of its bit width w (bit_width(L) <= w <= 32), symbol L + w - bit_width(L), followed by
/// escape_bits(w, L) bits (as in JPEG's magnitude categories, so an escape costs its own width).
/// symbol_map holds L's part, L - bit_width(L), for an encoder that maps many deltas under one L:
/// worked out once, not once a delta (the device compiler recomputed it for each of a thread's
/// deltas in Adaptive's encoder, four instructions a delta).
struct symbol_map {
  std::uint32_t literals;
  std::uint32_t escape_base;  ///< L - bit_width(L)
  constexpr explicit symbol_map(std::uint32_t l) : literals(l), escape_base(l - bit_width(l)) {}
  constexpr std::uint32_t operator()(std::uint32_t z) const { return z < literals ? z : escape_base + bit_width(z); }
};
constexpr std::uint32_t symbol_of(std::uint32_t z, std::uint32_t literals) { return symbol_map(literals)(z); }
/// The bit width of the deltas escape symbol s >= L stands for.
constexpr std::uint32_t class_width(std::uint32_t symbol, std::uint32_t literals) {
  return symbol - literals + bit_width(literals);
}
/// Bits after an escape of width w: w - 1 (z's low bits; its top bit is implied), except in the
/// first class, which starts at L instead of 2^(w-1): z - L, in as few bits as 2^w - 1 - L takes.
constexpr std::uint32_t escape_bits(std::uint32_t width, std::uint32_t literals) {
  return width == bit_width(literals) ? bit_width(static_cast<std::uint32_t>((std::uint64_t{1} << width) - 1 - literals)) : width - 1;
}
/// The escape bits of zig-zagged delta z >= L (what follows its class symbol in the stream).
constexpr std::uint32_t escape_value(std::uint32_t z, std::uint32_t literals) {
  return bit_width(z) == bit_width(literals) ? z - literals : z;
}

/// log2(c) for c >= 1 in 16.16 fixed point, linear between powers of two (at most 0.086 bits
/// low): an integer the device computes the same. `U` is the arithmetic's width.
template <class U>
constexpr U log2_fixed_in(U c) {
  const std::uint32_t e = bit_width(static_cast<std::uint32_t>(c)) - 1;
  return (U{e} << 16) + (((c << 16) >> e) & 0xFFFFu);
}
constexpr std::uint64_t log2_fixed(std::uint64_t c) { return log2_fixed_in(c); }
/// c * log2_fixed(c), 0 for c = 0 (and for c = 1). No branch on c: the device compiled `c == 0 ?`
/// into one around the product, where a warp's lanes hold zero and nonzero counts alike.
constexpr std::uint64_t c_log_c(std::uint64_t c) { return c * log2_fixed(c > 1 ? c : 1); }
/// c_log_c in 32-bit arithmetic, the same integer for c <= kMaxSampleCount (c << 16 and the
/// product fit): what the device's gate sums its sample's counts with, in fewer instructions.
inline constexpr std::uint32_t kMaxSampleCount = 2048;
constexpr std::uint32_t sample_c_log_c(std::uint32_t c) { return c * log2_fixed_in(c > 1 ? c : 1u); }
constexpr bool sample_c_log_c_matches() {
  for (std::uint32_t c = 0; c <= kMaxSampleCount; ++c) {
    if (sample_c_log_c(c) != c_log_c(c)) return false;
  }
  return true;
}
static_assert(sample_c_log_c_matches(), "sample_c_log_c is c_log_c for every count a sample holds");

/// The bytes a huffman tile is estimated to take from its `estimated_bits` (16.16 fixed point:
/// entropy, escape bits and 4 bits a stored symbol) and the symbol count it stores: what the
/// Adaptive selector compares with the other modes' exact sizes before it builds a codebook.
constexpr std::uint64_t estimated_tile_bytes(std::uint64_t estimated_bits, std::uint32_t symbols, std::uint32_t elements,
                                             std::uint32_t outliers, std::uint32_t value_bytes) {
  const std::uint64_t bits = estimated_bits >> 16;
  const std::uint64_t lengths = kBitsPerCodeLength * symbols;
  const std::uint64_t stream_bits = bits > lengths ? bits - lengths : 0;
  return tile_layout_of(symbols, tile_subblocks(elements, halves_subblocks(stream_bits, elements)), stream_bits, outliers,
                        value_bytes)
      .total;
}

/// The fewest bytes a huffman tile of `elements` values can take when its coded deltas (all but
/// element 0's) are not all alike: some zero and some not, so two symbols or more and every coded
/// delta costs a bit or more. A selector that already holds a smaller tile of another mode needs
/// neither the estimate nor the codebook.
constexpr std::uint64_t least_tile_bytes(std::uint32_t elements, std::uint32_t outliers, std::uint32_t value_bytes) {
  return tile_layout_of(2, subblock_count(elements), elements > 0 ? elements - 1 : 0, outliers, value_bytes).total;
}

}  // namespace ncclz::format::huffman
