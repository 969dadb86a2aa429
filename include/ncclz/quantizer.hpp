// Quantizer policies: float values <-> integer codes, once, at the interface.
//
//   using Q = ncclz::Quantizer<ncclz::RelBound>;   // or ncclz::Quantizer<ncclz::AbsBound>
//
// A code is q = rint(x / step) with step = 2 * eb, so |x - q * step| <= eb. The quantizer checks
// that inequality for every value, on the value the decoder will write (q * step rounded to the
// element type); a value that fails it (NaN, +-Inf, |x| / step >= 2^30, or a rounding case at the
// edge) is an *outlier* and is carried bit for bit beside the codes, never clipped. Host and
// device run this same code, so a stream made on either side decodes identically on the other.
//
// __half and __nv_bfloat16 are quantized in float (compute_t<T>): a 16-bit type cannot hold a
// code near 2^30, and float holds each of their values exactly. Their step is a power of two
// below 2 * eb (see params_for), so that rounding the decoded value to 16 bits rarely costs an
// outlier.
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ncclz/config.hpp"
#include "ncclz/format.hpp"

namespace ncclz {

/// The smallest and largest finite values of an input of T (NaN and +-Inf are left out), held in
/// the compute type. An input without a finite value has lo = +inf, hi = -inf.
template <class T>
struct value_range {
  compute_t<T> lo;
  compute_t<T> hi;
  NCCLZ_HOST_DEVICE static constexpr value_range empty() {
    return {std::numeric_limits<compute_t<T>>::infinity(), -std::numeric_limits<compute_t<T>>::infinity()};
  }
  NCCLZ_HOST_DEVICE constexpr value_range merge(value_range o) const {
    return {o.lo < lo ? o.lo : lo, o.hi > hi ? o.hi : hi};
  }
  NCCLZ_HOST_DEVICE constexpr bool has_finite() const { return lo <= hi; }
};

/// What the quantizer applies to one chunk; computed once (on the device for RelBound). The
/// fields are of the compute type (float for the 16-bit element types).
template <class T>
struct quant_params {
  compute_t<T> step;        ///< code unit
  compute_t<T> inv_step;    ///< 1 / step, rounded; 0 when the bound is out of the type's reach (every code is 0)
  compute_t<T> max_error;   ///< the largest error the compute-type check accepts (strictly below error_bound)
  compute_t<T> code_limit;  ///< codes stay strictly inside (-code_limit, code_limit); at most 2^30
  double error_bound;  ///< the absolute bound every decoded value keeps
  double bound;        ///< what the caller asked for
};

namespace detail {
/// A product rounded on its own: never fused into a neighbouring add, so device and host (built
/// with -ffp-contract=off, see meson.build) compute the same bits.
template <class T>
NCCLZ_HOST_DEVICE inline T mul_rn(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

template <class T>
NCCLZ_HOST_DEVICE inline T next_toward_zero(T v) {
  if constexpr (std::is_same_v<T, float>) return nextafterf(v, 0.0f);
  else return nextafter(v, 0.0);
}

template <class T>
NCCLZ_HOST_DEVICE inline T round_half_even(T v) {
  if constexpr (std::is_same_v<T, float>) return rintf(v);
  else return rint(v);
}

/// Turns an absolute bound into a step. `lossless_scale` is used when eb == 0: a step for which
/// the one finite value there is (a constant input) is a code, so constants stay exact.
template <class E>
NCCLZ_HOST_DEVICE inline quant_params<E> params_for(double eb, double bound, double lossless_scale) {
  using T = compute_t<E>;
  quant_params<E> p{};
  p.error_bound = eb;
  p.bound = bound;
  p.code_limit = static_cast<T>(format::kMaxCodeMagnitude);
  double step = eb > 0.0 ? 2.0 * eb : (lossless_scale != 0.0 ? fabs(lossless_scale) : 1.0);
  if constexpr (sizeof(E) == 2) {
    // A 16-bit value has so few digits that q * step, rounded to it, would often miss x by more
    // than eb when step is a few of its spacings (up to a third of a binade became outliers). A
    // power-of-two step below 2 * eb (1 bit a value more at worst) lines codes up with the
    // values: q * step is a value of the type where codes are coarser than its spacing, x is a
    // code where they are finer, and a half step stays below eb (no ties at the threshold).
    if (eb > 0.0 && step <= 1.7976931348623157e308) step = ldexp(1.0, ilogb(nextafter(step, 0.0)));
  }
  p.step = static_cast<T>(step);
  const bool usable = p.step > T(0) && p.step <= std::numeric_limits<T>::max();
  p.inv_step = usable ? T(1) / p.step : T(0);
  // The quantizer checks |x - y| in the compute type, y the decoded value. Rounding to nearest is
  // monotone, so a computed error at most one value below eb-rounded-down means the true error is
  // at most eb-rounded-down, whether the subtraction was exact (Sterbenz, for float and double)
  // or not (a 16-bit x and a y far apart).
  T below = static_cast<T>(eb);
  if (static_cast<double>(below) > eb) below = next_toward_zero(below);
  p.max_error = below > T(0) ? next_toward_zero(below) : T(0);
  if (!usable || !(p.inv_step <= std::numeric_limits<T>::max())) {
    // The bound is out of the element type's reach (a step that is 0, subnormal-inverse or Inf):
    // every value codes as 0 and is kept only if 0 is within the bound, else it is an outlier.
    p.step = T(1);
    p.inv_step = T(0);
  }
  return p;
}
}  // namespace detail

/// Error bound tag: `bound` is an absolute error, the same unit as the data.
struct AbsBound {
  static constexpr quantizer_id id = quantizer_id::abs;
  static constexpr bool needs_range = false;
  static constexpr const char* name = "abs";
};

/// Error bound tag: `bound` is relative to the value range R = max - min of the finite values of
/// the input (of all ranks' inputs, in a collective); eb = bound * R. An input whose finite values
/// are all equal (R = 0) is coded exactly.
struct RelBound {
  static constexpr quantizer_id id = quantizer_id::rel;
  static constexpr bool needs_range = true;
  static constexpr const char* name = "rel";
};

/// Tag: no quantization. Every value's bits are coded, so every decoded value is bit-identical
/// (NaN payloads, -0.0, subnormals and Inf included); the bound argument must be 0. See
/// Quantizer<Lossless> below.
struct Lossless {
  static constexpr quantizer_id id = quantizer_id::lossless;
  static constexpr bool needs_range = false;
  static constexpr const char* name = "lossless";
};

/// Fixed-rate tag, for ML collectives (gradients, activations): every value becomes a code of at
/// most Bits bits, sign included (|q| <= 2^(Bits-1) - 1), with one step per scale block of 1024
/// consecutive values (format::kScaleBlockElements): step = m / (2^(Bits-1) - 1), m the largest
/// |x| over the block's finite values, so |x - q * step| <= step / 2. In a collective, m is taken
/// over all ranks' inputs (one small ncclMax allreduce of block maxima), so every rank codes with
/// the same steps and codes add exactly. The `bound` argument is Bits (or 0); the chunk carries
/// its steps (docs/format.md, "Step table").
template <int Bits>
struct FixedRate {
  static_assert(Bits == 4 || Bits == 8,
                "ncclz::FixedRate<Bits>: Bits must be 8 or 4 (codes in int8 / int4 range); for another precision use "
                "ncclz::Quantizer<ncclz::AbsBound> or ncclz::Quantizer<ncclz::RelBound>");
  static constexpr int bits = Bits;
  static constexpr quantizer_id id = quantizer_id::fixed_rate;
  static constexpr bool needs_range = false;
  static constexpr const char* name = Bits == 8 ? "fixed8" : "fixed4";
};

/// Whether a quantizer has one step per scale block (`static constexpr bool blockwise = true`,
/// FixedRate) rather than one per chunk. The kernels check it with `if constexpr`; a policy
/// without the member is not blockwise.
template <class Q>
inline constexpr bool is_blockwise_v = requires { requires Q::blockwise; };

template <class ErrorBound>
struct Quantizer {
  static_assert(std::is_same_v<ErrorBound, AbsBound> || std::is_same_v<ErrorBound, RelBound>,
                "ncclz::Quantizer<ErrorBound>: ErrorBound must be ncclz::AbsBound, ncclz::RelBound, ncclz::Lossless or "
                "ncclz::FixedRate<8> / ncclz::FixedRate<4>");
  using error_bound = ErrorBound;
  static constexpr quantizer_id id = ErrorBound::id;
  static constexpr bool needs_range = ErrorBound::needs_range;
  static constexpr const char* name = ErrorBound::name;

