// The host reference codec: the chunk format written and read by plain sequential C++.
//
// It is the oracle for the device codec: a stream either side writes decodes bit-exactly on the
// other. It shares the quantizer (ncclz/quantizer.hpp) and the format constants with the device
// code and nothing else, so a packing bug on one side shows up as a mismatch. A blockwise quantizer
// (FixedRate) gets a step per scale block from block_maxima, written to the step table after the
// tile table (docs/format.md, "Step table").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/detail/validate.hpp"
#include "ncclz/format.hpp"
#include "ncclz/host/detail/tile_bytes.hpp"
#include "ncclz/host/huffman_reference.hpp"
#include "ncclz/host/zero_run_reference.hpp"
#include "ncclz/tuning/adaptive.hpp"

namespace ncclz::host {

/// Smallest and largest finite values (what RelBound is relative to).
template <class T>
value_range<T> find_range(std::span<const T> in) {
  value_range<T> r = value_range<T>::empty();
  for (const T x : in) {
    const compute_t<T> v = to_compute(x);
    if (std::isfinite(v)) r = r.merge({v, v});
  }
  return r;
}

/// The largest finite |x| of each scale block (format::kScaleBlockElements values) of `in`, 0
/// for a block without one: what a blockwise quantizer (FixedRate) takes its steps from.
template <class T>
std::vector<double> block_maxima(std::span<const T> in) {
  std::vector<double> m(format::scale_count(in.size()), 0.0);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const double a = std::fabs(static_cast<double>(to_compute(in[i])));
    double& b = m[i / format::kScaleBlockElements];
    if (std::isfinite(a) && a > b) b = a;
  }
  return m;
}

