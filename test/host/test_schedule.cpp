// Host tests of the schedule layer (ncclz/schedule/*.hpp), by simulation: every rank's steps are
// played out together, checking at each step that every send meets a recv of the same segment on
// its peer (NCCL matches sends and recvs but does not check them) and, at the end, that each rank
// holds what the collective promises. Contributions are tracked as bit sets of ranks, and a
// reduction that would add a rank's contribution twice fails the test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ncclz/error.hpp"
#include "ncclz/pipeline.hpp"
#include "ncclz/schedule/schedule.hpp"

namespace {

namespace sch = ncclz::schedule;
using Catch::Matchers::Contains;
using mask = std::uint32_t;  // a set of ranks or segments (nranks <= 9 here)

constexpr std::uint64_t kTile = ncclz::format::kTileElements;
constexpr int kMaxRanks = 9;
const std::vector<std::uint64_t> kCounts = {0, 1, 8191, 8192 * 3 + 5, 1000003};

constexpr mask all(int n) { return (mask{1} << n) - 1; }

// Valid calls are constant expressions.
static_assert(sch::segment_of(8192 * 3 + 5, 2, 0) == sch::segment{0, 16384});
static_assert(sch::segment_of(8192 * 3 + 5, 2, 1) == sch::segment{16384, 8197});
static_assert(sch::segment_of(5, 3, 2) == sch::segment{5, 0});
static_assert(sch::chunk_count({0, 8192 * 3 + 5}, 10000) == 2);
static_assert(sch::ring_owned_segment(2, 4) == 2);
static_assert(sch::ring_reduce_scatter_step(0, 4, 0) == sch::ring_step{1, 3, 3, 2});
static_assert(sch::ring_allgather_step(0, 4, 0) == sch::ring_step{1, 3, 0, 3});
static_assert(sch::alltoall_step(1, 4, 3) == sch::peer_step{0, 2});
static_assert(sch::tree_parent(5, 8, 0) == 4 && sch::tree_parent(3, 8, 3) == -1);
static_assert(sch::tree_depth(1) == 0 && sch::tree_depth(8) == 3 && sch::tree_depth(9) == 4);
static_assert(sch::tree_children(0, 8, 0) == std::vector<int>{4, 2, 1});
static_assert(sch::choose_algorithm(sch::collective::allreduce, 1024, 8) == sch::algorithm::direct);
static_assert(sch::choose_algorithm(sch::collective::allreduce, 1024, 9) == sch::algorithm::ring);
static_assert(sch::doubling_core(6) == 4 && sch::doubling_step_count(6) == 2 && sch::doubling_step_count(1) == 0);
static_assert(sch::doubling_partner(1, 6, 0) == 3 && sch::doubling_partner(0, 6, 0) == -1);

/// Throws ncclz::invalid_argument whose message contains `word` (the argument's name).
template <class F>
void expect_invalid(F&& f, const std::string& word) {
  try {
    f();
    FAIL("no ncclz::invalid_argument (expected one naming " << word << ")");
  } catch (const ncclz::invalid_argument& e) {
    CHECK_THAT(e.what(), Contains(word));
  }
}

/// Checks that `parts` covers `whole` exactly and in order, each boundary on a multiple of
/// `granule` except those at whole.end().
void check_cover(const std::vector<sch::segment>& parts, sch::segment whole, std::uint64_t granule) {
  std::uint64_t at = whole.first;
  for (const auto& p : parts) {
    REQUIRE(p.first == at);
    at += p.count;
    if (at != whole.end()) REQUIRE(at % granule == 0);
  }
  REQUIRE(at == whole.end());
}

// ---------------------------------------------------------------------------------------------
// (a) partition

TEST_CASE("partition: segments cover [0, count) in order, on tile boundaries, balanced", "[schedule]") {
  for (const std::uint64_t granule : {std::uint64_t{kTile}, std::uint64_t{1}, std::uint64_t{100}}) {
    for (const std::uint64_t count : kCounts) {
      for (int parts = 1; parts <= kMaxRanks; ++parts) {
        CAPTURE(granule, count, parts);
        const auto segs = sch::segments(count, parts, granule);
        REQUIRE(segs.size() == static_cast<std::size_t>(parts));
        check_cover(segs, {0, count}, granule);
        // Balanced in granules, the extra ones in the first parts.
        std::uint64_t prev = std::numeric_limits<std::uint64_t>::max();
        const std::uint64_t units = (count + granule - 1) / granule;
        for (int i = 0; i < parts; ++i) {
          REQUIRE(segs[i] == sch::segment_of(count, parts, i, granule));
          const std::uint64_t g = (segs[i].count + granule - 1) / granule;
          REQUIRE(g <= prev);
          REQUIRE((g == units / parts || g == units / parts + 1));
          prev = g;
        }
      }
    }
  }
}

TEST_CASE("partition: the default granule is one tile", "[schedule]") {
  REQUIRE(sch::segments(8192 * 3 + 5, 3) == sch::segments(8192 * 3 + 5, 3, kTile));
  // Small counts: one non-empty part, the rest empty at the end.
  REQUIRE(sch::segments(8191, 3) == std::vector<sch::segment>{{0, 8191}, {8191, 0}, {8191, 0}});
}

TEST_CASE("partition: counts near 2^64 do not overflow", "[schedule]") {
  const std::uint64_t count = std::numeric_limits<std::uint64_t>::max();
  for (int parts = 1; parts <= kMaxRanks; ++parts) {
    CAPTURE(parts);
    check_cover(sch::segments(count, parts), {0, count}, kTile);
  }
  const auto chunks = sch::chunks_of({0, count}, std::numeric_limits<std::uint64_t>::max());
  REQUIRE(chunks.size() == 2);  // the largest tile multiple, then the rest
  check_cover(chunks, {0, count}, kTile);
}

TEST_CASE("partition: chunks of every segment cover it, tile-aligned, last one shorter", "[schedule]") {
  for (const std::uint64_t count : kCounts) {
    for (int parts = 1; parts <= kMaxRanks; ++parts) {
      for (const auto& s : sch::segments(count, parts)) {
        for (const std::uint64_t chunk : {std::uint64_t{1}, std::uint64_t{8192}, std::uint64_t{10000},
                                          std::uint64_t{3 * 8192}, std::uint64_t{1} << 40}) {
          CAPTURE(count, parts, s.first, s.count, chunk);
          const std::uint64_t size = (chunk + kTile - 1) / kTile * kTile;
          const auto chunks = sch::chunks_of(s, chunk);
          REQUIRE(chunks.size() == sch::chunk_count(s, chunk));
          REQUIRE(chunks.size() == (s.count + size - 1) / size);
          check_cover(chunks, s, kTile);
          for (std::size_t k = 0; k + 1 < chunks.size(); ++k) REQUIRE(chunks[k].count == size);
          for (std::size_t k = 0; k < chunks.size(); ++k) REQUIRE(chunks[k] == sch::chunk_of(s, chunk, k));
        }
      }
    }
  }
  REQUIRE(sch::chunks_of({5, 0}, 8192).empty());
}

// ---------------------------------------------------------------------------------------------
// Ring simulation helpers

/// At one step, every send of rank r to p is matched by p's recv from r of the same segment.
template <class StepFn>
void check_matched(int n, StepFn step) {
  for (int r = 0; r < n; ++r) {
    const sch::ring_step st = step(r);
    REQUIRE(st.send_peer == (r + 1) % n);
    REQUIRE(st.recv_peer == (r - 1 + n) % n);
    REQUIRE((st.send_segment >= 0 && st.send_segment < n && st.recv_segment >= 0 && st.recv_segment < n));
    const sch::ring_step peer = step(st.send_peer);
    REQUIRE(peer.recv_peer == r);
    REQUIRE(peer.recv_segment == st.send_segment);
  }
}

/// have[r][j]: the ranks whose contributions rank r's copy of segment j holds.
using contributions = std::vector<std::vector<mask>>;

contributions own_contributions(int n) {
  contributions have(n, std::vector<mask>(n));
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < n; ++j) have[r][j] = mask{1} << r;
  return have;
}

