// A rank dies mid-job: the last rank exits after the first call of a collective, and every
// survivor must get an ncclz::error from the second call or the check after it within twice the
// configured timeout (at once where the dead peer's socket closes), with the communicator
// aborted, never a hang. One launch a case: test_peer_failure COLLECTIVE VARIANT, with VARIANT
// direct, ring, tree, recursive_doubling, overlap4 (direct reductions in 4 pipeline parts) or nccl (NCCL's own
// collective, the fallback route).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <ncclz/bootstrap.hpp>
#include <ncclz/ncclz.cuh>
#include "codec_kernels.cuh"  // the codecs' kernels, compiled once (src/kernels/)

#include "rank_main.hpp"

namespace {

using RelFL = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
constexpr auto kTimeout = std::chrono::seconds(10);
constexpr std::size_t kCount = std::size_t{1} << 20;

template <class Comm>
int run_case(ncclz::cluster_comm& cc, const std::string& collective, const ncclz::communicator_config& config) {
  cudaStream_t stream;
  NCCLZ_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Comm comm(cc.comm(), config);
  const std::size_t n = static_cast<std::size_t>(cc.nranks());
  std::vector<float> input(kCount * n);
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(cc.rank() + 1) * std::sin(i * 1e-3f);
  float *send = nullptr, *recv = nullptr;
  NCCLZ_CUDA_TRY(cudaMalloc(&send, input.size() * sizeof(float)));
  NCCLZ_CUDA_TRY(cudaMalloc(&recv, input.size() * sizeof(float)));
  NCCLZ_CUDA_TRY(cudaMemcpy(send, input.data(), input.size() * sizeof(float), cudaMemcpyHostToDevice));
  const std::function<void()> call = [&] {
    if (collective == "allreduce") comm.allreduce(send, recv, kCount, ncclSum, 1e-3, stream);
    else if (collective == "reduce_scatter") comm.reduce_scatter(send, recv, kCount / n, ncclSum, 1e-3, stream);
    else if (collective == "reduce") comm.reduce(send, recv, kCount, ncclSum, 0, 1e-3, stream);
    else if (collective == "allgather") comm.allgather(send, recv, kCount, 1e-3, stream);
    else if (collective == "broadcast") comm.broadcast(send, recv, kCount, 0, 1e-3, stream);
    else if (collective == "alltoall") comm.alltoall(send, recv, kCount, 1e-3, stream);
    else throw ncclz::invalid_argument("test_peer_failure: unknown collective " + collective);
  };

  // First call on all ranks: every connection is up before the failure.
  call();
  comm.check(stream);
  if (cc.rank() == cc.nranks() - 1) {
    std::printf("rank %d: exiting without the second %s (simulated crash)\n", cc.rank(), collective.c_str());
    std::fflush(stdout);
    std::_Exit(0);
  }
  const auto start = std::chrono::steady_clock::now();
  bool threw = false;
  try {
    call();
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
    comm.allgather(send, recv, 0, 1e-3, stream);
    ok = false;
    std::printf("rank %d: a call after the abort did not throw\n", cc.rank());
  } catch (const ncclz::error&) {
  }
  std::printf("rank %d/%d: %s %s (threw %d, aborted %d, %.1f s); releasing buffers\n", cc.rank(), cc.nranks(), collective.c_str(),
              ok ? "ok" : "FAILED", threw, comm.aborted(), waited);
  NCCLZ_CUDA_TRY(cudaFree(send));
  NCCLZ_CUDA_TRY(cudaFree(recv));
  return ok ? 0 : 1;
}

int run(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // a rank stopped by the launcher still shows how far it got
  const std::string collective = argc > 1 ? argv[1] : "allreduce";
  const std::string variant = argc > 2 ? argv[2] : "direct";
  ncclz::cluster_comm cc(ncclz::rank_from_environment());
  ncclz::communicator_config config;
  config.timeout = kTimeout;
  config.fallback_below_bytes = variant == "nccl" ? ~std::size_t{0} : 0;
  config.autotune = false;
  namespace s = ncclz::schedule;
  if (variant == "direct" || variant == "nccl") return run_case<ncclz::Communicator<RelFL>>(cc, collective, config);
  if (variant == "ring") return run_case<ncclz::Communicator<RelFL, s::Ring>>(cc, collective, config);
  if (variant == "tree") return run_case<ncclz::Communicator<RelFL, s::Tree>>(cc, collective, config);
  if (variant == "recursive_doubling") return run_case<ncclz::Communicator<RelFL, s::RecursiveDoubling>>(cc, collective, config);
  if (variant == "overlap4") {
    config.pipeline_part_bytes = kCount * sizeof(float) / 4;
    return run_case<ncclz::Communicator<RelFL, s::Auto, ncclz::Pipeline<ncclz::Overlap<4>>>>(cc, collective, config);
  }
  throw ncclz::invalid_argument("test_peer_failure: unknown variant " + variant);
}

}  // namespace

int main(int argc, char** argv) {
  return ncclz::test::rank_main("test_peer_failure", [&] { return run(argc, argv); });
}
