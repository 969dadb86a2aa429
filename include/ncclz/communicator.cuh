// Communicator<Codec, Schedule>: compressed collectives over the caller's own NCCL communicator.
//
//   using Codec = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
//   ncclz::Communicator<Codec> comm(nccl_comm);               // Schedule = ncclz::schedule::Auto
//   comm.allreduce(d_send, d_recv, count, ncclSum, 1e-3, stream);
//   comm.check(stream);                                       // waits; throws on a corrupted chunk
//   ncclz::call_info info = comm.last_call();
//
// Collectives, with NCCL's argument conventions: allreduce, reduce_scatter, reduce (ncclSum,
// ncclMin, ncclMax), allgather, broadcast, alltoall. Quantization happens once, at the interface;
// reductions combine integer codes exactly after a lossless decode, and chunks that need no
// reduction (allgather, broadcast, the second half of allreduce, alltoall) are compressed once
// and moved unchanged. Schedules: schedule/schedule.hpp (which algorithm runs what).
//
// The bound applies to the result:
//   allgather, broadcast, alltoall: each element within `bound` of the value its rank sent;
//   sum: within `bound` of the exact sum (each rank quantizes with bound / nranks; for allreduce
//        and reduce on 4 ranks or more, bound / (nranks + k) and the owners' sums are rounded once
//        to k steps, detail/sum_bound.hpp), plus the half ulp the result rounds by in T;
//   min, max: within `bound` of the exact min / max (quantization is monotone).
// With Quantizer<Lossless> (bound 0) results are exact: moved values keep their bits, and
// reductions are done on decoded values in rank order 0..n-1 in compute_t<T>, rounded to T once,
// bit-identical to an uncompressed reduction in that order (lossless_reduction; direct schedule
// only, never NCCL's fallback). docs/collectives.md says more.
// RelBound is relative to the finite value range of all ranks' inputs (the root's for broadcast),
// found on the device and merged across ranks with one 16-byte ncclAllReduce. Elements where a
// rank's value was NaN, Inf or too large for a code are combined in T, so NaN and Inf reach the
// result as IEEE arithmetic has them. All ranks hold identical results.
//
// NCCL point-to-point needs matching counts, so the host waits for compressed sizes: once per
// call for allgather, broadcast and alltoall, twice for a direct allreduce or reduce, once per
// ring step for the ring (call_info::size_waits and size_wait_ms report them). Those waits watch
// the communicator, as nccl-tests does: a peer that fails or never arrives turns into
// ncclz::error after config::timeout, never a hang. Any NCCL failure aborts the communicator
// (aborted() says so; its owner must not use or destroy it after that).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/detail/nccl_wait.hpp"
#include "ncclz/detail/sum_bound.hpp"
#include "ncclz/device/detail/reduce_kernels.cuh"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/error.hpp"
#include "ncclz/pipeline.hpp"
#include "ncclz/schedule/schedule.hpp"

namespace ncclz {

/// NCCL's name of an element type ncclz supports.
template <class T>
constexpr ncclDataType_t nccl_type() {
  static_assert(is_supported_value_type_v<T>, "ncclz::nccl_type<T>: T must be float, double, __half or __nv_bfloat16");
  if constexpr (std::is_same_v<T, float>) return ncclFloat;
  else if constexpr (std::is_same_v<T, double>) return ncclDouble;
  else if constexpr (std::is_same_v<T, __half>) return ncclFloat16;
  else return ncclBfloat16;
}

/// What the last collective did, for the caller's logs and benchmarks.
struct call_info {
  const char* collective = "none";
  const char* coder = "";
  const char* schedule = "";        ///< algorithm run: "direct", "ring", "tree", or "nccl" (fallback)
  std::uint64_t input_bytes = 0;    ///< this rank's uncompressed payload
  std::uint64_t bytes_sent = 0;     ///< bytes this rank handed to NCCL (payloads, sizes, range)
  std::uint64_t chunk_bytes = 0;    ///< compressed bytes of the chunk(s) this rank coded last
  double ratio = 0;                 ///< their uncompressed bytes / chunk_bytes
  double error_bound = 0;           ///< absolute bound every result element keeps (on ranks that compressed)
  int parts = 0;                    ///< pipeline parts the message was cut into (Pipeline)
  int size_waits = 0;               ///< host waits for compressed sizes
  double size_wait_ms = 0;          ///< host time spent in them (includes GPU work still queued)
  bool fallback = false;            ///< the call went to NCCL's own collective, uncompressed
  /// The autotuner's probes of this call's size class, slowest rank's (0 until it decided):
  /// one compressed call and one of NCCL's, timed on the stream.
  float autotune_ncclz_ms = 0, autotune_nccl_ms = 0;
};

struct communicator_config {
  /// How long a host wait may last before the communicator is aborted and the call throws.
  std::chrono::milliseconds timeout{std::chrono::minutes(2)};
  /// Calls whose per-rank input is smaller go to NCCL's own collective, uncompressed and exact
  /// (call_info::fallback says so): there the host waits for compressed sizes cost more than
  /// compression saves. 0 compresses every call. The default comes from the collectives
  /// benchmark in docs/benchmarks.md. As with NCCL, the ranks must agree on the count for the
  /// fallback path, which does not check it.
  std::size_t fallback_below_bytes = std::size_t{2} << 20;
  /// Above that threshold, time one compressed call and one NCCL call of each collective and
  /// size class (power of two of the bytes) and keep the faster from then on; the choice is made
  /// on the slowest rank's times (one 8-byte allreduce), so all ranks agree. This is what keeps
  /// ncclz at NCCL's speed on fast links (NVLink), where compression cannot pay. With
  /// fallback_below_bytes = 0 and autotune = false every call is compressed.
  bool autotune = true;
  /// With Pipeline<Overlap<N>>, direct reductions are cut into parts of at least this many
  /// bytes of each rank's input (and at most N), so that coding one part overlaps moving
  /// another. Measured on the 4-rank emulated cluster (sockets), 256 MiB allreduce at REL 1e-2:
  /// 1 part 12.64 / 15.00 ms, 4 parts of 64 MiB 12.65 / 16.4 ms, 8 parts of 32 MiB 18.9 ms (two
  /// runs): coding hides behind the transfer, but every part adds two size exchanges and smaller
  /// socket messages. Hence Communicator's default Pipeline<NoOverlap>, and large parts here. At
  /// REL 1e-3 (more bytes, longer coding) parts pay (ncclz-perf --chunk, 256 MiB, 4 ranks):
  /// FixedLength 24.4 ms in 1 part, 19.6 in 2, 17.4 in 4 (20.8 in 1 that run); Adaptive 34.7 in 1,
  /// 24.4 in 2, 32.0 in 4, 25.6 in 8 (docs/benchmarks.md, issue 5).
  std::size_t pipeline_part_bytes = std::size_t{64} << 20;
  /// Sums that move on (allreduce, reduce) with 4 ranks or more: each rank quantizes with
  /// bound / (n + k) and each owner requantizes its reduced codes k times coarser (k the largest
  /// power of two <= n) before it sends them, instead of bound / n and the sums as they are
  /// (detail/sum_bound.hpp says why and what it saves). Every
  /// rank must pass the same value. Not for FixedRate (its steps are the blocks') nor Lossless.
  bool split_sum_bound = true;
  /// The direct reductions move their payloads and size exchanges on streams of the device's
  /// greatest priority, joined to the caller's: where other work shares the GPU (the coding
  /// stream's, other processes' under MPS), the blocks of NCCL's kernels start ahead of queued
  /// coding blocks. 4 ranks on one GPU (MPS, sockets), 256 MiB Adaptive allreduce in 4 parts,
  /// rows alternating in one call: 12.96-13.63 ms against 13.87-14.82 at the least priority
  /// (docs/benchmarks.md).
  bool priority_transfers = true;
  /// Record CUDA events at the phase boundaries of each compressed call, for phase_times().
  bool profile_phases = false;
};

/// GPU-timeline time of one kind of phase of the last call (Communicator::phase_times).
struct phase_time {
  const char* phase;  ///< "codec" (range, quantize, encode, decode, reduce), "size exchange",
                      ///< "host gap" (stream idle while the host reads sizes), "transfer" (payloads)
  float ms;
};

template <class Codec, class Schedule = schedule::Auto, class Pipe = Pipeline<NoOverlap>>
class Communicator {
  static_assert(PipelinePolicy<Pipe>,
                "ncclz::Communicator<Codec, Schedule, Pipe>: Pipe must be ncclz::Pipeline<ncclz::Overlap<N>> (1 <= N <= 16) "
                "or ncclz::Pipeline<ncclz::NoOverlap> (ncclz/pipeline.hpp)");
  static_assert(schedule::SchedulePolicy<Schedule>,
                "ncclz::Communicator<Codec, Schedule>: Schedule must be ncclz::schedule::Auto, Direct, Ring or Tree, or a "
                "tag type with a static `name` and an algorithm_for(tag, collective, bytes, nranks) overload "
                "(ncclz/schedule/schedule.hpp)");

