// Communicator<Codec>: compressed collectives over the caller's own NCCL communicator.
//
//   using Codec = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
//   ncclz::Communicator<Codec> comm(nccl_comm);
//   comm.allgather(d_send, d_recv, count, 1e-3, stream);     // recv holds every rank's values, decoded
//   comm.check(stream);                                       // waits; throws on a corrupted chunk
//   ncclz::call_info info = comm.last_call();
//
// Built so far: allgather and broadcast, which compress once and move the compressed bytes
// unchanged (DESIGN.md section 4, option 1), and allreduce and reduce_scatter with ncclSum, which
// add integer codes exactly at every ring step (docs/collectives-plan.md).
//
// The bound applies to the result. RelBound is relative to the value range of *all* ranks'
// inputs (allgather) or of the root's input (broadcast); it is found on the device and merged
// across ranks with one 16-byte ncclAllReduce. Every rank, the root and the sender of its own
// slot included, receives the decoded values, so all ranks hold identical results.
//
// Each call waits on the host once, for the compressed sizes (NCCL point-to-point needs matching
// counts). That wait watches the communicator, as nccl-tests does: a peer that fails or never
// arrives turns into ncclz::error after config::timeout, with the communicator aborted (it cannot
// be used after that), never a hang.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/detail/nccl_wait.hpp"
#include "ncclz/device/detail/reduce_kernels.cuh"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/error.hpp"
#include "ncclz/schedule/schedule.hpp"