  /// Parameters for a chunk; `range` is read only when needs_range.
  template <class T>
  NCCLZ_HOST_DEVICE static quant_params<T> make_params(double bound, value_range<T> range) {
    if constexpr (needs_range) {
      if (!range.has_finite()) return detail::params_for<T>(0.0, bound, 0.0);
      const double r = static_cast<double>(range.hi) - static_cast<double>(range.lo);
      return detail::params_for<T>(bound * r, bound, static_cast<double>(range.hi));
    } else {
      return detail::params_for<T>(bound, bound, 0.0);
    }
  }

  /// Writes the code of x to q and returns true, or returns false for an outlier.
  template <class T>
  NCCLZ_HOST_DEVICE static bool quantize(T x, const quant_params<T>& p, std::int32_t& q) {
    using C = compute_t<T>;
    const C v = to_compute(x);
    const C rounded = detail::round_half_even(detail::mul_rn(v, p.inv_step));
    if (!(rounded < p.code_limit && rounded > -p.code_limit)) return false;  // NaN too
    // rounded == C(q) exactly, so this is the value dequantize(q) writes, rounded to T (an
    // identity for float and double): the bound is checked on what the decoder produces.
    const C decoded = to_compute(from_compute<T>(detail::mul_rn(rounded, p.step)));
    const C err = v - decoded;
    if (!(err <= p.max_error && -err <= p.max_error)) return false;  // an Inf decoded value too
    q = static_cast<std::int32_t>(rounded);
    return true;
  }

