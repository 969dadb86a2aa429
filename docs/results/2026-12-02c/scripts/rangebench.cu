// Session 9 microbench: the RelBound range pass. Variants of the range kernel (grid, unroll, order),
// a plain read and a copy as rooflines, and the Huffman (AbsBound) encode right after a forward or
// reverse range pass, or after an L2 flush, to see what L2 residency of the input buys the encode.
#include <ncclz/ncclz.cuh>
#include <algorithm>
#include <cstdio>
#include <vector>
using namespace ncclz::kernels;
using AbsHuf = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::Huffman>>;
using RelHuf = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Huffman>>;

template <int kUnroll, bool kReverse>
__global__ void __launch_bounds__(256) range_v(const float* __restrict__ in, std::uint64_t count, range_keys* keys) {
  using K = std::uint32_t;
  struct alignas(16) vec { float v[4]; };
  K hi = 0, not_lo = 0;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  const std::uint64_t first = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::uint64_t vectors = count / 4;
  const vec* body = reinterpret_cast<const vec*>(in);
  auto at = [&](std::uint64_t i) { return kReverse ? vectors - 1 - i : i; };
  std::uint64_t i = first;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    vec x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x[u] = body[at(i + u * stride)];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int v = 0; v < 4; ++v) accumulate(x[u].v[v], hi, not_lo);
  }
  for (; i < vectors; i += stride)
#pragma unroll
    for (int v = 0; v < 4; ++v) accumulate(body[at(i)].v[v], hi, not_lo);
#pragma unroll
  for (unsigned d = 16; d > 0; d >>= 1) {
    hi = max(hi, __shfl_xor_sync(~0u, hi, d));
    not_lo = max(not_lo, __shfl_xor_sync(~0u, not_lo, d));
  }
  __shared__ K wh[8], wl[8];
  if (threadIdx.x % 32 == 0) wh[threadIdx.x / 32] = hi, wl[threadIdx.x / 32] = not_lo;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < 8; ++w) hi = max(hi, wh[w]), not_lo = max(not_lo, wl[w]);
    if (hi) atomicMax(&keys->hi, (unsigned long long)hi), atomicMax(&keys->not_lo, (unsigned long long)not_lo);
  }
}

__global__ void fill(float* x, std::uint64_t n, unsigned seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n; i += std::uint64_t(gridDim.x) * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15;
    x[i] = 100.f * __sinf(i * 1e-5f) + 10.f * __sinf(i * 3e-3f) + (h & 0xffff) * 1e-4f;
  }
}
__global__ void touch(const float4* p, std::uint64_t n, float* sink) {
  float s = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n; i += std::uint64_t(gridDim.x) * blockDim.x) { float4 v = p[i]; s += v.x + v.w; }
  if (s == 12345.f) *sink = s;
}

int main() {
  const std::uint64_t n = 64ull << 18;  // 64 MiB of f32
  float *in, *flush, *sink; cudaMalloc(&in, n * 4); cudaMalloc(&flush, 512ull << 20); cudaMalloc(&sink, 4);
  fill<<<1024, 256>>>(in, n, 7); cudaMemset(flush, 1, 512ull << 20);
  const std::size_t ws_bytes = ncclz::device::workspace_bytes<float>(n), cap = ncclz::max_compressed_bytes<float>(n);
  void *ws, *chunk; std::uint64_t* size; cudaMalloc(&ws, ws_bytes); cudaMalloc(&chunk, cap); cudaMalloc(&size, 8);
  float* out; cudaMalloc(&out, n * 4);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  auto keys = ncclz::device::detail::reset_compress_state(ws, n, 0);
  auto time = [&](auto&& pre, auto&& op) {
    std::vector<float> ms;
    for (int r = 0; r < 23; ++r) {
      pre();
      cudaEventRecord(a); op(); cudaEventRecord(b); cudaEventSynchronize(b);
      float t; cudaEventElapsedTime(&t, a, b); if (r >= 3) ms.push_back(t * 1000);
    }
    std::sort(ms.begin(), ms.end()); return ms[ms.size() / 2];
  };
  auto nothing = [] {};
  auto do_flush = [&] { touch<<<sms * 8, 256>>>((const float4*)flush, (512ull << 20) / 16, sink); };
  std::printf("%-44s %8s %8s\n", "what (64 MiB f32)", "us", "TB/s");
  auto row = [&](const char* what, float us) { std::printf("%-44s %8.1f %8.2f\n", what, us, n * 4 / (us * 1e6)); };
  row("copy D2D (read+write bytes / 2 per TB/s)", time(do_flush, [&] { cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice); }) / 2);
  row("plain read, 8 blocks/SM, flushed", time(do_flush, [&] { touch<<<sms * 8, 256>>>((const float4*)in, n / 4, sink); }));
  row("memset of the compress state", time(nothing, [&] { ncclz::device::detail::reset_compress_state(ws, n, 0); }));
  row("library range, after itself", time(nothing, [&] { ncclz::device::detail::launch_range(in, n, keys, 0); }));
  row("library range, flushed", time(do_flush, [&] { ncclz::device::detail::launch_range(in, n, keys, 0); }));
#define V(U, R, G) row("range_v<" #U "," #R "> grid " #G "/SM, flushed", time(do_flush, [&] { range_v<U, R><<<sms * G, 256>>>(in, n, keys); }));
  V(4, false, 8) V(4, true, 8) V(8, false, 8) V(2, false, 8) V(4, false, 16) V(1, false, 32) V(4, false, 4)
  // The encode after each state of L2.
  auto enc = [&] { ncclz::device::detail::reset_tile_words(ws, n, 0); ncclz::device::detail::launch_encode<AbsHuf>(ws, in, n, chunk, size, keys, 1e-4 * 200, 0); };
  row("huffman abs encode, flushed", time(do_flush, enc));
  row("huffman abs encode, after forward range", time([&] { range_v<4, false><<<sms * 8, 256>>>(in, n, keys); }, enc));
  row("huffman abs encode, after reverse range", time([&] { range_v<4, true><<<sms * 8, 256>>>(in, n, keys); }, enc));
  row("huffman abs encode, after itself", time(nothing, enc));
  row("huffman rel compress (library), after itself", time(nothing, [&] { ncclz::device::compress<RelHuf>(ws, ws_bytes, in, n, chunk, cap, size, 1e-4, 0); }));
  row("huffman rel compress (library), flushed", time(do_flush, [&] { ncclz::device::compress<RelHuf>(ws, ws_bytes, in, n, chunk, cap, size, 1e-4, 0); }));
  std::printf("errors: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
