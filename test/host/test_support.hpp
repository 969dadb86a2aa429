// Helpers the host tests share.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/error.hpp"
#include "ncclz/format.hpp"  // the element types and their conversions
#include "ncclz/host/reference_codec.hpp"  // find_range
#include "ncclz/tuning/adaptive.hpp"

namespace ncclz_test {

/// A fresh seed per run, or NCCLZ_TEST_SEED's to reproduce a failure (the tests print the seed).
inline std::uint64_t fresh_seed() {
  if (const char* s = std::getenv("NCCLZ_TEST_SEED")) return std::strtoull(s, nullptr, 0);
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

template <class T>
using bits_t = std::conditional_t<sizeof(T) == 2, std::uint16_t, std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;

/// The bits of an element, for bit-exact comparisons (NaN payloads included).
template <class T>
bits_t<T> bits_of(T x) {
  bits_t<T> b;
  std::memcpy(&b, &x, sizeof x);
  return b;
}

template <class T>
T from_bits(bits_t<T> b) {
  T x;
  std::memcpy(static_cast<void*>(&x), &b, sizeof x);  // void*: __half has no public members to copy
  return x;
}

/// An element widened to double (exact for every element type), and a double rounded to T
/// (through the compute type for the 16-bit types: any nearby value of T is what tests need).
template <class T>
double to_double(T x) {
  return static_cast<double>(ncclz::to_compute(x));
}
template <class T>
T from_double(double v) {
  return ncclz::from_compute<T>(static_cast<ncclz::compute_t<T>>(v));
}

/// std::numeric_limits for every element type: the standard one for float and double, the IEEE
/// binary16 and bfloat16 values (from their bits) for __half and __nv_bfloat16, which the
/// standard library does not know.
template <class T>
struct limits : std::numeric_limits<T> {};

template <class T, int Digits, std::uint16_t Inf, std::uint16_t Max, std::uint16_t MinNormal>
struct limits16 {
  static constexpr int digits = Digits;
  static T infinity() { return from_bits<T>(Inf); }
  static T quiet_NaN() { return from_bits<T>(Inf | (1u << (Digits - 2))); }
  static T signaling_NaN() { return from_bits<T>(Inf | (1u << (Digits - 3))); }
  static T max() { return from_bits<T>(Max); }
  static T lowest() { return from_bits<T>(Max | 0x8000u); }
  static T min() { return from_bits<T>(MinNormal); }
  static T denorm_min() { return from_bits<T>(1); }
};
template <>
struct limits<__half> : limits16<__half, 11, 0x7C00, 0x7BFF, 0x0400> {};
template <>
struct limits<__nv_bfloat16> : limits16<__nv_bfloat16, 8, 0x7F80, 0x7F7F, 0x0080> {};

/// A value of type V at byte `at` of `bytes`, and the same written back (for patching streams).
template <class V>
V load(const std::vector<std::byte>& bytes, std::uint64_t at) {
  V v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}
template <class V>
void store(std::vector<std::byte>& bytes, std::uint64_t at, V v) {
  std::memcpy(bytes.data() + at, &v, sizeof v);
}

/// Runs `decode` on a heap copy of exactly `bytes`'s size (so an over-read is reported under
/// -fsanitize=address). Returns "" on success, the message of a format_error otherwise; any other
/// exception escapes and fails the test.
template <class Decode>
std::string format_error_of(const std::vector<std::byte>& bytes, Decode&& decode) {
  const std::vector<std::byte> exact(bytes.begin(), bytes.end());
  try {
    decode(std::span<const std::byte>(exact.data(), exact.size()));
  } catch (const ncclz::format_error& e) {
    const std::string what = e.what();
    return what.empty() ? std::string("<format_error with an empty message>") : what;
  }
  return "";
}

/// Parameters under which a double's integer value is its own code (AbsBound 0.5: step 1), so a
/// tile test can write the exact code sequence it wants.
inline ncclz::quant_params<double> exact_codes() {
  return ncclz::Quantizer<ncclz::AbsBound>::make_params<double>(0.5, ncclz::value_range<double>::empty());
}

/// The parameters the Codec's quantizer makes for `in` under `bound`.
template <class Codec, class T>
ncclz::quant_params<T> params_for(const std::vector<T>& in, double bound) {
  using Q = typename Codec::quantizer;
  return Q::template make_params<T>(bound, Q::needs_range ? ncclz::host::find_range<T>(in) : ncclz::value_range<T>::empty());
}

/// A smooth field: a few sine waves over a slow random walk, about `amplitude` wide.
template <class T>
std::vector<T> wavy_field(std::size_t n, double amplitude, std::mt19937_64& g) {
  std::normal_distribution<double> step(0.0, amplitude * 2e-4);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double f1 = 1.0 / (300.0 + 3000.0 * u(g)), f2 = 1.0 / (20.0 + 200.0 * u(g)), phase = 6.3 * u(g);
  std::vector<T> v(n);
  double walk = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    walk += step(g);
    const double t = static_cast<double>(i);
    v[i] = from_double<T>(amplitude * (0.4 * std::sin(f1 * t + phase) + 0.1 * std::cos(f2 * t)) + walk);
  }
  return v;
}

/// `tiles` tiles of values 55% zero at random (zero codes in runs of about 2), the others random
/// and never quantized to 0 (+-0.25..1); the selector's sample (elements 1, 9, 17, ... of a tile)
/// exactly half zero. Adaptive then counts every element, and zero_run wins on the zero codes.
inline std::vector<float> half_zero_codes(std::size_t tiles, std::mt19937_64& g) {
  std::bernoulli_distribution zero(0.55);
  std::uniform_real_distribution<float> u(0.25f, 1.0f);
  std::vector<float> v(tiles * ncclz::format::kTileElements);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const bool sampled = ncclz::tuning::in_selector_sample(static_cast<std::uint32_t>(i % ncclz::format::kTileElements));
    v[i] = (sampled ? (i / 8) % 2 == 0 : zero(g)) ? 0.0f : (g() % 2 ? 1.0f : -1.0f) * u(g);
  }
  return v;
}