  /// q * step in the compute type, rounded once to T. Codes come from rounded values of the
  /// compute type, so its q is exact.
  template <class T>
  NCCLZ_HOST_DEVICE static T dequantize(std::int32_t q, const quant_params<T>& p) {
    return from_compute<T>(detail::mul_rn(static_cast<compute_t<T>>(q), p.step));
  }
};

/// The lossless quantizer: a value's code is its bits, rearranged, so dequantize(quantize(x)) has
/// x's bits exactly. For float, __half and __nv_bfloat16 it is a bijection onto int32 codes; a
/// double cannot fit a 32-bit code, so every double is an outlier and its tiles come out raw: an
/// exact pass-through (the chunk costs its headers, ~20 B per 8192 values, and saves nothing).
///
/// The mapping (measured with the host references, docs/format.md "Quantizer" and "Lossless ratios"):
/// with `mag` the bits without the sign and `s` the sign bit, code = (mag << 1) | s, as 32 bits
/// (16-bit types: zero-extended, so codes of 0..65535). Why:
///   - Tiles code deltas of consecutive codes. Gradients change sign from one value to the next
///     about half the time; with the sign in the low bit, x and -x are one code apart and a delta
///     costs the magnitudes' difference plus one bit. Codes ordered like the values (-mag-1 for a
///     negative) make every sign change a delta of about 2 x mag: ~31 bits for fp32. On
///     gradient-like data (ncclz-lossless-study --synthetic) fixed-length tiles came out 1.24x
///     smaller (fp32) and 1.43x (bf16) with this mapping, 1.09x and 1.08x with ordered codes or
///     the raw bits; host Huffman tiles 1.27x / 1.50x against at most 1.17x / 1.25x.
///   - Exponent above mantissa: values of similar size have close codes (the delta is mostly
///     mantissa bits, the width follows the binades a block spans); the mantissa above would make
///     every delta 32 bits wide.
///   - 0.0 codes as 0 and -0.0 as 1: runs of zeros (dead units' gradients) are runs of code 0 and
///     delta 0.
/// Deltas are taken modulo 2^32 by the coders, so codes use the whole int32 range. The one code
/// the device kernels reserve (INT32_MIN marks an outlier in their staging) would be 2.0f; the
/// fp32 magnitudes from 2.0 up to the NaNs are therefore shifted up by one, and the one pattern
/// left on INT32_MIN, the NaN 0x7FFFFFFE (+, payload 0x3FFFFE, which no arithmetic produces;
/// CUDA's NaN is 0x7FFFFFFF), is the only value quantize refuses: it is stored as an outlier,
/// bit exact like everything else.
template <>
struct Quantizer<Lossless> {
  using error_bound = Lossless;
  static constexpr quantizer_id id = quantizer_id::lossless;
  static constexpr bool needs_range = false;
  static constexpr const char* name = "lossless";
  /// The fp32 pattern left on the kernels' reserved code (see above).
  static constexpr std::uint32_t kOutlierBits = 0x7FFFFFFEu;

