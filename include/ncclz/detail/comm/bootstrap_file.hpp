// The parts of the bootstrap (ncclz/bootstrap.hpp) that need neither CUDA nor NCCL, so host tests
// can check them: which rank am I (from the launcher's environment), and the file through which
// rank 0 hands the 128-byte ncclUniqueId to the other ranks.
//
// The file is written atomically: rank 0 writes `<path>.tmp.<pid>`, fsyncs it and renames it to
// `<path>`, so a reader sees either no file or the whole file. Readers poll every 10 ms until a
// timeout. The file holds a magic, the rank count and the id, so a file left by an earlier launch
// with another rank count is caught; one left by a launch with the same count is not, which is why
// the path must be fresh for every launch (scripts/emulated_cluster.sh makes one; cluster_comm
// removes the file once every rank has joined).
//
// POSIX only (open/fsync/rename), like NCCL itself.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "ncclz/error.hpp"

namespace ncclz {

/// Where this process sits in the job: rank in [0, nranks).
struct rank_info {
  int rank;
  int nranks;
};

namespace detail::comm {

/// Parses the value of environment variable `name` as a non-negative decimal int; throws
/// invalid_argument naming `function`, the variable and the value otherwise.
[[nodiscard]] inline int parse_env_int(const char* function, const char* name, const char* value) {
  const std::string text = value != nullptr ? value : "";
  int parsed = -1;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(first, last, parsed);
  if (text.empty() || ec != std::errc{} || end != last || parsed < 0) {
    throw_invalid(function, std::string(name) + "='" + text + "' is not a non-negative decimal integer");
  }
  return parsed;
}

/// Checks that `who` describes a rank of a job; throws invalid_argument naming `function`.
inline void validate_rank_info(const char* function, const rank_info& who) {
  if (who.nranks < 1) throw_invalid(function, "nranks = " + std::to_string(who.nranks) + ", must be at least 1");
  if (who.rank < 0 || who.rank >= who.nranks) {
    throw_invalid(function, "rank = " + std::to_string(who.rank) + " is outside [0, nranks = " +
                                std::to_string(who.nranks) + ")");
  }
}

}  // namespace detail::comm

/// This process's rank and the rank count, from the first of these pairs of environment
/// variables that is set:
///   NCCLZ_RANK / NCCLZ_NRANKS                        (scripts/emulated_cluster.sh)
///   OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE      (Open MPI's mpirun)
///   PMI_RANK / PMI_SIZE                              (MPICH, Intel MPI and other PMI launchers)
///   SLURM_PROCID / SLURM_NTASKS                      (srun)
/// and rank 0 of 1 when none is. Throws invalid_argument when a value is not a non-negative decimal
/// integer, the count is 0, the rank is not below the count, only one of NCCLZ_RANK and
/// NCCLZ_NRANKS is set, or another launcher's rank is set without its count. Another launcher's
/// count alone is skipped: an salloc shell, for one, has SLURM_NTASKS without SLURM_PROCID. (An sbatch script has both, SLURM_PROCID=0: start the ranks
/// with srun, or a process there takes itself for rank 0 of SLURM_NTASKS and waits for the rest.)
[[nodiscard]] inline rank_info rank_from_environment() {
  constexpr const char* function = "rank_from_environment";
  struct source {
    const char* rank;
    const char* size;
  };
  constexpr source sources[] = {{"NCCLZ_RANK", "NCCLZ_NRANKS"},
                                {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                {"PMI_RANK", "PMI_SIZE"},
                                {"SLURM_PROCID", "SLURM_NTASKS"}};
  for (const source& s : sources) {
    const char* rank = std::getenv(s.rank);
    const char* size = std::getenv(s.size);
    if (rank == nullptr && size == nullptr) continue;
    if (rank == nullptr || size == nullptr) {
      // Another launcher's count without its rank is a shell that starts no ranks (salloc has
      // SLURM_NTASKS alone); a rank without its count is a broken launch, not a one-rank job.
      if (&s != &sources[0] && rank == nullptr) continue;
      detail::throw_invalid(function, std::string(rank != nullptr ? s.rank : s.size) + " is set but " +
                                          (rank != nullptr ? s.size : s.rank) + " is not");
    }
    const rank_info who{detail::comm::parse_env_int(function, s.rank, rank), detail::comm::parse_env_int(function, s.size, size)};
    if (who.nranks < 1) detail::throw_invalid(function, std::string(s.size) + "=0: a job has at least one rank");
    if (who.rank >= who.nranks) {
      detail::throw_invalid(function, std::string(s.rank) + "=" + std::to_string(who.rank) + " is not below " +
                                          s.size + "=" + std::to_string(who.nranks));
    }
    return who;
  }
  return {0, 1};
}

/// The bootstrap file named by NCCLZ_BOOTSTRAP_FILE. A single rank needs none and gets "" when
/// the variable is unset; with more ranks an unset variable is an invalid_argument.
[[nodiscard]] inline std::string default_bootstrap_path(const rank_info& who) {
  const char* path = std::getenv("NCCLZ_BOOTSTRAP_FILE");
  if (path != nullptr && path[0] != '\0') return path;
  if (who.nranks > 1) {
    detail::throw_invalid("default_bootstrap_path",
                          "NCCLZ_BOOTSTRAP_FILE is not set, and rank " + std::to_string(who.rank) + " of " +
                              std::to_string(who.nranks) +
                              " needs it: set it to a path that every rank can see and that does not "
                              "exist yet (scripts/emulated_cluster.sh does), or exchange the id "
                              "another way (exchange_unique_id_mpi)");
  }
  return {};
}

namespace detail::comm {

/// Size of ncclUniqueId (NCCL_UNIQUE_ID_BYTES); bootstrap.hpp checks that the two agree.
inline constexpr std::size_t unique_id_bytes = 128;
using unique_id_blob = std::array<unsigned char, unique_id_bytes>;

/// Layout of the bootstrap file: magic, rank count and id size (little-endian u32), id.
inline constexpr char id_file_magic[8] = {'N', 'C', 'C', 'L', 'Z', 'I', 'D', '1'};
inline constexpr std::size_t id_file_bytes = 8 + 4 + 4 + unique_id_bytes;

[[nodiscard]] inline std::string errno_text(int e) { return std::generic_category().message(e); }

inline void put_u32(unsigned char* at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<unsigned char>(v >> (8 * i));
}
[[nodiscard]] inline std::uint32_t get_u32(const unsigned char* at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{at[i]} << (8 * i);
  return v;
}

/// Writes `id` for a job of `nranks` ranks to `path` atomically (temporary file, fsync, rename).
/// Throws ncclz::error naming the path and the failing call.
inline void write_id_file(const std::string& path, const unique_id_blob& id, int nranks) {
  constexpr const char* where = "ncclz::exchange_unique_id: ";
  std::array<unsigned char, id_file_bytes> bytes{};
  std::memcpy(bytes.data(), id_file_magic, sizeof id_file_magic);
  put_u32(bytes.data() + 8, static_cast<std::uint32_t>(nranks));
  put_u32(bytes.data() + 12, static_cast<std::uint32_t>(unique_id_bytes));
  std::memcpy(bytes.data() + 16, id.data(), id.size());

  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int e = errno;
    throw error(where + std::string("cannot create '") + tmp + "': " + errno_text(e) +
                " (is the folder of NCCLZ_BOOTSTRAP_FILE there and writable?)");
  }
  const auto fail = [&](const char* call, int e) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw error(where + std::string(call) + " on '" + tmp + "' failed: " + errno_text(e));
  };
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write", n < 0 ? errno : EIO);
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail("fsync", errno);
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw error(where + std::string("close on '") + tmp + "' failed: " + errno_text(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw error(where + std::string("rename '") + tmp + "' -> '" + path + "' failed: " + errno_text(e));
  }
  // Make the rename itself durable (matters on some shared file systems); best effort.
  const std::string::size_type slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    static_cast<void>(::fsync(dfd));
    ::close(dfd);
  }
}

/// Reads the id from `path` if the file is there yet (std::nullopt if not). Throws ncclz::error
/// when it cannot be read, is not a bootstrap file, or was written for another rank count.
[[nodiscard]] inline std::optional<unique_id_blob> try_read_id_file(const std::string& path, int nranks) {
  constexpr const char* where = "ncclz::exchange_unique_id: ";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return std::nullopt;
    throw error(where + std::string("cannot open '") + path + "': " + errno_text(e));
  }
  std::array<unsigned char, id_file_bytes + 1> bytes{};  // one more, to notice a longer file
  std::size_t done = 0;
  for (;;) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw error(where + std::string("read of '") + path + "' failed: " + errno_text(e));
    }
    if (n == 0 || (done += static_cast<std::size_t>(n)) == bytes.size()) break;
  }
  ::close(fd);
  if (done != id_file_bytes || std::memcmp(bytes.data(), id_file_magic, sizeof id_file_magic) != 0 ||
      get_u32(bytes.data() + 12) != unique_id_bytes) {
    throw error(where + std::string("'") + path + "' is not an ncclz bootstrap file (" + std::to_string(done) +
                (done > id_file_bytes ? "+" : "") + " bytes); use a path that does not exist yet");
  }
  const std::uint32_t written_for = get_u32(bytes.data() + 8);
  if (written_for != static_cast<std::uint32_t>(nranks)) {
    throw error(where + std::string("'") + path + "' was written for " + std::to_string(written_for) +
                " ranks but this job has " + std::to_string(nranks) +
                " (a file left by an earlier launch? use a fresh path for every launch)");
  }
  unique_id_blob id;
  std::memcpy(id.data(), bytes.data() + 16, id.size());
  return id;
}

/// Polls `path` every `poll` until rank 0 has written the id, at least once and for at most
/// `timeout`; then throws ncclz::error naming the path and the timeout.
[[nodiscard]] inline unique_id_blob wait_for_id_file(const std::string& path, int nranks,
                                                     std::chrono::milliseconds timeout,
                                                     std::chrono::milliseconds poll = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (std::optional<unique_id_blob> id = try_read_id_file(path, nranks)) return *id;
    if (std::chrono::steady_clock::now() >= deadline) {
      throw error("ncclz::exchange_unique_id: timed out after " + std::to_string(timeout.count()) +
                  " ms waiting for rank 0 to write the NCCL unique id to '" + path +
                  "' (is rank 0 running, and do all ranks see the same NCCLZ_BOOTSTRAP_FILE?)");
    }
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace detail::comm
}  // namespace ncclz
