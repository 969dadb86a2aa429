// Host tests of Quantizer<FixedRate<Bits>>: the block step math, the reference codec's round trip
// (every element within its block's step / 2, non-finite values exact), the step table's layout
// and validation, the bound argument, and the partitions the collectives cut inputs into (chunks
// must hold whole scale blocks).
//
// Random inputs are fresh on every run; rerun a failure with NCCLZ_TEST_SEED=<seed>.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/error.hpp"
#include "ncclz/format.hpp"
#include "ncclz/host/reference_codec.hpp"
#include "ncclz/schedule/partition.hpp"

namespace {

namespace fmt = ncclz::format;
using Fixed8 = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<8>>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using Fixed4 = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<4>>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using Fixed8Raw = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<8>>, ncclz::EntropyCoder<ncclz::Raw>>;
using Fixed8Ad = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<8>>, ncclz::EntropyCoder<ncclz::Adaptive>>;
using Fixed4Ad = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<4>>, ncclz::EntropyCoder<ncclz::Adaptive>>;
using Fixed8Huf = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<8>>, ncclz::EntropyCoder<ncclz::Huffman>>;
using bytes = std::vector<std::byte>;
using ncclz_test::fresh_seed;
using ncclz_test::from_double;
using ncclz_test::limits;
using ncclz_test::to_double;

/// Values of very different scales block by block (gradients: some layers tiny, some large),
/// with blocks of zeros, NaN and +-Inf sprinkled in.
template <class T>
std::vector<T> ml_input(std::size_t n, std::mt19937_64& g) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<T> v(n);
  double scale = 1.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i % fmt::kScaleBlockElements == 0) scale = std::ldexp(1.0, static_cast<int>(g() % 24) - 12);
    const std::size_t block = i / fmt::kScaleBlockElements;
    v[i] = block % 5 == 3 ? from_double<T>(0.0) : from_double<T>(normal(g) * scale);
    if (g() % 997 == 0) v[i] = limits<T>::quiet_NaN();
    if (g() % 1499 == 0) v[i] = g() % 2 ? limits<T>::infinity() : limits<T>::lowest();
  }
  return v;
}

template <class Codec, class T>
void check_round_trip(const std::vector<T>& in) {
  using Q = typename Codec::quantizer;
  using C = ncclz::compute_t<T>;
  const bytes chunk = ncclz::host::compress<Codec, T>(in, Q::bits);
  std::vector<T> out(in.size());
  ncclz::host::decompress<Codec, T>(chunk, out);

  const auto h = ncclz_test::load<fmt::chunk_header>(chunk, 0);
  REQUIRE(h.quantizer == static_cast<std::uint8_t>(ncclz::quantizer_id::fixed_rate));
  REQUIRE(h.bound == Q::bits);
  const std::uint64_t table = sizeof(fmt::chunk_header) + fmt::step_table_offset(h.tile_count, h.flags);  // the step table
  const std::uint64_t steps_end = table + fmt::scale_table_bytes(in.size(), sizeof(T));
  REQUIRE(h.payload_bytes + sizeof(fmt::chunk_header) >= steps_end);
  if (h.tile_count > 0) REQUIRE(sizeof(fmt::chunk_header) + 8ull * ncclz_test::load<std::uint32_t>(chunk, 64) == steps_end);

  const std::vector<double> m = ncclz::host::block_maxima<T>(in);
  double largest_step = 0;
  std::size_t outliers = 0;
  for (std::size_t b = 0; b < m.size(); ++b) {
    const C step = ncclz_test::load<C>(chunk, table + b * sizeof(C));
    REQUIRE(step == Q::template block_step<T>(m[b]));
    largest_step = std::max(largest_step, static_cast<double>(step));
    for (std::size_t i = b * fmt::kScaleBlockElements; i < std::min(in.size(), (b + 1) * fmt::kScaleBlockElements); ++i) {
      const double x = to_double(in[i]), y = to_double(out[i]);
      CAPTURE(b, i, x, y, step);
      if (!std::isfinite(x)) {
        REQUIRE(ncclz_test::bits_of(out[i]) == ncclz_test::bits_of(in[i]));
        continue;
      }
      REQUIRE(std::fabs(x - y) <= static_cast<double>(step) / 2);
      // A code within Bits bits: y is the value of a code of at most max_code magnitude (unless
      // the value is an outlier, kept exactly).
      const auto p = Q::template params_of_step<T>(step);
      const double q = step > 0 ? std::rint(y / static_cast<double>(step)) : 0.0;
      if (std::fabs(q) <= Q::max_code &&
          ncclz_test::bits_of(Q::template dequantize<T>(static_cast<std::int32_t>(q), p)) == ncclz_test::bits_of(out[i])) {
        continue;
      }
      REQUIRE(ncclz_test::bits_of(out[i]) == ncclz_test::bits_of(in[i]));
      if (x != 0.0) ++outliers;
    }
  }
  REQUIRE(h.error_bound == largest_step / 2);
  REQUIRE(h.step == (largest_step > 0 ? largest_step : 1.0));
  // Outliers are NaN/Inf or rounding edge cases: rare among finite values (Raw tiles hold values).
  if constexpr (Codec::coder::codes_tiles) REQUIRE(outliers <= in.size() / 200 + 2);
}