/// Plays a ring reduce-scatter on `have`; every received partial sum is added to the local one.
void simulate_reduce_scatter(int n, contributions& have) {
  REQUIRE(sch::ring_step_count(n) == n - 1);
  for (int s = 0; s < n - 1; ++s) {
    CAPTURE(s);
    const auto step = [&](int r) { return sch::ring_reduce_scatter_step(r, n, s); };
    check_matched(n, step);
    contributions next = have;  // all ranks send, then all receive
    for (int r = 0; r < n; ++r) {
      const auto st = step(r);
      // A chain: what goes on is what came in (and was reduced) one step earlier.
      if (s > 0) REQUIRE(st.send_segment == sch::ring_reduce_scatter_step(r, n, s - 1).recv_segment);
      const mask sent = have[r][st.send_segment];
      REQUIRE((next[st.send_peer][st.send_segment] & sent) == 0);  // never add a rank twice
      next[st.send_peer][st.send_segment] |= sent;
    }
    have = std::move(next);
  }
}

/// Plays a ring allgather on `have`: a received segment replaces the local copy, unchanged.
/// `owned[r]` says which segments rank r holds; each must be valid before it is sent.
void simulate_allgather(int n, contributions& have, std::vector<mask>& owned) {
  for (int s = 0; s < n - 1; ++s) {
    CAPTURE(s);
    const auto step = [&](int r) { return sch::ring_allgather_step(r, n, s); };
    check_matched(n, step);
    contributions next = have;
    std::vector<mask> next_owned = owned;
    for (int r = 0; r < n; ++r) {
      const auto st = step(r);
      if (s == 0) REQUIRE(st.send_segment == sch::ring_owned_segment(r, n));
      else REQUIRE(st.send_segment == sch::ring_allgather_step(r, n, s - 1).recv_segment);  // forwarded
      REQUIRE((owned[r] >> st.send_segment & 1u) == 1u);                 // it has what it sends
      REQUIRE((owned[st.send_peer] >> st.send_segment & 1u) == 0u);      // no wasted transfer
      next[st.send_peer][st.send_segment] = have[r][st.send_segment];
      next_owned[st.send_peer] |= mask{1} << st.send_segment;
    }
    have = std::move(next);
    owned = std::move(next_owned);
  }
}

