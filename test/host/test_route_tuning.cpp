// Host tests of the autotuner's plan (detail/comm/route_tuning.hpp): warm calls, interleaved
// probes, the decision on medians with a margin that keeps NCCL on a near tie.
#include <catch2/catch.hpp>

#include <array>

#include "ncclz/detail/comm/route_tuning.hpp"

namespace {
using ncclz::detail::comm::route_tuning;
using step = route_tuning::step;
}  // namespace

TEST_CASE("route tuning: warm calls, then probes alternating routes, then the decision", "[autotune]") {
  static_assert(route_tuning::kRounds == 3);
  const std::array<step, 9> first = {step::warm_compressed, step::warm_nccl,       step::probe_compressed,
                                     step::probe_nccl,      step::probe_compressed, step::probe_nccl,
                                     step::probe_compressed, step::probe_nccl,      step::decide};
  for (std::uint64_t k = 0; k < first.size(); ++k) {
    CAPTURE(k);
    CHECK(route_tuning::step_of(k, false) == first[k]);
  }
  CHECK(route_tuning::round_of(2, false) == 0);
  CHECK(route_tuning::round_of(3, false) == 0);
  CHECK(route_tuning::round_of(7, false) == 2);
  // A re-check probes at once: both routes are warm by then.
  const std::array<step, 7> again = {step::probe_compressed, step::probe_nccl, step::probe_compressed, step::probe_nccl,
                                     step::probe_compressed, step::probe_nccl, step::decide};
  for (std::uint64_t k = 0; k < again.size(); ++k) {
    CAPTURE(k);
    CHECK(route_tuning::step_of(k, true) == again[k]);
  }
  CHECK(route_tuning::round_of(5, true) == 2);
}

TEST_CASE("route tuning: medians ignore one outlying probe", "[autotune]") {
  CHECK(route_tuning::median({3.0f, 1.0f, 2.0f}) == 2.0f);
  CHECK(route_tuning::median({1.0f, 100.0f, 1.1f}) == 1.1f);  // one cold probe does not decide
}

TEST_CASE("route tuning: compression must win by more than the margin", "[autotune]") {
  CHECK(route_tuning::compress(1.0f, 2.0f));
  CHECK(route_tuning::compress(1.0f, 1.06f));
  CHECK_FALSE(route_tuning::compress(1.0f, 1.04f));  // within the noise: NCCL's exact result
  CHECK_FALSE(route_tuning::compress(1.0f, 1.0f));
  CHECK_FALSE(route_tuning::compress(2.0f, 1.0f));
}
