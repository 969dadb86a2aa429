// Host tests of the autotuner's plan (detail/comm/route_tuning.hpp): warm calls, probes
// interleaved over two or three routes (compressed with each coder the Codec may run, then
// NCCL's), the decision on the slowest rank's medians with a margin that keeps NCCL on a near
// tie and no margin between coders, re-checks, and the same decision on every rank.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <vector>

#include "ncclz/detail/comm/route_tuning.hpp"

namespace {
using ncclz::detail::comm::route_tuning;
using kind = route_tuning::kind;
using step = route_tuning::step;

constexpr step warm(int r) { return {kind::warm, r, 0}; }
constexpr step probe(int r, int round) { return {kind::probe, r, round}; }
constexpr step keep(int r) { return {kind::keep, r, 0}; }
constexpr step decide() { return {kind::decide, -1, -1}; }

/// What the router does on every rank: gather the probe times (route-major) with a maximum over
/// the ranks, take each route's median, choose.
int decision(const std::vector<std::vector<float>>& ms_of_rank, int routes) {
  std::vector<float> slowest(ms_of_rank[0].size(), 0.0f);
  for (const auto& ms : ms_of_rank)
    for (std::size_t i = 0; i < ms.size(); ++i) slowest[i] = std::max(slowest[i], ms[i]);
  return route_tuning::choose(route_tuning::medians(slowest.data(), routes), routes);
}
}  // namespace

TEST_CASE("route tuning: one coder: warm calls, then probes alternating routes, then the decision", "[autotune]") {
  static_assert(route_tuning::kRounds == 3);
  const std::array<step, 9> first = {warm(0),     warm(1),     probe(0, 0), probe(1, 0), probe(0, 1),
                                     probe(1, 1), probe(0, 2), probe(1, 2), decide()};
  for (std::uint64_t k = 0; k < first.size(); ++k) {
    CAPTURE(k);
    CHECK(route_tuning::step_of(k, false, 2) == first[k]);
  }
  // A re-check probes at once: every route is warm by then.
  const std::array<step, 7> again = {probe(0, 0), probe(1, 0), probe(0, 1), probe(1, 1), probe(0, 2), probe(1, 2), decide()};
  for (std::uint64_t k = 0; k < again.size(); ++k) {
    CAPTURE(k);
    CHECK(route_tuning::step_of(k, true, 2) == again[k]);
  }
}

TEST_CASE("route tuning: EntropyCoder<Auto>: FixedLength, Adaptive and NCCL warm, then probed A B C A B C A B C", "[autotune]") {
  const std::array<step, 13> first = {warm(0),     warm(1),     warm(2),     probe(0, 0), probe(1, 0), probe(2, 0), probe(0, 1),
                                      probe(1, 1), probe(2, 1), probe(0, 2), probe(1, 2), probe(2, 2), decide()};
  for (std::uint64_t k = 0; k < first.size(); ++k) {
    CAPTURE(k);
    CHECK(route_tuning::step_of(k, false, 3) == first[k]);
  }
  for (std::uint64_t k = 0; k < 9; ++k) {
    CAPTURE(k);
    CHECK(route_tuning::step_of(k, true, 3) == first[k + 3]);
  }
  CHECK(route_tuning::step_of(9, true, 3) == decide());
}

TEST_CASE("route tuning: the plan of a size class: decisions, calls on the decision, re-checks", "[autotune]") {
  for (const int routes : {2, 3}) {
    CAPTURE(routes);
    route_tuning::state s;
    const std::uint64_t recheck = 4;
    const auto run_until_decide = [&](bool rechecking) {
      const int expected = (rechecking ? 0 : routes) + routes * route_tuning::kRounds;
      for (int k = 0; k < expected; ++k) {
        const step got = s.next(routes, recheck);
        CAPTURE(k);
        REQUIRE(got == route_tuning::step_of(static_cast<std::uint64_t>(k), rechecking, routes));
      }
      REQUIRE(s.next(routes, recheck) == decide());
    };
    run_until_decide(false);
    s.decided(routes - 2);  // the last coder
    CHECK(s.decisions == 1);
    // The deciding call is the first on the decision: 3 more, then the re-check's probes.
    for (int k = 0; k < 3; ++k) CHECK(s.next(routes, recheck) == keep(routes - 2));
    run_until_decide(true);
    s.decided(routes - 1);  // NCCL this time
    CHECK(s.decisions == 2);
    CHECK(s.next(routes, recheck) == keep(routes - 1));
  }
  route_tuning::state never;  // autotune_recheck_calls 0 counts as 1: every call after a decision re-checks
  for (int k = 0; k < 5; ++k) never.next(2, 0);
  REQUIRE(never.next(2, 0) == probe(1, 1));
  for (int k = 0; k < 3; ++k) never.next(2, 0);
  never.decided(0);
  CHECK(never.next(2, 0) == probe(0, 0));
}

