// Host tests of the zero_run tile mode's reference (ncclz/host/zero_run_reference.hpp): the form
// and predictor choices, tile round trips over every element type and shape of data, the bound
// against fixed_length tiles, corrupt and truncated tiles, and the size against fixed_length and
// huffman tiles on sparse, ReLU-like and smooth data.
//
// Random inputs are fresh on every run; each test case prints its seed on failure. Rerun a
// failure with NCCLZ_TEST_SEED=<seed> to get the same inputs again.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/error.hpp"
#include "ncclz/format.hpp"
#include "ncclz/host/huffman_reference.hpp"
#include "ncclz/host/reference_codec.hpp"
#include "ncclz/host/zero_run_reference.hpp"

namespace {

namespace fmt = ncclz::format;
namespace zr = ncclz::host::detail::zero_run;
namespace hf = ncclz::host::detail::huffman;
using Catch::Matchers::Contains;
using AbsFixed = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using RelFixed = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using bytes = std::vector<std::byte>;
using ncclz_test::add_outliers;
using ncclz_test::bits_of;
using ncclz_test::exact_codes;
using ncclz_test::flip_bits;
using ncclz_test::flip_outcomes;
using ncclz_test::format_error_of;
using ncclz_test::fresh_seed;
using ncclz_test::from_double;
using ncclz_test::load;
using ncclz_test::params_for;
using ncclz_test::require_decoded_as_quantized;
using ncclz_test::store;
using ncclz_test::wavy_field;

/// The most a zero_run tile under the deltas predictor may exceed the fixed-length tile of the same
/// values (docs/format.md): its header and sub-block sizes less the 2 bits it saves per group width,
/// plus padding.
constexpr std::uint64_t kSlackOverFixed = 32;

/// The fixed-length tile's size for `values` (never raw: what the bound is against).
template <class Codec, class T>
std::uint64_t fixed_length_bytes(std::span<const T> values, const ncclz::quant_params<T>& p) {
  return ncclz::host::detail::fixed_length_tile<Codec>(values, p).size();
}

template <class Codec, class T>
std::string decode_error(const bytes& tile, std::size_t n, const ncclz::quant_params<T>& p) {
  std::vector<T> out(n);
  return format_error_of(tile, [&](std::span<const std::byte> s) { zr::decode_tile<Codec, T>(s, 7, p, std::span<T>(out)); });
}

template <class Codec, class T>
void check_decodes(const bytes& tile, const std::vector<T>& in, const ncclz::quant_params<T>& p) {
  CAPTURE(in.size(), tile.size());
  REQUIRE(tile.size() % 8 == 0);
  REQUIRE(tile.size() <= zr::max_tile_bytes(static_cast<std::uint32_t>(in.size()), sizeof(T)));
  std::vector<T> out(in.size(), from_double<T>(-12345.0));
  const std::string error = format_error_of(tile, [&](std::span<const std::byte> s) { zr::decode_tile<Codec, T>(s, 0, p, std::span<T>(out)); });
  REQUIRE(error.empty());
  require_decoded_as_quantized<typename Codec::quantizer>(in, out, p);
}

/// Encodes `in` as one zero_run tile (and under each predictor), decodes each and checks every
/// element: dequantize(quantize(x)) for a coded value, x bit for bit for an outlier; checks the
/// predictor rule (the smaller tile where both predictors are measured, else the one measured) and
/// the bound against the fixed-length tile. Returns the tile chosen.
template <class Codec, class T>
bytes check_round_trip(const std::vector<T>& in, const ncclz::quant_params<T>& p) {
  const std::span<const T> values(in);
  const bytes tile = zr::encode_tile<Codec, T>(values, p);
  REQUIRE(zr::encode_tile<Codec, T>(values, p) == tile);  // deterministic
  check_decodes<Codec>(tile, in, p);
  const zr::tile_codes c = zr::codes_of<Codec>(values, p);
  // Where one predictor leaves at least half the values zero and clearly more than the other,
  // the encoder measures that one alone (measured_predictors, format/zero_run.hpp): the
  // other's tile may come out smaller there, small tiles most of all (seed 0x202595a0541f5a08:
  // 257 bf16 values, 56 bytes under codes against the 64 chosen under deltas).
  const std::uint32_t measured = ncclz::format::zero_run::measured_predictors(zr::zero_codes(c.codes), zr::zero_deltas(c.codes),
                                                                 static_cast<std::uint32_t>(in.size()));
  for (const zr::predictor pred : {zr::predictor::codes, zr::predictor::deltas}) {
    const bytes forced = zr::encode_tile_with<T>(values, c, pred);
    CAPTURE(static_cast<int>(pred), measured);
    check_decodes<Codec>(forced, in, p);
    if (measured == 3u) REQUIRE(tile.size() <= forced.size());
    if (measured == 1u << static_cast<int>(pred)) REQUIRE(tile == forced);
    if (pred == zr::predictor::deltas) REQUIRE(forced.size() <= fixed_length_bytes<Codec>(values, p) + kSlackOverFixed);
  }
  return tile;
}

bytes check_codes(const std::vector<double>& codes) { return check_round_trip<AbsFixed, double>(codes, exact_codes()); }

zr::zero_run_header zero_run_header_of(const bytes& tile) { return load<zr::zero_run_header>(tile, sizeof(fmt::tile_header)); }

/// The stored bit length of each sub-block.
std::vector<std::uint16_t> subblock_bits_of(const bytes& tile, std::uint32_t elements) {
  std::vector<std::uint16_t> bits(zr::subblock_count(elements));
  const std::uint64_t at = zr::tile_layout_of(0, 0, 0, 1).subblock_bits;
  for (std::size_t b = 0; b < bits.size(); ++b) bits[b] = load<std::uint16_t>(tile, at + 2 * b);
  return bits;
}

template <class T>
zr::tile_layout layout_of(const bytes& tile, std::uint32_t elements) {
  std::uint64_t stream_bits = 0;
  for (const std::uint16_t b : subblock_bits_of(tile, elements)) stream_bits += b;
  return zr::tile_layout_of(zr::subblock_count(elements), stream_bits, load<fmt::tile_header>(tile, 0).outlier_count, sizeof(T));
}

/// Laplace noise (scale 1) whose values under `threshold` in magnitude are set to 0: a gradient
/// after thresholding, the zeros at random positions (threshold ln(10): 90% zeros, ln(100): 99%).
std::vector<float> thresholded(std::size_t n, double threshold, std::mt19937_64& g) {
  std::exponential_distribution<double> e(1.0);
  std::vector<float> v(n);
  for (auto& x : v) {
    const double m = e(g);
    x = m < threshold ? 0.0f : static_cast<float>((g() & 1u) ? m : -m);
  }
  return v;
}

/// Laplace noise in bursts: runs of zeros (mean `zero_run`) and of nonzeros (mean `burst`),
/// geometric lengths, e.g. layers or rows of a gradient that were dropped whole.
std::vector<float> clustered(std::size_t n, double zero_run, double burst, std::mt19937_64& g) {
  std::exponential_distribution<double> e(1.0);
  std::geometric_distribution<std::size_t> zeros(1.0 / zero_run), nonzeros(1.0 / burst);
  std::vector<float> v(n, 0.0f);
  for (std::size_t i = zeros(g); i < n;) {
    for (std::size_t end = std::min(n, i + 1 + nonzeros(g)); i < end; ++i) {
      v[i] = static_cast<float>((g() & 1u) ? 0.05 + e(g) : -0.05 - e(g));
    }
    i += zeros(g);
  }
  return v;
}

/// ReLU of Gaussian noise: half the values 0, at random positions.
std::vector<float> relu_noise(std::size_t n, std::mt19937_64& g) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(std::max(0.0, normal(g)));
  return v;
}

