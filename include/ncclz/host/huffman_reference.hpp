// The huffman tile mode (docs/format.md, "Huffman tile"): the host reference, plain sequential C++.
//
// The reference the device Huffman coder (device/detail/tile/huffman/) matches bit for bit,
// the way reference_codec.hpp is the oracle of the fixed-length coder: same histogram, same
// alphabet choice, same length-limited canonical codebook, same bytes. reference_codec.hpp calls it
// for the coders that try huffman tiles (EntropyCoder<Huffman>, <Adaptive>); the layout and the
// integer rules both sides share are in format/huffman.hpp.
//
// What makes the layout fit a GPU: a tile's 8192 codes are cut into 32 sub-blocks of 256 (64 of
// 128 where the stream is wide), each a self-contained bit stream whose length is stored, so the
// lanes of one or two warps decode one tile independently, a sub-block each, after one warp scan
// of the lengths (an escaped delta's bits sit inline after its escape code: no cross-sub-block
// index); codes are at
// most 11 bits, so a decoder resolves each one with a single lookup in a 2048-entry table built
// from the code lengths in shared memory; and the codebook is derived only from integer counts,
// with every tie broken by symbol value, so a device build reproduces it exactly.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/error.hpp"
#include "ncclz/format.hpp"
#include "ncclz/format/huffman.hpp"
#include "ncclz/host/detail/bit_stream.hpp"
#include "ncclz/host/detail/subblocks.hpp"  // detail::subblock_count
#include "ncclz/host/detail/tile_bytes.hpp"  // detail::put, get, bit_width, corrupt_tile
#include "ncclz/tuning/huffman.hpp"

namespace ncclz::host::detail::huffman {

using namespace ncclz::format::huffman;  // the layout and integer rules the device shares
inline constexpr std::uint8_t kTileMode = static_cast<std::uint8_t>(tile_mode::huffman);

/// The largest huffman tile of `elements` values: every symbol, every code at the longest length
/// followed by 31 escape bits, in half sub-blocks, every value an outlier. (Real tiles never reach it; the selector
/// stores a tile raw or fixed-length whenever that is smaller.)
constexpr std::uint64_t max_tile_bytes(std::uint32_t elements, std::uint32_t value_bytes) {
  return tile_layout_of(kMaxSymbols, tile_subblocks(elements, true), std::uint64_t{elements} * (kMaxCodeLength + kMaxExtraBits),
                        elements, value_bytes)
      .total;
}

/// A tile's zig-zagged code deltas (as the fixed-length mode codes them), or with `codes` its
/// zig-zagged codes (format::huffman::kCodesPredictor), and its outliers. Element 0 is not coded
/// (`base` holds its code): zigzagged[i] is element i + 1's. (Coding it would cost a constant or
/// ramp tile a second symbol, and a bit a value.)
struct tile_deltas {
  std::vector<std::uint32_t> zigzagged;
  std::vector<std::uint16_t> outlier_index;
  std::int32_t base = 0;
  bool codes = false;
};

/// `block_p`, when not null, holds the parameters of each scale block of the tile (blockwise
/// quantizers: FixedRate), used instead of `p`; `codes`: the codes predictor.
template <class Codec, class T>
tile_deltas deltas_of(std::span<const T> values, const quant_params<T>& p, const quant_params<T>* block_p = nullptr,
                      bool codes = false) {
  using Q = typename Codec::quantizer;
  tile_deltas d;
  d.codes = codes;
  std::uint32_t prev = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::int32_t code = 0;
    if (!Q::template quantize<T>(values[i], block_p ? block_p[i / format::kScaleBlockElements] : p, code)) {
      code = 0;  // an outlier's code counts as 0, as in fixed_length tiles
      d.outlier_index.push_back(static_cast<std::uint16_t>(i));
    }
    if (i == 0) d.base = code;
    else d.zigzagged.push_back(format::zigzag(codes ? code : static_cast<std::int32_t>(static_cast<std::uint32_t>(code) - prev)));
    prev = static_cast<std::uint32_t>(code);
  }
  return d;
}

/// Counts of the deltas' symbols under the most literals (256): every other choice's counts are
/// sums of these bins (symbol_counts).
inline std::array<std::uint32_t, kMaxSymbols> histogram(std::span<const std::uint32_t> zigzagged) {
  std::array<std::uint32_t, kMaxSymbols> h{};
  for (const std::uint32_t z : zigzagged) ++h[symbol_of(z, kMaxLiterals)];
  return h;
}

