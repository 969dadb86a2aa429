// reduce_scatter: rank r ends with block r of the reduction of all ranks' vectors.
#pragma once

#include "../collective_test.hpp"

namespace ncclz::perf {

struct reduce_scatter_test {
  static constexpr schedule::collective kind = schedule::collective::reduce_scatter;

  /// nccl-tests' size is the send buffer: n blocks; the call's count is one block.
  static row_shape shape(std::uint64_t count, int nranks) {
    const std::uint64_t block = count / static_cast<std::uint64_t>(nranks);
    return {kind, nranks, block * static_cast<std::uint64_t>(nranks), block, block};
  }
  static constexpr double bus_factor(int nranks) { return static_cast<double>(nranks - 1) / nranks; }

  template <class X>
  static expected_value expected(const row_shape& s, X&& x, reduction op, int me, int /*root*/, std::uint64_t j) {
    return detail::reduce_over_ranks(s.nranks, x, op, static_cast<std::uint64_t>(me) * s.recv_count + j);
  }

  template <class Cluster, class T>
  static void nccl(Cluster& cc, const call<T>& c) {
    cc.check(ncclReduceScatter(c.send, c.recv, c.count, c.type, c.op, cc.comm(), c.stream), "ncclReduceScatter");
  }
  template <class Comm, class T>
  static void ncclz(Comm& z, const call<T>& c) {
    z.reduce_scatter(c.send, c.recv, c.count, c.op, c.bound, c.stream);
  }
};

}  // namespace ncclz::perf
