// Host tests of the reference codec (ncclz/host/reference_codec.hpp): round trips of every
// built-in codec over float, double, __half and __nv_bfloat16, compression-ratio properties, and
// argument checks.
//
// Random inputs are fresh on every run; each test case prints its seed on failure. Rerun a
// failure with NCCLZ_TEST_SEED=<seed> to get the same inputs again.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/detail/validate.hpp"
#include "ncclz/error.hpp"
#include "ncclz/format.hpp"
#include "ncclz/host/reference_codec.hpp"

namespace {

namespace fmt = ncclz::format;
using AbsFixed = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using RelFixed = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using AbsRaw = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::Raw>>;
using RelRaw = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Raw>>;

template <class C, class V>
struct Case {
  using codec = C;
  using value = V;
};
using AbsFixedF32 = Case<AbsFixed, float>;
using AbsFixedF64 = Case<AbsFixed, double>;
using AbsFixedF16 = Case<AbsFixed, __half>;
using AbsFixedBF16 = Case<AbsFixed, __nv_bfloat16>;
using RelFixedF32 = Case<RelFixed, float>;
using RelFixedF64 = Case<RelFixed, double>;
using RelFixedF16 = Case<RelFixed, __half>;
using RelFixedBF16 = Case<RelFixed, __nv_bfloat16>;
using AbsRawF32 = Case<AbsRaw, float>;
using AbsRawF64 = Case<AbsRaw, double>;
using AbsRawF16 = Case<AbsRaw, __half>;
using AbsRawBF16 = Case<AbsRaw, __nv_bfloat16>;
using RelRawF32 = Case<RelRaw, float>;
using RelRawF64 = Case<RelRaw, double>;
using RelRawF16 = Case<RelRaw, __half>;
using RelRawBF16 = Case<RelRaw, __nv_bfloat16>;

using ncclz_test::fresh_seed;

using ncclz_test::bits_of;
using ncclz_test::bits_t;
using ncclz_test::from_bits;
using ncclz_test::from_double;
using ncclz_test::limits;
using ncclz_test::to_double;

/// A NaN with a random sign and payload (quiet or signalling): outliers must keep all of it.
template <class T>
T random_nan(std::mt19937_64& g) {
  using B = bits_t<T>;
  constexpr int mantissa = limits<T>::digits - 1;
  constexpr B exponent = ((B{1} << (sizeof(T) * 8 - 1 - mantissa)) - 1) << mantissa;
  B m = static_cast<B>(g()) & ((B{1} << mantissa) - 1);
  if (m == 0) m = 1;
  const B sign = (g() & 1u) ? B{1} << (sizeof(T) * 8 - 1) : B{0};
  return from_bits<T>(sign | exponent | m);
}

double log_uniform(std::mt19937_64& g, double lo_exp, double hi_exp) {
  return std::pow(10.0, std::uniform_real_distribution<double>(lo_exp, hi_exp)(g));
}

enum class input { smooth, noisy, constant, spiky, nonfinite, overflow, all_nan, random_bits };
constexpr input kAllInputs[] = {input::smooth,    input::noisy,    input::constant, input::spiky,
                                input::nonfinite, input::overflow, input::all_nan,  input::random_bits};

const char* name_of(input k) {
  switch (k) {
    case input::smooth: return "smooth";
    case input::noisy: return "noisy";
    case input::constant: return "constant";
    case input::spiky: return "spiky";
    case input::nonfinite: return "smooth with NaN/+Inf/-Inf";
    case input::overflow: return "overflow (~1e30)";
    case input::all_nan: return "all NaN";
    case input::random_bits: return "random bits";
  }
  return "?";
}

/// Random walk plus a sum of sines; `amplitude` is about its range.
template <class T>
std::vector<T> smooth(std::size_t n, double amplitude, std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> walk(0.0, amplitude * 1e-4);
  double freq[3], phase[3], amp[3];
  for (int k = 0; k < 3; ++k) {
    freq[k] = 2.0 * M_PI / (500.0 + 50000.0 * u(g));
    phase[k] = 2.0 * M_PI * u(g);
    amp[k] = amplitude * (0.1 + u(g)) / 3.0;
  }
  const double offset = amplitude * (u(g) - 0.5);
  std::vector<T> v(n);
  double w = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    w += walk(g);
    double s = offset + w;
    for (int k = 0; k < 3; ++k) s += amp[k] * std::sin(freq[k] * static_cast<double>(i) + phase[k]);
    v[i] = from_double<T>(s);
  }
  return v;
}

