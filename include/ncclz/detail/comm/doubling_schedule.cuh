// The recursive doubling allreduce, run over the transport (schedule/recursive_doubling.hpp has
// its partners): each rank quantizes its input once into the running sum of codes; at every
// exchange (the fold, each step, the unfold) a rank codes its whole sum, sends it to its partner
// and adds the codes it receives, exactly. The sizes of a partial sum are known only once it is
// coded, so each exchange sends its size ahead of the payload (one host wait), as the ring does.
//
// Bound: each rank quantizes with bound / n (sums; min and max keep the bound) and codes are only
// added, never requantized, so the result is within the bound however many exchanges it took;
// every rank that ran the steps holds the same codes, and a rank that folded out decodes them
// from its partner's chunk (coding is lossless): all ranks hold identical results.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "ncclz/detail/comm/code_reducer.cuh"
#include "ncclz/detail/comm/context.cuh"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/schedule/schedule.hpp"

namespace ncclz::detail::comm {

template <class Codec>
class doubling_schedule {
  using Q = typename Codec::quantizer;

 public:
  doubling_schedule(context<Codec>& ctx, code_reducer<Codec>& reducer) : ctx_(ctx), red_(reducer) {}

  /// allreduce of `count` values on two ranks or more, with `red` made for it (its bound split n
  /// ways: no owner coarsens a sum here). Chunk slots: 0 receives, 1 sends.
  template <class T>
  void allreduce(const char* fn, const T* send, T* recv, std::size_t count, const code_reduction& red, cudaStream_t stream) {
    namespace sch = ncclz::schedule;
    workspace& ws = ctx_.ws;
    reduce_buffers& buf = red_.buffers;
    const int n = ctx_.nranks(), me = ctx_.rank();
    ws.reserve(format::max_fixed_chunk_bytes(count, sizeof(T)) + ncclz::device::detail::step_table_bytes<Q, T>(count),
               device::workspace_bytes<T>(count), 2, 1);
    buf.template reserve<T>(0, count);  // the running sum and one received sum
    ctx_.start_call(stream);
    ctx_.reset_report(stream);
    device::detail::range_keys* range = device::detail::reset_compress_state(ws.codec(), count, stream);
    if constexpr (Q::needs_range) device::detail::launch_range(send, count, range, stream);
    ctx_.exchange_header(Q::needs_range ? range : nullptr, stream);
    red_.share_block_scales(fn, send, {sch::segment{0, count}}, stream);
    red_.quantize(send, count, buf.acc_codes, static_cast<T*>(buf.acc_values), range, red, 0, stream);
    moved_ = {};

    const int fold = sch::doubling_fold_partner(me, n);
    if (sch::doubling_role_of(me, n) == sch::doubling_role::folds_out) {
      swap<T>(fn, count, red, fold, -1, false, "fold", stream);
      const std::uint64_t bytes = swap<T>(fn, count, red, -1, fold, false, "unfold", stream);
      ctx_.decode(ws.chunk(0), bytes, recv, count, stream);  // the codes the partner holds, as values
    } else {
      if (fold >= 0) swap<T>(fn, count, red, -1, fold, true, "fold", stream);
      for (int step = 0; step < sch::doubling_step_count(n); ++step) {
        const int partner = sch::doubling_partner(me, n, step);
        swap<T>(fn, count, red, partner, partner, true, "step " + std::to_string(step), stream);
      }
      if (fold >= 0) swap<T>(fn, count, red, fold, -1, false, "unfold", stream);
      red_.dequantize(count, recv, 0, stream);
    }
    ctx_.finish_info("allreduce", sch::algorithm::recursive_doubling, count * sizeof(T), stream);
    ctx_.info.error_bound *= red.bound_scale;
    ctx_.info.bytes_sent += moved_.sent;
    ctx_.set_ratio(count * sizeof(T), moved_.first_chunk);
  }

 private:
  struct traffic {
    std::uint64_t sent = 0;         ///< payloads and sizes this rank sent
    std::uint64_t first_chunk = 0;  ///< the first chunk it coded (of the call's ratio)
    bool coded = false;
  };

  /// One exchange: codes the running sum and sends it to rank `to` (none if < 0); receives a sum
  /// from rank `from` (none if < 0) into chunk slot 0 and, if `add`, adds it to the running sum.
  /// Sizes first, then the payloads. Returns the bytes received.
  template <class T>
  std::uint64_t swap(const char* fn, std::size_t count, const code_reduction& red, int to, int from, bool add, const std::string& what,
                     cudaStream_t stream) {
    workspace& ws = ctx_.ws;
    reduce_buffers& buf = red_.buffers;
    auto* acc_values = static_cast<T*>(buf.acc_values);
    std::byte* send_chunk = ws.chunk(1);
    std::byte* recv_chunk = ws.chunk(0);
    if (to >= 0) {
      if (moved_.coded) device::detail::reset_tile_words(ws.codec(), count, stream);
      red_.template encode_chunk<T>(ncclz::device::detail::code_source<T>{buf.acc_codes, acc_values}, count, send_chunk, buf.sizes, red,
                                    red.code_bound, 0, stream);
    }
    const auto bytes = ctx_.swap_chunks(fn, to, from, send_chunk, recv_chunk, buf.sizes, "recursive doubling " + what, stream);
    if (to >= 0) {
      if (!moved_.coded) moved_.first_chunk = bytes.sent;
      moved_.coded = true;
      moved_.sent += bytes.sent + sizeof(std::uint64_t);
    }
    if (from >= 0 && add) {
      red_.template decode_codes<T>(recv_chunk, bytes.received, count, buf.peer_codes, buf.peer_values, stream);
      red_.accumulate(red, buf.peer_codes, static_cast<const T*>(buf.peer_values), count, 0, stream);
    }
    return bytes.received;
  }

  context<Codec>& ctx_;
  code_reducer<Codec>& red_;
  traffic moved_;
};

}  // namespace ncclz::detail::comm
