// allreduce: every rank ends with the reduction of all ranks' vectors.
#pragma once

#include "../collective_test.hpp"

namespace ncclz::perf {

struct allreduce_test {
  static constexpr schedule::collective kind = schedule::collective::allreduce;

  /// Send and receive buffers hold the whole vector.
  static row_shape shape(std::uint64_t count, int nranks) { return {kind, nranks, count, count, count}; }
  /// Each rank sends and receives 2 (n - 1) / n of the vector in a ring.
  static constexpr double bus_factor(int nranks) { return 2.0 * (nranks - 1) / nranks; }

  template <class X>
  static expected_value expected(const row_shape& s, X&& x, reduction op, int /*me*/, int /*root*/, std::uint64_t j) {
    return detail::reduce_over_ranks(s.nranks, x, op, j);
  }

  template <class Cluster, class T>
  static void nccl(Cluster& cc, const call<T>& c) {
    cc.check(ncclAllReduce(c.send, c.recv, c.count, c.type, c.op, cc.comm(), c.stream), "ncclAllReduce");
  }
  template <class Comm, class T>
  static void ncclz(Comm& z, const call<T>& c) {
    z.allreduce(c.send, c.recv, c.count, c.op, c.bound, c.stream);
  }
};

}  // namespace ncclz::perf