 public:
  /// With Pipeline<Overlap<N>>, N > 1, construction is collective (every rank of `comm` must
  /// construct one): it splits `comm` into a second communicator of the same ranks, on which the
  /// pipelined reductions exchange sizes beside their payloads.
  explicit Communicator(ncclComm_t comm, communicator_config config = {}) : comm_(comm), config_(config) {
    if (comm == nullptr) detail::throw_invalid("Communicator", "the NCCL communicator is null");
    NCCLZ_NCCL_TRY_COMM(comm_, ncclCommCount(comm_, &nranks_));
    NCCLZ_NCCL_TRY_COMM(comm_, ncclCommUserRank(comm_, &rank_));
    if constexpr (Pipe::max_parts > 1) {
      if (nranks_ > 1) {
        const ncclResult_t split = ncclCommSplit(comm_, 0, rank_, &size_comm_, nullptr);  // inherits comm's config
        detail::nccl_wait(size_comm_ != nullptr ? size_comm_ : comm_, split, "ncclCommSplit (the size communicator)",
                          config_.timeout);
        // A non-blocking parent is busy until the split is done too: NCCL refuses calls on it before.
        detail::nccl_wait(comm_, ncclInProgress, "ncclCommSplit (the parent communicator)", config_.timeout);
      }
    }
    try {
      grow_host_meta(1);
    } catch (...) {
      release_size_comm();
      throw;
    }
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator() {
    for (auto& [key, t] : tuning_)
      for (const cudaEvent_t e : t.events)
        if (e) NCCLZ_CUDA_TRY_NO_THROW(cudaEventDestroy(e));
    if (d_tuning_) NCCLZ_CUDA_TRY_NO_THROW(cudaFree(d_tuning_));
    for (const phase_mark& m : marks_) NCCLZ_CUDA_TRY_NO_THROW(cudaEventDestroy(m.event));
    for (const cudaEvent_t e : sync_events_) NCCLZ_CUDA_TRY_NO_THROW(cudaEventDestroy(e));
    if (compute_) NCCLZ_CUDA_TRY_NO_THROW(cudaStreamDestroy(compute_));
    if (transfer_) NCCLZ_CUDA_TRY_NO_THROW(cudaStreamDestroy(transfer_));
    if (size_stream_) NCCLZ_CUDA_TRY_NO_THROW(cudaStreamDestroy(size_stream_));
    release_size_comm();
    release_device();
    if (reduce_.base) NCCLZ_CUDA_TRY_NO_THROW(cudaFree(reduce_.base));
    if (h_meta_) NCCLZ_CUDA_TRY_NO_THROW(cudaFreeHost(h_meta_));
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int nranks() const noexcept { return nranks_; }
  [[nodiscard]] const call_info& last_call() const noexcept { return info_; }
  /// True once a failed or missing peer made a call abort the NCCL communicator (its owner must
  /// then neither use nor destroy it: ncclCommAbort freed it).
  [[nodiscard]] bool aborted() const noexcept { return aborted_; }
  /// Device bytes held now (workspace, chunk and code buffers); grows only when a call needs more.
  [[nodiscard]] std::size_t workspace_bytes() const noexcept { return held_bytes_ + reduce_.bytes; }

  /// Gathers `count` values from every rank into `recv` (rank r's at recv + r * count), as
  /// ncclAllGather does; in place when send == recv + rank * count. All ranks must pass the same
  /// count (checked: a mismatch throws invalid_argument on every rank).
  template <class T>
  void allgather(const T* send, T* recv, std::size_t count, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::allgather";
    check_buffers(fn, send, recv, count, static_cast<std::size_t>(nranks_) * count, bound);
    if (!(send == recv + static_cast<std::size_t>(rank_) * count) && overlaps(send, count, recv, count * nranks_)) {
      detail::throw_invalid(fn, "send overlaps recv other than in place (send == recv + rank * count)");
    }
    const schedule::algorithm algo = algorithm_for(schedule::collective::allgather, count * sizeof(T));
    const route how = route_for<T>(schedule::collective::allgather, count, stream);
    if (how.nccl) {
      enqueue(ncclAllGather(send, recv, count, nccl_type<T>(), comm_, stream), "ncclAllGather");
      info_.bytes_sent = count * sizeof(T) * static_cast<std::uint64_t>(nranks_ - 1);
      return;
    }
    reserve<T>(count, nranks_);
    start_call(stream);
    compress_into<T>(send, count, rank_, rank_, bound, /*ranges_from_all_ranks=*/true, stream);
    exchange_meta(fn, count, stream);
    const exchanged_chunks got = exchange_chunks(stream, /*root=*/-1);  // no slot free to gather into
    reset_report(stream);
    for (int r = 0; r < nranks_; ++r) {
      device::detail::launch_decode<Codec>(got.at(r), chunk_size(r), recv + static_cast<std::size_t>(r) * count, count,
                                           report(), stream);
    }
    finish_info("allgather", algo, count * sizeof(T), stream);
    info_.bytes_sent += got.sent;
    set_ratio(count * sizeof(T), chunk_size(rank_));
  }

  /// Sends the root's `count` values to every rank, as ncclBroadcast does (send is read on the
  /// root only; in place when send == recv). Every rank, the root too, receives the decoded values.
  template <class T>
  void broadcast(const T* send, T* recv, std::size_t count, int root, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::broadcast";
    check_root(fn, root);
    check_buffers(fn, rank_ == root ? send : recv, recv, count, count, bound);
    if (rank_ == root && send != recv && overlaps(send, count, recv, count)) {
      detail::throw_invalid(fn, "send and recv overlap without being the same buffer");
    }
    const schedule::algorithm algo = algorithm_for(schedule::collective::broadcast, count * sizeof(T));
    const route how = route_for<T>(schedule::collective::broadcast, count, stream);
    if (how.nccl) {
      enqueue(ncclBroadcast(send, recv, count, nccl_type<T>(), root, comm_, stream), "ncclBroadcast");
      if (rank_ == root) info_.bytes_sent = count * sizeof(T);
      return;
    }
    reserve<T>(count, nranks_);
    start_call(stream);
    if (rank_ == root) compress_into<T>(send, count, root, root, bound, /*ranges_from_all_ranks=*/false, stream);
    exchange_meta(fn, count, stream);
    std::uint64_t sent = 0;
    if (algo == schedule::algorithm::tree) {
      // Forwarded unchanged down the binomial tree: receive from the parent, then feed the
      // children, largest subtree first (schedule/tree.hpp).
      const int parent = schedule::tree_parent(rank_, nranks_, root);
      if (parent >= 0) enqueue(ncclRecv(chunk(root), chunk_size(root), ncclUint8, parent, comm_, stream), "ncclRecv");
      for (const int child : schedule::tree_children(rank_, nranks_, root)) {
        enqueue(ncclSend(chunk(root), chunk_size(root), ncclUint8, child, comm_, stream), "ncclSend");
        sent += chunk_size(root);
      }
    } else {
      enqueue(ncclBroadcast(chunk(root), chunk(root), chunk_size(root), ncclUint8, root, comm_, stream), "ncclBroadcast");
      if (rank_ == root) sent = chunk_size(root);
    }
    mark("transfer", stream);
    reset_report(stream);
    device::detail::launch_decode<Codec>(chunk(root), chunk_size(root), recv, count, report(), stream);
    finish_info("broadcast", algo, count * sizeof(T), stream);
    info_.bytes_sent += sent;
    set_ratio(count * sizeof(T), chunk_size(root));
  }

  /// Sends block p of `send` (count values at send + p * count) to rank p, which finds it at
  /// recv + rank * count, as an all-to-all (ncclAlltoAll) does. send and recv must not overlap.
  /// This rank's own block is copied exactly; the others are compressed once and decoded.
  template <class T>
  void alltoall(const T* send, T* recv, std::size_t count, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::alltoall";
    const std::size_t total = count * static_cast<std::size_t>(nranks_);
    check_buffers(fn, send, recv, total, total, bound);
    if (overlaps(send, total, recv, total)) detail::throw_invalid(fn, "send and recv overlap");
    const schedule::algorithm algo = algorithm_for(schedule::collective::alltoall, total * sizeof(T));
    const route how = route_for<T>(schedule::collective::alltoall, total, stream);
    if (how.nccl) {
      enqueue(ncclGroupStart(), "ncclGroupStart");
      for (int p = 0; p < nranks_; ++p) {
        enqueue(ncclSend(send + p * count, count, nccl_type<T>(), p, comm_, stream), "ncclSend");
        enqueue(ncclRecv(recv + p * count, count, nccl_type<T>(), p, comm_, stream), "ncclRecv");
      }
      enqueue(ncclGroupEnd(), "ncclGroupEnd");
      info_.bytes_sent = count * sizeof(T) * static_cast<std::uint64_t>(nranks_ - 1);
      return;
    }
    reserve<T>(count, 2 * nranks_);  // chunk(p): received from p; chunk(n + p): sent to p
    start_call(stream);
    device::detail::range_keys* range = device::detail::reset_compress_state(workspace(), count, stream);
    if constexpr (Codec::quantizer::needs_range) {
      device::detail::launch_range(send, total, range, stream);
      merge_range_across_ranks(range, stream);
    }
    for (int i = 1; i < nranks_; ++i) {
      const int p = (rank_ + i) % nranks_;
      if (i > 1) device::detail::reset_tile_words(workspace(), count, stream);
      device::detail::launch_encode<Codec>(workspace(), send + p * count, count, chunk(nranks_ + p), meta_slot(rank_, p),
                                           range, bound, stream);
    }
    if (nranks_ > 1) bound_source_ = chunk(nranks_ + (rank_ + 1) % nranks_);
    exchange_meta(fn, count, stream);
    const std::uint64_t coded = exchange_pairwise(0, 0, stream);
    if (count) {
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(recv + rank_ * count, send + rank_ * count, count * sizeof(T), cudaMemcpyDeviceToDevice,
                                     stream));
    }
    reset_report(stream);
    for (int p = 0; p < nranks_; ++p) {
      if (p != rank_) device::detail::launch_decode<Codec>(chunk(p), sent_bytes(p, rank_), recv + p * count, count, report(), stream);
    }
    finish_info("alltoall", algo, total * sizeof(T), stream);
    info_.bytes_sent += coded;
    set_ratio(count * sizeof(T) * static_cast<std::uint64_t>(nranks_ - 1), coded);
  }

  /// Reduces `count` values over all ranks into every rank's `recv`, as ncclAllReduce (in place
  /// when send == recv), with ncclSum, ncclMin or ncclMax; the bound is in the file comment.
  /// Schedule: a reduce-scatter of codes (direct or ring), then the owner of each segment codes
  /// it once and the chunks are exchanged unchanged and decoded everywhere.
  template <class T>
  void allreduce(const T* send, T* recv, std::size_t count, ncclRedOp_t op, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::allreduce";
    const code_reduction red = reduction_for(fn, op, bound, /*moves_result=*/true);
    check_buffers(fn, send, recv, count, count, bound);
    if (send != recv && overlaps(send, count, recv, count)) detail::throw_invalid(fn, "send and recv overlap without being the same buffer");
    if constexpr (kLossless) {
      return lossless_reduction<T>(fn, schedule::collective::allreduce, send, recv, count, schedule::segments(count, nranks_), op,
                                   /*root=*/-1, /*scatter=*/false, stream);
    }
    const schedule::algorithm algo = algorithm_for(schedule::collective::allreduce, count * sizeof(T));
    const route how = route_for<T>(schedule::collective::allreduce, count, stream);
    if (how.nccl) {
      enqueue(ncclAllReduce(send, recv, count, nccl_type<T>(), op, comm_, stream), "ncclAllReduce");
      info_.bytes_sent = 2 * count * sizeof(T) * static_cast<std::uint64_t>(nranks_ - 1) / static_cast<std::uint64_t>(nranks_);
      return;
    }
    reduction<T>(fn, "allreduce", send, recv, count, schedule::segments(count, nranks_), red, algo, /*root=*/-1,
                 /*scatter=*/false, stream);
  }

  /// Reduces `count` values over all ranks into the root's `recv`, as ncclReduce (recv is
  /// written on the root only; in place when send == recv). Ops and bound as allreduce.
  template <class T>
  void reduce(const T* send, T* recv, std::size_t count, ncclRedOp_t op, int root, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::reduce";
    const code_reduction red = reduction_for(fn, op, bound, /*moves_result=*/true);
    check_root(fn, root);
    check_buffers(fn, send, rank_ == root ? recv : send, count, count, bound);
    if (rank_ == root && send != recv && overlaps(send, count, recv, count)) {
      detail::throw_invalid(fn, "send and recv overlap without being the same buffer");
    }
    if constexpr (kLossless) {
      return lossless_reduction<T>(fn, schedule::collective::reduce, send, recv, count, schedule::segments(count, nranks_), op, root,
                                   /*scatter=*/false, stream);
    }
    const schedule::algorithm algo = algorithm_for(schedule::collective::reduce, count * sizeof(T));
    const route how = route_for<T>(schedule::collective::reduce, count, stream);
    if (how.nccl) {
      enqueue(ncclReduce(send, recv, count, nccl_type<T>(), op, root, comm_, stream), "ncclReduce");
      info_.bytes_sent = count * sizeof(T);
      return;
    }
    reduction<T>(fn, "reduce", send, recv, count, schedule::segments(count, nranks_), red, algo, root, /*scatter=*/false,
                 stream);
  }

  /// Reduces `recvcount * nranks` values over all ranks and leaves block r (recvcount values) on
  /// rank r, as ncclReduceScatter; in place when send + rank * recvcount == recv. Ops and bound
  /// as allreduce.
  template <class T>
  void reduce_scatter(const T* send, T* recv, std::size_t recvcount, ncclRedOp_t op, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::reduce_scatter";
    const code_reduction red = reduction_for(fn, op, bound, /*moves_result=*/false);
    const std::size_t count = recvcount * static_cast<std::size_t>(nranks_);
    check_buffers(fn, send, recv, count, recvcount, bound);
    if (recv != send + static_cast<std::size_t>(rank_) * recvcount && overlaps(send, count, recv, recvcount)) {
      detail::throw_invalid(fn, "recv overlaps send other than in place (recv == send + rank * recvcount)");
    }
    std::vector<schedule::segment> seg(static_cast<std::size_t>(nranks_));
    for (int r = 0; r < nranks_; ++r) seg[r] = {static_cast<std::uint64_t>(r) * recvcount, recvcount};
    if constexpr (kLossless) {
      return lossless_reduction<T>(fn, schedule::collective::reduce_scatter, send, recv, count, seg, op, /*root=*/-1,
                                   /*scatter=*/true, stream);
    }
    const schedule::algorithm algo = algorithm_for(schedule::collective::reduce_scatter, count * sizeof(T));
    const route how = route_for<T>(schedule::collective::reduce_scatter, count, stream);
    if (how.nccl) {
      enqueue(ncclReduceScatter(send, recv, recvcount, nccl_type<T>(), op, comm_, stream), "ncclReduceScatter");
      info_.bytes_sent = recvcount * sizeof(T) * static_cast<std::uint64_t>(nranks_ - 1);
      return;
    }
    reduction<T>(fn, "reduce_scatter", send, recv, count, seg, red, algo, /*root=*/-1, /*scatter=*/true, stream);
  }

  /// Time per phase of the last compressed call, summed over its occurrences, in the order the
  /// phases first occur; empty unless config.profile_phases. Call after check(stream).
  [[nodiscard]] std::vector<phase_time> phase_times() const {
    std::vector<phase_time> out;
    for (std::size_t i = 1; i < marks_used_; ++i) {
      float ms = 0;
      NCCLZ_CUDA_TRY(cudaEventElapsedTime(&ms, marks_[i - 1].event, marks_[i].event));
      auto it = std::find_if(out.begin(), out.end(), [&](const phase_time& p) { return std::strcmp(p.phase, marks_[i].phase) == 0; });
      if (it == out.end()) out.push_back({marks_[i].phase, ms});
      else it->ms += ms;
    }
    return out;
  }

  /// Waits for `stream` (watching the communicator) and throws format_error if a received chunk
  /// was corrupted.
  void check(cudaStream_t stream) {
    if (held_bytes_ == 0) return;
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(h_meta_, report(), sizeof(device::detail::decode_report), cudaMemcpyDeviceToHost, stream));
    wait("Communicator::check", stream);
    device::detail::decode_report r;
    std::memcpy(&r, h_meta_, sizeof r);
    device::detail::throw_if_failed("Communicator: a received chunk", r);
  }