/// The symbols' counts under L literals, up to the widest delta's class (the symbol count the
/// tile stores: unused classes past it cost nothing).
inline std::vector<std::uint32_t> symbol_counts(const std::array<std::uint32_t, kMaxSymbols>& hist,
                                                std::uint32_t literals) {
  std::vector<std::uint32_t> counts(max_symbols(literals), 0);
  for (std::uint32_t s = 0; s < kMaxSymbols; ++s) {
    // Bin s holds the literal s, or (s >= 256) the deltas of one width.
    const std::uint32_t width = s < kMaxLiterals ? bit_width(s) : class_width(s, kMaxLiterals);
    counts[s < literals ? s : literals + width - bit_width(literals)] += hist[s];
  }
  std::uint32_t used = literals;  // the literals are always stored
  for (std::uint32_t symbol = used; symbol < counts.size(); ++symbol) {
    if (counts[symbol] > 0) used = symbol + 1;
  }
  counts.resize(used);
  return counts;
}

/// The bits (in 16.16 fixed point) a tile of these symbol counts is estimated to take under L
/// literals: the order-0 entropy of its symbols, the escapes' bits and 4 bits a stored code length.
inline std::uint64_t estimated_bits(const std::array<std::uint32_t, kMaxSymbols>& hist, std::uint32_t literals) {
  const std::vector<std::uint32_t> counts = symbol_counts(hist, literals);
  std::uint64_t total = 0, sum_c_log_c = 0, extra = 0;
  for (std::uint32_t s = 0; s < counts.size(); ++s) {
    if (counts[s] == 0) continue;
    total += counts[s];
    sum_c_log_c += c_log_c(counts[s]);
    if (s >= literals) extra += std::uint64_t{counts[s]} * escape_bits(class_width(s, literals), literals);
  }
  // c log c <= c log total for each count (log2_fixed is monotone): the entropy is not negative.
  const std::uint64_t entropy = total == 0 ? 0 : total * log2_fixed(total) - sum_c_log_c;
  return entropy + ((extra + kBitsPerCodeLength * counts.size()) << 16);
}

/// Adaptive's gate (tuning::huffman_gate_tile_bytes): the bytes a huffman tile of these deltas
/// is estimated at from the sample of them the gate counts.
inline std::uint64_t gate_tile_bytes(const tile_deltas& d, std::uint32_t elements, std::uint32_t value_bytes) {
  std::array<std::uint32_t, kMaxSymbols> hist{};
  for (std::size_t j = 0; j < d.zigzagged.size(); ++j) {
    if (tuning::in_selector_sample(static_cast<std::uint32_t>(j + 1))) ++hist[symbol_of(d.zigzagged[j], kMaxLiterals)];  // element j + 1
  }
  std::uint64_t sum_c_log_c = 0, extra = 0;
  std::uint32_t symbols = 0;
  for (std::uint32_t s = 0; s < kMaxSymbols; ++s) {
    sum_c_log_c += c_log_c(hist[s]);
    symbols += hist[s] > 0;
    if (s >= kMaxLiterals) extra += std::uint64_t{hist[s]} * escape_bits(class_width(s, kMaxLiterals), kMaxLiterals);
  }
  return tuning::huffman_gate_tile_bytes(sum_c_log_c, extra, symbols, elements,
                                          static_cast<std::uint32_t>(d.outlier_index.size()), value_bytes);
}

/// The literal count L (1..256) the encoder uses: the one whose estimated_bits is least, the
/// smallest on a tie. Integer-only, so the device's choice is the same.
inline std::uint32_t choose_literals(const std::array<std::uint32_t, kMaxSymbols>& hist) {
  std::uint32_t best = 1;
  std::uint64_t best_bits = estimated_bits(hist, 1);
  for (std::uint32_t literals = 2; literals <= kMaxLiterals; ++literals) {
    const std::uint64_t bits = estimated_bits(hist, literals);
    if (bits < best_bits) {
      best_bits = bits;
      best = literals;
    }
  }
  return best;
}

