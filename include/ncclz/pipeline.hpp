// Pipeline policies: how many parts of a reduction are in flight at once.
//
//   ncclz::Pipeline<ncclz::Auto>        // the default: one part per communicator_config::
//                                       // pipeline_part_bytes (64 MiB) of each rank's input, at most 8
//   ncclz::Pipeline<ncclz::Overlap<4>>  // up to 4 parts: while part k moves, part k+1 is coded and
//                                       // part k-1 is decoded and reduced
//   ncclz::Pipeline<ncclz::NoOverlap>   // one part: code, move, decode one after the other
//
// Whatever the policy, a part holds at least pipeline_part_bytes of each rank's input, so small
// messages are not cut into parts whose size exchanges cost more than the overlap saves
// (docs/design.md has the measurements behind 64 MiB and the cap of 8).
// Parts apply to the direct reductions (allreduce, reduce, reduce_scatter); each costs its own
// size exchanges (two for allreduce and reduce, one for reduce_scatter), which go beside the
// payloads over a second communicator, split from the caller's (ncclCommSplit) by the first call
// that cuts a message into parts, once every rank has agreed on the call.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>

#include "ncclz/auto.hpp"

namespace ncclz {

/// Up to N parts in flight (1 <= N <= 16).
template <int N>
struct Overlap {
  static_assert(N >= 1 && N <= 16, "ncclz::Overlap<N>: N (the most parts in flight) must be in [1, 16]");
  static constexpr int max_parts = N;
};

/// One part: no overlap of coding and transfer.
struct NoOverlap {
  static constexpr int max_parts = 1;
};

template <class Mode>
struct Pipeline {
  static constexpr int max_parts = Mode::max_parts;
};

/// The default pipeline: parts of pipeline_part_bytes each, at most 8.
template <>
struct Pipeline<Auto> {
  static constexpr int max_parts = 8;
};

/// What ncclz needs from a pipeline policy: a part limit in [1, 16].
template <class P>
concept PipelinePolicy = requires {
  { P::max_parts } -> std::convertible_to<int>;
} && (P::max_parts >= 1 && P::max_parts <= 16);

/// Communicator's check of its Pipe argument (plain C++, so that its message is tested without
/// CUDA).
template <class P>
struct pipeline_check {
  static_assert(PipelinePolicy<P>,
                "ncclz::Communicator<Codec, Schedule, Pipe>: Pipe must be ncclz::Pipeline<ncclz::Auto>, "
                "ncclz::Pipeline<ncclz::Overlap<N>> (1 <= N <= 16) or ncclz::Pipeline<ncclz::NoOverlap> (ncclz/pipeline.hpp)");
  static constexpr bool value = true;
};

/// Parts a direct reduction of `bytes` of each rank's input is cut into: one per `part_bytes`
/// (at least one), at most `max_parts`.
[[nodiscard]] constexpr int pipeline_parts(std::uint64_t bytes, std::uint64_t part_bytes, int max_parts) {
  const std::uint64_t floor_bytes = std::max<std::uint64_t>(part_bytes, 1);
  return static_cast<int>(std::clamp<std::uint64_t>(bytes / floor_bytes, 1, static_cast<std::uint64_t>(max_parts)));
}

static_assert(PipelinePolicy<Pipeline<Auto>>);
static_assert(PipelinePolicy<Pipeline<Overlap<4>>>);
static_assert(PipelinePolicy<Pipeline<NoOverlap>>);

}  // namespace ncclz
