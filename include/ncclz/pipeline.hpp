// Pipeline policies: how many parts of a reduction are in flight at once.
//
//   ncclz::Pipeline<ncclz::Overlap<4>>  // cut the message into up to 4 parts: while part k moves,
//                                       // part k+1 is coded and part k-1 is decoded and reduced
//   ncclz::Pipeline<ncclz::NoOverlap>   // one part: code, move, decode one after the other
//
// The part size has a floor at run time (communicator_config::pipeline_part_bytes), so small
// messages are not cut into parts whose size exchanges cost more than the overlap saves.
// Communicator's default is NoOverlap: over sockets the parts' extra size exchanges cost as much
// as the overlap saved (docs/collectives.md has the measurements).
// Parts apply to the direct reductions (allreduce, reduce, reduce_scatter); each costs its own
// size exchanges (two for allreduce and reduce, one for reduce_scatter), which go beside the
// payloads over a second communicator: with N > 1 the Communicator's constructor splits the
// caller's communicator (ncclCommSplit), so every rank must construct it, as with any collective.
#pragma once

#include <concepts>

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
                "ncclz::Communicator<Codec, Schedule, Pipe>: Pipe must be ncclz::Pipeline<ncclz::Overlap<N>> (1 <= N <= 16) "
                "or ncclz::Pipeline<ncclz::NoOverlap> (ncclz/pipeline.hpp)");
  static constexpr bool value = true;
};

static_assert(PipelinePolicy<Pipeline<Overlap<4>>>);
static_assert(PipelinePolicy<Pipeline<NoOverlap>>);

}  // namespace ncclz