template <class T>
std::vector<T> make_input(input kind, std::size_t n, double amplitude, std::mt19937_64& g) {
  using L = limits<T>;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<T> v;
  switch (kind) {
    case input::smooth: return smooth<T>(n, amplitude, g);
    case input::noisy:
      v.resize(n);
      for (auto& x : v) x = from_double<T>(amplitude * (2.0 * u(g) - 1.0));
      return v;
    case input::constant: v.assign(n, from_double<T>(amplitude * (u(g) < 0.5 ? -1.0 : 1.0) * (0.5 + u(g)))); return v;
    case input::spiky:
      v = smooth<T>(n, amplitude, g);
      for (auto& x : v) {
        if (u(g) < 1e-3) x = from_double<T>(to_double(x) + amplitude * 1e6 * (u(g) < 0.5 ? -1.0 : 1.0));
      }
      return v;
    case input::nonfinite:
      v = smooth<T>(n, amplitude, g);
      for (auto& x : v) {
        const double r = u(g);
        if (r < 0.01) x = random_nan<T>(g);
        else if (r < 0.015) x = L::infinity();
        else if (r < 0.02) x = -L::infinity();
      }
      return v;
    case input::overflow:
      v.resize(n);
      for (auto& x : v) {
        // Mostly values near 1e30 (far past 2^30 steps of any small bound), some small ones.
        const double s = u(g) < 0.5 ? -1.0 : 1.0;
        x = from_double<T>(u(g) < 0.9 ? s * 1e30 * (1.0 + 9.0 * u(g)) : s * u(g));
      }
      return v;
    case input::all_nan:
      v.resize(n);
      for (auto& x : v) x = random_nan<T>(g);
      return v;
    case input::random_bits:
      // Finite magnitudes are kept below max / 4 so that hi - lo stays finite: the uncapped
      // case (a range that overflows) is the [extreme] test's.
      v.resize(n);
      for (auto& x : v) {
        x = from_bits<T>(static_cast<bits_t<T>>(g()));
        if (std::isfinite(to_double(x)) && std::fabs(to_double(x)) > to_double(L::max()) / 4) x = from_double<T>(std::ldexp(to_double(x), -4));
      }
      return v;
  }
  return v;
}

template <class T>
std::string describe(T x) {
  std::ostringstream s;
  s.precision(std::numeric_limits<double>::max_digits10);
  s << to_double(x) << " (bits 0x" << std::hex << bits_of(x) << ")";
  return s.str();
}

template <class Codec, class T>
std::vector<std::byte> compress(const std::vector<T>& v, double bound) {
  return ncclz::host::compress<Codec, T>(std::span<const T>(v), bound);
}

