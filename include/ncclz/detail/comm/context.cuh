// What every schedule of a Communicator works with: the transport, the memory, the phase clock,
// the record of the call in progress, and the steps all schedules share: coding one rank's chunk,
// the exchange of compressed sizes, moving chunks whose sizes are known, and the call's report.
//
// NCCL point-to-point needs matching counts, so the host waits for compressed sizes: once per
// call for allgather, broadcast and alltoall, twice for a direct allreduce or reduce, once per
// ring step for the ring (call_info::size_waits and size_wait_ms report them).
//
// Every chunk of a call is coded and decoded with the call's coder (`coder`, set by expect_call
// from the route): the Codec's own, or with EntropyCoder<Auto> the one the router chose, the same
// on every rank (coder_choice.hpp).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "ncclz/codec.hpp"
#include "ncclz/communicator_config.hpp"
#include "ncclz/detail/comm/call_agreement.hpp"
#include "ncclz/detail/comm/coder_choice.hpp"
#include "ncclz/device/detail/header_kernel.cuh"
#include "ncclz/detail/comm/phase_clock.cuh"
#include "ncclz/detail/comm/transport.cuh"
#include "ncclz/detail/comm/workspace.cuh"
#include "ncclz/detail/cuda_resources.hpp"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/format.hpp"
#include "ncclz/schedule/schedule.hpp"

namespace ncclz::detail::comm {

/// The op word of a collective that reduces nothing.
inline constexpr auto kNoOp = static_cast<ncclRedOp_t>(-1);

/// Where exchange_chunks left the chunks (rank r's at base + r * stride), and the bytes this rank
/// sent.
struct exchanged_chunks {
  std::byte* base;
  std::uint64_t stride;
  std::uint64_t sent;
  [[nodiscard]] std::byte* at(int r) const { return base + stride * static_cast<std::uint64_t>(r); }
};

template <class Codec>
class context {
 public:
  context(ncclComm_t comm, const communicator_config& c)
      : config(c), tp(comm, c.timeout), ws(tp.nranks(), settler()), clock(c.profile_phases) {}
  /// Waits out the last call (watching the communicator, aborting it at the timeout) so that
  /// freeing device memory cannot block on a transfer stuck on a dead peer. Never throws. The
  /// owner calls drain() before the other holders of device memory go.
  ~context() { drain(); }
  void drain() noexcept {
    if (!last_call_recorded_ || tp.aborted()) return;
    try {
      tp.wait("~Communicator", last_call_done_.get());
    } catch (...) {  // tp.wait aborted the communicator: nothing of this call can still run
    }
    last_call_recorded_ = false;
  }
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  communicator_config config;
  transport tp;
  workspace ws;
  phase_clock clock;
  call_info info;

  // The call in progress, until finish_info.
  coder_id coder = Codec::coder::id;  ///< the entropy coder of the call's chunks
  call_fingerprint fingerprint;  ///< what every rank must agree on (set before the call's header exchange)
  std::uint64_t range_bytes_sent = 0;
  const std::byte* bound_source = nullptr;  ///< a chunk this call coded: its header holds the bound applied
  double error_bound = 0, size_wait_ms = 0;
  int size_waits = 0;

  /// What the buffers run before they free memory in use: a watched wait for the last call.
  before_free_fn settler() {
    return [this] {
      if (last_call_recorded_) tp.wait("Communicator (growing its buffers)", last_call_done_.get());
    };
  }
  /// Marks the end of a call's work on the caller's stream (what settler() and the destructor wait for).
  void end_call(cudaStream_t stream) {
    NCCLZ_CUDA_TRY(cudaEventRecord(last_call_done_.get(), stream));
    last_call_recorded_ = true;
  }

  [[nodiscard]] int rank() const noexcept { return tp.rank(); }
  [[nodiscard]] int nranks() const noexcept { return tp.nranks(); }