/// What a selector weighs before it builds a huffman tile of these deltas: the literal count the
/// encoder chooses and the bytes format::huffman::estimated_tile_bytes puts the tile at.
struct tile_estimate {
  std::uint32_t literals;
  std::uint64_t bytes;
};
inline tile_estimate estimate_tile(const tile_deltas& d, std::uint32_t elements, std::uint32_t value_bytes) {
  const auto hist = histogram(d.zigzagged);
  const std::uint32_t literals = choose_literals(hist);
  const auto symbols = static_cast<std::uint32_t>(symbol_counts(hist, literals).size());
  return {literals, format::huffman::estimated_tile_bytes(estimated_bits(hist, literals), symbols, elements,
                                                          static_cast<std::uint32_t>(d.outlier_index.size()), value_bytes)};
}

/// Code lengths (0 = unused) of a Huffman code limited to `max_length` bits. Deterministic:
/// 1. used symbols sorted by (count, symbol); a two-queue Huffman merge that takes the leaf when a
///    leaf and a merged node weigh the same gives each leaf a depth;
/// 2. depths over max_length are folded in with JPEG's adjustment (ITU T.81 Annex K.3), which
///    keeps the code complete;
/// 3. the resulting lengths go, shortest first, to symbols sorted by (count descending, symbol).
/// A single used symbol gets length 1 (and is then coded in 0 bits, see codebook).
inline std::vector<std::uint8_t> limited_code_lengths(std::span<const std::uint32_t> counts,
                                                      std::uint32_t max_length = kMaxCodeLength) {
  std::vector<std::uint32_t> used;
  for (std::uint32_t s = 0; s < counts.size(); ++s) {
    if (counts[s] > 0) used.push_back(s);
  }
  std::vector<std::uint8_t> lengths(counts.size(), 0);
  const auto m = static_cast<std::uint32_t>(used.size());
  if (m == 1) lengths[used[0]] = 1;
  if (m <= 1) return lengths;
  std::stable_sort(used.begin(), used.end(), [&](std::uint32_t a, std::uint32_t b) { return counts[a] < counts[b]; });

  // Nodes 0..m-1 are the leaves in sorted order, m..2m-2 the merged nodes in creation order.
  std::vector<std::uint64_t> weight(2 * m - 1);
  std::vector<std::uint32_t> parent(2 * m - 1, 0);
  for (std::uint32_t i = 0; i < m; ++i) weight[i] = counts[used[i]];
  std::uint32_t next_leaf = 0, next_merged = m;
  auto take_lightest = [&](std::uint32_t merged_end) {
    if (next_leaf < m && (next_merged == merged_end || weight[next_leaf] <= weight[next_merged])) return next_leaf++;
    return next_merged++;
  };
  for (std::uint32_t node = m; node < 2 * m - 1; ++node) {
    const std::uint32_t a = take_lightest(node);
    const std::uint32_t b = take_lightest(node);
    weight[node] = weight[a] + weight[b];
    parent[a] = parent[b] = node;
  }
  std::vector<std::uint32_t> depth(2 * m - 1, 0);  // parents come after their children
  std::vector<std::uint32_t> length_count(m + 1, 0);
  for (std::uint32_t node = 2 * m - 1; node-- > 0;) {
    if (node < 2 * m - 2) depth[node] = depth[parent[node]] + 1;
    if (node < m) ++length_count[depth[node]];
  }

  for (std::uint32_t deepest = m; deepest > max_length; --deepest) {
    while (length_count[deepest] > 0) {
      // Two leaves of the deepest level become one a level up; a shallower leaf (at `j`) splits
      // into two at j + 1 to make room: the Kraft sum stays 1.
      std::uint32_t j = deepest - 2;
      while (length_count[j] == 0) --j;
      length_count[deepest] -= 2;
      length_count[deepest - 1] += 1;
      length_count[j + 1] += 2;
      length_count[j] -= 1;
    }
  }
  std::stable_sort(used.begin(), used.end(), [&](std::uint32_t a, std::uint32_t b) { return counts[a] > counts[b]; });
  std::uint32_t next = 0;
  for (std::uint32_t len = 1; len <= std::min(m, max_length); ++len) {
    for (std::uint32_t k = 0; k < length_count[len]; ++k) lengths[used[next++]] = static_cast<std::uint8_t>(len);
  }
  return lengths;
}

inline std::uint32_t reverse_bits(std::uint32_t code, std::uint32_t length) {
  std::uint32_t r = 0;
  for (std::uint32_t k = 0; k < length; ++k) r |= ((code >> k) & 1u) << (length - 1 - k);
  return r;
}

