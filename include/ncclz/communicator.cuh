// Communicator<Codec, Schedule, Pipe>: compressed collectives over the caller's own NCCL
// communicator.
//
//   ncclz::Communicator<ncclz::Codec<>> comm(nccl_comm);      // REL bound, EntropyCoder<Auto>, schedule::Auto
//   comm.allreduce(d_send, d_recv, count, ncclSum, 1e-3, stream);
//   comm.check(stream);                                       // waits; throws on a corrupted chunk
//   ncclz::call_info info = comm.last_call();
//
// Collectives, with NCCL's argument conventions: allreduce, reduce_scatter, reduce (ncclSum,
// ncclMin, ncclMax), allgather, broadcast, alltoall. Quantization happens once, at the interface;
// reductions combine integer codes exactly after a lossless decode, and chunks that need no
// reduction (allgather, broadcast, the second half of allreduce, alltoall) are compressed once
// and moved unchanged.
//
// The bound applies to the result:
//   allgather, broadcast, alltoall: each element within `bound` of the value its rank sent;
//   sum: within `bound` of the exact sum (each rank quantizes with bound / nranks; for allreduce
//        and reduce on 4 ranks or more, bound / (nranks + k) and the owners' sums are rounded once
//        to k steps, detail/sum_bound.hpp), plus the half ulp the result rounds by in T;
//   min, max: within `bound` of the exact min / max (quantization is monotone).
// With Quantizer<Lossless> (bound 0) results are exact: moved values keep their bits, and
// reductions are done on decoded values in rank order 0..n-1, bit-identical to an uncompressed
// reduction in that order (direct schedule only, never NCCL's fallback). RelBound is relative to
// the finite value range of all ranks' inputs (the root's for broadcast). Elements where a rank's
// value was NaN, Inf or too large for a code are combined in T. All ranks hold identical results.
// docs/collectives.md says more.
//
// This class checks arguments, picks the route (detail/comm/router.cuh: NCCL's own collective or
// the compressed schedule and, with EntropyCoder<Auto>, its coder, FixedLength or Adaptive, by
// timed probes per collective and size class) and hands the call to the schedule that runs it,
// over the transport (detail/comm/transport.cuh: the only place that talks to NCCL, where every
// wait is watched and a dead peer becomes an error after config.timeout, never a hang):
//   direct (detail/comm/direct_schedule.cuh): allgather, alltoall, reductions in pipeline parts;
//   ring (detail/comm/ring_schedule.cuh): reductions; recursive doubling
//   (detail/comm/doubling_schedule.cuh): allreduce of small messages; ring and tree broadcast
//   (detail/comm/broadcast_schedule.cuh); lossless reductions (detail/comm/lossless_schedule.cuh).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/communicator_config.hpp"
#include "ncclz/detail/comm/arguments.cuh"
#include "ncclz/detail/comm/broadcast_schedule.cuh"
#include "ncclz/detail/comm/call_agreement.hpp"
#include "ncclz/detail/comm/code_reducer.cuh"
#include "ncclz/detail/comm/context.cuh"
#include "ncclz/detail/comm/direct_schedule.cuh"
#include "ncclz/detail/comm/doubling_schedule.cuh"
#include "ncclz/detail/comm/lossless_schedule.cuh"
#include "ncclz/detail/comm/ring_schedule.cuh"
#include "ncclz/detail/comm/router.cuh"
#include "ncclz/error.hpp"
#include "ncclz/pipeline.hpp"
#include "ncclz/schedule/schedule.hpp"

namespace ncclz {

template <class Codec, class Schedule = schedule::Auto, class Pipe = Pipeline<Auto>>
class Communicator {
  static_assert(pipeline_check<Pipe>::value);
  static_assert(schedule::policy_check<Schedule>::value);
  using collective = schedule::collective;
  using args = detail::comm::arguments<typename Codec::quantizer>;
  static constexpr auto kNoOp = detail::comm::kNoOp;  // collectives that reduce nothing
  static constexpr bool kLossless = detail::comm::is_lossless_v<Codec>;

 public:
  /// Construction makes no NCCL call but two queries of `comm`. The first call that cuts a
  /// reduction into pipeline parts splits `comm` (ncclCommSplit) into a second communicator of the
  /// same ranks, on which the parts exchange sizes beside their payloads.
  explicit Communicator(ncclComm_t comm, communicator_config config = {})
      : ctx_(comm, config), router_(ctx_.tp, ctx_.config, detail::comm::coders_of<Codec>(), Codec::coder::id) {}
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  /// Waits out the last call first (watched: a dead peer aborts the communicator after
  /// config.timeout rather than hanging the free of device memory).
  ~Communicator() { ctx_.drain(); }

