// Host tests of the hierarchical collectives' arithmetic (detail/comm/node_map.hpp): node maps
// from gathered keys and their validation, NCCLZ_NODE's text, the shards of a node's ranks, the
// block orders of reduce_scatter and allgather, and the bound of a hierarchical sum.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ncclz/detail/comm/node_map.hpp"
#include "ncclz/error.hpp"

namespace {
using namespace ncclz::detail::comm;

std::vector<std::uint64_t> keys_of(const std::vector<int>& ids) {
  std::vector<std::uint64_t> k;
  for (const int id : ids) k.push_back(node_key_of_id(static_cast<std::uint64_t>(id)));
  return k;
}

/// Applies block runs to a vector of block labels.
std::vector<int> moved(const std::vector<block_run>& runs, const std::vector<int>& blocks) {
  std::vector<int> out(blocks.size(), -1);
  for (const block_run& b : runs)
    for (std::size_t i = 0; i < b.blocks; ++i) out[b.to + i] = blocks[b.from + i];
  return out;
}
}  // namespace

TEST_CASE("hierarchy: node-major ranks, as emulated_cluster.sh --ranks-per-node sets them", "[hierarchy]") {
  const node_map m = make_node_map(keys_of({0, 0, 1, 1, 2, 2}));  // NCCLZ_NODE = r / 2
  CHECK(m.nranks == 6);
  CHECK(m.nodes == 3);
  CHECK(m.local_size == 2);
  CHECK(m.node_of == std::vector<int>{0, 0, 1, 1, 2, 2});
  CHECK(m.local_of == std::vector<int>{0, 1, 0, 1, 0, 1});
  CHECK(m.rank_of(2, 1) == 5);
  CHECK(m.node_major());
  CHECK(to_node_major(m).empty());
  CHECK(from_node_major(m).empty());
}

TEST_CASE("hierarchy: nodes are numbered by their first rank, whatever their ids", "[hierarchy]") {
  const node_map m = make_node_map(keys_of({7, 3, 7, 3}));  // round-robin placement
  CHECK(m.nodes == 2);
  CHECK(m.local_size == 2);
  CHECK(m.node_of == std::vector<int>{0, 1, 0, 1});
  CHECK(m.local_of == std::vector<int>{0, 0, 1, 1});
  CHECK(m.rank_at == std::vector<int>{0, 2, 1, 3});
  CHECK_FALSE(m.node_major());
  // reduce_scatter reorders rank-ordered blocks node-major; allgather takes them back.
  const std::vector<int> by_rank = {0, 1, 2, 3};
  const std::vector<int> node_major = moved(to_node_major(m), by_rank);
  CHECK(node_major == std::vector<int>{0, 2, 1, 3});
  CHECK(moved(from_node_major(m), node_major) == by_rank);
}

TEST_CASE("hierarchy: block runs merge consecutive blocks", "[hierarchy]") {
  // Nodes {0, 1, 4, 5} and {2, 3, 6, 7}: node-major order 0 1 4 5 2 3 6 7, four runs of two.
  const node_map m = make_node_map(keys_of({0, 0, 1, 1, 0, 0, 1, 1}));
  CHECK(m.local_size == 4);
  const std::vector<block_run> runs = to_node_major(m);
  REQUIRE(runs.size() == 4);
  for (const block_run& b : runs) CHECK(b.blocks == 2);
  std::vector<int> by_rank(8);
  for (int r = 0; r < 8; ++r) by_rank[r] = r;
  CHECK(moved(runs, by_rank) == std::vector<int>{0, 1, 4, 5, 2, 3, 6, 7});
  CHECK(moved(from_node_major(m), moved(runs, by_rank)) == by_rank);
}

TEST_CASE("hierarchy: one node, and one rank per node", "[hierarchy]") {
  const node_map one = make_node_map(keys_of({5, 5, 5}));
  CHECK(one.nodes == 1);
  CHECK(one.local_size == 3);
  const node_map flat = make_node_map({node_key_of_host("a"), node_key_of_host("b"), node_key_of_host("c")});
  CHECK(flat.nodes == 3);
  CHECK(flat.local_size == 1);
  CHECK(flat.node_major());
}