/// Compresses `in`, checks the stream's header, decompresses and checks every element. Returns
/// the stream size.
template <class Codec, class T>
std::size_t check_round_trip(const std::vector<T>& in, double bound) {
  using Q = typename Codec::quantizer;
  const std::vector<std::byte> stream = compress<Codec>(in, bound);
  const std::uint64_t n = in.size();
  CAPTURE(n, bound, stream.size());

  // The header: what parse_header reads must agree with the input and the codec.
  const fmt::chunk_header h = ncclz::detail::parse_header(stream.data(), stream.size());
  REQUIRE(stream.size() == h.payload_bytes + sizeof(fmt::chunk_header));
  REQUIRE(stream.size() <= fmt::max_chunk_bytes(n, sizeof(T)));
  REQUIRE(h.value_type == static_cast<std::uint8_t>(ncclz::dtype_of<T>()));
  REQUIRE(h.quantizer == static_cast<std::uint8_t>(Q::id));
  REQUIRE(h.coder == static_cast<std::uint8_t>(Codec::coder::id));
  REQUIRE(h.tile_elements == fmt::kTileElements);
  REQUIRE(h.tile_count == (n + fmt::kTileElements - 1) / fmt::kTileElements);
  REQUIRE(h.element_count == n);
  REQUIRE(h.bound == bound);
  // The error bound, computed here independently of find_range / make_params.
  double expected_eb = bound;
  if constexpr (Q::needs_range) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const T x : in) {
      if (std::isfinite(to_double(x))) {
        lo = std::min(lo, to_double(x));
        hi = std::max(hi, to_double(x));
      }
    }
    expected_eb = lo <= hi ? bound * (hi - lo) : 0.0;
  }
  REQUIRE(h.error_bound == expected_eb);
  const double eb = h.error_bound;

  // Sentinel: a NaN with a payload the inputs are unlikely to hold, so an element the decoder
  // never writes shows up.
  std::vector<T> out(n, from_bits<T>(static_cast<bits_t<T>>(~bits_t<T>{0} - 0x12)));
  ncclz::host::decompress<Codec, T>(stream, std::span<T>(out));

  const auto p = Q::template make_params<T>(bound, Q::needs_range ? ncclz::host::find_range<T>(in)
                                                                   : ncclz::value_range<T>::empty());
  REQUIRE(h.step == static_cast<double>(p.step));
  // Each tile's mode: a raw tile gives its values back bit for bit.
  std::vector<std::uint8_t> mode(h.tile_count);
  for (std::uint64_t t = 0; t < h.tile_count; ++t) {
    mode[t] = ncclz_test::tile_mode_of(stream, t);
    REQUIRE((mode[t] == static_cast<std::uint8_t>(ncclz::tile_mode::raw) ||
             (Codec::coder::codes_tiles && mode[t] == static_cast<std::uint8_t>(ncclz::tile_mode::fixed_length))));
  }
  for (std::uint64_t i = 0; i < n; ++i) {
    const T x = in[i], y = out[i];
    std::int32_t q = 0;
    const bool coded = Q::template quantize<T>(x, p, q);
    const char* problem = nullptr;
    if (mode[i / fmt::kTileElements] == static_cast<std::uint8_t>(ncclz::tile_mode::raw)) {
      if (bits_of(x) != bits_of(y)) problem = "raw tile: not bit-exact";
    } else if (std::isnan(to_double(x))) {
      if (!std::isnan(to_double(y))) problem = "NaN did not stay NaN";
      else if (bits_of(x) != bits_of(y)) problem = "NaN (an outlier) lost its bits";
    } else if (std::isinf(to_double(x))) {
      if (bits_of(x) != bits_of(y)) problem = "Inf did not stay the same Inf";
    } else if (!std::isfinite(to_double(y)) || !(std::fabs(to_double(x) - to_double(y)) <= eb)) {
      problem = "finite value outside the stream's error bound";
    } else if (!coded && bits_of(x) != bits_of(y)) {
      problem = "outlier not bit-exact";
    } else if (coded && bits_of(y) != bits_of(Q::template dequantize<T>(q, p))) {
      problem = "coded value is not dequantize(quantize(x))";
    }
    if (problem != nullptr) {
      INFO(problem << " at element " << i << " (tile " << i / fmt::kTileElements << "): in " << describe(x)
                   << ", out " << describe(y) << ", error bound " << eb << ", step " << h.step);
      REQUIRE(problem == nullptr);
    }
  }
  return stream.size();
}

double bound_for(bool relative, input kind, double amplitude, std::mt19937_64& g) {
  const double b = log_uniform(g, -7, -1);
  if (relative) return b;
  if (kind == input::overflow) return 1e-6;  // a tiny absolute bound: values ~1e30 overflow the codes
  return amplitude * b;
}

}  // namespace

