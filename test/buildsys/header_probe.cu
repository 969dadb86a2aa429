// A CUDA object whose header the test header_dependencies touches (check_header_deps.sh): built
// like every CUDA target of ncclz, with the depfile flags of meson.build's nvcc_depfile.
#include <cuda_runtime_api.h>

#include "header_probe.hpp"  // the copy in the build directory: no such file beside this one

__global__ void answer(int* out) { *out = header_probe_answer; }

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return 77;
  int* d = nullptr;
  int h = 0;
  if (cudaMalloc(&d, sizeof h) != cudaSuccess) return 1;
  answer<<<1, 1>>>(d);
  const bool ok = cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess && h == header_probe_answer;
  cudaFree(d);
  return ok ? 0 : 1;
}
