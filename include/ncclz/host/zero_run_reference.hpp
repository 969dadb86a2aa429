// The zero_run tile mode (docs/format.md, "Zero-run tile"): the host reference, plain sequential C++.
//
// Run-length coding of zero codes, for sparse data (gradients after thresholding, ReLU
// activations). This is the reference the device coder will match bit for bit; like the huffman
// reference it is not wired into any Codec or EntropyCoder policy and no chunk header names it yet
// (a policy the device cannot run would be a trap). The constants move to format.hpp
// (`tile_mode::zero_run`) when the device coder lands.
//
// A tile's values are either its quantization codes or their deltas (the fixed-length pipeline),
// zig-zagged, whichever codes smaller: sparse data keeps its zeros only as codes (a delta is 0 only
// between two equal codes), smooth data has small values only as deltas. The values are cut into 32
// sub-blocks of 256 with stored bit lengths, one warp lane each, as in the huffman tile. A
// sub-block is all zeros (length 0), dense (widths per group of 32 values, as the fixed-length
// blocks: never more than a few bytes over a fixed-length tile) or sparse (Rice-coded runs of zeros
// before each nonzero, then the nonzeros' signs, often one for all (ReLU), and their magnitudes above
// the tile's least (thresholded gradients), Rice-coded or in widths per group of 32). Every choice
// is an exact integer bit count, ties to the smaller id, so the device writes the same bytes.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ncclz/error.hpp"
#include "ncclz/format.hpp"
#include "ncclz/host/detail/bit_stream.hpp"  // detail::bit_writer, peek_bits
#include "ncclz/host/detail/subblocks.hpp"   // detail::kSubblockElements, subblock_count, stream_tail_of
#include "ncclz/host/reference_codec.hpp"    // detail::put, get, bit_width, corrupt_tile

