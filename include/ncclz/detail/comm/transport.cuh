// The one place that talks to NCCL for a Communicator: the caller's communicator (and, with a
// pipeline of several parts, a second one split from it for size exchanges), every call on them
// finished within the configured timeout, and every host wait watched, as nccl-tests does: a peer
// that fails or never arrives becomes ncclz::error after the timeout, never a hang. Any NCCL
// failure aborts both communicators (aborted() says so; the owner of the caller's communicator
// must then neither use nor destroy it).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <string>
#include <thread>

#include "ncclz/detail/comm/nccl_wait.hpp"
#include "ncclz/error.hpp"

namespace ncclz::detail::comm {

class transport {
 public:
  transport(ncclComm_t comm, std::chrono::milliseconds timeout) : comm_(comm), timeout_(timeout) {
    if (comm == nullptr) throw_invalid("Communicator", "the NCCL communicator is null");
    NCCLZ_NCCL_TRY_COMM(comm_, ncclCommCount(comm_, &nranks_));
    NCCLZ_NCCL_TRY_COMM(comm_, ncclCommUserRank(comm_, &rank_));
  }
  transport(const transport&) = delete;
  transport& operator=(const transport&) = delete;
  ~transport() {
    if (size_comm_ != nullptr) finalize_or_abort(size_comm_, timeout_);
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int nranks() const noexcept { return nranks_; }
  [[nodiscard]] ncclComm_t comm() const noexcept { return comm_; }
  /// The split communicator for size exchanges beside payloads; null without one.
  [[nodiscard]] ncclComm_t size_comm() const noexcept { return size_comm_; }
  [[nodiscard]] bool aborted() const noexcept { return aborted_; }
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }

  /// Splits the caller's communicator into a second one of the same ranks, for size exchanges
  /// beside payloads (pipelined reductions). Collective: every rank calls it at the same point of
  /// the same call, after the call's header showed that they agree.
  void split_size_comm() {
    if (size_comm_ != nullptr || nranks_ == 1) return;
    ncclComm_t split_comm = nullptr;
    const ncclResult_t split = ncclCommSplit(comm_, 0, rank_, &split_comm, nullptr);  // inherits comm's config
    try {
      nccl_wait(split_comm != nullptr ? split_comm : comm_, split, "ncclCommSplit (the size communicator)", timeout_);
      // A non-blocking parent is busy until the split is done too: NCCL refuses calls on it before.
      nccl_wait(comm_, ncclInProgress, "ncclCommSplit (the parent communicator)", timeout_);
    } catch (...) {
      if (split_comm != nullptr) ncclCommAbort(split_comm);
      abort();
      throw;
    }
    size_comm_ = split_comm;
  }

  /// Throws if an earlier failure aborted the communicator.
  void check_usable(const char* collective) const {
    if (aborted_) {
      throw error(std::string("ncclz::Communicator::") + collective +
                  ": the NCCL communicator was aborted after an earlier failure; make a new one");
    }
  }

  /// Finishes an NCCL call on `on` (the caller's communicator by default), waiting out
  /// ncclInProgress on a non-blocking one within the timeout; any failure aborts and throws.
  void enqueue(ncclResult_t result, const char* call, ncclComm_t on = nullptr) {
    try {
      nccl_wait(on != nullptr ? on : comm_, result, call, timeout_);
    } catch (...) {
      abort();
      throw;
    }
  }

  /// Waits for `stream` while polling the communicators; aborts them and throws on an NCCL
  /// error or at the timeout. `peers` names whom the wait depends on, for the message (all
  /// ranks when empty).
  void wait(const char* fn, cudaStream_t stream, const std::string& peers = {}) {
    watch(fn, [stream] { return cudaStreamQuery(stream); }, peers, [] {});
  }
  /// The same, calling `interrupt` between polls: it may throw to end the wait early.
  template <class Interrupt>
  void wait(const char* fn, cudaStream_t stream, const std::string& peers, Interrupt&& interrupt) {
    watch(fn, [stream] { return cudaStreamQuery(stream); }, peers, interrupt);
  }
  /// The same for an event.
  void wait(const char* fn, cudaEvent_t event, const std::string& peers = {}) {
    watch(fn, [event] { return cudaEventQuery(event); }, peers, [] {});
  }

  void abort() noexcept {
    ncclCommAbort(comm_);
    if (size_comm_ != nullptr) ncclCommAbort(size_comm_);
    size_comm_ = nullptr;
    aborted_ = true;
  }

 private:
  template <class Poll, class Interrupt>
  void watch(const char* fn, Poll poll, const std::string& peers, Interrupt&& interrupt) {
    const auto whom = [&] { return peers.empty() ? "the other " + std::to_string(nranks_ - 1) + " rank(s)" : peers; };
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (;;) {
      const cudaError_t s = poll();
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
        abort();
        throw nccl_error(static_cast<int>(async), m + "; the communicator was aborted");
      }
      if (std::chrono::steady_clock::now() > deadline) {
        abort();
        throw error(std::string("ncclz::") + fn + " on rank " + std::to_string(rank_) + ": timed out after " +
                    std::to_string(timeout_.count()) + " ms waiting for " + whom() + " (one may have died or not called " +
                    fn + "); the communicator was aborted");
      }
      interrupt();
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  ncclComm_t comm_;
  ncclComm_t size_comm_ = nullptr;
  std::chrono::milliseconds timeout_;
  int nranks_ = 0, rank_ = 0;
  bool aborted_ = false;
};

}  // namespace ncclz::detail::comm