/// ReLU of a smooth field plus a little noise: about half the values 0, in long runs.
std::vector<float> relu_smooth(std::size_t n, std::mt19937_64& g) {
  std::normal_distribution<double> normal(0.0, 0.02);
  std::vector<float> v = wavy_field<float>(n, 1.0, g);
  for (auto& x : v) x = static_cast<float>(std::max(0.0, static_cast<double>(x) + normal(g)));
  return v;
}

/// Exact codes: a share `zeros` of them 0 at random positions, the others +-(1 + 0..spread-1).
std::vector<double> sparse_codes(std::size_t n, double zeros, std::uint32_t spread, std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = u(g) < zeros ? 0.0 : ((g() & 1u) ? 1.0 : -1.0) * (1.0 + static_cast<double>(g() % spread));
  return v;
}

}  // namespace

TEST_CASE("zero_run: a sub-block takes its smallest form, exactly counted; ties to the smaller form", "[zero_run][form]") {
  std::vector<std::uint32_t> v(256, 0);
  REQUIRE(zr::choose_form(v, 1).bits == 0);  // all zero: no bits at all
  // One nonzero (z = 1: -1) after 255 zeros: form, count, the run (Rice k = 8: 0 + 1 + 8 bits;
  // k = 7: 1 + 1 + 7, the same, and the smaller k wins), sign mode (all negative), magnitude form
  // and the magnitude 1 - 1 in Rice k = 0 (1 bit).
  v[255] = 1;
  REQUIRE(zr::choose_form(v, 1).bits == 4 + 8 + 9 + 2 + 4 + 1);
  REQUIRE(zr::choose_form(v, 1).form == 7);
  // No zeros: dense, 8 groups of (6 + 32 x width) bits.
  std::fill(v.begin(), v.end(), 3);
  REQUIRE(zr::choose_form(v, 1).form == zr::kDense);
  REQUIRE(zr::choose_form(v, 1).bits == 4 + 8 * (6 + 32 * 2));
  // Alternating zeros (z = 3: -2): Rice k = 0 for the runs (a bitmap up to the last nonzero), no
  // sign bits, the magnitudes 2 - 1 in four 1-bit groups; with a least magnitude of 2, 0-bit groups.
  for (std::size_t i = 0; i < v.size(); i += 2) v[i] = 0;
  REQUIRE(zr::choose_form(v, 1).form == 0);
  REQUIRE(zr::choose_form(v, 1).bits == 4 + 8 + 128 * 2 + 2 + 4 + 4 * (6 + 32));
  REQUIRE(zr::choose_form(v, 2).bits == 4 + 8 + 128 * 2 + 2 + 4 + 4 * 6);
  // The bits are what the writer writes.
  auto written = [&](std::uint32_t least) {
    ncclz::host::detail::bit_writer w;
    zr::put_subblock(w, v, zr::choose_form(v, least).form, least);
    return w.size();
  };
  REQUIRE(written(1) == zr::choose_form(v, 1).bits);
  REQUIRE(written(2) == zr::choose_form(v, 2).bits);
  // Mixed signs (z = 1, 2: -1, +1): a sign bit each.
  for (std::size_t i = 1; i < v.size(); i += 2) v[i] = 1 + (i / 2) % 2;
  REQUIRE(zr::choose_form(v, 1).bits == 4 + 8 + 128 * 2 + 2 + 128 + 4 + 4 * 6);
  REQUIRE(written(1) == zr::choose_form(v, 1).bits);
}

