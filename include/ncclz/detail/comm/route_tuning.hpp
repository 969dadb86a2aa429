// The autotuner's plan for one size class (collective, element size, power of two of the bytes):
// one warm call of each route, then kRounds probes of each, interleaved (compressed, NCCL,
// compressed, ...) so that drift of the link or the GPU hits both alike; the call after the last
// probe decides on the medians of the slowest rank's times, and the compressed route must win by
// more than kMargin, or NCCL keeps the size class. Every kRecheckCalls calls the class is probed
// again, so one unlucky set of probes does not decide forever. Every step depends only on the
// call count, which every rank shares, so all ranks probe and decide together. Plain C++: tested
// on the host.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace ncclz::detail::comm {

struct route_tuning {
  static constexpr int kRounds = 3;
  static constexpr double kMargin = 0.05;
  static constexpr std::uint64_t kRecheckCalls = 1000;

  enum class step { warm_compressed, warm_nccl, probe_compressed, probe_nccl, decide };

  /// The step of a size class's call `k` since its last decision (or its first call): warm-ups
  /// only before the first decision; a re-check starts at the probes.
  [[nodiscard]] static constexpr step step_of(std::uint64_t k, bool rechecking) {
    const std::uint64_t first_probe = rechecking ? 0 : 2;
    if (!rechecking && k == 0) return step::warm_compressed;
    if (!rechecking && k == 1) return step::warm_nccl;
    const std::uint64_t probe = k - first_probe;
    if (probe >= 2 * kRounds) return step::decide;
    return probe % 2 == 0 ? step::probe_compressed : step::probe_nccl;
  }
  /// Which round a probe call `k` is.
  [[nodiscard]] static constexpr int round_of(std::uint64_t k, bool rechecking) {
    return static_cast<int>((k - (rechecking ? 0 : 2)) / 2);
  }

  [[nodiscard]] static constexpr float median(std::array<float, kRounds> v) {
    std::sort(v.begin(), v.end());
    return kRounds % 2 == 1 ? v[kRounds / 2] : (v[kRounds / 2 - 1] + v[kRounds / 2]) / 2;
  }

  /// Compressed wins only by more than the margin: a near tie keeps NCCL's exact result.
  [[nodiscard]] static constexpr bool compress(float compressed_median, float nccl_median) {
    return static_cast<double>(compressed_median) * (1.0 + kMargin) < static_cast<double>(nccl_median);
  }
};

}  // namespace ncclz::detail::comm