template <class Codec, class T>
std::string error_of(const bytes& chunk, std::size_t n) {
  return ncclz_test::format_error_of(chunk, [&](std::span<const std::byte> s) {
    std::vector<T> out(n);
    ncclz::host::decompress<Codec, T>(s, out);
  });
}

}  // namespace

TEMPLATE_TEST_CASE("FixedRate: block steps are m / (2^(Bits-1) - 1) (16-bit types: the power of two at or above)",
                   "[fixed_rate][quantizer]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  using Q8 = ncclz::Quantizer<ncclz::FixedRate<8>>;
  using Q4 = ncclz::Quantizer<ncclz::FixedRate<4>>;
  STATIC_REQUIRE(Q8::max_code == 127 && Q4::max_code == 7);
  STATIC_REQUIRE(ncclz::is_blockwise_v<Q8> && !ncclz::is_blockwise_v<ncclz::Quantizer<ncclz::RelBound>>);
  for (const double m : {1.0, 3.0, 1e-3, 12345.678, 0.1}) {
    CAPTURE(m);
    const double s8 = static_cast<double>(Q8::block_step<T>(m)), s4 = static_cast<double>(Q4::block_step<T>(m));
    if constexpr (sizeof(T) == 2) {
      REQUIRE(s8 >= m / 127);
      REQUIRE(s8 < 2 * m / 127);
      REQUIRE(std::exp2(std::ilogb(s8)) == s8);
      REQUIRE(s4 >= m / 7);
      REQUIRE(s4 < 2 * m / 7);
    } else {
      REQUIRE(s8 == static_cast<double>(static_cast<ncclz::compute_t<T>>(m / 127)));
      REQUIRE(s4 == static_cast<double>(static_cast<ncclz::compute_t<T>>(m / 7)));
    }
    const auto p = Q8::block_params<T>(m);
    REQUIRE(p.error_bound == s8 / 2);
    REQUIRE(p.bound == 8);
    // The block's largest values code to +-max_code at most, never outside.
    std::int32_t q = 0;
    const T x = from_double<T>(m);
    if (Q8::quantize<T>(x, p, q)) REQUIRE(std::abs(q) <= 127);
    if (Q8::quantize<T>(from_double<T>(-m), p, q)) REQUIRE(std::abs(q) <= 127);
  }
  SECTION("a block of zeros codes as 0 exactly; NaN and Inf are outliers") {
    const auto p = Q8::block_params<T>(0.0);
    REQUIRE(p.step == 0);
    REQUIRE(p.error_bound == 0);
    std::int32_t q = 5;
    REQUIRE(Q8::quantize<T>(from_double<T>(0.0), p, q));
    REQUIRE(q == 0);
    REQUIRE(to_double(Q8::dequantize<T>(0, p)) == 0.0);
    REQUIRE_FALSE(Q8::quantize<T>(from_double<T>(1.0), p, q));
    const auto p1 = Q8::block_params<T>(1.0);
    REQUIRE_FALSE(Q8::quantize<T>(limits<T>::quiet_NaN(), p1, q));
    REQUIRE_FALSE(Q8::quantize<T>(limits<T>::infinity(), p1, q));
  }
}

