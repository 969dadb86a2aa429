// Host tests of how the reference codec picks a tile's mode (docs/format.md, "Which mode a tile
// takes"): EntropyCoder<Huffman>, <ZeroRun> and <Adaptive> chunks decode every coded tile to exactly
// dequantize(quantize(x)) (the modes code the same integer codes; raw tiles hold x), an Adaptive chunk is never
// larger than the FixedLength one, each mode shows up on the data it is for, and corrupted chunks
// are rejected or decoded, never read out of bounds. The device writes the same bytes (GPU tests).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/host/reference_codec.hpp"
#include "ncclz/host/zero_run_reference.hpp"
#include "ncclz/tuning/adaptive.hpp"
#include "ncclz/tuning/huffman.hpp"
#include "test_support.hpp"

namespace {

using ncclz_test::bits_of;
using ncclz_test::fresh_seed;
using ncclz_test::from_double;
using ncclz_test::tile_modes;
using ncclz_test::to_double;

template <class S>
using Rel = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<S>>;
template <class S>
using Abs = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<S>>;

enum class data { smooth, skewed, sparse, noise, constant, with_outliers };
const char* name_of(data d) {
  switch (d) {
    case data::smooth: return "smooth";
    case data::skewed: return "skewed";
    case data::sparse: return "sparse";
    case data::noise: return "noise";
    case data::constant: return "constant";
    case data::with_outliers: return "with_outliers";
  }
  return "?";
}

template <class T>
std::vector<T> make(data d, std::size_t n, std::mt19937_64& g) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v;
  switch (d) {
    case data::smooth: return ncclz_test::wavy_field<T>(n, 50.0, g);
    case data::with_outliers:
      v = ncclz_test::wavy_field<T>(n, 50.0, g);
      ncclz_test::add_outliers(v, 0.01, g);
      return v;
    default: break;
  }
  v.resize(n);
  for (auto& x : v) {
    double y = 0;
    if (d == data::skewed) y = (g() % 2 ? 1 : -1) * std::log(1 - 0.999 * std::fabs(u(g))) * (g() % 64 == 0 ? 40.0 : 1.0);
    else if (d == data::sparse) y = g() % 10 == 0 ? normal(g) : 0.0;  // thresholded gradients
    else if (d == data::noise) y = u(g);
    else y = 3.25;
    x = from_double<T>(y);
  }
  return v;
}

template <class Codec, class T>
std::vector<T> decoded(const std::vector<std::byte>& chunk, std::size_t n) {
  std::vector<T> out(n);
  ncclz::host::decompress<Codec>(std::span<const std::byte>(chunk), std::span<T>(out));
  return out;
}

}  // namespace