namespace detail {

/// A fixed_length tile of `values`. `block_p`, when not null, holds the parameters of each of the
/// tile's scale blocks (blockwise quantizers), used instead of `p`.
template <class Codec, class T>
std::vector<std::byte> fixed_length_tile(std::span<const T> values, const quant_params<T>& p,
                                         const quant_params<T>* block_p = nullptr) {
  using Q = typename Codec::quantizer;
  const auto elements = static_cast<std::uint32_t>(values.size());
  const std::uint32_t blocks = format::tile_blocks(elements);
  std::vector<std::int32_t> codes(elements, 0);
  std::vector<std::uint16_t> outlier_index;
  for (std::uint32_t i = 0; i < elements; ++i) {
    const quant_params<T>& pi = block_p ? block_p[i / format::kScaleBlockElements] : p;
    if (!Q::template quantize<T>(values[i], pi, codes[i])) {
      codes[i] = 0;
      outlier_index.push_back(static_cast<std::uint16_t>(i));
    }
  }
  std::vector<std::uint8_t> widths(blocks, 0);
  std::vector<std::uint32_t> planes;
  const std::int32_t base = elements > 0 ? codes[0] : 0;
  std::int32_t prev = base;
  for (std::uint32_t b = 0; b < blocks; ++b) {
    std::uint32_t zz[format::kBlockElements] = {};
    std::uint32_t any = 0;
    for (std::uint32_t lane = 0; lane < format::kBlockElements; ++lane) {
      const std::uint32_t i = b * format::kBlockElements + lane;
      if (i >= elements) break;
      const auto delta = static_cast<std::int32_t>(static_cast<std::uint32_t>(codes[i]) - static_cast<std::uint32_t>(prev));
      prev = codes[i];
      zz[lane] = format::zigzag(delta);
      any |= zz[lane];
    }
    widths[b] = static_cast<std::uint8_t>(bit_width(any));
    for (std::uint32_t k = 0; k < widths[b]; ++k) {
      std::uint32_t word = 0;
      for (std::uint32_t lane = 0; lane < format::kBlockElements; ++lane) word |= ((zz[lane] >> k) & 1u) << lane;
      planes.push_back(word);
    }
  }
  const auto outliers = static_cast<std::uint32_t>(outlier_index.size());
  const format::fixed_tile_layout l = format::fixed_tile_layout_of(blocks, planes.size(), outliers, sizeof(T));
  std::vector<std::byte> out(l.total);
  put(out, 0, format::tile_header{static_cast<std::uint8_t>(tile_mode::fixed_length), 0, static_cast<std::uint16_t>(outliers), base});
  // An empty vector's data() may be null, and memcpy from null is undefined even for 0 bytes.
  if (!widths.empty()) std::memcpy(out.data() + l.widths, widths.data(), widths.size());
  if (!planes.empty()) std::memcpy(out.data() + l.planes, planes.data(), planes.size() * 4);
  if (outliers > 0) std::memcpy(out.data() + l.outlier_index, outlier_index.data(), outliers * 2u);
  for (std::uint32_t o = 0; o < outliers; ++o) put(out, l.outlier_values + o * sizeof(T), values[outlier_index[o]]);
  return out;
}

/// Appends one tile at `at`; returns its size in bytes. The tile is the smallest of the modes the
/// coder tries, where a huffman or zero_run tile must come under tuning::entropy_bar of the
/// fixed_length one to replace it, or raw when that is no larger; ties go to the earlier mode
/// (fixed_length, huffman, zero_run). As on the device, zero_run is measured before huffman's
/// codebook is built, and that is built only when its estimate (and, for Adaptive, its gate's
/// before it) beats both fixed_length's bar and zero_run. `block_p`: as in fixed_length_tile.
template <class Codec, class T>
std::uint64_t encode_tile(std::span<const T> values, const quant_params<T>& p, std::vector<std::byte>& out,
                          std::uint64_t at, const quant_params<T>* block_p = nullptr) {
  using Coder = typename Codec::coder;
  const auto elements = static_cast<std::uint32_t>(values.size());
  std::vector<std::byte> best;
  bool have = false;
  // What an entropy mode's tile must come under: the tile held, less 1/32 of a fixed_length one.
  std::uint64_t bar = 0;
  const auto consider = [&](std::vector<std::byte>&& tile) {
    if (!have || tile.size() < bar) {
      bar = tile.size();
      best = std::move(tile);
      have = true;
    }
  };
  if constexpr (Coder::tries_fixed_length) {
    consider(fixed_length_tile<Codec>(values, p, block_p));
    bar = tuning::entropy_bar(best.size());
  }
  std::vector<std::byte> zero_run_tile;  // empty: not measured
  if constexpr (Coder::tries_zero_run) {
    const zero_run::tile_codes c = zero_run::codes_of<Codec>(values, p, block_p);
    const tuning::zero_run_sample verdict =
        tuning::zero_run_verdict(zero_run::sampled_zero_codes(c.codes), zero_run::sampled_zero_deltas(c.codes), elements);
    if (std::is_same_v<typename Coder::strategy, ZeroRun> || verdict == tuning::zero_run_sample::measure ||
        (verdict == tuning::zero_run_sample::count_all &&
         tuning::zero_run_worth_trying(zero_run::zero_codes(c.codes), zero_run::zero_deltas(c.codes),
                                       zero_run::zero_delta_runs(c.codes), elements))) {
      zero_run_tile = zero_run::encode_tile_with<T>(values, c, zero_run::choose_predictor(c.codes));
    }
  }
  if constexpr (Coder::tries_huffman) {
    huffman::tile_deltas d = huffman::deltas_of<Codec>(values, p, block_p);
    std::uint64_t gate = huffman::gate_tile_bytes(d, elements, sizeof(T));
    if constexpr (is_blockwise_v<typename Codec::quantizer>) {
      // Blockwise codes (FixedRate): the codes predictor where the gate's sample puts it strictly
      // smaller (format::huffman::kCodesPredictor).
      huffman::tile_deltas c = huffman::deltas_of<Codec>(values, p, block_p, true);
      const std::uint64_t codes_gate = huffman::gate_tile_bytes(c, elements, sizeof(T));
      if (codes_gate < gate) {
        d = std::move(c);
        gate = codes_gate;
      }
    }
    const auto beats_the_others = [&](std::uint64_t bytes) {
      return (!have || bytes < bar) && (zero_run_tile.empty() || bytes < zero_run_tile.size());
    };
    // Adaptive estimates only where its gate's sample does not already put huffman over what it
    // must beat (tuning::huffman_gate_tile_bytes).
    if (!Coder::tries_fixed_length || beats_the_others(gate)) {
      const huffman::tile_estimate e = huffman::estimate_tile(d, elements, sizeof(T));
      if (beats_the_others(e.bytes)) consider(huffman::encode_tile_with<T>(values, d, e.literals));
    }
  }
  if (!zero_run_tile.empty()) consider(std::move(zero_run_tile));
  const std::uint64_t raw_bytes = format::raw_tile_bytes(elements, sizeof(T));
  if (!have || raw_bytes <= best.size()) {
    put(out, at, format::tile_header{static_cast<std::uint8_t>(tile_mode::raw), 0, 0, 0});
    std::memcpy(out.data() + at + sizeof(format::tile_header), values.data(), values.size_bytes());
    return raw_bytes;
  }
  std::memcpy(out.data() + at, best.data(), best.size());
  return best.size();
}

/// The sum of the check terms (format::check_term) of `bytes`, read as little-endian u32 words,
/// the first one at `position`.
inline std::uint32_t check_sum(std::span<const std::byte> bytes, std::uint32_t position) {
  std::uint32_t sum = 0;
  for (std::uint64_t i = 0; i + 4 <= bytes.size(); i += 4) {
    sum += format::check_term(get<std::uint32_t>(bytes, i), position + static_cast<std::uint32_t>(i / 4));
  }
  return sum;
}

/// Tile `tile`'s checksum (docs/format.md, "Checksums"): its bytes (a multiple of 8), its steps'
/// bytes in the step table (fixed_rate; empty otherwise), and the chunk's header check.
inline std::uint32_t tile_check_of(std::span<const std::byte> tile_bytes, std::span<const std::byte> steps, std::uint64_t tile,
                                   std::uint32_t header_check) {
  return format::tile_check(check_sum(tile_bytes, 0) + check_sum(steps, format::kStepCheckPosition), tile_bytes.size(), tile,
                            header_check);
}

/// The bytes of tile `tile`'s steps in a step table of `elements` values' steps (fixed_rate).
template <class T>
std::span<const std::byte> tile_steps(std::span<const std::byte> step_table, std::uint64_t elements, std::uint64_t tile) {
  constexpr std::uint64_t kBlocksPerTile = format::kTileElements / format::kScaleBlockElements;
  const std::uint64_t step = format::scale_bytes(sizeof(T));
  const std::uint64_t first = tile * kBlocksPerTile;
  const std::uint64_t end = std::min(first + kBlocksPerTile, format::scale_count(elements));
  return step_table.subspan(first * step, (end - first) * step);
}

template <class Codec, class T>
void decode_tile(std::span<const std::byte> tile_bytes, std::uint64_t tile, const quant_params<T>& p, std::span<T> out,
                 const quant_params<T>* block_p = nullptr) {
  using Q = typename Codec::quantizer;
  const auto elements = static_cast<std::uint32_t>(out.size());
  if (tile_bytes.size() < sizeof(format::tile_header)) corrupt_tile(tile, "is shorter than its header");
  const auto th = get<format::tile_header>(tile_bytes, 0);
  if (th.mode == static_cast<std::uint8_t>(tile_mode::raw)) {
    if (format::raw_tile_bytes(elements, sizeof(T)) > tile_bytes.size()) corrupt_tile(tile, "is truncated (raw)");
    std::memcpy(out.data(), tile_bytes.data() + sizeof th, out.size_bytes());
    return;
  }
  if constexpr (Codec::coder::tries_huffman) {
    if (th.mode == static_cast<std::uint8_t>(tile_mode::huffman)) return huffman::decode_tile<Codec, T>(tile_bytes, tile, p, out, block_p);
  }
  if constexpr (Codec::coder::tries_zero_run) {
    if (th.mode == static_cast<std::uint8_t>(tile_mode::zero_run)) return zero_run::decode_tile<Codec, T>(tile_bytes, tile, p, out, block_p);
  }
  if (th.mode != static_cast<std::uint8_t>(tile_mode::fixed_length)) {
    corrupt_tile(tile, "has an unknown mode, or one this codec's coder does not write");
  }
  const std::uint32_t blocks = format::tile_blocks(elements);
  if (sizeof th + blocks > tile_bytes.size()) corrupt_tile(tile, "is truncated (widths)");
  std::uint64_t plane_words = 0;
  for (std::uint32_t b = 0; b < blocks; ++b) {
    const auto w = static_cast<std::uint8_t>(tile_bytes[sizeof th + b]);
    if (w > format::kMaxWidth) corrupt_tile(tile, "has a block width over 32 bits");
    plane_words += w;
  }
  const format::fixed_tile_layout l = format::fixed_tile_layout_of(blocks, plane_words, th.outlier_count, sizeof(T));
  if (l.total > tile_bytes.size() || th.outlier_count > elements) corrupt_tile(tile, "is truncated (planes or outliers)");

  std::uint64_t plane = l.planes;
  auto prev = static_cast<std::uint32_t>(th.base);
  for (std::uint32_t b = 0; b < blocks; ++b) {
    const auto w = static_cast<std::uint32_t>(tile_bytes[sizeof th + b]);
    std::uint32_t zz[format::kBlockElements] = {};
    for (std::uint32_t k = 0; k < w; ++k) {
      const auto word = get<std::uint32_t>(tile_bytes, plane + 4u * k);
      for (std::uint32_t lane = 0; lane < format::kBlockElements; ++lane) zz[lane] |= ((word >> lane) & 1u) << k;
    }
    plane += 4u * w;
    for (std::uint32_t lane = 0; lane < format::kBlockElements; ++lane) {
      const std::uint32_t i = b * format::kBlockElements + lane;
      if (i >= elements) break;
      prev += static_cast<std::uint32_t>(format::unzigzag(zz[lane]));
      out[i] = Q::template dequantize<T>(static_cast<std::int32_t>(prev), block_p ? block_p[i / format::kScaleBlockElements] : p);
    }
  }
  for (std::uint32_t o = 0; o < th.outlier_count; ++o) {
    const auto i = get<std::uint16_t>(tile_bytes, l.outlier_index + 2u * o);
    if (i >= elements) corrupt_tile(tile, "has an outlier index outside the tile");
    out[i] = get<T>(tile_bytes, l.outlier_values + o * sizeof(T));
  }
}

}  // namespace detail