TEST_CASE("zero_run: magnitudes are Rice-coded when they are geometric, in groups when they are flat", "[zero_run][form]") {
  std::vector<std::uint32_t> m(100, 0);
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<std::uint32_t>(i % 10 == 0 ? 40 : i % 3);
  const zr::choice rice = zr::choose_magnitude_form(m);  // rare large, mostly 0..2
  REQUIRE(rice.form < zr::kMagnitudeGroups);
  REQUIRE(rice.bits == 4 + zr::rice_bits(m, rice.form));
  for (std::uint32_t k = 0; k < zr::kMagnitudeGroups; ++k) {  // the least bits, the smallest k on a tie
    if (k < rice.form) REQUIRE(zr::rice_bits(m, k) > zr::rice_bits(m, rice.form));
    else REQUIRE(zr::rice_bits(m, k) >= zr::rice_bits(m, rice.form));
  }
  REQUIRE(rice.bits < 4 + zr::grouped_bits(m));
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<std::uint32_t>(1000 + i);
  REQUIRE(zr::choose_magnitude_form(m).form == zr::kMagnitudeGroups);
  REQUIRE(zr::min_magnitude(std::vector<std::uint32_t>{0, 7, 0, 9, 6}) == 3);  // 7: -4, 9: -5, 6: +3
  REQUIRE(zr::min_magnitude(std::vector<std::uint32_t>{0, 0}) == 1);
}