namespace ncclz::host::detail::zero_run {

inline constexpr std::uint8_t kTileMode = 3;  // after huffman (2)
using detail::kSubblockElements;
using detail::subblock_count;
inline constexpr std::uint32_t kTileSubblocks = format::kTileElements / kSubblockElements;  // 32
inline constexpr std::uint32_t kGroupElements = format::kBlockElements;  // one width per 32 values
inline constexpr std::uint32_t kFormBits = 4;
inline constexpr std::uint32_t kMaxRice = 8;   // forms 0..8: sparse, Rice parameter = form; a run is < 256
inline constexpr std::uint32_t kDense = 9;     // form 9: dense
inline constexpr std::uint32_t kCountBits = 8;  // nonzeros of a sparse sub-block minus 1 (1..256 nonzeros)
inline constexpr std::uint32_t kWidthBits = 6;  // a group's width, 0..32
inline constexpr std::uint32_t kSignModeBits = 2;
inline constexpr std::uint32_t kMagnitudeFormBits = 4;  // 0..14: Rice parameter; 15: groups of 32
inline constexpr std::uint32_t kMagnitudeGroups = 15;
inline constexpr std::uint32_t kMaxStoredMagnitude = 0x7FFFFFFFu;  // a Rice-coded one; bounds its unary quotient

/// The signs of a sparse sub-block's nonzeros.
enum class sign_mode : std::uint32_t { mixed = 0 /* a bit each, 1 = negative */, positive = 1, negative = 2 };

/// How a tile's values are made from its codes q (the element's code; 0 for an outlier).
enum class predictor : std::uint8_t {
  codes = 0,   ///< value i = zigzag(q[i]); base is 0
  deltas = 1,  ///< value i = zigzag(q[i] - q[i-1]), q[-1] = base = q[0]: the fixed-length tile's values
};

/// Follows the tile header.
struct zero_run_header {
  std::uint8_t predictor;      ///< ncclz::host::detail::zero_run::predictor
  std::uint8_t reserved0;      ///< zero
  std::uint16_t reserved1;     ///< zero
  std::uint32_t min_magnitude;  ///< 1..2^31: sparse sub-blocks store each nonzero's magnitude minus it
};
static_assert(sizeof(zero_run_header) == 8);

constexpr std::uint32_t group_count(std::uint32_t values) { return (values + kGroupElements - 1) / kGroupElements; }

/// The largest sub-block a valid encoder writes: dense, every value 32 bits wide.
inline constexpr std::uint32_t kMaxSubblockBits = kFormBits + group_count(kSubblockElements) * kWidthBits + kSubblockElements * 32;
static_assert(kMaxSubblockBits <= 0xFFFF, "a sub-block's bit length must fit its u16");

/// Where the parts of a zero_run tile start, relative to the tile, and its total size.
struct tile_layout : stream_tail {
  std::uint64_t subblock_bits;  ///< u16 per sub-block: the bits of its stream (0: all values zero)
  std::uint64_t stream;         ///< the sub-blocks' streams back to back, LSB first
};

constexpr tile_layout tile_layout_of(std::uint32_t subblocks, std::uint64_t stream_bits, std::uint32_t outliers,
                                     std::uint32_t value_bytes) {
  const std::uint64_t subblock_bits = sizeof(format::tile_header) + sizeof(zero_run_header);
  const std::uint64_t stream = format::align_up(subblock_bits + 2ull * subblocks, 4);
  return {stream_tail_of(stream, stream_bits, outliers, value_bytes), subblock_bits, stream};
}

/// The largest zero_run tile an encoder writes for `elements` values: every sub-block dense at 32
/// bits, every value an outlier.
constexpr std::uint64_t max_tile_bytes(std::uint32_t elements, std::uint32_t value_bytes) {
  const std::uint32_t full = elements / kSubblockElements, rest = elements % kSubblockElements;
  const std::uint64_t bits = std::uint64_t{full} * kMaxSubblockBits +
                             (rest > 0 ? kFormBits + group_count(rest) * kWidthBits + rest * 32ull : 0);
  return tile_layout_of(subblock_count(elements), bits, elements, value_bytes).total;
}

/// A tile's quantization codes (0 for an outlier) and its outliers.
struct tile_codes {
  std::vector<std::int32_t> codes;
  std::vector<std::uint16_t> outlier_index;
};

template <class Codec, class T>
tile_codes codes_of(std::span<const T> values, const quant_params<T>& p) {
  using Q = typename Codec::quantizer;
  tile_codes c;
  c.codes.assign(values.size(), 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!Q::template quantize<T>(values[i], p, c.codes[i])) {
      c.codes[i] = 0;  // an outlier's code counts as 0, as in fixed_length tiles
      c.outlier_index.push_back(static_cast<std::uint16_t>(i));
    }
  }
  return c;
}

/// The zig-zagged values a predictor codes.
inline std::vector<std::uint32_t> predicted(std::span<const std::int32_t> codes, predictor pred) {
  std::vector<std::uint32_t> z(codes.size());
  auto prev = codes.empty() ? 0u : static_cast<std::uint32_t>(codes[0]);
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const auto q = static_cast<std::uint32_t>(codes[i]);
    z[i] = format::zigzag(static_cast<std::int32_t>(pred == predictor::deltas ? q - prev : q));
    prev = q;
  }
  return z;
}

/// The group of (up to) 32 values from `g`: its size and width (the bit length of its largest).
struct group {
  std::size_t size;
  std::uint32_t width;
};
inline group group_at(std::span<const std::uint32_t> values, std::size_t g) {
  const std::size_t n = std::min<std::size_t>(kGroupElements, values.size() - g);
  std::uint32_t any = 0;
  for (std::size_t i = g; i < g + n; ++i) any |= values[i];
  return {n, bit_width(any)};
}

/// Bits of `values` stored as groups of 32, each a 6-bit width and the values in that width.
inline std::uint64_t grouped_bits(std::span<const std::uint32_t> values) {
  std::uint64_t bits = 0;
  for (std::size_t g = 0; g < values.size(); g += kGroupElements) {
    const group gr = group_at(values, g);
    bits += kWidthBits + gr.size * gr.width;
  }
  return bits;
}

/// A nonzero zig-zagged value's sign and magnitude (z = 2m for +m, 2m - 1 for -m; m <= 2^31).
constexpr bool is_negative(std::uint32_t z) { return (z & 1u) != 0; }
constexpr std::uint32_t magnitude(std::uint32_t z) { return (z >> 1) + (z & 1u); }