TEMPLATE_TEST_CASE("entropy coders: every tile decodes to its quantized values, adaptive never larger", "[codec][adaptive]", float,
                   double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{257}, std::size_t{8193},
                              std::size_t{5 * 8192 + 77}}) {
    for (const data d : {data::smooth, data::skewed, data::sparse, data::noise, data::constant, data::with_outliers}) {
      for (const double bound : {1e-2, 1e-3, 1e-4}) {
        CAPTURE(n, name_of(d), bound);
        const std::vector<T> in = make<T>(d, n, g);
        const std::span<const T> s(in);
        const auto fixed = ncclz::host::compress<Rel<ncclz::FixedLength>>(s, bound);
        const auto adaptive = ncclz::host::compress<Rel<ncclz::Adaptive>>(s, bound);
        const auto huffman = ncclz::host::compress<Rel<ncclz::Huffman>>(s, bound);
        const auto zero_run = ncclz::host::compress<Rel<ncclz::ZeroRun>>(s, bound);
        REQUIRE(adaptive.size() <= fixed.size());
        // Tile by tile: never larger than fixed_length, and an entropy mode only under its bar.
        for (std::uint64_t t = 0; t < ncclz::format::tile_count(n); ++t) {
          const std::uint64_t own = ncclz_test::tile_bytes_of(adaptive, t), fixed_bytes = ncclz_test::tile_bytes_of(fixed, t);
          const auto mode = static_cast<ncclz::tile_mode>(ncclz_test::tile_mode_of(adaptive, t));
          CAPTURE(t, own, fixed_bytes, static_cast<int>(mode));
          REQUIRE(own <= fixed_bytes);
          if (mode == ncclz::tile_mode::huffman || mode == ncclz::tile_mode::zero_run)
            REQUIRE(own < ncclz::tuning::entropy_bar(fixed_bytes));
        }
        // Every coded tile decodes to dequantize(quantize(x)) (outliers: x), whatever its mode; a
        // raw tile to x.
        using Q = typename Rel<ncclz::FixedLength>::quantizer;
        const ncclz::quant_params<T> p = ncclz_test::params_for<Rel<ncclz::FixedLength>>(in, bound);
        const auto check = [&](const char* coder, const std::vector<std::byte>& chunk, const std::vector<T>& got) {
          for (std::size_t i = 0; i < n; ++i) {
            const bool raw = ncclz_test::tile_mode_of(chunk, i / ncclz::format::kTileElements) ==
                             static_cast<std::uint8_t>(ncclz::tile_mode::raw);
            std::int32_t q = 0;
            const T expected = !raw && Q::template quantize<T>(in[i], p, q) ? Q::template dequantize<T>(q, p) : in[i];
            if (bits_of(got[i]) != bits_of(expected)) {
              INFO(coder << ": element " << i << " of input " << to_double(in[i]) << " decodes to " << to_double(got[i])
                         << ", expected " << to_double(expected) << (raw ? " (raw tile)" : ""));
              REQUIRE(bits_of(got[i]) == bits_of(expected));
            }
          }
        };
        check("fixed_length", fixed, decoded<Rel<ncclz::FixedLength>, T>(fixed, n));
        check("adaptive", adaptive, decoded<Rel<ncclz::Adaptive>, T>(adaptive, n));
        check("huffman", huffman, decoded<Rel<ncclz::Huffman>, T>(huffman, n));
        check("zero_run", zero_run, decoded<Rel<ncclz::ZeroRun>, T>(zero_run, n));
      }
    }
  }
}

TEST_CASE("adaptive: zero_run tiles on sparse data, huffman tiles on skewed data", "[codec][adaptive]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const std::size_t n = 16 * 8192;
  const auto sparse = ncclz::host::compress<Abs<ncclz::Adaptive>>(std::span<const float>(make<float>(data::sparse, n, g)), 1e-3);
  const auto skewed = ncclz::host::compress<Rel<ncclz::Adaptive>>(std::span<const float>(make<float>(data::skewed, n, g)), 1e-3);
  const std::vector<std::size_t> on_sparse = tile_modes(sparse), on_skewed = tile_modes(skewed);
  CAPTURE(on_sparse[1], on_sparse[2], on_sparse[3], on_skewed[1], on_skewed[2], on_skewed[3]);
  REQUIRE(on_sparse[static_cast<int>(ncclz::tile_mode::zero_run)] == 16);
  REQUIRE(on_skewed[static_cast<int>(ncclz::tile_mode::huffman)] == 16);
  // Coders that do not try a mode never write it, and a decoder of another coder rejects it.
  const auto fixed = ncclz::host::compress<Abs<ncclz::FixedLength>>(std::span<const float>(make<float>(data::sparse, n, g)), 1e-3);
  REQUIRE(tile_modes(fixed)[static_cast<int>(ncclz::tile_mode::zero_run)] == 0);
  std::vector<float> out(n);
  REQUIRE_THROWS_AS((ncclz::host::decompress<Abs<ncclz::FixedLength>>(std::span<const std::byte>(sparse), std::span<float>(out))),
                    ncclz::format_error);
}

