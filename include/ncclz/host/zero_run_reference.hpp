// The zero_run tile mode (docs/format.md, "Zero-run tile"): the host reference, plain sequential C++.
//
// Run-length coding of zero codes, for sparse data (gradients after thresholding, ReLU
// activations). reference_codec.hpp calls it for the coders that try zero_run tiles
// (EntropyCoder<ZeroRun>, <Adaptive>); the device coder writes the same bytes.
//
// A tile's values are either its quantization codes or their deltas (the fixed-length pipeline),
// zig-zagged, whichever codes smaller: sparse data keeps its zeros only as codes (a delta is 0 only
// between two equal codes), smooth data has small values only as deltas. The values are cut into 32
// sub-blocks of 256 with stored bit lengths, one warp lane each, as in the huffman tile. A
// sub-block is all zeros (length 0), dense (widths per group of 32 values, as the fixed-length
// blocks: never more than a few bytes over a fixed-length tile) or sparse (Rice-coded runs of zeros
// before each nonzero, then the nonzeros' signs, often one for all (ReLU), and their magnitudes above
// the tile's least (thresholded gradients), Rice-coded or in widths per group of 32). Every choice
// is an exact integer bit count, ties to the smaller id.
//
// The layout, the choices, a sub-block's bits and its decoding with every check are the shared
// __host__ __device__ code of ncclz/format/zero_run.hpp, which the device coder
// (ncclz/device/detail/tile/zero_run/) runs too: what is here is the sequential frame around it
// (quantizing, the predictor over the whole tile, the headers, outliers, error messages).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "ncclz/format/zero_run.hpp"
#include "ncclz/error.hpp"
#include "ncclz/format.hpp"
#include "ncclz/host/detail/bit_stream.hpp"  // detail::bit_writer, peek_bits
#include "ncclz/host/detail/subblocks.hpp"   // detail::kSubblockElements, subblock_count
#include "ncclz/codec.hpp"
#include "ncclz/host/detail/tile_bytes.hpp"   // detail::put, get, corrupt_tile
#include "ncclz/tuning/adaptive.hpp"

namespace ncclz::host::detail::zero_run {


using detail::kSubblockElements;
using detail::subblock_count;
using format::zero_run::choice;
using format::zero_run::kCountBits;
using format::zero_run::kDense;
using format::zero_run::kFormBits;
using format::zero_run::kGroupElements;
using format::zero_run::kMagnitudeFormBits;
using format::zero_run::kMagnitudeGroups;
using format::zero_run::kMaxRice;
using format::zero_run::kMaxStoredMagnitude;
using format::zero_run::kMaxSubblockBits;
using format::zero_run::kSignModeBits;
using format::zero_run::kTileMode;
using format::zero_run::kTileSubblocks;
using format::zero_run::kWidthBits;
using format::zero_run::max_tile_bytes;
using format::zero_run::predictor;
using format::zero_run::sign_mode;
using format::zero_run::tile_layout;
using format::zero_run::tile_layout_of;
using format::zero_run::zero_run_header;

/// A tile's quantization codes (0 for an outlier) and its outliers.
struct tile_codes {
  std::vector<std::int32_t> codes;
  std::vector<std::uint16_t> outlier_index;
};

/// `block_p`, when not null, holds the parameters of each scale block of the tile (blockwise
/// quantizers: FixedRate), used instead of `p`.
template <class Codec, class T>
tile_codes codes_of(std::span<const T> values, const quant_params<T>& p, const quant_params<T>* block_p = nullptr) {
  using Q = typename Codec::quantizer;
  tile_codes c;
  c.codes.assign(values.size(), 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!Q::template quantize<T>(values[i], block_p ? block_p[i / format::kScaleBlockElements] : p, c.codes[i])) {
      c.codes[i] = 0;  // an outlier's code counts as 0, as in fixed_length tiles
      c.outlier_index.push_back(static_cast<std::uint16_t>(i));
    }
  }
  return c;
}

/// The zig-zagged values a predictor codes.
inline std::vector<std::uint32_t> predicted(std::span<const std::int32_t> codes, predictor pred) {
  std::vector<std::uint32_t> z(codes.size());
  std::int32_t prev = codes.empty() ? 0 : codes[0];
  for (std::size_t i = 0; i < codes.size(); ++i) {
    z[i] = format::zero_run::predict(codes[i], prev, pred);
    prev = codes[i];
  }
  return z;
}

/// `values(i)` over a span, for the shared sub-block functions.
struct span_values {
  std::span<const std::uint32_t> values;
  std::uint32_t operator()(std::uint32_t i) const { return values[i]; }
};

/// Bits of `values` stored as groups of 32, each a 6-bit width and the values in that width.
inline std::uint64_t grouped_bits(std::span<const std::uint32_t> values) {
  format::zero_run::grouped_counter g;
  for (const std::uint32_t v : values) g.add(v);
  return g.bits();
}