TEMPLATE_TEST_CASE("host codec round trip: every element within the bound, non-finite and outliers exact",
                   "[codec][round_trip]", AbsFixedF32, AbsFixedF64, AbsFixedF16, AbsFixedBF16, RelFixedF32, RelFixedF64,
                   RelFixedF16, RelFixedBF16, AbsRawF32, AbsRawF64, AbsRawF16, AbsRawBF16, RelRawF32, RelRawF64, RelRawF16,
                   RelRawBF16) {
  using Codec = typename TestType::codec;
  using T = typename TestType::value;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  constexpr bool relative = Codec::quantizer::needs_range;
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{31}, std::size_t{32}, std::size_t{33},
                              std::size_t{8191}, std::size_t{8192}, std::size_t{8193}, (std::size_t{1} << 20) + 7}) {
    for (const input kind : kAllInputs) {
      const double amplitude = log_uniform(g, -3, 3);
      const double bound = bound_for(relative, kind, amplitude, g);
      const std::string kind_name = name_of(kind);
      CAPTURE(n, kind_name, amplitude, bound);
      const std::vector<T> in = make_input<T>(kind, n, amplitude, g);
      check_round_trip<Codec, T>(in, bound);
    }
  }
  // The bounds named in the brief, on a mid-sized smooth input.
  for (const double b : {1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7}) {
    const double amplitude = log_uniform(g, -3, 3);
    CAPTURE(b, amplitude);
    const std::vector<T> in = make_input<T>(input::nonfinite, 20000, amplitude, g);
    check_round_trip<Codec, T>(in, relative ? b : b * amplitude);
  }
}

TEMPLATE_TEST_CASE("host codec: compression ratios", "[codec][ratio]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const std::size_t n = std::size_t{1} << 20;
  const double raw_bytes = static_cast<double>(n * sizeof(T));

  // bf16's 8-bit significand is coarser than 1e-3 of a smooth field's range, so at REL 1e-3 its
  // codes are close to lossless; 16-bit constants pay the same width byte a block as 32-bit ones.
  const double smooth_ratio = std::is_same_v<T, __nv_bfloat16> ? 1.5 : 4.0;
  const double constant_ratio = sizeof(T) == 2 ? 50.0 : 100.0;
  SECTION("a smooth 1M-value field at REL 1e-3 compresses more than 4x (bf16: 1.5x)") {
    const std::vector<T> in = smooth<T>(n, log_uniform(g, -3, 3), g);
    const double ratio = raw_bytes / static_cast<double>(check_round_trip<RelFixed, T>(in, 1e-3));
    CAPTURE(ratio);
    REQUIRE(ratio > smooth_ratio);
  }
  SECTION("a constant input compresses more than 100x (16-bit types: 50x)") {
    const std::vector<T> in = make_input<T>(input::constant, n, log_uniform(g, -3, 3), g);
    const double rel_ratio = raw_bytes / static_cast<double>(check_round_trip<RelFixed, T>(in, 1e-3));
    const double abs_ratio = raw_bytes / static_cast<double>(check_round_trip<AbsFixed, T>(in, 1e-3));
    CAPTURE(rel_ratio, abs_ratio);
    REQUIRE(rel_ratio > constant_ratio);
    REQUIRE(abs_ratio > constant_ratio);
  }
  SECTION("noise and random bits never grow past max_chunk_bytes; uniform noise at REL 1e-7 keeps ratio >= 0.99") {
    const std::uint64_t most = fmt::max_chunk_bytes(n, sizeof(T));
    for (const input kind : {input::noisy, input::random_bits}) {
      const std::string kind_name = name_of(kind);
      CAPTURE(kind_name);
      const std::vector<T> in = make_input<T>(kind, n, 1.0, g);
      for (const double b : {1e-7, 1e-3}) {
        CAPTURE(b);
        const std::size_t rel_size = check_round_trip<RelFixed, T>(in, b);
        const std::size_t abs_size = check_round_trip<AbsFixed, T>(in, b);
        CAPTURE(rel_size, abs_size, most);
        REQUIRE(rel_size <= most);
        REQUIRE(abs_size <= most);
        REQUIRE(raw_bytes / static_cast<double>(rel_size) >= 0.99);
        REQUIRE(raw_bytes / static_cast<double>(abs_size) >= 0.99);
      }
    }
  }
  SECTION("the Raw coder always writes exactly max_chunk_bytes") {
    for (const std::size_t m : {std::size_t{0}, std::size_t{1}, std::size_t{8192}, std::size_t{8193}, n + 7}) {
      const std::vector<T> in = smooth<T>(m, 1.0, g);
      CAPTURE(m);
      REQUIRE(compress<AbsRaw>(in, 1e-3).size() == fmt::max_chunk_bytes(m, sizeof(T)));
      REQUIRE(compress<RelRaw>(in, 1e-3).size() == fmt::max_chunk_bytes(m, sizeof(T)));
    }
  }
}

