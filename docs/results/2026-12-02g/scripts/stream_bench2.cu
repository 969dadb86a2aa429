// Session 13 microbench 2: what the compress state's reset costs in the stream, and how to hide it.
// 64 MiB f32 noise and smooth, RelBound Huffman / FixedLength / Adaptive and AbsBound Huffman.
//   V0 library compress (cudaMemsetAsync of range keys + block maxima + tile words, range, encode)
//   V1 a reset kernel (range keys + tile words only) instead of the memset
//   V2 V1, the range kernel a programmatic dependent of the reset (it waits only before its atomics)
//   V3 V2, the encoder also a programmatic dependent (of the range kernel; it waits at its start)
//   A0 AbsBound library compress (memset, encode); A1 reset kernel, encode; A2 A1 with the encoder a
//      programmatic dependent of the reset (waits at its start: no overlap but the launch)
#include <ncclz/ncclz.cuh>
#include "generated_inputs.hpp"
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>
using namespace ncclz;
namespace dd = ncclz::device::detail;
namespace kk = ncclz::kernels;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); std::exit(1); } } while (0)

__device__ __forceinline__ void griddep_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void griddep_launch() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

__global__ void reset_kernel(unsigned long long* p, std::size_t words, bool trigger) {
  if (trigger) griddep_launch();
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x) p[i] = 0;
}

// The library's range kernel, waiting for the grid it depends on before its atomics.
template <class T>
__global__ void __launch_bounds__(kk::kRangeThreads) range_pdl(const T* __restrict__ in, std::uint64_t count, kk::range_keys* keys) {
  using K = kk::key_t<T>;
  constexpr int kVec = 16 / sizeof(T);
  struct alignas(16) vec { T v[kVec]; };
  K hi = 0, not_lo = 0;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  const std::uint64_t first = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::uint64_t vectors = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 ? count / kVec : 0;
  const vec* body = reinterpret_cast<const vec*>(in);
  constexpr int kUnroll = 4;
  std::uint64_t i = first;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    vec x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x[u] = body[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int v = 0; v < kVec; ++v) kk::accumulate(x[u].v[v], hi, not_lo);
  }
  for (; i < vectors; i += stride)
#pragma unroll
    for (int v = 0; v < kVec; ++v) kk::accumulate(body[i].v[v], hi, not_lo);
  for (std::uint64_t j = vectors * kVec + first; j < count; j += stride) kk::accumulate(in[j], hi, not_lo);
#pragma unroll
  for (unsigned d = 16; d > 0; d >>= 1) {
    hi = max(hi, static_cast<K>(__shfl_xor_sync(~0u, hi, d)));
    not_lo = max(not_lo, static_cast<K>(__shfl_xor_sync(~0u, not_lo, d)));
  }
  constexpr int kWarps = kk::kRangeThreads / 32;
  __shared__ K warp_hi[kWarps], warp_not_lo[kWarps];
  if (threadIdx.x % 32 == 0) { warp_hi[threadIdx.x / 32] = hi; warp_not_lo[threadIdx.x / 32] = not_lo; }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned w = 1; w < blockDim.x / 32; ++w) { hi = max(hi, warp_hi[w]); not_lo = max(not_lo, warp_not_lo[w]); }
    griddep_wait();  // the reset of the keys
    if (hi != 0) {
      atomicMax(&keys->hi, static_cast<unsigned long long>(hi));
      atomicMax(&keys->not_lo, static_cast<unsigned long long>(not_lo));
    }
  }
}

cudaStream_t st; cudaEvent_t e0, e1;
double med(std::function<void()> op) {
  std::vector<double> v;
  for (int i = 0; i < 30; ++i) {
    CK(cudaEventRecord(e0, st)); op(); CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
    float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (i >= 5) v.push_back(ms * 1e3);
  }
  std::sort(v.begin(), v.end()); return 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}