  [[nodiscard]] int rank() const noexcept { return ctx_.rank(); }
  [[nodiscard]] int nranks() const noexcept { return ctx_.nranks(); }
  [[nodiscard]] const call_info& last_call() const noexcept { return ctx_.info; }
  /// True once a failed or missing peer made a call abort the NCCL communicator (its owner must
  /// then neither use nor destroy it: ncclCommAbort freed it).
  [[nodiscard]] bool aborted() const noexcept { return ctx_.tp.aborted(); }
  /// Device bytes held now (workspace, chunk and code buffers); grows only when a call needs more.
  [[nodiscard]] std::size_t workspace_bytes() const noexcept { return ctx_.ws.held_bytes() + reducer_.held_bytes(); }

  /// Gathers `count` values from every rank into `recv` (rank r's at recv + r * count), as
  /// ncclAllGather does; in place when send == recv + rank * count. All ranks must pass the same
  /// count (checked: a mismatch throws invalid_argument on every rank).
  template <class T>
  void allgather(const T* send, T* recv, std::size_t count, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::allgather";
    args::check_allgather(fn, send, recv, count, bound, rank(), nranks());
    const schedule::algorithm algo = algorithm_for(collective::allgather, count * sizeof(T));
    const detail::comm::route how = router_.route_for<T>(collective::allgather, count, stream, ctx_.info);
    if (how.nccl) {
      enqueue(ncclAllGather(send, recv, count, nccl_type<T>(), ctx_.tp.comm(), stream), "ncclAllGather");
      ctx_.info.bytes_sent = count * sizeof(T) * static_cast<std::uint64_t>(nranks() - 1);
    } else {
      ctx_.template expect_call<T>(how.coder, collective::allgather, count, kNoOp, -1, bound, algo);
      direct_.allgather(send, recv, count, bound, stream);
    }
    finish(stream);
  }

  /// Sends the root's `count` values to every rank, as ncclBroadcast does (send is read on the
  /// root only; in place when send == recv). Every rank, the root too, receives the decoded values.
  template <class T>
  void broadcast(const T* send, T* recv, std::size_t count, int root, double bound, cudaStream_t stream) {
    args::check_broadcast("Communicator::broadcast", send, recv, count, root, bound, rank(), nranks());
    const schedule::algorithm algo = algorithm_for(collective::broadcast, count * sizeof(T));
    const detail::comm::route how = router_.route_for<T>(collective::broadcast, count, stream, ctx_.info);
    if (how.nccl) {
      enqueue(ncclBroadcast(send, recv, count, nccl_type<T>(), root, ctx_.tp.comm(), stream), "ncclBroadcast");
      if (rank() == root) ctx_.info.bytes_sent = count * sizeof(T);
    } else {
      ctx_.template expect_call<T>(how.coder, collective::broadcast, count, kNoOp, root, bound, algo);
      broadcast_.run(send, recv, count, root, bound, algo, stream);
    }
    finish(stream);
  }

  /// Sends block p of `send` (count values at send + p * count) to rank p, which finds it at
  /// recv + rank * count, as an all-to-all (ncclAlltoAll) does. send and recv must not overlap.
  /// This rank's own block is copied exactly; the others are compressed once and decoded.
  template <class T>
  void alltoall(const T* send, T* recv, std::size_t count, double bound, cudaStream_t stream) {
    const std::size_t total = count * static_cast<std::size_t>(nranks());
    args::check_alltoall("Communicator::alltoall", send, recv, total, bound);
    const schedule::algorithm algo = algorithm_for(collective::alltoall, total * sizeof(T));
    const detail::comm::route how = router_.route_for<T>(collective::alltoall, total, stream, ctx_.info);
    if (how.nccl) {
      enqueue(ncclGroupStart(), "ncclGroupStart");
      for (int p = 0; p < nranks(); ++p) {
        enqueue(ncclSend(send + p * count, count, nccl_type<T>(), p, ctx_.tp.comm(), stream), "ncclSend");
        enqueue(ncclRecv(recv + p * count, count, nccl_type<T>(), p, ctx_.tp.comm(), stream), "ncclRecv");
      }
      enqueue(ncclGroupEnd(), "ncclGroupEnd");
      ctx_.info.bytes_sent = count * sizeof(T) * static_cast<std::uint64_t>(nranks() - 1);
    } else {
      ctx_.template expect_call<T>(how.coder, collective::alltoall, count, kNoOp, -1, bound, algo);
      direct_.alltoall(send, recv, count, bound, stream);
    }
    finish(stream);
  }

