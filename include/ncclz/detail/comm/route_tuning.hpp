// The autotuner's plan for one size class (collective, element size, power of two of the bytes).
// Its routes: the compressed ones, one per coder the Codec may run (one, or FixedLength and
// Adaptive with EntropyCoder<Auto>), then NCCL's own collective. One warm call of each route,
// then kRounds rounds of one probe of each, interleaved (A B C A B C ...) so that drift of the
// link or the GPU hits all alike; the call after the last probe decides on the medians of the
// slowest rank's times: the compressed route of the least median, if it beats NCCL's by more than
// kMargin, else NCCL. Every kRecheckCalls calls the class is probed again, so one unlucky set of
// probes does not decide forever. Every step depends only on the call count, which every rank
// shares, and the decision only on the gathered medians, so all ranks probe and decide together.
// Plain C++: tested on the host.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace ncclz::detail::comm {

struct route_tuning {
  static constexpr int kRounds = 3;
  static constexpr double kMargin = 0.05;
  static constexpr std::uint64_t kRecheckCalls = 1000;
  static constexpr int kMaxRoutes = 3;  ///< two compressed (a coder each) and NCCL's

  enum class kind { keep, warm, probe, decide };
  /// What a call of a size class does (keep: the decided route), on which route (0 .. routes - 2:
  /// compressed, routes - 1: NCCL's), in which round of probes.
  struct step {
    kind what;
    int route;
    int round;
    friend constexpr bool operator==(const step&, const step&) = default;
  };

  /// The step of a size class's call `k` since its last decision (or its first call), with
  /// `routes` routes: warm-ups only before the first decision; a re-check starts at the probes.
  [[nodiscard]] static constexpr step step_of(std::uint64_t k, bool rechecking, int routes) {
    const auto r = static_cast<std::uint64_t>(routes);
    const std::uint64_t warm = rechecking ? 0 : r;
    if (k < warm) return {kind::warm, static_cast<int>(k), 0};
    const std::uint64_t probe = k - warm;
    if (probe >= r * kRounds) return {kind::decide, -1, -1};
    return {kind::probe, static_cast<int>(probe % r), static_cast<int>(probe / r)};
  }

  [[nodiscard]] static constexpr float median(std::array<float, kRounds> v) {
    std::sort(v.begin(), v.end());
    return kRounds % 2 == 1 ? v[kRounds / 2] : (v[kRounds / 2 - 1] + v[kRounds / 2]) / 2;
  }

  /// Compressed wins only by more than the margin: a near tie keeps NCCL's exact result.
  [[nodiscard]] static constexpr bool compress(float compressed_median, float nccl_median) {
    return static_cast<double>(compressed_median) * (1.0 + kMargin) < static_cast<double>(nccl_median);
  }

  /// The route a size class takes, from its routes' medians (NCCL's last): the compressed route
  /// of the least median (the first of equal ones), where it beats NCCL's by the margin; else
  /// NCCL's. Between compressed routes no margin: both keep the same bound.
  [[nodiscard]] static constexpr int choose(const std::array<float, kMaxRoutes>& medians, int routes) {
    int best = 0;
    for (int r = 1; r < routes - 1; ++r)
      if (medians[r] < medians[best]) best = r;
    return compress(medians[best], medians[routes - 1]) ? best : routes - 1;
  }

  /// Each route's median of its probe times `ms` (route-major: ms[route * kRounds + round]), the
  /// slowest rank's (the router gathers them with one allreduce of the maximum).
  [[nodiscard]] static constexpr std::array<float, kMaxRoutes> medians(const float* ms, int routes) {
    std::array<float, kMaxRoutes> m{};
    for (int r = 0; r < routes; ++r) {
      std::array<float, kRounds> v{};
      for (int round = 0; round < kRounds; ++round) v[round] = ms[r * kRounds + round];
      m[r] = median(v);
    }
    return m;
  }

  /// One size class's place in the plan.
  struct state {
    std::uint64_t calls = 0;  ///< since probing started, or since the last decision
    int decisions = 0;
    bool probing = false;
    int chosen = 0;  ///< the route between probes

    /// The step of the next call, with `routes` routes, probing again after `recheck_calls` calls
    /// on a decision. A decide step is followed by decided() before the call goes on.
    constexpr step next(int routes, std::uint64_t recheck_calls) {
      if (!probing) {
        if (decisions > 0 && calls < std::max<std::uint64_t>(recheck_calls, 1)) {
          ++calls;
          return {kind::keep, chosen, 0};
        }
        probing = true;  // the first call of the class, or time to check the decision again
        calls = 0;
      }
      return step_of(calls++, decisions > 0, routes);
    }
    /// The decision of a decide step: the deciding call takes `route` and is the first on it.
    constexpr void decided(int route) {
      chosen = route;
      ++decisions;
      probing = false;
      calls = 1;
    }
  };
};

}  // namespace ncclz::detail::comm
