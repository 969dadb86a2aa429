// Host tests of the quantizer policies (ncclz/quantizer.hpp) and of the zig-zag mapping.
//
// Random inputs are fresh on every run; each test case prints its seed on failure. Rerun a
// failure with NCCLZ_TEST_SEED=<seed> to get the same inputs again.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ncclz/detail/sum_bound.hpp"
#include "ncclz/format.hpp"
#include "ncclz/host/reference_codec.hpp"  // host::find_range
#include "ncclz/quantizer.hpp"

namespace {

using ncclz::AbsBound;
using ncclz::compute_t;
using ncclz::Quantizer;
using ncclz::RelBound;
using ncclz::value_range;

using ncclz_test::fresh_seed;

constexpr double kCodeLimit = 1073741824.0;  // 2^30

using ncclz_test::bits_of;
using ncclz_test::bits_t;
using ncclz_test::from_bits;
using ncclz_test::from_double;
using ncclz_test::limits;
using ncclz_test::to_double;

/// The step make_params gives an absolute bound eb > 0: 2 * eb in the compute type, or for the
/// 16-bit types the largest power of two below 2 * eb.
template <class T>
compute_t<T> expected_step(double eb) {
  if constexpr (sizeof(T) == 2) return static_cast<float>(std::ldexp(1.0, std::ilogb(std::nextafter(2.0 * eb, 0.0))));
  else return static_cast<T>(2.0 * eb);
}

/// An absolute bound whose step is `step` (a power of two).
template <class T>
double bound_for_step(double step) {
  return sizeof(T) == 2 ? 0.75 * step : 0.5 * step;
}

/// Decimal exponents of the largest finite values, and the one of the data the random tests use.
template <class T>
constexpr double max_exp10() {
  if constexpr (std::is_same_v<T, double>) return 307;
  else if constexpr (std::is_same_v<T, __half>) return 4;
  else return 37;  // float, bf16
}

/// The element one unit in the last place nearer to zero than a finite non-zero x.
template <class T>
T toward_zero(T x) {
  return from_bits<T>(static_cast<bits_t<T>>(bits_of(x) - 1));
}

double log_uniform(std::mt19937_64& g, double lo_exp, double hi_exp) {
  return std::pow(10.0, std::uniform_real_distribution<double>(lo_exp, hi_exp)(g));
}

double random_sign(std::mt19937_64& g) { return (g() & 1u) ? -1.0 : 1.0; }

/// A value of the element type for which scaled * step is near a half step (the rounding edge)
/// or at a random place between codes.
template <class T>
T value_near_codes(std::mt19937_64& g, double step, double max_code) {
  const double k = std::floor(log_uniform(g, 0.0, std::log10(max_code)));
  double frac;
  switch (g() % 4) {
    case 0: frac = 0.5; break;                                                  // exactly half way
    case 1: frac = 0.5 + std::ldexp(1.0, -static_cast<int>(10 + g() % 40)); break;  // just past it
    case 2: frac = 0.5 - std::ldexp(1.0, -static_cast<int>(10 + g() % 40)); break;  // just before it
    default: frac = std::uniform_real_distribution<double>(0.0, 1.0)(g); break;
  }
  return from_double<T>(random_sign(g) * (k + frac) * step);
}

/// Quantizes `x` and checks everything the quantizer promises about an accepted value.
/// Returns whether it was accepted.
template <class Q, class T>
bool check_one(T x, const ncclz::quant_params<T>& p) {
  std::int32_t q = 0x5A5A5A5A;
  if (!Q::template quantize<T>(x, p, q)) return false;
  const T y = Q::template dequantize<T>(q, p);
  const double err = std::fabs(to_double(x) - to_double(y));
  if (!(err <= p.error_bound) || !(q > -kCodeLimit && q < kCodeLimit) || !std::isfinite(to_double(x))) {
    INFO("x = " << to_double(x) << " (bits 0x" << std::hex << bits_of(x) << std::dec << "), code " << q << ", decoded "
                << to_double(y) << ", |error| " << err << ", error bound " << p.error_bound << ", step " << p.step);
    CHECK(std::isfinite(to_double(x)));
    CHECK(err <= p.error_bound);
    CHECK(q > -kCodeLimit);
    CHECK(q < kCodeLimit);
  }
  return true;
}

}  // namespace