/// Sprinkles NaN, Inf and values past 2^30 steps (outliers) over `v`.
template <class T>
void add_outliers(std::vector<T>& v, double share, std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& x : v) {
    const double r = u(g);
    if (r < share / 3) x = limits<T>::quiet_NaN();
    else if (r < 2 * share / 3) x = (g() & 1u) ? limits<T>::infinity() : -limits<T>::infinity();
    else if (r < share) x = limits<T>::max();
  }
}

/// Requires every element of `out` to be what a decoder promises for `in`: dequantize(quantize(x))
/// for a value Q codes, x bit for bit for an outlier.
template <class Q, class T>
void require_decoded_as_quantized(const std::vector<T>& in, const std::vector<T>& out, const ncclz::quant_params<T>& p) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::int32_t q = 0;
    const T expected = Q::template quantize<T>(in[i], p, q) ? Q::template dequantize<T>(q, p) : in[i];
    if (bits_of(out[i]) != bits_of(expected)) {
      INFO("element " << i << ": decoded bits " << bits_of(out[i]) << ", expected " << bits_of(expected));
      REQUIRE(bits_of(out[i]) == bits_of(expected));
    }
  }
}

/// Where tile `t` of a chunk starts, in bytes from the end of the chunk header (its table entry).
inline std::uint64_t tile_offset_of(const std::vector<std::byte>& chunk, std::uint64_t t) {
  std::uint32_t offset;
  std::memcpy(&offset, chunk.data() + sizeof(ncclz::format::chunk_header) + 4 * t, 4);
  return std::uint64_t{offset} * 8;
}

/// The mode byte of tile `t` of a chunk.
inline std::uint8_t tile_mode_of(const std::vector<std::byte>& chunk, std::uint64_t t) {
  return static_cast<std::uint8_t>(chunk[sizeof(ncclz::format::chunk_header) + tile_offset_of(chunk, t)]);
}

