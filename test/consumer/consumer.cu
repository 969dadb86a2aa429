// The program every consumer check builds: a project that uses ncclz through one of the ways it is
// offered (Meson subproject, pkg-config, CMake find_package, CMake FetchContent) and adds no flag
// of its own. It compresses and decompresses a field, then allreduces it on a one-rank NCCL
// communicator, and checks both against the bound. Exits 77 without a GPU: there building is the check.
#include <ncclz/ncclz.cuh>

#include <cmath>
#include <cstdio>
#include <vector>

int main() try {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device (ncclz %d.%d.%d consumer built)\n", NCCLZ_VERSION_MAJOR, NCCLZ_VERSION_MINOR,
                NCCLZ_VERSION_PATCH);
    return 77;
  }
  using Codec = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
  const std::size_t n = std::size_t{1} << 20;
  const double bound = 1e-3;
  std::vector<float> field(n);
  for (std::size_t i = 0; i < n; ++i) field[i] = static_cast<float>(std::sin(static_cast<double>(i) * 1e-3));

  float *d_in = nullptr, *d_out = nullptr;
  void* d_chunk = nullptr;
  const std::size_t capacity = ncclz::max_compressed_bytes<float>(n);
  NCCLZ_CUDA_TRY(cudaMalloc(&d_in, n * sizeof(float)));
  NCCLZ_CUDA_TRY(cudaMalloc(&d_out, n * sizeof(float)));
  NCCLZ_CUDA_TRY(cudaMalloc(&d_chunk, capacity));
  NCCLZ_CUDA_TRY(cudaMemcpy(d_in, field.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  std::vector<float> back(n);
  const auto misses = [&] {
    NCCLZ_CUDA_TRY(cudaMemcpy(back.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    std::size_t k = 0;
    for (std::size_t i = 0; i < n; ++i) k += !(std::fabs(static_cast<double>(field[i]) - back[i]) <= bound);
    return k;
  };

  ncclz::Compressor<Codec, float> compressor(n);
  compressor.compress(d_in, n, d_chunk, capacity, bound);
  compressor.decompress(d_chunk, compressor.compressed_bytes(), d_out, n);
  compressor.check();
  const std::size_t codec_misses = misses();

  int device = 0;
  ncclComm_t nccl = nullptr;
  NCCLZ_NCCL_TRY(ncclCommInitAll(&nccl, 1, &device));
  std::size_t allreduce_misses = 0;
  {
    ncclz::communicator_config config;
    config.fallback_below_bytes = 0;  // compress this small call too
    config.autotune = false;
    ncclz::Communicator<Codec> comm(nccl, config);
    comm.allreduce(d_in, d_out, n, ncclSum, bound, cudaStreamPerThread);
    comm.check(cudaStreamPerThread);
    allreduce_misses = misses();
  }
  NCCLZ_NCCL_TRY(ncclCommDestroy(nccl));
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_chunk);
  std::printf("ncclz %d.%d.%d: %zu values, %zu outside the bound after the codec, %zu after the allreduce\n",
              NCCLZ_VERSION_MAJOR, NCCLZ_VERSION_MINOR, NCCLZ_VERSION_PATCH, n, codec_misses, allreduce_misses);
  return codec_misses == 0 && allreduce_misses == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