TEMPLATE_TEST_CASE("AbsBound::make_params: step is 2 * bound in the compute type (16-bit types: a power of two below it)",
                   "[quantizer]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  using C = compute_t<T>;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  std::vector<double> bounds = {1e-1, 1e-3, 1e-5, 1e-7, 0.5, 1.0, 3.0, 1e5};
  for (int i = 0; i < 200; ++i) bounds.push_back(log_uniform(g, -12, 12));
  for (const double bound : bounds) {
    CAPTURE(bound);
    const auto p = Quantizer<AbsBound>::make_params<T>(bound, value_range<T>::empty());
    REQUIRE(p.step == expected_step<T>(bound));
    if constexpr (sizeof(T) == 2) {  // at most one bit a value lost, and a half step below the bound
      int e = 0;
      REQUIRE(std::frexp(static_cast<double>(p.step), &e) == 0.5);
      REQUIRE(static_cast<double>(p.step) < 2.0 * bound);
      REQUIRE(static_cast<double>(p.step) >= bound);
    }
    REQUIRE(p.error_bound == bound);
    REQUIRE(p.bound == bound);
    REQUIRE(p.inv_step == C(1) / p.step);
    // The range is not read by an absolute bound.
    const auto q = Quantizer<AbsBound>::make_params<T>(bound, value_range<T>{C(-7), C(1000)});
    REQUIRE(bits_of(q.step) == bits_of(p.step));
    REQUIRE(q.error_bound == p.error_bound);
  }
}

TEMPLATE_TEST_CASE("RelBound::make_params: eb = bound * (hi - lo) of the finite values", "[quantizer]", float,
                   double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const double max_exp = max_exp10<T>() * 0.8;  // so that 2 * eb stays finite in the compute type
  for (int i = 0; i < 500; ++i) {
    const double bound = log_uniform(g, -7, -1);
    const double a = to_double(from_double<T>(random_sign(g) * log_uniform(g, -max_exp, max_exp)));
    const double b = to_double(from_double<T>(random_sign(g) * log_uniform(g, -max_exp, max_exp)));
    if (a == b) continue;
    const double lo = std::min(a, b), hi = std::max(a, b);
    CAPTURE(bound, lo, hi);
    const auto p = Quantizer<RelBound>::make_params<T>(bound, value_range<T>{static_cast<compute_t<T>>(lo), static_cast<compute_t<T>>(hi)});
    const double eb = bound * (hi - lo);
    REQUIRE(p.error_bound == eb);
    REQUIRE(p.bound == bound);
    REQUIRE(p.step == expected_step<T>(eb));
  }

  SECTION("the range comes from the finite values only") {
    using L = limits<T>;
    std::vector<T> v = {from_double<T>(3), L::quiet_NaN(), from_double<T>(-2), L::infinity(), from_double<T>(10),
                        from_double<T>(-to_double(L::infinity())), from_double<T>(0.5)};
    const auto r = ncclz::host::find_range<T>(v);
    REQUIRE(r.lo == -2);
    REQUIRE(r.hi == 10);
    const auto p = Quantizer<RelBound>::make_params<T>(1e-3, r);
    REQUIRE(p.error_bound == 1e-3 * 12.0);
    REQUIRE(p.step == expected_step<T>(1e-3 * 12.0));
  }
}

