// allgather: every rank ends with all ranks' blocks, in rank order.
#pragma once

#include "../collective_test.hpp"

namespace ncclz::perf {

struct allgather_test {
  static constexpr schedule::collective kind = schedule::collective::allgather;

  /// nccl-tests' size is the receive buffer: n blocks; the call's count is one block.
  static row_shape shape(std::uint64_t count, int nranks) {
    const std::uint64_t block = count / static_cast<std::uint64_t>(nranks);
    return {kind, nranks, block, block * static_cast<std::uint64_t>(nranks), block};
  }
  static constexpr double bus_factor(int nranks) { return static_cast<double>(nranks - 1) / nranks; }

  template <class X>
  static expected_value expected(const row_shape& s, X&& x, reduction, int /*me*/, int /*root*/, std::uint64_t j) {
    return detail::copy_of(x(static_cast<int>(j / s.send_count), j % s.send_count));
  }

  template <class Cluster, class T>
  static void nccl(Cluster& cc, const call<T>& c) {
    cc.check(ncclAllGather(c.send, c.recv, c.count, c.type, cc.comm(), c.stream), "ncclAllGather");
  }
  template <class Comm, class T>
  static void ncclz(Comm& z, const call<T>& c) {
    z.allgather(c.send, c.recv, c.count, c.bound, c.stream);
  }
};

}  // namespace ncclz::perf
