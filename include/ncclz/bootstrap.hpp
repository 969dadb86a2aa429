// Making an NCCL communicator for examples, tests and benchmarks. Production users bring their own
// ncclComm_t and never need this header.
//
//   ncclz::cluster_comm cc(ncclz::rank_from_environment(), std::chrono::seconds(120));
//   NCCLZ_NCCL_TRY_COMM(cc.comm(), ncclAllReduce(x, y, n, ncclFloat, ncclSum, cc.comm(), stream));
//   cc.synchronize(stream);
//
// Rank and rank count come from the launcher's environment (rank_from_environment); rank 0 makes
// the ncclUniqueId and hands it to the others through a file (NCCLZ_BOOTSTRAP_FILE, written
// atomically; scripts/emulated_cluster.sh sets it) or, in a TU that defines NCCLZ_WITH_MPI and
// while MPI runs (mpi_environment starts it under mpirun), through MPI_Bcast. cluster_comm then creates a *non-blocking* communicator (config.blocking = 0) and
// polls it with a timeout, so a rank that never comes is an error rather than a hang.
//
// Because the communicator is non-blocking, any NCCL call on it may answer ncclInProgress: check
// calls with cluster_comm::check or NCCLZ_NCCL_TRY_COMM (ncclz/detail/comm/nccl_wait.hpp), not with
// NCCLZ_NCCL_TRY; and wait for streams with cluster_comm::synchronize, which watches the
// communicator for errors while it waits (as nccl-tests does) instead of cudaStreamSynchronize.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "ncclz/detail/comm/bootstrap_file.hpp"
#include "ncclz/detail/comm/nccl_wait.hpp"
#include "ncclz/error.hpp"

#if defined(NCCLZ_WITH_MPI)
#  if defined(__has_include)
#    if !__has_include(<mpi.h>)
#      error "NCCLZ_WITH_MPI is defined but <mpi.h> is not on the include path: build with mpicxx, or add -I/usr/lib/x86_64-linux-gnu/openmpi/include (Open MPI on Debian/Ubuntu)"
#    endif
#  endif
#  if !defined(OMPI_SKIP_MPICXX)
#    define OMPI_SKIP_MPICXX 1  // the deprecated MPI C++ bindings are not needed, and warn
#  endif
#  if !defined(MPICH_SKIP_MPICXX)
#    define MPICH_SKIP_MPICXX 1
#  endif
#  include <mpi.h>
#endif

namespace ncclz {

static_assert(sizeof(ncclUniqueId) == detail::comm::unique_id_bytes, "ncclUniqueId is not 128 bytes in this NCCL");

namespace detail {
// NCCLZ_CUDA_TRY is defined only for CUDA compilers (or with NCCLZ_WITH_CUDA_RUNTIME), and this
// header must also work in plain C++ translation units, so it checks its few CUDA calls itself.
inline void bootstrap_cuda_try(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  throw cuda_error(static_cast<int>(status), std::string("ncclz: ") + call + " failed: " + cudaGetErrorName(status) +
                                                 " (" + cudaGetErrorString(status) + ")");
}
}  // namespace detail

/// Rank 0 makes an ncclUniqueId (ncclGetUniqueId) and writes it atomically to `path`; the other
/// ranks poll for the file every 10 ms and throw ncclz::error naming the path after `timeout`.
/// A single rank needs no file (`path` may be empty). `path` must not exist from an earlier launch
/// with the same rank count (scripts/emulated_cluster.sh gives a fresh one per launch).
[[nodiscard]] inline ncclUniqueId exchange_unique_id(rank_info who, const std::string& path,
                                                     std::chrono::milliseconds timeout) {
  detail::comm::validate_rank_info("exchange_unique_id", who);
  ncclUniqueId id{};
  if (who.nranks == 1) {
    NCCLZ_NCCL_TRY(ncclGetUniqueId(&id));
    return id;
  }
  if (path.empty()) detail::throw_invalid("exchange_unique_id", "empty path with more than one rank");
  detail::comm::unique_id_blob blob{};
  if (who.rank == 0) {
    NCCLZ_NCCL_TRY(ncclGetUniqueId(&id));
    std::memcpy(blob.data(), &id, sizeof id);
    detail::comm::write_id_file(path, blob, who.nranks);
  } else {
    blob = detail::comm::wait_for_id_file(path, who.nranks, timeout);
    std::memcpy(&id, blob.data(), sizeof id);
  }
  return id;
}

/// exchange_unique_id with the path from NCCLZ_BOOTSTRAP_FILE (default_bootstrap_path).
[[nodiscard]] inline ncclUniqueId exchange_unique_id(rank_info who, std::chrono::milliseconds timeout) {
  return exchange_unique_id(who, default_bootstrap_path(who), timeout);
}

#if defined(NCCLZ_WITH_MPI)
namespace detail {
inline void mpi_try(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw error(std::string("ncclz: ") + call + " failed: " + text);
}
}  // namespace detail

/// MPI_Init for the life of this object when an MPI launcher (mpirun, mpiexec, srun with PMI)
/// started the process and nobody initialized MPI yet; MPI_Finalize when it ends. A process
/// started otherwise (scripts/emulated_cluster.sh, a plain shell) never touches MPI, so one
/// executable serves both launchers: with MPI running, cluster_comm exchanges the id by MPI_Bcast.
class mpi_environment {
 public:
  mpi_environment(int* argc, char*** argv) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized != 0 || !launched_by_mpi()) return;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) throw error("ncclz: MPI_Init failed");
    owned_ = true;
  }
  mpi_environment(const mpi_environment&) = delete;
  mpi_environment& operator=(const mpi_environment&) = delete;
  ~mpi_environment() {
    if (owned_) MPI_Finalize();
  }
  /// Whether MPI is up in this process (this object's or someone else's MPI_Init).
  [[nodiscard]] static bool active() {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    return initialized != 0 && finalized == 0;
  }

 private:
  // Open MPI's mpirun, PMIx, and PMI launchers (MPICH, Intel MPI, srun --mpi=pmi2) set these.
  static bool launched_by_mpi() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
      if (std::getenv(v) != nullptr) return true;
    return false;
  }
  bool owned_ = false;
};