/// The least magnitude of the nonzero values, 1 if there is none: what sparse sub-blocks subtract.
inline std::uint32_t min_magnitude(std::span<const std::uint32_t> values) {
  std::uint32_t least = 0;
  for (const std::uint32_t z : values) {
    if (z != 0 && (least == 0 || magnitude(z) < least)) least = magnitude(z);
  }
  return least == 0 ? 1 : least;
}

/// A sub-block's sparse parts: the run of zeros before each nonzero, its sign, and its magnitude
/// minus the tile's least.
struct sparse_parts {
  std::vector<std::uint32_t> runs;
  std::vector<std::uint32_t> negative;
  std::vector<std::uint32_t> magnitudes;
  sign_mode signs = sign_mode::positive;
};
inline sparse_parts sparse_parts_of(std::span<const std::uint32_t> values, std::uint32_t min_mag) {
  sparse_parts s;
  std::uint32_t run = 0, negatives = 0;
  for (const std::uint32_t z : values) {
    if (z == 0) {
      ++run;
      continue;
    }
    s.runs.push_back(run);
    s.negative.push_back(is_negative(z) ? 1 : 0);
    s.magnitudes.push_back(magnitude(z) - min_mag);
    negatives += s.negative.back();
    run = 0;
  }
  if (negatives == s.runs.size()) s.signs = sign_mode::negative;
  else if (negatives > 0) s.signs = sign_mode::mixed;
  return s;
}

inline std::uint64_t rice_bits(std::span<const std::uint32_t> values, std::uint32_t k) {
  std::uint64_t bits = 0;
  for (const std::uint32_t v : values) bits += (v >> k) + 1 + k;
  return bits;
}

/// A choice among forms: its id and bits.
struct choice {
  std::uint32_t form = 0;
  std::uint64_t bits = 0;
};

/// How a sparse sub-block's magnitudes are stored: Rice(k) for k of 0..14, or groups of 32; the
/// fewest bits (the form field included), the smaller form on a tie.
inline choice choose_magnitude_form(std::span<const std::uint32_t> magnitudes) {
  choice best{kMagnitudeGroups, kMagnitudeFormBits + grouped_bits(magnitudes)};
  for (std::uint32_t k = kMagnitudeGroups; k-- > 0;) {  // downwards, so a tie keeps the smaller k
    const std::uint64_t bits = kMagnitudeFormBits + rice_bits(magnitudes, k);
    if (bits <= best.bits) best = {k, bits};
  }
  return best;
}

/// The smallest form for one sub-block's values: exact bit counts, the smaller form on a tie;
/// 0 bits (no form) when every value is 0.
inline choice choose_form(std::span<const std::uint32_t> values, std::uint32_t min_mag) {
  const sparse_parts s = sparse_parts_of(values, min_mag);
  if (s.runs.empty()) return {};
  choice best{kDense, kFormBits + grouped_bits(values)};
  const std::uint64_t sign_bits = kSignModeBits + (s.signs == sign_mode::mixed ? s.runs.size() : 0);
  const std::uint64_t sparse_fixed = kFormBits + kCountBits + sign_bits + choose_magnitude_form(s.magnitudes).bits;
  for (std::uint32_t k = kMaxRice + 1; k-- > 0;) {
    const std::uint64_t bits = sparse_fixed + rice_bits(s.runs, k);
    if (bits <= best.bits) best = {k, bits};
  }
  return best;
}

inline void put_groups(bit_writer& w, std::span<const std::uint32_t> values) {
  for (std::size_t g = 0; g < values.size(); g += kGroupElements) {
    const group gr = group_at(values, g);
    w.put(gr.width, kWidthBits);
    for (std::size_t i = g; i < g + gr.size; ++i) w.put(values[i], gr.width);
  }
}

/// v >> k zero bits, a one bit, then the k low bits of v.
inline void put_rice(bit_writer& w, std::uint32_t v, std::uint32_t k) {
  for (std::uint32_t q = 0; q < v >> k; ++q) w.put(0, 1);
  w.put(1, 1);
  w.put(v, k);
}

