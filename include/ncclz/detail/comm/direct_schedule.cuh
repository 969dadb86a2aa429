// The direct (all-pairs) schedule, run over the transport (schedule/direct.hpp says what it is):
// allgather and alltoall, each chunk compressed once and moved unchanged, and the reductions,
// cut into pipeline parts so that coding one part overlaps moving another.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ncclz/detail/comm/code_reducer.cuh"
#include "ncclz/detail/comm/context.cuh"
#include "ncclz/detail/cuda_resources.hpp"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/pipeline.hpp"
#include "ncclz/schedule/schedule.hpp"

namespace ncclz::detail::comm {

template <class Codec, int MaxParts>
class direct_schedule {
 public:
  direct_schedule(context<Codec>& ctx, code_reducer<Codec>& reducer) : ctx_(ctx), red_(reducer) {}

  /// Every rank's chunk, coded once, to every rank; each decodes all of them.
  template <class T>
  void allgather(const T* send, T* recv, std::size_t count, double bound, cudaStream_t stream) {
    const int n = ctx_.nranks(), me = ctx_.rank();
    ctx_.template reserve<T>(count, n);
    ctx_.start_call(stream);
    ctx_.compress_into(send, count, me, me, bound, stream);
    ctx_.exchange_meta("Communicator::allgather", count, stream);
    const exchanged_chunks got = ctx_.exchange_chunks(stream, /*root=*/-1);  // no slot free to gather into
    ctx_.reset_report(stream);
    for (int r = 0; r < n; ++r) {
      ctx_.decode(got.at(r), ctx_.ws.chunk_size(r), recv + static_cast<std::size_t>(r) * count, count, stream);
    }
    ctx_.finish_info("allgather", schedule::algorithm::direct, count * sizeof(T), stream);
    ctx_.info.bytes_sent += got.sent;
    ctx_.set_ratio(count * sizeof(T), ctx_.ws.chunk_size(me));
  }

  /// Block p of `send`, coded once, to rank p; this rank's own block is copied exactly.
  template <class T>
  void alltoall(const T* send, T* recv, std::size_t count, double bound, cudaStream_t stream) {
    const int n = ctx_.nranks(), me = ctx_.rank();
    const std::size_t total = count * static_cast<std::size_t>(n);
    ctx_.template reserve<T>(count, 2 * n);  // chunk(p): received from p; chunk(n + p): sent to p
    ctx_.start_call(stream);
    device::detail::range_keys* range = device::detail::reset_compress_state(ctx_.ws.codec(), count, stream);
    if constexpr (Codec::quantizer::needs_range) device::detail::launch_range(send, total, range, stream);
    ctx_.exchange_header(Codec::quantizer::needs_range ? range : nullptr, stream);
    for (int i = 1; i < n; ++i) {
      const int p = (me + i) % n;
      if (i > 1) device::detail::reset_tile_words(ctx_.ws.codec(), count, stream);
      ctx_.encode(send + p * count, count, ctx_.ws.chunk(n + p), ctx_.ws.meta_slot(me, p), range, bound, stream);
    }
    if (n > 1) ctx_.bound_source = ctx_.ws.chunk(n + (me + 1) % n);
    ctx_.exchange_meta("Communicator::alltoall", count, stream);
    const std::uint64_t coded = ctx_.exchange_pairwise(0, 0, stream);
    if (count) {
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(recv + me * count, send + me * count, count * sizeof(T), cudaMemcpyDeviceToDevice, stream));
    }
    ctx_.reset_report(stream);
    for (int p = 0; p < n; ++p) {
      if (p != me) {
        ctx_.decode(ctx_.ws.chunk(p), ctx_.ws.sent_bytes(p, me), recv + p * count, count, stream);
      }
    }
    ctx_.finish_info("alltoall", schedule::algorithm::direct, total * sizeof(T), stream);
    ctx_.info.bytes_sent += coded;
    ctx_.set_ratio(count * sizeof(T) * static_cast<std::uint64_t>(n - 1), coded);
  }