  /// fp32 magnitudes 2.0 .. 0x7FFFFFFD move up by one, 0x7FFFFFFE takes 2.0's place 0x40000000
  /// (whose code with sign 0 is INT32_MIN), 0x7FFFFFFF stays: a bijection of the top half.
  NCCLZ_HOST_DEVICE static constexpr std::uint32_t shift_magnitude(std::uint32_t mag) {
    if (mag < 0x40000000u || mag == 0x7FFFFFFFu) return mag;
    return mag == kOutlierBits ? 0x40000000u : mag + 1u;
  }
  NCCLZ_HOST_DEVICE static constexpr std::uint32_t unshift_magnitude(std::uint32_t h) {
    if (h < 0x40000000u || h == 0x7FFFFFFFu) return h;
    return h == 0x40000000u ? kOutlierBits : h - 1u;
  }

  /// step 1 (a chunk header needs a positive step; decoding ignores it), error_bound 0.
  template <class T>
  NCCLZ_HOST_DEVICE static quant_params<T> make_params(double bound, value_range<T>) {
    quant_params<T> p{};
    p.step = compute_t<T>(1);
    p.inv_step = compute_t<T>(1);
    p.max_error = compute_t<T>(0);
    p.code_limit = static_cast<compute_t<T>>(format::kMaxCodeMagnitude);  // not used: codes are the bits
    p.error_bound = 0.0;
    p.bound = bound;
    return p;
  }

  template <class T>
  NCCLZ_HOST_DEVICE static bool quantize(T x, const quant_params<T>&, std::int32_t& q) {
    if constexpr (sizeof(T) == 2) {
      std::uint16_t b;
      memcpy(&b, &x, sizeof b);
      q = static_cast<std::int32_t>((static_cast<std::uint32_t>(b & 0x7FFFu) << 1) | (b >> 15));
      return true;
    } else if constexpr (sizeof(T) == 4) {
      std::uint32_t b;
      memcpy(&b, &x, sizeof b);
      if (b == kOutlierBits) return false;  // its code would be the reserved INT32_MIN
      q = static_cast<std::int32_t>((shift_magnitude(b & 0x7FFFFFFFu) << 1) | (b >> 31));
      return true;
    } else {
      return false;  // double: 64 bits do not fit a code; stored exactly (raw tiles)
    }
  }