TEMPLATE_TEST_CASE("host codec: an empty input is a bare header", "[codec]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::vector<T> none;
  const auto stream = compress<RelFixed>(none, 1e-3);
  REQUIRE(stream.size() == sizeof(fmt::chunk_header));
  const auto h = ncclz::detail::parse_header(stream.data(), stream.size());
  REQUIRE(h.element_count == 0);
  REQUIRE(h.tile_count == 0);
  REQUIRE(h.payload_bytes == 0);
  std::vector<T> out;
  REQUIRE_NOTHROW(ncclz::host::decompress<RelFixed, T>(stream, std::span<T>(out)));
}

TEMPLATE_TEST_CASE("host codec: every stream compress writes, decompress reads (extreme bounds and ranges)",
                   "[codec][extreme]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  using L = limits<T>;
  // Bounds validate_bound accepts, and ranges a caller can have, whose step does not fit the
  // element type (it rounds to 0 or overflows to infinity). The stream must still decode.
  const std::vector<T> small = {from_double<T>(0), from_double<T>(1), from_double<T>(-2), from_double<T>(0.5)};
  const std::vector<T> wide = {L::lowest(), from_double<T>(0), L::max()};
  const std::vector<T> subnormal = {from_double<T>(0), L::denorm_min(), from_double<T>(3 * to_double(L::denorm_min()))};
  struct trial {
    const char* what;
    const std::vector<T>* in;
    double bound;
    bool relative;
  };
  const trial trials[] = {
      {"ABS bound 1e300", &small, 1e300, false},
      {"ABS bound near DBL_MAX", &small, 1e308, false},
      {"ABS bound 1e-320", &small, 1e-320, false},
      {"ABS bound 1e-50", &small, 1e-50, false},
      {"REL bound 0.9 over [lowest, max]", &wide, 0.9, true},
      {"REL bound 1e-7 over subnormals", &subnormal, 1e-7, true},
  };
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  std::vector<T> bits(20000);  // random bits, uncapped: for double, hi - lo overflows (and for bf16, 2 * eb in float)
  for (auto& x : bits) x = from_bits<T>(static_cast<bits_t<T>>(g()));
  bits.push_back(L::lowest());
  bits.push_back(L::max());
  const trial more[] = {{"REL bound 1e-7 over random bits incl. lowest and max", &bits, 1e-7, true},
                        {"REL bound 1e-1 over random bits incl. lowest and max", &bits, 1e-1, true}};
  int failed = 0;
  for (const auto* list : {&trials[0], &more[0]}) {
    const std::size_t count = list == &trials[0] ? std::size(trials) : std::size(more);
    for (std::size_t k = 0; k < count; ++k) {
      const trial& t = list[k];
      CAPTURE(t.what);
      // One trial's exception must not hide the others.
      try {
        if (t.relative) check_round_trip<RelFixed, T>(*t.in, t.bound);
        else check_round_trip<AbsFixed, T>(*t.in, t.bound);
      } catch (const std::exception& e) {
        ++failed;
        FAIL_CHECK(t.what << ": " << e.what());
      }
    }
  }
  REQUIRE(failed == 0);
}