TEMPLATE_TEST_CASE("RelBound on a constant input is exact: eb 0 and every value codes with zero error",
                   "[quantizer]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  using L = limits<T>;
  // Normal numbers whose reciprocal is finite: every one of them must be a code.
  std::vector<T> constants = {from_double<T>(0),    from_double<T>(1),   from_double<T>(-1),
                              from_double<T>(0.1),  from_double<T>(-3.75), from_double<T>(1e4),
                              L::max(),             L::lowest(),         L::min(),
                              from_double<T>(-to_double(L::min())), from_double<T>(-0.0)};
  const double max_exp = max_exp10<T>();
  for (int i = 0; i < 500; ++i) constants.push_back(from_double<T>(random_sign(g) * log_uniform(g, -max_exp, max_exp)));
  for (const T c : constants) {
    CAPTURE(to_double(c));
    const auto r = value_range<T>{ncclz::to_compute(c), ncclz::to_compute(c)};
    for (const double bound : {1e-1, 1e-3, 1e-7}) {
      const auto p = Quantizer<RelBound>::make_params<T>(bound, r);
      REQUIRE(p.error_bound == 0.0);
      REQUIRE(p.step > 0);
      REQUIRE(std::isfinite(p.step));
      std::int32_t q = 0;
      REQUIRE(Quantizer<RelBound>::quantize<T>(c, p, q));
      REQUIRE(to_double(Quantizer<RelBound>::dequantize<T>(q, p)) == to_double(c));  // -0.0 may come back as +0.0: zero error
      REQUIRE(q > -kCodeLimit);
      REQUIRE(q < kCodeLimit);
    }
  }
  // A subnormal constant: its step has no finite reciprocal. Then the value may be an outlier
  // (stored bit for bit), but if it is coded it must be exact.
  for (const T c : {L::denorm_min(), from_double<T>(-3 * to_double(L::denorm_min())), from_double<T>(to_double(L::min()) / 4)}) {
    CAPTURE(to_double(c));
    const auto p = Quantizer<RelBound>::make_params<T>(1e-3, value_range<T>{ncclz::to_compute(c), ncclz::to_compute(c)});
    REQUIRE(p.error_bound == 0.0);
    std::int32_t q = 0;
    if (Quantizer<RelBound>::quantize<T>(c, p, q)) REQUIRE(to_double(Quantizer<RelBound>::dequantize<T>(q, p)) == to_double(c));
  }
}

TEMPLATE_TEST_CASE("RelBound without a finite value: every value is an outlier", "[quantizer]", float, double, __half,
                   __nv_bfloat16) {
  using T = TestType;
  using L = limits<T>;
  const auto negative = [](T x) { return from_bits<T>(static_cast<bits_t<T>>(bits_of(x) | bits_of(from_double<T>(-0.0)))); };
  const std::vector<T> v = {L::quiet_NaN(), L::infinity(), negative(L::infinity()), negative(L::quiet_NaN()), L::signaling_NaN()};
  const auto r = ncclz::host::find_range<T>(v);
  REQUIRE_FALSE(r.has_finite());
  REQUIRE_FALSE(value_range<T>::empty().has_finite());
  const auto p = Quantizer<RelBound>::make_params<T>(1e-2, r);
  REQUIRE(p.error_bound == 0.0);
  for (const T x : v) {
    std::int32_t q = 0;
    REQUIRE_FALSE(Quantizer<RelBound>::quantize<T>(x, p, q));
  }
}

TEMPLATE_TEST_CASE("value_range::merge keeps the smallest and largest", "[quantizer]", float, double, __half,
                   __nv_bfloat16) {
  using T = TestType;
  using C = compute_t<T>;
  auto r = value_range<T>::empty();
  r = r.merge({C(2), C(2)});
  REQUIRE(r.has_finite());
  REQUIRE(r.lo == C(2));
  REQUIRE(r.hi == C(2));
  r = r.merge({C(-5), C(1)}).merge({C(0), C(9)});
  REQUIRE(r.lo == C(-5));
  REQUIRE(r.hi == C(9));
  const auto e = value_range<T>::empty().merge(value_range<T>::empty());
  REQUIRE_FALSE(e.has_finite());
}

