// Schedule policies: which algorithm a collective call runs.
//
//   ncclz::schedule::Ring    // ring (ring.hpp)
//   ncclz::schedule::Direct  // all pairs in one group per phase (direct.hpp)
//   ncclz::schedule::Tree    // binomial tree (tree.hpp)
//   ncclz::schedule::RecursiveDoubling  // partners at distance 1, 2, 4, ... (recursive_doubling.hpp)
//   ncclz::schedule::Auto    // choose_algorithm() per call, from the collective, size and rank count
//
// What each algorithm covers in ncclz::Communicator:
//   ring:   allreduce, reduce_scatter, reduce (ring reduce-scatter of codes, then the owners'
//           chunks go to everyone or to the root), broadcast (NCCL's own pipelined ring
//           broadcast of the compressed bytes)
//   direct: allreduce, reduce_scatter, reduce, allgather, alltoall
//   tree:   broadcast (the compressed chunk forwarded unchanged down a binomial tree)
//   recursive_doubling: allreduce (each rank's whole sum of codes to a partner per step)
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
#include "ncclz/schedule/direct.hpp"
#include "ncclz/schedule/partition.hpp"
#include "ncclz/schedule/recursive_doubling.hpp"
#include "ncclz/schedule/ring.hpp"
#include "ncclz/schedule/tree.hpp"

namespace ncclz::schedule {

enum class algorithm { ring, direct, tree, recursive_doubling };

enum class collective { allreduce, reduce_scatter, allgather, broadcast, reduce, alltoall };

[[nodiscard]] constexpr const char* name(algorithm a) {
  switch (a) {
    case algorithm::ring: return "ring";
    case algorithm::direct: return "direct";
    case algorithm::tree: return "tree";
    case algorithm::recursive_doubling: return "recursive_doubling";
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
    case collective::allreduce: return a == algorithm::ring || a == algorithm::direct || a == algorithm::recursive_doubling;
    case collective::reduce_scatter:
    case collective::reduce: return a == algorithm::ring || a == algorithm::direct;
    case collective::allgather:
    case collective::alltoall: return a == algorithm::direct;
    case collective::broadcast: return a == algorithm::ring || a == algorithm::tree;
  }
  return false;
}

/// Auto's rule. Reductions: direct up to kDirectMaxRanks ranks (one size exchange per phase
/// instead of one per ring step, and chunks coded from single ranks' codes), ring beyond.
/// Allgather and alltoall: direct (the only one). Broadcast: ring, NCCL's pipelined broadcast of
/// the compressed bytes (each link carries them once; the tree's root sends them ceil(log2 n) times).
/// Allreduce on 2 or 4 ranks below kDoublingBelowBytes / log2(n) per rank: recursive doubling
/// (doubling_preferred).
[[nodiscard]] constexpr algorithm choose_algorithm(collective c, std::uint64_t bytes, int nranks) {
  detail::check_nranks("schedule::choose_algorithm", nranks);
  switch (c) {
    case collective::allreduce:
      if (doubling_preferred(bytes, nranks)) return algorithm::recursive_doubling;
      return nranks <= kDirectMaxRanks ? algorithm::direct : algorithm::ring;
    case collective::reduce_scatter:
    case collective::reduce: return nranks <= kDirectMaxRanks ? algorithm::direct : algorithm::ring;
    case collective::broadcast: return algorithm::ring;
    default: return algorithm::direct;
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
[[nodiscard]] constexpr algorithm algorithm_for(Direct, collective c, std::uint64_t, int nranks) {
  return detail::forced(algorithm::direct, Direct::name, c, nranks);
}
[[nodiscard]] constexpr algorithm algorithm_for(Tree, collective c, std::uint64_t, int nranks) {
  return detail::forced(algorithm::tree, Tree::name, c, nranks);
}
[[nodiscard]] constexpr algorithm algorithm_for(RecursiveDoubling, collective c, std::uint64_t, int nranks) {
  return detail::forced(algorithm::recursive_doubling, RecursiveDoubling::name, c, nranks);
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

/// Communicator's check of its Schedule argument (plain C++, so that its message is tested
/// without CUDA): `schedule::policy_check<P>::value` fails to compile, saying what to fix, unless
/// P models SchedulePolicy.
template <class P>
struct policy_check {
  static_assert(SchedulePolicy<P>,
                "ncclz::Communicator<Codec, Schedule>: Schedule must be ncclz::schedule::Auto, Direct, Ring, Tree or RecursiveDoubling, or a "
                "default-constructible tag type with a static `name` and an algorithm_for(tag, collective, bytes, nranks) "
                "overload returning ncclz::schedule::algorithm (ncclz/schedule/schedule.hpp)");
  static constexpr bool value = true;
};

static_assert(SchedulePolicy<Ring>);
static_assert(SchedulePolicy<Direct>);
static_assert(SchedulePolicy<Tree>);
static_assert(SchedulePolicy<RecursiveDoubling>);
static_assert(SchedulePolicy<Auto>);

}  // namespace ncclz::schedule
