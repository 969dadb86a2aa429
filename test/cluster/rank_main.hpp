// The main() of a multi-rank test program (one process per rank, scripts/emulated_cluster.sh, or
// mpirun in a build with -Dmpi):
// exit 77 where there is no GPU to use (CI machines), so meson reports a skip; any other failure
// to reach the GPU, such as an MPS server that does not answer, is an error, not a skip; an
// exception fails this rank with its message.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include <ncclz/bootstrap.hpp>
#include <ncclz/error.hpp>

namespace ncclz::test {

/// A device buffer of n values (at least one, so the pointer is never null), freed on scope exit.
template <class T>
struct device_array {
  T* ptr = nullptr;
  explicit device_array(std::size_t n) { NCCLZ_CUDA_TRY(cudaMalloc(&ptr, std::max<std::size_t>(n, 1) * sizeof(T))); }
  ~device_array() { NCCLZ_CUDA_TRY_NO_THROW(cudaFree(ptr)); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
};

/// One seed for every rank: NCCLZ_TEST_SEED, or a fresh one, chosen on rank 0 (which prints it)
/// and broadcast.
inline std::uint64_t shared_seed(ncclz::cluster_comm& cc, cudaStream_t stream, const char* program) {
  std::uint64_t seed = 0;
  if (cc.rank() == 0) {
    if (const char* s = std::getenv("NCCLZ_TEST_SEED")) seed = std::strtoull(s, nullptr, 0);
    else seed = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
    std::printf("%s: %d ranks, seed 0x%llx (NCCLZ_TEST_SEED reproduces it)\n", program, cc.nranks(),
                static_cast<unsigned long long>(seed));
  }
  device_array<std::uint64_t> d(1);
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(d.ptr, &seed, sizeof seed, cudaMemcpyHostToDevice, stream));
  cc.check(ncclBroadcast(d.ptr, d.ptr, 1, ncclUint64, 0, cc.comm(), stream), "ncclBroadcast(seed)");
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(&seed, d.ptr, sizeof seed, cudaMemcpyDeviceToHost, stream));
  cc.synchronize(stream);
  return seed;
}

/// A hash of this rank's `bytes` at `data`, gathered from all ranks: true when all are equal.
inline bool same_on_all_ranks(ncclz::cluster_comm& cc, const void* data, std::size_t bytes, cudaStream_t stream) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  device_array<std::uint64_t> d(static_cast<std::size_t>(cc.nranks()));
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(d.ptr + cc.rank(), &h, sizeof h, cudaMemcpyHostToDevice, stream));
  cc.check(ncclAllGather(d.ptr + cc.rank(), d.ptr, 1, ncclUint64, cc.comm(), stream), "ncclAllGather(hash)");
  std::vector<std::uint64_t> all(static_cast<std::size_t>(cc.nranks()));
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(all.data(), d.ptr, all.size() * sizeof h, cudaMemcpyDeviceToHost, stream));
  cc.synchronize(stream);
  return std::all_of(all.begin(), all.end(), [&](std::uint64_t x) { return x == all[0]; });
}

/// This process's rank for messages, from whichever launcher started it.
inline std::string rank_name() {
  try {
    return std::to_string(rank_from_environment().rank);
  } catch (const std::exception&) {
    return "?";
  }
}

template <class Run>
int rank_main(const char* program, Run&& run) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver || (status == cudaSuccess && devices == 0)) {
    std::printf("SKIP: no CUDA device (%s)\n", status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
    return 77;
  }
  if (status != cudaSuccess) {
    const char* mps = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
    std::fprintf(stderr, "%s: cudaGetDeviceCount failed: %s (%s)%s\n", program, cudaGetErrorName(status),
                 cudaGetErrorString(status), mps != nullptr ? "; MPS is on: does its server run? (try --no-mps)" : "");
    return 1;
  }
  try {
#if defined(NCCLZ_WITH_MPI)
    const ncclz::mpi_environment mpi(nullptr, nullptr);  // under mpirun: cluster_comm bootstraps by MPI
#endif
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: rank %s FAILED: %s\n", program, rank_name().c_str(), e.what());
    return 1;
  }
}

}  // namespace ncclz::test