TEST_CASE("adaptive: zero_run is measured only where half the codes or deltas are zero", "[codec][adaptive]") {
  namespace fmt = ncclz::format;
  // Half the codes zero, whatever their runs; half the deltas zero in runs of 3 or more on
  // average (arguments: zero codes, zero deltas, runs of zero deltas, elements).
  REQUIRE(ncclz::tuning::zero_run_worth_trying(4096, 0, 0, 8192));
  REQUIRE(ncclz::tuning::zero_run_worth_trying(4096, 0, 4096, 8192));
  REQUIRE(ncclz::tuning::zero_run_worth_trying(0, 4096, 1365, 8192));
  REQUIRE_FALSE(ncclz::tuning::zero_run_worth_trying(0, 4096, 1366, 8192));  // runs of 2.999
  REQUIRE_FALSE(ncclz::tuning::zero_run_worth_trying(4095, 4095, 1, 8192));
  REQUIRE_FALSE(ncclz::tuning::zero_run_worth_trying(0, 0, 0, 0));
  REQUIRE(ncclz::tuning::zero_run_worth_trying(1, 0, 0, 1));
  // The sample (elements 1, 9, 17, ...) decides alone at 9/16 zero or more and under 7/16.
  REQUIRE(ncclz::tuning::selector_sample_size(8192) == 1024);
  REQUIRE(ncclz::tuning::selector_sample_size(0) == 0);
  REQUIRE(ncclz::tuning::selector_sample_size(1) == 0);
  REQUIRE(ncclz::tuning::selector_sample_size(2) == 1);
  REQUIRE(ncclz::tuning::selector_sample_size(9) == 1);
  REQUIRE(ncclz::tuning::selector_sample_size(10) == 2);
  for (std::uint32_t n = 0; n < 100; ++n) {
    std::uint32_t in_sample = 0;
    for (std::uint32_t e = 0; e < n; ++e) in_sample += ncclz::tuning::in_selector_sample(e);
    REQUIRE(ncclz::tuning::selector_sample_size(n) == in_sample);
  }
  using ncclz::tuning::zero_run_sample;
  REQUIRE(ncclz::tuning::zero_run_verdict(576, 0, 8192) == zero_run_sample::measure);
  REQUIRE(ncclz::tuning::zero_run_verdict(0, 576, 8192) == zero_run_sample::measure);
  REQUIRE(ncclz::tuning::zero_run_verdict(575, 575, 8192) == zero_run_sample::count_all);
  REQUIRE(ncclz::tuning::zero_run_verdict(448, 0, 8192) == zero_run_sample::count_all);
  REQUIRE(ncclz::tuning::zero_run_verdict(447, 447, 8192) == zero_run_sample::skip);
  REQUIRE(ncclz::tuning::zero_run_verdict(0, 0, 1) == zero_run_sample::count_all);  // no element in the sample
  // The host counts the same sample: codes 0 at elements 1, 9, ... only.
  namespace zr = ncclz::host::detail::zero_run;
  std::vector<std::int32_t> codes(8192, 5);
  for (std::size_t i = 1; i < codes.size(); i += 8) codes[i] = 0;
  REQUIRE(zr::sampled_zero_codes(codes) == 1024);
  REQUIRE(zr::sampled_zero_deltas(codes) == 0);
  std::fill(codes.begin(), codes.end(), 0);
  for (std::size_t i = 0; i < codes.size(); i += 8) codes[i] = 3;  // element 1's delta from element 0 is not zero
  REQUIRE(zr::sampled_zero_codes(codes) == 1024);
  REQUIRE(zr::sampled_zero_deltas(codes) == 0);
}