// ---------------------------------------------------------------------------------------------
// (b) (c) ring

TEST_CASE("ring reduce-scatter: rank r ends with the full reduction of segment r", "[schedule]") {
  for (int n = 1; n <= kMaxRanks; ++n) {
    CAPTURE(n);
    contributions have = own_contributions(n);
    simulate_reduce_scatter(n, have);
    for (int r = 0; r < n; ++r) {
      REQUIRE(sch::ring_owned_segment(r, n) == r);  // ncclReduceScatter: rank r gets segment r
      REQUIRE(have[r][r] == all(n));
    }
  }
}

TEST_CASE("ring allgather: every rank ends with every segment, forwarded unchanged", "[schedule]") {
  for (int n = 1; n <= kMaxRanks; ++n) {
    CAPTURE(n);
    // Segment j's content is "rank j's data": the set {j}.
    contributions have(n, std::vector<mask>(n, 0));
    std::vector<mask> owned(n);
    for (int r = 0; r < n; ++r) {
      have[r][r] = mask{1} << r;
      owned[r] = mask{1} << r;
    }
    simulate_allgather(n, have, owned);
    for (int r = 0; r < n; ++r) {
      REQUIRE(owned[r] == all(n));
      for (int j = 0; j < n; ++j) REQUIRE(have[r][j] == mask{1} << j);
    }
  }
}

TEST_CASE("ring allreduce = reduce-scatter, then allgather: every rank holds the full sum", "[schedule]") {
  for (int n = 1; n <= kMaxRanks; ++n) {
    CAPTURE(n);
    contributions have = own_contributions(n);
    simulate_reduce_scatter(n, have);
    std::vector<mask> owned(n);
    for (int r = 0; r < n; ++r) owned[r] = mask{1} << sch::ring_owned_segment(r, n);
    simulate_allgather(n, have, owned);
    for (int r = 0; r < n; ++r)
      for (int j = 0; j < n; ++j) REQUIRE(have[r][j] == all(n));
  }
}

// ---------------------------------------------------------------------------------------------
// (d) alltoall