/// Writes one sub-block in `form` (nothing for an all-zero one).
inline void put_subblock(bit_writer& w, std::span<const std::uint32_t> values, std::uint32_t form, std::uint32_t min_mag) {
  const sparse_parts s = sparse_parts_of(values, min_mag);
  if (s.runs.empty()) return;
  w.put(form, kFormBits);
  if (form == kDense) {
    put_groups(w, values);
    return;
  }
  w.put(s.runs.size() - 1, kCountBits);
  for (const std::uint32_t run : s.runs) put_rice(w, run, form);
  w.put(static_cast<std::uint32_t>(s.signs), kSignModeBits);
  if (s.signs == sign_mode::mixed) {
    for (const std::uint32_t n : s.negative) w.put(n, 1);
  }
  const std::uint32_t magnitude_form = choose_magnitude_form(s.magnitudes).form;
  w.put(magnitude_form, kMagnitudeFormBits);
  if (magnitude_form == kMagnitudeGroups) put_groups(w, s.magnitudes);
  else for (const std::uint32_t m : s.magnitudes) put_rice(w, m, magnitude_form);
}

/// The stream bits of a tile's values under one predictor (what the predictor choice compares).
inline std::uint64_t stream_bits(std::span<const std::uint32_t> values) {
  const std::uint32_t min_mag = min_magnitude(values);
  std::uint64_t bits = 0;
  for (std::size_t at = 0; at < values.size(); at += kSubblockElements) {
    bits += choose_form(values.subspan(at, std::min<std::size_t>(kSubblockElements, values.size() - at)), min_mag).bits;
  }
  return bits;
}

/// One zero_run tile of `values` under `pred`.
template <class T>
std::vector<std::byte> encode_tile_with(std::span<const T> values, const tile_codes& c, predictor pred) {
  const auto elements = static_cast<std::uint32_t>(values.size());
  const std::vector<std::uint32_t> z = predicted(c.codes, pred);
  const std::uint32_t min_mag = min_magnitude(z);
  const std::uint32_t subblocks = subblock_count(elements);
  bit_writer stream;
  std::vector<std::uint16_t> subblock_bits(subblocks);
  for (std::uint32_t b = 0; b < subblocks; ++b) {
    const std::span<const std::uint32_t> part =
        std::span<const std::uint32_t>(z).subspan(b * kSubblockElements, std::min(kSubblockElements, elements - b * kSubblockElements));
    const std::uint64_t start = stream.size();
    put_subblock(stream, part, choose_form(part, min_mag).form, min_mag);
    subblock_bits[b] = static_cast<std::uint16_t>(stream.size() - start);  // <= kMaxSubblockBits
  }
  const auto outliers = static_cast<std::uint32_t>(c.outlier_index.size());
  const tile_layout l = tile_layout_of(subblocks, stream.size(), outliers, sizeof(T));
  std::vector<std::byte> out(l.total);
  const std::int32_t base = pred == predictor::deltas && elements > 0 ? c.codes[0] : 0;
  put(out, 0, format::tile_header{kTileMode, 0, static_cast<std::uint16_t>(outliers), base});
  put(out, sizeof(format::tile_header), zero_run_header{static_cast<std::uint8_t>(pred), 0, 0, min_mag});
  for (std::uint32_t b = 0; b < subblocks; ++b) put(out, l.subblock_bits + 2ull * b, subblock_bits[b]);
  std::copy(stream.bytes().begin(), stream.bytes().end(), out.begin() + static_cast<std::ptrdiff_t>(l.stream));
  for (std::uint32_t o = 0; o < outliers; ++o) {
    put(out, l.outlier_index + 2ull * o, c.outlier_index[o]);
    put(out, l.outlier_values + std::uint64_t{o} * sizeof(T), values[c.outlier_index[o]]);
  }
  return out;
}

/// The predictor whose stream is shorter; codes on a tie.
inline predictor choose_predictor(std::span<const std::int32_t> codes) {
  return stream_bits(predicted(codes, predictor::deltas)) < stream_bits(predicted(codes, predictor::codes))
             ? predictor::deltas
             : predictor::codes;
}

/// One zero_run tile of `values`; always this mode (choosing between modes is the selector's job).
template <class Codec, class T>
std::vector<std::byte> encode_tile(std::span<const T> values, const quant_params<T>& p) {
  const tile_codes c = codes_of<Codec>(values, p);
  return encode_tile_with<T>(values, c, choose_predictor(c.codes));
}