/// The bytes tile `t` of a chunk takes (to the next tile, or to the end of the payload).
inline std::uint64_t tile_bytes_of(const std::vector<std::byte>& chunk, std::uint64_t t) {
  const auto h = ncclz::detail::parse_header(chunk.data(), chunk.size());
  return (t + 1 < h.tile_count ? tile_offset_of(chunk, t + 1) : h.payload_bytes) - tile_offset_of(chunk, t);
}

/// How many tiles of a chunk are in each mode (index: the tile_mode byte).
inline std::vector<std::size_t> tile_modes(const std::vector<std::byte>& chunk) {
  const auto h = ncclz::detail::parse_header(chunk.data(), chunk.size());
  std::vector<std::size_t> modes(4, 0);
  for (std::uint32_t t = 0; t < h.tile_count; ++t) ++modes.at(tile_mode_of(chunk, t));
  return modes;
}

/// How many of a chunk's huffman tiles have a huffman header for which `holds` is true.
template <class Predicate>
std::size_t huffman_tiles_where(const std::vector<std::byte>& chunk, Predicate holds) {
  namespace hf = ncclz::format::huffman;
  const auto h = ncclz::detail::parse_header(chunk.data(), chunk.size());
  std::size_t n = 0;
  for (std::uint32_t t = 0; t < h.tile_count; ++t) {
    if (tile_mode_of(chunk, t) != static_cast<std::uint8_t>(ncclz::tile_mode::huffman)) continue;
    const std::uint64_t header_at = sizeof(ncclz::format::chunk_header) + tile_offset_of(chunk, t) + sizeof(ncclz::format::tile_header);
    n += holds(load<hf::huffman_header>(chunk, header_at)) ? 1 : 0;
  }
  return n;
}

/// How many of a chunk's huffman tiles code their stream in sub-blocks of 128
/// (format::huffman::is_halved).
inline std::size_t halved_huffman_tiles(const std::vector<std::byte>& chunk) {
  return huffman_tiles_where(chunk, ncclz::format::huffman::is_halved);
}

/// How many of a chunk's huffman tiles code the codes themselves, not their deltas
/// (format::huffman::kCodesPredictor).
inline std::size_t codes_predictor_huffman_tiles(const std::vector<std::byte>& chunk) {
  return huffman_tiles_where(chunk, ncclz::format::huffman::uses_codes_predictor);
}

/// How many of a chunk's huffman tiles hold a used escape class whose code and escape bits take
/// more than 32 bits together (the device's stream writer puts those in two steps).
inline std::size_t huffman_tiles_wider_than_word(const std::vector<std::byte>& chunk) {
  namespace hf = ncclz::format::huffman;
  const auto h = ncclz::detail::parse_header(chunk.data(), chunk.size());
  std::size_t wide = 0;
  for (std::uint32_t t = 0; t < h.tile_count; ++t) {
    if (tile_mode_of(chunk, t) != static_cast<std::uint8_t>(ncclz::tile_mode::huffman)) continue;
    const std::uint64_t tile_at = sizeof(ncclz::format::chunk_header) + tile_offset_of(chunk, t);
    const auto hh = load<hf::huffman_header>(chunk, tile_at + sizeof(ncclz::format::tile_header));
    const std::uint32_t literals = hh.last_literal + 1u;
    const std::uint64_t lengths_at = tile_at + hf::tile_layout_of(hh.symbols, 0, 0, 0, 1).code_lengths;
    bool any = false;
    for (std::uint32_t sym = literals; sym < hh.symbols && hh.symbols >= 2; ++sym) {
      const std::uint32_t length = hf::stored_code_length(chunk.at(lengths_at + sym / 2), sym);
      any |= length != 0 && length + hf::escape_bits(hf::class_width(sym, literals), literals) > 32;
    }
    wide += any;
  }
  return wide;
}