TEST_CASE("route tuning: medians ignore one outlying probe", "[autotune]") {
  CHECK(route_tuning::median({3.0f, 1.0f, 2.0f}) == 2.0f);
  CHECK(route_tuning::median({1.0f, 100.0f, 1.1f}) == 1.1f);  // one cold probe does not decide
  const float ms[9] = {5, 4, 50, 7, 8, 6, 9, 1, 9};         // route-major
  const auto m = route_tuning::medians(ms, 3);
  CHECK(m[0] == 5.0f);
  CHECK(m[1] == 7.0f);
  CHECK(m[2] == 9.0f);
}

TEST_CASE("route tuning: compression must win by more than the margin", "[autotune]") {
  CHECK(route_tuning::compress(1.0f, 2.0f));
  CHECK(route_tuning::compress(1.0f, 1.06f));
  CHECK_FALSE(route_tuning::compress(1.0f, 1.04f));  // within the noise: NCCL's exact result
  CHECK_FALSE(route_tuning::compress(1.0f, 1.0f));
  CHECK_FALSE(route_tuning::compress(2.0f, 1.0f));
  CHECK(route_tuning::choose({1.0f, 2.0f, 0.0f}, 2) == 0);
  CHECK(route_tuning::choose({1.0f, 1.04f, 0.0f}, 2) == 1);
}

TEST_CASE("route tuning: the faster coder wins, if it beats NCCL by the margin", "[autotune]") {
  // {FixedLength, Adaptive, NCCL}
  CHECK(route_tuning::choose({10.0f, 8.0f, 100.0f}, 3) == 1);   // Adaptive: smaller chunks pay on a slow link
  CHECK(route_tuning::choose({8.0f, 10.0f, 100.0f}, 3) == 0);   // FixedLength: faster coding pays
  CHECK(route_tuning::choose({9.9f, 10.0f, 100.0f}, 3) == 0);   // no margin between coders: the faster
  CHECK(route_tuning::choose({10.0f, 10.0f, 100.0f}, 3) == 0);  // a tie: the faster-coding one
  CHECK(route_tuning::choose({10.0f, 8.0f, 8.3f}, 3) == 2);     // the faster coder within 5% of NCCL: NCCL
  CHECK(route_tuning::choose({10.0f, 8.0f, 8.5f}, 3) == 1);
  CHECK(route_tuning::choose({8.0f, 10.0f, 8.3f}, 3) == 2);
  CHECK(route_tuning::choose({20.0f, 30.0f, 10.0f}, 3) == 2);   // NVLink: NCCL
}

TEST_CASE("route tuning: every rank decides the same, on the slowest rank's times", "[autotune]") {
  // Rank 0 codes fast (Adaptive would win there), rank 1 is slow at Adaptive: the slowest rank's
  // times decide, on both.
  const std::vector<float> rank0 = {10, 11, 10, 8, 8, 9, 40, 41, 40};
  const std::vector<float> rank1 = {12, 12, 11, 20, 21, 19, 40, 40, 42};
  CHECK(decision({rank0}, 3) == 1);
  CHECK(decision({rank1}, 3) == 0);
  CHECK(decision({rank0, rank1}, 3) == 0);
  CHECK(decision({rank1, rank0}, 3) == 0);
  // One slow probe on one rank moves a median by no more than the others' spread.
  std::vector<float> spike = rank0;
  spike[3] = 500;
  CHECK(decision({spike, rank0}, 3) == 1);
  // NCCL slow on one rank only: it is slow for the collective, which waits for that rank.
  const std::vector<float> fast_nccl = {10, 10, 10, 8, 8, 8, 8.2f, 8.1f, 8.3f};
  std::vector<float> slow_nccl = fast_nccl;
  for (int i = 6; i < 9; ++i) slow_nccl[i] = 30;
  CHECK(decision({fast_nccl}, 3) == 2);
  CHECK(decision({fast_nccl, slow_nccl}, 3) == 1);
}