/// The least magnitude of the nonzero values, 1 if there is none: what sparse sub-blocks subtract.
inline std::uint32_t min_magnitude(std::span<const std::uint32_t> values) {
  std::uint32_t least = 0;
  for (const std::uint32_t z : values) {
    if (z != 0 && (least == 0 || format::zero_run::magnitude(z) < least)) least = format::zero_run::magnitude(z);
  }
  return least == 0 ? 1 : least;
}

inline std::uint64_t rice_bits(std::span<const std::uint32_t> values, std::uint32_t k) {
  std::uint64_t bits = 0;
  for (const std::uint32_t v : values) bits += format::zero_run::rice_code_bits(v, k);
  return bits;
}

/// How a sparse sub-block's magnitudes are stored: Rice(k) for k of 0..14, or groups of 32; the
/// fewest bits (the form field included), the smaller form on a tie.
inline choice choose_magnitude_form(std::span<const std::uint32_t> magnitudes) {
  format::zero_run::magnitude_stats m;
  for (const std::uint32_t v : magnitudes) m.add(v);
  return format::zero_run::choose_magnitude_form(m.sums());
}

inline format::zero_run::subblock_sums sums_of(std::span<const std::uint32_t> values, std::uint32_t min_mag) {
  format::zero_run::subblock_stats s(min_mag);
  for (const std::uint32_t z : values) s.add(z);
  return s.sums();
}

/// The smallest form for one sub-block's values: exact bit counts, the smaller form on a tie;
/// 0 bits (no form) when every value is 0.
inline choice choose_form(std::span<const std::uint32_t> values, std::uint32_t min_mag) {
  return format::zero_run::choose_form(sums_of(values, min_mag));
}

