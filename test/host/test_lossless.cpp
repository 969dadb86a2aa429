// Host tests of Quantizer<Lossless> (ncclz/quantizer.hpp): its code mapping is a bijection that
// returns every value's bits, and every host reference coder (fixed-length, raw, and the huffman
// and zero-run tile references) round-trips it bit for bit, NaN payloads, -0.0, subnormals and
// Inf included; the bound must be 0.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/host/huffman_reference.hpp"
#include "ncclz/host/reference_codec.hpp"
#include "ncclz/host/zero_run_reference.hpp"

namespace {

using ncclz::Lossless;
using ncclz::Quantizer;
using Q = Quantizer<Lossless>;
using LosslessFixed = ncclz::Codec<Q, ncclz::EntropyCoder<ncclz::FixedLength>>;
using LosslessRaw = ncclz::Codec<Q, ncclz::EntropyCoder<ncclz::Raw>>;
using ncclz_test::bits_of;
using ncclz_test::bits_t;
using ncclz_test::fresh_seed;
using ncclz_test::from_bits;

template <class T>
ncclz::quant_params<T> params() {
  return Q::make_params<T>(0.0, ncclz::value_range<T>::empty());
}

/// n values that must survive bit for bit: zeros of both signs, subnormals, the extremes, Inf, NaNs
/// with payloads and both signs, values around 2 (where the fp32 mapping shifts), and noise.
template <class T>
std::vector<T> special_values(std::mt19937_64& g, std::size_t n) {
  using B = bits_t<T>;
  constexpr B sign = B(B(1) << (8 * sizeof(T) - 1));
  const B exp_all = sizeof(T) == 2 ? (std::is_same_v<T, __half> ? B(0x7C00) : B(0x7F80))
                                   : (sizeof(T) == 4 ? B(0x7F800000u) : B(0x7FF0000000000000ull));
  const B two = sizeof(T) == 2 ? (std::is_same_v<T, __half> ? B(0x4000) : B(0x4000)) : (sizeof(T) == 4 ? B(0x40000000u) : B(0x4000000000000000ull));
  std::vector<B> b = {0, sign, 1, B(sign | 1), B(exp_all - 1), B(sign | (exp_all - 1)), exp_all, B(sign | exp_all),
                      B(exp_all + 1), B(sign | (exp_all + 1)), B(~B(0) >> 1), B(~B(0)), B((~B(0) >> 1) - 1), B(~B(0) - 1),
                      B(two - 1), two, B(two + 1), B(sign | (two - 1)), B(sign | two), B(sign | (two + 1))};
  std::vector<T> v;
  for (const B x : b) v.push_back(from_bits<T>(x));
  while (v.size() < n) v.push_back(from_bits<T>(static_cast<B>(g())));
  std::shuffle(v.begin(), v.end(), g);
  v.resize(n);  // n >= 20 keeps every special value
  return v;
}

template <class T>
void require_same_bits(std::span<const T> got, std::span<const T> want) {
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (bits_of(got[i]) != bits_of(want[i]) && bad++ == 0) first = i;
  CAPTURE(first);
  REQUIRE(bad == 0);
}

}  // namespace

TEMPLATE_TEST_CASE("lossless quantizer: every 16-bit pattern has its own code in 0..65535 and comes back", "[lossless]", __half,
                   __nv_bfloat16) {
  using T = TestType;
  const auto p = params<T>();
  std::vector<bool> seen(65536, false);
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const T x = from_bits<T>(static_cast<std::uint16_t>(b));
    std::int32_t q = -1;
    REQUIRE(Q::quantize<T>(x, p, q));
    REQUIRE(q >= 0);
    REQUIRE(q < 65536);
    REQUIRE_FALSE(seen[q]);
    seen[q] = true;
    REQUIRE(bits_of(Q::dequantize<T>(q, p)) == b);
  }
}

