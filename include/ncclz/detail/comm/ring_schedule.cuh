// The ring schedule of the reductions, run over the transport (schedule/ring.hpp has its steps):
// each rank quantizes its input once, then n - 1 steps each code the partial sum received at the
// step before and send it on, the next step's size going ahead of the payload. The owner of each
// segment then holds its reduction: reduce_scatter dequantizes it; allreduce and reduce code it
// once and move the chunks unchanged to every rank or to the root.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ncclz/detail/comm/code_reducer.cuh"
#include "ncclz/detail/comm/context.cuh"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/schedule/schedule.hpp"

namespace ncclz::detail::comm {

template <class Codec>
class ring_schedule {
 public:
  ring_schedule(context<Codec>& ctx, code_reducer<Codec>& reducer) : ctx_(ctx), red_(reducer) {}

  /// allreduce (root < 0), reduce (to root) and reduce_scatter (scatter) on the ring.
  template <class T>
  void reduction(const char* fn, const char* collective, const T* send, T* recv, std::size_t count,
                 const std::vector<schedule::segment>& seg, const code_reduction& red, int root, bool scatter,
                 cudaStream_t stream) {
    constexpr schedule::algorithm algo = schedule::algorithm::ring;
    const int me = ctx_.rank();
    const traffic ring = reduce_codes<T>(fn, send, count, seg, red, stream);
    const schedule::segment mine = seg[me];
    if (scatter) {
      red_.dequantize(mine.count, recv, mine.first, stream);
      ctx_.finish_info(collective, algo, count * sizeof(T), stream);
      ctx_.info.error_bound *= red.bound_scale;
      ctx_.info.bytes_sent += ring.sent;
      ctx_.set_ratio(ring.coded_input, ring.coded);
      return;
    }
    workspace& ws = ctx_.ws;
    red_.template coarsen_result<T>(red, mine.count, stream);
    device::detail::reset_tile_words(ws.codec(), mine.count, stream);
    red_.template encode_chunk<T>(ncclz::device::detail::code_source<T>{red_.buffers.acc_codes, static_cast<const T*>(red_.buffers.acc_values)},
                                  mine.count, ws.chunk(me), ws.meta_slot(me, me), red, red.result_code_bound(), mine.first, stream);
    ctx_.exchange_meta(fn, count, stream);  // error_bound stays the ring steps' (the ranks' code bound)
    const exchanged_chunks got = ctx_.exchange_chunks(stream, root);  // no slot free to gather into
    if (root < 0 || me == root) {
      red_.dequantize(mine.count, recv + mine.first, mine.first, stream, &red);  // the codes of our own chunk
      for (int r = 0; r < ctx_.nranks(); ++r) {
        if (r != me) ctx_.decode(got.at(r), ws.chunk_size(r), recv + seg[r].first, seg[r].count, stream);
      }
    }
    ctx_.finish_info(collective, algo, count * sizeof(T), stream);
    ctx_.info.error_bound *= red.bound_scale;
    ctx_.info.bytes_sent += ring.sent + got.sent;
    ctx_.set_ratio(mine.count * sizeof(T), ws.chunk_size(me));
  }

 private:
  /// What a ring reduce-scatter moved: all bytes this rank sent (payloads and sizes), the coded
  /// payloads among them, and the uncompressed bytes those coded.
  struct traffic {
    std::uint64_t sent = 0, coded = 0, coded_input = 0;
  };

  /// Quantizes this rank's input once and runs the ring reduce-scatter of codes: afterwards the
  /// reduction of segment `rank` sits in the reducer's acc buffers. Chunk slots: 0 receives, n
  /// sends.
  template <class T>
  traffic reduce_codes(const char* fn, const T* send, std::size_t count, const std::vector<schedule::segment>& seg,
                       const code_reduction& red, cudaStream_t stream) {
    using Q = typename Codec::quantizer;
    workspace& ws = ctx_.ws;
    reduce_buffers& buf = red_.buffers;
    const int n = ctx_.nranks(), me = ctx_.rank();
    const std::uint64_t largest = largest_segment(seg);
    ws.reserve(format::max_fixed_chunk_bytes(largest, sizeof(T)) + ncclz::device::detail::step_table_bytes<Q, T>(largest),
               device::workspace_bytes<T>(largest), 2 * n, 1);
    buf.template reserve<T>(count, largest);
    ctx_.start_call(stream);
    ctx_.reset_report(stream);
    device::detail::range_keys* range = device::detail::reset_compress_state(ws.codec(), largest, stream);
    if constexpr (Q::needs_range) device::detail::launch_range(send, count, range, stream);
    ctx_.exchange_header(Q::needs_range ? range : nullptr, stream);
    red_.share_block_scales(fn, send, seg, stream);
    auto* own_values = static_cast<T*>(buf.own_values);
    auto* acc_values = static_cast<T*>(buf.acc_values);
    // Blockwise steps start afresh in each segment: one launch a segment.
    for (int r = 0; r < (is_blockwise_v<Q> ? n : 1); ++r) {
      const schedule::segment g = is_blockwise_v<Q> ? seg[r] : schedule::segment{0, count};
      red_.quantize(send + g.first, g.count, buf.own_codes + g.first, own_values + g.first, range, red, g.first, stream);
    }
    ctx_.exchange_meta(fn, count, stream);  // equal counts, before any ring step
    traffic moved;
    std::byte* send_chunk = ws.chunk(n);
    std::byte* recv_chunk = ws.chunk(0);
    for (int step = 0; step < schedule::ring_step_count(n); ++step) {
      const schedule::ring_step st = schedule::ring_reduce_scatter_step(me, n, step);
      const schedule::segment out = seg[st.send_segment], in = seg[st.recv_segment];
      if (step > 0) device::detail::reset_tile_words(ws.codec(), out.count, stream);
      if (step == 0) {
        red_.template encode_chunk<T>(ncclz::device::detail::code_source<T>{buf.own_codes + out.first, own_values + out.first}, out.count,
                                      send_chunk, buf.sizes, red, red.code_bound, out.first, stream);
      } else {
        red_.template encode_chunk<T>(ncclz::device::detail::code_source<T>{buf.acc_codes, acc_values}, out.count, send_chunk, buf.sizes,
                                      red, red.code_bound, out.first, stream);
      }
      const auto bytes = ctx_.swap_chunks(fn, st.send_peer, st.recv_peer, send_chunk, recv_chunk, buf.sizes,
                                          "ring step " + std::to_string(step), stream);
      moved.sent += bytes.sent + sizeof(std::uint64_t);
      moved.coded += bytes.sent;
      moved.coded_input += out.count * sizeof(T);
      red_.template decode_codes<T>(recv_chunk, bytes.received, in.count, buf.acc_codes, acc_values, stream);  // the partial sum
      red_.accumulate(red, buf.own_codes + in.first, own_values + in.first, in.count, in.first, stream);
    }
    return moved;
  }

  context<Codec>& ctx_;
  code_reducer<Codec>& red_;
};

}  // namespace ncclz::detail::comm
