// Broadcast: the root's values coded once, the chunk forwarded unchanged, decoded everywhere (the
// root too, so that every rank holds the same values). Ring: NCCL's pipelined broadcast of the
// compressed bytes (each link carries them once). Tree: down a binomial tree of send/recv, the
// largest subtree first (schedule/tree.hpp).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>

#include "ncclz/detail/comm/context.cuh"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/schedule/schedule.hpp"

namespace ncclz::detail::comm {

template <class Codec>
class broadcast_schedule {
 public:
  explicit broadcast_schedule(context<Codec>& ctx) : ctx_(ctx) {}

  template <class T>
  void run(const T* send, T* recv, std::size_t count, int root, double bound, schedule::algorithm algo, cudaStream_t stream) {
    const int n = ctx_.nranks(), me = ctx_.rank();
    workspace& ws = ctx_.ws;
    transport& tp = ctx_.tp;
    ctx_.template reserve<T>(count, n);
    ctx_.start_call(stream);
    if (me == root) ctx_.compress_into(send, count, root, root, bound, stream);  // the header adds no range of the others'
    else ctx_.exchange_header(nullptr, stream);
    ctx_.exchange_meta("Communicator::broadcast", count, stream);
    const std::uint64_t bytes = ws.chunk_size(root);
    std::uint64_t sent = 0;
    if (algo == schedule::algorithm::tree) {
      const int parent = schedule::tree_parent(me, n, root);
      if (parent >= 0) tp.enqueue(ncclRecv(ws.chunk(root), bytes, ncclUint8, parent, tp.comm(), stream), "ncclRecv");
      for (const int child : schedule::tree_children(me, n, root)) {
        tp.enqueue(ncclSend(ws.chunk(root), bytes, ncclUint8, child, tp.comm(), stream), "ncclSend");
        sent += bytes;
      }
    } else {
      tp.enqueue(ncclBroadcast(ws.chunk(root), ws.chunk(root), bytes, ncclUint8, root, tp.comm(), stream), "ncclBroadcast");
      if (me == root) sent = bytes;
    }
    ctx_.mark("transfer", stream);
    ctx_.reset_report(stream);
    ctx_.decode(ws.chunk(root), bytes, recv, count, stream);
    ctx_.finish_info("broadcast", algo, count * sizeof(T), stream);
    ctx_.info.bytes_sent += sent;
    ctx_.set_ratio(count * sizeof(T), bytes);
  }

 private:
  context<Codec>& ctx_;
};

}  // namespace ncclz::detail::comm