TEST_CASE("lossless quantizer: fp32 codes are the bits with the sign moved to bit 0; only NaN 0x7FFFFFFE is refused", "[lossless]") {
  const auto p = params<float>();
  const auto code = [&](std::uint32_t b) {
    std::int32_t q = 0;
    REQUIRE(Q::quantize<float>(from_bits<float>(b), p, q));
    REQUIRE(q != INT32_MIN);  // the device kernels' outlier mark
    REQUIRE(bits_of(Q::dequantize<float>(q, p)) == b);
    return static_cast<std::uint32_t>(q);
  };
  REQUIRE(code(0x00000000u) == 0u);  // 0.0
  REQUIRE(code(0x80000000u) == 1u);  // -0.0
  REQUIRE(code(0x3F800000u) == 0x7F000000u);  // 1.0
  REQUIRE(code(0xBF800000u) == 0x7F000001u);  // -1.0
  REQUIRE(code(0x3FFFFFFFu) == 0x7FFFFFFEu);  // just below 2
  REQUIRE(code(0x40000000u) == 0x80000002u);  // 2.0: shifted up by one magnitude
  REQUIRE(code(0x7F800000u) == 0xFF000002u);  // Inf
  REQUIRE(code(0x7FFFFFFFu) == 0xFFFFFFFEu);  // CUDA's NaN
  REQUIRE(code(0xFFFFFFFFu) == 0xFFFFFFFFu);
  REQUIRE(code(0xFFFFFFFEu) == 0x80000001u);  // -NaN 0x3FFFFE sits next to the reserved code
  std::int32_t q = 0;
  REQUIRE_FALSE(Q::quantize<float>(from_bits<float>(Q::kOutlierBits), p, q));

  // A sweep of the whole pattern space (every 9973rd, plus the neighbourhood of every edge): the
  // inverse returns the bits, so the mapping is injective; codes are distinct as 32-bit words.
  std::vector<std::uint32_t> patterns;
  for (std::uint64_t b = 0; b <= 0xFFFFFFFFull; b += 9973) patterns.push_back(static_cast<std::uint32_t>(b));
  for (const std::uint32_t edge : {0x00000000u, 0x00800000u, 0x3FFFFFFFu, 0x40000000u, 0x7F800000u, 0x7FFFFFFCu})
    for (std::uint32_t d = 0; d < 4; ++d) {
      patterns.push_back(edge + d);
      patterns.push_back((edge + d) | 0x80000000u);
    }
  for (const std::uint32_t b : patterns) {
    if (b == Q::kOutlierBits) continue;
    CAPTURE(b);
    code(b);
  }
}

TEST_CASE("lossless quantizer: double is never a code (stored raw)", "[lossless]") {
  std::int32_t q = 7;
  REQUIRE_FALSE(Q::quantize<double>(1.0, params<double>(), q));
  REQUIRE_FALSE(Q::quantize<double>(0.0, params<double>(), q));
}

TEMPLATE_TEST_CASE("lossless host codec: bit-exact round trip, header says lossless with error bound 0", "[lossless][codec]", float,
                   double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{33}, std::size_t{8192}, std::size_t{8193}, std::size_t{70001}}) {
    CAPTURE(n);
    std::vector<T> in = n < 20 ? std::vector<T>(n, from_bits<T>(bits_t<T>(0x1234))) : special_values<T>(g, n);
    if (n > 1000) {  // a smooth stretch too, so that some tiles are coded rather than raw
      for (std::size_t i = 0; i < 8192; ++i) in[i] = ncclz::from_compute<T>(static_cast<ncclz::compute_t<T>>(std::sin(i * 1e-3)));
    }
    for (const bool raw_coder : {false, true}) {
      const std::vector<std::byte> chunk = raw_coder ? ncclz::host::compress<LosslessRaw>(std::span<const T>(in), 0.0)
                                                     : ncclz::host::compress<LosslessFixed>(std::span<const T>(in), 0.0);
      const ncclz::format::chunk_header h = ncclz::detail::parse_header(chunk.data(), chunk.size());
      REQUIRE(h.quantizer == 3);
      REQUIRE(h.error_bound == 0.0);
      REQUIRE(h.bound == 0.0);
      REQUIRE(chunk.size() <= ncclz::format::max_chunk_bytes(n, sizeof(T)));
      std::vector<T> out(n, from_bits<T>(bits_t<T>(0x5555)));
      if (raw_coder) ncclz::host::decompress<LosslessRaw>(chunk, std::span<T>(out));
      else ncclz::host::decompress<LosslessFixed>(chunk, std::span<T>(out));
      require_same_bits<T>(out, in);
      if (!raw_coder && n > 1000 && sizeof(T) <= 4) {
        // The smooth tile is coded, not raw (its deltas are narrow).
        const std::uint32_t first_tile = ncclz::host::detail::get<std::uint32_t>(chunk, sizeof h) * 8u;
        REQUIRE(static_cast<int>(chunk[sizeof h + first_tile]) == 1);
      }
      if constexpr (std::is_same_v<T, double>) {
        REQUIRE(chunk.size() == ncclz::format::max_chunk_bytes(n, sizeof(T)));  // every tile raw
      }
    }
  }
}