TEST_CASE("zero_run: the magnitude form is the fewest Rice bits for magnitudes up to 2^31", "[zero_run][form]") {
  // magnitude_sums keeps m >> 16 and the low 16 bits' counts, not the sums of m >> j: the same
  // choice as summing rice_bits outright, over widths that use the high part and the low bits.
  std::mt19937_64 g(0x5eed0005);
  for (const std::uint32_t top : {3u, 200u, 70000u, 0x7FFFFFFFu}) {
    for (const std::size_t count : {std::size_t{1}, std::size_t{31}, std::size_t{256}}) {
      std::vector<std::uint32_t> m(count);
      for (auto& v : m) v = static_cast<std::uint32_t>(std::uniform_int_distribution<std::uint64_t>(0, top)(g) >> (g() % 20));
      std::uint64_t least = zr::grouped_bits(m);
      std::uint32_t form = zr::kMagnitudeGroups;
      for (std::uint32_t j = zr::kMagnitudeGroups; j-- > 0;) {
        if (zr::rice_bits(m, j) <= least) least = zr::rice_bits(m, j), form = j;
      }
      const zr::choice c = zr::choose_magnitude_form(m);
      INFO("top " << top << " count " << count);
      REQUIRE(c.form == form);
      REQUIRE(c.bits == 4 + least);
    }
  }
}

TEST_CASE("zero_run: the predictor is codes for sparse data, deltas for smooth data", "[zero_run][form]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const std::vector<double> sparse = sparse_codes(fmt::kTileElements, 0.9, 100, g);
  REQUIRE(zero_run_header_of(check_codes(sparse)).predictor == static_cast<std::uint8_t>(zr::predictor::codes));
  std::vector<double> ramp(fmt::kTileElements);
  for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = 100000.0 + 3.0 * static_cast<double>(i);
  const bytes tile = check_codes(ramp);
  REQUIRE(zero_run_header_of(tile).predictor == static_cast<std::uint8_t>(zr::predictor::deltas));
  REQUIRE(load<fmt::tile_header>(tile, 0).base == 100000);
  // A tie (every code 0) goes to codes, with base 0.
  const bytes zeros = check_codes(std::vector<double>(1000, 0.0));
  REQUIRE(zero_run_header_of(zeros).predictor == static_cast<std::uint8_t>(zr::predictor::codes));
  REQUIRE(zeros.size() == zr::tile_layout_of(4, 0, 0, 8).total);  // headers and four 0 sizes only
}

TEST_CASE("zero_run tile: round trips of all-zero, dense, alternating, run-edge, short and maximal tiles",
          "[zero_run][round_trip]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const std::uint32_t n = fmt::kTileElements;
  SECTION("all zero, and no zeros at all (codes and smooth)") {
    check_codes(std::vector<double>(n, 0.0));
    check_codes(sparse_codes(n, 0.0, 1000, g));
    std::vector<double> smooth(n);
    double code = -5e8;
    for (auto& x : smooth) x = code += static_cast<double>(static_cast<int>(g() % 9) - 4);
    check_codes(smooth);
  }
  SECTION("alternating zeros, and zeros at a share from 1% to 99%") {
    std::vector<double> v(n, 0.0);
    for (std::uint32_t i = 1; i < n; i += 2) v[i] = (i % 4 == 1) ? 7.0 : -1.0;
    check_codes(v);
    for (const double zeros : {0.01, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999}) {
      for (const std::uint32_t spread : {1u, 3u, 1000u}) {
        CAPTURE(zeros, spread);
        check_codes(sparse_codes(n, zeros, spread, g));
      }
    }
  }
  SECTION("long runs across sub-block edges; lone nonzeros at the first and last element of a sub-block") {
    std::vector<double> v(n, 0.0);
    for (const std::uint32_t i : {0u, 255u, 256u, 767u, 1024u, 4095u, 8191u}) v[i] = 5.0;
    for (std::uint32_t i = 1500; i < 1800; ++i) v[i] = ((g() & 1u) ? 1.0 : -1.0) * static_cast<double>(1 + g() % 7);  // dense, over an edge (1536)
    const bytes tile = check_codes(v);
    REQUIRE(zero_run_header_of(tile).predictor == static_cast<std::uint8_t>(zr::predictor::codes));
    const auto bits = subblock_bits_of(tile, n);
    REQUIRE(bits[3] == 0);  // 768..1023: all zero
    REQUIRE(bits[4] > 0);   // element 1024
    REQUIRE(bits[8] == 0);
    const std::uint64_t stream = zr::tile_layout_of(zr::kTileSubblocks, 0, 0, 8).stream;
    const std::uint64_t dense = std::accumulate(bits.begin(), bits.begin() + 6, std::uint64_t{0});  // sub-block 6: no zeros
    REQUIRE(ncclz::host::detail::peek_bits(std::span<const std::byte>(tile).subspan(stream), dense, zr::kFormBits) == zr::kDense);
  }
  SECTION("empty and short tiles, sub-block and group edges") {
    for (const std::uint32_t m : {0u, 1u, 2u, 31u, 32u, 33u, 255u, 256u, 257u, 511u, 8191u, 8192u}) {
      CAPTURE(m);
      check_codes(sparse_codes(m, 0.8, 50, g));
      check_codes(std::vector<double>(m, 0.0));
      check_codes(std::vector<double>(m, -9.0));
    }
  }
  SECTION("maximal widths: codes of +-(2^30 - 1), deltas of 2^31 - 2 (32 bits), sparse or not") {
    std::vector<double> v(n);
    for (std::uint32_t i = 0; i < n; ++i) v[i] = (i % 2 ? -1.0 : 1.0) * ((1 << 30) - 1);
    check_codes(v);
    for (std::uint32_t i = 0; i < n; i += 3) v[i] = 0.0;
    check_codes(v);
    std::vector<double> wide(n, 0.0);
    for (std::uint32_t i = 0; i < n; i += 97) wide[i] = -((1 << 30) - 1.0);
    check_codes(wide);
  }
  SECTION("outliers: NaN and Inf count as code 0 (runs of zeros under the codes predictor)") {
    check_codes(std::vector<double>(n, std::numeric_limits<double>::quiet_NaN()));
    std::vector<double> v = sparse_codes(n, 0.9, 100, g);
    for (std::uint32_t i = 0; i < n; i += 3) v[i] = (i % 2) ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    const bytes tile = check_codes(v);
    REQUIRE(load<fmt::tile_header>(tile, 0).outlier_count == (n + 2) / 3);
  }
}