/// A canonical codebook from its code lengths: codes of one length are consecutive, in symbol
/// order, and shorter codes come first (DEFLATE's rule, RFC 1951 3.2.2).
struct codebook {
  std::vector<std::uint8_t> lengths;  ///< as stored: 0 = unused, 1..12
  std::vector<std::uint32_t> codes;   ///< bit-reversed: the first code bit is the stream's next bit
  std::vector<std::uint8_t> emitted;  ///< bits each symbol takes in the stream (0 when it is alone)
  std::uint32_t used = 0;

  /// The decoder's table: entry k is the symbol whose code starts the 11 stream bits k (first bit
  /// lowest), and the code's length. Complete codes fill every entry.
  struct entry {
    std::uint16_t symbol;
    std::uint8_t length;
  };
  [[nodiscard]] std::vector<entry> decode_table() const {
    std::vector<entry> table(std::size_t{1} << kMaxCodeLength, entry{0, 0});
    for (std::uint32_t s = 0; s < lengths.size(); ++s) {
      if (lengths[s] == 0) continue;
      const std::uint32_t len = emitted[s];
      for (std::uint32_t high = 0; high < (1u << (kMaxCodeLength - len)); ++high) {
        table[codes[s] | (high << len)] = entry{static_cast<std::uint16_t>(s), static_cast<std::uint8_t>(len)};
      }
    }
    return table;
  }
};

/// Builds and checks the codebook of `lengths`. A valid codebook is complete (Kraft sum exactly
/// 1), or a single symbol of length 1 (coded in 0 bits), or empty for a tile of at most one
/// element (nothing is coded). Throws
/// format_error naming the tile otherwise.
inline codebook canonical_codebook(std::span<const std::uint8_t> lengths, std::uint64_t tile, bool allow_empty) {
  codebook book;
  book.lengths.assign(lengths.begin(), lengths.end());
  book.codes.assign(lengths.size(), 0);
  book.emitted.assign(lengths.begin(), lengths.end());
  std::array<std::uint32_t, kMaxCodeLength + 1> count_of_length{};
  std::uint64_t kraft = 0;  // in units of 2^-kMaxCodeLength
  for (const std::uint8_t len : lengths) {
    if (len > kMaxCodeLength) corrupt_tile(tile, "has a Huffman code length over 11 bits");
    if (len == 0) continue;
    ++count_of_length[len];
    ++book.used;
    kraft += std::uint64_t{1} << (kMaxCodeLength - len);
  }
  if (book.used == 0 && !allow_empty) corrupt_tile(tile, "has an empty Huffman codebook");
  if (book.used == 1) {
    if (kraft != (std::uint64_t{1} << (kMaxCodeLength - 1))) corrupt_tile(tile, "has a lone Huffman symbol whose length is not 1");
    std::fill(book.emitted.begin(), book.emitted.end(), 0);
    return book;
  }
  if (book.used > 1 && kraft > (std::uint64_t{1} << kMaxCodeLength)) corrupt_tile(tile, "has an over-subscribed Huffman codebook");
  if (book.used > 1 && kraft < (std::uint64_t{1} << kMaxCodeLength)) corrupt_tile(tile, "has an incomplete Huffman codebook");
  std::array<std::uint32_t, kMaxCodeLength + 1> next_code{};
  std::uint32_t code = 0;
  for (std::uint32_t len = 1; len <= kMaxCodeLength; ++len) {
    code = (code + count_of_length[len - 1]) << 1;
    next_code[len] = code;
  }
  for (std::uint32_t s = 0; s < lengths.size(); ++s) {
    if (lengths[s] != 0) book.codes[s] = reverse_bits(next_code[lengths[s]]++, lengths[s]);
  }
  return book;
}

