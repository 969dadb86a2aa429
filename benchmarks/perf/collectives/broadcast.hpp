// broadcast: every rank ends with the root's vector.
#pragma once

#include "../collective_test.hpp"

namespace ncclz::perf {

struct broadcast_test {
  static constexpr schedule::collective kind = schedule::collective::broadcast;

  static row_shape shape(std::uint64_t count, int nranks) { return {kind, nranks, count, count, count}; }
  /// The root's vector crosses each link once (a pipelined chain).
  static constexpr double bus_factor(int) { return 1; }

  template <class X>
  static expected_value expected(const row_shape&, X&& x, reduction, int /*me*/, int root, std::uint64_t j) {
    return detail::copy_of(x(root, j));
  }

  template <class Cluster, class T>
  static void nccl(Cluster& cc, const call<T>& c) {
    cc.check(ncclBroadcast(c.send, c.recv, c.count, c.type, c.root, cc.comm(), c.stream), "ncclBroadcast");
  }
  template <class Comm, class T>
  static void ncclz(Comm& z, const call<T>& c) {
    z.broadcast(c.send, c.recv, c.count, c.root, c.bound, c.stream);
  }
};

}  // namespace ncclz::perf
