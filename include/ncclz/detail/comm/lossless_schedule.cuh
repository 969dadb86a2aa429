// Reductions with Quantizer<Lossless>, whose codes are bits and cannot be added: direct schedule
// only. Each rank compresses, losslessly, the piece of its input every peer owns and sends it;
// each owner decodes the pieces to values and reduces them in rank order 0..n-1, in compute_t<T>,
// rounded to T once (reduce_values_kernel), so the result has the bits of an uncompressed
// reduction in that order. reduce_scatter stops there; allreduce and reduce compress each owner's
// reduced segment losslessly and move it to every rank or to the root, as the other reductions
// do. Never NCCL's own collective (its order is not rank order), at any size; one pipeline part.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ncclz/detail/comm/code_reducer.cuh"
#include "ncclz/detail/comm/context.cuh"
#include "ncclz/device/detail/reduce_kernels.cuh"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/schedule/schedule.hpp"

namespace ncclz::detail::comm {

template <class Codec>
class lossless_schedule {
 public:
  lossless_schedule(context<Codec>& ctx, code_reducer<Codec>& reducer) : ctx_(ctx), red_(reducer) {}

  template <class T>
  void reduction(const char* fn, schedule::collective c, const T* send, T* recv, std::size_t count,
                 const std::vector<schedule::segment>& seg, ncclRedOp_t op, int root, bool scatter, cudaStream_t stream) {
    workspace& ws = ctx_.ws;
    reduce_buffers& buf = red_.buffers;
    const int n = ctx_.nranks(), me = ctx_.rank();
    const std::uint64_t largest = largest_segment(seg);
    const schedule::segment mine = seg[me];
    ws.reserve(max_compressed_bytes<T>(largest), device::workspace_bytes<T>(largest), 2 * n, 2);
    buf.template reserve<T>(largest * n, largest);  // own_values: the peers' pieces of my segment; acc_values: their reduction
    auto* pieces = static_cast<T*>(buf.own_values);
    T* reduced = scatter ? recv : static_cast<T*>(buf.acc_values);
    ctx_.start_call(stream, 2);
    ctx_.reset_report(stream);
    ctx_.exchange_header(nullptr, stream);
    std::uint64_t coded_input = 0;
    for (int k = 1; k < n; ++k) {  // chunk slots: n + p to peer p, p from peer p (all reads of send come first)
      const int p = (me + k) % n;
      device::detail::reset_tile_words(ws.codec(), seg[p].count, stream);
      ctx_.encode(send + seg[p].first, seg[p].count, ws.chunk(n + p), ws.meta_slot(me, p), ws.range_keys(), 0.0, stream);
      coded_input += seg[p].count * sizeof(T);
    }
    if (n > 1) ctx_.bound_source = ws.chunk(n + (me + 1) % n);
    ctx_.exchange_meta(fn, count, stream);
    const std::uint64_t sent = ctx_.exchange_pairwise(0, 0, stream);
    for (int p = 0; p < n; ++p) {
      if (p != me) {
        ctx_.decode(ws.chunk(p), ws.sent_bytes(p, me), pieces + p * largest, mine.count, stream);
      }
    }
    const auto reduce = [&](auto kernel) {
      kernel<<<elementwise_grid(mine.count), ncclz::device::detail::kElementwiseThreads, 0, stream>>>(pieces, largest, n, me,
                                                                                              send + mine.first, mine.count, reduced);
    };
    switch (op) {
      case ncclMin: reduce(ncclz::device::detail::reduce_values_kernel<ncclz::device::detail::min_op, T>); break;
      case ncclMax: reduce(ncclz::device::detail::reduce_values_kernel<ncclz::device::detail::max_op, T>); break;
      default: reduce(ncclz::device::detail::reduce_values_kernel<ncclz::device::detail::sum_op, T>); break;
    }
    NCCLZ_CUDA_TRY(cudaGetLastError());
    std::uint64_t owner_bytes = 0, owner_sent = 0;
    if (!scatter) {
      device::detail::reset_tile_words(ws.codec(), mine.count, stream);
      ctx_.encode(reduced, mine.count, ws.chunk(me), ws.meta_slot(me, me, 1), ws.range_keys(), 0.0, stream);
      ctx_.bound_source = ws.chunk(me);
      ctx_.exchange_meta(fn, count, stream, 1);
      // Gathered into the slots sent from (n + p): their transfers came first on this stream.
      const exchanged_chunks owners = ctx_.exchange_chunks(stream, root, 0, 1, ws.chunk(n));
      if (root < 0 || me == root) {
        // Our own segment is `reduced` itself (the chunk codes it losslessly).
        NCCLZ_CUDA_TRY(cudaMemcpyAsync(recv + mine.first, reduced, mine.count * sizeof(T), cudaMemcpyDeviceToDevice, stream));
        for (int r = 0; r < n; ++r) {
          if (r != me) {
            ctx_.decode(owners.at(r), ws.chunk_size(r, 1), recv + seg[r].first, seg[r].count, stream);
          }
        }
      }
      owner_bytes = ws.chunk_size(me, 1);
      owner_sent = owners.sent;
    }
    ctx_.finish_info(schedule::name(c), schedule::algorithm::direct, count * sizeof(T), stream);
    ctx_.info.bytes_sent += sent + owner_sent;
    if (scatter) ctx_.set_ratio(coded_input, sent);
    else ctx_.set_ratio(mine.count * sizeof(T), owner_bytes);
  }

 private:
  context<Codec>& ctx_;
  code_reducer<Codec>& red_;
};

}  // namespace ncclz::detail::comm
