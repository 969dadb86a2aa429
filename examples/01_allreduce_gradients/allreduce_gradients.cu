// 01_allreduce_gradients: sum gradient-like vectors over all ranks with ncclz, as a data-parallel
// training step would, and check the result against the exact sum.
//
//   scripts/emulated_cluster.sh -n 4 -- build/examples/01_allreduce_gradients [COUNT] [ABS_BOUND]
//
// Every rank makes its "gradient" from a seed all ranks know (heavy-tailed noise around a small
// shared signal, a quarter of it exactly zero, as after sparsification), so every rank can compute
// every other rank's input and the exact float64 sum. ncclz::Communicator sums with an absolute
// bound: each element of the result is within ABS_BOUND (plus one ulp) of the exact sum. Exits
// non-zero on any element outside the bound, 77 without a GPU.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "ncclz/bootstrap.hpp"
#include "ncclz/ncclz.cuh"

namespace {

std::vector<float> gradient(int rank, std::size_t count) {
  std::mt19937_64 rng(0x5eed0000u + static_cast<unsigned>(rank));
  std::student_t_distribution<float> heavy(3.0f);
  std::uniform_int_distribution<int> quarter(0, 3);
  std::vector<float> g(count);
  for (std::size_t i = 0; i < count; ++i) {
    const float signal = 1e-2f * std::sin(static_cast<float>(i) * 1e-3f);
    g[i] = quarter(rng) == 0 ? 0.0f : signal + 1e-3f * heavy(rng);
  }
  return g;
}

}  // namespace

int main(int argc, char** argv) try {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  const std::size_t count = argc > 1 ? std::stoull(argv[1]) : std::size_t{16} << 20;
  const double bound = argc > 2 ? std::stod(argv[2]) : 1e-5;

  ncclz::cluster_comm cc;  // rank and peers from the launcher's environment
  cudaStream_t stream;
  NCCLZ_CUDA_TRY(cudaStreamCreate(&stream));

  // The three lines a training loop adds: the codec (an absolute bound; the entropy coder left to
  // the library, which times its coders and NCCL's own allreduce), the communicator over its own
  // NCCL communicator, and the call in place of ncclAllReduce.
  using Codec = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>>;
  ncclz::Communicator<Codec> comm(cc.comm());
  const std::vector<float> mine = gradient(cc.rank(), count);
  float* d_grad = nullptr;
  NCCLZ_CUDA_TRY(cudaMalloc(&d_grad, count * sizeof(float)));
  NCCLZ_CUDA_TRY(cudaMemcpy(d_grad, mine.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  comm.allreduce(d_grad, d_grad, count, ncclSum, bound, stream);
  comm.check(stream);

  std::vector<float> sum(count);
  NCCLZ_CUDA_TRY(cudaMemcpy(sum.data(), d_grad, count * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<double> exact(count, 0.0);
  for (int r = 0; r < cc.nranks(); ++r) {
    const std::vector<float> g = gradient(r, count);
    for (std::size_t i = 0; i < count; ++i) exact[i] += g[i];
  }
  std::size_t bad = 0;
  double max_err = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double err = std::fabs(sum[i] - exact[i]);
    const double ulp = std::fabs(std::nextafter(static_cast<float>(exact[i]), INFINITY) - static_cast<float>(exact[i]));
    max_err = std::max(max_err, err);
    bad += !(err <= bound + ulp);
  }
  const ncclz::call_info info = comm.last_call();
  if (cc.rank() == 0) {
    std::printf("%d ranks, %zu values: ratio %.2f, %llu bytes sent by rank 0 (NCCL's ring: %zu), max error %.3g <= %.3g: %s\n",
                cc.nranks(), count, info.ratio, static_cast<unsigned long long>(info.bytes_sent),
                2 * count * sizeof(float) * (cc.nranks() - 1) / cc.nranks(), max_err, bound, bad == 0 ? "ok" : "VIOLATED");
  }
  cudaFree(d_grad);
  NCCLZ_CUDA_TRY(cudaStreamDestroy(stream));
  return bad == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "01_allreduce_gradients: %s\n", e.what());
  return 2;
}