  template <class T>
  NCCLZ_HOST_DEVICE static T dequantize(std::int32_t q, const quant_params<T>&) {
    const auto u = static_cast<std::uint32_t>(q);
    T x{};
    if constexpr (sizeof(T) == 2) {
      const auto b = static_cast<std::uint16_t>(((u & 1u) << 15) | ((u >> 1) & 0x7FFFu));
      memcpy(static_cast<void*>(&x), &b, sizeof b);
    } else if constexpr (sizeof(T) == 4) {
      const std::uint32_t b = ((u & 1u) << 31) | unshift_magnitude(u >> 1);
      memcpy(static_cast<void*>(&x), &b, sizeof b);
    }
    return x;  // double: never a code (all outliers)
  }
};

/// Fixed-rate codes with a step per scale block (see FixedRate). The kernels call
/// block_params(m) once per block of 1024 values; quantize and dequantize are AbsBound's, applied
/// with the block's parameters.
template <int Bits>
struct Quantizer<FixedRate<Bits>> {
  using error_bound = FixedRate<Bits>;
  static constexpr quantizer_id id = quantizer_id::fixed_rate;
  static constexpr bool needs_range = false;
  static constexpr bool blockwise = true;
  static constexpr int bits = Bits;
  /// Codes lie in [-max_code, max_code].
  static constexpr std::int32_t max_code = (1 << (Bits - 1)) - 1;
  static constexpr const char* name = FixedRate<Bits>::name;

  /// The step of a block whose largest finite |x| is `block_max` (0 for a block without a nonzero
  /// finite value), in the compute type. f32 and f64: block_max / max_code, computed in double and
  /// rounded once. f16 and bf16: the smallest power of two at or above that: q * step rounded to
  /// 16 bits would otherwise miss x by up to half a 16-bit spacing on top of step / 2 (bf16 has
  /// about as many digits as an 8-bit code, so most values near m would become outliers); a power
  /// of two makes every q * step a 16-bit value. Codes stay within max_code either way.
  template <class T>
  NCCLZ_HOST_DEVICE static compute_t<T> block_step(double block_max) {
    if (!(block_max > 0.0)) return compute_t<T>(0);
    double step = block_max / static_cast<double>(max_code);
    if constexpr (sizeof(T) == 2) {
      const double p2 = ldexp(1.0, ilogb(step));
      step = p2 < step ? 2.0 * p2 : p2;
    }
    return static_cast<compute_t<T>>(step);
  }

  /// Parameters of one block, from its step (block_step, or a step read from a chunk). A step of
  /// 0 (a block of zeros, or one too small for the compute type) codes every value as 0 and keeps
  /// the others as outliers.
  template <class T>
  NCCLZ_HOST_DEVICE static quant_params<T> params_of_step(compute_t<T> step) {
    using C = compute_t<T>;
    quant_params<T> p{};
    p.bound = Bits;
    p.code_limit = static_cast<C>(max_code + 1);
    p.step = step;
    p.error_bound = static_cast<double>(step) / 2;  // exact in double
    // As in detail::params_for: a computed error one value below eb-rounded-down bounds the true
    // one. For f16 and bf16 the step is a power of two, so x / step, q * step (at most 7 bits of
    // code) and x - y are all exact: eb itself is the threshold, and values half a step between two
    // codes (common with so few digits) are kept as codes instead of outliers.
    C below = static_cast<C>(p.error_bound);
    if (static_cast<double>(below) > p.error_bound) below = detail::next_toward_zero(below);
    if constexpr (sizeof(T) == 2) p.max_error = below;
    else p.max_error = below > C(0) ? detail::next_toward_zero(below) : C(0);
    p.inv_step = step > C(0) ? C(1) / step : C(0);
    if (!(p.inv_step <= std::numeric_limits<C>::max())) p.inv_step = C(0);  // a subnormal step
    return p;
  }

  template <class T>
  NCCLZ_HOST_DEVICE static quant_params<T> block_params(double block_max) {
    return params_of_step<T>(block_step<T>(block_max));
  }

  /// Parameters as if the whole input were one block (m = the largest finite |x| of `range`).
  /// The kernels do not use this: they call block_params per block.
  template <class T>
  NCCLZ_HOST_DEVICE static quant_params<T> make_params(double, value_range<T> range) {
    if (!range.has_finite()) return block_params<T>(0.0);
    const double lo = fabs(static_cast<double>(range.lo)), hi = fabs(static_cast<double>(range.hi));
    return block_params<T>(lo > hi ? lo : hi);
  }