TEMPLATE_TEST_CASE("FixedRate: every accepted value of a block is within step / 2 and a code of Bits bits",
                   "[fixed_rate][quantizer]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  using Q8 = ncclz::Quantizer<ncclz::FixedRate<8>>;
  using Q4 = ncclz::Quantizer<ncclz::FixedRate<4>>;
  for (int trial = 0; trial < 20; ++trial) {
    // (f16 tops out at 65504)
    const double scale = sizeof(T) == 2 ? std::ldexp(1.0, static_cast<int>(g() % 24) - 16) : std::ldexp(1.0, static_cast<int>(g() % 40) - 20);
    std::vector<T> block(1024);
    for (T& x : block) x = from_double<T>(u(g) * scale);
    const double m = ncclz::host::block_maxima<T>(block)[0];
    std::size_t outliers = 0;
    const auto check = [&](auto quantizer, int max_code) {
      using Q = decltype(quantizer);
      const auto p = Q::template block_params<T>(m);
      for (const T x : block) {
        std::int32_t q;
        if (!Q::template quantize<T>(x, p, q)) {
          ++outliers;
          continue;
        }
        REQUIRE(std::abs(q) <= max_code);
        REQUIRE(std::fabs(to_double(x) - to_double(Q::template dequantize<T>(q, p))) <= static_cast<double>(p.step) / 2);
      }
    };
    check(Q8{}, 127);
    check(Q4{}, 7);
    CAPTURE(scale, outliers);
    REQUIRE(outliers <= 2 * 1024 / 200);  // rounding edge cases only (ties at exactly step / 2)
  }
}

TEMPLATE_TEST_CASE("FixedRate: reference codec round trip, per-block bound, header and step table",
                   "[fixed_rate][codec]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1023}, std::size_t{1024}, std::size_t{1025},
                              std::size_t{3000}, std::size_t{8192}, std::size_t{8192 * 3 + 1029}, std::size_t{100000}}) {
    CAPTURE(n);
    const std::vector<T> in = ml_input<T>(n, g);
    check_round_trip<Fixed8, T>(in);
    check_round_trip<Fixed4, T>(in);
    check_round_trip<Fixed8Raw, T>(in);
    check_round_trip<Fixed8Ad, T>(in);
    check_round_trip<Fixed4Ad, T>(in);
    check_round_trip<Fixed8Huf, T>(in);
  }
  SECTION("8-bit codes of smooth data take well under 8 bits a value; a bound of 0 means Bits") {
    std::vector<T> in(65536);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = from_double<T>(std::sin(i * 1e-3));
    const bytes c = ncclz::host::compress<Fixed8, T>(in, 0.0);
    REQUIRE(c.size() * 8 < in.size() * 8);
    REQUIRE(c.size() <= ncclz::format::max_chunk_bytes(in.size(), sizeof(T)) + fmt::scale_table_bytes(in.size(), sizeof(T)));
    REQUIRE(ncclz_test::load<double>(c, 32) == 8.0);
  }
}

TEMPLATE_TEST_CASE("FixedRate: a bad step table is a format_error", "[fixed_rate][format]", float, double, __half,
                   __nv_bfloat16) {
  using T = TestType;
  using C = ncclz::compute_t<T>;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const std::size_t n = 20000;  // 3 tiles, 20 scale blocks
  const std::vector<T> in = ml_input<T>(n, g);
  const bytes good = ncclz::host::compress<Fixed8, T>(in, 8);
  REQUIRE(error_of<Fixed8, T>(good, n).empty());
  const std::uint64_t table = sizeof(fmt::chunk_header) + fmt::step_table_offset(fmt::tile_count(n), fmt::kTileChecks);

  for (const double bad : {-1.0, std::nan(""), HUGE_VAL}) {
    CAPTURE(bad);
    bytes c = good;
    ncclz_test::store<C>(c, table + 5 * sizeof(C), static_cast<C>(bad));
    REQUIRE(error_of<Fixed8, T>(c, n).find("step table") != std::string::npos);
  }
  SECTION("a tile offset into the step table") {
    bytes c = good;
    ncclz_test::store<std::uint32_t>(c, 64, static_cast<std::uint32_t>((table - sizeof(fmt::chunk_header)) / 8));
    REQUIRE_FALSE(error_of<Fixed8, T>(c, n).empty());
  }
  SECTION("every truncation, with and without payload_bytes rewritten to match") {
    for (std::uint64_t length = 0; length < good.size(); length += (length < table + 200 ? 1 : 97)) {
      CAPTURE(length);
      const bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(length));
      REQUIRE_FALSE(error_of<Fixed8, T>(cut, n).empty());
      if (length >= sizeof(fmt::chunk_header) && (length - sizeof(fmt::chunk_header)) % 8 == 0) {
        bytes patched = cut;
        ncclz_test::store<std::uint64_t>(patched, 24, length - sizeof(fmt::chunk_header));
        REQUIRE_FALSE(error_of<Fixed8, T>(patched, n).empty());
      }
    }
  }
  SECTION("a chunk of another quantizer, and another bit count's bound") {
    using AbsFixed = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
    REQUIRE(error_of<AbsFixed, T>(good, n).find("quantizer") != std::string::npos);
    REQUIRE(error_of<Fixed8, T>(ncclz::host::compress<AbsFixed, T>(in, 1e-2), n).find("quantizer") != std::string::npos);
    REQUIRE_THROWS_AS((ncclz::host::compress<Fixed8, T>(in, 4)), ncclz::invalid_argument);
    REQUIRE_THROWS_AS((ncclz::host::compress<Fixed4, T>(in, 8)), ncclz::invalid_argument);
    REQUIRE_THROWS_AS((ncclz::host::compress<Fixed8, T>(in, 1e-3)), ncclz::invalid_argument);
    REQUIRE_NOTHROW((ncclz::host::compress<Fixed4, T>(in, 4)));
  }
}