TEMPLATE_TEST_CASE("quantize rejects NaN, +-Inf and |x| / step >= 2^30", "[quantizer]", float, double, __half,
                   __nv_bfloat16) {
  using T = TestType;
  using L = limits<T>;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  // Well past the rounding of x * inv_step (and of x to T).
  const double rel = std::is_same_v<T, double> ? 1e-12 : (std::is_same_v<T, float> ? 1e-5 : 2e-2);
  const auto minus = [](double x) { return from_double<T>(-x); };
  for (int i = 0; i < 300; ++i) {
    const double bound = log_uniform(g, -7, -1) * log_uniform(g, -10, 10);
    const auto pa = Quantizer<AbsBound>::make_params<T>(bound, value_range<T>::empty());
    const double step = static_cast<double>(pa.step);
    CAPTURE(bound, step);
    std::vector<T> rejected = {L::quiet_NaN(), minus(to_double(L::quiet_NaN())), L::signaling_NaN(), L::infinity(),
                               minus(to_double(L::infinity()))};
    if (to_double(L::max()) >= kCodeLimit * step * (1.0 + rel)) {  // a 16-bit max may be few steps
      rejected.push_back(L::max());
      rejected.push_back(L::lowest());
    }
    for (const double k : {1.0 + rel, 1.5, 2.0, 1e3, 1e6}) {
      const double x = kCodeLimit * step * k;
      // Only where T holds x to better than `rel` (normal, finite).
      if (x < to_double(L::max()) && x >= to_double(L::min())) {
        rejected.push_back(from_double<T>(x));
        rejected.push_back(minus(x));
      }
    }
    for (const T x : rejected) {
      CAPTURE(to_double(x));
      std::int32_t q = 0;
      REQUIRE_FALSE(Quantizer<AbsBound>::quantize<T>(x, pa, q));
    }
  }
  // With a power-of-two step, x = 2^30 * step is exact: exactly the limit is rejected.
  for (const double step : {1.0, 0.25, 1024.0, std::ldexp(1.0, -20), std::ldexp(1.0, -27)}) {
    const auto p = Quantizer<AbsBound>::make_params<T>(bound_for_step<T>(step), value_range<T>::empty());
    REQUIRE(static_cast<double>(p.step) == step);
    std::int32_t q = 0;
    REQUIRE_FALSE(Quantizer<AbsBound>::quantize<T>(from_double<T>(kCodeLimit * step), p, q));
    REQUIRE_FALSE(Quantizer<AbsBound>::quantize<T>(minus(kCodeLimit * step), p, q));
  }
}

