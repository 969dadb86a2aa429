// alltoall: block p of rank r's send buffer ends as block r of rank p's receive buffer.
#pragma once

#include "../collective_test.hpp"

namespace ncclz::perf {

struct alltoall_test {
  static constexpr schedule::collective kind = schedule::collective::alltoall;

  /// nccl-tests' size is either buffer: n blocks; the call's count is one block (per peer).
  static row_shape shape(std::uint64_t count, int nranks) {
    const std::uint64_t block = count / static_cast<std::uint64_t>(nranks);
    const std::uint64_t all = block * static_cast<std::uint64_t>(nranks);
    return {kind, nranks, all, all, block};
  }
  static constexpr double bus_factor(int nranks) { return static_cast<double>(nranks - 1) / nranks; }

  template <class X>
  static expected_value expected(const row_shape& s, X&& x, reduction, int me, int /*root*/, std::uint64_t j) {
    const std::uint64_t block = s.call_count();
    return detail::copy_of(x(static_cast<int>(j / block), static_cast<std::uint64_t>(me) * block + j % block));
  }

  /// As nccl-tests does it: a group of sends and receives.
  template <class Cluster, class T>
  static void nccl(Cluster& cc, const call<T>& c) {
    cc.check(ncclGroupStart(), "ncclGroupStart");
    for (int peer = 0; peer < cc.nranks(); ++peer) {
      cc.check(ncclSend(c.send + peer * c.count, c.count, c.type, peer, cc.comm(), c.stream), "ncclSend");
      cc.check(ncclRecv(c.recv + peer * c.count, c.count, c.type, peer, cc.comm(), c.stream), "ncclRecv");
    }
    cc.check(ncclGroupEnd(), "ncclGroupEnd");
  }
  template <class Comm, class T>
  static void ncclz(Comm& z, const call<T>& c) {
    z.alltoall(c.send, c.recv, c.count, c.bound, c.stream);
  }
};

}  // namespace ncclz::perf
