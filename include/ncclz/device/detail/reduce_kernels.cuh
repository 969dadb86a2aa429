// Element-wise kernels of the reductions in the integer domain: quantize once, add codes exactly,
// dequantize once. An element is an outlier (kOutlierCode, its value beside) when any
// contribution was: outliers are combined in the element type, so NaN and Inf propagate as IEEE
// arithmetic has them.
#pragma once

#include <cstdint>

#include "ncclz/detail/sum_bound.hpp"
#include "ncclz/device/detail/block_scales.cuh"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/quantizer.hpp"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail {

inline constexpr int kElementwiseThreads = 256;

/// Codes of `in` with the parameters the encoder derives from the same (bound, range, ranks);
/// the step goes to *step_out for the element-wise kernels that follow. A blockwise quantizer
/// (FixedRate) codes each scale block of `in` with its own step, from `scales`, and leaves
/// *step_out alone (its steps are an array; see block_steps_kernel).
template <class Q, class T>
__global__ void __launch_bounds__(kElementwiseThreads)
    quantize_kernel(const T* __restrict__ in, std::uint64_t count, std::int32_t* __restrict__ codes,
                    T* __restrict__ outlier_values, const range_keys* __restrict__ range, double bound, std::uint32_t ranks,
                    double* __restrict__ step_out, block_scales scales = {}) {
  if constexpr (is_blockwise_v<Q>) {
    quantize_blockwise<Q, T>(in, count, codes, outlier_values, scales);
    return;
  }
  quant_params<T> p = Q::template make_params<T>(bound, Q::needs_range ? load_range<T>(range) : value_range<T>::empty());
  if (ranks > 1) p.code_limit = static_cast<compute_t<T>>(floor(static_cast<double>(p.code_limit) / ranks));
  if (blockIdx.x == 0 && threadIdx.x == 0) *step_out = static_cast<double>(p.step);
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    quantize_or_keep<Q>(in[i], p, codes[i], outlier_values[i]);
  }
}

/// How two contributions combine: codes exactly (quantization is monotone, so min and max of
/// codes are the codes of min and max), outliers in the compute type (float for the 16-bit
/// types) and rounded to T once. NaN wins in min and max too (IEEE `minimum`/`maximum`, not
/// fmin), so a NaN on any rank is never dropped.
struct sum_op {
  __device__ static std::int32_t codes(std::int32_t a, std::int32_t b) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
  }
  template <class T>
  __device__ static T values(T a, T b) { return a + b; }
};
struct min_op {
  __device__ static std::int32_t codes(std::int32_t a, std::int32_t b) { return a < b ? a : b; }
  template <class T>
  __device__ static T values(T a, T b) { return a != a || b != b ? a + b : (a < b ? a : b); }
};
struct max_op {
  __device__ static std::int32_t codes(std::int32_t a, std::int32_t b) { return a > b ? a : b; }
  template <class T>
  __device__ static T values(T a, T b) { return a != a || b != b ? a + b : (a > b ? a : b); }
};

/// acc = Op(acc, mine), element-wise. `step` turns a code into the value it stands for when the
/// other side is an outlier: d_step[i >> step_shift] for element i (one step: a shift of 63;
/// a step per scale block: 10).
template <class Op, class T>
__global__ void __launch_bounds__(kElementwiseThreads)
    accumulate_kernel(std::int32_t* __restrict__ acc_codes, T* __restrict__ acc_values, const std::int32_t* __restrict__ codes,
                      const T* __restrict__ values, std::uint64_t count, const double* __restrict__ d_step,
                      unsigned step_shift = 63) {
  using C = compute_t<T>;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const C step = static_cast<C>(d_step[i >> step_shift]);
    const std::int32_t a = acc_codes[i], b = codes[i];
    if (a != kOutlierCode && b != kOutlierCode) {
      acc_codes[i] = Op::codes(a, b);
    } else {
      const C va = a == kOutlierCode ? to_compute(acc_values[i]) : ncclz::detail::mul_rn(static_cast<C>(a), step);
      const C vb = b == kOutlierCode ? to_compute(values[i]) : ncclz::detail::mul_rn(static_cast<C>(b), step);
      acc_values[i] = from_compute<T>(Op::template values<C>(va, vb));
      acc_codes[i] = kOutlierCode;
    }
  }
}

/// Lossless reductions (codes are bits, not numbers): out = x_0 op x_1 op ... op x_{n-1}, left to
/// right in rank order, in the compute type (float for the 16-bit types), rounded to T once.
/// Rank r's values are at pieces + r * stride, rank me's at `own`, which may be `out` itself (an
/// in-place reduce_scatter: each element is read before it is written, by the same thread).
template <class Op, class T>
__global__ void __launch_bounds__(kElementwiseThreads)
    reduce_values_kernel(const T* __restrict__ pieces, std::uint64_t stride, int nranks, int me, const T* own,
                         std::uint64_t count, T* out) {
  using C = compute_t<T>;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    C acc = to_compute(me == 0 ? own[i] : pieces[i]);
    for (int r = 1; r < nranks; ++r) acc = Op::template values<C>(acc, to_compute(r == me ? own[i] : pieces[r * stride + i]));
    out[i] = from_compute<T>(acc);
  }
}

/// An owner's reduced sum of codes, made `coarsen` (k, a power of two) times coarser before it is
/// coded again and sent on (detail/sum_bound.hpp, sum_requantizer): each code q becomes q / k
/// rounded to nearest; an element the rounding would take too far stays an outlier with its
/// unrounded value. Where the coarse step is not k times the fine one (a constant input, whose
/// step is its value; a bound out of the type's reach) codes stay as they are if the steps are
/// equal, else every element becomes an outlier. *result_step gets the coarse step, for
/// dequantize_kernel.
template <class Q, class T>
__global__ void __launch_bounds__(kElementwiseThreads)
    requantize_kernel(std::int32_t* __restrict__ codes, T* __restrict__ values, std::uint64_t count,
                      const range_keys* __restrict__ range, double code_bound, double result_bound, std::uint32_t ranks,
                      std::uint32_t coarsen, double* __restrict__ result_step) {
  const ncclz::detail::sum_requantizer<Q, T> rq(code_bound, result_bound, ranks, coarsen,
                                                Q::needs_range ? load_range<T>(range) : value_range<T>::empty());
  if (blockIdx.x == 0 && threadIdx.x == 0) *result_step = static_cast<double>(rq.coarse.step);
  if (rq.unchanged) return;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::int32_t q = codes[i];
    if (q == kOutlierCode) continue;
    std::int32_t coarse = 0;
    if (rq.apply(q, coarse)) {
      codes[i] = coarse;
    } else {
      values[i] = rq.value_of(q);
      codes[i] = kOutlierCode;
    }
  }
}

/// Values of codes (outliers: their values), each rounded once; steps as in accumulate_kernel.
template <class T>
__global__ void __launch_bounds__(kElementwiseThreads)
    dequantize_kernel(const std::int32_t* __restrict__ codes, const T* __restrict__ outlier_values, std::uint64_t count,
                      const double* __restrict__ d_step, T* __restrict__ out, unsigned step_shift = 63) {
  using C = compute_t<T>;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const C step = static_cast<C>(d_step[i >> step_shift]);
    const std::int32_t c = codes[i];
    out[i] = c == kOutlierCode ? outlier_values[i] : from_compute<T>(ncclz::detail::mul_rn(static_cast<C>(c), step));
  }
}

}  // namespace device::detail
NCCLZ_END_KERNEL_NAMESPACE
