// Host: Adaptive's chunk bytes on the bench inputs and the fields (REL 1e-3, 1e-4), this tree's
// reference codec; compile against two include trees and diff.
#include <algorithm>
#include <cstdio>
#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>
#include "ncclz/host/reference_codec.hpp"
using namespace ncclz;
using A = Codec<Quantizer<RelBound>, EntropyCoder<Adaptive>>;
#include "generated_inputs.hpp"  // the bench's noise and smooth inputs (-Ibenchmarks)
using namespace ncclz_bench;
template <class T>
void run(const char* name, const std::vector<float>& f, double bound) {
  std::vector<T> in(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) in[i] = from_compute<T>(static_cast<compute_t<T>>(f[i]));
  const auto c = host::compress<A, T>(std::span<const T>(in), bound);
  std::printf("%-12s %-4s %g %zu\n", name, sizeof(T) == 4 ? "f32" : std::is_same_v<T, __half> ? "f16" : "bf16", bound, c.size());
}
std::vector<float> load(const std::string& f) { std::ifstream i(f, std::ios::binary | std::ios::ate); std::vector<float> v(i.tellg() / 4); i.seekg(0); i.read((char*)v.data(), v.size() * 4); return v; }
int main() {
  const std::size_t n = std::size_t{16} << 20;
  const auto noise = make_noise(n / 4, 7); const auto smooth = make_smooth<float>(n / 4, 7);
  for (double b : {1e-3, 1e-4}) {
    run<float>("smooth", smooth, b); run<__nv_bfloat16>("smooth", smooth, b); run<__half>("smooth", smooth, b);
    run<float>("noise", noise, b); run<__nv_bfloat16>("noise", noise, b); run<__half>("noise", noise, b);
    for (const char* fn : {"trinidad", "pop_t", "fice", "hgt", "uv300_U", "uv300_V", "nc4uvt_T", "nc4uvt_U", "nc4uvt_V", "vinth2p_T", "sst", "sstanom_SST", "seam_ps"}) {
      const auto v = load(std::string("data/") + fn + ".f32"); run<float>(fn, v, b); run<__nv_bfloat16>(fn, v, b); run<__half>(fn, v, b);
    }
  }
}