/// The huffman tile of `values`, whose deltas are `d`, under `literals` literals (1..256).
template <class T>
std::vector<std::byte> encode_tile_with(std::span<const T> values, const tile_deltas& d, std::uint32_t literals) {
  const auto elements = static_cast<std::uint32_t>(values.size());
  const std::array<std::uint32_t, kMaxSymbols> hist = histogram(d.zigzagged);
  const std::vector<std::uint32_t> counts = symbol_counts(hist, literals);
  const codebook book = canonical_codebook(limited_code_lengths(counts), 0, elements <= 1);
  const auto symbols = static_cast<std::uint32_t>(counts.size());

  // The stream is the same however it is cut: code it once, noting where each half sub-block
  // ends, then cut it in halves or in 256s (halves_subblocks).
  bit_writer stream;
  std::vector<std::uint64_t> half_end(tile_subblocks(elements, true));
  for (std::uint32_t h = 0; h < half_end.size(); ++h) {
    for (std::uint32_t i = std::max(1u, h * kHalfSubblockElements); i < std::min(elements, (h + 1) * kHalfSubblockElements); ++i) {
      const std::uint32_t z = d.zigzagged[i - 1];
      const std::uint32_t symbol = symbol_of(z, literals);
      stream.put(book.codes[symbol], book.emitted[symbol]);
      if (z >= literals) {
        const std::uint32_t width = bit_width(z);
        stream.put(escape_value(z, literals), escape_bits(width, literals));
      }
    }
    half_end[h] = stream.size();
  }
  const bool halved = halves_subblocks(stream.size(), elements);
  const std::uint32_t subblocks = tile_subblocks(elements, halved), per = halved ? 1u : 2u;
  std::vector<std::uint16_t> subblock_bits(subblocks);  // each <= 256 * (11 + 31)
  for (std::uint32_t b = 0; b < subblocks; ++b) {
    const std::uint64_t end = half_end[std::min<std::size_t>(per * b + per, half_end.size()) - 1];
    const std::uint64_t start = b == 0 ? 0 : half_end[per * b - 1];
    subblock_bits[b] = static_cast<std::uint16_t>(end - start);
  }

  const auto outliers = static_cast<std::uint32_t>(d.outlier_index.size());
  const tile_layout l = tile_layout_of(symbols, subblocks, stream.size(), outliers, sizeof(T));
  std::vector<std::byte> out(l.total);
  put(out, 0, format::tile_header{kTileMode, 0, static_cast<std::uint16_t>(outliers), d.base});
  put(out, sizeof(format::tile_header), huffman_header{static_cast<std::uint16_t>(symbols), static_cast<std::uint8_t>(literals - 1),
                                                      flags_for(halved, d.codes)});
  for (std::uint32_t s = 0; s < symbols; ++s) {
    out[l.code_lengths + s / 2] |= static_cast<std::byte>(book.lengths[s] << (4 * (s % 2)));
  }
  for (std::uint32_t b = 0; b < subblocks; ++b) put(out, l.subblock_bits + 2ull * b, subblock_bits[b]);
  std::copy(stream.bytes().begin(), stream.bytes().end(), out.begin() + static_cast<std::ptrdiff_t>(l.stream));
  for (std::uint32_t o = 0; o < outliers; ++o) {
    put(out, l.outlier_index + 2ull * o, d.outlier_index[o]);
    put(out, l.outlier_values + std::uint64_t{o} * sizeof(T), values[d.outlier_index[o]]);
  }
  return out;
}

/// One huffman tile of `values`; always this mode (choosing between modes is the selector's job).
/// `forced_literals` (tests only) overrides the encoder's choice of L; `block_p` as in deltas_of.
template <class Codec, class T>
std::vector<std::byte> encode_tile(std::span<const T> values, const quant_params<T>& p,
                                   std::optional<std::uint32_t> forced_literals = std::nullopt,
                                   const quant_params<T>* block_p = nullptr) {
  const tile_deltas d = deltas_of<Codec>(values, p, block_p);
  return encode_tile_with<T>(values, d, forced_literals.value_or(choose_literals(histogram(d.zigzagged))));
}

