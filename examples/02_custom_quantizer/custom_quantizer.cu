// 02_custom_quantizer: plug a quantizer of your own into ncclz.
//
//   build/examples/02_custom_quantizer
//
// PowerOfTwoStep keeps an absolute bound like AbsBound, but rounds the step down to a power of two,
// so dequantization (code * step) is exact in floating point and identical on any machine, at the
// price of up to one bit of ratio. A quantizer is a class with the members the
// ncclz::QuantizerPolicy concept lists (the compiler names any that is missing; see
// test/compile_fail/). Its functions run on host and device, so they are NCCLZ_HOST_DEVICE.
// The example compresses a smooth field with it, decompresses, and checks every value.
#include <cmath>
#include <cstdio>
#include <vector>

#include "ncclz/ncclz.cuh"

struct PowerOfTwoStep {
  static constexpr ncclz::quantizer_id id = ncclz::quantizer_id::user;  // recorded in the chunk header
  static constexpr bool needs_range = false;                            // make_params ignores the range
  static constexpr const char* name = "power_of_two_step";

  template <class T>
  NCCLZ_HOST_DEVICE static ncclz::quant_params<T> make_params(double bound, ncclz::value_range<T> range) {
    // AbsBound's parameters for the largest bound whose step 2 * bound is a power of two.
    const double step = exp2(floor(log2(2.0 * bound)));
    ncclz::quant_params<T> p = ncclz::Quantizer<ncclz::AbsBound>::make_params<T>(step / 2, range);
    p.bound = bound;
    return p;
  }
  template <class T>
  NCCLZ_HOST_DEVICE static bool quantize(T x, const ncclz::quant_params<T>& p, std::int32_t& code) {
    return ncclz::Quantizer<ncclz::AbsBound>::quantize<T>(x, p, code);
  }
  template <class T>
  NCCLZ_HOST_DEVICE static T dequantize(std::int32_t code, const ncclz::quant_params<T>& p) {
    return static_cast<T>(code) * p.step;  // exact: the step is a power of two
  }
};
static_assert(ncclz::QuantizerPolicy<PowerOfTwoStep>);

int main() try {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  using Codec = ncclz::Codec<PowerOfTwoStep, ncclz::EntropyCoder<ncclz::FixedLength>>;
  const std::size_t n = std::size_t{1} << 24;
  const double bound = 3e-3;
  std::vector<float> field(n);
  for (std::size_t i = 0; i < n; ++i) field[i] = static_cast<float>(std::sin(i * 1e-4) * 40.0 + std::cos(i * 3e-3));

  ncclz::Compressor<Codec, float> codec(n);
  float *d_in = nullptr, *d_out = nullptr;
  void* d_chunk = nullptr;
  const std::size_t capacity = ncclz::max_compressed_bytes<float>(n);
  NCCLZ_CUDA_TRY(cudaMalloc(&d_in, n * sizeof(float)));
  NCCLZ_CUDA_TRY(cudaMalloc(&d_out, n * sizeof(float)));
  NCCLZ_CUDA_TRY(cudaMalloc(&d_chunk, capacity));
  NCCLZ_CUDA_TRY(cudaMemcpy(d_in, field.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  codec.compress(d_in, n, d_chunk, capacity, bound);
  const std::uint64_t bytes = codec.compressed_bytes();
  codec.decompress(d_chunk, bytes, d_out, n);
  codec.check();
  std::vector<float> back(n);
  NCCLZ_CUDA_TRY(cudaMemcpy(back.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::size_t bad = 0;
  double max_err = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double err = std::fabs(static_cast<double>(field[i]) - back[i]);
    max_err = std::max(max_err, err);
    bad += !(err <= bound);
  }
  std::printf("PowerOfTwoStep, bound %.1e: ratio %.2f, max error %.3g: %s\n", bound, double(n * sizeof(float)) / bytes,
              max_err, bad == 0 ? "ok" : "VIOLATED");
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_chunk);
  return bad == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "02_custom_quantizer: %s\n", e.what());
  return 2;
}