TEMPLATE_TEST_CASE("host codec: decompress rejects a mismatched output or codec with format_error", "[codec][errors]",
                   float, double, __half, __nv_bfloat16) {
  using T = TestType;
  // Another element type of the same width where there is one.
  using Other = std::conditional_t<std::is_same_v<T, float>, double,
                                   std::conditional_t<std::is_same_v<T, double>, float,
                                                      std::conditional_t<std::is_same_v<T, __half>, __nv_bfloat16, __half>>>;
  using Catch::Matchers::Contains;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const std::size_t n = 10000;
  const std::vector<T> in = smooth<T>(n, 1.0, g);
  const auto abs_stream = compress<AbsFixed>(in, 1e-3);
  const auto rel_stream = compress<RelFixed>(in, 1e-3);

  for (const std::size_t m : {std::size_t{0}, n - 1, n + 1, n + fmt::kTileElements}) {
    CAPTURE(m);
    std::vector<T> out(m);
    REQUIRE_THROWS_AS((ncclz::host::decompress<AbsFixed, T>(abs_stream, std::span<T>(out))), ncclz::format_error);
    REQUIRE_THROWS_WITH((ncclz::host::decompress<AbsFixed, T>(abs_stream, std::span<T>(out))), Contains("elements"));
  }
  {
    std::vector<Other> out(n);
    REQUIRE_THROWS_AS((ncclz::host::decompress<AbsFixed, Other>(abs_stream, std::span<Other>(out))),
                      ncclz::format_error);
    REQUIRE_THROWS_WITH((ncclz::host::decompress<AbsFixed, Other>(abs_stream, std::span<Other>(out))),
                        Contains(ncclz::detail::dtype_name(static_cast<std::uint8_t>(ncclz::dtype_of<T>()))));
  }
  {
    std::vector<T> out(n);
    REQUIRE_THROWS_AS((ncclz::host::decompress<RelFixed, T>(abs_stream, std::span<T>(out))), ncclz::format_error);
    REQUIRE_THROWS_WITH((ncclz::host::decompress<RelFixed, T>(abs_stream, std::span<T>(out))), Contains("quantizer"));
    REQUIRE_THROWS_AS((ncclz::host::decompress<AbsRaw, T>(rel_stream, std::span<T>(out))), ncclz::format_error);
    REQUIRE_THROWS_WITH((ncclz::host::decompress<AbsRaw, T>(rel_stream, std::span<T>(out))), Contains("quantizer"));
    // The right codec still reads both.
    REQUIRE_NOTHROW(ncclz::host::decompress<AbsFixed, T>(abs_stream, std::span<T>(out)));
    REQUIRE_NOTHROW(ncclz::host::decompress<RelFixed, T>(rel_stream, std::span<T>(out)));
  }
}

TEMPLATE_TEST_CASE("host codec: compress rejects a bad bound with invalid_argument", "[codec][errors]", float,
                   double, __half, __nv_bfloat16) {
  using T = TestType;
  using Catch::Matchers::Contains;
  const std::vector<T> in = {from_double<T>(1), from_double<T>(2), from_double<T>(3)};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const double bad : {0.0, -0.0, -1.0, -1e-7, nan, -nan, inf, -inf}) {
    CAPTURE(bad);
    REQUIRE_THROWS_AS(compress<AbsFixed>(in, bad), ncclz::invalid_argument);
    REQUIRE_THROWS_AS(compress<RelFixed>(in, bad), ncclz::invalid_argument);
    REQUIRE_THROWS_AS(compress<AbsRaw>(in, bad), ncclz::invalid_argument);
    REQUIRE_THROWS_AS(compress<RelRaw>(in, bad), ncclz::invalid_argument);
    REQUIRE_THROWS_WITH(compress<RelFixed>(in, bad), Contains("bound") && Contains("rel"));
    REQUIRE_THROWS_WITH(compress<AbsFixed>(in, bad), Contains("bound") && Contains("abs"));
  }
  // invalid_argument is an ncclz::error, and not a format_error.
  REQUIRE_THROWS_AS(compress<AbsFixed>(in, 0.0), ncclz::error);
  bool was_format_error = false;
  try {
    compress<AbsFixed>(in, 0.0);
  } catch (const ncclz::format_error&) {
    was_format_error = true;
  } catch (const ncclz::invalid_argument&) {
  }
  REQUIRE_FALSE(was_format_error);
}
