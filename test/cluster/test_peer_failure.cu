// A rank that dies in the middle of a job must not hang the others: the last rank exits without
// calling the second allreduce (std::_Exit, no NCCL teardown, as a crash leaves it); every other
// rank must get an ncclz::error from Communicator::allreduce within the configured timeout, with
// the communicator aborted, and later calls refused. Exit 0 when that holds on this rank
// (the dying rank exits 0 too, so the launcher judges only the survivors), 1 otherwise, 77
// without a GPU.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ncclz/bootstrap.hpp"
#include "ncclz/ncclz.cuh"
#include "rank_main.hpp"

namespace {

using RelFL = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
constexpr auto kTimeout = std::chrono::seconds(10);

int run() {
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // a rank stopped by the launcher still shows how far it got
  ncclz::cluster_comm cc(ncclz::rank_from_environment());
  cudaStream_t stream;
  NCCLZ_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ncclz::communicator_config config;
  config.timeout = kTimeout;
  config.fallback_below_bytes = 0;
  config.autotune = false;
  ncclz::Communicator<RelFL> comm(cc.comm(), config);

  const std::size_t count = std::size_t{1} << 20;
  std::vector<float> input(count);
  for (std::size_t i = 0; i < count; ++i) input[i] = static_cast<float>(cc.rank() + 1) * std::sin(i * 1e-3f);
  float* d = nullptr;
  NCCLZ_CUDA_TRY(cudaMalloc(&d, count * sizeof(float)));
  NCCLZ_CUDA_TRY(cudaMemcpy(d, input.data(), count * sizeof(float), cudaMemcpyHostToDevice));

  // First call on all ranks: every connection is up before the failure.
  comm.allreduce(d, d, count, ncclSum, 1e-3, stream);
  comm.check(stream);
  if (cc.rank() == cc.nranks() - 1) {
    std::printf("rank %d: exiting without calling the second allreduce (simulated crash)\n", cc.rank());
    std::fflush(stdout);
    std::_Exit(0);
  }

  std::printf("rank %d: second allreduce (the last rank is gone)\n", cc.rank());
  const auto start = std::chrono::steady_clock::now();
  bool threw = false;
  try {
    comm.allreduce(d, d, count, ncclSum, 1e-3, stream);
    comm.check(stream);
  } catch (const ncclz::error& e) {
    threw = true;
    std::printf("rank %d: got the error after %.1f s: %s\n", cc.rank(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), e.what());
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bool ok = threw && comm.aborted() && waited < 2.0 * std::chrono::duration<double>(kTimeout).count();
  if (comm.aborted()) cc.mark_aborted();  // ncclCommAbort freed it; cluster_comm must not touch it
  try {
    comm.allgather(d, d, 0, 1e-3, stream);
    ok = false;
    std::printf("rank %d: a call after the abort did not throw\n", cc.rank());
  } catch (const ncclz::error&) {
  }
  std::printf("rank %d/%d: %s (threw %d, aborted %d, %.1f s); releasing buffers\n", cc.rank(), cc.nranks(),
              ok ? "ok" : "FAILED", threw, comm.aborted(), waited);
  NCCLZ_CUDA_TRY(cudaFree(d));
  return ok ? 0 : 1;
}

}  // namespace

int main() { return ncclz::test::rank_main("test_peer_failure", run); }