  template <class T>
  NCCLZ_HOST_DEVICE static bool quantize(T x, const quant_params<T>& p, std::int32_t& q) {
    return Quantizer<AbsBound>::template quantize<T>(x, p, q);
  }

  template <class T>
  NCCLZ_HOST_DEVICE static T dequantize(std::int32_t q, const quant_params<T>& p) {
    return Quantizer<AbsBound>::template dequantize<T>(q, p);
  }
};

/// What ncclz needs from a Quantizer policy. A user-written quantizer models this; see
/// examples/02_custom_quantizer.
template <class Q>
concept QuantizerPolicy = requires(double bound, value_range<float> rf, value_range<double> rd,
                                   quant_params<float> pf, quant_params<double> pd, float xf, double xd,
                                   std::int32_t& q) {
  { Q::id } -> std::convertible_to<quantizer_id>;
  { Q::needs_range } -> std::convertible_to<bool>;
  { Q::name } -> std::convertible_to<const char*>;
  { Q::template make_params<float>(bound, rf) } -> std::same_as<quant_params<float>>;
  { Q::template make_params<double>(bound, rd) } -> std::same_as<quant_params<double>>;
  { Q::template quantize<float>(xf, pf, q) } -> std::same_as<bool>;
  { Q::template quantize<double>(xd, pd, q) } -> std::same_as<bool>;
  { Q::template dequantize<float>(q, pf) } -> std::same_as<float>;
  { Q::template dequantize<double>(q, pd) } -> std::same_as<double>;
};

static_assert(QuantizerPolicy<Quantizer<AbsBound>>);
static_assert(QuantizerPolicy<Quantizer<RelBound>>);
static_assert(QuantizerPolicy<Quantizer<Lossless>>);
static_assert(QuantizerPolicy<Quantizer<FixedRate<8>>> && QuantizerPolicy<Quantizer<FixedRate<4>>>);
static_assert(is_blockwise_v<Quantizer<FixedRate<8>>> && !is_blockwise_v<Quantizer<AbsBound>>);

namespace detail {
/// Names the member a quantizer misses, one static_assert each, so the compiler's message says
/// what to add rather than only that a concept failed.
template <class Q>
struct check_quantizer {
  static_assert(requires { { Q::id } -> std::convertible_to<quantizer_id>; },
                "ncclz: a Quantizer policy needs `static constexpr ncclz::quantizer_id id` (use quantizer_id::user)");
  static_assert(requires { { Q::needs_range } -> std::convertible_to<bool>; },
                "ncclz: a Quantizer policy needs `static constexpr bool needs_range` (true if make_params reads the value range)");
  static_assert(requires { { Q::name } -> std::convertible_to<const char*>; },
                "ncclz: a Quantizer policy needs `static constexpr const char* name`");
  static_assert(requires(double b, value_range<float> r) { { Q::template make_params<float>(b, r) } -> std::same_as<quant_params<float>>; },
                "ncclz: a Quantizer policy needs `template <class T> static quant_params<T> make_params(double bound, value_range<T>)`, host and device");
  static_assert(requires(float x, quant_params<float> p, std::int32_t& q) { { Q::template quantize<float>(x, p, q) } -> std::same_as<bool>; },
                "ncclz: a Quantizer policy needs `template <class T> static bool quantize(T x, const quant_params<T>&, std::int32_t& code)`, host and device, returning false for values it cannot code within the bound");
  static_assert(requires(std::int32_t q, quant_params<float> p) { { Q::template dequantize<float>(q, p) } -> std::same_as<float>; },
                "ncclz: a Quantizer policy needs `template <class T> static T dequantize(std::int32_t code, const quant_params<T>&)`, host and device");
  static constexpr bool value = QuantizerPolicy<Q>;
};
}  // namespace detail

}  // namespace ncclz
