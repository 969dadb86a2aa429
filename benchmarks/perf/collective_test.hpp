// What ncclz-perf needs to know of a collective, in nccl-tests' shape: each file of collectives/
// describes one (its buffers for a size, its bus-bandwidth factor, the reference result of each
// element, its NCCL call and its ncclz call); the driver (perf_driver.cuh) runs any of them.
//
// A collective test is a struct with
//   static constexpr schedule::collective kind;
//   static row_shape shape(std::uint64_t count, int nranks);    buffers of a size of count elements
//   static constexpr double bus_factor(int nranks);             busbw = algbw * factor
//   static std::uint64_t call_count(const row_shape&);          the count argument of the call
//   static expected_value expected(const row_shape&, X x, reduction, int me, int root, uint64_t j)
//                                                               element j of rank me's result,
//                                                               x(rank, i) being rank's input i
//   template <class Cluster, class T> static void nccl(Cluster&, const call<T>&);
//   template <class Comm, class T> static void ncclz(Comm&, const call<T>&);
// Plain C++ apart from the two calls (templates, instantiated only by the driver), so the host
// tests check shapes, factors and references without a GPU.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ncclz/schedule/schedule.hpp"
#include "perf_options.hpp"

namespace ncclz::perf {

/// Element counts of one call, from nccl-tests' size: the larger of the send and receive
/// buffers, rounded down so that it splits evenly over the ranks where the collective splits it.
struct row_shape {
  schedule::collective collective;
  int nranks;
  std::uint64_t send_count;
  std::uint64_t recv_count;
  std::uint64_t per_call;  ///< the count argument of the call
  [[nodiscard]] std::uint64_t call_count() const { return per_call; }
  /// nccl-tests' count column: elements of the larger buffer.
  [[nodiscard]] std::uint64_t count() const { return std::max(send_count, recv_count); }
};

/// Element j of a rank's result, in float64 from the T-rounded inputs, and the sum of the
/// magnitudes that went into it (the scale of a float reduction's rounding error).
struct expected_value {
  double value;
  double magnitude;
};

/// One call's arguments, as the driver hands them to a collective test.
template <class T>
struct call {
  const T* send;
  T* recv;
  std::uint64_t count;  ///< row_shape::call_count()
  ncclDataType_t type;
  ncclRedOp_t op;
  int root;
  double bound;
  cudaStream_t stream;
};

namespace detail {
/// The reduction of element i over the ranks, in rank order.
template <class X>
expected_value reduce_over_ranks(int nranks, X&& x, reduction op, std::uint64_t i) {
  expected_value e{x(0, i), std::fabs(x(0, i))};
  for (int r = 1; r < nranks; ++r) {
    const double v = x(r, i);
    e.magnitude += std::fabs(v);
    e.value = op == reduction::sum ? e.value + v : op == reduction::min ? std::min(e.value, v) : std::max(e.value, v);
  }
  return e;
}
inline expected_value copy_of(double v) { return {v, std::fabs(v)}; }
}  // namespace detail

}  // namespace ncclz::perf