TEMPLATE_TEST_CASE("lossless: the huffman and zero-run tile references round-trip lossless codes bit for bit", "[lossless][codec]",
                   float, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const auto p = params<T>();
  std::normal_distribution<float> normal;
  for (const std::size_t n : {std::size_t{1}, std::size_t{300}, std::size_t{8192}}) {
    CAPTURE(n);
    std::vector<T> in = special_values<T>(g, n);
    std::vector<T> grads(n);  // gradient-like: Gaussian of a random scale, a third exactly 0
    for (auto& x : grads) x = ncclz::from_compute<T>(g() % 3 == 0 ? 0.0f : 1e-3f * normal(g));
    for (const std::vector<T>* values : {&in, &grads}) {
      const std::span<const T> v(*values);
      std::vector<T> out(n);
      const std::vector<std::byte> h = ncclz::host::detail::huffman::encode_tile<LosslessFixed, T>(v, p);
      ncclz::host::detail::huffman::decode_tile<LosslessFixed, T>(h, 0, p, std::span<T>(out));
      require_same_bits<T>(out, v);
      const std::vector<std::byte> z = ncclz::host::detail::zero_run::encode_tile<LosslessFixed, T>(v, p);
      ncclz::host::detail::zero_run::decode_tile<LosslessFixed, T>(z, 0, p, std::span<T>(out));
      require_same_bits<T>(out, v);
    }
  }
}

TEMPLATE_TEST_CASE("lossless: any bound but 0 is refused, saying so", "[lossless][errors]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  using Catch::Matchers::Contains;
  const std::vector<T> in(10, from_bits<T>(bits_t<T>(0x3C00)));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const double bad : {1e-3, -1.0, 1e-30, nan, std::numeric_limits<double>::infinity()}) {
    CAPTURE(bad);
    REQUIRE_THROWS_AS(ncclz::host::compress<LosslessFixed>(std::span<const T>(in), bad), ncclz::invalid_argument);
    REQUIRE_THROWS_WITH(ncclz::host::compress<LosslessFixed>(std::span<const T>(in), bad),
                        Contains("lossless") && Contains("bound 0"));
  }
  REQUIRE_NOTHROW(ncclz::host::compress<LosslessFixed>(std::span<const T>(in), -0.0));  // -0.0 == 0
  // ... and the other quantizers still refuse 0.
  using AbsFixed = ncclz::Codec<Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
  REQUIRE_THROWS_AS(ncclz::host::compress<AbsFixed>(std::span<const T>(in), 0.0), ncclz::invalid_argument);
}

TEST_CASE("lossless: a chunk of another quantizer is refused, and a lossless chunk by the others", "[lossless][errors]") {
  using AbsFixed = ncclz::Codec<Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
  const std::vector<float> in = {1.0f, 2.0f, -3.0f};
  std::vector<float> out(3);
  const auto lossless = ncclz::host::compress<LosslessFixed>(std::span<const float>(in), 0.0);
  const auto abs = ncclz::host::compress<AbsFixed>(std::span<const float>(in), 1e-3);
  REQUIRE_THROWS_AS(ncclz::host::decompress<AbsFixed>(lossless, std::span<float>(out)), ncclz::format_error);
  REQUIRE_THROWS_AS(ncclz::host::decompress<LosslessFixed>(abs, std::span<float>(out)), ncclz::format_error);
}