  /// What every rank of a compressed call must agree on, checked by its header exchange
  /// (call_agreement.hpp), and the coder it runs (`with`, the route's); the direct schedule
  /// adds its part count. `op`: kNoOp for collectives that reduce nothing; `root` < 0: none.
  template <class T>
  void expect_call(coder_id with, schedule::collective c, std::uint64_t count, ncclRedOp_t op, int root, double bound,
                   schedule::algorithm algo, bool split = false) {
    coder = with;
    call_fingerprint& f = fingerprint;
    f.set(call_field::count, count);
    f.set(call_field::collective, static_cast<std::uint64_t>(c));
    f.set(call_field::op, op == kNoOp ? ~std::uint64_t{0} : static_cast<std::uint64_t>(op));
    f.set(call_field::root, root < 0 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(root));
    f.set(call_field::element, element_word(nccl_type<T>(), sizeof(T)));
    f.set(call_field::quantizer, quantizer_word(Codec::quantizer::id, Codec::quantizer::name));
    f.set(call_field::coder, static_cast<std::uint64_t>(with));
    f.set(call_field::bound, std::bit_cast<std::uint64_t>(bound));
    f.set(call_field::split, split ? 1 : 0);
    f.set(call_field::parts, 1);
    f.set(call_field::algorithm, static_cast<std::uint64_t>(algo));
  }

  /// f.template operator()<C>() with C the codec of the call's coder (coder_choice.hpp).
  template <class F>
  decltype(auto) with_call_coder(F&& f) const {
    return with_coder<Codec>(coder, std::forward<F>(f));
  }

  /// Codes `count` values of `in` into the chunk at `out` with the call's coder; the size lands
  /// in *d_size (device::detail::launch_encode, on this workspace).
  template <class T>
  void encode(const T* in, std::size_t count, std::byte* out, std::uint64_t* d_size, const device::detail::range_keys* range,
              double bound, cudaStream_t stream) {
    with_call_coder([&]<class C>() { device::detail::launch_encode<C>(ws.codec(), in, count, out, d_size, range, bound, stream); });
  }

  /// Decodes the chunk at `in` (`capacity` bytes held there) into `count` values at `out` with
  /// the call's coder; problems go to the workspace's report.
  template <class T>
  void decode(const std::byte* in, std::uint64_t capacity, T* out, std::size_t count, cudaStream_t stream) {
    with_call_coder([&]<class C>() { device::detail::launch_decode<C>(in, capacity, out, count, ws.report(), stream); });
  }

  /// `slots` chunk slots for compressed chunks of `count` values of T, one meta set.
  template <class T>
  void reserve(std::size_t count, int slots) {
    ws.reserve(max_compressed_bytes<T, Codec>(count), device::workspace_bytes<T>(count), slots, 1);
  }

  /// Zeroes this rank's rows of `meta_sets` meta sets: sizes of chunks not coded in this call
  /// read 0.
  void start_call(cudaStream_t stream, int meta_sets = 1) {
    error_bound = 0;
    clock.restart(stream);
    for (int set = 0; set < meta_sets; ++set) {
      NCCLZ_CUDA_TRY(cudaMemsetAsync(ws.meta_row(rank(), set), 0, sizeof(std::uint64_t) * (nranks() + 1), stream));
    }
  }

  void mark(const char* phase, cudaStream_t stream) { clock.mark(phase, stream); }

  void reset_report(cudaStream_t stream) {
    NCCLZ_CUDA_TRY(cudaMemsetAsync(ws.report(), 0, sizeof(device::detail::decode_report), stream));
  }

