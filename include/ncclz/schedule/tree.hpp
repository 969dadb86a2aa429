// Binomial-tree schedules (any nranks, not only powers of two) built from ncclSend/ncclRecv.
//
// Ranks are renumbered relative to the root, v = (rank - root) mod n, so the root is v = 0. The
// parent of v > 0 is v with its lowest set bit cleared; the children of v are v + 2^k for every
// 2^k below v's lowest set bit (every 2^k for the root) with v + 2^k < n. Child v + 2^k roots a
// subtree of at most 2^k ranks. A rank is popcount(v) hops from the root, never more than
// tree_depth(n) = ceil(log2 n), which is also the number of rounds of a broadcast or reduce.
//
// Broadcast: the root sends to its children; every other rank receives from its parent, then
// sends to its children, in tree_children order: largest subtree first, so the longest chain
// starts earliest and the whole broadcast takes tree_depth(n) rounds of one send per rank.
//
// Reduce: the reverse. Every rank receives from its children in the *reverse* of tree_children
// order (smallest subtree first: the order in which their partial results become ready), adds
// each to its own, then sends the result to its parent; the root ends with the full reduction,
// again after tree_depth(n) rounds. The order fixes the summation order, which keeps lossless
// (float-bit) results reproducible.
#pragma once

#include <cstdint>
#include <vector>

#include "ncclz/schedule/partition.hpp"

namespace ncclz::schedule {

/// Schedule policy tag: binomial tree broadcast. ceil(log2 n) rounds, but each moves the whole
/// buffer: for small messages. (The reduce rule below is schedule math only so far.)
struct Tree {
  static constexpr const char* name = "tree";
};

namespace detail {
constexpr void check_tree(const char* fn, int rank, int nranks, int root) {
  check_nranks(fn, nranks);
  check_index(fn, "rank", rank, nranks, "nranks");
  check_index(fn, "root", root, nranks, "nranks");
}
// Rank <-> position relative to the root, without forming rank + nranks (no overflow).
constexpr int relative(int rank, int root, int nranks) {
  return rank >= root ? rank - root : rank - root + nranks;
}
constexpr int absolute(int v, int root, int nranks) {
  return v < nranks - root ? v + root : v + root - nranks;
}
}  // namespace detail

/// ceil(log2(nranks)): the rounds of a broadcast or reduce (one send per rank a round), and a
/// bound on the hops from the root to any rank. 0 for one rank.
[[nodiscard]] constexpr int tree_depth(int nranks) {
  detail::check_nranks("schedule::tree_depth", nranks);
  int d = 0;
  while ((std::int64_t{1} << d) < nranks) ++d;
  return d;
}

/// The rank `rank` receives from in a broadcast (and sends to in a reduce); -1 for the root.
[[nodiscard]] constexpr int tree_parent(int rank, int nranks, int root) {
  detail::check_tree("schedule::tree_parent", rank, nranks, root);
  const int v = detail::relative(rank, root, nranks);
  return v == 0 ? -1 : detail::absolute(v & (v - 1), root, nranks);
}

/// The ranks `rank` sends to in a broadcast, in send order (largest subtree first). A reduce
/// receives from the same ranks in the reverse order.
[[nodiscard]] constexpr std::vector<int> tree_children(int rank, int nranks, int root) {
  detail::check_tree("schedule::tree_children", rank, nranks, root);
  const std::int64_t v = detail::relative(rank, root, nranks);
  const std::int64_t below = v == 0 ? std::int64_t{1} << tree_depth(nranks) : v & -v;  // v's lowest set bit
  std::vector<int> out;
  for (std::int64_t mask = below >> 1; mask >= 1; mask >>= 1) {
    if (v + mask < nranks) out.push_back(detail::absolute(static_cast<int>(v + mask), root, nranks));
  }
  return out;
}

}  // namespace ncclz::schedule
