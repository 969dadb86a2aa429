// The arithmetic of hierarchical collectives (HierarchicalCommunicator), plain C++ so that the
// host tests run it: which node each rank is on, the shards a node's ranks own, the block orders
// of reduce_scatter and allgather, and the bound a hierarchical sum keeps.
//
// Nodes. Every rank brings a 64-bit node key (NCCLZ_NODE, a configured id, or a hash of the host
// name as NCCL's host hash does); the keys are gathered, so every rank decides on the same list.
// Nodes are numbered in the order their first rank appears; a rank's local index is its place
// among its node's ranks in rank order. All nodes must have the same number of ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ncclz/error.hpp"

namespace ncclz::detail::comm {

/// FNV-1a of a string: the node key of a host name (or of NCCL_HOSTID where it is set).
[[nodiscard]] constexpr std::uint64_t node_key_of_name(std::string_view name) noexcept {
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

/// The node id of a text such as NCCLZ_NODE's value: a decimal integer 0 .. 2^63 - 1. Anything
/// else (empty, a sign, letters, too large) is invalid_argument naming `source`.
[[nodiscard]] inline std::uint64_t parse_node_id(std::string_view text, const char* source) {
  const auto bad = [&](const char* why) {
    throw_invalid("HierarchicalCommunicator",
                  std::string(source) + "='" + std::string(text) + "' is not a node id (" + why + ")");
  };
  if (text.empty()) bad("empty; expected a decimal integer >= 0");
  std::uint64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') bad("expected a decimal integer >= 0");
    if (v > (std::uint64_t{1} << 63) / 10) bad("too large");
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v >= (std::uint64_t{1} << 63)) bad("too large");
  return v;
}

/// Keys of explicit node ids and of host names never collide: host-name keys have the top bit set.
[[nodiscard]] constexpr std::uint64_t node_key_of_id(std::uint64_t id) noexcept { return id & ~(std::uint64_t{1} << 63); }
[[nodiscard]] constexpr std::uint64_t node_key_of_host(std::string_view host) noexcept {
  return node_key_of_name(host) | (std::uint64_t{1} << 63);
}

/// Which node every rank is on, and its index there.
struct node_map {
  int nranks = 0;
  int nodes = 0;
  int local_size = 0;           ///< ranks per node (equal on all nodes)
  std::vector<int> node_of;     ///< node index of each rank, 0 .. nodes - 1
  std::vector<int> local_of;    ///< index of each rank within its node, 0 .. local_size - 1
  std::vector<int> rank_at;     ///< rank_at[node * local_size + local]: the rank there

  [[nodiscard]] int rank_of(int node, int local) const { return rank_at[static_cast<std::size_t>(node) * local_size + local]; }
  /// Ranks numbered node by node (rank = node * local_size + local): blocks need no reordering.
  [[nodiscard]] bool node_major() const {
    for (int p = 0; p < nranks; ++p)
      if (rank_at[static_cast<std::size_t>(p)] != p) return false;
    return true;
  }
};

/// The node map of the gathered keys (keys[r]: rank r's). Throws invalid_argument when the
/// nodes have different numbers of ranks; every rank holds the same keys, so every rank throws
/// the same message.
[[nodiscard]] inline node_map make_node_map(const std::vector<std::uint64_t>& keys) {
  node_map m;
  m.nranks = static_cast<int>(keys.size());
  if (m.nranks == 0) throw_invalid("HierarchicalCommunicator", "no ranks");
  std::map<std::uint64_t, int> index;  // key -> node index, in order of first appearance
  std::vector<std::vector<int>> members;
  m.node_of.resize(keys.size());
  m.local_of.resize(keys.size());
  for (int r = 0; r < m.nranks; ++r) {
    const auto [it, fresh] = index.emplace(keys[static_cast<std::size_t>(r)], static_cast<int>(members.size()));
    if (fresh) members.emplace_back();
    m.node_of[static_cast<std::size_t>(r)] = it->second;
    m.local_of[static_cast<std::size_t>(r)] = static_cast<int>(members[static_cast<std::size_t>(it->second)].size());
    members[static_cast<std::size_t>(it->second)].push_back(r);
  }
  m.nodes = static_cast<int>(members.size());
  m.local_size = static_cast<int>(members[0].size());
  for (const std::vector<int>& ranks : members) {
    if (static_cast<int>(ranks.size()) == m.local_size) continue;
    std::string text;
    for (int n = 0; n < m.nodes; ++n) {
      const std::vector<int>& rs = members[static_cast<std::size_t>(n)];
      text += (n ? "; node " : "node ") + std::to_string(n) + ": " + std::to_string(rs.size()) + " rank(s) (";
      for (std::size_t i = 0; i < rs.size(); ++i) text += (i ? ", " : "") + std::to_string(rs[i]);
      text += ")";
    }
    throw_invalid("HierarchicalCommunicator", "every node must have the same number of ranks, but " + text +
                                                  " (nodes come from NCCLZ_NODE, hierarchy_config::node or the host "
                                                  "name; every rank reports this)");
  }
  m.rank_at.resize(keys.size());
  for (int n = 0; n < m.nodes; ++n)
    for (int l = 0; l < m.local_size; ++l)
      m.rank_at[static_cast<std::size_t>(n) * m.local_size + l] = members[static_cast<std::size_t>(n)][static_cast<std::size_t>(l)];
  return m;
}

/// How allreduce and reduce cut `count` values over a node's `local_size` ranks: local rank l owns
/// [l * shard, (l + 1) * shard); the last `tail` values (fewer than local_size), where count is not
/// a multiple of local_size, are reduced by one plain NCCL call over all ranks, exact.
struct shard_layout {
  std::size_t shard = 0;        ///< values each local rank owns
  std::size_t tail_offset = 0;  ///< local_size * shard
  std::size_t tail = 0;         ///< count - tail_offset, < local_size