TEST_CASE("adaptive: a sample near half zero measures zero_run as every element's count says", "[codec][adaptive]") {
  // Half the sampled deltas zero, the other elements' not: the sample alone would measure
  // zero_run, but it is too close to half to decide, and the whole count (1/16 zero) says no.
  namespace fmt = ncclz::format;
  namespace zr = ncclz::host::detail::zero_run;
  std::vector<std::int32_t> codes(8192);
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::int32_t>(3 * i + 1);
  for (std::size_t i = 1; i < codes.size(); i += 16) codes[i] = codes[i - 1];
  REQUIRE(2 * zr::sampled_zero_deltas(codes) == ncclz::tuning::selector_sample_size(8192));
  REQUIRE(ncclz::tuning::zero_run_verdict(zr::sampled_zero_codes(codes), zr::sampled_zero_deltas(codes), 8192) == ncclz::tuning::zero_run_sample::count_all);
  REQUIRE_FALSE(ncclz::tuning::zero_run_worth_trying(zr::zero_codes(codes), zr::zero_deltas(codes), zr::zero_delta_runs(codes), 8192));
}

TEST_CASE("adaptive: near half zero, zero_run is measured where the codes are zero or the zero deltas come in runs",
          "[codec][adaptive]") {
  // Half the deltas zero, and the sample (elements 1, 9, ...) at half too: every element is counted.
  // Runs are counted within blocks of 32, as the device's lanes count them.
  namespace fmt = ncclz::format;
  namespace zr = ncclz::host::detail::zero_run;
  const auto from_zero_deltas = [](const char* period) {  // 16 deltas, repeated; 'z': zero
    std::vector<std::int32_t> codes(8192);
    std::int32_t q = 7;
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = period[i % 16] == 'z' ? q : (q += 3);
    return codes;
  };
  const std::vector<std::int32_t> pairs = from_zero_deltas("zznnzznnnnzznnzz"), quads = from_zero_deltas("zzzznnnnnnnnzzzz");
  for (const auto* codes : {&pairs, &quads}) {
    REQUIRE(ncclz::tuning::zero_run_verdict(zr::sampled_zero_codes(*codes), zr::sampled_zero_deltas(*codes), 8192) == ncclz::tuning::zero_run_sample::count_all);
    REQUIRE(zr::zero_deltas(*codes) == 4096);
    REQUIRE(zr::zero_codes(*codes) == 0);
  }
  REQUIRE(zr::zero_delta_runs(pairs) == 7 * 256);  // 16 zeros a block of 32 in 7 runs (14..17 is one)
  REQUIRE(zr::zero_delta_runs(quads) == 3 * 256);  // in 3 (12..19)
  REQUIRE_FALSE(ncclz::tuning::zero_run_worth_trying(zr::zero_codes(pairs), zr::zero_deltas(pairs), zr::zero_delta_runs(pairs), 8192));
  REQUIRE(ncclz::tuning::zero_run_worth_trying(zr::zero_codes(quads), zr::zero_deltas(quads), zr::zero_delta_runs(quads), 8192));
  // A block boundary starts a run: 64 equal codes are two runs of zero deltas.
  REQUIRE(zr::zero_delta_runs(std::vector<std::int32_t>(64, 5)) == 2);

  // Over half the values zero at random (runs of about 2), the others random: huffman pays a
  // wide delta into and out of each zero code, and zero_run is far smaller. The sample sees
  // exactly half, so every element is counted; zero_run must be measured there, and win.
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const std::vector<float> in = ncclz_test::half_zero_codes(4, rng);
  const std::vector<std::byte> chunk = ncclz::host::compress<Rel<ncclz::Adaptive>>(std::span<const float>(in), 1e-3);
  const std::vector<std::size_t> modes = tile_modes(chunk);
  CAPTURE(modes[0], modes[1], modes[2], modes[3]);
  REQUIRE(modes[static_cast<int>(ncclz::tile_mode::zero_run)] == 4);
}