TEMPLATE_TEST_CASE("quantize: every accepted value decodes within the error bound", "[quantizer]", float, double,
                   __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  // Below this many steps from zero a value must code (x * inv_step is far from the edge of a
  // code); a float past 2^24 steps cannot even hold the code exactly. The 16-bit types' power-of-
  // two steps make every such value a code (or their decoded value a value of the type).
  const double sure_limit = std::is_same_v<T, double> ? 268435456.0 : 4096.0;
  // Data scales that keep the values (up to 100x the scale) finite in T.
  const double data_exp = std::is_same_v<T, double> ? 100 : (std::is_same_v<T, __half> ? 2 : 15);
  std::uint64_t tried = 0, accepted = 0, sure = 0, sure_accepted = 0;

  // `edge`: x was placed at or near a half step on purpose; it may then be an outlier.
  auto run = [&](auto quantizer, const ncclz::quant_params<T>& p, T x, bool edge) {
    using Q = decltype(quantizer);
    ++tried;
    const bool ok = check_one<Q, T>(x, p);
    accepted += ok;
    if (!edge && std::isfinite(to_double(x)) && std::fabs(to_double(x)) < sure_limit * static_cast<double>(p.step)) {
      ++sure;
      sure_accepted += ok;
    }
  };

  for (int round = 0; round < 600; ++round) {
    const double bound = log_uniform(g, -7, -1);
    const double scale = log_uniform(g, -data_exp, data_exp);
    CAPTURE(round, bound, scale);
    // Absolute bound, relative to the scale of the data.
    {
      const auto p = Quantizer<AbsBound>::make_params<T>(bound * scale, value_range<T>::empty());
      for (int i = 0; i < 300; ++i) run(Quantizer<AbsBound>{}, p, from_double<T>(random_sign(g) * scale * log_uniform(g, -9, 2)), false);
      for (int i = 0; i < 300; ++i) run(Quantizer<AbsBound>{}, p, value_near_codes<T>(g, static_cast<double>(p.step), 1e9), true);
    }
    // Relative bound over a random range [lo, hi] (sometimes straddling zero, sometimes not).
    {
      double lo = to_double(from_double<T>(scale * std::uniform_real_distribution<double>(-1.0, 1.0)(g)));
      double hi = to_double(from_double<T>(scale * std::uniform_real_distribution<double>(-1.0, 1.0)(g)));
      if (hi < lo) std::swap(lo, hi);
      if (lo == hi) hi = to_double(from_double<T>(lo + scale));
      std::vector<T> data;
      data.reserve(600);
      for (int i = 0; i < 300; ++i) data.push_back(from_double<T>(std::uniform_real_distribution<double>(lo, hi)(g)));
      data.push_back(from_double<T>(lo));
      data.push_back(from_double<T>(hi));
      const auto r = ncclz::host::find_range<T>(data);
      const auto p = Quantizer<RelBound>::make_params<T>(bound, r);
      REQUIRE(p.error_bound == bound * (static_cast<double>(r.hi) - static_cast<double>(r.lo)));
      for (const T x : data) run(Quantizer<RelBound>{}, p, x, false);
      for (int i = 0; i < 300; ++i) run(Quantizer<RelBound>{}, p, value_near_codes<T>(g, static_cast<double>(p.step), 1e9), true);
    }
  }
  INFO("tried " << tried << ", accepted " << accepted << "; well inside the code range: " << sure << ", accepted "
                << sure_accepted);
  // The quantizer must not get out of its job by calling everything an outlier.
  REQUIRE(sure > tried / 4);
  REQUIRE(static_cast<double>(sure_accepted) >= 0.99 * static_cast<double>(sure));
}

TEMPLATE_TEST_CASE("quantize: codes stay strictly inside (-2^30, 2^30) at the edge of the range", "[quantizer]",
                   float, double, __half, __nv_bfloat16) {
  using T = TestType;
  // Values whose scaled magnitude is just below 2^30: a rounding to nearest may carry them to
  // 2^30 itself, which the format excludes (a delta of two codes must fit an int32).
  for (const double step : {1.0, 2.0, 0.5, 3.0, 1e-3}) {
    const auto p = Quantizer<AbsBound>::make_params<T>(step / 2, value_range<T>::empty());
    const double s = static_cast<double>(p.step);
    for (const double below : {0.25, 0.5, 0.75, 1.0, 1.5, 64.0, 100.0}) {
      for (const double sign : {1.0, -1.0}) {
        const T x = from_double<T>(sign * (kCodeLimit - below) * s);  // Inf for __half: an outlier
        CAPTURE(step, below, sign, to_double(x));
        check_one<Quantizer<AbsBound>, T>(x, p);
      }
    }
    for (const double sign : {1.0, -1.0}) {
      const T x = toward_zero(from_double<T>(sign * kCodeLimit * s));
      CAPTURE(step, sign, to_double(x));
      check_one<Quantizer<AbsBound>, T>(x, p);
    }
  }
}

TEMPLATE_TEST_CASE("quantize: a value whose decoded value would round to Inf is an outlier", "[quantizer]", float, double,
                   __half, __nv_bfloat16) {
  using T = TestType;
  using L = limits<T>;
  // With a step of two units in the last place of the largest value, max / step is a half-way case
  // that rounds to an even code one past it: q * step is 2^emax, Inf in T (for __half, 65504 with
  // a step of 64 decodes to 65536).
  const double ulp_of_max = to_double(L::max()) - to_double(toward_zero(L::max()));
  const auto p = Quantizer<AbsBound>::make_params<T>(bound_for_step<T>(2 * ulp_of_max), value_range<T>::empty());
  REQUIRE(static_cast<double>(p.step) == 2 * ulp_of_max);
  std::int32_t q = 0;
  REQUIRE_FALSE(Quantizer<AbsBound>::quantize<T>(L::max(), p, q));
  REQUIRE_FALSE(Quantizer<AbsBound>::quantize<T>(L::lowest(), p, q));
  // Near the largest value and at larger steps: whatever is accepted decodes finite, within the bound.
  for (int k = 1; k < 12; ++k) {
    const auto pk = Quantizer<AbsBound>::make_params<T>(bound_for_step<T>(std::ldexp(ulp_of_max, k)), value_range<T>::empty());
    T x = L::max();
    for (int i = 0; i < 64; ++i, x = toward_zero(x)) {
      CAPTURE(k, to_double(x));
      check_one<Quantizer<AbsBound>, T>(x, pk);
    }
  }
}