TEMPLATE_TEST_CASE("zero_run tile: round trips of sparse, ReLU-like and smooth data with outliers over every element type",
                   "[zero_run][round_trip]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  for (const std::uint32_t m : {1u, 100u, 257u, 8192u}) {
    std::vector<std::vector<T>> inputs(3);
    for (const float x : thresholded(m, 2.3, g)) inputs[0].push_back(from_double<T>(x));
    for (const float x : relu_smooth(m, g)) inputs[1].push_back(from_double<T>(x));
    inputs[2] = wavy_field<T>(m, 100.0, g);
    for (auto& in : inputs) {
      add_outliers(in, 0.01, g);
      for (const double bound : {1e-2, 1e-4}) {
        CAPTURE(m, bound, &in - inputs.data());
        check_round_trip<RelFixed, T>(in, params_for<RelFixed>(in, bound));
        check_round_trip<AbsFixed, T>(in, params_for<AbsFixed>(in, bound * 10.0));
      }
    }
  }
}

TEST_CASE("zero_run tile: every truncation is a format_error", "[zero_run][truncation]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  std::vector<double> v = sparse_codes(3000, 0.7, 100, g);
  v[200] = std::numeric_limits<double>::quiet_NaN();
  const auto p = exact_codes();
  const bytes tile = check_codes(v);
  for (std::size_t length = 0; length < tile.size(); ++length) {
    CAPTURE(length, tile.size());
    const std::string error = decode_error<AbsFixed, double>(bytes(tile.begin(), tile.begin() + static_cast<std::ptrdiff_t>(length)), v.size(), p);
    REQUIRE_THAT(error, Contains("ncclz") && Contains("tile 7"));
  }
}