TEST_CASE("hierarchy: nodes of different sizes are refused with the whole map", "[hierarchy]") {
  try {
    (void)make_node_map(keys_of({0, 0, 1, 1, 1}));
    FAIL("no exception");
  } catch (const ncclz::invalid_argument& e) {
    const std::string m = e.what();
    CHECK(m.find("same number of ranks") != std::string::npos);
    CHECK(m.find("node 0: 2 rank(s) (0, 1)") != std::string::npos);
    CHECK(m.find("node 1: 3 rank(s) (2, 3, 4)") != std::string::npos);
  }
  CHECK_THROWS_AS(make_node_map({}), ncclz::invalid_argument);
}

TEST_CASE("hierarchy: NCCLZ_NODE is a decimal node id", "[hierarchy]") {
  CHECK(parse_node_id("0", "NCCLZ_NODE") == 0);
  CHECK(parse_node_id("17", "NCCLZ_NODE") == 17);
  CHECK(parse_node_id("9223372036854775807", "NCCLZ_NODE") == 9223372036854775807ull);
  for (const char* bad : {"", "-1", "+1", "1a", " 1", "node1", "9223372036854775808", "99999999999999999999"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(parse_node_id(bad, "NCCLZ_NODE"), Catch::Contains("NCCLZ_NODE='" + std::string(bad) + "'"));
  }
  // Ids and host names never share a key.
  CHECK(node_key_of_id(3) != node_key_of_host("3"));
  CHECK(node_key_of_host("gpu-a") == node_key_of_host("gpu-a"));
  CHECK(node_key_of_host("gpu-a") != node_key_of_host("gpu-b"));
}

TEST_CASE("hierarchy: shards of a node's ranks and the exact tail", "[hierarchy]") {
  const shard_layout even = shards_of(1000, 4);
  CHECK(even.shard == 250);
  CHECK(even.tail == 0);
  CHECK(even.offset(3) == 750);
  const shard_layout odd = shards_of(1000003, 3);
  CHECK(odd.shard == 333334);
  CHECK(odd.tail_offset == 1000002);
  CHECK(odd.tail == 1);
  const shard_layout small = shards_of(2, 3);  // fewer values than local ranks: all in the tail
  CHECK(small.shard == 0);
  CHECK(small.tail == 2);
  for (std::size_t count : {0ul, 1ul, 5ul, 8193ul, 1000003ul})
    for (int l = 1; l <= 8; ++l) {
      const shard_layout s = shards_of(count, l);
      CHECK(s.tail_offset + s.tail == count);
      CHECK(s.tail < static_cast<std::size_t>(l));
      CHECK(s.offset(l) == s.tail_offset);
    }
}

TEST_CASE("hierarchy: the bound of a sum composes the inter-node bound and T's rounding", "[hierarchy]") {
  CHECK(unit_roundoff(24) == std::ldexp(1.0, -24));
  CHECK(unit_roundoff(53) == std::ldexp(1.0, -53));
  CHECK(unit_roundoff(11) == std::ldexp(1.0, -11));
  CHECK(unit_roundoff(8) == std::ldexp(1.0, -8));
  // One rank per node: nothing is summed inside a node, the bound is the inter-node one.
  CHECK(hierarchical_sum_bound(1e-3, 1, unit_roundoff(24), 1e6) == 1e-3);
  // Two ranks per node: one rounding of each node sum, u x sum |x| / (1 - u).
  const double u = unit_roundoff(24);
  CHECK(intra_node_rounding(2, u, 100.0) == Approx(100.0 * u / (1 - u)));
  CHECK(hierarchical_sum_bound(1e-3, 4, u, 100.0) == Approx(1e-3 + 3 * u / (1 - 3 * u) * 100.0));
  // Float: two values whose sum rounds. 1 + 2^-24 is not a float: the node sum 1 + 2^-24 rounds
  // by 2^-24 at most, within gamma(1) x (1 + 2^-24).
  const float a = 1.0f, b = 0x1p-24f;
  const double err = std::fabs(static_cast<double>(a + b) - (1.0 + 0x1p-24));
  CHECK(err <= intra_node_rounding(2, u, 1.0 + 0x1p-24));
  // Absurd precision loss is capped at the sum of magnitudes.
  CHECK(intra_node_rounding(1000, unit_roundoff(2), 5.0) == 5.0);
}
