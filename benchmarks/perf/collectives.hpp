// The six collective tests of ncclz-perf (collectives/*.hpp) and the dispatch from a collective
// to its test.
#pragma once

#include "collectives/allgather.hpp"
#include "collectives/allreduce.hpp"
#include "collectives/alltoall.hpp"
#include "collectives/broadcast.hpp"
#include "collectives/reduce.hpp"
#include "collectives/reduce_scatter.hpp"

namespace ncclz::perf {

/// f.template operator()<Test>() with the collective test of `c`; returns what f returns.
template <class F>
decltype(auto) with_collective_test(schedule::collective c, F&& f) {
  using schedule::collective;
  switch (c) {
    case collective::allreduce: return f.template operator()<allreduce_test>();
    case collective::reduce_scatter: return f.template operator()<reduce_scatter_test>();
    case collective::allgather: return f.template operator()<allgather_test>();
    case collective::broadcast: return f.template operator()<broadcast_test>();
    case collective::reduce: return f.template operator()<reduce_test>();
    case collective::alltoall: break;
  }
  return f.template operator()<alltoall_test>();
}

/// The buffers of a row of `bytes` (nccl-tests' size) of elements of `element_bytes`.
inline row_shape shape_of(schedule::collective c, std::uint64_t bytes, std::size_t element_bytes, int nranks) {
  return with_collective_test(c, [&]<class Test>() { return Test::shape(bytes / element_bytes, nranks); });
}

/// Bus bandwidth factor of nccl-tests' doc/PERFORMANCE.md: busbw = algbw * factor.
inline double bus_factor(schedule::collective c, int nranks) {
  return with_collective_test(c, [&]<class Test>() { return Test::bus_factor(nranks); });
}

[[nodiscard]] constexpr bool reduces(schedule::collective c) {
  return c == schedule::collective::allreduce || c == schedule::collective::reduce_scatter ||
         c == schedule::collective::reduce;
}

[[nodiscard]] constexpr bool has_root(schedule::collective c) {
  return c == schedule::collective::broadcast || c == schedule::collective::reduce;
}

}  // namespace ncclz::perf