/// Rank and size of `comm`.
[[nodiscard]] inline rank_info rank_from_mpi(MPI_Comm comm) {
  rank_info who{};
  detail::mpi_try(MPI_Comm_rank(comm, &who.rank), "MPI_Comm_rank");
  detail::mpi_try(MPI_Comm_size(comm, &who.nranks), "MPI_Comm_size");
  return who;
}

/// Rank 0 of `comm` makes an ncclUniqueId and broadcasts it (MPI_Bcast). If rank 0 fails to make
/// one, every rank throws (rank 0 broadcasts the failure instead of leaving the others waiting).
[[nodiscard]] inline ncclUniqueId exchange_unique_id_mpi(MPI_Comm comm) {
  const rank_info who = rank_from_mpi(comm);
  struct message {
    int status;  // ncclResult_t of rank 0's ncclGetUniqueId
    ncclUniqueId id;
  } m{};
  if (who.rank == 0) m.status = static_cast<int>(ncclGetUniqueId(&m.id));
  detail::mpi_try(MPI_Bcast(&m, static_cast<int>(sizeof m), MPI_BYTE, 0, comm), "MPI_Bcast of the ncclUniqueId");
  if (m.status != ncclSuccess) {
    throw nccl_error(m.status, std::string("ncclz: ncclGetUniqueId failed on MPI rank 0: ") +
                                   detail::nccl_result_name(m.status) + " (" +
                                   ncclGetErrorString(static_cast<ncclResult_t>(m.status)) + ")");
  }
  return m.id;
}
#endif

namespace detail {
/// Whether this translation unit bootstraps through MPI: built with NCCLZ_WITH_MPI and MPI is up.
inline bool mpi_running() {
#if defined(NCCLZ_WITH_MPI)
  return mpi_environment::active();
#else
  return false;
#endif
}
}  // namespace detail

/// The job's ncclUniqueId for process `who`: by MPI_Bcast over MPI_COMM_WORLD when
/// detail::mpi_running() (whose rank and size must then be `who`'s), else through
/// NCCLZ_BOOTSTRAP_FILE (exchange_unique_id).
[[nodiscard]] inline ncclUniqueId exchange_unique_id_from_launcher(const rank_info& who,
                                                                   std::chrono::milliseconds timeout) {
#if defined(NCCLZ_WITH_MPI)
  if (detail::mpi_running()) {
    const rank_info world = rank_from_mpi(MPI_COMM_WORLD);
    if (world.rank != who.rank || world.nranks != who.nranks) {
      detail::throw_invalid("exchange_unique_id_from_launcher",
                            "rank " + std::to_string(who.rank) + " of " + std::to_string(who.nranks) +
                                " from the environment, but MPI_COMM_WORLD says " + std::to_string(world.rank) +
                                " of " + std::to_string(world.nranks));
    }
    return exchange_unique_id_mpi(MPI_COMM_WORLD);
  }
#endif
  return exchange_unique_id(who, timeout);
}