  /// Reduces `count` values over all ranks into every rank's `recv`, as ncclAllReduce (in place
  /// when send == recv), with ncclSum, ncclMin or ncclMax; the bound is in the file comment.
  /// Schedule: a reduce-scatter of codes (direct or ring), then the owner of each segment codes
  /// it once and the chunks are exchanged unchanged and decoded everywhere; or recursive doubling,
  /// every rank's whole sum of codes to a partner at each step.
  template <class T>
  void allreduce(const T* send, T* recv, std::size_t count, ncclRedOp_t op, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::allreduce";
    const detail::comm::code_reduction red = reduction_for(fn, op, bound, /*moves_result=*/true);
    args::check_in_place_or_apart(fn, send, recv, count, bound);
    const auto nccl = [&] {
      enqueue(ncclAllReduce(send, recv, count, nccl_type<T>(), op, ctx_.tp.comm(), stream), "ncclAllReduce");
      ctx_.info.bytes_sent = 2 * count * sizeof(T) * static_cast<std::uint64_t>(nranks() - 1) / static_cast<std::uint64_t>(nranks());
    };
    reduction<T>(fn, collective::allreduce, send, recv, count, count, schedule::segments(count, nranks()), red, /*root=*/-1,
                 /*scatter=*/false, nccl, stream);
  }

  /// Reduces `count` values over all ranks into the root's `recv`, as ncclReduce (recv is
  /// written on the root only; in place when send == recv). Ops and bound as allreduce.
  template <class T>
  void reduce(const T* send, T* recv, std::size_t count, ncclRedOp_t op, int root, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::reduce";
    const detail::comm::code_reduction red = reduction_for(fn, op, bound, /*moves_result=*/true);
    args::check_root(fn, root, nranks());
    args::check_in_place_or_apart(fn, send, rank() == root ? recv : send, count, bound);
    const auto nccl = [&] {
      enqueue(ncclReduce(send, recv, count, nccl_type<T>(), op, root, ctx_.tp.comm(), stream), "ncclReduce");
      ctx_.info.bytes_sent = count * sizeof(T);
    };
    reduction<T>(fn, collective::reduce, send, recv, count, count, schedule::segments(count, nranks()), red, root, /*scatter=*/false, nccl,
                 stream);
  }

  /// Reduces `recvcount * nranks` values over all ranks and leaves block r (recvcount values) on
  /// rank r, as ncclReduceScatter; in place when send + rank * recvcount == recv. Ops and bound
  /// as allreduce.
  template <class T>
  void reduce_scatter(const T* send, T* recv, std::size_t recvcount, ncclRedOp_t op, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::reduce_scatter";
    const detail::comm::code_reduction red = reduction_for(fn, op, bound, /*moves_result=*/false);
    const std::size_t count = recvcount * static_cast<std::size_t>(nranks());
    args::check_reduce_scatter(fn, send, recv, recvcount, bound, rank(), nranks());
    std::vector<schedule::segment> seg(static_cast<std::size_t>(nranks()));
    for (int r = 0; r < nranks(); ++r) seg[r] = {static_cast<std::uint64_t>(r) * recvcount, recvcount};
    const auto nccl = [&] {
      enqueue(ncclReduceScatter(send, recv, recvcount, nccl_type<T>(), op, ctx_.tp.comm(), stream), "ncclReduceScatter");
      ctx_.info.bytes_sent = recvcount * sizeof(T) * static_cast<std::uint64_t>(nranks() - 1);
    };
    reduction<T>(fn, collective::reduce_scatter, send, recv, count, recvcount, seg, red, /*root=*/-1, /*scatter=*/true, nccl, stream);
  }

  /// Time per phase of the last compressed call, summed over its occurrences, in the order the
  /// phases first occur; empty unless config.profile_phases. Call after check(stream).
  [[nodiscard]] std::vector<phase_time> phase_times() const { return ctx_.clock.times(); }