TEMPLATE_TEST_CASE("dequantize is code * step, rounded to the element type", "[quantizer]", float, double, __half,
                   __nv_bfloat16) {
  using T = TestType;
  using C = compute_t<T>;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  for (int i = 0; i < 20000; ++i) {
    const auto p = Quantizer<AbsBound>::make_params<T>(log_uniform(g, -7, 3), value_range<T>::empty());
    // A code the quantizer can produce: rint of a value of the compute type, so it holds it exactly.
    const auto wide = static_cast<C>(std::uniform_int_distribution<std::int64_t>(-(1 << 30) + 1, (1 << 30) - 1)(g));
    if (!(std::fabs(wide) < C(kCodeLimit))) continue;
    // The 16-bit types: also codes of their own range, or most products would overflow them.
    const auto q = sizeof(T) == 2 ? static_cast<std::int32_t>(wide) >> (g() % 31) : static_cast<std::int32_t>(wide);
    CAPTURE(q, p.step);
    const T y = Quantizer<AbsBound>::dequantize<T>(q, p);
    // Within one unit in the last place of the exact product (long double holds q * step of a
    // float exactly, and that of a double to 2^-64); infinite only past the largest value.
    const long double exact = static_cast<long double>(q) * static_cast<long double>(p.step);
    const double magnitude = std::fabs(to_double(y));
    if (std::isinf(magnitude)) {
      REQUIRE(std::fabs(exact) > static_cast<long double>(to_double(limits<T>::max())));
      continue;
    }
    const double ulp = to_double(from_bits<T>(static_cast<bits_t<T>>(bits_of(from_double<T>(magnitude)) + 1))) - magnitude;
    REQUIRE(std::fabs(static_cast<long double>(to_double(y)) - exact) <= ulp);
    REQUIRE(bits_of(Quantizer<RelBound>::dequantize<T>(q, p)) == bits_of(y));
    REQUIRE(to_double(Quantizer<AbsBound>::dequantize<T>(-q, p)) == -to_double(y));
  }
  const auto p = Quantizer<AbsBound>::make_params<T>(bound_for_step<T>(1.0), value_range<T>::empty());
  REQUIRE(to_double(Quantizer<AbsBound>::dequantize<T>(0, p)) == 0.0);
  REQUIRE(to_double(Quantizer<AbsBound>::dequantize<T>(123, p)) == 123.0);
}