/// Compresses `in` into a new chunk. `bound` is absolute or relative as the Codec's quantizer says.
template <class Codec, class T>
std::vector<std::byte> compress(std::span<const T> in, double bound) {
  using Q = typename Codec::quantizer;
  ncclz::detail::validate_bound<Q>("host::compress", bound);
  ncclz::detail::validate_count<T>("host::compress", in.size());
  quant_params<T> p = Q::template make_params<T>(bound, Q::needs_range ? find_range(in) : value_range<T>::empty());

  const std::uint64_t tiles = format::tile_count(in.size());
  std::vector<std::byte> out(format::max_chunk_bytes(in.size(), sizeof(T)) + format::scale_table_bytes(in.size(), sizeof(T)));
  const std::uint64_t payload = sizeof(format::chunk_header);
  constexpr std::uint32_t flags = Codec::chunk_flags;
  const std::uint64_t checks = payload + format::table_bytes(tiles);  // the check table, where flags say so
  std::uint64_t at = payload + format::step_table_offset(tiles, flags);
  const std::uint64_t steps = at;
  // Blockwise (FixedRate): a step per scale block, stored after the tile table; the header takes
  // the largest block's parameters (step 1 if no block has a nonzero step).
  std::vector<quant_params<T>> block_p;
  if constexpr (is_blockwise_v<Q>) {
    const std::vector<double> m = block_maxima(in);
    double largest = 0;
    for (std::size_t b = 0; b < m.size(); ++b) {
      block_p.push_back(Q::template block_params<T>(m[b]));
      detail::put(out, at + b * format::scale_bytes(sizeof(T)), block_p[b].step);
      largest = std::max(largest, m[b]);
    }
    p = Q::template block_params<T>(largest);
    if (!(p.step > 0)) p.step = 1;
    at += format::scale_table_bytes(in.size(), sizeof(T));  // the buffer is zeroed: so is the padding
  }
  // The header but payload_bytes (which its check leaves out) first: tile checksums include the check.
  format::chunk_header h = chunk_header_of<Codec>(in.size(), p);
  constexpr std::uint64_t kBlocksPerTile = format::kTileElements / format::kScaleBlockElements;
  for (std::uint64_t t = 0; t < tiles; ++t) {
    detail::put(out, payload + 4 * t, static_cast<std::uint32_t>((at - payload) / 8));
    const std::span<const T> values = in.subspan(t * format::kTileElements, format::tile_elements(in.size(), t));
    const std::uint64_t bytes =
        detail::encode_tile<Codec>(values, p, out, at, block_p.empty() ? nullptr : block_p.data() + t * kBlocksPerTile);
    if constexpr ((flags & format::kTileChecks) != 0) {
      const std::span<const std::byte> chunk(out);
      const std::span<const std::byte> tile_steps =
          is_blockwise_v<Q> ? detail::tile_steps<T>(chunk.subspan(steps), in.size(), t) : std::span<const std::byte>();
      detail::put(out, checks + 4 * t, detail::tile_check_of(chunk.subspan(at, bytes), tile_steps, t, h.header_check));
    }
    at += bytes;
  }
  h.payload_bytes = at - payload;
  detail::put(out, 0, h);
  out.resize(at);
  return out;
}

