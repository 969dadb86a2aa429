// Catch2 runner for the GPU tests: exits 77 (meson's "skipped") when there is no usable GPU,
// so CI machines without one report the suite as skipped rather than failed.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

namespace {

/// Checks for a device as the run starts, before any test case: none, and the run stops with 77.
struct require_gpu : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunStarting(Catch::TestRunInfo const& info) override {
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess || devices == 0) {
      std::printf("SKIP: no CUDA device (%s)\n", status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
      std::fflush(stdout);
      std::exit(77);
    }
    TestEventListenerBase::testRunStarting(info);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(require_gpu)
