// 00_compress_field: compress a field on the GPU with a relative error bound, decompress it, and
// check every value against the bound.
//
//   build/examples/00_compress_field [FILE.f32] [REL_BOUND]
//
// With no file it makes a smooth 2D field of 64 Mi values. FILE.f32 is raw little-endian float32
// (tools/make_datasets.sh data writes real climate fields in that form). Exits non-zero if any
// value misses the bound, 77 without a GPU.
#include <ncclz/ncclz.cuh>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv) try {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  std::vector<float> field;
  if (argc > 1) {
    std::ifstream f(argv[1], std::ios::binary | std::ios::ate);
    if (!f) throw std::runtime_error(std::string("cannot open ") + argv[1]);
    field.resize(static_cast<std::size_t>(f.tellg()) / sizeof(float));
    f.seekg(0);
    f.read(reinterpret_cast<char*>(field.data()), static_cast<std::streamsize>(field.size() * sizeof(float)));
  } else {
    const std::size_t nx = 8192, ny = 8192;
    const double phase = std::random_device{}() % 6283 / 1000.0;
    field.resize(nx * ny);
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x)
        field[y * nx + x] = static_cast<float>(std::sin(x * 2e-3 + phase) * std::cos(y * 3e-3) * 20.0 + 0.01 * x);
  }
  const double rel = argc > 2 ? std::stod(argv[2]) : 1e-3;
  const std::size_t n = field.size();

  // The four lines a user writes: pick the codec, own a compressor, compress, decompress.
  using Codec = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
  ncclz::Compressor<Codec, float> compressor(n);
  float *d_in = nullptr, *d_out = nullptr;
  void* d_chunk = nullptr;
  const std::size_t capacity = ncclz::max_compressed_bytes<float>(n);
  NCCLZ_CUDA_TRY(cudaMalloc(&d_in, n * sizeof(float)));
  NCCLZ_CUDA_TRY(cudaMalloc(&d_out, n * sizeof(float)));
  NCCLZ_CUDA_TRY(cudaMalloc(&d_chunk, capacity));
  NCCLZ_CUDA_TRY(cudaMemcpy(d_in, field.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  compressor.compress(d_in, n, d_chunk, capacity, rel);
  const std::uint64_t bytes = compressor.compressed_bytes();
  compressor.decompress(d_chunk, bytes, d_out, n);
  compressor.check();

  std::vector<float> back(n);
  NCCLZ_CUDA_TRY(cudaMemcpy(back.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  ncclz::format::chunk_header header;
  NCCLZ_CUDA_TRY(cudaMemcpy(&header, d_chunk, sizeof header, cudaMemcpyDeviceToHost));
  std::size_t violations = 0;
  double max_err = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(field[i])) {
      violations += !std::isnan(back[i]);
      continue;
    }
    const double err = std::fabs(static_cast<double>(field[i]) - back[i]);
    max_err = std::max(max_err, err);
    violations += !(err <= header.error_bound);
  }
  std::printf("%zu values, REL %.0e: %llu bytes, ratio %.2f, max error %.3g <= bound %.3g: %s\n", n, rel,
              static_cast<unsigned long long>(bytes), double(n * sizeof(float)) / double(bytes), max_err,
              header.error_bound, violations == 0 ? "ok" : "VIOLATED");
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_chunk);
  return violations == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "00_compress_field: %s\n", e.what());
  return 2;
}
