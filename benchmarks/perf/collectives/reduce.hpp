// reduce: the root ends with the reduction of all ranks' vectors; the others' receive buffers
// are not written, and not checked.
#pragma once

#include "../collective_test.hpp"

namespace ncclz::perf {

struct reduce_test {
  static constexpr schedule::collective kind = schedule::collective::reduce;

  static row_shape shape(std::uint64_t count, int nranks) { return {kind, nranks, count, count, count}; }
  static constexpr double bus_factor(int) { return 1; }

  template <class X>
  static expected_value expected(const row_shape& s, X&& x, reduction op, int /*me*/, int /*root*/, std::uint64_t j) {
    return detail::reduce_over_ranks(s.nranks, x, op, j);
  }

  template <class Cluster, class T>
  static void nccl(Cluster& cc, const call<T>& c) {
    cc.check(ncclReduce(c.send, c.recv, c.count, c.type, c.op, c.root, cc.comm(), c.stream), "ncclReduce");
  }
  template <class Comm, class T>
  static void ncclz(Comm& z, const call<T>& c) {
    z.reduce(c.send, c.recv, c.count, c.op, c.root, c.bound, c.stream);
  }
};

}  // namespace ncclz::perf