  /// Waits for `stream` (watching the communicator) and throws format_error if a received chunk
  /// was corrupted.
  void check(cudaStream_t stream) { ctx_.check(stream); }

 private:
  /// The algorithm of this call; also refuses calls after a failure aborted the communicator.
  schedule::algorithm algorithm_for(collective c, std::uint64_t bytes) const {
    ctx_.tp.check_usable(schedule::name(c));
    using schedule::algorithm_for;  // the policy's overload is found by argument-dependent lookup
    return algorithm_for(Schedule{}, c, bytes, nranks());
  }

  detail::comm::code_reduction reduction_for(const char* fn, ncclRedOp_t op, double bound, bool moves_result) const {
    return detail::comm::reduction_for<Codec>(fn, op, bound, nranks(), moves_result, ctx_.config.split_sum_bound);
  }

  void enqueue(ncclResult_t result, const char* call) { ctx_.tp.enqueue(result, call); }

  /// allreduce (root < 0), reduce (to root) and reduce_scatter (scatter): NCCL's own collective
  /// (`nccl`) where the router says so, else a reduce-scatter of codes on the schedule's
  /// algorithm leaves the reduction of segment `rank` on this rank; reduce_scatter dequantizes
  /// it, the others code it once and send the chunks, unchanged, to every rank or to the root.
  template <class T, class NcclCall>
  void reduction(const char* fn, collective c, const T* send, T* recv, std::size_t count, std::size_t caller_count,
                 const std::vector<schedule::segment>& seg,
                 const detail::comm::code_reduction& red, int root, bool scatter, const NcclCall& nccl, cudaStream_t stream) {
    if constexpr (kLossless) {
      const schedule::algorithm a = algorithm_for(c, count * sizeof(T));  // also refuses an aborted communicator
      if (!std::is_same_v<Schedule, schedule::Auto> && a != schedule::algorithm::direct) {
        detail::throw_invalid(fn, std::string("a lossless reduction runs the direct schedule only (it reduces in rank order "
                                              "0..n-1 on each segment's owner); the ") +
                                      Schedule::name + " schedule asks for " + schedule::name(a) +
                                      ": use schedule::Auto or schedule::Direct");
      }
      ctx_.template expect_call<T>(Codec::coder::id, c, caller_count, red.op, root, red.bound, schedule::algorithm::direct);
      lossless_.reduction(fn, c, send, recv, count, seg, red.op, root, scatter, stream);
      return finish(stream);
    }
    const schedule::algorithm algo = algorithm_for(c, count * sizeof(T));
    const detail::comm::route how = router_.route_for<T>(c, count, stream, ctx_.info);
    // Recursive doubling (allreduce only) has no owner to coarsen a sum once: its ranks quantize
    // with the bound split n ways.
    const bool doubling = algo == schedule::algorithm::recursive_doubling && nranks() > 1;
    const detail::comm::code_reduction& r = doubling ? reduction_for(fn, red.op, red.bound, /*moves_result=*/false) : red;
    if (how.nccl) {
      nccl();
    } else {
      ctx_.template expect_call<T>(how.coder, c, caller_count, r.op, root, r.bound, algo, r.coarsen > 1);
      if (doubling) doubling_.allreduce(fn, send, recv, count, r, stream);
      else if (algo != schedule::algorithm::ring || nranks() == 1)
        direct_.reduction(fn, schedule::name(c), send, recv, count, seg, r, algo, root, scatter, stream);
      else ring_.reduction(fn, schedule::name(c), send, recv, count, seg, r, root, scatter, stream);
    }
    finish(stream);
  }

  /// After every call, whatever its route: the autotuner's figures and the end of its work.
  void finish(cudaStream_t stream) {
    router_.annotate(ctx_.info);
    ctx_.end_call(stream);
  }

  detail::comm::context<Codec> ctx_;
  detail::comm::code_reducer<Codec> reducer_{ctx_};
  detail::comm::router router_;
  detail::comm::direct_schedule<Codec, Pipe::max_parts> direct_{ctx_, reducer_};
  detail::comm::ring_schedule<Codec> ring_{ctx_, reducer_};
  detail::comm::doubling_schedule<Codec> doubling_{ctx_, reducer_};
  detail::comm::broadcast_schedule<Codec> broadcast_{ctx_};
  detail::comm::lossless_schedule<Codec> lossless_{ctx_, reducer_};
};

}  // namespace ncclz