TEST_CASE("zigzag / unzigzag round trip, edge values included", "[format][zigzag]") {
  using ncclz::format::unzigzag;
  using ncclz::format::zigzag;
  constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
  constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
  static_assert(zigzag(0) == 0u && zigzag(-1) == 1u && zigzag(1) == 2u && zigzag(-2) == 3u);
  static_assert(zigzag(kMax) == 0xFFFFFFFEu && zigzag(kMin) == 0xFFFFFFFFu);
  static_assert(unzigzag(0xFFFFFFFFu) == kMin && unzigzag(0xFFFFFFFEu) == kMax);

  for (const std::int32_t v : {0, 1, -1, 2, -2, kMax, kMin, kMax - 1, kMin + 1, (1 << 30), -(1 << 30),
                               (1 << 30) - 1, -(1 << 30) + 1}) {
    CAPTURE(v);
    REQUIRE(unzigzag(zigzag(v)) == v);
    // Small magnitudes map to small codes: |v| <= zigzag(v) / 2 + 1.
    REQUIRE(zigzag(v) / 2 == (v < 0 ? static_cast<std::uint32_t>(-(static_cast<std::int64_t>(v) + 1))
                                     : static_cast<std::uint32_t>(v)));
  }
  for (const std::uint32_t u : {0u, 1u, 2u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu}) {
    CAPTURE(u);
    REQUIRE(zigzag(unzigzag(u)) == u);
  }
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  for (int i = 0; i < 200000; ++i) {
    const auto u = static_cast<std::uint32_t>(g());
    const auto v = static_cast<std::int32_t>(u);
    REQUIRE(zigzag(unzigzag(u)) == u);
    REQUIRE(unzigzag(zigzag(v)) == v);
    // zigzag is ordered by magnitude: the sign goes to bit 0.
    REQUIRE((zigzag(v) & 1u) == (v < 0 ? 1u : 0u));
  }
  // Every delta of two codes inside (-2^30, 2^30) survives the wrap-around arithmetic the coder
  // uses (delta as u32 difference, decode as u32 sum).
  for (int i = 0; i < 200000; ++i) {
    const auto a = static_cast<std::int32_t>(std::uniform_int_distribution<std::int64_t>(-(1 << 30) + 1, (1 << 30) - 1)(g));
    const auto b = static_cast<std::int32_t>(std::uniform_int_distribution<std::int64_t>(-(1 << 30) + 1, (1 << 30) - 1)(g));
    const auto delta = static_cast<std::int32_t>(static_cast<std::uint32_t>(b) - static_cast<std::uint32_t>(a));
    REQUIRE(static_cast<std::int64_t>(delta) == static_cast<std::int64_t>(b) - a);
    const auto back = static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(unzigzag(zigzag(delta))));
    REQUIRE(back == b);
  }
}

// ---- the split of a sum's bound (detail/sum_bound.hpp) ----------------------------------------

TEST_CASE("split_sum_bound: requantize only sums that move on, over 4 ranks or more, k a power of two <= n",
          "[quantizer][sum_bound]") {
  for (std::uint32_t n = 1; n <= 64; ++n) {
    CAPTURE(n);
    const auto kept = ncclz::detail::split_sum_bound(1.0, n, false);
    CHECK(kept.coarsen == 1);
    CHECK(kept.code_bound == 1.0 / n);
    CHECK(kept.units == n);
    const auto s = ncclz::detail::split_sum_bound(1.0, n, true);
    if (n < 4) {
      CHECK(s.coarsen == 1);
      CHECK(s.code_bound == 1.0 / n);
      continue;
    }
    CHECK((s.coarsen & (s.coarsen - 1)) == 0);
    CHECK(s.coarsen <= n);
    CHECK(2 * s.coarsen > n);
    CHECK(s.units == n + s.coarsen);
    CHECK(s.code_bound * s.units <= 1.0);
    CHECK(s.code_bound * s.units >= 1.0 - 2 * ncclz::detail::kSplitMargin);
  }
}