/// Writes one sub-block in `form` (nothing for an all-zero one).
inline void put_subblock(bit_writer& w, std::span<const std::uint32_t> values, std::uint32_t form, std::uint32_t min_mag) {
  format::zero_run::put_subblock(w, span_values{values}, static_cast<std::uint32_t>(values.size()), format::zero_run::plan_of(sums_of(values, min_mag), form),
                       min_mag);
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
    const format::zero_run::subblock_sums sums = sums_of(part, min_mag);
    format::zero_run::put_subblock(stream, span_values{part}, static_cast<std::uint32_t>(part.size()),
                         format::zero_run::plan_of(sums, format::zero_run::choose_form(sums).form), min_mag);
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

/// Codes equal to 0, and elements whose code equals the one before (element 0 counts: its delta
/// from the tile's base is 0): what the predictor rule and the Adaptive selector's zero_run rule
/// look at (tuning::zero_run_worth_trying).
inline std::uint32_t zero_codes(std::span<const std::int32_t> codes) {
  return static_cast<std::uint32_t>(std::count(codes.begin(), codes.end(), 0));
}
inline std::uint32_t zero_deltas(std::span<const std::int32_t> codes) {
  std::uint32_t n = codes.empty() ? 0 : 1;
  for (std::size_t i = 1; i < codes.size(); ++i) n += codes[i] == codes[i - 1];
  return n;
}

/// Runs of zero deltas (element 0's is zero), counted within each block of 32 elements as the
/// device's lanes count them (tuning::zero_run_worth_trying).
inline std::uint32_t zero_delta_runs(std::span<const std::int32_t> codes) {
  const auto zero_delta = [&](std::size_t i) { return i == 0 || codes[i] == codes[i - 1]; };
  std::uint32_t n = 0;
  for (std::size_t i = 0; i < codes.size(); ++i) n += zero_delta(i) && (i % format::kBlockElements == 0 || !zero_delta(i - 1));
  return n;
}

/// zero_codes and zero_deltas over the selector's sample (elements 1, 9, 17, ...:
/// tuning::in_selector_sample), what the Adaptive selector looks at first (tuning::zero_run_verdict).
inline std::uint32_t sampled_zero_codes(std::span<const std::int32_t> codes) {
  std::uint32_t n = 0;
  for (std::size_t i = 0; i < codes.size(); ++i) n += tuning::in_selector_sample(static_cast<std::uint32_t>(i)) && codes[i] == 0;
  return n;
}
inline std::uint32_t sampled_zero_deltas(std::span<const std::int32_t> codes) {
  std::uint32_t n = 0;  // element 0 is never in the sample: every sampled element has one before it
  for (std::size_t i = 1; i < codes.size(); ++i) n += tuning::in_selector_sample(static_cast<std::uint32_t>(i)) && codes[i] == codes[i - 1];
  return n;
}

/// The predictor (format::zero_run::measured_predictors): the one measured, or of both the one whose stream
/// is shorter, codes on a tie.
inline predictor choose_predictor(std::span<const std::int32_t> codes) {
  const auto elements = static_cast<std::uint32_t>(codes.size());
  switch (format::zero_run::measured_predictors(zero_codes(codes), zero_deltas(codes), elements)) {
    case 1u: return predictor::codes;
    case 2u: return predictor::deltas;
    default:
      return stream_bits(predicted(codes, predictor::deltas)) < stream_bits(predicted(codes, predictor::codes))
                 ? predictor::deltas
                 : predictor::codes;
  }
}

/// One zero_run tile of `values`; always this mode (choosing between modes is the selector's job).
template <class Codec, class T>
std::vector<std::byte> encode_tile(std::span<const T> values, const quant_params<T>& p, const quant_params<T>* block_p = nullptr) {
  const tile_codes c = codes_of<Codec>(values, p, block_p);
  return encode_tile_with<T>(values, c, choose_predictor(c.codes));
}

/// Word i of a stream (4-byte aligned, a multiple of 4 bytes long), for format::zero_run::bit_reader.
struct span_words {
  std::span<const std::byte> stream;
  std::uint32_t operator()(std::uint32_t i) const {
    std::uint32_t w = 0;
    std::memcpy(&w, stream.data() + 4ull * i, sizeof w);  // the reader loads no word past its end
    return w;
  }
};

/// What a decoder says of a sub-block that fails a check (docs/format.md).
inline std::string subblock_problem(format::zero_run::subblock_error e, std::span<const std::byte> stream, std::uint64_t begin,
                                    std::uint64_t end) {
  using format::zero_run::subblock_error;
  const std::string bits = std::to_string(end - begin);
  switch (e) {
    case subblock_error::none: break;
    case subblock_error::past_end: return "runs past its " + bits + " bits";
    case subblock_error::unknown_form: return "has an unknown form " + std::to_string(peek_bits(stream, begin, kFormBits));
    case subblock_error::wide_group: return "has a group width over 32 bits";
    case subblock_error::too_many_nonzeros: return "has more nonzeros than values";
    case subblock_error::run_past_end: return "has a run of zeros past its end";
    case subblock_error::unknown_sign_mode: return "has an unknown sign mode 3";
    case subblock_error::magnitude_over_31_bits: return "has a magnitude over 31 bits";
    case subblock_error::magnitude_past_32_bits: return "has a magnitude past the 32-bit values";
    case subblock_error::ends_early: return "ends before its " + bits + " bits";
  }
  return "has an unknown problem";
}

/// Decodes one zero_run tile into `out` (its element count). Checks everything before it reads it:
/// a corrupt tile throws format_error naming `tile`, and no read goes past `tile_bytes`.
template <class Codec, class T>
void decode_tile(std::span<const std::byte> tile_bytes, std::uint64_t tile, const quant_params<T>& p, std::span<T> out,
                 const quant_params<T>* block_p = nullptr) {
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
  if (zh.min_magnitude < 1 || zh.min_magnitude > format::zero_run::kMaxMinMagnitude) corrupt_tile(tile, "has a zero_run min magnitude outside 1..2^31");
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
    const std::uint32_t first = b * kSubblockElements;
    format::zero_run::bit_reader<span_words> r(span_words{stream}, static_cast<std::uint32_t>(subblock_start[b]),
                                     static_cast<std::uint32_t>(subblock_start[b + 1]));
    auto sink = [&](std::uint32_t i, std::uint32_t z) { values[first + i] = z; };
    const format::zero_run::subblock_error e = format::zero_run::get_subblock(r, std::min(kSubblockElements, elements - first), zh.min_magnitude, sink);
    if (e != format::zero_run::subblock_error::none) {
      corrupt_tile(tile, "has a zero_run sub-block " + std::to_string(b) + " that " +
                             subblock_problem(e, stream, subblock_start[b], subblock_start[b + 1]));
    }
  }
  auto code = static_cast<std::uint32_t>(th.base);
  for (std::uint32_t i = 0; i < elements; ++i) {
    const auto v = static_cast<std::uint32_t>(format::unzigzag(values[i]));
    code = pred == predictor::deltas ? code + v : v;
    out[i] = Q::template dequantize<T>(static_cast<std::int32_t>(code), block_p ? block_p[i / format::kScaleBlockElements] : p);
  }
  for (std::uint32_t o = 0; o < th.outlier_count; ++o) {
    const auto i = get<std::uint16_t>(tile_bytes, l.outlier_index + 2ull * o);
    if (i >= elements) corrupt_tile(tile, "has an outlier index outside the tile");
    out[i] = get<T>(tile_bytes, l.outlier_values + std::uint64_t{o} * sizeof(T));
  }
}

}  // namespace ncclz::host::detail::zero_run