TEST_CASE("adaptive: the huffman gate lets through every tile huffman clearly wins and stops the near ties", "[codec][adaptive]") {
  // ncclz::tuning::huffman_gate_tile_bytes decides from a sample whether huffman's estimate is worth
  // making. Everywhere, a tile whose estimate is under 15/16 of fixed_length's bar must pass it.
  // Uniform noise at REL 1e-3 is a near tie (huffman within a fraction of a percent of the bar,
  // either side): there the symbols the sample holds (huffman_policy::gate_bits_per_symbol) must stop the tiles,
  // so that Adaptive does not pay for the whole histogram to keep fixed_length. On the host the
  // gate read 1.0015-1.0165 of the bar on 512 f32 tiles (mean 1.009, sd 0.003): a tile passes
  // about once in 1500, so one of the 8 may (two, about once in 70000 runs); without those bits
  // every tile passes.
  namespace hh = ncclz::host::detail::huffman;
  using C = Rel<ncclz::Adaptive>;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const std::size_t n = 8 * 8192;
  std::size_t clear_wins = 0, near_ties_passed = 0;
  for (const data d : {data::smooth, data::skewed, data::noise, data::with_outliers}) {
    for (const double bound : {1e-2, 1e-3, 1e-4}) {
      CAPTURE(name_of(d), bound);
      const std::vector<float> in = make<float>(d, n, g);
      const ncclz::quant_params<float> p = ncclz_test::params_for<C>(in, bound);
      for (std::size_t t = 0; t < n / 8192; ++t) {
        const std::span<const float> v(in.data() + t * 8192, 8192);
        const std::uint64_t bar = ncclz::tuning::entropy_bar(ncclz::host::detail::fixed_length_tile<C>(v, p).size());
        const hh::tile_deltas deltas = hh::deltas_of<C>(v, p);
        const std::uint64_t estimate = hh::estimate_tile(deltas, 8192, sizeof(float)).bytes;
        const std::uint64_t gate = hh::gate_tile_bytes(deltas, 8192, sizeof(float));
        CAPTURE(t, bar, gate, estimate);
        if (d == data::noise && bound == 1e-3) near_ties_passed += gate < bar;
        if (16 * estimate < 15 * bar) {
          ++clear_wins;
          REQUIRE(gate < bar);
        }
      }
    }
  }
  REQUIRE(clear_wins > 0);
  REQUIRE(near_ties_passed <= 1);
}

TEMPLATE_TEST_CASE("adaptive: a corrupted chunk is rejected or decoded, never read out of bounds", "[codec][adaptive][errors]",
                   float, __half) {
  using T = TestType;
  using Codec = Rel<ncclz::Adaptive>;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  // Tiles of every mode: skewed (huffman), sparse (zero_run), smooth (fixed_length or huffman).
  std::vector<T> in = make<T>(data::skewed, 8192, g);
  for (const data d : {data::sparse, data::smooth}) {
    const std::vector<T> more = make<T>(d, 8192, g);
    in.insert(in.end(), more.begin(), more.end());
  }
  const auto chunk = ncclz::host::compress<Codec>(std::span<const T>(in), 1e-3);
  const std::vector<std::size_t> modes = tile_modes(chunk);
  REQUIRE(modes[static_cast<int>(ncclz::tile_mode::huffman)] > 0);
  REQUIRE(modes[static_cast<int>(ncclz::tile_mode::zero_run)] > 0);
  // Resealed after the flips: the structural checks behind the checksums are what this reaches.
  const auto outcomes = ncclz_test::flip_bits(chunk, 200, 2000, g, [&](std::vector<std::byte> bytes) {
    std::vector<T> out(in.size());
    ncclz_test::reseal(bytes);
    return ncclz_test::format_error_of(bytes, [&](std::span<const std::byte> b) {
      ncclz::host::decompress<Codec>(b, std::span<T>(out));
    });
  });
  CAPTURE(outcomes.decoded, outcomes.rejected);
  REQUIRE(outcomes.rejected > 0);
}