/// Decompresses a chunk into `out`, whose size must be the chunk's element count. Throws
/// format_error for a bad, truncated or mismatched stream; writes `out` only once it is valid
/// up to each tile it decodes.
template <class Codec, class T>
void decompress(std::span<const std::byte> stream, std::span<T> out) {
  const format::chunk_header h = ncclz::detail::parse_header(stream.data(), stream.size());
  ncclz::detail::check_header_matches<Codec, T>(h, out.size());
  quant_params<T> p{};
  p.step = static_cast<compute_t<T>>(h.step);
  p.error_bound = h.error_bound;
  p.bound = h.bound;
  const std::span<const std::byte> payload = stream.subspan(sizeof(format::chunk_header), h.payload_bytes);
  const bool checked = (h.flags & format::kTileChecks) != 0;
  const std::uint64_t checks = format::table_bytes(h.tile_count);  // the check table, where flags say so
  std::uint64_t table = format::step_table_offset(h.tile_count, h.flags);
  const std::uint64_t step_table = table;
  std::vector<quant_params<T>> block_p;
  if constexpr (is_blockwise_v<typename Codec::quantizer>) {
    using C = compute_t<T>;
    const std::uint64_t steps = format::scale_table_bytes(h.element_count, sizeof(T));
    if (payload.size() < table + steps) {
      throw format_error("ncclz: stream payload of " + std::to_string(payload.size()) + " B cannot hold its step table");
    }
    for (std::uint64_t b = 0; b < format::scale_count(h.element_count); ++b) {
      const C s = detail::get<C>(payload, table + b * sizeof(C));
      if (!(s >= C(0) && s <= std::numeric_limits<C>::max())) {
        throw format_error("ncclz: corrupted stream: step " + std::to_string(b) + " of the step table is negative or not finite");
      }
      block_p.push_back(Codec::quantizer::template params_of_step<T>(s));
    }
    table += steps;
  }
  constexpr std::uint64_t kBlocksPerTile = format::kTileElements / format::kScaleBlockElements;
  for (std::uint64_t t = 0; t < h.tile_count; ++t) {
    const std::uint64_t begin = std::uint64_t{detail::get<std::uint32_t>(payload, 4 * t)} * 8;
    const std::uint64_t end =
        t + 1 < h.tile_count ? std::uint64_t{detail::get<std::uint32_t>(payload, 4 * (t + 1))} * 8 : payload.size();
    if (begin < table || begin > end || end > payload.size()) detail::corrupt_tile(t, "has an offset outside the stream");
    if (checked) {  // before any of the tile's values is used
      const std::span<const std::byte> tile_steps = is_blockwise_v<typename Codec::quantizer>
                                                        ? detail::tile_steps<T>(payload.subspan(step_table), h.element_count, t)
                                                        : std::span<const std::byte>();
      if (detail::tile_check_of(payload.subspan(begin, end - begin), tile_steps, t, h.header_check) !=
          detail::get<std::uint32_t>(payload, checks + 4 * t)) {
        detail::corrupt_tile(t, "fails its checksum");
      }
    }
    detail::decode_tile<Codec, T>(payload.subspan(begin, end - begin), t, p,
                                  out.subspan(t * format::kTileElements, format::tile_elements(out.size(), t)),
                                  block_p.empty() ? nullptr : block_p.data() + t * kBlocksPerTile);
  }
}

}  // namespace ncclz::host
