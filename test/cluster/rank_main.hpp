// The main() of a multi-rank test program (one process per rank, scripts/emulated_cluster.sh):
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
    return run();
  } catch (const std::exception& e) {
    const char* rank = std::getenv("NCCLZ_RANK");
    std::fprintf(stderr, "%s: rank %s FAILED: %s\n", program, rank != nullptr ? rank : "?", e.what());
    return 1;
  }
}

}  // namespace ncclz::test