TEST_CASE("zero_run tile: each corrupt field is a format_error that says what is wrong", "[zero_run][corruption]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  std::vector<double> v = sparse_codes(1000, 0.9, 100, g);
  v[0] = 3.0;  // sub-block 0 sparse (its form is the first 4 stream bits)
  v[10] = std::numeric_limits<double>::infinity();
  const auto p = exact_codes();
  const bytes tile = check_codes(v);
  REQUIRE(zero_run_header_of(tile).predictor == static_cast<std::uint8_t>(zr::predictor::codes));
  const zr::tile_layout l = layout_of<double>(tile, 1000);
  REQUIRE(l.total == tile.size());
  const auto form0 = static_cast<std::uint32_t>(tile[l.stream]) & 0xFu;
  REQUIRE(form0 <= zr::kMaxRice);
  auto with = [&](auto edit) {
    bytes t = tile;
    t.resize(t.size() + 8);  // room for a sub-block size one bit longer: its own error, not "truncated"
    edit(t);
    return decode_error<AbsFixed, double>(t, v.size(), p);
  };
  REQUIRE_THAT(with([](bytes& t) { t[0] = std::byte{2}; }), Contains("not a zero_run tile"));
  REQUIRE_THAT(with([](bytes& t) { t[1] = std::byte{1}; }), Contains("reserved"));
  REQUIRE_THAT(with([](bytes& t) { t[9] = std::byte{1}; }), Contains("reserved"));
  REQUIRE_THAT(with([](bytes& t) { t[10] = std::byte{1}; }), Contains("reserved"));
  REQUIRE_THAT(with([](bytes& t) { t[8] = std::byte{2}; }), Contains("predictor"));
  REQUIRE_THAT(with([](bytes& t) { store<std::int32_t>(t, 4, 5); }), Contains("nonzero base"));
  REQUIRE_THAT(with([](bytes& t) { store<std::uint16_t>(t, 2, 1001); }), Contains("outliers"));
  REQUIRE_THAT(with([](bytes& t) { store<std::uint32_t>(t, 12, 0x80000001u); }), Contains("min magnitude"));
  // Sub-block sizes: one past the end of the tile, one bit more or less than its stream takes.
  REQUIRE_THAT(with([&](bytes& t) { store<std::uint16_t>(t, l.subblock_bits, 60000); }), Contains("truncated"));
  const auto first = load<std::uint16_t>(tile, l.subblock_bits);
  REQUIRE_THAT(with([&](bytes& t) { store<std::uint16_t>(t, l.subblock_bits, first + 1); }), Contains("sub-block 0"));
  REQUIRE_THAT(with([&](bytes& t) { store<std::uint16_t>(t, l.subblock_bits, first - 1); }), Contains("sub-block 0"));
  REQUIRE_THAT(with([&](bytes& t) { store<std::uint16_t>(t, l.subblock_bits, 3); }), Contains("sub-block 0") && Contains("past its 3 bits"));
  // The stream: an unknown form, more nonzeros than values, a first run past the end.
  REQUIRE_THAT(with([&](bytes& t) { t[l.stream] |= std::byte{0xF}; }), Contains("unknown form 15"));
  REQUIRE_THAT(with([&](bytes& t) { t[l.stream] = (t[l.stream] & std::byte{0xF0}) | std::byte{10}; }), Contains("unknown form 10"));
  {
    // A hand-made sub-block 0 of 256 values: form 0 (k = 0), 256 nonzeros, then a run of 1 (0 1):
    // the run leaves no room for the 255 nonzeros after it.
    bytes t = tile;
    store<std::uint16_t>(t, l.subblock_bits, 4 + 8 + 2);
    ncclz::host::detail::bit_writer w;
    w.put(0, 4);
    w.put(255, 8);
    w.put(0, 1);
    w.put(1, 1);
    for (std::size_t k = 0; k < w.bytes().size(); ++k) t[l.stream + k] = w.bytes()[k];
    REQUIRE_THAT((decode_error<AbsFixed, double>(t, v.size(), p)), Contains("sub-block 0") && Contains("run of zeros past its end"));
  }
  REQUIRE(load<std::uint16_t>(tile, l.outlier_index) == 10);
  REQUIRE_THAT(with([&](bytes& t) { store<std::uint16_t>(t, l.outlier_index, 1000); }), Contains("outlier index"));
  REQUIRE(decode_error<AbsFixed, double>(tile, v.size(), p).empty());
}

