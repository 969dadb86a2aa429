// Every encode of the same input writes the same bytes, the host's: an encoder race between the
// warps of a tile shows as tiles that differ from call to call. The huffman race of 2026-12-01
// (one warp resetting shared state others still read) did not show here, in one process: it
// needed warps held back far, as four MPS clients sharing the SMs do; the cluster test
// check_back_to_back, the same check through the collectives, caught it.
#include <catch2/catch.hpp>

#include <ncclz/host/reference_codec.hpp>
#include <ncclz/ncclz.cuh>

#include "codec_kernels.cuh"  // the codecs' kernels, compiled once (src/kernels/)

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using RelHuf = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Huffman>>;
using RelAd = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Adaptive>>;

/// A smooth field with a little hash noise: small deltas, where huffman wins most tiles.
std::vector<float> smooth_with_noise(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t x = seed ^ (i * 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    v[i] = static_cast<float>(10.0 * std::sin(static_cast<double>(i) * 1e-3) + static_cast<double>(x % 1000) * 1e-5);
  }
  return v;
}

}  // namespace

TEMPLATE_TEST_CASE("device huffman and adaptive encodes write the host bytes on every call", "[gpu][codec][determinism]", RelHuf, RelAd) {
  using Codec = TestType;
  constexpr std::size_t n = std::size_t{2048} * 8192;  // 2048 tiles
  constexpr int kCalls = 12;
  const std::vector<float> in = smooth_with_noise(n, 0x5eed);
  const std::vector<std::byte> host_chunk = ncclz::host::compress<Codec>(std::span<const float>(in), 1e-3);
  ncclz::Compressor<Codec, float> codec(n);
  const std::size_t capacity = ncclz::max_compressed_bytes<float, Codec>(n);
  float* d_in = nullptr;
  std::byte* d_chunk = nullptr;
  NCCLZ_CUDA_TRY(cudaMalloc(&d_in, n * sizeof(float)));
  NCCLZ_CUDA_TRY(cudaMalloc(&d_chunk, capacity));
  NCCLZ_CUDA_TRY(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  std::vector<std::byte> got(capacity);
  int differing_calls = 0;
  for (int call = 0; call < kCalls; ++call) {
    NCCLZ_CUDA_TRY(cudaMemset(d_chunk, 0xA5, capacity));
    codec.compress(d_in, n, d_chunk, capacity, 1e-3);
    const std::uint64_t size = codec.compressed_bytes();
    NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), d_chunk, size, cudaMemcpyDeviceToHost));
    differing_calls += size != host_chunk.size() || std::memcmp(got.data(), host_chunk.data(), size) != 0;
  }
  cudaFree(d_in);
  cudaFree(d_chunk);
  CAPTURE(host_chunk.size());
  REQUIRE(differing_calls == 0);
}
