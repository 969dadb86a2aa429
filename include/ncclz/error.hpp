// Typed exceptions. Every ncclz error says which call and which argument were wrong, and keeps the
// CUDA or NCCL status where there is one (in the spirit of cuCollections' CUCO_CUDA_TRY).
#pragma once

#include <stdexcept>
#include <string>

namespace ncclz {

/// Base of every exception ncclz throws.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A caller passed an argument ncclz cannot use (null or misaligned pointer, bad bound, too small
/// a buffer, an unsupported dtype). Thrown before any work is queued.
class invalid_argument : public error {
 public:
  using error::error;
};

/// A compressed stream failed validation: bad magic, unknown version, dtype or coder, truncated
/// data, offsets outside the buffer, an element count that does not match the caller's.
class format_error : public error {
 public:
  using error::error;
};

/// A CUDA runtime call failed; `status()` is the cudaError_t value.
class cuda_error : public error {
 public:
  cuda_error(int status, const std::string& what) : error(what), status_(status) {}
  [[nodiscard]] int status() const noexcept { return status_; }

 private:
  int status_;
};

/// An NCCL call failed, or a non-blocking communicator did not finish an operation in time;
/// `status()` is the ncclResult_t value (kept as int so this header does not need nccl.h).
/// A timeout keeps ncclInProgress (7): the communicator was still busy when ncclz gave up.
class nccl_error : public error {
 public:
  nccl_error(int status, const std::string& what) : error(what), status_(status) {}
  [[nodiscard]] int status() const noexcept { return status_; }

 private:
  int status_;
};

namespace detail {
/// The enumerator name of an ncclResult_t value, for messages.
[[nodiscard]] inline const char* nccl_result_name(int status) noexcept {
  switch (status) {
    case 0: return "ncclSuccess";
    case 1: return "ncclUnhandledCudaError";
    case 2: return "ncclSystemError";
    case 3: return "ncclInternalError";
    case 4: return "ncclInvalidArgument";
    case 5: return "ncclInvalidUsage";
    case 6: return "ncclRemoteError";
    case 7: return "ncclInProgress";
    default: return "unknown ncclResult_t";
  }
}

/// The message of an nccl_error for `call` (its source text) that returned `status`.
/// `description` is ncclGetErrorString(status), `last_error` ncclGetLastError(...) (may be null).
[[nodiscard]] inline std::string nccl_failure_message(int status, const char* description,
                                                      const char* last_error, const char* call,
                                                      const char* file, int line) {
  std::string m = std::string("ncclz: ") + call + " failed: " + nccl_result_name(status) + " (" +
                  (description != nullptr ? description : "?") + ") at " + file + ":" +
                  std::to_string(line);
  if (last_error != nullptr && last_error[0] != '\0') m += "; last NCCL error: " + std::string(last_error);
  if (status == 7) {
    m += "; the communicator is non-blocking (config.blocking = 0): wait for the call with "
         "NCCLZ_NCCL_TRY_COMM (ncclz/detail/comm/nccl_wait.hpp) instead";
  }
  return m;
}

[[noreturn]] inline void throw_invalid(const char* function, const std::string& message) {
  throw invalid_argument(std::string("ncclz::") + function + ": " + message);
}
}  // namespace detail

}  // namespace ncclz

#if defined(__CUDACC__) || defined(NCCLZ_WITH_CUDA_RUNTIME)
#  include <cuda_runtime_api.h>
/// Runs a CUDA runtime call and throws ncclz::cuda_error naming the call on failure.
#  define NCCLZ_CUDA_TRY(call)                                                                  \
    do {                                                                                        \
      const cudaError_t ncclz_status_ = (call);                                                 \
      if (ncclz_status_ != cudaSuccess) {                                                       \
        throw ::ncclz::cuda_error(static_cast<int>(ncclz_status_),                              \
                                  std::string("ncclz: ") + #call + " failed: " +                \
                                      cudaGetErrorName(ncclz_status_) + " (" +                  \
                                      cudaGetErrorString(ncclz_status_) + ") at " + __FILE__ + \
                                      ":" + std::to_string(__LINE__));                          \
      }                                                                                         \
    } while (0)
/// The same for destructors and other places that must not throw: the error is dropped.
#  define NCCLZ_CUDA_TRY_NO_THROW(call) static_cast<void>(call)
#endif

// NCCL checks. The macros name NCCL only where they are used, so this header does not include
// nccl.h; a translation unit that makes NCCL calls includes it anyway.
/// Runs an NCCL call and throws ncclz::nccl_error naming the call on any result but ncclSuccess.
/// For a non-blocking communicator use NCCLZ_NCCL_TRY_COMM (ncclz/detail/comm/nccl_wait.hpp), which
/// waits out ncclInProgress.
#define NCCLZ_NCCL_TRY(call)                                                                  \
  do {                                                                                        \
    const ncclResult_t ncclz_nccl_status_ = (call);                                           \
    if (ncclz_nccl_status_ != ncclSuccess) {                                                  \
      throw ::ncclz::nccl_error(                                                              \
          static_cast<int>(ncclz_nccl_status_),                                               \
          ::ncclz::detail::nccl_failure_message(static_cast<int>(ncclz_nccl_status_),         \
                                                ncclGetErrorString(ncclz_nccl_status_),       \
                                                ncclGetLastError(nullptr), #call, __FILE__,   \
                                                __LINE__));                                   \
    }                                                                                         \
  } while (0)
/// The same for destructors and other places that must not throw: the error is dropped.
#define NCCLZ_NCCL_TRY_NO_THROW(call) static_cast<void>(call)