TEMPLATE_TEST_CASE("FixedRate: huffman tiles code independent values' codes, and neighbours' deltas", "[fixed_rate][codec][huffman]",
                   float, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  std::exponential_distribution<double> magnitude(1.0);
  constexpr std::size_t kCount = 8 * fmt::kTileElements;
  // Independent Laplace values, a scale per block (gradients): a delta of two codes spreads wider
  // than either, so the codes themselves make the smaller huffman tile.
  std::vector<T> independent(kCount), smooth(kCount);
  for (std::size_t i = 0; i < kCount; ++i) {
    const double scale = std::ldexp(1.0, static_cast<int>(i / fmt::kScaleBlockElements % 7) - 3);
    independent[i] = from_double<T>((g() % 2 ? 1.0 : -1.0) * magnitude(g) * scale);
    smooth[i] = from_double<T>(std::sin(static_cast<double>(i) * 2e-3) + 1e-3 * magnitude(g));
  }
  // With huffman as one of Adaptive's modes, and alone.
  const auto check_codec = [&](auto codec) {
    using C = typename decltype(codec)::type;
    CAPTURE(C::coder::name);
    const bytes c = ncclz::host::compress<C, T>(independent, 8);
    const bytes fixed = ncclz::host::compress<Fixed8, T>(independent, 8);
    const std::vector<std::size_t> modes = ncclz_test::tile_modes(c);
    const std::size_t huffman_tiles = modes[static_cast<std::size_t>(ncclz::tile_mode::huffman)];
    CAPTURE(modes, c.size(), fixed.size());
    REQUIRE(huffman_tiles == 8);
    REQUIRE(ncclz_test::codes_predictor_huffman_tiles(c) == huffman_tiles);
    REQUIRE(c.size() * 10 < fixed.size() * 9);  // at least 10% smaller than the codes' deltas in fixed length
    check_round_trip<C, T>(independent);
    const bytes s = ncclz::host::compress<C, T>(smooth, 8);
    CAPTURE(ncclz_test::tile_modes(s));
    REQUIRE(ncclz_test::codes_predictor_huffman_tiles(s) == 0);
    check_round_trip<C, T>(smooth);
  };
  check_codec(std::type_identity<Fixed8Ad>{});
  check_codec(std::type_identity<Fixed8Huf>{});
}

TEST_CASE("FixedRate: the collectives' segments and pipeline parts start on scale-block boundaries", "[fixed_rate][schedule]") {
  STATIC_REQUIRE(fmt::kTileElements % fmt::kScaleBlockElements == 0);
  for (const std::uint64_t count : {0ull, 1ull, 1023ull, 1025ull, 8191ull, 8193ull, 100000ull, 1000003ull, (1ull << 28) + 5}) {
    for (const int n : {1, 2, 3, 4, 7, 8}) {
      for (const ncclz::schedule::segment s : ncclz::schedule::segments(count, n)) {
        CAPTURE(count, n, s.first, s.count);
        REQUIRE((s.first % fmt::kScaleBlockElements == 0 || s.count == 0));
        for (int parts = 1; parts <= 4; ++parts) {
          for (int i = 0; i < parts; ++i) {
            const ncclz::schedule::segment p = ncclz::schedule::segment_of(s.count, parts, i);
            REQUIRE((p.first % fmt::kScaleBlockElements == 0 || p.count == 0));
          }
        }
      }
    }
  }
}
