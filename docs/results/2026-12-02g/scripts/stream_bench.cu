// Session 13 microbench: where a RelBound compress's time goes in the stream. 64 MiB f32, the
// bench's generators. For each codec: the library compress (memset + range + encode), the same
// with the memset before the first event, range + encode alone, the encode alone, the memset alone.
#include <ncclz/ncclz.cuh>
#include "generated_inputs.hpp"
#include <algorithm>
#include <cstdio>
#include <vector>
#include <functional>
using namespace ncclz;
namespace dd = ncclz::device::detail;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); std::exit(1); } } while (0)
cudaStream_t st; cudaEvent_t e0, e1;
double med(std::function<void()> pre, std::function<void()> op) {
  std::vector<double> v;
  for (int i = 0; i < 25; ++i) {
    pre();
    CK(cudaEventRecord(e0, st)); op(); CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
    float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (i >= 5) v.push_back(ms * 1e3);
  }
  std::sort(v.begin(), v.end()); return 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}
template <class C>
void run(const char* name, const float* d, std::size_t n, double b, void* ws, std::size_t wsb, void* out, std::size_t cap, std::uint64_t* sz) {
  auto none = [] {};
  auto memset_ = [&] { dd::reset_compress_state(ws, n, st); };
  auto range_ = [&] { dd::launch_range(d, n, reinterpret_cast<dd::range_keys*>(static_cast<char*>(ws) + dd::layout_for(n).range), st); };
  auto enc_ = [&] { dd::launch_encode<C>(ws, d, n, out, sz, reinterpret_cast<dd::range_keys*>(static_cast<char*>(ws) + dd::layout_for(n).range), b, st); };
  const double full = med(none, [&] { device::compress<C>(ws, wsb, d, n, out, cap, sz, b, st); });
  const double no_memset = med(memset_, [&] { range_(); enc_(); });
  const double enc_only = med([&] { memset_(); range_(); }, enc_);
  const double range_only = med(memset_, range_);
  const double memset_only = med(none, memset_);
  const double gb = n * 4.0 / 1e3;
  std::printf("%-28s full %7.1f us (%5.1f GB/s) | range+enc %7.1f (%5.1f) | enc %7.1f | range %5.1f | memset %4.1f | full-(range+enc) %4.1f\n",
              name, full, gb / full, no_memset, gb / no_memset, enc_only, range_only, memset_only, full - no_memset);
}
int main() {
  const std::size_t n = (64ull << 20) / 4;
  CK(cudaStreamCreate(&st)); CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  float* d; CK(cudaMalloc(&d, n * 4));
  using RH = Codec<Quantizer<RelBound>, EntropyCoder<Huffman>>;
  using RF = Codec<Quantizer<RelBound>, EntropyCoder<FixedLength>>;
  using RA = Codec<Quantizer<RelBound>, EntropyCoder<Adaptive>>;
  const std::size_t cap = std::max({ncclz::max_compressed_bytes<float, RH>(n), ncclz::max_compressed_bytes<float, RF>(n), ncclz::max_compressed_bytes<float, RA>(n)});
  const std::size_t wsb = ncclz::device::workspace_bytes<float>(n);
  void *ws, *out; std::uint64_t* sz;
  CK(cudaMalloc(&ws, wsb)); CK(cudaMalloc(&out, cap)); CK(cudaMalloc(&sz, 8));
  for (int input = 0; input < 2; ++input) {
    const auto h = input == 0 ? ncclz_bench::make_noise(n, 7) : ncclz_bench::make_smooth<float>(n, 7);
    CK(cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice));
    const char* in = input == 0 ? "noise" : "smooth";
    for (double b : {1e-3, 1e-4}) {
      char nm[64];
      std::snprintf(nm, sizeof nm, "%s %.0e huffman", in, b); run<RH>(nm, d, n, b, ws, wsb, out, cap, sz);
      std::snprintf(nm, sizeof nm, "%s %.0e fixed_length", in, b); run<RF>(nm, d, n, b, ws, wsb, out, cap, sz);
      std::snprintf(nm, sizeof nm, "%s %.0e adaptive", in, b); run<RA>(nm, d, n, b, ws, wsb, out, cap, sz);
    }
  }
  CK(cudaGetLastError());
  std::printf("done\n");
}
