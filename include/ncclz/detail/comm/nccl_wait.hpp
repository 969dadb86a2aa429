// Waiting out ncclInProgress on a non-blocking communicator.
//
// A communicator made with config.blocking = 0 (ncclz::cluster_comm makes its communicators so,
// and users may bring their own) may answer ncclInProgress from any call: init, a collective,
// ncclGroupEnd, finalize. NCCL's rule is then that the caller polls ncclCommGetAsyncError until
// it says ncclSuccess before making another NCCL call on that communicator, and issues no CUDA work
// on NCCL's streams meanwhile. A blocking communicator never answers ncclInProgress, so code that
// uses NCCLZ_NCCL_TRY_COMM is correct for both kinds.
//
// The communicator is not aborted here: it belongs to the caller, who must abort it after an error
// (nothing can be assumed about operations enqueued on it).
#pragma once

#include <nccl.h>

#include <chrono>
#include <string>
#include <string_view>
#include <thread>

#include "ncclz/error.hpp"

namespace ncclz::detail::comm {

/// How long NCCLZ_NCCL_TRY_COMM waits for an operation to be enqueued. Enqueueing can include
/// connection setup on first use (NCCL connects lazily), so this is generous.
inline constexpr std::chrono::milliseconds nccl_default_wait{std::chrono::minutes(5)};

/// Throws nccl_error for `what` (the call's text) failing with `status` on `comm`.
[[noreturn]] inline void throw_nccl(ncclComm_t comm, ncclResult_t status, std::string_view what,
                                    const std::string& extra = {}) {
  std::string m = std::string("ncclz: ") + std::string(what) + " failed: " +
                  nccl_result_name(static_cast<int>(status)) + " (" + ncclGetErrorString(status) +
                  ")";
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && last[0] != '\0') m += "; last NCCL error: " + std::string(last);
  if (!extra.empty()) m += "; " + extra;
  throw nccl_error(static_cast<int>(status), m);
}

/// Finishes a call on `comm` that returned `result`: ncclSuccess returns at once; ncclInProgress
/// polls ncclCommGetAsyncError until the communicator is ready again; an error, an error found
/// while polling, or `timeout` passing throws nccl_error naming `what`.
inline void nccl_wait(ncclComm_t comm, ncclResult_t result, std::string_view what,
                      std::chrono::milliseconds timeout = nccl_default_wait) {
  if (result == ncclSuccess) return;
  if (result != ncclInProgress) throw_nccl(comm, result, what);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    ncclResult_t state = ncclInProgress;
    const ncclResult_t query = ncclCommGetAsyncError(comm, &state);
    if (query != ncclSuccess) throw_nccl(comm, query, "ncclCommGetAsyncError while waiting for " + std::string(what));
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) throw_nccl(comm, state, what, "reported by ncclCommGetAsyncError");
    if (std::chrono::steady_clock::now() > deadline) {
      throw nccl_error(static_cast<int>(ncclInProgress),
                       "ncclz: " + std::string(what) + " still in progress after " +
                           std::to_string(timeout.count()) +
                           " ms on a non-blocking communicator (a peer may be missing or dead)");
    }
    std::this_thread::yield();
  }
}

/// Frees a communicator this process owns: finalize (flushes outstanding work; polled within
/// `timeout` on a non-blocking communicator), then destroy; abort instead when the communicator is
/// in an error state or finalizing fails or hangs. Never throws. Returns false where it aborted.
inline bool finalize_or_abort(ncclComm_t comm, std::chrono::milliseconds timeout) noexcept {
  ncclResult_t state = ncclSuccess;
  if (ncclCommGetAsyncError(comm, &state) != ncclSuccess || state != ncclSuccess) {
    ncclCommAbort(comm);
    return false;
  }
  ncclResult_t r = ncclCommFinalize(comm);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (r == ncclInProgress && std::chrono::steady_clock::now() <= deadline) {
    std::this_thread::yield();
    if (ncclCommGetAsyncError(comm, &state) != ncclSuccess) break;
    r = state;
  }
  if (r != ncclSuccess) {
    ncclCommAbort(comm);
    return false;
  }
  ncclCommDestroy(comm);
  return true;
}

}  // namespace ncclz::detail::comm

#if !defined(NCCLZ_PP_STRINGIZE)
#  define NCCLZ_PP_STRINGIZE_(x) #x
#  define NCCLZ_PP_STRINGIZE(x) NCCLZ_PP_STRINGIZE_(x)
#endif

/// Runs an NCCL call on `nccl_comm` and finishes it (see ncclz::detail::comm::nccl_wait): right
/// for blocking and non-blocking communicators alike. Throws ncclz::nccl_error naming the call and its place.
#define NCCLZ_NCCL_TRY_COMM(nccl_comm, call) \
  ::ncclz::detail::comm::nccl_wait((nccl_comm), (call), #call " at " __FILE__ ":" NCCLZ_PP_STRINGIZE(__LINE__))