/// Decodes one huffman tile into `out` (its element count). Checks everything before it reads it:
/// a corrupt tile throws format_error naming `tile`, and no read goes past `tile_bytes`.
template <class Codec, class T>
void decode_tile(std::span<const std::byte> tile_bytes, std::uint64_t tile, const quant_params<T>& p, std::span<T> out,
                 const quant_params<T>* block_p = nullptr) {
  using Q = typename Codec::quantizer;
  const auto elements = static_cast<std::uint32_t>(out.size());
  const auto params_at = [&](std::uint32_t i) -> const quant_params<T>& { return block_p ? block_p[i / format::kScaleBlockElements] : p; };
  const std::uint64_t headers = sizeof(format::tile_header) + sizeof(huffman_header);
  if (tile_bytes.size() < headers) corrupt_tile(tile, "is shorter than its headers (huffman)");
  const auto th = get<format::tile_header>(tile_bytes, 0);
  const auto hh = get<huffman_header>(tile_bytes, sizeof th);
  if (th.mode != kTileMode) corrupt_tile(tile, "is not a huffman tile");
  if (th.reserved != 0) corrupt_tile(tile, "has a nonzero reserved byte (huffman)");
  if (has_unknown_flags(hh)) corrupt_tile(tile, "has unknown huffman flags");
  const std::uint32_t literals = hh.last_literal + 1u;
  const bool codes = uses_codes_predictor(hh);
  if (hh.symbols < literals || hh.symbols > max_symbols(literals)) {
    corrupt_tile(tile, "has a Huffman symbol count outside L..L + 33 - bit_width(L) (L literals)");
  }
  if (th.outlier_count > elements) corrupt_tile(tile, "has more outliers than elements");
  const std::uint32_t subblocks = tile_subblocks(elements, is_halved(hh)), subblock_size = subblock_elements(is_halved(hh));
  const tile_layout head = tile_layout_of(hh.symbols, subblocks, 0, 0, sizeof(T));
  if (head.stream > tile_bytes.size()) corrupt_tile(tile, "is truncated (code lengths or sub-block sizes)");
  std::vector<std::uint8_t> lengths(hh.symbols);
  for (std::uint32_t s = 0; s < hh.symbols; ++s) {
    lengths[s] = static_cast<std::uint8_t>(stored_code_length(tile_bytes[head.code_lengths + s / 2], s));
  }
  const codebook book = canonical_codebook(lengths, tile, elements <= 1);
  std::vector<std::uint64_t> subblock_start(subblocks + 1, 0);
  for (std::uint32_t b = 0; b < subblocks; ++b) {
    subblock_start[b + 1] = subblock_start[b] + get<std::uint16_t>(tile_bytes, head.subblock_bits + 2ull * b);
  }
  const tile_layout l = tile_layout_of(hh.symbols, subblocks, subblock_start[subblocks], th.outlier_count, sizeof(T));
  if (l.total > tile_bytes.size()) corrupt_tile(tile, "is truncated (bit stream or outliers)");

  const std::span<const std::byte> stream = tile_bytes.subspan(l.stream, l.outlier_index - l.stream);
  const std::vector<codebook::entry> table = book.decode_table();
  auto code = static_cast<std::uint32_t>(th.base);
  for (std::uint32_t b = 0; b < subblocks; ++b) {
    std::uint64_t at = subblock_start[b];
    if (b == 0 && elements > 0) out[0] = Q::template dequantize<T>(th.base, params_at(0));
    for (std::uint32_t i = std::max(1u, b * subblock_size); i < std::min(elements, (b + 1) * subblock_size); ++i) {
      const codebook::entry e = table[peek_bits(stream, at, kMaxCodeLength)];
      at += e.length;
      std::uint32_t z = e.symbol;
      if (z >= literals) {  // an escape of width w <= 32 (the symbol count bounds it)
        const std::uint32_t width = class_width(z, literals);
        const std::uint32_t bits = escape_bits(width, literals);
        const auto low = static_cast<std::uint32_t>(peek_bits(stream, at, bits));
        at += bits;
        if (width > bit_width(literals)) {
          z = (1u << bits) | low;
        } else {
          z = literals + low;
          if (bit_width(z) != width) corrupt_tile(tile, "has a Huffman escape past its width class");
        }
      }
      code = (codes ? 0u : code) + static_cast<std::uint32_t>(format::unzigzag(z));
      out[i] = Q::template dequantize<T>(static_cast<std::int32_t>(code), params_at(i));
    }
    if (at != subblock_start[b + 1]) {
      corrupt_tile(tile, "has a Huffman sub-block " + std::to_string(b) + " whose codes do not fill its " +
                             std::to_string(subblock_start[b + 1] - subblock_start[b]) + " bits");
    }
  }
  for (std::uint32_t o = 0; o < th.outlier_count; ++o) {
    const auto i = get<std::uint16_t>(tile_bytes, l.outlier_index + 2ull * o);
    if (i >= elements) corrupt_tile(tile, "has an outlier index outside the tile");
    out[i] = get<T>(tile_bytes, l.outlier_values + std::uint64_t{o} * sizeof(T));
  }
}

}  // namespace ncclz::host::detail::huffman