namespace ncclz {

/// What the last collective did, for the caller's logs and benchmarks.
struct call_info {
  const char* collective = "none";
  const char* coder = "";
  const char* schedule = "";
  std::uint64_t input_bytes = 0;    ///< this rank's uncompressed payload
  std::uint64_t bytes_sent = 0;     ///< compressed bytes this rank handed to NCCL (payloads and sizes)
  std::uint64_t chunk_bytes = 0;    ///< size of the chunk this rank compressed (0 if it compressed none)
  double ratio = 0;                 ///< input bytes / chunk bytes of the compressed chunk(s)
  double error_bound = 0;           ///< absolute bound every result element keeps (on ranks that compressed)
  double size_wait_ms = 0;          ///< host time spent waiting for the size exchange
  bool fallback = false;            ///< the call went to NCCL's own collective, uncompressed
};

struct communicator_config {
  /// How long a host wait may last before the communicator is aborted and the call throws.
  std::chrono::milliseconds timeout{std::chrono::minutes(2)};
  /// Calls whose per-rank input is smaller go to NCCL's own collective, uncompressed and exact
  /// (call_info::fallback says so): there the host waits for compressed sizes cost more than
  /// compression saves. 0 compresses every call. The default comes from the collectives
  /// benchmark in docs/benchmarks.md (4 ranks, sockets: compressed allreduce and broadcast of
  /// 1 MiB were 0.6x and 0.84x NCCL, 4 MiB 1.6x and 3.9x). As with NCCL, the ranks must agree on
  /// the count for the fallback path, which does not check it.
  std::size_t fallback_below_bytes = std::size_t{2} << 20;
};

template <class Codec>
class Communicator {
 public:
  explicit Communicator(ncclComm_t comm, communicator_config config = {}) : comm_(comm), config_(config) {
    if (comm == nullptr) detail::throw_invalid("Communicator", "the NCCL communicator is null");
    NCCLZ_NCCL_TRY_COMM(comm_, ncclCommCount(comm_, &nranks_));
    NCCLZ_NCCL_TRY_COMM(comm_, ncclCommUserRank(comm_, &rank_));
    NCCLZ_CUDA_TRY(cudaMallocHost(&h_meta_, sizeof(std::uint64_t) * 2 * static_cast<std::size_t>(nranks_) + 64));
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator() {
    release_device();
    if (reduce_.base) NCCLZ_CUDA_TRY_NO_THROW(cudaFree(reduce_.base));
    if (h_meta_) NCCLZ_CUDA_TRY_NO_THROW(cudaFreeHost(h_meta_));
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int nranks() const noexcept { return nranks_; }
  [[nodiscard]] const call_info& last_call() const noexcept { return info_; }
  /// Device bytes held now (workspace and chunk buffers); grows only when a call needs more.
  [[nodiscard]] std::size_t workspace_bytes() const noexcept { return held_bytes_; }

  /// Gathers `count` values from every rank into `recv` (rank r's at recv + r * count), as
  /// ncclAllGather does; in place when send == recv + rank * count. Every element is within the
  /// bound of the value its rank sent. All ranks must pass the same count (checked: a mismatch
  /// throws invalid_argument on every rank).
  template <class T>
  void allgather(const T* send, T* recv, std::size_t count, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::allgather";
    check_buffers(fn, send, recv, count, static_cast<std::size_t>(nranks_) * count, bound);
    if (!(send == recv + static_cast<std::size_t>(rank_) * count) && overlaps(send, count, recv, count * nranks_)) {
      detail::throw_invalid(fn, "send overlaps recv other than in place (send == recv + rank * count)");
    }
    if (fall_back<T>("allgather", count)) {
      NCCLZ_NCCL_TRY_COMM(comm_, ncclAllGather(send, recv, count, nccl_type<T>(), comm_, stream));
      info_.bytes_sent = count * sizeof(T) * static_cast<std::uint64_t>(nranks_ - 1);
      return;
    }
    reserve<T>(count);
    compress_into<T>(send, count, chunk(rank_), bound, /*ranges_from_all_ranks=*/true, stream);
    exchange_meta(fn, count, stream);
    exchange_chunks(stream);
    reset_report(stream);
    for (int r = 0; r < nranks_; ++r) {
      device::detail::launch_decode<Codec>(chunk(r), chunk_size(r), recv + static_cast<std::size_t>(r) * count, count,
                                           report(), stream);
    }
    info_ = base_info("allgather", "direct", count * sizeof(T));
    info_.bytes_sent += chunk_size(rank_) * static_cast<std::uint64_t>(nranks_ - 1);
    info_.chunk_bytes = chunk_size(rank_);
    info_.ratio = chunk_size(rank_) ? static_cast<double>(count * sizeof(T)) / chunk_size(rank_) : 0.0;
  }

  /// Sends the root's `count` values to every rank, as ncclBroadcast does (send is read on the
  /// root only; in place when send == recv). Every rank, the root too, receives the decoded values.
  template <class T>
  void broadcast(const T* send, T* recv, std::size_t count, int root, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::broadcast";
    if (root < 0 || root >= nranks_) {
      detail::throw_invalid(fn, "root " + std::to_string(root) + " is outside [0, " + std::to_string(nranks_) + ")");
    }
    check_buffers(fn, rank_ == root ? send : recv, recv, count, count, bound);
    if (rank_ == root && send != recv && overlaps(send, count, recv, count)) {
      detail::throw_invalid(fn, "send and recv overlap without being the same buffer");
    }
    if (fall_back<T>("broadcast", count)) {
      NCCLZ_NCCL_TRY_COMM(comm_, ncclBroadcast(send, recv, count, nccl_type<T>(), root, comm_, stream));
      if (rank_ == root) info_.bytes_sent = count * sizeof(T);
      return;
    }
    reserve<T>(count);
    if (rank_ == root) compress_into<T>(send, count, chunk(root), bound, /*ranges_from_all_ranks=*/false, stream);
    exchange_meta(fn, count, stream);
    NCCLZ_NCCL_TRY_COMM(comm_, ncclBroadcast(chunk(root), chunk(root), chunk_size(root), ncclUint8, root, comm_, stream));
    reset_report(stream);
    device::detail::launch_decode<Codec>(chunk(root), chunk_size(root), recv, count, report(), stream);
    info_ = base_info("broadcast", "nccl_broadcast", count * sizeof(T));
    if (rank_ == root) {
      info_.bytes_sent += chunk_size(root);
      info_.chunk_bytes = chunk_size(root);
    }
    info_.ratio = chunk_size(root) ? static_cast<double>(count * sizeof(T)) / chunk_size(root) : 0.0;
  }

  /// Sums `count` values over all ranks into every rank's `recv`, as ncclAllReduce with ncclSum
  /// (in place when send == recv). Each element of the result is within `bound` (AbsBound) or
  /// bound x (max - min of all ranks' finite inputs) (RelBound) of the exact sum, plus the half
  /// ulp any T result rounds by; all ranks hold identical results. Schedule: ring reduce-scatter
  /// of codes (each rank quantizes once with bound / nranks; partial sums travel as codes and are
  /// added exactly), then the owners' chunks are exchanged unchanged and decoded everywhere.
  /// Elements where some rank's value was NaN, Inf or too large for a code are summed in T.
  template <class T>
  void allreduce(const T* send, T* recv, std::size_t count, ncclRedOp_t op, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::allreduce";
    check_sum(fn, op);
    check_buffers(fn, send, recv, count, count, bound);
    if (send != recv && overlaps(send, count, recv, count)) detail::throw_invalid(fn, "send and recv overlap without being the same buffer");
    if (fall_back<T>("allreduce", count)) {
      NCCLZ_NCCL_TRY_COMM(comm_, ncclAllReduce(send, recv, count, nccl_type<T>(), ncclSum, comm_, stream));
      info_.bytes_sent = 2 * count * sizeof(T) * static_cast<std::uint64_t>(nranks_ - 1) / static_cast<std::uint64_t>(nranks_);
      return;
    }
    const std::vector<schedule::segment> seg = schedule::segments(count, nranks_);
    const std::uint64_t largest = largest_segment(seg);
    reserve_bytes(format::max_fixed_chunk_bytes(largest, sizeof(T)), device::workspace_bytes<T>(largest));
    exchange_meta(fn, count, stream, /*chunk_on_device=*/false);  // equal counts, before any ring step
    const std::uint64_t sent = reduce_scatter_codes<T>(fn, send, count, seg, bound, stream);
    // The owner of each segment codes it once; the chunks then travel unchanged.
    device::detail::reset_tile_words(workspace(), seg[rank_].count, stream);
    encode_codes<T>(reduce_.acc_codes, static_cast<const T*>(reduce_.acc_values), seg[rank_].count, chunk(rank_),
                    meta() + 2 * rank_, bound, stream);
    error_bound_pending_ = true;
    exchange_meta(fn, count, stream);
    exchange_chunks(stream);
    for (int r = 0; r < nranks_; ++r) {
      device::detail::launch_decode<Codec>(chunk(r), chunk_size(r), recv + seg[r].first, seg[r].count, report(), stream);
    }
    info_ = base_info("allreduce", "ring reduce-scatter + direct allgather", count * sizeof(T));
    info_.error_bound *= nranks_;  // each rank's codes carry bound / nranks
    info_.bytes_sent += sent + chunk_size(rank_) * static_cast<std::uint64_t>(nranks_ - 1);
    info_.chunk_bytes = chunk_size(rank_);
    info_.ratio = chunk_size(rank_) ? static_cast<double>(seg[rank_].count * sizeof(T)) / chunk_size(rank_) : 0.0;
  }

  /// Sums `recvcount * nranks` values over all ranks and leaves block r (recvcount values) on
  /// rank r, as ncclReduceScatter with ncclSum; in place when send + rank * recvcount == recv.
  /// The bound is allreduce's.
  template <class T>
  void reduce_scatter(const T* send, T* recv, std::size_t recvcount, ncclRedOp_t op, double bound, cudaStream_t stream) {
    constexpr const char* fn = "Communicator::reduce_scatter";
    check_sum(fn, op);
    const std::size_t count = recvcount * static_cast<std::size_t>(nranks_);
    check_buffers(fn, send, recv, count, recvcount, bound);
    if (recv != send + static_cast<std::size_t>(rank_) * recvcount && overlaps(send, count, recv, recvcount)) {
      detail::throw_invalid(fn, "recv overlaps send other than in place (recv == send + rank * recvcount)");
    }
    if (fall_back<T>("reduce_scatter", count)) {
      NCCLZ_NCCL_TRY_COMM(comm_, ncclReduceScatter(send, recv, recvcount, nccl_type<T>(), ncclSum, comm_, stream));
      info_.bytes_sent = recvcount * sizeof(T) * static_cast<std::uint64_t>(nranks_ - 1);
      return;
    }
    std::vector<schedule::segment> seg(static_cast<std::size_t>(nranks_));
    for (int r = 0; r < nranks_; ++r) seg[r] = {static_cast<std::uint64_t>(r) * recvcount, recvcount};
    reserve_bytes(format::max_fixed_chunk_bytes(recvcount, sizeof(T)), device::workspace_bytes<T>(recvcount));
    exchange_meta(fn, count, stream, /*chunk_on_device=*/false);
    const std::uint64_t sent = reduce_scatter_codes<T>(fn, send, count, seg, bound, stream);
    const auto* acc_values = reinterpret_cast<const T*>(reduce_.acc_values);
    ncclz::kernels::dequantize_kernel<T><<<grid_for(recvcount), ncclz::kernels::kElementwiseThreads, 0, stream>>>(
        reduce_.acc_codes, acc_values, recvcount, reduce_.step, recv);
    NCCLZ_CUDA_TRY(cudaGetLastError());
    info_ = base_info("reduce_scatter", "ring", count * sizeof(T));
    info_.error_bound *= nranks_;
    info_.bytes_sent += sent;
    info_.ratio = reduce_.coded_bytes ? static_cast<double>(reduce_.coded_input_bytes) / reduce_.coded_bytes : 0.0;
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
  // Device memory: [workspace | report | meta: nranks x {chunk bytes, count} | nranks chunks].
  template <class T>
  void reserve(std::size_t count) {
    reserve_bytes(max_compressed_bytes<T>(count), device::workspace_bytes<T>(count));
  }

  void reserve_bytes(std::size_t chunk_bytes, std::size_t workspace_bytes) {
    const std::size_t chunk_capacity = format::align_up(chunk_bytes, 256);
    const std::size_t workspace = format::align_up(workspace_bytes, 256);
    if (device_ != nullptr && chunk_capacity <= chunk_capacity_ && workspace <= workspace_capacity_) return;
    release_device();  // cudaFree waits for work still using the old buffers
    chunk_capacity_ = std::max(chunk_capacity, chunk_capacity_);
    workspace_capacity_ = std::max(workspace, workspace_capacity_);
    held_bytes_ = workspace_capacity_ + kReportBytes + meta_bytes() + chunk_capacity_ * static_cast<std::size_t>(nranks_);
    NCCLZ_CUDA_TRY(cudaMalloc(&device_, held_bytes_));
  }

  static constexpr std::size_t kReportBytes = 256;
  std::size_t meta_bytes() const { return format::align_up(16 * static_cast<std::size_t>(nranks_), 256); }
  std::byte* workspace() const { return device_; }
  device::detail::decode_report* report() const {
    return reinterpret_cast<device::detail::decode_report*>(device_ + workspace_capacity_);
  }
  std::uint64_t* meta() const { return reinterpret_cast<std::uint64_t*>(device_ + workspace_capacity_ + kReportBytes); }
  std::byte* chunk(int r) const {
    return device_ + workspace_capacity_ + kReportBytes + meta_bytes() + chunk_capacity_ * static_cast<std::size_t>(r);
  }
  std::uint64_t chunk_size(int r) const { return h_meta_[2 * r]; }

  template <class T>
  void check_buffers(const char* fn, const T* send, const T* recv, std::size_t send_count, std::size_t recv_count,
                     double bound) const {
    device::detail::check_values(fn, "send", send, send_count);
    device::detail::check_values(fn, "recv", recv, recv_count);
    detail::validate_bound<typename Codec::quantizer>(fn, bound);
    detail::validate_count<T>(fn, send_count);
  }

  template <class T>
  static bool overlaps(const T* a, std::size_t na, const T* b, std::size_t nb) {
    return na > 0 && nb > 0 && a < b + nb && b < a + na;
  }

  /// Range (merged over all ranks when asked), then encode into `out`; the size lands in meta.
  template <class T>
  void compress_into(const T* send, std::size_t count, std::byte* out, double bound, bool ranges_from_all_ranks,
                     cudaStream_t stream) {
    device::detail::range_keys* range = device::detail::reset_compress_state(workspace(), count, stream);
    if constexpr (Codec::quantizer::needs_range) {
      device::detail::launch_range(send, count, range, stream);
      if (ranges_from_all_ranks) {
        // Order keys merge with max: one tiny allreduce gives every rank the global range.
        NCCLZ_NCCL_TRY_COMM(comm_, ncclAllReduce(range, range, 2, ncclUint64, ncclMax, comm_, stream));
        range_bytes_sent_ = 2 * sizeof(std::uint64_t);
      }
    }
    device::detail::launch_encode<Codec>(workspace(), send, count, out, meta() + 2 * rank_, range, bound, stream);
    error_bound_pending_ = true;
  }

  /// Gathers every rank's {chunk bytes, count} and waits for them on the host; throws on every
  /// rank if the counts differ. Without a chunk of this rank's (`chunk_on_device` false) its size is 0.
  void exchange_meta(const char* fn, std::size_t count, cudaStream_t stream, bool chunk_on_device = true) {
    std::uint64_t* mine = meta() + 2 * rank_;
    h_meta_[2 * rank_] = 0;
    h_meta_[2 * rank_ + 1] = count;
    if (chunk_on_device) {
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(mine + 1, h_meta_ + 2 * rank_ + 1, sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream));
    } else {
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(mine, h_meta_ + 2 * rank_, 2 * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream));
    }
    NCCLZ_NCCL_TRY_COMM(comm_, ncclAllGather(mine, meta(), 2, ncclUint64, comm_, stream));
    const std::size_t meta_bytes = sizeof(std::uint64_t) * 2 * static_cast<std::size_t>(nranks_);
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(h_meta_, meta(), meta_bytes, cudaMemcpyDeviceToHost, stream));
    // The error bound the encoder applied sits in the chunk header this rank wrote, if any.
    double* h_bound = reinterpret_cast<double*>(reinterpret_cast<std::byte*>(h_meta_) + meta_bytes);
    *h_bound = 0;
    if (error_bound_pending_) {
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(h_bound, chunk(rank_) + offsetof(format::chunk_header, error_bound), sizeof(double),
                                     cudaMemcpyDeviceToHost, stream));
    }
    const auto start = std::chrono::steady_clock::now();
    wait(fn, stream);
    size_wait_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    error_bound_ = *h_bound;
    for (int r = 0; r < nranks_; ++r) {
      if (h_meta_[2 * r + 1] != count) {
        detail::throw_invalid(fn, "ranks passed different counts: rank " + std::to_string(rank_) + " has " +
                                      std::to_string(count) + ", rank " + std::to_string(r) + " has " +
                                      std::to_string(h_meta_[2 * r + 1]));
      }
    }
  }