 private:
  // ---- device memory: [workspace | report | meta | chunk slots] ---------------------------------
  // meta: one row per rank, {count, bytes sent to rank 0, ..., bytes sent to rank n-1}.
  template <class T>
  void reserve(std::size_t count, int slots) {
    reserve_bytes(max_compressed_bytes<T, Codec>(count), device::workspace_bytes<T>(count), slots, 1);
  }

  void reserve_bytes(std::size_t chunk_bytes, std::size_t workspace_bytes, int slots, int meta_sets) {
    const std::size_t chunk_capacity = format::align_up(chunk_bytes, 256);
    const std::size_t workspace = format::align_up(workspace_bytes, 256);
    grow_host_meta(meta_sets);
    if (device_ != nullptr && chunk_capacity <= chunk_capacity_ && workspace <= workspace_capacity_ && slots <= slots_ &&
        meta_sets <= device_meta_sets_) {
      return;
    }
    release_device();  // cudaFree waits for work still using the old buffers
    chunk_capacity_ = std::max(chunk_capacity, chunk_capacity_);
    workspace_capacity_ = std::max(workspace, workspace_capacity_);
    slots_ = std::max(slots, slots_);
    device_meta_sets_ = std::max(meta_sets, device_meta_sets_);
    held_bytes_ = workspace_capacity_ + kReportBytes + meta_bytes() + chunk_capacity_ * static_cast<std::size_t>(slots_);
    NCCLZ_CUDA_TRY(cudaMalloc(&device_, held_bytes_));
  }

  /// Pinned host copy of `sets` meta sets, then the error bound. Grown between calls only, when
  /// no copy into it is pending.
  void grow_host_meta(int sets) {
    if (sets <= host_meta_sets_) return;
    if (h_meta_) NCCLZ_CUDA_TRY(cudaFreeHost(h_meta_));
    h_meta_ = nullptr;
    host_meta_sets_ = 0;
    NCCLZ_CUDA_TRY(cudaMallocHost(&h_meta_, sizeof(std::uint64_t) * (meta_words() * static_cast<std::size_t>(sets) + 8)));
    host_meta_sets_ = sets;
  }

  static constexpr std::size_t kReportBytes = 256;
  /// One meta set: a row per rank, {count, bytes sent to rank 0, ..., to rank n-1}.
  std::size_t meta_words() const { return static_cast<std::size_t>(nranks_) * static_cast<std::size_t>(nranks_ + 1); }
  std::size_t meta_bytes() const {
    return format::align_up(sizeof(std::uint64_t) * meta_words() * static_cast<std::size_t>(device_meta_sets_), 256);
  }
  double* host_bound() const { return reinterpret_cast<double*>(h_meta_ + meta_words() * static_cast<std::size_t>(host_meta_sets_)); }
  std::byte* workspace() const { return device_; }
  device::detail::decode_report* report() const {
    return reinterpret_cast<device::detail::decode_report*>(device_ + workspace_capacity_);
  }
  std::uint64_t* meta(int set = 0) const {
    return reinterpret_cast<std::uint64_t*>(device_ + workspace_capacity_ + kReportBytes) + meta_words() * static_cast<std::size_t>(set);
  }
  std::uint64_t* meta_row(int r, int set = 0) const { return meta(set) + static_cast<std::size_t>(r) * (nranks_ + 1); }
  /// Device word where the encoder of rank `from`'s chunk for rank `to` puts its size.
  std::uint64_t* meta_slot(int from, int to, int set = 0) const { return meta_row(from, set) + 1 + to; }
  std::uint64_t* host_row(int r, int set) const {
    return h_meta_ + meta_words() * static_cast<std::size_t>(set) + static_cast<std::size_t>(r) * (nranks_ + 1);
  }
  std::byte* chunk(int slot) const {
    return device_ + workspace_capacity_ + kReportBytes + meta_bytes() + chunk_capacity_ * static_cast<std::size_t>(slot);
  }
  /// Sizes from the exchange_meta of `set`.
  std::uint64_t sent_bytes(int from, int to, int set = 0) const { return host_row(from, set)[1 + to]; }
  /// The one chunk rank r coded for everyone (allgather, broadcast, allreduce's second half).
  std::uint64_t chunk_size(int r, int set = 0) const { return sent_bytes(r, r, set); }

  template <class T>
  void check_buffers(const char* fn, const T* send, const T* recv, std::size_t send_count, std::size_t recv_count,
                     double bound) const {
    static_assert(is_supported_value_type_v<T>, "ncclz::Communicator: T must be float, double, __half or __nv_bfloat16");
    device::detail::check_values(fn, "send", send, send_count);
    device::detail::check_values(fn, "recv", recv, recv_count);
    detail::validate_bound<typename Codec::quantizer>(fn, bound);
    detail::validate_count<T>(fn, send_count);
  }

  void check_root(const char* fn, int root) const {
    if (root < 0 || root >= nranks_) {
      detail::throw_invalid(fn, "root " + std::to_string(root) + " is outside [0, " + std::to_string(nranks_) + ")");
    }
  }

  template <class T>
  static bool overlaps(const T* a, std::size_t na, const T* b, std::size_t nb) {
    return na > 0 && nb > 0 && a < b + nb && b < a + na;
  }

  /// The algorithm of this call; also refuses calls after a failure aborted the communicator.
  schedule::algorithm algorithm_for(schedule::collective c, std::uint64_t bytes) const {
    if (aborted_) {
      throw error(std::string("ncclz::Communicator::") + schedule::name(c) +
                  ": the NCCL communicator was aborted after an earlier failure; make a new one");
    }
    using schedule::algorithm_for;  // the policy's overload is found by argument-dependent lookup
    return algorithm_for(Schedule{}, c, bytes, nranks_);
  }

  /// Zeroes this rank's meta row: sizes of chunks not coded in this call read 0.
  void start_call(cudaStream_t stream, int meta_sets = 1) {
    error_bound_ = 0;
    marks_used_ = 0;
    mark("start", stream);
    for (int set = 0; set < meta_sets; ++set) {
      NCCLZ_CUDA_TRY(cudaMemsetAsync(meta_row(rank_, set), 0, sizeof(std::uint64_t) * (nranks_ + 1), stream));
    }
  }

  /// Ends the phase running since the last mark (config.profile_phases only).
  void mark(const char* phase, cudaStream_t stream) {
    if (!config_.profile_phases) return;
    if (marks_used_ == marks_.size()) {
      cudaEvent_t e;
      NCCLZ_CUDA_TRY(cudaEventCreate(&e));
      marks_.push_back({e, phase});
    }
    marks_[marks_used_].phase = phase;
    NCCLZ_CUDA_TRY(cudaEventRecord(marks_[marks_used_].event, stream));
    ++marks_used_;
  }

  void merge_range_across_ranks(device::detail::range_keys* range, cudaStream_t stream) {
    // Order keys merge with max: one tiny allreduce gives every rank the global range.
    enqueue(ncclAllReduce(range, range, 2, ncclUint64, ncclMax, comm_, stream), "ncclAllReduce");
    range_bytes_sent_ = 2 * sizeof(std::uint64_t);
  }

  /// Range (merged over all ranks when asked), then encode into chunk slot `slot`; the size
  /// lands in meta as the chunk for rank `to`.
  template <class T>
  void compress_into(const T* send, std::size_t count, int slot, int to, double bound, bool ranges_from_all_ranks,
                     cudaStream_t stream) {
    device::detail::range_keys* range = device::detail::reset_compress_state(workspace(), count, stream);
    if constexpr (Codec::quantizer::needs_range) {
      device::detail::launch_range(send, count, range, stream);
      if (ranges_from_all_ranks) merge_range_across_ranks(range, stream);
    }
    device::detail::launch_encode<Codec>(workspace(), send, count, chunk(slot), meta_slot(rank_, to), range, bound, stream);
    bound_source_ = chunk(slot);
  }