  /// allreduce (root < 0), reduce (to root) and reduce_scatter (scatter); `algo` is what
  /// call_info reports (direct; the ring's on one rank). Each segment is cut
  /// into `parts` sub-segments; part i is: quantize and code the peers' sub-segments (coding
  /// stream), one size exchange and one group of sends/receives (transfer stream), decode and
  /// reduce (coding stream), then, but for reduce_scatter, the owner codes its reduced
  /// sub-segment and a second size exchange and group move those chunks unchanged. Payloads stay
  /// in order on the transfer stream (of the greatest priority, config.priority_transfers; joined
  /// to the caller's at both ends), and coding runs beside it: while part i moves, part i+1 is
  /// coded and part i-1 reduced or decoded. With parts, the size exchanges go over the split size
  /// communicator on their own stream, waiting only for the chunks they size: the host learns
  /// part i+1's sizes and queues its sends while part i's payloads still move.
  template <class T>
  void reduction(const char* fn, const char* collective, const T* send, T* recv, std::size_t count,
                 const std::vector<schedule::segment>& seg, const code_reduction& red, schedule::algorithm algo, int root,
                 bool scatter, cudaStream_t caller) {
    const cudaStream_t transfer = ctx_.transfer_stream(transfer_);
    join(transfer, caller, 0);
    try {
      reduction_on<T>(fn, collective, send, recv, count, seg, red, algo, root, scatter, transfer);
    } catch (...) {
      // What was queued still runs on the transfer stream: the caller's later work waits for it,
      // as it would on one stream.
      NCCLZ_CUDA_TRY_NO_THROW(cudaEventRecord(sync_event(0), transfer));
      NCCLZ_CUDA_TRY_NO_THROW(cudaStreamWaitEvent(caller, sync_event(0), 0));
      throw;
    }
    join(caller, transfer, 0);
  }

 private:
  cudaEvent_t sync_event(std::size_t i) {
    while (sync_events_.size() <= i) sync_events_.emplace_back(/*timing=*/false);
    return sync_events_[i].get();
  }

  /// `waiter` waits for the work enqueued on `signaler` so far.
  void join(cudaStream_t waiter, cudaStream_t signaler, std::size_t event_index) {
    const cudaEvent_t e = sync_event(event_index);
    NCCLZ_CUDA_TRY(cudaEventRecord(e, signaler));
    NCCLZ_CUDA_TRY(cudaStreamWaitEvent(waiter, e, 0));
  }