/// Reads a sub-block's bits in order, never past its end.
class subblock_reader {
 public:
  subblock_reader(std::span<const std::byte> stream, std::uint64_t begin, std::uint64_t end, std::uint64_t tile,
                  std::uint32_t subblock)
      : stream_(stream), begin_(begin), at_(begin), end_(end), tile_(tile), subblock_(subblock) {}

  std::uint32_t get(std::uint32_t bits) {
    if (end_ - at_ < bits) fail("runs past its " + std::to_string(end_ - begin_) + " bits");
    const auto v = static_cast<std::uint32_t>(peek_bits(stream_, at_, bits));
    at_ += bits;
    return v;
  }
  /// A unary quotient (zeros ended by a one) no larger than `limit`; `what` names a larger one.
  std::uint32_t unary(std::uint32_t limit, const char* what) {
    for (std::uint32_t q = 0;; ++q) {
      if (get(1) == 1) return q;
      if (q == limit) fail(what);
    }
  }
  std::uint32_t rice(std::uint32_t k, std::uint32_t limit, const char* what) {
    const std::uint32_t quotient = unary(limit >> k, what);
    const std::uint32_t v = (quotient << k) | get(k);
    if (v > limit) fail(what);
    return v;
  }
  [[noreturn]] void fail(const std::string& what) const {
    corrupt_tile(tile_, "has a zero_run sub-block " + std::to_string(subblock_) + " that " + what);
  }
  [[nodiscard]] bool at_end() const { return at_ == end_; }

 private:
  std::span<const std::byte> stream_;
  std::uint64_t begin_, at_, end_, tile_;
  std::uint32_t subblock_;
};

inline void get_groups(subblock_reader& r, std::span<std::uint32_t> values) {
  for (std::size_t g = 0; g < values.size(); g += kGroupElements) {
    const std::uint32_t width = r.get(kWidthBits);
    if (width > 32) r.fail("has a group width over 32 bits");
    const std::size_t n = std::min<std::size_t>(kGroupElements, values.size() - g);
    for (std::size_t i = g; i < g + n; ++i) values[i] = r.get(width);
  }
}

/// Decodes one sub-block's zig-zagged values into `values` (its element count, zero-filled).
inline void get_subblock(subblock_reader& r, std::span<std::uint32_t> values, std::uint32_t min_mag) {
  const std::uint32_t form = r.get(kFormBits);
  if (form > kDense) r.fail("has an unknown form " + std::to_string(form));
  if (form == kDense) {
    get_groups(r, values);
    return;
  }
  const std::uint32_t nonzeros = r.get(kCountBits) + 1;
  if (nonzeros > values.size()) r.fail("has more nonzeros than values");
  std::vector<std::uint32_t> position(nonzeros);
  std::uint32_t next = 0;  // the first element a run may start at
  for (std::uint32_t n = 0; n < nonzeros; ++n) {
    // The run and the nonzeros still to come must fit.
    const auto room = static_cast<std::uint32_t>(values.size()) - next - (nonzeros - n);
    position[n] = next + r.rice(form, room, "has a run of zeros past its end");
    next = position[n] + 1;
  }
  const std::uint32_t signs = r.get(kSignModeBits);
  if (signs > static_cast<std::uint32_t>(sign_mode::negative)) r.fail("has an unknown sign mode 3");
  std::vector<std::uint32_t> negative(nonzeros, signs == static_cast<std::uint32_t>(sign_mode::negative) ? 1 : 0);
  if (signs == static_cast<std::uint32_t>(sign_mode::mixed)) {
    for (auto& n : negative) n = r.get(1);
  }
  std::vector<std::uint32_t> stored(nonzeros);
  const std::uint32_t magnitude_form = r.get(kMagnitudeFormBits);
  if (magnitude_form == kMagnitudeGroups) get_groups(r, stored);
  else for (auto& m : stored) m = r.rice(magnitude_form, kMaxStoredMagnitude, "has a magnitude over 31 bits");
  for (std::uint32_t n = 0; n < nonzeros; ++n) {
    const std::uint64_t m = std::uint64_t{min_mag} + stored[n];
    const std::uint64_t z = negative[n] ? 2 * m - 1 : 2 * m;
    if (z > 0xFFFFFFFFu) r.fail("has a magnitude past the 32-bit values");
    values[position[n]] = static_cast<std::uint32_t>(z);
  }
}