  /// Gathers every rank's meta row and waits for it on the host; throws on every rank if the
  /// counts differ. Reads the bound the encoder applied from the chunk header at bound_source_.
  /// On `stream` over comm_; or, given `ready` (the event after the chunks were coded) and a size
  /// communicator, over that on its own stream, so that the host's wait does not include the
  /// payloads already on `stream`: the pipelined reductions enqueue part i+1's sends while part
  /// i's still move.
  void exchange_meta(const char* fn, std::size_t count, cudaStream_t stream, int set = 0, cudaEvent_t ready = nullptr) {
    const bool beside = ready != nullptr && size_comm_ != nullptr;
    if (beside && size_stream_ == nullptr) size_stream_ = transfer_priority_stream();
    const cudaStream_t on = beside ? size_stream_ : stream;
    const ncclComm_t via = beside ? size_comm_ : comm_;
    if (beside) NCCLZ_CUDA_TRY(cudaStreamWaitEvent(on, ready, 0));
    std::uint64_t* row = host_row(rank_, set);
    row[0] = count;
    mark("codec", stream);
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(meta_row(rank_, set), row, sizeof(std::uint64_t), cudaMemcpyHostToDevice, on));
    enqueue(ncclAllGather(meta_row(rank_, set), meta(set), nranks_ + 1, ncclUint64, via, on), "ncclAllGather", via);
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(host_row(0, set), meta(set), sizeof(std::uint64_t) * meta_words(), cudaMemcpyDeviceToHost,
                                   on));
    double* h_bound = host_bound();
    *h_bound = 0;
    if (bound_source_ != nullptr) {
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(h_bound, bound_source_ + offsetof(format::chunk_header, error_bound), sizeof(double),
                                     cudaMemcpyDeviceToHost, on));
    }
    timed_wait(fn, stream, on);
    if (bound_source_ != nullptr) error_bound_ = *h_bound;
    for (int r = 0; r < nranks_; ++r) {
      const std::uint64_t theirs = host_row(r, set)[0];
      if (theirs != count) {
        detail::throw_invalid(fn, "ranks passed different counts: rank " + std::to_string(rank_) + " has " +
                                      std::to_string(count) + ", rank " + std::to_string(r) + " has " + std::to_string(theirs));
      }
    }
  }

  /// Where exchange_chunks left the chunks (rank r's at base + r * stride), and the bytes this
  /// rank sent.
  struct exchanged_chunks {
    std::byte* base;
    std::uint64_t stride;
    std::uint64_t sent;
    std::byte* at(int r) const { return base + stride * static_cast<std::uint64_t>(r); }
  };

  /// Sends this rank's one chunk (slot slot_base + rank) to every peer (root < 0) or to the root
  /// only, and receives theirs where they are needed; sizes from meta set `set`.
  /// To every peer, given `gather_area` (room for n chunk slots, holding no chunk of this
  /// exchange), by one ncclAllGather of the largest chunk into it: NCCL's collectives move 512
  /// KiB steps over a network where its point-to-point transfers move 128 KiB
  /// (NCCL_P2P_NET_CHUNKSIZE), and each step costs the proxies a round trip. 4 ranks on
  /// sockets, 256 MiB Adaptive allreduce in 4 parts: 11.1-11.8 ms against 12.9-13.7 point to
  /// point, as fast as point to point with NCCL_P2P_NET_CHUNKSIZE=524288 (docs/benchmarks.md).
  /// Otherwise point to point, rank r's chunk into slot slot_base + r.
  exchanged_chunks exchange_chunks(cudaStream_t stream, int root, int slot_base = 0, int set = 0,
                                   std::byte* gather_area = nullptr) {
    if (root < 0 && gather_area != nullptr) {
      std::uint64_t largest = 0;
      for (int r = 0; r < nranks_; ++r) largest = std::max(largest, chunk_size(r, set));
      const std::uint64_t stride = format::align_up(largest, 256);  // <= a slot: every chunk fits one
      enqueue(ncclAllGather(chunk(slot_base + rank_), gather_area, stride, ncclUint8, comm_, stream), "ncclAllGather");
      mark("transfer", stream);
      return {gather_area, stride, stride * static_cast<std::uint64_t>(nranks_ - 1)};
    }
    std::uint64_t sent = 0;
    enqueue(ncclGroupStart(), "ncclGroupStart");
    for (int peer = 0; peer < nranks_; ++peer) {
      if (peer == rank_) continue;
      if (root < 0 || peer == root) {
        enqueue(ncclSend(chunk(slot_base + rank_), chunk_size(rank_, set), ncclUint8, peer, comm_, stream), "ncclSend");
        sent += chunk_size(rank_, set);
      }
      if (root < 0 || rank_ == root) {
        enqueue(ncclRecv(chunk(slot_base + peer), chunk_size(peer, set), ncclUint8, peer, comm_, stream), "ncclRecv");
      }
    }
    enqueue(ncclGroupEnd(), "ncclGroupEnd");
    mark("transfer", stream);
    return {chunk(slot_base), chunk_capacity_, sent};
  }

  /// Sends chunk slot_base + n + p to every peer p and receives peer p's into slot_base + p, in
  /// one group, sizes from meta set `set` (alltoall, the direct reduce-scatter). Returns the
  /// bytes sent.
  std::uint64_t exchange_pairwise(int slot_base, int set, cudaStream_t stream) {
    std::uint64_t sent = 0;
    enqueue(ncclGroupStart(), "ncclGroupStart");
    for (int p = 0; p < nranks_; ++p) {
      if (p == rank_) continue;
      enqueue(ncclSend(chunk(slot_base + nranks_ + p), sent_bytes(rank_, p, set), ncclUint8, p, comm_, stream), "ncclSend");
      enqueue(ncclRecv(chunk(slot_base + p), sent_bytes(p, rank_, set), ncclUint8, p, comm_, stream), "ncclRecv");
      sent += sent_bytes(rank_, p, set);
    }
    enqueue(ncclGroupEnd(), "ncclGroupEnd");
    mark("transfer", stream);
    return sent;
  }

  /// Waits for `waited` (the stream the sizes come on); phases are marked on `stream`.
  void timed_wait(const char* fn, cudaStream_t stream, cudaStream_t waited, const std::string& peers = {}) {
    mark("size exchange", stream);
    const auto start = std::chrono::steady_clock::now();
    wait(fn, waited, peers);
    mark("host gap", stream);
    size_wait_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ++size_waits_;
  }

  /// Waits for `stream` while polling the communicator; aborts it and throws on error or timeout.
  /// `peers` names whom the wait depends on, for the message (all ranks when empty).
  void wait(const char* fn, cudaStream_t stream, const std::string& peers = {}) {
    const auto whom = [&] { return peers.empty() ? "the other " + std::to_string(nranks_ - 1) + " rank(s)" : peers; };
    const auto deadline = std::chrono::steady_clock::now() + config_.timeout;
    for (;;) {
      const cudaError_t s = cudaStreamQuery(stream);
      if (s == cudaSuccess) return;
      if (s != cudaErrorNotReady) NCCLZ_CUDA_TRY(s);
      ncclResult_t async = ncclSuccess;
      ncclComm_t failed = comm_;
      NCCLZ_NCCL_TRY(ncclCommGetAsyncError(comm_, &async));
      if ((async == ncclSuccess || async == ncclInProgress) && size_comm_ != nullptr) {
        failed = size_comm_;
        NCCLZ_NCCL_TRY(ncclCommGetAsyncError(size_comm_, &async));
      }
      if (async != ncclSuccess && async != ncclInProgress) {
        const char* detail = ncclGetLastError(failed);  // NCCL's text names the failed connection
        std::string m = std::string("ncclz::") + fn + " on rank " + std::to_string(rank_) + ": NCCL reported " +
                        ncclGetErrorString(async) + " while waiting for " + whom();
        if (detail != nullptr && detail[0] != '\0') m += " (" + std::string(detail) + ")";
        abort_comm();
        throw nccl_error(static_cast<int>(async), m + "; the communicator was aborted");
      }
      if (std::chrono::steady_clock::now() > deadline) {
        abort_comm();
        throw error(std::string("ncclz::") + fn + " on rank " + std::to_string(rank_) + ": timed out after " +
                    std::to_string(config_.timeout.count()) + " ms waiting for " + whom() + " (one may have died or not called " +
                    fn + "); the communicator was aborted");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  /// Finishes an NCCL call of a collective (waiting out ncclInProgress on a non-blocking
  /// communicator, within config::timeout); any failure aborts the communicator and throws.
  void enqueue(ncclResult_t result, const char* call, ncclComm_t on = nullptr) {
    try {
      detail::nccl_wait(on != nullptr ? on : comm_, result, call, config_.timeout);
    } catch (...) {
      abort_comm();
      throw;
    }
  }

  void abort_comm() noexcept {
    ncclCommAbort(comm_);
    if (size_comm_ != nullptr) ncclCommAbort(size_comm_);
    size_comm_ = nullptr;
    aborted_ = true;
  }

  void release_size_comm() noexcept {
    if (size_comm_ != nullptr) detail::finalize_or_abort(size_comm_, config_.timeout);
    size_comm_ = nullptr;
  }

  void reset_report(cudaStream_t stream) {
    NCCLZ_CUDA_TRY(cudaMemsetAsync(report(), 0, sizeof(device::detail::decode_report), stream));
  }

  /// Fills info_ for a compressed call and resets the per-call counters.
  void finish_info(const char* collective, schedule::algorithm algo, std::uint64_t input_bytes, cudaStream_t stream) {
    mark("codec", stream);
    info_ = call_info{};
    info_.collective = collective;
    info_.schedule = schedule::name(algo);
    info_.parts = 1;
    info_.coder = Codec::coder::name;
    info_.input_bytes = input_bytes;
    info_.bytes_sent = range_bytes_sent_ + sizeof(std::uint64_t) * (nranks_ + 1) * static_cast<std::uint64_t>(size_waits_);
    info_.error_bound = error_bound_;
    info_.size_waits = size_waits_;
    info_.size_wait_ms = size_wait_ms_;
    if (tuned_ && tuned_->decided) {
      info_.autotune_ncclz_ms = tuned_->ms[0];
      info_.autotune_nccl_ms = tuned_->ms[1];
    }
    range_bytes_sent_ = 0;
    bound_source_ = nullptr;
    size_wait_ms_ = 0;
    size_waits_ = 0;
  }

  void set_ratio(std::uint64_t uncompressed, std::uint64_t compressed) {
    info_.chunk_bytes = compressed;
    info_.ratio = compressed ? static_cast<double>(uncompressed) / static_cast<double>(compressed) : 0.0;
  }

  void release_device() noexcept {
    if (device_) NCCLZ_CUDA_TRY_NO_THROW(cudaFree(device_));
    device_ = nullptr;
    held_bytes_ = 0;
  }

  // ---- NCCL or compressed -----------------------------------------------------------------------
  /// How one call goes: NCCL's own collective (`nccl`), or compressed. A call the autotuner times
  /// records its end event when this goes out of scope, after the call's work is enqueued.
  struct route {
    bool nccl = false;
    cudaEvent_t end = nullptr;
    cudaStream_t stream = nullptr;
    explicit route(bool to_nccl, cudaEvent_t end_event = nullptr, cudaStream_t on = nullptr)
        : nccl(to_nccl), end(end_event), stream(on) {}
    route(const route&) = delete;
    route& operator=(const route&) = delete;
    ~route() {
      if (end) NCCLZ_CUDA_TRY_NO_THROW(cudaEventRecord(end, stream));
    }
  };

  struct tuning_state {
    int calls = 0;
    bool decided = false, compress = true;
    float ms[2] = {0, 0};                      // slowest rank's compressed and NCCL probe times
    cudaEvent_t events[4] = {nullptr, nullptr, nullptr, nullptr};  // start/end of both probes
  };

  /// NCCL below config.fallback_below_bytes; above it the autotuner's choice per collective,
  /// element size and power of two of the bytes: call 0 warms the compressed path (buffers,
  /// connections), call 1 is timed compressed, call 2 timed with NCCL, call 3 decides.
  template <class T>
  route route_for(schedule::collective c, std::size_t count, cudaStream_t stream) {
    const std::uint64_t bytes = count * sizeof(T);
    tuned_ = nullptr;
    if (bytes < config_.fallback_below_bytes) return nccl_route(c, bytes, nullptr);
    if (!config_.autotune) return route(false);
    int size_class = 0;
    while (size_class < 63 && (std::uint64_t{1} << (size_class + 1)) <= bytes) ++size_class;
    tuning_state& t = tuning_[(static_cast<std::uint64_t>(c) << 40) | (std::uint64_t{sizeof(T)} << 32) |
                              static_cast<std::uint64_t>(size_class)];
    tuned_ = &t;
    if (!t.decided) {
      switch (t.calls++) {
        case 0: return route(false);
        case 1: return timed_route(t, 0, false, stream);
        case 2: return nccl_route(c, bytes, &t, stream);
        default: decide(t, stream);
      }
    }
    return t.compress ? route(false) : nccl_route(c, bytes, nullptr);
  }

  route timed_route(tuning_state& t, int probe, bool nccl, cudaStream_t stream) {
    for (int i = 2 * probe; i < 2 * probe + 2; ++i) {
      if (t.events[i] == nullptr) NCCLZ_CUDA_TRY(cudaEventCreate(&t.events[i]));
    }
    NCCLZ_CUDA_TRY(cudaEventRecord(t.events[2 * probe], stream));
    return route(nccl, t.events[2 * probe + 1], stream);
  }

  /// NCCL's own collective: fills call_info as a fallback (timed as the NCCL probe when `t`).
  route nccl_route(schedule::collective c, std::uint64_t bytes, tuning_state* t, cudaStream_t stream = nullptr) {
    info_ = call_info{};
    info_.collective = schedule::name(c);
    info_.schedule = "nccl";
    info_.coder = "none";
    info_.input_bytes = bytes;
    info_.fallback = true;
    if (tuned_ && tuned_->decided) {
      info_.autotune_ncclz_ms = tuned_->ms[0];
      info_.autotune_nccl_ms = tuned_->ms[1];
    }
    if (t == nullptr) return route(true);
    return timed_route(*t, 1, true, stream);
  }

  /// The slowest rank's probe times, by one allreduce, so that every rank takes the same route.
  void decide(tuning_state& t, cudaStream_t stream) {
    constexpr const char* fn = "Communicator (autotune)";
    wait(fn, stream);  // both probes have run
    NCCLZ_CUDA_TRY(cudaEventElapsedTime(&t.ms[0], t.events[0], t.events[1]));
    NCCLZ_CUDA_TRY(cudaEventElapsedTime(&t.ms[1], t.events[2], t.events[3]));
    if (d_tuning_ == nullptr) NCCLZ_CUDA_TRY(cudaMalloc(&d_tuning_, 2 * sizeof(float)));
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(d_tuning_, t.ms, sizeof t.ms, cudaMemcpyHostToDevice, stream));
    enqueue(ncclAllReduce(d_tuning_, d_tuning_, 2, ncclFloat32, ncclMax, comm_, stream), "ncclAllReduce");
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(t.ms, d_tuning_, sizeof t.ms, cudaMemcpyDeviceToHost, stream));
    wait(fn, stream);
    t.compress = t.ms[0] < t.ms[1];
    t.decided = true;
  }

  // ---- reductions -----------------------------------------------------------------------------
  /// How the codes of one reduction are made: a sum of n codes must stay a code and within the
  /// bound, so each rank quantizes with bound / n and codes below 2^30 / n; min and max of codes
  /// are exact, so they keep the whole bound and code range.
  struct code_reduction {
    ncclRedOp_t op;
    double code_bound;          ///< the bound each rank quantizes with
    std::uint32_t limit_ranks;  ///< divides the code limit
    int bound_scale;            ///< result bound = code bound x this
    double bound;               ///< what the caller asked for
    std::uint32_t coarsen = 1;  ///< owners requantize their reduced codes at this many steps (sum_bound.hpp)
    /// The bound the owners' chunks are coded with.
    double result_code_bound() const { return code_bound * coarsen; }
  };

  /// `moves_result`: the reduced segments are coded again and sent on (allreduce, reduce).
  code_reduction reduction_for(const char* fn, ncclRedOp_t op, double bound, bool moves_result) const {
    const auto n = static_cast<std::uint32_t>(nranks_);
    switch (op) {
      case ncclSum: {
        constexpr bool kCanCoarsen = !is_blockwise_v<typename Codec::quantizer> && !kLossless;
        const detail::sum_bound_split split =
            detail::split_sum_bound(bound, n, kCanCoarsen && moves_result && config_.split_sum_bound);
        return {op, split.code_bound, n, static_cast<int>(split.units), bound, split.coarsen};
      }
      case ncclMin:
      case ncclMax: return {op, bound, 1u, 1, bound};
      default:
        detail::throw_invalid(fn, "op " + std::to_string(static_cast<int>(op)) +
                                      " is not supported: ncclSum, ncclMin and ncclMax are (for ncclAvg use ncclSum and "
                                      "scale by 1/nranks; for ncclProd, NCCL's own collective)");
    }
  }

  static std::uint64_t largest_segment(const std::vector<schedule::segment>& seg) {
    std::uint64_t largest = 0;
    for (const auto& g : seg) largest = std::max(largest, g.count);
    return largest;
  }

  static unsigned grid_for(std::size_t count) {
    const std::size_t blocks = (count + ncclz::kernels::kElementwiseThreads - 1) / ncclz::kernels::kElementwiseThreads;
    return static_cast<unsigned>(std::clamp<std::size_t>(blocks, 1, std::size_t(device::detail::sm_count()) * 8));
  }

  /// Code buffers of the reductions: this rank's codes of its whole input (the ring's; the direct
  /// reductions quantize into the sum and reserve none), the running reduction of one segment, a
  /// segment's decoded codes, and the quantization step.
  struct reduce_buffers {
    std::byte* base = nullptr;
    std::size_t bytes = 0;
    std::int32_t* own_codes = nullptr;
    void* own_values = nullptr;
    std::int32_t* acc_codes = nullptr;
    void* acc_values = nullptr;
    std::int32_t* peer_codes = nullptr;
    void* peer_values = nullptr;
    double* step = nullptr;
    double* result_step = nullptr;  ///< the owners' coarser step (coarsen_result)
    std::uint64_t* sizes = nullptr;  ///< ring: [0] this step's send, [1] this step's receive
  };

  template <class T>
  void reserve_reduce(std::size_t count, std::size_t largest_segment) {
    const auto codes_and_values = [](std::size_t n) {
      return format::align_up(format::align_up(n * sizeof(std::int32_t), 16) + n * sizeof(T), 256);
    };
    const std::size_t own = codes_and_values(count), seg = codes_and_values(largest_segment);
    const std::size_t need = own + 2 * seg + 256;
    if (need > reduce_.bytes) {
      if (reduce_.base) NCCLZ_CUDA_TRY(cudaFree(reduce_.base));
      reduce_.base = nullptr;
      reduce_.bytes = 0;
      NCCLZ_CUDA_TRY(cudaMalloc(&reduce_.base, need));
      reduce_.bytes = need;
    }
    std::byte* p = reduce_.base;
    const auto carve = [&p](std::int32_t*& codes, void*& values, std::size_t n, std::size_t bytes) {
      codes = reinterpret_cast<std::int32_t*>(p);
      values = p + format::align_up(n * sizeof(std::int32_t), 16);
      p += bytes;
    };
    carve(reduce_.own_codes, reduce_.own_values, count, own);
    carve(reduce_.acc_codes, reduce_.acc_values, largest_segment, seg);
    carve(reduce_.peer_codes, reduce_.peer_values, largest_segment, seg);
    reduce_.step = reinterpret_cast<double*>(p);
    reduce_.result_step = reduce_.step + 1;
    reduce_.sizes = reinterpret_cast<std::uint64_t*>(p + 64);
  }

  /// Encodes a reduction's chunk into `out` from `source`, with the step of `bound` (red.code_bound,
  /// or red.result_code_bound() for an owner's requantized codes); its size lands in *d_size.
  /// Sources: code_source (codes already made, kOutlierCode marking values kept beside: a sum's),
  /// or value_source<T, false> (input values quantized as they are read, with quantize_kernel's
  /// parameters and never a raw tile: the chunk code_source makes of quantize_kernel's codes,
  /// without those codes going through memory).
  template <class T, class Source>
  void encode_chunk(Source source, std::size_t count, std::byte* out, std::uint64_t* d_size, const code_reduction& red,
                    double bound, cudaStream_t stream, ncclz::kernels::block_scales scales) {
    static_assert(!Source::allows_raw, "a reduction's chunk is added to as codes: its tiles may not be raw");
    auto kernel = ncclz::kernels::encode_kernel<Codec, T, Source>;
    device::detail::prefer_shared_memory(kernel);
    const auto tiles = static_cast<unsigned>(format::tile_count(count));
    const device::detail::workspace_layout l = device::detail::layout_for(count);
    kernel<<<tiles > 0 ? tiles : 1u, ncclz::kernels::kTileThreads, 0, stream>>>(
        source, count, out, d_size, range_keys(), bound, red.limit_ranks,
        reinterpret_cast<std::uint64_t*>(workspace() + l.tile_words), scales);
    NCCLZ_CUDA_TRY(cudaGetLastError());
  }

  /// Decodes a chunk of codes into `codes` (outliers' values into `values`).
  template <class T>
  void decode_codes(const std::byte* in, std::uint64_t in_bytes, std::size_t count, std::int32_t* codes, void* values,
                    cudaStream_t stream) {
    device::detail::launch_decode_kernel<Codec, T>(in, in_bytes,
                                                   ncclz::kernels::code_sink<typename Codec::quantizer, T>{codes, static_cast<T*>(values)},
                                                   count, report(), stream);
  }

  /// acc = op(acc, codes/values), element-wise.
  template <class T>
  void accumulate(const code_reduction& red, const std::int32_t* codes, const T* values, std::size_t count,
                  std::uint64_t first, cudaStream_t stream) {
    auto* acc_values = static_cast<T*>(reduce_.acc_values);
    const auto launch = [&](auto kernel) {
      kernel<<<grid_for(count), ncclz::kernels::kElementwiseThreads, 0, stream>>>(reduce_.acc_codes, acc_values, codes,
                                                                                  values, count, steps_at(first), step_shift());
    };
    switch (red.op) {
      case ncclMin: launch(ncclz::kernels::accumulate_kernel<ncclz::kernels::min_op, T>); break;
      case ncclMax: launch(ncclz::kernels::accumulate_kernel<ncclz::kernels::max_op, T>); break;
      default: launch(ncclz::kernels::accumulate_kernel<ncclz::kernels::sum_op, T>); break;
    }
    NCCLZ_CUDA_TRY(cudaGetLastError());
  }

  device::detail::range_keys* range_keys() const {
    return reinterpret_cast<device::detail::range_keys*>(workspace() + device::detail::layout_for(0).range);
  }

  /// allreduce (root < 0), reduce (to root) and reduce_scatter (scatter): a reduce-scatter of
  /// codes leaves the reduction of segment `rank` on this rank; reduce_scatter dequantizes it,
  /// the others code it once and send the chunks, unchanged, to every rank or to the root.
  template <class T>
  void reduction(const char* fn, const char* collective, const T* send, T* recv, std::size_t count,
                 const std::vector<schedule::segment>& seg, const code_reduction& red, schedule::algorithm algo, int root,
                 bool scatter, cudaStream_t stream) {
    if (algo != schedule::algorithm::ring || nranks_ == 1) {
      direct_reduction<T>(fn, collective, send, recv, count, seg, red, algo, root, scatter, stream);
      return;
    }
    const ring_traffic ring = ring_reduce_codes<T>(fn, send, count, seg, red, stream);
    const schedule::segment mine = seg[rank_];
    if (scatter) {
      dequantize<T>(mine.count, recv, mine.first, stream);
      finish_info(collective, algo, count * sizeof(T), stream);
      info_.error_bound *= red.bound_scale;
      info_.bytes_sent += ring.sent;
      set_ratio(ring.coded_input, ring.coded);
      return;
    }
    coarsen_result<T>(red, mine.count, stream);
    device::detail::reset_tile_words(workspace(), mine.count, stream);
    encode_chunk<T>(ncclz::kernels::code_source<T>{reduce_.acc_codes, static_cast<const T*>(reduce_.acc_values)}, mine.count,
                    chunk(rank_), meta_slot(rank_, rank_), red, red.result_code_bound(), stream, scales_at(mine.first));
    exchange_meta(fn, count, stream);  // error_bound_ stays the ring steps' (the ranks' code bound)
    const exchanged_chunks got = exchange_chunks(stream, root);  // no slot free to gather into
    if (root < 0 || rank_ == root) {
      dequantize<T>(mine.count, recv + mine.first, mine.first, stream, &red);  // the codes of our own chunk
      for (int r = 0; r < nranks_; ++r) {
        if (r != rank_) device::detail::launch_decode<Codec>(got.at(r), chunk_size(r), recv + seg[r].first, seg[r].count, report(), stream);
      }
    }
    finish_info(collective, algo, count * sizeof(T), stream);
    info_.error_bound *= red.bound_scale;
    info_.bytes_sent += ring.sent + got.sent;
    set_ratio(mine.count * sizeof(T), chunk_size(rank_));
  }

  /// The reduced codes in reduce_.acc_* (of the input's elements from `first` on) as values; after
  /// coarsen_result, pass `red` for the coarse step.
  template <class T>
  void dequantize(std::size_t count, T* out, std::uint64_t first, cudaStream_t stream, const code_reduction* red = nullptr) {
    const double* steps = red != nullptr && red->coarsen > 1 ? reduce_.result_step : steps_at(first);
    ncclz::kernels::dequantize_kernel<T><<<grid_for(count), ncclz::kernels::kElementwiseThreads, 0, stream>>>(
        reduce_.acc_codes, static_cast<const T*>(reduce_.acc_values), count, steps, out, step_shift());
    NCCLZ_CUDA_TRY(cudaGetLastError());
  }

  /// An owner's reduced codes in reduce_.acc_*, requantized at red.coarsen steps before they are
  /// coded and sent on (detail/sum_bound.hpp); reduce_.result_step gets the step.
  template <class T>
  void coarsen_result(const code_reduction& red, std::size_t count, cudaStream_t stream) {
    if constexpr (!is_blockwise_v<typename Codec::quantizer> && !kLossless) {
      if (red.coarsen <= 1 || count == 0) return;
      ncclz::kernels::requantize_kernel<typename Codec::quantizer, T><<<grid_for(count), ncclz::kernels::kElementwiseThreads, 0, stream>>>(
          reduce_.acc_codes, static_cast<T*>(reduce_.acc_values), count, range_keys(), red.code_bound, red.bound,
          red.limit_ranks, red.coarsen, reduce_.result_step);
      NCCLZ_CUDA_TRY(cudaGetLastError());
    }
  }

  /// Parts a direct reduction of `bytes` (per rank) is cut into: Pipe's limit, parts of at
  /// least config.pipeline_part_bytes.
  int part_count(std::uint64_t bytes) const {
    const std::uint64_t floor_bytes = std::max<std::uint64_t>(config_.pipeline_part_bytes, 1);
    return static_cast<int>(std::clamp<std::uint64_t>(bytes / floor_bytes, 1, static_cast<std::uint64_t>(Pipe::max_parts)));
  }

  cudaEvent_t sync_event(std::size_t i) {
    while (sync_events_.size() <= i) {
      cudaEvent_t e;
      NCCLZ_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      sync_events_.push_back(e);
    }
    return sync_events_[i];
  }

  /// A new non-blocking stream for transfers: of the device's greatest priority where
  /// config_.priority_transfers asks for it (the default priority is the least).
  cudaStream_t transfer_priority_stream() const {
    int least = 0, greatest = 0;
    NCCLZ_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t s = nullptr;
    NCCLZ_CUDA_TRY(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, config_.priority_transfers ? greatest : least));
    return s;
  }

  /// `waiter` waits for the work enqueued on `signaler` so far.
  void join(cudaStream_t waiter, cudaStream_t signaler, std::size_t event_index) {
    const cudaEvent_t e = sync_event(event_index);
    NCCLZ_CUDA_TRY(cudaEventRecord(e, signaler));
    NCCLZ_CUDA_TRY(cudaStreamWaitEvent(waiter, e, 0));
  }

  /// The direct reductions, in parts (Pipeline). Each segment is cut into `parts` sub-segments;
  /// part i is: quantize and code the peers' sub-segments (coding stream), one size exchange and
  /// one group of sends/receives (transfer stream), decode and reduce (coding stream), then, but
  /// for reduce_scatter, the owner codes its reduced sub-segment and a second size exchange and
  /// group move those chunks unchanged. Payloads stay in order on the transfer stream (of the
  /// greatest priority, config.priority_transfers; joined to the caller's at both ends), and coding
  /// runs beside it: while part i moves, part i+1 is coded and part i-1 reduced or decoded. With
  /// parts, the size exchanges go over the split size communicator on their own stream, waiting
  /// only for the chunks they size: the host learns part i+1's sizes and queues its sends while
  /// part i's payloads still move, instead of after them. Chunk slots of part i: [2ni, 2ni + n)
  /// received (then the owners' chunks), [2ni + n, 2n(i+1)) sent; meta sets: i for the first
  /// exchange, parts + i for the second.
  template <class T>
  void direct_reduction(const char* fn, const char* collective, const T* send, T* recv, std::size_t count,
                        const std::vector<schedule::segment>& seg, const code_reduction& red, schedule::algorithm algo,
                        int root, bool scatter, cudaStream_t caller) {
    if (transfer_ == nullptr) transfer_ = transfer_priority_stream();
    join(transfer_, caller, 0);
    try {
      direct_reduction_on<T>(fn, collective, send, recv, count, seg, red, algo, root, scatter, transfer_);
    } catch (...) {
      // What was queued still runs on transfer_: the caller's later work waits for it, as it would
      // on one stream.
      NCCLZ_CUDA_TRY_NO_THROW(cudaEventRecord(sync_event(0), transfer_));
      NCCLZ_CUDA_TRY_NO_THROW(cudaStreamWaitEvent(caller, sync_event(0), 0));
      throw;
    }
    join(caller, transfer_, 0);
  }

  /// The body of direct_reduction, on `stream` (transfer_); its events start at 1.
  template <class T>
  void direct_reduction_on(const char* fn, const char* collective, const T* send, T* recv, std::size_t count,
                           const std::vector<schedule::segment>& seg, const code_reduction& red, schedule::algorithm algo,
                           int root, bool scatter, cudaStream_t stream) {
    const int n = nranks_, me = rank_;
    const int parts = part_count(count * sizeof(T));
    const auto sub = [&](int i, int r) {
      const schedule::segment s = schedule::segment_of(seg[r].count, parts, i);
      return schedule::segment{seg[r].first + s.first, s.count};
    };
    std::uint64_t part_elements = 0;
    for (int i = 0; i < parts; ++i)
      for (int r = 0; r < n; ++r) part_elements = std::max(part_elements, sub(i, r).count);
    reserve_bytes(format::max_fixed_chunk_bytes(part_elements, sizeof(T)) + ncclz::kernels::step_table_bytes<typename Codec::quantizer, T>(part_elements),
                  device::workspace_bytes<T>(part_elements),
                  2 * n * parts, 2 * parts);
    reserve_reduce<T>(0, part_elements);  // this rank's codes go straight into the sum: none kept for the whole input
    if (compute_ == nullptr) NCCLZ_CUDA_TRY(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking));
    const auto recv_slot = [&](int i, int r) { return 2 * n * i + r; };
    const auto send_slot = [&](int i, int r) { return 2 * n * i + n + r; };
    // With parts, sizes go beside the payloads (exchange_meta): waiting for part i+1's sizes
    // overlaps part i's transfer instead of following it.
    const auto beside = [&](std::size_t coded_event) { return parts > 1 ? sync_event(coded_event) : cudaEvent_t{}; };
    std::size_t events = 1;  // 0: direct_reduction's joins with the caller's stream

    start_call(stream, 2 * parts);
    reset_report(stream);
    device::detail::range_keys* range = device::detail::reset_compress_state(workspace(), part_elements, stream);
    if constexpr (Codec::quantizer::needs_range) {
      device::detail::launch_range(send, count, range, stream);
      merge_range_across_ranks(range, stream);
    }
    share_block_scales<T>(send, seg, stream);
    join(compute_, stream, events++);

    // Coding stream: every part's encodes for the peers first, each quantizing as it reads `send`
    // (all reads of the peers' segments come before any write of `recv`), then, part by part,
    // this rank's own sub-segment quantized straight into the sum (only that part's reduction
    // writes it), the peers' codes added, and the owner's chunk coded.
    std::vector<std::size_t> coded(static_cast<std::size_t>(parts));
    std::uint64_t coded_input = 0;
    for (int i = 0; i < parts; ++i) {
      for (int k = 1; k < n; ++k) {
        const int p = (me + k) % n;
        const schedule::segment s = sub(i, p);
        device::detail::reset_tile_words(workspace(), s.count, compute_);
        encode_chunk<T>(ncclz::kernels::value_source<T, false>{send + s.first}, s.count, chunk(send_slot(i, p)), meta_slot(me, p, i),
                        red, red.code_bound, compute_, scales_at(s.first));
        coded_input += s.count * sizeof(T);
      }
      coded[i] = events;
      NCCLZ_CUDA_TRY(cudaEventRecord(sync_event(events++), compute_));
    }

    std::uint64_t sent = 0, owner_chunk_bytes = 0, owner_sent = 0;
    for (int i = 0; i < parts; ++i) {
      NCCLZ_CUDA_TRY(cudaStreamWaitEvent(stream, sync_event(coded[i]), 0));
      // The bound is read once, from the first chunk (its slot is gathered into later).
      bound_source_ = i == 0 && n > 1 ? chunk(send_slot(0, (me + 1) % n)) : nullptr;
      exchange_meta(fn, count, stream, i, beside(coded[i]));
      sent += exchange_pairwise(recv_slot(i, 0), i, stream);
      // acc = this rank's codes (quantized while the part moves), then each peer's in rank order
      // (outliers combine in a fixed order).
      const schedule::segment mine = sub(i, me);
      auto* acc_values = static_cast<T*>(reduce_.acc_values);
      if (mine.count > 0) {
        ncclz::kernels::quantize_kernel<typename Codec::quantizer, T>
            <<<grid_for(mine.count), ncclz::kernels::kElementwiseThreads, 0, compute_>>>(
                send + mine.first, mine.count, reduce_.acc_codes, acc_values, range, red.code_bound, red.limit_ranks,
                reduce_.step, scales_at(mine.first));
        NCCLZ_CUDA_TRY(cudaGetLastError());
      }
      join(compute_, stream, events++);
      for (int p = 0; p < n; ++p) {
        if (p == me) continue;
        decode_codes<T>(chunk(recv_slot(i, p)), sent_bytes(p, me, i), mine.count, reduce_.peer_codes, reduce_.peer_values,
                        compute_);
        accumulate<T>(red, reduce_.peer_codes, static_cast<const T*>(reduce_.peer_values), mine.count, mine.first, compute_);
      }
      if (scatter) {
        dequantize<T>(mine.count, recv + (mine.first - seg[me].first), mine.first, compute_);
      } else {
        coarsen_result<T>(red, mine.count, compute_);
        device::detail::reset_tile_words(workspace(), mine.count, compute_);
        encode_chunk<T>(ncclz::kernels::code_source<T>{reduce_.acc_codes, acc_values}, mine.count, chunk(recv_slot(i, me)),
                        meta_slot(me, me, parts + i), red, red.result_code_bound(), compute_, scales_at(mine.first));
      }
      coded[i] = events;
      NCCLZ_CUDA_TRY(cudaEventRecord(sync_event(events++), compute_));
      // The owner's own sub-segment: the codes it just coded, dequantized, are what the peers will
      // decode from its chunk (coding is lossless), so it is not decoded again.
      if (!scatter && (root < 0 || me == root)) dequantize<T>(mine.count, recv + mine.first, mine.first, compute_, &red);
    }

    if (!scatter) {
      for (int i = 0; i < parts; ++i) {
        NCCLZ_CUDA_TRY(cudaStreamWaitEvent(stream, sync_event(coded[i]), 0));
        // The bound comes from a rank's chunk (phase 1); an owner's chunk has the coarser step.
        bound_source_ = n == 1 && i == 0 ? chunk(recv_slot(i, me)) : nullptr;  // one rank: there is no other
        exchange_meta(fn, count, stream, parts + i, beside(coded[i]));
        // Gathered into the part's sent slots: their transfers came first on this stream.
        const exchanged_chunks owners = exchange_chunks(stream, root, recv_slot(i, 0), parts + i, chunk(send_slot(i, 0)));
        owner_chunk_bytes += chunk_size(me, parts + i);
        owner_sent += owners.sent;
        if (root < 0 || me == root) {
          join(compute_, stream, events++);
          for (int r = 0; r < n; ++r) {
            if (r == me) continue;  // dequantized when it was coded
            const schedule::segment s = sub(i, r);
            device::detail::launch_decode<Codec>(owners.at(r), chunk_size(r, parts + i), recv + s.first, s.count, report(),
                                                 compute_);
          }
        }
      }
    }
    join(stream, compute_, events++);
    finish_info(collective, algo, count * sizeof(T), stream);
    info_.parts = parts;
    info_.error_bound *= red.bound_scale;
    if (scatter) {
      info_.bytes_sent += sent;
      set_ratio(coded_input, sent);
    } else {
      info_.bytes_sent += sent + owner_sent;
      set_ratio(seg[me].count * sizeof(T), owner_chunk_bytes);
    }
  }

  // ---- lossless reductions ----------------------------------------------------------------------
  static constexpr bool kLossless = Codec::quantizer::id == quantizer_id::lossless;

  /// The schedule of a lossless reduction: direct, whatever the rank count (Auto never picks the
  /// ring here); a policy that asks for another is refused, since the ring's partial sums would
  /// fix another order than rank order.
  schedule::algorithm lossless_algorithm(const char* fn, schedule::collective c, std::uint64_t bytes) const {
    const schedule::algorithm a = algorithm_for(c, bytes);  // also refuses an aborted communicator
    if (std::is_same_v<Schedule, schedule::Auto> || a == schedule::algorithm::direct) return schedule::algorithm::direct;
    detail::throw_invalid(fn, std::string("a lossless reduction runs the direct schedule only (it reduces in rank order 0..n-1 "
                                          "on each segment's owner); the ") + Schedule::name +
                                  " schedule asks for " + schedule::name(a) + ": use schedule::Auto or schedule::Direct");
  }

  /// Reductions with Quantizer<Lossless>, whose codes are bits and cannot be added. Direct
  /// schedule: each rank compresses, losslessly, the piece of its input every peer owns and sends
  /// it; each owner decodes the pieces to values and reduces them in rank order 0..n-1, in
  /// compute_t<T>, rounded to T once (reduce_values_kernel), so the result has the bits of an
  /// uncompressed reduction in that order. reduce_scatter stops there; allreduce and reduce
  /// compress each owner's reduced segment losslessly and move it to every rank or to the root,
  /// as the other reductions do. Never NCCL's own collective (its order is not rank order), at
  /// any size; one pipeline part.
  template <class T>
  void lossless_reduction(const char* fn, schedule::collective c, const T* send, T* recv, std::size_t count,
                          const std::vector<schedule::segment>& seg, ncclRedOp_t op, int root, bool scatter,
                          cudaStream_t stream) {
    const schedule::algorithm algo = lossless_algorithm(fn, c, count * sizeof(T));
    const int n = nranks_, me = rank_;
    const std::uint64_t largest = largest_segment(seg);
    const schedule::segment mine = seg[me];
    reserve_bytes(max_compressed_bytes<T>(largest), device::workspace_bytes<T>(largest), 2 * n, 2);
    reserve_reduce<T>(largest * n, largest);  // own_values: the peers' pieces of my segment; acc_values: their reduction
    auto* pieces = static_cast<T*>(reduce_.own_values);
    T* reduced = scatter ? recv : static_cast<T*>(reduce_.acc_values);
    start_call(stream, 2);
    reset_report(stream);
    std::uint64_t coded_input = 0;
    for (int k = 1; k < n; ++k) {  // chunk slots: n + p to peer p, p from peer p (all reads of send come first)
      const int p = (me + k) % n;
      device::detail::reset_tile_words(workspace(), seg[p].count, stream);
      device::detail::launch_encode<Codec>(workspace(), send + seg[p].first, seg[p].count, chunk(n + p), meta_slot(me, p),
                                           range_keys(), 0.0, stream);
      coded_input += seg[p].count * sizeof(T);
    }
    if (n > 1) bound_source_ = chunk(n + (me + 1) % n);
    exchange_meta(fn, count, stream);
    const std::uint64_t sent = exchange_pairwise(0, 0, stream);
    for (int p = 0; p < n; ++p) {
      if (p != me) device::detail::launch_decode<Codec>(chunk(p), sent_bytes(p, me), pieces + p * largest, mine.count, report(), stream);
    }
    const auto reduce = [&](auto kernel) {
      kernel<<<grid_for(mine.count), ncclz::kernels::kElementwiseThreads, 0, stream>>>(pieces, largest, n, me, send + mine.first,
                                                                                       mine.count, reduced);
    };
    switch (op) {
      case ncclMin: reduce(ncclz::kernels::reduce_values_kernel<ncclz::kernels::min_op, T>); break;
      case ncclMax: reduce(ncclz::kernels::reduce_values_kernel<ncclz::kernels::max_op, T>); break;
      default: reduce(ncclz::kernels::reduce_values_kernel<ncclz::kernels::sum_op, T>); break;
    }
    NCCLZ_CUDA_TRY(cudaGetLastError());
    std::uint64_t owner_bytes = 0, owner_sent = 0;
    if (!scatter) {
      device::detail::reset_tile_words(workspace(), mine.count, stream);
      device::detail::launch_encode<Codec>(workspace(), reduced, mine.count, chunk(me), meta_slot(me, me, 1), range_keys(), 0.0,
                                           stream);
      bound_source_ = chunk(me);
      exchange_meta(fn, count, stream, 1);
      // Gathered into the slots sent from (n + p): their transfers came first on this stream.
      const exchanged_chunks owners = exchange_chunks(stream, root, 0, 1, chunk(n));
      if (root < 0 || me == root) {
        // Our own segment is `reduced` itself (the chunk codes it losslessly).
        NCCLZ_CUDA_TRY(cudaMemcpyAsync(recv + mine.first, reduced, mine.count * sizeof(T), cudaMemcpyDeviceToDevice, stream));
        for (int r = 0; r < n; ++r) {
          if (r != me) device::detail::launch_decode<Codec>(owners.at(r), chunk_size(r, 1), recv + seg[r].first, seg[r].count, report(), stream);
        }
      }
      owner_bytes = chunk_size(me, 1);
      owner_sent = owners.sent;
    }
    finish_info(schedule::name(c), algo, count * sizeof(T), stream);
    info_.bytes_sent += sent + owner_sent;
    if (scatter) set_ratio(coded_input, sent);
    else set_ratio(mine.count * sizeof(T), owner_bytes);
  }

  /// What a ring reduce-scatter moved: all bytes this rank sent (payloads and sizes), the coded
  /// payloads among them, and the uncompressed bytes those coded.
  struct ring_traffic {
    std::uint64_t sent = 0, coded = 0, coded_input = 0;
  };

  /// Quantizes this rank's input once and runs the ring reduce-scatter of codes: afterwards the
  /// reduction of segment `rank` sits in reduce_.acc_*. Chunk slots: 0 receives, n sends.
  template <class T>
  ring_traffic ring_reduce_codes(const char* fn, const T* send, std::size_t count, const std::vector<schedule::segment>& seg,
                                  const code_reduction& red, cudaStream_t stream) {
    const std::uint64_t largest = largest_segment(seg);
    reserve_bytes(format::max_fixed_chunk_bytes(largest, sizeof(T)) + ncclz::kernels::step_table_bytes<typename Codec::quantizer, T>(largest),
                  device::workspace_bytes<T>(largest), 2 * nranks_, 1);
    reserve_reduce<T>(count, largest);
    start_call(stream);
    reset_report(stream);
    device::detail::range_keys* range = device::detail::reset_compress_state(workspace(), largest, stream);
    if constexpr (Codec::quantizer::needs_range) {
      device::detail::launch_range(send, count, range, stream);
      merge_range_across_ranks(range, stream);
    }
    share_block_scales<T>(send, seg, stream);
    auto* own_values = static_cast<T*>(reduce_.own_values);
    auto* acc_values = static_cast<T*>(reduce_.acc_values);
    // Blockwise steps start afresh in each segment: one launch a segment.
    for (int r = 0; r < (is_blockwise_v<typename Codec::quantizer> ? nranks_ : 1); ++r) {
      const schedule::segment g = is_blockwise_v<typename Codec::quantizer> ? seg[r] : schedule::segment{0, count};
      ncclz::kernels::quantize_kernel<typename Codec::quantizer, T>
          <<<grid_for(g.count), ncclz::kernels::kElementwiseThreads, 0, stream>>>(
              send + g.first, g.count, reduce_.own_codes + g.first, own_values + g.first, range, red.code_bound,
              red.limit_ranks, reduce_.step, scales_at(g.first));
      NCCLZ_CUDA_TRY(cudaGetLastError());
    }
    // Each step codes the partial sum received at the step before; sizes go one step ahead.
    exchange_meta(fn, count, stream);  // equal counts, before any ring step
    ring_traffic traffic;
    std::byte* send_chunk = chunk(nranks_);
    std::byte* recv_chunk = chunk(0);
    for (int step = 0; step < schedule::ring_step_count(nranks_); ++step) {
      const schedule::ring_step st = schedule::ring_reduce_scatter_step(rank_, nranks_, step);
      const schedule::segment out = seg[st.send_segment], in = seg[st.recv_segment];
      if (step > 0) device::detail::reset_tile_words(workspace(), out.count, stream);
      if (step == 0) {
        encode_chunk<T>(ncclz::kernels::code_source<T>{reduce_.own_codes + out.first, own_values + out.first}, out.count,
                        send_chunk, reduce_.sizes, red, red.code_bound, stream, scales_at(out.first));
      } else {
        encode_chunk<T>(ncclz::kernels::code_source<T>{reduce_.acc_codes, acc_values}, out.count, send_chunk, reduce_.sizes,
                        red, red.code_bound, stream, scales_at(out.first));
      }
      // The receiver must post the payload's exact size: sizes first, then the payloads.
      mark("codec", stream);
      enqueue(ncclGroupStart(), "ncclGroupStart");
      enqueue(ncclSend(reduce_.sizes, 1, ncclUint64, st.send_peer, comm_, stream), "ncclSend");
      enqueue(ncclRecv(reduce_.sizes + 1, 1, ncclUint64, st.recv_peer, comm_, stream), "ncclRecv");
      enqueue(ncclGroupEnd(), "ncclGroupEnd");
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(h_meta_, reduce_.sizes, 2 * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream));
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(h_meta_ + 2, send_chunk + offsetof(format::chunk_header, error_bound), sizeof(double),
                                     cudaMemcpyDeviceToHost, stream));
      timed_wait(fn, stream, stream, "rank " + std::to_string(st.recv_peer) + " (ring step " + std::to_string(step) + ")");
      const std::uint64_t send_bytes = h_meta_[0], recv_bytes = h_meta_[1];
      std::memcpy(&error_bound_, h_meta_ + 2, sizeof(double));  // this rank's code bound
      enqueue(ncclGroupStart(), "ncclGroupStart");
      enqueue(ncclSend(send_chunk, send_bytes, ncclUint8, st.send_peer, comm_, stream), "ncclSend");
      enqueue(ncclRecv(recv_chunk, recv_bytes, ncclUint8, st.recv_peer, comm_, stream), "ncclRecv");
      enqueue(ncclGroupEnd(), "ncclGroupEnd");
      mark("transfer", stream);
      traffic.sent += send_bytes + sizeof(std::uint64_t);
      traffic.coded += send_bytes;
      traffic.coded_input += out.count * sizeof(T);
      decode_codes<T>(recv_chunk, recv_bytes, in.count, reduce_.acc_codes, acc_values, stream);  // the partial sum
      accumulate<T>(red, reduce_.own_codes + in.first, own_values + in.first, in.count, in.first, stream);
    }
    return traffic;
  }

  // ---- FixedRate: scale blocks shared by all ranks ---------------------------------------------
  /// The maxima of the input's scale blocks (merged across ranks) and their steps, for a blockwise
  /// quantizer's reductions. Blocks start afresh at each segment's first element, so every chunk
  /// of a segment or of a pipeline part (tile-aligned within its segment) holds whole blocks, also
  /// for a reduce_scatter whose recvcount is not a multiple of 1024.
  struct shared_scales {
    double* base = nullptr;
    std::size_t capacity = 0;   ///< doubles at base
    double* max = nullptr;      ///< blocks + 1: each block's largest finite |x| over all ranks, then the largest of all
    double* steps = nullptr;    ///< blocks: their steps, for accumulate_kernel and dequantize_kernel
    std::uint64_t blocks = 0;
    std::vector<schedule::segment> seg;      ///< the segments of the call
    std::vector<std::uint64_t> first_block;  ///< index of each segment's first block
    shared_scales() = default;
    shared_scales(const shared_scales&) = delete;
    shared_scales& operator=(const shared_scales&) = delete;
    ~shared_scales() {
      if (base) NCCLZ_CUDA_TRY_NO_THROW(cudaFree(base));
    }
  };

  /// Blockwise quantizers only: the maxima of `send`'s scale blocks, segment by segment, one
  /// ncclMax allreduce of them (8 B per 1024 values), and their steps. Every rank then quantizes
  /// with the same steps, so codes of different ranks add exactly.
  template <class T>
  void share_block_scales(const T* send, const std::vector<schedule::segment>& seg, cudaStream_t stream) {
    using Q = typename Codec::quantizer;
    if constexpr (is_blockwise_v<Q>) {
      scales_.seg = seg;
      scales_.first_block.clear();
      std::uint64_t blocks = 0;
      for (const schedule::segment& g : seg) {
        scales_.first_block.push_back(blocks);
        blocks += format::scale_count(g.count);
      }
      const std::size_t need = 2 * blocks + 1;
      if (need > scales_.capacity) {
        if (scales_.base) NCCLZ_CUDA_TRY(cudaFree(scales_.base));  // waits for work still using it
        scales_.base = nullptr;
        scales_.capacity = 0;
        NCCLZ_CUDA_TRY(cudaMalloc(&scales_.base, need * sizeof(double)));
        scales_.capacity = need;
      }
      scales_.blocks = blocks;
      scales_.max = scales_.base;
      scales_.steps = scales_.base + blocks + 1;
      NCCLZ_CUDA_TRY(cudaMemsetAsync(scales_.max + blocks, 0, sizeof(double), stream));
      constexpr std::uint64_t kWarps = ncclz::kernels::kBlockMaxThreads / 32;
      for (std::size_t r = 0; r < seg.size(); ++r) {
        const std::uint64_t b = format::scale_count(seg[r].count);
        if (b == 0) continue;
        const auto grid = static_cast<unsigned>(std::min<std::uint64_t>((b + kWarps - 1) / kWarps, std::uint64_t(device::detail::sm_count()) * 8));
        ncclz::kernels::block_max_kernel<T><<<grid, ncclz::kernels::kBlockMaxThreads, 0, stream>>>(
            send + seg[r].first, seg[r].count, scales_.max + scales_.first_block[r], scales_.max + blocks);
        NCCLZ_CUDA_TRY(cudaGetLastError());
      }
      enqueue(ncclAllReduce(scales_.max, scales_.max, blocks + 1, ncclFloat64, ncclMax, comm_, stream), "ncclAllReduce");
      range_bytes_sent_ += (blocks + 1) * sizeof(double);
      if (blocks > 0) {
        ncclz::kernels::block_steps_kernel<Q, T><<<grid_for(blocks), ncclz::kernels::kBlockMaxThreads, 0, stream>>>(
            scales_.max, blocks, scales_.steps);
        NCCLZ_CUDA_TRY(cudaGetLastError());
      }
    }
  }

  /// Index of the scale block that starts at element `first` of the call's input (the first
  /// element of a segment or of a pipeline part); the end of the table if it is in none.
  std::uint64_t block_at(std::uint64_t first) const {
    for (std::size_t r = 0; r < scales_.seg.size(); ++r) {
      const schedule::segment& g = scales_.seg[r];
      if (first < g.first || first >= g.end()) continue;
      if ((first - g.first) % format::kScaleBlockElements != 0) {
        throw error("ncclz::Communicator: internal error: a chunk starts inside a FixedRate scale block");
      }
      return scales_.first_block[r] + (first - g.first) / format::kScaleBlockElements;
    }
    return scales_.blocks;
  }

  /// What the encoder of the chunk starting at element `first` reads the block maxima from
  /// (nothing unless blockwise).
  ncclz::kernels::block_scales scales_at(std::uint64_t first) const {
    if constexpr (is_blockwise_v<typename Codec::quantizer>) return {scales_.max + block_at(first), scales_.max + scales_.blocks};
    else return {};
  }

  /// Steps for the element-wise kernels working on elements from `first` on: one step, or one per
  /// scale block (see step_shift).
  const double* steps_at(std::uint64_t first) const {
    if constexpr (is_blockwise_v<typename Codec::quantizer>) return scales_.steps + block_at(first);
    else return reduce_.step;
  }
  static constexpr unsigned step_shift() { return is_blockwise_v<typename Codec::quantizer> ? 10u : 63u; }
  static_assert(format::kScaleBlockElements == 1u << 10, "step_shift() is log2 of the scale block");

  ncclComm_t comm_;
  communicator_config config_;
  int nranks_ = 0, rank_ = 0;
  std::byte* device_ = nullptr;
  std::size_t held_bytes_ = 0, chunk_capacity_ = 0, workspace_capacity_ = 0;
  int slots_ = 0;
  int device_meta_sets_ = 1, host_meta_sets_ = 0;
  std::uint64_t* h_meta_ = nullptr;  // pinned: host_meta_sets_ meta sets, then the error bound
  cudaStream_t compute_ = nullptr;   // the pipeline's coding stream beside the caller's
  ncclComm_t size_comm_ = nullptr;   // split from comm_ (Overlap<N>, N > 1): size exchanges beside payloads
  cudaStream_t size_stream_ = nullptr;  // its size exchanges
  cudaStream_t transfer_ = nullptr;     // the direct reductions' payloads (priority_transfers)
  std::vector<cudaEvent_t> sync_events_;
  std::uint64_t range_bytes_sent_ = 0;
  const std::byte* bound_source_ = nullptr;  // a chunk this call coded: its header holds the bound applied
  double error_bound_ = 0, size_wait_ms_ = 0;
  int size_waits_ = 0;
  bool aborted_ = false;  // a failed peer made wait() abort the communicator
  struct phase_mark {
    cudaEvent_t event;
    const char* phase;  // the phase that ends at this event
  };
  std::vector<phase_mark> marks_;
  std::map<std::uint64_t, tuning_state> tuning_;  // per collective, element size, size class
  tuning_state* tuned_ = nullptr;                 // the last call's
  float* d_tuning_ = nullptr;
  std::size_t marks_used_ = 0;
  call_info info_;
  reduce_buffers reduce_;
  shared_scales scales_;
};

}  // namespace ncclz