TEST_CASE("alltoall: every (source, destination) pair exactly once, matched per step", "[schedule]") {
  for (int n = 1; n <= kMaxRanks; ++n) {
    CAPTURE(n);
    std::vector<std::vector<int>> seen(n, std::vector<int>(n, 0));
    for (int s = 0; s < n; ++s) {
      for (int r = 0; r < n; ++r) {
        const auto st = sch::alltoall_step(r, n, s);
        if (s == 0) REQUIRE(st == sch::peer_step{r, r});  // own block: local copy
        REQUIRE(sch::alltoall_step(st.send_peer, n, s).recv_peer == r);
        ++seen[r][st.send_peer];
      }
    }
    for (int src = 0; src < n; ++src)
      for (int dst = 0; dst < n; ++dst) REQUIRE(seen[src][dst] == 1);
  }
}

// ---------------------------------------------------------------------------------------------
// (e) tree

struct reduced {
  int round;  ///< the round in which this rank's partial result is complete
  mask ranks; ///< whose contributions it holds
};

/// Reduce of `rank`'s subtree: receive from the children in reverse tree_children order, one
/// receive a round, each only once that child's own reduce is complete.
reduced simulate_reduce(int rank, int n, int root) {
  reduced me{0, mask{1} << rank};
  auto children = sch::tree_children(rank, n, root);
  for (auto it = children.rbegin(); it != children.rend(); ++it) {
    const reduced c = simulate_reduce(*it, n, root);
    REQUIRE((me.ranks & c.ranks) == 0);  // never add a rank twice
    me.ranks |= c.ranks;
    me.round = std::max(me.round, c.round) + 1;
  }
  return me;
}

/// Broadcast: a rank that has the data in round t sends to its children in tree_children order
/// in rounds t + 1, t + 2, ...; returns each rank's arrival round (-1: never).
std::vector<int> simulate_broadcast(int n, int root) {
  std::vector<int> arrived(n, -1);
  std::vector<int> todo{root};
  arrived[root] = 0;
  while (!todo.empty()) {
    const int r = todo.back();
    todo.pop_back();
    int t = arrived[r];
    for (const int c : sch::tree_children(r, n, root)) {
      REQUIRE(arrived[c] == -1);  // reached once: no cycles, one parent
      arrived[c] = ++t;
      todo.push_back(c);
    }
  }
  return arrived;
}

TEST_CASE("tree: one parent each, consistent children, no cycles, depth <= ceil(log2 n)", "[schedule]") {
  for (int n = 1; n <= kMaxRanks; ++n) {
    const int depth = sch::tree_depth(n);
    REQUIRE(depth == static_cast<int>(std::bit_width(static_cast<unsigned>(n - 1))));  // ceil(log2 n)
    for (int root = 0; root < n; ++root) {
      CAPTURE(n, root);
      std::vector<int> as_child(n, 0);
      int deepest = 0;
      for (int r = 0; r < n; ++r) {
        const int parent = sch::tree_parent(r, n, root);
        if (r == root) REQUIRE(parent == -1);
        else REQUIRE((parent >= 0 && parent < n && parent != r));
        for (const int c : sch::tree_children(r, n, root)) {
          REQUIRE(sch::tree_parent(c, n, root) == r);
          ++as_child[c];
        }
        // Walking up reaches the root within `depth` hops: no cycles.
        int hops = 0;
        for (int at = r; at != root; at = sch::tree_parent(at, n, root)) {
          ++hops;
          REQUIRE(hops <= depth);
        }
        deepest = std::max(deepest, hops);
      }
      REQUIRE(deepest <= depth);
      for (int r = 0; r < n; ++r) REQUIRE(as_child[r] == (r == root ? 0 : 1));
    }
  }
}

TEST_CASE("tree broadcast reaches every rank within tree_depth rounds", "[schedule]") {
  for (int n = 1; n <= kMaxRanks; ++n) {
    for (int root = 0; root < n; ++root) {
      CAPTURE(n, root);
      const auto arrived = simulate_broadcast(n, root);
      REQUIRE(*std::max_element(arrived.begin(), arrived.end()) == sch::tree_depth(n));
      for (int r = 0; r < n; ++r) {
        REQUIRE(arrived[r] >= 0);
        REQUIRE(arrived[r] <= sch::tree_depth(n));  // holds only with largest subtree first
        if (r != root) REQUIRE(arrived[sch::tree_parent(r, n, root)] < arrived[r]);
      }
    }
  }
}