TEST_CASE("zero_run tile: hand-made sub-blocks: widths over 32, unknown sign modes, magnitudes past 32-bit values",
          "[zero_run][corruption]") {
  const auto p = exact_codes();
  std::vector<double> v(256, 0.0);
  v[3] = 1.0;  // z = 2: +1
  auto tile_with = [&](auto write, std::uint32_t min_mag = 1) {
    bytes t = check_codes(v);
    const zr::tile_layout l = layout_of<double>(t, 256);
    ncclz::host::detail::bit_writer w;
    write(w);
    store<std::uint16_t>(t, l.subblock_bits, static_cast<std::uint16_t>(w.size()));
    store<std::uint32_t>(t, sizeof(fmt::tile_header) + 4, min_mag);
    t.resize(zr::tile_layout_of(1, w.size(), 0, 8).total);
    for (std::size_t k = 0; k < w.bytes().size(); ++k) t[l.stream + k] = w.bytes()[k];
    return decode_error<AbsFixed, double>(t, v.size(), p);
  };
  // The valid sub-block by hand: k = 2, one nonzero after a run of 3 (1, then 3 in 2 bits), all
  // positive, magnitudes in groups, a 0-bit group.
  auto run = [](auto& w) { w.put(2, 4), w.put(0, 8), w.put(1, 1), w.put(3, 2); };
  REQUIRE(tile_with([&](auto& w) { run(w), w.put(1, 2), w.put(15, 4), w.put(0, 6); }).empty());
  REQUIRE_THAT(tile_with([&](auto& w) { run(w), w.put(1, 2), w.put(15, 4), w.put(33, 6), w.put(0, 33); }),
               Contains("width over 32"));
  REQUIRE_THAT(tile_with([&](auto& w) { run(w), w.put(3, 2), w.put(15, 4), w.put(0, 6); }), Contains("unknown sign mode"));
  REQUIRE_THAT(tile_with([&](auto& w) { run(w), w.put(1, 2), w.put(15, 4), w.put(0, 6); }, 0x80000000u),
               Contains("past the 32-bit values"));  // +2^31
  REQUIRE(tile_with([&](auto& w) { run(w), w.put(2, 2), w.put(15, 4), w.put(0, 6); }, 0x80000000u).empty());  // -2^31
  REQUIRE_THAT(tile_with([&](auto& w) { run(w), w.put(1, 2), w.put(15, 4), w.put(0, 6); }, 0), Contains("min magnitude"));
  REQUIRE_THAT(tile_with([&](auto& w) { run(w), w.put(1, 2), w.put(0, 4), w.put(0, 9); }), Contains("past its"));  // a unary past the end
  REQUIRE_THAT(tile_with([](auto& w) { w.put(zr::kDense, 4), w.put(40, 6); }), Contains("width over 32"));
}

TEST_CASE("zero_run tile: random byte flips decode or fail with format_error, never crash", "[zero_run][fuzz]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  std::vector<float> in = thresholded(fmt::kTileElements, 2.3, g);
  for (std::size_t i = 4000; i < 5000; ++i) in[i] = static_cast<float>(i % 7);  // a dense stretch
  add_outliers(in, 0.002, g);
  const auto p = params_for<AbsFixed>(in, 1e-3);
  const bytes tile = check_round_trip<AbsFixed, float>(in, p);
  // Half the flips in the first 80 bytes: headers and sub-block sizes.
  const flip_outcomes o = flip_bits(tile, 80, 3000, g, [&](const bytes& t) { return decode_error<AbsFixed, float>(t, in.size(), p); });
  INFO("decoded " << o.decoded << ", rejected " << o.rejected);
  REQUIRE(o.decoded > 0);
  REQUIRE(o.rejected > 0);
}

namespace {

struct sizes {
  std::uint64_t fixed = 0;    // fixed_length tiles, raw where smaller (what the codec writes today)
  std::uint64_t huffman = 0;  // huffman tiles
  std::uint64_t zero_run = 0;  // zero_run tiles, the predictor chosen per tile
  std::uint64_t codes = 0;     // zero_run tiles, always the codes predictor
  std::uint64_t deltas = 0;    // zero_run tiles, always the deltas predictor
  std::uint64_t best = 0;      // the smallest of fixed, huffman and zero_run per tile (a selector)
  std::uint64_t over_fixed = 0;  // the most a zero_run tile exceeded its fixed-length tile
  double zeros = 0;            // share of zero codes
};

template <class Codec>
sizes measure(const std::vector<float>& in, double bound) {
  const auto p = params_for<Codec>(in, bound);
  sizes s;
  std::vector<std::byte> scratch(fmt::raw_tile_bytes(fmt::kTileElements, sizeof(float)));
  std::uint64_t zero_codes = 0;
  for (std::uint64_t t = 0; t < fmt::tile_count(in.size()); ++t) {
    const std::span<const float> values = std::span<const float>(in).subspan(t * fmt::kTileElements, fmt::tile_elements(in.size(), t));
    const std::uint64_t fixed = ncclz::host::detail::encode_tile<Codec>(values, p, scratch, 0);
    const std::uint64_t huffman = hf::encode_tile<Codec, float>(values, p).size();
    const std::uint64_t zero_run = zr::encode_tile<Codec, float>(values, p).size();
    const zr::tile_codes c = zr::codes_of<Codec>(values, p);
    zero_codes += static_cast<std::uint64_t>(std::count(c.codes.begin(), c.codes.end(), 0));
    s.fixed += fixed;
    s.huffman += huffman;
    s.zero_run += zero_run;
    s.codes += zr::encode_tile_with<float>(values, c, zr::predictor::codes).size();
    s.deltas += zr::encode_tile_with<float>(values, c, zr::predictor::deltas).size();
    s.best += std::min({fixed, huffman, zero_run});
    const std::uint64_t fixed_length = fixed_length_bytes<Codec>(values, p);
    s.over_fixed = std::max(s.over_fixed, zero_run > fixed_length ? zero_run - fixed_length : 0);
  }
  s.zeros = static_cast<double>(zero_codes) / static_cast<double>(in.size());
  return s;
}

}  // namespace

