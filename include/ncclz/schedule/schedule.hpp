// Schedule policies: which algorithm (ring or tree) a collective call runs.
//
//   ncclz::schedule::Ring   // always the ring (ring.hpp)
//   ncclz::schedule::Tree   // always the binomial tree (tree.hpp)
//   ncclz::schedule::Auto   // choose_algorithm() per call, from the collective, size and rank count
//
// What each algorithm covers:
//   ring: allreduce (reduce-scatter + allgather), reduce_scatter, allgather, alltoall (pairwise)
//   tree: allreduce (reduce to rank 0 + broadcast), broadcast, reduce
// Forcing a policy on a collective it does not cover is an ncclz::invalid_argument.
//
// A policy is a tag with a `name` for logs and an `algorithm_for(tag, collective, bytes, nranks)`
// overload found by argument-dependent lookup, so a user's own tag (in the user's namespace)
// plugs in the same way; SchedulePolicy checks both.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>

#include "ncclz/error.hpp"
#include "ncclz/schedule/partition.hpp"
#include "ncclz/schedule/ring.hpp"
#include "ncclz/schedule/tree.hpp"

namespace ncclz::schedule {

enum class algorithm { ring, tree };

enum class collective { allreduce, reduce_scatter, allgather, broadcast, reduce, alltoall };

[[nodiscard]] constexpr const char* name(algorithm a) {
  switch (a) {
    case algorithm::ring: return "ring";
    case algorithm::tree: return "tree";
  }
  return "unknown";
}

[[nodiscard]] constexpr const char* name(collective c) {
  switch (c) {
    case collective::allreduce: return "allreduce";
    case collective::reduce_scatter: return "reduce_scatter";
    case collective::allgather: return "allgather";
    case collective::broadcast: return "broadcast";
    case collective::reduce: return "reduce";
    case collective::alltoall: return "alltoall";
  }
  return "unknown";
}

/// Whether `a` has a schedule for `c` (see the table at the top of this file).
[[nodiscard]] constexpr bool supports(algorithm a, collective c) {
  switch (c) {
    case collective::allreduce: return true;
    case collective::reduce_scatter:
    case collective::allgather:
    case collective::alltoall: return a == algorithm::ring;
    case collective::broadcast:
    case collective::reduce: return a == algorithm::tree;
  }
  return false;
}

/// Below this many (uncompressed) bytes an allreduce over more than two ranks takes the tree.
inline constexpr std::uint64_t kTreeAllreduceMaxBytes = 256 * 1024;

/// Auto's rule. Broadcast and reduce: tree (the only one we have). Reduce-scatter, allgather,
/// alltoall: ring. Allreduce: tree when bytes < kTreeAllreduceMaxBytes and nranks > 2 (latency:
/// 2 ceil(log2 n) steps instead of 2(n - 1), each step paying a codec launch and a size
/// exchange); otherwise ring (each rank moves 2(n-1)/n of the buffer instead of up to
/// 2 ceil(log2 n) times all of it; with two ranks the ring is never worse).
[[nodiscard]] constexpr algorithm choose_algorithm(collective c, std::uint64_t bytes, int nranks) {
  detail::check_nranks("schedule::choose_algorithm", nranks);
  switch (c) {
    case collective::broadcast:
    case collective::reduce: return algorithm::tree;
    case collective::allreduce:
      return bytes < kTreeAllreduceMaxBytes && nranks > 2 ? algorithm::tree : algorithm::ring;
    default: return algorithm::ring;
  }
}

/// Schedule policy tag: choose_algorithm() on every call.
struct Auto {
  static constexpr const char* name = "auto";
};

namespace detail {
constexpr algorithm forced(algorithm a, const char* policy, collective c, int nranks) {
  check_nranks("schedule::algorithm_for", nranks);
  if (!supports(a, c)) {
    ncclz::detail::throw_invalid("schedule::algorithm_for", std::string("the ") + policy + " schedule has no " +
                                                                name(c) + "; Auto picks one that has");
  }
  return a;
}
}  // namespace detail

/// The algorithm a policy runs for one call.
[[nodiscard]] constexpr algorithm algorithm_for(Ring, collective c, std::uint64_t, int nranks) {
  return detail::forced(algorithm::ring, Ring::name, c, nranks);
}
[[nodiscard]] constexpr algorithm algorithm_for(Tree, collective c, std::uint64_t, int nranks) {
  return detail::forced(algorithm::tree, Tree::name, c, nranks);
}
[[nodiscard]] constexpr algorithm algorithm_for(Auto, collective c, std::uint64_t bytes, int nranks) {
  return choose_algorithm(c, bytes, nranks);
}

/// What ncclz needs from a schedule policy: a name for logs, and algorithm_for(P{}, ...).
template <class P>
concept SchedulePolicy = std::default_initializable<P> && requires(collective c, std::uint64_t bytes, int n) {
  { P::name } -> std::convertible_to<const char*>;
  { algorithm_for(P{}, c, bytes, n) } -> std::same_as<algorithm>;
};

static_assert(SchedulePolicy<Ring>);
static_assert(SchedulePolicy<Tree>);
static_assert(SchedulePolicy<Auto>);

}  // namespace ncclz::schedule