  /// Sends this rank's chunk to every peer and receives theirs, sizes from the last exchange_meta.
  void exchange_chunks(cudaStream_t stream) {
    NCCLZ_NCCL_TRY_COMM(comm_, ncclGroupStart());
    for (int peer = 0; peer < nranks_; ++peer) {
      if (peer == rank_) continue;
      NCCLZ_NCCL_TRY_COMM(comm_, ncclSend(chunk(rank_), chunk_size(rank_), ncclUint8, peer, comm_, stream));
      NCCLZ_NCCL_TRY_COMM(comm_, ncclRecv(chunk(peer), chunk_size(peer), ncclUint8, peer, comm_, stream));
    }
    NCCLZ_NCCL_TRY_COMM(comm_, ncclGroupEnd());
  }

  /// Waits for `stream` while polling the communicator; aborts it and throws on error or timeout.
  void wait(const char* fn, cudaStream_t stream) {
    const auto deadline = std::chrono::steady_clock::now() + config_.timeout;
    for (;;) {
      const cudaError_t s = cudaStreamQuery(stream);
      if (s == cudaSuccess) return;
      if (s != cudaErrorNotReady) NCCLZ_CUDA_TRY(s);
      ncclResult_t async = ncclSuccess;
      NCCLZ_NCCL_TRY(ncclCommGetAsyncError(comm_, &async));
      if (async != ncclSuccess && async != ncclInProgress) {
        ncclCommAbort(comm_);
        throw nccl_error(static_cast<int>(async), std::string("ncclz::") + fn + ": NCCL reported " +
                                                      ncclGetErrorString(async) + " (a peer failed); the communicator was aborted");
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ncclCommAbort(comm_);
        throw error(std::string("ncclz::") + fn + ": timed out after " + std::to_string(config_.timeout.count()) +
                    " ms waiting for the other ranks (one may have died or not called " + fn +
                    "); the communicator was aborted");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  void reset_report(cudaStream_t stream) {
    NCCLZ_CUDA_TRY(cudaMemsetAsync(report(), 0, sizeof(device::detail::decode_report), stream));
  }

  call_info base_info(const char* collective, const char* schedule, std::uint64_t input_bytes) {
    call_info i;
    i.collective = collective;
    i.schedule = schedule;
    i.coder = Codec::coder::name;
    i.input_bytes = input_bytes;
    i.bytes_sent = range_bytes_sent_ + 2 * sizeof(std::uint64_t);
    i.error_bound = error_bound_;
    i.size_wait_ms = size_wait_ms_;
    range_bytes_sent_ = 0;
    error_bound_pending_ = false;
    size_wait_ms_ = 0;
    return i;
  }

  void release_device() noexcept {
    if (device_) NCCLZ_CUDA_TRY_NO_THROW(cudaFree(device_));
    device_ = nullptr;
    held_bytes_ = 0;
  }

  template <class T>
  static constexpr ncclDataType_t nccl_type() {
    return std::is_same_v<T, float> ? ncclFloat : ncclDouble;
  }

  template <class T>
  bool fall_back(const char* collective, std::size_t count) {
    if (count * sizeof(T) >= config_.fallback_below_bytes) return false;
    info_ = call_info{};
    info_.collective = collective;
    info_.schedule = "nccl";
    info_.coder = "none";
    info_.input_bytes = count * sizeof(T);
    info_.fallback = true;
    return true;
  }

  // ---- reductions -----------------------------------------------------------------------------
  static void check_sum(const char* fn, ncclRedOp_t op) {
    if (op != ncclSum) {
      detail::throw_invalid(fn, "only ncclSum is supported so far (ncclProd, ncclMin, ncclMax and ncclAvg are not): "
                                "use NCCL's own collective for those");
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

  /// Device buffers of the ring: this rank's codes of its whole input, the running partial sum
  /// of one segment, a chunk to send and one to receive, the step and two sizes.
  struct reduce_buffers {
    std::byte* base = nullptr;
    std::size_t bytes = 0;
    std::int32_t* own_codes = nullptr;
    void* own_values = nullptr;
    std::int32_t* acc_codes = nullptr;
    void* acc_values = nullptr;
    std::byte* send_chunk = nullptr;
    std::byte* recv_chunk = nullptr;
    double* step = nullptr;
    std::uint64_t* sizes = nullptr;  ///< [0] this step's send, [1] this step's receive
    std::uint64_t coded_bytes = 0, coded_input_bytes = 0;
  };

  template <class T>
  void reserve_reduce(std::size_t count, std::size_t largest_segment) {
    const std::size_t chunk = format::align_up(format::max_fixed_chunk_bytes(largest_segment, sizeof(T)), 256);
    const std::size_t own = format::align_up(count * (sizeof(std::int32_t) + sizeof(T)) + 16, 256);
    const std::size_t acc = format::align_up(largest_segment * (sizeof(std::int32_t) + sizeof(T)) + 16, 256);
    const std::size_t need = own + acc + 2 * chunk + 256;
    if (need > reduce_.bytes) {
      if (reduce_.base) NCCLZ_CUDA_TRY(cudaFree(reduce_.base));
      reduce_.base = nullptr;
      NCCLZ_CUDA_TRY(cudaMalloc(&reduce_.base, need));
      reduce_.bytes = need;
    }
    std::byte* p = reduce_.base;
    reduce_.own_codes = reinterpret_cast<std::int32_t*>(p);
    reduce_.own_values = p + format::align_up(count * sizeof(std::int32_t), 16);
    p += own;
    reduce_.acc_codes = reinterpret_cast<std::int32_t*>(p);
    reduce_.acc_values = p + format::align_up(largest_segment * sizeof(std::int32_t), 16);
    p += acc;
    reduce_.send_chunk = p;
    reduce_.recv_chunk = p + chunk;
    p += 2 * chunk;
    reduce_.step = reinterpret_cast<double*>(p);
    reduce_.sizes = reinterpret_cast<std::uint64_t*>(p + 64);
  }

  /// Encodes codes (kOutlierCode marks values kept beside) into `out`; its size lands in *d_size.
  template <class T>
  void encode_codes(const std::int32_t* codes, const T* values, std::size_t count, std::byte* out, std::uint64_t* d_size,
                    double bound, cudaStream_t stream) {
    using Source = ncclz::kernels::code_source<T>;
    auto kernel = ncclz::kernels::encode_kernel<Codec, T, Source>;
    device::detail::prefer_shared_memory(kernel);
    const auto tiles = static_cast<unsigned>(format::tile_count(count));
    const device::detail::workspace_layout l = device::detail::layout_for(count);
    kernel<<<tiles > 0 ? tiles : 1u, ncclz::kernels::kTileThreads, 0, stream>>>(
        Source{codes, values}, count, out, d_size, range_keys(), bound / nranks_, static_cast<std::uint32_t>(nranks_),
        reinterpret_cast<std::uint64_t*>(workspace() + l.tile_words));
    NCCLZ_CUDA_TRY(cudaGetLastError());
  }

  device::detail::range_keys* range_keys() const {
    return reinterpret_cast<device::detail::range_keys*>(workspace() + device::detail::layout_for(0).range);
  }

  /// Quantizes this rank's input once and runs the ring reduce-scatter of codes: afterwards the
  /// full sum of segment `rank` sits in reduce_.acc_* as codes. Returns the bytes this rank sent.
  template <class T>
  std::uint64_t reduce_scatter_codes(const char* fn, const T* send, std::size_t count,
                                     const std::vector<schedule::segment>& seg, double bound, cudaStream_t stream) {
    const std::uint64_t largest = largest_segment(seg);
    reserve_reduce<T>(count, largest);
    reduce_.coded_bytes = 0;
    reduce_.coded_input_bytes = 0;
    device::detail::range_keys* range = device::detail::reset_compress_state(workspace(), largest, stream);
    std::uint64_t sent = 0;
    if constexpr (Codec::quantizer::needs_range) {
      device::detail::launch_range(send, count, range, stream);
      NCCLZ_NCCL_TRY_COMM(comm_, ncclAllReduce(range, range, 2, ncclUint64, ncclMax, comm_, stream));
      sent += 2 * sizeof(std::uint64_t);
    }
    auto* own_values = static_cast<T*>(reduce_.own_values);
    auto* acc_values = static_cast<T*>(reduce_.acc_values);
    ncclz::kernels::quantize_kernel<typename Codec::quantizer, T>
        <<<grid_for(count), ncclz::kernels::kElementwiseThreads, 0, stream>>>(
            send, count, reduce_.own_codes, own_values, range, bound / nranks_, static_cast<std::uint32_t>(nranks_),
            reduce_.step);
    NCCLZ_CUDA_TRY(cudaGetLastError());
    if (nranks_ == 1) {
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(reduce_.acc_codes, reduce_.own_codes, count * sizeof(std::int32_t),
                                     cudaMemcpyDeviceToDevice, stream));
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(acc_values, own_values, count * sizeof(T), cudaMemcpyDeviceToDevice, stream));
      return sent;
    }
    std::uint64_t coded_bytes = 0, coded_input = 0;
    for (int step = 0; step < schedule::ring_step_count(nranks_); ++step) {
      const schedule::ring_step st = schedule::ring_reduce_scatter_step(rank_, nranks_, step);
      const schedule::segment out = seg[st.send_segment], in = seg[st.recv_segment];
      if (step > 0) device::detail::reset_tile_words(workspace(), out.count, stream);
      if (step == 0) {
        encode_codes<T>(reduce_.own_codes + out.first, own_values + out.first, out.count, reduce_.send_chunk,
                        reduce_.sizes, bound, stream);
      } else {
        encode_codes<T>(reduce_.acc_codes, acc_values, out.count, reduce_.send_chunk, reduce_.sizes, bound, stream);
      }
      // The receiver must post the payload's exact size: sizes first, then the payloads.
      NCCLZ_NCCL_TRY_COMM(comm_, ncclGroupStart());
      NCCLZ_NCCL_TRY_COMM(comm_, ncclSend(reduce_.sizes, 1, ncclUint64, st.send_peer, comm_, stream));
      NCCLZ_NCCL_TRY_COMM(comm_, ncclRecv(reduce_.sizes + 1, 1, ncclUint64, st.recv_peer, comm_, stream));
      NCCLZ_NCCL_TRY_COMM(comm_, ncclGroupEnd());
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(h_meta_, reduce_.sizes, 2 * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream));
      NCCLZ_CUDA_TRY(cudaMemcpyAsync(h_meta_ + 2, reduce_.send_chunk + offsetof(format::chunk_header, error_bound),
                                     sizeof(double), cudaMemcpyDeviceToHost, stream));
      const auto start = std::chrono::steady_clock::now();
      wait(fn, stream);
      size_wait_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      const std::uint64_t send_bytes = h_meta_[0], recv_bytes = h_meta_[1];
      std::memcpy(&error_bound_, h_meta_ + 2, sizeof(double));  // this rank's bound: the sum's, divided by nranks
      NCCLZ_NCCL_TRY_COMM(comm_, ncclGroupStart());
      NCCLZ_NCCL_TRY_COMM(comm_, ncclSend(reduce_.send_chunk, send_bytes, ncclUint8, st.send_peer, comm_, stream));
      NCCLZ_NCCL_TRY_COMM(comm_, ncclRecv(reduce_.recv_chunk, recv_bytes, ncclUint8, st.recv_peer, comm_, stream));
      NCCLZ_NCCL_TRY_COMM(comm_, ncclGroupEnd());
      sent += send_bytes + sizeof(std::uint64_t);
      coded_bytes += send_bytes;
      coded_input += out.count * sizeof(T);
      ncclz::kernels::decode_kernel<Codec, T, ncclz::kernels::code_sink<typename Codec::quantizer, T>>
          <<<std::max(1u, static_cast<unsigned>(format::tile_count(in.count))), ncclz::kernels::kTileThreads, 0, stream>>>(
              reduce_.recv_chunk, recv_bytes, {reduce_.acc_codes, acc_values}, in.count, report());
      NCCLZ_CUDA_TRY(cudaGetLastError());
      ncclz::kernels::accumulate_kernel<T><<<grid_for(in.count), ncclz::kernels::kElementwiseThreads, 0, stream>>>(
          reduce_.acc_codes, acc_values, reduce_.own_codes + in.first, own_values + in.first, in.count, reduce_.step);
      NCCLZ_CUDA_TRY(cudaGetLastError());
    }
    reduce_.coded_bytes = coded_bytes;
    reduce_.coded_input_bytes = coded_input;
    return sent;
  }

  ncclComm_t comm_;
  communicator_config config_;
  int nranks_ = 0, rank_ = 0;
  std::byte* device_ = nullptr;
  std::size_t held_bytes_ = 0, chunk_capacity_ = 0, workspace_capacity_ = 0;
  std::uint64_t* h_meta_ = nullptr;  // pinned: nranks x {chunk bytes, count}, then the error bound
  std::uint64_t range_bytes_sent_ = 0;
  bool error_bound_pending_ = false;
  double error_bound_ = 0, size_wait_ms_ = 0;
  call_info info_;
  reduce_buffers reduce_;
};

}  // namespace ncclz