TEST_CASE("tree reduce gathers every contribution at the root within tree_depth rounds", "[schedule]") {
  for (int n = 1; n <= kMaxRanks; ++n) {
    for (int root = 0; root < n; ++root) {
      CAPTURE(n, root);
      const reduced at_root = simulate_reduce(root, n, root);
      REQUIRE(at_root.ranks == all(n));
      REQUIRE(at_root.round <= sch::tree_depth(n));  // holds only with smallest subtree first
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Policies

TEST_CASE("schedule policies: names and algorithm choice", "[schedule]") {
  using sch::algorithm;
  using sch::collective;
  STATIC_REQUIRE(sch::SchedulePolicy<sch::Ring>);
  STATIC_REQUIRE(!sch::SchedulePolicy<int>);
  REQUIRE(std::string(sch::Ring::name) == "ring");
  REQUIRE(std::string(sch::Tree::name) == "tree");
  REQUIRE(std::string(sch::Auto::name) == "auto");
  REQUIRE(std::string(sch::name(collective::reduce_scatter)) == "reduce_scatter");
  REQUIRE(std::string(sch::name(algorithm::tree)) == "tree");

  REQUIRE(std::string(sch::Direct::name) == "direct");
  for (const std::uint64_t bytes : {std::uint64_t{0}, std::uint64_t{4096}, std::uint64_t{1} << 40}) {
    for (int n = 1; n <= kMaxRanks; ++n) {
      const algorithm reduction = n <= sch::kDirectMaxRanks ? algorithm::direct : algorithm::ring;
      for (const auto c : {collective::reduce_scatter, collective::reduce}) {
        REQUIRE(sch::choose_algorithm(c, bytes, n) == reduction);
      }
      REQUIRE(sch::choose_algorithm(collective::allreduce, bytes, n) ==
              (sch::doubling_preferred(bytes, n) ? algorithm::recursive_doubling : reduction));
      REQUIRE(sch::choose_algorithm(collective::broadcast, bytes, n) == algorithm::ring);
      REQUIRE(sch::choose_algorithm(collective::allgather, bytes, n) == algorithm::direct);
      REQUIRE(sch::choose_algorithm(collective::alltoall, bytes, n) == algorithm::direct);
      for (const auto c : {collective::allreduce, collective::reduce_scatter, collective::allgather,
                           collective::broadcast, collective::reduce, collective::alltoall}) {
        const algorithm a = sch::algorithm_for(sch::Auto{}, c, bytes, n);
        REQUIRE(a == sch::choose_algorithm(c, bytes, n));
        REQUIRE(sch::supports(a, c));  // Auto never picks an algorithm without a schedule
      }
    }
  }
  REQUIRE(sch::algorithm_for(sch::Ring{}, collective::allreduce, 1, 4) == algorithm::ring);
  REQUIRE(sch::algorithm_for(sch::Direct{}, collective::allreduce, 1, 64) == algorithm::direct);
  REQUIRE(sch::algorithm_for(sch::Tree{}, collective::broadcast, 1, 4) == algorithm::tree);
  REQUIRE(sch::algorithm_for(sch::RecursiveDoubling{}, collective::allreduce, 1, 5) == algorithm::recursive_doubling);
  REQUIRE(std::string(sch::RecursiveDoubling::name) == "recursive_doubling");
  REQUIRE(std::string(sch::name(algorithm::recursive_doubling)) == "recursive_doubling");
  STATIC_REQUIRE(sch::SchedulePolicy<sch::RecursiveDoubling>);
  // Auto's recursive doubling: 2 ranks below 32 MiB each, 4 ranks below 16 MiB, no other count.
  constexpr std::uint64_t MiB = std::uint64_t{1} << 20;
  STATIC_REQUIRE(sch::doubling_preferred(0, 2) && sch::doubling_preferred(32 * MiB - 1, 2));
  STATIC_REQUIRE(!sch::doubling_preferred(32 * MiB, 2));
  STATIC_REQUIRE(sch::doubling_preferred(16 * MiB - 1, 4) && !sch::doubling_preferred(16 * MiB, 4));
  for (const int n : {1, 3, 5, 6, 7, 8, 16, 64}) REQUIRE_FALSE(sch::doubling_preferred(4096, n));
  REQUIRE(sch::choose_algorithm(collective::allreduce, 8 * MiB, 4) == algorithm::recursive_doubling);
  REQUIRE(sch::choose_algorithm(collective::allreduce, 16 * MiB, 4) == algorithm::direct);
  REQUIRE(sch::choose_algorithm(collective::allreduce, 4096, 3) == algorithm::direct);
  REQUIRE(sch::choose_algorithm(collective::reduce_scatter, 4096, 4) == algorithm::direct);
  for (const auto c : {collective::reduce_scatter, collective::allgather, collective::broadcast, collective::reduce,
                       collective::alltoall}) {
    REQUIRE_FALSE(sch::supports(algorithm::recursive_doubling, c));
  }
}

// ---------------------------------------------------------------------------------------------
// Recursive doubling

TEST_CASE("recursive doubling: partners match, every rank ends with every contribution once", "[schedule]") {
  for (int n = 1; n <= kMaxRanks; ++n) {
    CAPTURE(n);
    const int core = sch::doubling_core(n), steps = sch::doubling_step_count(n);
    REQUIRE(core <= n);
    REQUIRE(2 * core > n);
    REQUIRE((1 << steps) == core);
    // held[r][q]: how many times rank r's sum holds rank q's contribution.
    std::vector<std::vector<int>> held(n, std::vector<int>(n, 0));
    for (int r = 0; r < n; ++r) held[r][r] = 1;
    int folded = 0;
    // Fold: the rank that folds out sends, its partner adds.
    for (int r = 0; r < n; ++r) {
      const int f = sch::doubling_fold_partner(r, n);
      if (f < 0) {
        REQUIRE(sch::doubling_role_of(r, n) == sch::doubling_role::core);
        continue;
      }
      REQUIRE(sch::doubling_fold_partner(f, n) == r);
      REQUIRE(sch::doubling_role_of(r, n) != sch::doubling_role_of(f, n));
      REQUIRE(sch::doubling_role_of(r, n) != sch::doubling_role::core);
      if (sch::doubling_role_of(r, n) == sch::doubling_role::folds_out) {
        ++folded;
        for (int q = 0; q < n; ++q) held[f][q] += held[r][q];
      }
    }
    REQUIRE(folded == n - core);
    // Steps: matched pairs among the ranks that did not fold out; both add the other's sum.
    for (int s = 0; s < steps; ++s) {
      CAPTURE(s);
      std::vector<std::vector<int>> next = held;
      int active = 0;
      for (int r = 0; r < n; ++r) {
        const int p = sch::doubling_partner(r, n, s);
        if (sch::doubling_role_of(r, n) == sch::doubling_role::folds_out) {
          REQUIRE(p == -1);
          continue;
        }
        ++active;
        REQUIRE(p >= 0);
        REQUIRE(p < n);
        REQUIRE(p != r);
        REQUIRE(sch::doubling_partner(p, n, s) == r);
        for (int q = 0; q < n; ++q) next[r][q] += held[p][q];
      }
      REQUIRE(active == core);
      held = next;
    }
    // Unfold: the absorbing rank sends its result; the folded-out one takes it as it is.
    for (int r = 0; r < n; ++r) {
      if (sch::doubling_role_of(r, n) == sch::doubling_role::folds_out) held[r] = held[sch::doubling_fold_partner(r, n)];
    }
    for (int r = 0; r < n; ++r) {
      for (int q = 0; q < n; ++q) {
        CAPTURE(r, q);
        REQUIRE(held[r][q] == 1);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// (f) invalid arguments

TEST_CASE("schedule: invalid arguments are invalid_argument naming the argument", "[schedule]") {
  using sch::collective;
  expect_invalid([] { (void)sch::segment_of(10, 0, 0); }, "parts");
  expect_invalid([] { (void)sch::segment_of(10, -1, 0); }, "parts");
  expect_invalid([] { (void)sch::segment_of(10, 3, 3); }, "index");
  expect_invalid([] { (void)sch::segment_of(10, 3, -1); }, "index");
  expect_invalid([] { (void)sch::segment_of(10, 3, 0, 0); }, "granule");
  expect_invalid([] { (void)sch::segments(10, 0); }, "parts");
  expect_invalid([] { (void)sch::chunks_of({0, 10}, 0); }, "chunk_elements");
  expect_invalid([] { (void)sch::chunks_of({0, 0}, 0); }, "chunk_elements");
  expect_invalid([] { (void)sch::chunk_count({0, 10}, 8192, 0); }, "granule");
  expect_invalid([] { (void)sch::chunk_of({0, 10}, 8192, 1); }, "chunk k");

  expect_invalid([] { (void)sch::ring_step_count(0); }, "nranks");
  expect_invalid([] { (void)sch::ring_owned_segment(4, 4); }, "rank");
  expect_invalid([] { (void)sch::ring_reduce_scatter_step(0, 0, 0); }, "nranks");
  expect_invalid([] { (void)sch::ring_reduce_scatter_step(-1, 4, 0); }, "rank");
  expect_invalid([] { (void)sch::ring_reduce_scatter_step(0, 4, 3); }, "step");
  expect_invalid([] { (void)sch::ring_allgather_step(4, 4, 0); }, "rank");
  expect_invalid([] { (void)sch::ring_allgather_step(0, 1, 0); }, "step");  // one rank: no steps
  expect_invalid([] { (void)sch::ring_allgather_step(0, 4, -1); }, "step");
  expect_invalid([] { (void)sch::alltoall_step(0, 4, 4); }, "step");
  expect_invalid([] { (void)sch::alltoall_step(0, 0, 0); }, "nranks");

  expect_invalid([] { (void)sch::tree_depth(0); }, "nranks");
  expect_invalid([] { (void)sch::tree_parent(4, 4, 0); }, "rank");
  expect_invalid([] { (void)sch::tree_parent(0, 4, 4); }, "root");
  expect_invalid([] { (void)sch::tree_children(0, 4, -1); }, "root");
  expect_invalid([] { (void)sch::tree_children(0, -2, 0); }, "nranks");

  expect_invalid([] { (void)sch::choose_algorithm(collective::allreduce, 1, 0); }, "nranks");
  expect_invalid([] { (void)sch::doubling_core(0); }, "nranks");
  expect_invalid([] { (void)sch::doubling_role_of(5, 5); }, "rank");
  expect_invalid([] { (void)sch::doubling_partner(0, 5, 2); }, "step");
  expect_invalid([] { (void)sch::doubling_partner(0, 1, 0); }, "step");  // one rank: no steps
  expect_invalid([] { (void)sch::algorithm_for(sch::RecursiveDoubling{}, collective::reduce, 1, 4); }, "reduce");
  expect_invalid([] { (void)sch::algorithm_for(sch::RecursiveDoubling{}, collective::broadcast, 1, 4); }, "broadcast");
  expect_invalid([] { (void)sch::algorithm_for(sch::Tree{}, collective::alltoall, 1, 4); }, "alltoall");
  expect_invalid([] { (void)sch::algorithm_for(sch::Ring{}, collective::allgather, 1, 4); }, "allgather");
  expect_invalid([] { (void)sch::algorithm_for(sch::Tree{}, collective::allreduce, 1, 4); }, "allreduce");
  expect_invalid([] { (void)sch::algorithm_for(sch::Direct{}, collective::broadcast, 1, 4); }, "broadcast");
}

}  // namespace

TEST_CASE("pipeline parts: one per part size, at least one, at most the policy's limit", "[schedule][pipeline]") {
  constexpr std::uint64_t MiB = std::uint64_t{1} << 20;
  static_assert(ncclz::Pipeline<ncclz::Auto>::max_parts == 8);
  static_assert(ncclz::Pipeline<ncclz::NoOverlap>::max_parts == 1 && ncclz::Pipeline<ncclz::Overlap<4>>::max_parts == 4);
  const int auto_parts = ncclz::Pipeline<ncclz::Auto>::max_parts;
  CHECK(ncclz::pipeline_parts(0, 64 * MiB, auto_parts) == 1);
  CHECK(ncclz::pipeline_parts(127 * MiB, 64 * MiB, auto_parts) == 1);
  CHECK(ncclz::pipeline_parts(128 * MiB, 64 * MiB, auto_parts) == 2);
  CHECK(ncclz::pipeline_parts(256 * MiB, 64 * MiB, auto_parts) == 4);
  CHECK(ncclz::pipeline_parts(1024 * MiB, 64 * MiB, auto_parts) == 8);
  CHECK(ncclz::pipeline_parts(256 * MiB, 64 * MiB, 1) == 1);
  CHECK(ncclz::pipeline_parts(256 * MiB, 0, 16) == 16);  // a part size of 0 counts as 1 byte
  CHECK(ncclz::pipeline_parts(~std::uint64_t{0}, 1, 16) == 16);
}