  /// The body of reduction, on `stream` (the transfer stream); its events start at 1. Chunk slots
  /// of part i: [2ni, 2ni + n) received (then the owners' chunks), [2ni + n, 2n(i+1)) sent; meta
  /// sets: i for the first exchange, parts + i for the second.
  template <class T>
  void reduction_on(const char* fn, const char* collective, const T* send, T* recv, std::size_t count,
                    const std::vector<schedule::segment>& seg, const code_reduction& red, schedule::algorithm algo, int root,
                    bool scatter, cudaStream_t stream) {
    workspace& ws = ctx_.ws;
    const int n = ctx_.nranks(), me = ctx_.rank();
    // One rank's reduce_scatter is its allreduce: run as one, the owner's chunk is coded and
    // carries the bound the call reports (the scatter path codes no chunk when there is no peer).
    scatter = scatter && n > 1;
    const int parts = pipeline_parts(count * sizeof(T), ctx_.config.pipeline_part_bytes, MaxParts);
    const auto sub = [&](int i, int r) {
      const schedule::segment s = schedule::segment_of(seg[r].count, parts, i);
      return schedule::segment{seg[r].first + s.first, s.count};
    };
    std::uint64_t part_elements = 0;
    for (int i = 0; i < parts; ++i)
      for (int r = 0; r < n; ++r) part_elements = std::max(part_elements, sub(i, r).count);
    ws.reserve(format::max_fixed_chunk_bytes(part_elements, sizeof(T)) +
                   ncclz::device::detail::step_table_bytes<typename Codec::quantizer, T>(part_elements),
               device::workspace_bytes<T>(part_elements), 2 * n * parts, 2 * parts);
    red_.buffers.template reserve<T>(0, part_elements);  // this rank's codes go straight into the sum: none kept
    const cudaStream_t compute = compute_.get();
    const auto recv_slot = [&](int i, int r) { return 2 * n * i + r; };
    const auto send_slot = [&](int i, int r) { return 2 * n * i + n + r; };
    // With parts, sizes go beside the payloads (exchange_meta): waiting for part i+1's sizes
    // overlaps part i's transfer instead of following it.
    const auto beside = [&](std::size_t coded_event) { return parts > 1 ? sync_event(coded_event) : cudaEvent_t{}; };
    std::size_t events = 1;  // 0: reduction's joins with the caller's stream

    ctx_.start_call(stream, 2 * parts);
    ctx_.reset_report(stream);
    device::detail::range_keys* range = device::detail::reset_compress_state(ws.codec(), part_elements, stream);
    if constexpr (Codec::quantizer::needs_range) device::detail::launch_range(send, count, range, stream);
    ctx_.fingerprint.set(call_field::parts, static_cast<std::uint64_t>(parts));
    ctx_.exchange_header(Codec::quantizer::needs_range ? range : nullptr, stream);
    if (parts > 1) {
      ctx_.settle_header(fn);  // sizes go over the split communicator: agree before anything else
      ctx_.tp.split_size_comm();  // the first call in parts, on every rank at once
    }
    red_.share_block_scales(fn, send, seg, stream);
    join(compute, stream, events++);

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
        device::detail::reset_tile_words(ws.codec(), s.count, compute);
        red_.template encode_chunk<T>(ncclz::device::detail::value_source<T, false>{send + s.first}, s.count, ws.chunk(send_slot(i, p)),
                                      ws.meta_slot(me, p, i), red, red.code_bound, s.first, compute);
        coded_input += s.count * sizeof(T);
      }
      coded[i] = events;
      NCCLZ_CUDA_TRY(cudaEventRecord(sync_event(events++), compute));
    }

    std::uint64_t sent = 0, owner_chunk_bytes = 0, owner_sent = 0;
    auto* acc_values = static_cast<T*>(red_.buffers.acc_values);
    for (int i = 0; i < parts; ++i) {
      NCCLZ_CUDA_TRY(cudaStreamWaitEvent(stream, sync_event(coded[i]), 0));
      // The bound is read once, from the first chunk (its slot is gathered into later).
      ctx_.bound_source = i == 0 && n > 1 ? ws.chunk(send_slot(0, (me + 1) % n)) : nullptr;
      ctx_.exchange_meta(fn, count, stream, i, beside(coded[i]));
      sent += ctx_.exchange_pairwise(recv_slot(i, 0), i, stream);
      // acc = this rank's codes (quantized while the part moves), then each peer's in rank order
      // (outliers combine in a fixed order).
      const schedule::segment mine = sub(i, me);
      if (mine.count > 0) {
        red_.quantize(send + mine.first, mine.count, red_.buffers.acc_codes, acc_values, range, red, mine.first, compute);
      }
      join(compute, stream, events++);
      for (int p = 0; p < n; ++p) {
        if (p == me) continue;
        red_.template decode_codes<T>(ws.chunk(recv_slot(i, p)), ws.sent_bytes(p, me, i), mine.count, red_.buffers.peer_codes,
                                      red_.buffers.peer_values, compute);
        red_.accumulate(red, red_.buffers.peer_codes, static_cast<const T*>(red_.buffers.peer_values), mine.count, mine.first,
                        compute);
      }
      if (scatter) {
        red_.dequantize(mine.count, recv + (mine.first - seg[me].first), mine.first, compute);
      } else {
        red_.template coarsen_result<T>(red, mine.count, compute);
        device::detail::reset_tile_words(ws.codec(), mine.count, compute);
        red_.template encode_chunk<T>(ncclz::device::detail::code_source<T>{red_.buffers.acc_codes, acc_values}, mine.count,
                                      ws.chunk(recv_slot(i, me)), ws.meta_slot(me, me, parts + i), red, red.result_code_bound(),
                                      mine.first, compute);
      }
      coded[i] = events;
      NCCLZ_CUDA_TRY(cudaEventRecord(sync_event(events++), compute));
      // The owner's own sub-segment: the codes it just coded, dequantized, are what the peers will
      // decode from its chunk (coding is lossless), so it is not decoded again.
      if (!scatter && (root < 0 || me == root)) red_.dequantize(mine.count, recv + mine.first, mine.first, compute, &red);
    }

    if (!scatter) {
      for (int i = 0; i < parts; ++i) {
        NCCLZ_CUDA_TRY(cudaStreamWaitEvent(stream, sync_event(coded[i]), 0));
        // The bound comes from a rank's chunk (phase 1); an owner's chunk has the coarser step.
        ctx_.bound_source = n == 1 && i == 0 ? ws.chunk(recv_slot(i, me)) : nullptr;  // one rank: there is no other
        ctx_.exchange_meta(fn, count, stream, parts + i, beside(coded[i]));
        // Gathered into the part's sent slots: their transfers came first on this stream.
        const exchanged_chunks owners = ctx_.exchange_chunks(stream, root, recv_slot(i, 0), parts + i, ws.chunk(send_slot(i, 0)));
        owner_chunk_bytes += ws.chunk_size(me, parts + i);
        owner_sent += owners.sent;
        if (root < 0 || me == root) {
          join(compute, stream, events++);
          for (int r = 0; r < n; ++r) {
            if (r == me) continue;  // dequantized when it was coded
            const schedule::segment s = sub(i, r);
            ctx_.decode(owners.at(r), ws.chunk_size(r, parts + i), recv + s.first, s.count, compute);
          }
        }
      }
    }
    join(stream, compute, events++);
    ctx_.finish_info(collective, algo, count * sizeof(T), stream);
    ctx_.info.parts = parts;
    ctx_.info.error_bound *= red.bound_scale;
    if (scatter) {
      ctx_.info.bytes_sent += sent;
      ctx_.set_ratio(coded_input, sent);
    } else {
      ctx_.info.bytes_sent += sent + owner_sent;
      ctx_.set_ratio(seg[me].count * sizeof(T), owner_chunk_bytes);
    }
  }

  context<Codec>& ctx_;
  code_reducer<Codec>& red_;
  stream_handle compute_;   // the coding stream beside the transfers
  stream_handle transfer_;  // payloads and size exchanges (config.priority_transfers)
  std::vector<event_handle> sync_events_;
};

}  // namespace ncclz::detail::comm