TEMPLATE_TEST_CASE("sum_requantizer: n ranks' codes summed and rounded k times coarser stay within the bound",
                   "[quantizer][sum_bound]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  using Q = Quantizer<RelBound>;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  // The arithmetic's own rounding, beside the bound: code * step rounds to T, and a code past 2^24
  // already rounds when it becomes a float (as without requantization): an ulp of the result.
  const auto ulp = [](T y) {
    const T a = from_double<T>(std::fabs(to_double(y)));
    return to_double(from_bits<T>(static_cast<bits_t<T>>(bits_of(a) + 1))) - to_double(a);
  };
  std::uint64_t checked = 0, rounded = 0, ties = 0;
  for (int round = 0; round < 300; ++round) {
    const auto n = static_cast<std::uint32_t>(4 + g() % 13);
    // Codes well below 2^24 (a float holds them exactly; past that each rank's q * step already
    // rounds by more than the bound leaves room for, with or without requantization).
    const double bound = log_uniform(g, -4, -1);
    const double scale = std::is_same_v<T, __half> ? log_uniform(g, -2, 1) : log_uniform(g, -6, 6);
    double lo = scale * std::uniform_real_distribution<double>(-1.0, 1.0)(g);
    double hi = scale * std::uniform_real_distribution<double>(-1.0, 1.0)(g);
    if (hi < lo) std::swap(lo, hi);
    const value_range<T> r{static_cast<compute_t<T>>(to_double(from_double<T>(lo))),
                           static_cast<compute_t<T>>(to_double(from_double<T>(hi)))};
    if (!(r.lo < r.hi) || hi - lo < 0.1 * std::max(std::fabs(lo), std::fabs(hi))) continue;
    CAPTURE(round, n, bound, scale, to_double(r.lo), to_double(r.hi));
    const auto split = ncclz::detail::split_sum_bound(bound, n, true);
    const ncclz::detail::sum_requantizer<Q, T> rq(split.code_bound, bound, n, split.coarsen, r);
    REQUIRE(rq.scaled);  // the coarse step is exactly k fine steps
    REQUIRE(rq.coarse.step == rq.fine.step * static_cast<compute_t<T>>(split.coarsen));
    // The margin: a tie (k / 2 fine steps away either way) is always allowed.
    std::int32_t coarse = 0;
    REQUIRE(rq.apply(static_cast<std::int32_t>(split.coarsen / 2), coarse));
    REQUIRE(rq.apply(-static_cast<std::int32_t>(split.coarsen / 2) - 3 * static_cast<std::int32_t>(split.coarsen), coarse));
    const double eb = bound * (static_cast<double>(r.hi) - static_cast<double>(r.lo));
    auto ranks_params = rq.fine;  // as quantize_kernel: |code| < 2^30 / n, so sums of n codes stay codes
    ranks_params.code_limit = static_cast<compute_t<T>>(std::floor(static_cast<double>(ranks_params.code_limit) / n));
    for (int e = 0; e < 200; ++e) {
      double exact = 0;
      std::int32_t sum = 0;
      bool outlier = false;
      for (std::uint32_t k = 0; k < n; ++k) {
        const T x = from_double<T>(std::uniform_real_distribution<double>(lo, hi)(g));
        std::int32_t q = 0;
        outlier |= !Q::quantize<T>(x, ranks_params, q);
        exact += to_double(x);
        sum += q;
      }
      if (outlier) continue;  // combined in T, not requantized
      ++checked;
      ties += std::abs(sum) % static_cast<std::int32_t>(split.coarsen) == static_cast<std::int32_t>(split.coarsen / 2);
      const bool ok = rq.apply(sum, coarse);
      rounded += ok;
      const T y = ok ? ncclz::from_compute<T>(ncclz::detail::mul_rn(static_cast<compute_t<T>>(coarse), rq.coarse.step))
                     : rq.value_of(sum);
      const double err = std::fabs(to_double(y) - exact);
      if (!(err <= eb + ulp(y))) {
        INFO("sum of codes " << sum << " -> " << coarse << (ok ? "" : " (kept)") << ", result " << to_double(y) << ", exact "
                             << exact << ", error " << err << ", bound " << eb);
        CHECK(err <= eb + ulp(y));
      }
    }
  }
  INFO("checked " << checked << ", rounded " << rounded << ", ties " << ties);
  CHECK(checked > 10000);
  CHECK(rounded == checked);  // every sum of codes rounds: the margin covers the step's rounding
  CHECK(ties > 0);
}

TEMPLATE_TEST_CASE("sum_requantizer: a constant input (step = its value) leaves the codes unchanged", "[quantizer][sum_bound]",
                   float, double, __half, __nv_bfloat16) {
  using T = TestType;
  const value_range<T> constant{static_cast<compute_t<T>>(3), static_cast<compute_t<T>>(3)};
  const ncclz::detail::sum_requantizer<Quantizer<RelBound>, T> rq(1e-3 / 8, 1e-3, 4, 4, constant);
  CHECK(rq.unchanged);
  CHECK(rq.coarse.step == rq.fine.step);
}
