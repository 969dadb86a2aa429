// Catch2 runner for the GPU tests: exits 77 (meson's "skipped") when there is no usable GPU,
// so CI machines without one report the suite as skipped rather than failed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>

#include <cstdio>

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
