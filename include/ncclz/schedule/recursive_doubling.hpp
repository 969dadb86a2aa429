// Recursive doubling (any nranks, not only powers of two) built from ncclSend/ncclRecv: the
// latency-oriented allreduce.
//
// With p = doubling_core(n), the largest power of two <= n, and e = n - p extra ranks:
//   fold:   ranks 2i and 2i + 1 for i < e pair up; the even rank sends its whole contribution to
//           the odd one, which adds it, and sits out the steps.
//   steps:  the p remaining ranks, renumbered v = 0 .. p - 1 (odd rank 2i + 1 is v = i for i < e,
//           rank r >= 2e is v = r - e), run log2(p) steps; at step s rank v sends its whole
//           current sum to v ^ 2^s and adds the one it receives from there. After step s every
//           rank holds the sum over its aligned block of 2^(s+1) ranks; after the last, all of it.
//   unfold: each odd rank 2i + 1 (i < e) sends the result to its even partner 2i.
// So every rank ends with every contribution exactly once: log2(p) steps, plus the fold and the
// unfold when n is not a power of two, each moving the whole buffer once per rank and each
// with one host wait for the size of the compressed partial sum. Fewer, larger messages than the
// direct schedule's n - 1 per phase: for small, latency-bound messages.
//
// The partners of a step are matched pairs (r sends to q exactly when q receives from r), as
// NCCL's grouped point-to-point calls require.
#pragma once

#include <cstdint>

#include "ncclz/schedule/partition.hpp"

namespace ncclz::schedule {

/// Schedule policy tag: recursive doubling allreduce. ceil(log2 n) rounds (floor(log2 n) steps,
/// plus a fold and an unfold where n is not a power of two), each moving the whole buffer: for
/// small messages. Allreduce only.
struct RecursiveDoubling {
  static constexpr const char* name = "recursive_doubling";
};

/// Auto runs allreduce with recursive doubling on 2 or 4 ranks below kDoublingBelowBytes / log2(n)
/// of each rank's input (32 MiB on 2 ranks, 16 MiB on 4): there it beat the direct schedule on the
/// tuning fields (docs/collectives.md). Not on 3 ranks, where the fold and unfold cost what the
/// steps save, nor on counts not measured yet.
inline constexpr std::uint64_t kDoublingBelowBytes = std::uint64_t{32} << 20;
inline constexpr int kDoublingMaxRanks = 4;

/// The ranks that run the steps: the largest power of two <= nranks.
[[nodiscard]] constexpr int doubling_core(int nranks) {
  detail::check_nranks("schedule::doubling_core", nranks);
  int p = 1;
  while (p <= nranks / 2) p *= 2;
  return p;
}

/// Steps of the exchange among the core ranks: log2(doubling_core(nranks)); 0 for one rank.
[[nodiscard]] constexpr int doubling_step_count(int nranks) {
  int steps = 0;
  for (int p = doubling_core(nranks); p > 1; p /= 2) ++steps;
  return steps;
}

/// What one rank does around the steps.
enum class doubling_role {
  core,      ///< runs the steps, with no partner outside them
  absorbs,   ///< runs the steps after adding its fold partner's contribution, then sends it the result
  folds_out  ///< sends its contribution to its fold partner, sits out the steps, receives the result
};

namespace detail {
constexpr void check_doubling(const char* fn, int rank, int nranks) {
  check_nranks(fn, nranks);
  check_index(fn, "rank", rank, nranks, "nranks");
}
constexpr int doubling_extra(int nranks) { return nranks - doubling_core(nranks); }
}  // namespace detail

/// Whether Auto runs an allreduce of `bytes` per rank on `nranks` ranks with recursive doubling:
/// a power of two of ranks, at most kDoublingMaxRanks, and fewer bytes than kDoublingBelowBytes
/// over the step count.
[[nodiscard]] constexpr bool doubling_preferred(std::uint64_t bytes, int nranks) {
  if (nranks < 2 || nranks > kDoublingMaxRanks || doubling_core(nranks) != nranks) return false;
  return bytes < kDoublingBelowBytes / static_cast<std::uint64_t>(doubling_step_count(nranks));
}

[[nodiscard]] constexpr doubling_role doubling_role_of(int rank, int nranks) {
  detail::check_doubling("schedule::doubling_role_of", rank, nranks);
  if (rank >= 2 * detail::doubling_extra(nranks)) return doubling_role::core;
  return rank % 2 == 0 ? doubling_role::folds_out : doubling_role::absorbs;
}

/// The partner of the fold and the unfold (rank ^ 1), or -1 for a core rank.
[[nodiscard]] constexpr int doubling_fold_partner(int rank, int nranks) {
  return doubling_role_of(rank, nranks) == doubling_role::core ? -1 : rank ^ 1;
}

/// The partner of `rank` at step `step` (0 .. doubling_step_count - 1), or -1 for a rank that
/// folds out.
[[nodiscard]] constexpr int doubling_partner(int rank, int nranks, int step) {
  constexpr const char* fn = "schedule::doubling_partner";
  detail::check_doubling(fn, rank, nranks);
  detail::check_index(fn, "step", step, doubling_step_count(nranks), "doubling_step_count(nranks)");
  const int e = detail::doubling_extra(nranks);
  if (rank < 2 * e && rank % 2 == 0) return -1;
  const int v = rank < 2 * e ? rank / 2 : rank - e;
  const int w = v ^ (1 << step);
  return w < e ? 2 * w + 1 : w + e;
}

}  // namespace ncclz::schedule