/// Makes a chunk's header check and tile checksums agree with its bytes again after a test changed
/// them on purpose, so that the structural checks behind the checksums are what the test reaches.
/// Tiles whose table entries point outside the payload keep theirs (no decoder gets that far).
inline void reseal(std::vector<std::byte>& chunk) {
  namespace fmt = ncclz::format;
  if (chunk.size() < sizeof(fmt::chunk_header)) return;
  auto h = load<fmt::chunk_header>(chunk, 0);
  if (h.version < 2) return;
  h.header_check = fmt::header_check_of(h);
  store(chunk, 0, h);
  const std::uint64_t payload = std::min<std::uint64_t>(h.payload_bytes, chunk.size() - sizeof h);
  const std::span<const std::byte> body = std::span<const std::byte>(chunk).subspan(sizeof h, payload);
  const std::uint64_t tiles = h.tile_count;
  const std::uint64_t step_table = fmt::step_table_offset(tiles, h.flags);
  const bool blockwise = h.quantizer == static_cast<std::uint8_t>(ncclz::quantizer_id::fixed_rate);
  const std::uint32_t value_bytes = h.value_type == static_cast<std::uint8_t>(ncclz::dtype::f64) ? 8u
                                    : h.value_type == static_cast<std::uint8_t>(ncclz::dtype::f32) ? 4u : 2u;
  const std::uint64_t step_bytes = blockwise ? fmt::scale_table_bytes(h.element_count, value_bytes) : 0;
  if ((h.flags & fmt::kTileChecks) != 0 && tiles == fmt::tile_count(h.element_count) && step_table + step_bytes <= payload) {
    const std::uint64_t first_tile = step_table + step_bytes;
    constexpr std::uint64_t kBlocksPerTile = fmt::kTileElements / fmt::kScaleBlockElements;
    for (std::uint64_t t = 0; t < tiles; ++t) {
      const std::uint64_t begin = std::uint64_t{load<std::uint32_t>(chunk, sizeof h + 4 * t)} * 8;
      const std::uint64_t end = t + 1 < tiles ? std::uint64_t{load<std::uint32_t>(chunk, sizeof h + 4 * (t + 1))} * 8 : payload;
      if (begin < first_tile || begin > end || end > payload) continue;
      std::span<const std::byte> steps;
      if (blockwise) {
        const std::uint64_t step = fmt::scale_bytes(value_bytes), b = t * kBlocksPerTile;
        const std::uint64_t e = std::min(b + kBlocksPerTile, fmt::scale_count(h.element_count));
        steps = body.subspan(step_table + b * step, (e - b) * step);
      }
      const std::uint32_t check = ncclz::host::detail::tile_check_of(body.subspan(begin, end - begin), steps, t, h.header_check);
      store(chunk, sizeof h + fmt::table_bytes(tiles) + 4 * t, check);
    }
  }
}

struct flip_outcomes {
  int decoded = 0, rejected = 0;
};

/// `trials` copies of `encoded`, each with 1 to 3 bits flipped (half of them within its first
/// `structure_bytes`, where headers and sizes are), run through `error_of` ("" when it decodes,
/// the format_error's message otherwise): how many decoded and how many were rejected.
template <class ErrorOf>
flip_outcomes flip_bits(const std::vector<std::byte>& encoded, std::uint64_t structure_bytes, int trials, std::mt19937_64& g,
                        ErrorOf&& error_of) {
  flip_outcomes o;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<std::byte> t = encoded;
    const int flips = 1 + static_cast<int>(g() % 3);
    for (int f = 0; f < flips; ++f) {
      const std::uint64_t at = (g() % 2) ? g() % std::min<std::uint64_t>(t.size(), structure_bytes) : g() % t.size();
      t[at] ^= static_cast<std::byte>(1u << (g() % 8));
    }
    if (error_of(t).empty()) ++o.decoded;
    else ++o.rejected;
  }
  return o;
}

}  // namespace ncclz_test