  /// The call's first NCCL operation on every rank: one ncclAllGather of the header rows (this
  /// rank's range keys from `range`, or none, its fingerprint and chunk slot capacity), then the
  /// ranks' range keys merged into `range` on the device. The host checks the rows in
  /// settle_header before a second operation that only some calls make (FixedRate's block
  /// scales, the split of the size communicator); otherwise in the meta exchange's wait, which
  /// every call makes next, so that no host wait of its own follows the header.
  void exchange_header(device::detail::range_keys* range, cudaStream_t stream) {
    static_assert(sizeof(device::detail::range_keys) == kRangeWords * sizeof(std::uint64_t));
    const int me = rank();
    std::uint64_t* mine = ws.host_header_rows() + static_cast<std::size_t>(me) * kHeaderWords;  // staged, then overwritten
    for (unsigned i = 0; i < kRangeWords; ++i) mine[i] = 0;
    for (unsigned i = 0; i < kCallFields; ++i) mine[kRangeWords + i] = fingerprint.words[i];
    mine[kCapacityWord] = ws.chunk_capacity();
    std::uint64_t* rows = ws.header_rows();
    std::uint64_t* row = rows + static_cast<std::size_t>(me) * kHeaderWords;
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(row, mine, sizeof(std::uint64_t) * kHeaderWords, cudaMemcpyHostToDevice, stream));
    if (range != nullptr) {
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(row, range, sizeof(device::detail::range_keys), cudaMemcpyDeviceToDevice, stream));
    }
    tp.enqueue(ncclAllGather(row, rows, kHeaderWords, ncclUint64, tp.comm(), stream), "ncclAllGather");
    if (range != nullptr) {
      ncclz::device::detail::merge_header_ranges<<<1, 32, 0, stream>>>(rows, nranks(), kHeaderWords, range);
      NCCLZ_CUDA_TRY(cudaGetLastError());
    }
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(ws.host_header_rows(), rows, sizeof(std::uint64_t) * kHeaderWords * nranks(),
                                   cudaMemcpyDeviceToHost, stream));
    NCCLZ_CUDA_TRY(cudaEventRecord(header_done_.get(), stream));
    header_pending_ = true;
    range_bytes_sent = sizeof(std::uint64_t) * kHeaderWords;
  }

  /// Waits for the header rows of the call (watching the communicator) and throws on every rank
  /// if the ranks disagree on the call.
  void settle_header(const char* fn) {
    if (!header_pending_) return;
    header_pending_ = false;
    tp.wait(fn, header_done_.get());
    if (const auto m = disagreement(ws.host_header_rows(), nranks())) throw_invalid(fn, *m + kEveryRank);
  }

  /// Range (merged over all ranks by the header exchange: a broadcast's non-roots add none),
  /// then encode into chunk slot `slot`; the size lands in meta as the chunk for rank `to`.
  template <class T>
  void compress_into(const T* send, std::size_t count, int slot, int to, double bound, cudaStream_t stream) {
    device::detail::range_keys* range = device::detail::reset_compress_state(ws.codec(), count, stream);
    if constexpr (Codec::quantizer::needs_range) device::detail::launch_range(send, count, range, stream);
    exchange_header(Codec::quantizer::needs_range ? range : nullptr, stream);
    encode(send, count, ws.chunk(slot), ws.meta_slot(rank(), to), range, bound, stream);
    bound_source = ws.chunk(slot);
    if (config.flip_bit_in_chunks_of_rank == rank()) {  // fault injection: a chunk corrupted in flight
      ncclz::device::detail::flip_chunk_bit<<<1, 1, 0, stream>>>(ws.chunk(slot), ws.meta_slot(rank(), to));
      NCCLZ_CUDA_TRY(cudaGetLastError());
    }
  }

  /// A new non-blocking stream for transfers: of the device's greatest priority where
  /// config.priority_transfers asks for it (the default priority is the least).
  cudaStream_t transfer_stream(stream_handle& s) const {
    if (s.made()) return s.get();
    int least = 0, greatest = 0;
    NCCLZ_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    return s.get(config.priority_transfers ? greatest : least);
  }

  /// Gathers every rank's meta row and waits for it on the host; throws on every rank if the
  /// counts differ. Reads the bound the encoder applied from the chunk header at bound_source.
  /// On `stream` over the caller's communicator; or, given `ready` (the event after the chunks
  /// were coded) and a size communicator, over that on its own stream, so that the host's wait
  /// does not include the payloads already on `stream`: the pipelined reductions enqueue part
  /// i+1's sends while part i's still move.
  void exchange_meta(const char* fn, std::size_t count, cudaStream_t stream, int set = 0, cudaEvent_t ready = nullptr) {
    const bool beside = ready != nullptr && tp.size_comm() != nullptr;
    const cudaStream_t on = beside ? transfer_stream(size_stream_) : stream;
    const ncclComm_t via = beside ? tp.size_comm() : tp.comm();
    if (beside) NCCLZ_CUDA_TRY(cudaStreamWaitEvent(on, ready, 0));
    std::uint64_t* row = ws.host_row(rank(), set);
    row[0] = count;
    mark("codec", stream);
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(ws.meta_row(rank(), set), row, sizeof(std::uint64_t), cudaMemcpyHostToDevice, on));
    tp.enqueue(ncclAllGather(ws.meta_row(rank(), set), ws.meta(set), nranks() + 1, ncclUint64, via, on), "ncclAllGather", via);
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(ws.host_row(0, set), ws.meta(set), sizeof(std::uint64_t) * ws.meta_words(),
                                   cudaMemcpyDeviceToHost, on));
    double* h_bound = ws.host_bound();
    *h_bound = 0;
    if (bound_source != nullptr) {
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(h_bound, bound_source + offsetof(format::chunk_header, error_bound), sizeof(double),
                                     cudaMemcpyDeviceToHost, on));
    }
    // The header is still unchecked only where the meta exchange is this rank's next operation.
    wait_settling_header(fn, stream, on, {}, meta_follows_header);
    if (bound_source != nullptr) error_bound = *h_bound;
    for (int r = 0; r < nranks(); ++r) {
      const std::uint64_t theirs = ws.host_row(r, set)[0];
      if (theirs != count) {
        throw_invalid(fn, "ranks passed different counts: rank " + std::to_string(rank()) + " has " + std::to_string(count) +
                              ", rank " + std::to_string(r) + " has " + std::to_string(theirs));
      }
    }
    // Every rank holds the same rows, so every rank refuses the same size before it is received.
    if (const auto m = oversized_chunk(ws.host_header_rows(), ws.host_row(0, set), nranks())) {
      throw format_error(std::string("ncclz::") + fn + ": " + *m);
    }
  }

  /// Sends this rank's one chunk (slot slot_base + rank) to every peer (root < 0) or to the root
  /// only, and receives theirs where they are needed; sizes from meta set `set`.
  /// To every peer, given `gather_area` (room for n chunk slots, holding no chunk of this
  /// exchange), by one ncclAllGather of the largest chunk into it: NCCL's collectives move larger
  /// steps over a network than its point-to-point transfers (docs/design.md).
  /// Otherwise point to point, rank r's chunk into slot slot_base + r.
  exchanged_chunks exchange_chunks(cudaStream_t stream, int root, int slot_base = 0, int set = 0,
                                   std::byte* gather_area = nullptr) {
    const int n = nranks(), me = rank();
    if (root < 0 && gather_area != nullptr) {
      std::uint64_t largest = 0;
      for (int r = 0; r < n; ++r) largest = std::max(largest, ws.chunk_size(r, set));
      const std::uint64_t stride = format::align_up(largest, 256);  // <= a slot: every chunk fits one
      tp.enqueue(ncclAllGather(ws.chunk(slot_base + me), gather_area, stride, ncclUint8, tp.comm(), stream), "ncclAllGather");
      mark("transfer", stream);
      return {gather_area, stride, stride * static_cast<std::uint64_t>(n - 1)};
    }
    std::uint64_t sent = 0;
    tp.enqueue(ncclGroupStart(), "ncclGroupStart");
    for (int peer = 0; peer < n; ++peer) {
      if (peer == me) continue;
      if (root < 0 || peer == root) {
        tp.enqueue(ncclSend(ws.chunk(slot_base + me), ws.chunk_size(me, set), ncclUint8, peer, tp.comm(), stream), "ncclSend");
        sent += ws.chunk_size(me, set);
      }
      if (root < 0 || me == root) {
        tp.enqueue(ncclRecv(ws.chunk(slot_base + peer), ws.chunk_size(peer, set), ncclUint8, peer, tp.comm(), stream), "ncclRecv");
      }
    }
    tp.enqueue(ncclGroupEnd(), "ncclGroupEnd");
    mark("transfer", stream);
    return {ws.chunk(slot_base), ws.chunk_capacity(), sent};
  }

  /// Sends chunk slot_base + n + p to every peer p and receives peer p's into slot_base + p, in
  /// one group, sizes from meta set `set` (alltoall, the direct reduce-scatter). Returns the
  /// bytes sent.
  std::uint64_t exchange_pairwise(int slot_base, int set, cudaStream_t stream) {
    const int n = nranks(), me = rank();
    std::uint64_t sent = 0;
    tp.enqueue(ncclGroupStart(), "ncclGroupStart");
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      tp.enqueue(ncclSend(ws.chunk(slot_base + n + p), ws.sent_bytes(me, p, set), ncclUint8, p, tp.comm(), stream), "ncclSend");
      tp.enqueue(ncclRecv(ws.chunk(slot_base + p), ws.sent_bytes(p, me, set), ncclUint8, p, tp.comm(), stream), "ncclRecv");
      sent += ws.sent_bytes(me, p, set);
    }
    tp.enqueue(ncclGroupEnd(), "ncclGroupEnd");
    mark("transfer", stream);
    return sent;
  }

  /// One step of a schedule that exchanges coded chunks with single peers (ring, recursive
  /// doubling): this rank's chunk (`send`, its size in device word sizes[0]) to rank `to` and one
  /// from rank `from` into `recv` (either -1: none). The sizes go first, since the receiver must
  /// post the payload's exact size, checked against its slot; then the payloads. The sent chunk's
  /// bound becomes this rank's. `step` names the step in errors (e.g. "ring step 2").
  struct swapped {
    std::uint64_t sent = 0, received = 0;
  };
  swapped swap_chunks(const char* fn, int to, int from, const std::byte* send, std::byte* recv, std::uint64_t* sizes,
                      const std::string& step, cudaStream_t stream) {
    mark("codec", stream);
    tp.enqueue(ncclGroupStart(), "ncclGroupStart");
    if (to >= 0) tp.enqueue(ncclSend(sizes, 1, ncclUint64, to, tp.comm(), stream), "ncclSend");
    if (from >= 0) tp.enqueue(ncclRecv(sizes + 1, 1, ncclUint64, from, tp.comm(), stream), "ncclRecv");
    tp.enqueue(ncclGroupEnd(), "ncclGroupEnd");
    std::uint64_t* h = ws.host_scratch();
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(h, sizes, 2 * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream));
    if (to >= 0) {
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(h + 2, send + offsetof(format::chunk_header, error_bound), sizeof(double),
                                     cudaMemcpyDeviceToHost, stream));
    }
    partner_wait(fn, stream, "rank " + std::to_string(from >= 0 ? from : to) + " (" + step + ")");
    const swapped bytes{to >= 0 ? h[0] : 0, from >= 0 ? h[1] : 0};
    check_peer_size(fn, from, bytes.received, step);
    if (to >= 0) std::memcpy(&error_bound, h + 2, sizeof(double));  // this rank's code bound
    tp.enqueue(ncclGroupStart(), "ncclGroupStart");
    if (to >= 0) tp.enqueue(ncclSend(send, bytes.sent, ncclUint8, to, tp.comm(), stream), "ncclSend");
    if (from >= 0) tp.enqueue(ncclRecv(recv, bytes.received, ncclUint8, from, tp.comm(), stream), "ncclRecv");
    tp.enqueue(ncclGroupEnd(), "ncclGroupEnd");
    mark("transfer", stream);
    return bytes;
  }

  /// Waits for `waited` (the stream the sizes come on), calling `interrupt` between polls; phases
  /// are marked on `stream`.
  template <class Interrupt = void (*)()>
  void timed_wait(const char* fn, cudaStream_t stream, cudaStream_t waited, const std::string& peers = {},
                  Interrupt&& interrupt = [] {}) {
    mark("size exchange", stream);
    const auto start = std::chrono::steady_clock::now();
    tp.wait(fn, waited, peers, interrupt);
    mark("host gap", stream);
    size_wait_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ++size_waits;
  }

  /// Fills info for a compressed call and resets the call's record.
  void finish_info(const char* collective, schedule::algorithm algo, std::uint64_t input_bytes, cudaStream_t stream) {
    mark("codec", stream);
    info = call_info{};
    info.collective = collective;
    info.schedule = schedule::name(algo);
    info.parts = 1;
    info.coder = coder_name<Codec>(coder);
    info.input_bytes = input_bytes;
    info.bytes_sent = range_bytes_sent + sizeof(std::uint64_t) * (nranks() + 1) * static_cast<std::uint64_t>(size_waits);
    info.error_bound = error_bound;
    info.size_waits = size_waits;
    info.size_wait_ms = size_wait_ms;
    range_bytes_sent = 0;
    bound_source = nullptr;
    size_wait_ms = 0;
    size_waits = 0;
  }

  void set_ratio(std::uint64_t uncompressed, std::uint64_t compressed) {
    info.chunk_bytes = compressed;
    info.ratio = compressed ? static_cast<double>(uncompressed) / static_cast<double>(compressed) : 0.0;
  }

  /// Waits for `stream` (watching the communicator) and throws format_error on every rank if a
  /// chunk any rank received was corrupted: the ranks' decode reports are gathered first. A
  /// collective: every rank calls check after the same collectives, so a rank that died during
  /// any of them, NCCL's own route included, is an error on every survivor here.
  void check(cudaStream_t stream) {
    static_assert(sizeof(device::detail::decode_report) == sizeof(std::uint64_t));
    if (ws.held_bytes() == 0) {  // every call went to NCCL: reports of nothing, gathered all the same
      ws.reserve(0, device::workspace_bytes<float>(0), 0, 1);
      reset_report(stream);
    }
    const int n = nranks();
    tp.enqueue(ncclAllGather(ws.report(), ws.gathered_reports(), 1, ncclUint64, tp.comm(), stream), "ncclAllGather");
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(ws.host_reports(), ws.gathered_reports(), sizeof(std::uint64_t) * n, cudaMemcpyDeviceToHost,
                                   stream));
    tp.wait("Communicator::check", stream);
    for (int r = 0; r < n; ++r) {
      device::detail::decode_report report;
      std::memcpy(&report, ws.host_reports() + r, sizeof report);
      const std::string who = "Communicator: a chunk received by rank " + std::to_string(r);
      device::detail::throw_if_failed(who.c_str(), report);
    }
  }

 private:
  static constexpr const char* kEveryRank = " (every rank of the call reports this)";

  /// Refuses a size that rank `from` announced to this rank alone (ring steps, recursive doubling)
  /// and its slots cannot hold: only this rank knows, so it aborts the communicator, which fails
  /// the others at once, and throws format_error naming `where` (e.g. "ring step 2").
  void check_peer_size(const char* fn, int from, std::uint64_t bytes, const std::string& where) {
    if (bytes <= ws.chunk_capacity()) return;
    tp.abort();
    throw format_error(std::string("ncclz::") + fn + " on rank " + std::to_string(rank()) + ": rank " + std::to_string(from) +
                       " announced a chunk of " + std::to_string(bytes) + " B at " + where + ", more than the " +
                       std::to_string(ws.chunk_capacity()) +
                       " B chunk slots hold (a corrupted or inconsistent peer); the communicator was aborted");
  }

  /// The host wait for sizes exchanged with single peers on `stream` (swap_chunks), naming
  /// `peers`; where no exchange_meta came first in the call, it also settles the call's header.
  void partner_wait(const char* fn, cudaStream_t stream, const std::string& peers) {
    wait_settling_header(fn, stream, stream, peers, partner_sizes_follow_header);
  }

  /// timed_wait for sizes on `waited`, where the call's header, if still unchecked, is checked as
  /// soon as it arrives: ranks that disagree all throw invalid_argument. They do so after the wait,
  /// which they complete together, where `same_next(rows, n)` says that this wait's exchange is
  /// every rank's next operation; otherwise at once, aborting the communicator, since a rank
  /// whose next operation is another one never joins this exchange.
  void wait_settling_header(const char* fn, cudaStream_t stream, cudaStream_t waited, const std::string& peers,
                            bool (*same_next)(const std::uint64_t*, int)) {
    bool header_unchecked = std::exchange(header_pending_, false);
    std::optional<std::string> disagreed;
    const auto check_header = [&] {
      if (!header_unchecked || cudaEventQuery(header_done_.get()) != cudaSuccess) return;
      header_unchecked = false;
      disagreed = disagreement(ws.host_header_rows(), nranks());
      if (disagreed && !same_next(ws.host_header_rows(), nranks())) {
        tp.abort();
        throw_invalid(fn, *disagreed + kEveryRank + "; the communicator was aborted, since the ranks' next NCCL "
                                                    "operations differ");
      }
    };
    timed_wait(fn, stream, waited, peers, check_header);
    if (header_unchecked) tp.wait(fn, header_done_.get());  // done already where it came first on `waited`
    check_header();
    if (disagreed) throw_invalid(fn, *disagreed + kEveryRank);
  }
  stream_handle size_stream_;  // the size exchanges beside the payloads
  event_handle header_done_{/*timing=*/false};
  bool header_pending_ = false;
  event_handle last_call_done_{/*timing=*/false};
  bool last_call_recorded_ = false;
};

}  // namespace ncclz::detail::comm