/// Decodes one zero_run tile into `out` (its element count). Checks everything before it reads it:
/// a corrupt tile throws format_error naming `tile`, and no read goes past `tile_bytes`.
template <class Codec, class T>
void decode_tile(std::span<const std::byte> tile_bytes, std::uint64_t tile, const quant_params<T>& p, std::span<T> out) {
  using Q = typename Codec::quantizer;
  const auto elements = static_cast<std::uint32_t>(out.size());
  const std::uint32_t subblocks = subblock_count(elements);
  const tile_layout head = tile_layout_of(subblocks, 0, 0, sizeof(T));
  if (tile_bytes.size() < head.stream) corrupt_tile(tile, "is shorter than its headers and sub-block sizes (zero_run)");
  const auto th = get<format::tile_header>(tile_bytes, 0);
  const auto zh = get<zero_run_header>(tile_bytes, sizeof th);
  if (th.mode != kTileMode) corrupt_tile(tile, "is not a zero_run tile");
  if (th.reserved != 0 || zh.reserved0 != 0 || zh.reserved1 != 0) corrupt_tile(tile, "has a nonzero reserved field (zero_run)");
  if (zh.predictor > static_cast<std::uint8_t>(predictor::deltas)) corrupt_tile(tile, "has an unknown zero_run predictor");
  if (zh.min_magnitude < 1 || zh.min_magnitude > 0x80000000u) corrupt_tile(tile, "has a zero_run min magnitude outside 1..2^31");
  const auto pred = static_cast<predictor>(zh.predictor);
  if (pred == predictor::codes && th.base != 0) corrupt_tile(tile, "has a nonzero base under the codes predictor");
  if (th.outlier_count > elements) corrupt_tile(tile, "has more outliers than elements");
  std::vector<std::uint64_t> subblock_start(subblocks + 1, 0);
  for (std::uint32_t b = 0; b < subblocks; ++b) {
    subblock_start[b + 1] = subblock_start[b] + get<std::uint16_t>(tile_bytes, head.subblock_bits + 2ull * b);
  }
  const tile_layout l = tile_layout_of(subblocks, subblock_start[subblocks], th.outlier_count, sizeof(T));
  if (l.total > tile_bytes.size()) corrupt_tile(tile, "is truncated (bit stream or outliers)");

  const std::span<const std::byte> stream = tile_bytes.subspan(l.stream, l.outlier_index - l.stream);
  std::vector<std::uint32_t> values(elements, 0);
  for (std::uint32_t b = 0; b < subblocks; ++b) {
    if (subblock_start[b + 1] == subblock_start[b]) continue;  // every value 0
    subblock_reader r(stream, subblock_start[b], subblock_start[b + 1], tile, b);
    const std::uint32_t first = b * kSubblockElements;
    get_subblock(r, std::span<std::uint32_t>(values).subspan(first, std::min(kSubblockElements, elements - first)), zh.min_magnitude);
    if (!r.at_end()) r.fail("ends before its " + std::to_string(subblock_start[b + 1] - subblock_start[b]) + " bits");
  }
  auto code = static_cast<std::uint32_t>(th.base);
  for (std::uint32_t i = 0; i < elements; ++i) {
    const auto v = static_cast<std::uint32_t>(format::unzigzag(values[i]));
    code = pred == predictor::deltas ? code + v : v;
    out[i] = Q::template dequantize<T>(static_cast<std::int32_t>(code), p);
  }
  for (std::uint32_t o = 0; o < th.outlier_count; ++o) {
    const auto i = get<std::uint16_t>(tile_bytes, l.outlier_index + 2ull * o);
    if (i >= elements) corrupt_tile(tile, "has an outlier index outside the tile");
    out[i] = get<T>(tile_bytes, l.outlier_values + std::uint64_t{o} * sizeof(T));
  }
}

}  // namespace ncclz::host::detail::zero_run