/// An NCCL communicator for one rank of a job, made and destroyed safely (RAII).
///
/// The device is `rank % cudaGetDeviceCount()`, or NCCLZ_DEVICE when that is set (the launcher's
/// one-GPU-per-rank mode sets it to the rank). The communicator is non-blocking: construction
/// polls ncclCommGetAsyncError until it is ready, and aborts it and throws nccl_error when a
/// `timeout` passes first (a rank that never joins). check() and synchronize() abort it on any
/// error, as NCCL requires; the destructor finalizes and destroys it, or aborts it when it is in
/// an error state or finalizing does not finish within the timeout. It never throws.
class cluster_comm {
 public:
  static constexpr std::chrono::milliseconds default_timeout{std::chrono::minutes(2)};

  /// Exchanges the id and joins: through MPI_COMM_WORLD when this translation unit defines
  /// NCCLZ_WITH_MPI and MPI is running (mpi_environment), through NCCLZ_BOOTSTRAP_FILE otherwise.
  /// `timeout` bounds the exchange and, separately, the communicator's initialization. Rank 0
  /// removes the file once all have joined.
  explicit cluster_comm(rank_info who = rank_from_environment(), std::chrono::milliseconds timeout = default_timeout)
      : cluster_comm(who, exchange_unique_id_from_launcher(who, timeout), timeout) {
    if (who.rank == 0 && who.nranks > 1 && !detail::mpi_running()) {
      // Every rank read the id before the communicator could come up, so the file is spent; a
      // later launch reusing the path must not find it.
      static_cast<void>(::unlink(default_bootstrap_path(who).c_str()));
    }
  }

  /// Joins with an id exchanged elsewhere (exchange_unique_id_mpi, a test harness) on `device`,
  /// or, when it is negative, on the device chosen as select_device says.
  cluster_comm(rank_info who, const ncclUniqueId& id, std::chrono::milliseconds timeout = default_timeout,
               int device = -1)
      : who_(who), timeout_(timeout) {
    detail::comm::validate_rank_info("cluster_comm", who);
    device_ = device >= 0 ? device : select_device(who);
    detail::bootstrap_cuda_try(cudaSetDevice(device_), "cudaSetDevice");
    init(id);
  }

  cluster_comm(const cluster_comm&) = delete;
  cluster_comm& operator=(const cluster_comm&) = delete;
  cluster_comm(cluster_comm&&) = delete;
  cluster_comm& operator=(cluster_comm&&) = delete;

  ~cluster_comm() { release(); }

  [[nodiscard]] ncclComm_t comm() const noexcept { return comm_; }
  [[nodiscard]] int rank() const noexcept { return who_.rank; }
  [[nodiscard]] int nranks() const noexcept { return who_.nranks; }
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  /// True after an error made this object abort the communicator; it is unusable then.
  [[nodiscard]] bool aborted() const noexcept { return aborted_; }

  /// Finishes an NCCL call on this communicator that returned `result` (waiting out
  /// ncclInProgress); on an error or a timeout aborts the communicator and throws nccl_error
  /// naming `call`. Wrap ncclGroupEnd() too: it answers for the group's operations.
  void check(ncclResult_t result, const char* call) {
    ensure_usable(call);
    try {
      detail::comm::nccl_wait(comm_, result, call, timeout_);
    } catch (...) {
      abort();
      throw;
    }
  }