template <class K, class... A>
void launch(K kernel, unsigned grid, unsigned block, bool pdl, A... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid; cfg.blockDim = block; cfg.stream = st;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at; cfg.numAttrs = pdl ? 1 : 0;
  CK(cudaLaunchKernelEx(&cfg, kernel, args...));
}
template <class C>
bool same_chunk(const void* a, const void* b, const std::uint64_t* sa, const std::uint64_t* sb) {
  std::uint64_t x, y; CK(cudaMemcpy(&x, sa, 8, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(&y, sb, 8, cudaMemcpyDeviceToHost));
  if (x != y) return false;
  std::vector<char> ha(x), hb(x);
  CK(cudaMemcpy(ha.data(), a, x, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hb.data(), b, x, cudaMemcpyDeviceToHost));
  return ha == hb;
}
template <class C, bool kRel>
void run(const char* name, const float* d, std::size_t n, double b, void* ws, std::size_t wsb, void* out, void* out2, std::size_t cap, std::uint64_t* sz, std::uint64_t* sz2) {
  const dd::workspace_layout l = dd::layout_for(n);
  auto* base = static_cast<char*>(ws);
  auto* keys = reinterpret_cast<dd::range_keys*>(base + l.range);
  auto* tw = reinterpret_cast<std::uint64_t*>(base + l.tile_words);
  const std::size_t tiles = format::tile_count(n);
  auto reset = [&](bool trigger) {
    launch(reset_kernel, 1, 256, false, reinterpret_cast<unsigned long long*>(keys), std::size_t{2}, trigger);
    launch(reset_kernel, static_cast<unsigned>((tiles + 255) / 256), 256, false, reinterpret_cast<unsigned long long*>(tw), tiles, trigger);
  };
  // one reset kernel needs one contiguous region: time the two regions as two launches (upper bound) and
  // as one launch over [range, tile words end) (what a reordered layout gives)
  const std::size_t span_words = (l.total - l.range) / 8;
  auto reset1 = [&](bool trigger) {
    launch(reset_kernel, static_cast<unsigned>(std::min<std::size_t>((span_words + 255) / 256, 64)), 256, false, reinterpret_cast<unsigned long long*>(keys), span_words, trigger);
  };
  const int grid = std::min<std::size_t>((n + 255) / 256, 132 * 8);
  auto encode = [&](bool pdl, void* o, std::uint64_t* s) {

    dd::prefer_shared_memory(kk::encode_kernel<C, float>);
    launch(kk::encode_kernel<C, float, kk::value_source<float>>, static_cast<unsigned>(tiles), kk::kTileThreads, pdl,
           kk::value_source<float>{d}, std::uint64_t{n}, static_cast<std::byte*>(o), s, static_cast<const kk::range_keys*>(keys), b, 1u, tw, kk::block_scales{});
  };
  double v0, v1, v2, v3, v1b;
  if constexpr (kRel) {
    v0 = med([&] { device::compress<C>(ws, wsb, d, n, out, cap, sz, b, st); });
    v1 = med([&] { reset(false); launch(kk::range_kernel<float>, grid, 256, false, d, std::uint64_t{n}, keys); encode(false, out2, sz2); });
    CK(cudaStreamSynchronize(st)); const bool ok1 = same_chunk<C>(out, out2, sz, sz2);
    v1b = med([&] { reset1(false); launch(kk::range_kernel<float>, grid, 256, false, d, std::uint64_t{n}, keys); encode(false, out2, sz2); });
    CK(cudaStreamSynchronize(st)); const bool ok1b = same_chunk<C>(out, out2, sz, sz2);
    v2 = med([&] { reset1(true); launch(range_pdl<float>, grid, 256, true, d, std::uint64_t{n}, keys); encode(false, out2, sz2); });
    CK(cudaStreamSynchronize(st)); const bool ok2 = same_chunk<C>(out, out2, sz, sz2);
    v3 = med([&] { reset1(true); launch(range_pdl<float>, grid, 256, true, d, std::uint64_t{n}, keys); encode(true, out2, sz2); });
    CK(cudaStreamSynchronize(st)); const bool ok3 = same_chunk<C>(out, out2, sz, sz2);
    const double gb = n * 4.0 / 1e3;
    std::printf("%-26s V0 %6.1f (%5.1f) | V1 two resets %6.1f (%5.1f) %s | V1 one reset %6.1f (%5.1f) %s | V2 pdl range %6.1f (%5.1f) %s | V3 +pdl enc %6.1f (%5.1f) %s\n",
                name, v0, gb / v0, v1, gb / v1, ok1 ? "ok" : "DIFF", v1b, gb / v1b, ok1b ? "ok" : "DIFF", v2, gb / v2, ok2 ? "ok" : "DIFF", v3, gb / v3, ok3 ? "ok" : "DIFF");
  } else {
    v0 = med([&] { device::compress<C>(ws, wsb, d, n, out, cap, sz, b, st); });
    v1 = med([&] { reset1(false); encode(false, out2, sz2); });
    CK(cudaStreamSynchronize(st)); const bool ok1 = same_chunk<C>(out, out2, sz, sz2);
    const double gb = n * 4.0 / 1e3;
    std::printf("%-26s A0 %6.1f (%5.1f) | A1 reset kernel %6.1f (%5.1f) %s\n", name, v0, gb / v0, v1, gb / v1, ok1 ? "ok" : "DIFF");
  }
}
int main() {
  const std::size_t n = (64ull << 20) / 4;
  CK(cudaStreamCreate(&st)); CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  float* d; CK(cudaMalloc(&d, n * 4));
  using RH = Codec<Quantizer<RelBound>, EntropyCoder<Huffman>>;
  using RF = Codec<Quantizer<RelBound>, EntropyCoder<FixedLength>>;
  using RA = Codec<Quantizer<RelBound>, EntropyCoder<Adaptive>>;
  using AH = Codec<Quantizer<AbsBound>, EntropyCoder<Huffman>>;
  using AF = Codec<Quantizer<AbsBound>, EntropyCoder<FixedLength>>;
  const std::size_t cap = ncclz::max_compressed_bytes<float>(n);
  const std::size_t wsb = ncclz::device::workspace_bytes<float>(n);
  void *ws, *out, *out2; std::uint64_t *sz, *sz2;
  CK(cudaMalloc(&ws, wsb)); CK(cudaMalloc(&out, cap)); CK(cudaMalloc(&out2, cap)); CK(cudaMalloc(&sz, 8)); CK(cudaMalloc(&sz2, 8));
  for (int input = 0; input < 2; ++input) {
    const auto h = input == 0 ? ncclz_bench::make_noise(n, 7) : ncclz_bench::make_smooth<float>(n, 7);
    CK(cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice));
    double lo = h[0], hi = h[0];
    for (float x : h) lo = std::min<double>(lo, x), hi = std::max<double>(hi, x);
    const char* in = input == 0 ? "noise" : "smooth";
    for (double b : {1e-3, 1e-4}) {
      char nm[64];
      std::snprintf(nm, sizeof nm, "%s %.0e huffman", in, b); run<RH, true>(nm, d, n, b, ws, wsb, out, out2, cap, sz, sz2);
      std::snprintf(nm, sizeof nm, "%s %.0e fixed_length", in, b); run<RF, true>(nm, d, n, b, ws, wsb, out, out2, cap, sz, sz2);
      std::snprintf(nm, sizeof nm, "%s %.0e adaptive", in, b); run<RA, true>(nm, d, n, b, ws, wsb, out, out2, cap, sz, sz2);
      std::snprintf(nm, sizeof nm, "%s %.0e abs huffman", in, b); run<AH, false>(nm, d, n, b * (hi - lo), ws, wsb, out, out2, cap, sz, sz2);
      std::snprintf(nm, sizeof nm, "%s %.0e abs fixed_length", in, b); run<AF, false>(nm, d, n, b * (hi - lo), ws, wsb, out, out2, cap, sz, sz2);
    }
  }
  CK(cudaGetLastError());
  std::printf("done\n");
}
