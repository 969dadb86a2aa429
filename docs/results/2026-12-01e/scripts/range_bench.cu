// One-off: range kernel as is vs a block-reduced variant, 64 MiB f32.
#include <ncclz/device/detail/range_kernel.cuh>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <random>
using namespace ncclz::kernels;
template <class T, bool kReverse = false>
__global__ void __launch_bounds__(256) range_block(const T* __restrict__ in, std::uint64_t count, range_keys* keys) {
  using K = ncclz::kernels::key_t<T>;
  constexpr int kVec = 16 / sizeof(T);
  struct alignas(16) vec { T v[kVec]; };
  K hi = 0, not_lo = 0;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  const std::uint64_t first = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::uint64_t vectors = count / kVec;
  const vec* body = reinterpret_cast<const vec*>(in);
  constexpr int kUnroll = UNROLL;
  std::uint64_t i = first;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    vec x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x[u] = body[kReverse ? vectors - 1 - (i + u * stride) : i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int v = 0; v < kVec; ++v) accumulate(x[u].v[v], hi, not_lo);
  }
  for (; i < vectors; i += stride)
#pragma unroll
    for (int v = 0; v < kVec; ++v) accumulate(body[i].v[v], hi, not_lo);
#pragma unroll
  for (unsigned d = 16; d > 0; d >>= 1) {
    hi = max(hi, static_cast<K>(__shfl_xor_sync(~0u, hi, d)));
    not_lo = max(not_lo, static_cast<K>(__shfl_xor_sync(~0u, not_lo, d)));
  }
  __shared__ K sh[2][8];
  if (threadIdx.x % 32 == 0) { sh[0][threadIdx.x / 32] = hi; sh[1][threadIdx.x / 32] = not_lo; }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < 8; ++w) { hi = max(hi, sh[0][w]); not_lo = max(not_lo, sh[1][w]); }
    if (hi != 0) {
      atomicMax(&keys->hi, static_cast<unsigned long long>(hi));
      atomicMax(&keys->not_lo, static_cast<unsigned long long>(not_lo));
    }
  }
}
__global__ void readsum(const float4* in, std::uint64_t n, float* out) {
  float s = 0;
  for (std::uint64_t i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x) { float4 v = in[i]; s += v.x + v.y + v.z + v.w; }
  if (s == 1234.5f) *out = s;
}
int main() {
  const std::size_t n = 64ull << 20 >> 2;
  std::vector<float> h(n); std::mt19937 g(1); std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : h) x = u(g);
  float* d; cudaMalloc(&d, n * 4); cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice);
  range_keys* k; cudaMalloc(&k, sizeof(range_keys));
  float* o; cudaMalloc(&o, 4);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  auto time = [&](const char* name, auto f) {
    std::vector<float> ms;
    for (int r = 0; r < 25; ++r) { cudaMemset(k, 0, sizeof *k); cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float t; cudaEventElapsedTime(&t, a, b); if (r >= 5) ms.push_back(t); }
    std::sort(ms.begin(), ms.end());
    range_keys hk; cudaMemcpy(&hk, k, sizeof hk, cudaMemcpyDeviceToHost);
    std::printf("%-28s %7.1f us  %6.2f TB/s  hi=%llx lo=%llx\n", name, ms[ms.size()/2]*1e3, n*4/(ms[ms.size()/2]*1e9), hk.hi, hk.not_lo);
  };
  for (int round = 0; round < 2; ++round) {
    time("current (sm*8)", [&] { range_kernel<float><<<sms * 8, 256>>>(d, n, k); });
    time("block-reduced (sm*8)", [&] { range_block<float><<<sms * 8, 256>>>(d, n, k); });
    time("block-reduced (sm*4)", [&] { range_block<float><<<sms * 4, 256>>>(d, n, k); });
    time("block-reduced (sm*16)", [&] { range_block<float><<<sms * 16, 256>>>(d, n, k); });
    time("block-reduced reverse (sm*8)", [&] { range_block<float, true><<<sms * 8, 256>>>(d, n, k); });
    time("readsum (sm*8)", [&] { readsum<<<sms * 8, 256>>>((const float4*)d, n / 4, o); });
    time("memset only", [&] { });
  }
  std::printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