  /// Waits for `stream` while watching the communicator: returns when the stream's work is done;
  /// on an NCCL error reported meanwhile, a CUDA error, or no progress within the timeout, aborts
  /// the communicator (which also stops its kernels) and throws.
  void synchronize(cudaStream_t stream) {
    ensure_usable("cluster_comm::synchronize");
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (;;) {
      const cudaError_t s = cudaStreamQuery(stream);
      if (s != cudaSuccess && s != cudaErrorNotReady) {
        abort();
        detail::bootstrap_cuda_try(s, "cudaStreamQuery in cluster_comm::synchronize (communicator aborted)");
      }
      ncclResult_t state = ncclSuccess;
      const ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
      if (query != ncclSuccess || (state != ncclSuccess && state != ncclInProgress)) {
        const ncclResult_t bad = query != ncclSuccess ? query : state;
        abort();
        detail::comm::throw_nccl(nullptr, bad, "cluster_comm::synchronize", "communicator aborted");
      }
      if (s == cudaSuccess) return;
      if (std::chrono::steady_clock::now() > deadline) {
        abort();
        throw nccl_error(static_cast<int>(ncclInProgress),
                         "ncclz: cluster_comm::synchronize: the stream did not finish within " +
                             std::to_string(timeout_.count()) + " ms on rank " + std::to_string(rank()) + " of " +
                             std::to_string(nranks()) + "; communicator aborted (a peer may be dead)");
      }
      std::this_thread::yield();
    }
  }

  /// Records that the communicator was aborted by someone else (ncclz::Communicator aborts it
  /// when a peer fails), so that this object never touches it again.
  void mark_aborted() noexcept { aborted_ = true; }

  /// Aborts the communicator (ncclCommAbort): stops its kernels and frees it. Idempotent.
  void abort() noexcept {
    if (comm_ != nullptr && !aborted_) NCCLZ_NCCL_TRY_NO_THROW(ncclCommAbort(comm_));
    aborted_ = true;
  }

 private:
  static int select_device(const rank_info& who) {
    int count = 0;
    detail::bootstrap_cuda_try(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (count < 1) throw cuda_error(static_cast<int>(cudaErrorNoDevice), "ncclz::cluster_comm: no CUDA device");
    if (const char* forced = std::getenv("NCCLZ_DEVICE"); forced != nullptr) {
      const int device = detail::comm::parse_env_int("cluster_comm", "NCCLZ_DEVICE", forced);
      if (device >= count) {
        detail::throw_invalid("cluster_comm", "NCCLZ_DEVICE=" + std::to_string(device) + " but this process sees " +
                                                  std::to_string(count) + " CUDA device(s)");
      }
      return device;
    }
    return who.rank % count;
  }

  void init(const ncclUniqueId& id) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const ncclResult_t started = ncclCommInitRankConfig(&comm_, who_.nranks, id, who_.rank, &config);
    if (started != ncclSuccess && started != ncclInProgress) {
      abort();
      detail::comm::throw_nccl(nullptr, started, "ncclCommInitRankConfig(rank " + std::to_string(who_.rank) + " of " +
                                               std::to_string(who_.nranks) + ")");
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (;;) {
      ncclResult_t state = ncclInProgress;
      const ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
      if (query != ncclSuccess || (state != ncclSuccess && state != ncclInProgress)) {
        const ncclResult_t bad = query != ncclSuccess ? query : state;
        abort();
        detail::comm::throw_nccl(nullptr, bad,
                           "ncclCommInitRankConfig(rank " + std::to_string(who_.rank) + " of " +
                               std::to_string(who_.nranks) + ")",
                           "reported by ncclCommGetAsyncError; communicator aborted");
      }
      if (state == ncclSuccess) return;
      if (std::chrono::steady_clock::now() > deadline) {
        abort();
        throw nccl_error(static_cast<int>(ncclInProgress),
                         "ncclz: cluster_comm: rank " + std::to_string(who_.rank) + " of " +
                             std::to_string(who_.nranks) + " timed out after " + std::to_string(timeout_.count()) +
                             " ms in ncclCommInitRankConfig (not every rank joined: is one missing, or using "
                             "another bootstrap id?); communicator aborted");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  void ensure_usable(const char* call) const {
    if (aborted_ || comm_ == nullptr) {
      throw nccl_error(static_cast<int>(ncclInvalidUsage),
                       std::string("ncclz: ") + call + ": the communicator was aborted after an earlier error");
    }
  }

  // Finalize, then destroy; abort instead when that fails or hangs (detail::comm::finalize_or_abort).
  void release() noexcept {
    if (comm_ == nullptr || aborted_) return;
    if (!detail::comm::finalize_or_abort(comm_, timeout_)) aborted_ = true;
    comm_ = nullptr;
  }

  rank_info who_{};
  std::chrono::milliseconds timeout_{};
  int device_ = -1;
  ncclComm_t comm_ = nullptr;
  bool aborted_ = false;
};

}  // namespace ncclz
