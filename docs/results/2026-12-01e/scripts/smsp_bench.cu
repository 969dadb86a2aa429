// One-off: do warp 0 of every block share one scheduler? One busy warp a block, 4 blocks an SM.
#include <cstdio>
#include <vector>
#include <algorithm>
__device__ unsigned warpid_reg() { unsigned id; asm volatile("mov.u32 %0, %%warpid;" : "=r"(id)); return id; }
__device__ unsigned nwarpid_reg() { unsigned id; asm volatile("mov.u32 %0, %%nwarpid;" : "=r"(id)); return id; }
// mode 0: warp 0 busy; 1: warp blockIdx%4; 2: warp from %warpid of warp 0 (spread); 3: warps 0..3 each 1/4 of the work
__global__ void __launch_bounds__(256) busy(int mode, int iters, float* out, unsigned* ids) {
  extern __shared__ float pad[];
  __shared__ unsigned chosen;
  const unsigned w = threadIdx.x / 32;
  if (threadIdx.x == 0) {
    const unsigned first = warpid_reg();
    chosen = mode == 0 ? 0u : mode == 1 ? blockIdx.x % 4 : ((first / 8) % 4 + 4 - first % 4) % 4;
  }
  if (threadIdx.x % 32 == 0 && blockIdx.x < 64) ids[blockIdx.x * 8 + w] = warpid_reg() | (nwarpid_reg() << 16);
  __syncthreads();
  const bool me = mode == 3 ? w < 4 : w == chosen;
  const int n = mode == 3 ? iters / 4 : iters;
  if (me) {
    float a = threadIdx.x, b = a + 1, c = a + 2, d = a + 3, e = a + 4, f = a + 5, g = a + 6, h = a + 7;
    for (int i = 0; i < n; ++i) {
      a = a * 1.0001f + 0.5f; b = b * 1.0001f + 0.5f; c = c * 1.0001f + 0.5f; d = d * 1.0001f + 0.5f;
      e = e * 1.0001f + 0.5f; f = f * 1.0001f + 0.5f; g = g * 1.0001f + 0.5f; h = h * 1.0001f + 0.5f;
    }
    if (a + b + c + d + e + f + g + h == 0.123f) out[0] = a;
  }
  __syncthreads();
  pad[threadIdx.x] = 0;
}
int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* out; cudaMalloc(&out, 4); unsigned* ids; cudaMalloc(&ids, 64 * 8 * 4);
  const int smem = 50 * 1024;  // 4 blocks an SM
  cudaFuncSetAttribute(busy, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  const char* names[] = {"warp 0", "warp blockIdx%4", "warp by %warpid", "warps 0-3, 1/4 each"};
  for (int round = 0; round < 2; ++round)
    for (int mode = 0; mode < 4; ++mode) {
      std::vector<float> ms;
      for (int r = 0; r < 7; ++r) {
        cudaEventRecord(a); busy<<<sms * 4, 256, smem>>>(mode, 20000, out, ids); cudaEventRecord(b); cudaEventSynchronize(b);
        float t; cudaEventElapsedTime(&t, a, b); ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      std::printf("%-22s %8.3f ms\n", names[mode], ms[3]);
    }
  std::vector<unsigned> h(64 * 8); cudaMemcpy(h.data(), ids, h.size() * 4, cudaMemcpyDeviceToHost);
  for (int blk = 0; blk < 6; ++blk) { std::printf("block %d warpids:", blk); for (int w = 0; w < 8; ++w) std::printf(" %u", h[blk * 8 + w] & 0xffff); std::printf(" (nwarpid %u)\n", h[blk*8] >> 16); }
  std::printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