TEST_CASE("zero_run tile: size against fixed_length and huffman tiles (printed: the evidence for a selector)",
          "[zero_run][size]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const std::size_t n = std::size_t{1} << 20;
  struct field {
    std::string name;
    std::vector<float> values;
  };
  const std::vector<field> fields = {{"sparse 90%, random", thresholded(n, std::log(10.0), g)},
                                     {"sparse 99%, random", thresholded(n, std::log(100.0), g)},
                                     {"sparse 90%, clustered", clustered(n, 90.0, 10.0, g)},
                                     {"sparse 99%, clustered", clustered(n, 990.0, 10.0, g)},
                                     {"ReLU of noise (50%)", relu_noise(n, g)},
                                     {"ReLU of smooth field", relu_smooth(n, g)},
                                     {"smooth field", wavy_field<float>(n, 1.0, g)},
                                     {"Laplace noise (dense)", thresholded(n, 0.0, g)}};
  std::ostringstream note;
  note << "zero_run vs fixed_length and huffman tiles, f32, RelBound; bits a value (fixed = raw where smaller;\n"
       << "zr = zero_run, predictor per tile; codes/deltas = zero_run with that predictor only; best = smallest per\n"
       << "tile; zeros = share of zero codes; over = most bytes a zero_run tile exceeded its fixed-length tile)\n"
       << std::left << std::setw(24) << "field" << std::setw(7) << "REL" << std::right << std::setw(6) << "zeros"
       << std::setw(8) << "fixed" << std::setw(8) << "huffman" << std::setw(8) << "zr" << std::setw(8) << "codes"
       << std::setw(8) << "deltas" << std::setw(8) << "best" << std::setw(8) << "zr/fix" << std::setw(8) << "zr/huf"
       << std::setw(6) << "over" << "\n";
  for (const field& f : fields) {
    for (const double bound : {1e-2, 1e-3, 1e-4}) {
      const sizes s = measure<RelFixed>(f.values, bound);
      const auto per_value = [&](std::uint64_t b) { return 8.0 * static_cast<double>(b) / static_cast<double>(f.values.size()); };
      const double zr_fix = static_cast<double>(s.zero_run) / static_cast<double>(s.fixed);
      const double zr_huf = static_cast<double>(s.zero_run) / static_cast<double>(s.huffman);
      note << std::left << std::setw(24) << f.name << std::setw(7) << bound << std::right << std::fixed
           << std::setprecision(3) << std::setw(6) << std::setprecision(2) << s.zeros << std::setprecision(3)
           << std::setw(8) << per_value(s.fixed) << std::setw(8) << per_value(s.huffman) << std::setw(8)
           << per_value(s.zero_run) << std::setw(8) << per_value(s.codes) << std::setw(8) << per_value(s.deltas)
           << std::setw(8) << per_value(s.best) << std::setw(8) << zr_fix << std::setw(8) << zr_huf << std::setw(6)
           << s.over_fixed << "\n"
           << std::defaultfloat;
      CAPTURE(f.name, bound, zr_fix, zr_huf);
      REQUIRE(s.over_fixed <= kSlackOverFixed);
      REQUIRE(s.zero_run <= std::min(s.codes, s.deltas));
      // Where zero_run must win whatever the seed: sparse data, against both other modes.
      if (f.name.starts_with("sparse")) {
        REQUIRE(zr_fix < 0.6);
        REQUIRE(zr_huf < 0.9);
      }
      if (f.name.starts_with("ReLU of noise")) REQUIRE(zr_huf < 0.95);
    }
  }
  std::cout << note.str() << std::flush;
}
