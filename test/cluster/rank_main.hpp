// The main() of a multi-rank test program (one process per rank, scripts/emulated_cluster.sh):
// exit 77 where there is no GPU to use (CI machines), so meson reports a skip; any other failure
// to reach the GPU, such as an MPS server that does not answer, is an error, not a skip; an
// exception fails this rank with its message.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace ncclz::test {

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
