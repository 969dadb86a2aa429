// How a sum's error bound is spent (docs/collectives.md, "Error bounds"): the ranks' quantization
// and, where the reduced segments move on (allreduce, reduce), one requantization of each.
//
// Each rank's codes miss its values by at most eb1, so a sum of n ranks' codes misses by n x eb1.
// An owner that sends its reduced codes on can round them to a coarser step, k x the ranks' step,
// adding at most k x eb1 (k / 2 steps of 2 x eb1). With eb1 = bound / (n + k) the result keeps
// `bound`. The ranks' codes get finer (bound / (n + k) instead of bound / n), the owners' chunks
// coarser. At high rates, where a halved step costs a whole bit, the split gains log2(n / 4) bits
// a value at k = n: nothing at 4 ranks, a bit at 8, a loss below 4, hence no requantization there.
// At low rates a finer step costs less than a bit: on the real fields at REL 1e-3 with 4 ranks
// (ncclz-perf, Adaptive) each rank sends 18.0 MB instead of 19.4 (the ranks' chunks 5.6 -> 7.7 MB,
// the owners' 13.8 -> 10.3 MB; the owners' ratio 14.8 -> 19.8).
#pragma once

#include <cstdint>

#include "ncclz/config.hpp"
#include "ncclz/quantizer.hpp"

namespace ncclz::detail {

struct sum_bound_split {
  std::uint32_t coarsen = 1;  ///< k: owners requantize reduced codes at k x the ranks' step (1: never)
  double code_bound = 0;      ///< the bound each rank quantizes with
  std::uint32_t units = 1;    ///< result bound = code bound x units (n + k, or n without requantization)
};

/// The fraction of eb1 held back so that rounding the step to the compute type (up by at most
/// half an ulp, 2^-24 of it in float) never lets a tie's k / 2 steps exceed what the requantizer
/// may add (test_quantizer.cpp checks this over many ranges and bounds).
inline constexpr double kSplitMargin = 1.0 / 65536.0;

/// The split of a sum's `bound` over `nranks` ranks; `moves_result`: the reduced segments are
/// coded again and sent on (allreduce, reduce), so requantizing them pays.
constexpr sum_bound_split split_sum_bound(double bound, std::uint32_t nranks, bool moves_result) {
  const std::uint32_t n = nranks > 0 ? nranks : 1;
  if (!moves_result || n < 4) return {1, bound / n, n};
  std::uint32_t k = 1;
  while (2 * k <= n && k < (1u << 20)) k *= 2;  // a power of two: k x step is exact
  return {k, bound / (n + k) * (1.0 - kSplitMargin), n + k};
}

/// An owner's requantization of reduced codes (requantize_kernel; the host tests run it too):
/// the ranks quantized with `code_bound`, the result keeps `result_bound`, both through Q's
/// make_params over the same range, and the owner's chunk is coded with code_bound x coarsen
/// (its step, `coarse.step`, is then exactly coarsen x the ranks' step: a power of two).
template <class Q, class T>
struct sum_requantizer {
  using C = compute_t<T>;
  quant_params<T> fine, coarse;
  double allowed;       ///< what rounding may add: result bound - ranks x the ranks' bound
  std::int32_t k;       ///< coarsen
  bool unchanged;       ///< the steps are equal (a constant input: its step is its value): codes stay
  bool scaled;          ///< coarse.step == k x fine.step: codes can be rounded

  NCCLZ_HOST_DEVICE sum_requantizer(double code_bound, double result_bound, std::uint32_t ranks, std::uint32_t coarsen,
                                    value_range<T> range)
      : fine(Q::template make_params<T>(code_bound, range)),
        coarse(Q::template make_params<T>(code_bound * coarsen, range)),
        allowed(Q::template make_params<T>(result_bound, range).error_bound - ranks * fine.error_bound),
        k(static_cast<std::int32_t>(coarsen)),
        unchanged(coarse.step == fine.step),
        scaled(coarse.step == fine.step * static_cast<C>(coarsen) && fine.inv_step != C(0)) {}

  /// Reduced code q (not an outlier) at the coarse step: q / k rounded to nearest, ties away from
  /// zero, at most k / 2 fine steps away. False where that is further than `allowed` (or the steps
  /// do not scale): the element then stays an outlier with value_of(q).
  NCCLZ_HOST_DEVICE bool apply(std::int32_t q, std::int32_t& coarse_code) const {
    const std::int32_t half = k / 2;
    coarse_code = q >= 0 ? (q + half) / k : -((half - q) / k);  // |q| < 2^30: no overflow
    const double miss = static_cast<double>(q - coarse_code * k) * static_cast<double>(fine.step);  // exact
    return scaled && miss <= allowed && -miss <= allowed;
  }
  /// The value reduced code q stands for, as dequantize_kernel would write it.
  NCCLZ_HOST_DEVICE T value_of(std::int32_t q) const { return from_compute<T>(mul_rn(static_cast<C>(q), fine.step)); }
};

}  // namespace ncclz::detail