  [[nodiscard]] std::size_t offset(int local) const noexcept { return static_cast<std::size_t>(local) * shard; }
};

[[nodiscard]] constexpr shard_layout shards_of(std::size_t count, int local_size) noexcept {
  const std::size_t l = local_size > 0 ? static_cast<std::size_t>(local_size) : 1;
  const std::size_t shard = count / l;
  return {shard, shard * l, count - shard * l};
}

/// A run of `blocks` consecutive blocks copied from block `from` to block `to`.
struct block_run {
  std::size_t from, to, blocks;
};

/// The copies that take blocks in rank order (block r: rank r's) to node-major order (block
/// p = node * local_size + local: rank rank_at[p]'s), as reduce_scatter needs before its
/// intra-node step; consecutive blocks merge into one run. Empty when the ranks are node-major.
[[nodiscard]] inline std::vector<block_run> to_node_major(const node_map& m) {
  std::vector<block_run> runs;
  if (m.node_major()) return runs;
  for (std::size_t p = 0; p < m.rank_at.size(); ++p) {
    const auto r = static_cast<std::size_t>(m.rank_at[p]);
    if (!runs.empty() && runs.back().from + runs.back().blocks == r && runs.back().to + runs.back().blocks == p) ++runs.back().blocks;
    else runs.push_back({r, p, 1});
  }
  return runs;
}

/// The inverse: node-major blocks back to rank order (allgather's last step).
[[nodiscard]] inline std::vector<block_run> from_node_major(const node_map& m) {
  std::vector<block_run> runs = to_node_major(m);
  for (block_run& b : runs) std::swap(b.from, b.to);
  return runs;
}

/// Unit roundoff of a binary floating-point type with `significand_bits` bits (the implicit one
/// included): 2^-24 float, 2^-53 double, 2^-11 __half, 2^-8 __nv_bfloat16.
[[nodiscard]] constexpr double unit_roundoff(int significand_bits) noexcept {
  double u = 1;
  for (int i = 0; i < significand_bits; ++i) u /= 2;
  return u;
}

/// What summing `local_size` values in T inside a node (NCCL's reduce-scatter, any order or tree:
/// each value takes part in at most local_size - 1 roundings) can miss the exact sum by, over
/// all nodes together: gamma(local_size - 1) x `abs_sum`, abs_sum the sum of |x| over all ranks'
/// values of the element, gamma(k) = k u / (1 - k u) (Higham, Accuracy and Stability of Numerical
/// Algorithms, 2nd ed., section 4.2). 0 with one rank per node.
[[nodiscard]] constexpr double intra_node_rounding(int local_size, double unit_roundoff, double abs_sum) noexcept {
  const double ku = static_cast<double>(local_size > 1 ? local_size - 1 : 0) * unit_roundoff;
  return ku >= 1 ? abs_sum : ku / (1 - ku) * abs_sum;
}

/// The bound of a hierarchical sum, element by element: the inter-node ncclz sum keeps
/// `inter_bound` (the caller's bound, applied to the node sums it was given), and the node sums
/// it was given miss the exact ones by intra_node_rounding at most; the result's own rounding to
/// T (half an ulp) comes on top, as for the flat Communicator.
[[nodiscard]] constexpr double hierarchical_sum_bound(double inter_bound, int local_size, double unit_roundoff,
                                                      double abs_sum) noexcept {
  return inter_bound + intra_node_rounding(local_size, unit_roundoff, abs_sum);
}

}  // namespace ncclz::detail::comm
