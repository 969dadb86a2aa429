// Host: every tile where zero_run is worth trying under the half-zero rule (before the runs rule):
// its sample verdict (SAMP: 9/16 zero or more, CALL: every element counted), the zero runs (counted
// within each block of 32), and whether zero_run wins it. Run from the repository root with data/.
// g++ -std=c++20 -O2 -Iinclude -Ibenchmarks -I/usr/local/cuda/include THIS -o /tmp/zero_runs && /tmp/zero_runs > out.txt
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>
#include "ncclz/host/reference_codec.hpp"
#include "generated_inputs.hpp"
using namespace ncclz; using namespace ncclz_bench;
using A = Codec<Quantizer<RelBound>, EntropyCoder<Adaptive>>;
namespace zr = host::detail::zero_run; namespace hf = host::detail::huffman;
std::vector<float> load(const std::string& f) { std::ifstream i(f, std::ios::binary | std::ios::ate); std::vector<float> v(i.tellg() / 4); i.seekg(0); i.read((char*)v.data(), v.size() * 4); return v; }
template <class T> void run(const char* name, const std::vector<float>& f, double bound) {
  std::vector<T> in(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) in[i] = from_compute<T>(static_cast<compute_t<T>>(f[i]));
  std::span<const T> s(in);
  const auto p = Quantizer<RelBound>::make_params<T>(bound, host::find_range(s));
  for (std::uint64_t t = 0; t < format::tile_count(in.size()); ++t) {
    const auto values = s.subspan(t * format::kTileElements, format::tile_elements(in.size(), t));
    const auto el = (std::uint32_t)values.size();
    const auto c = zr::codes_of<A>(values, p);
    const std::uint32_t zc = zr::zero_codes(c.codes), zd = zr::zero_deltas(c.codes);
    const auto vd = format::zero_run_verdict(zr::sampled_zero_codes(c.codes), zr::sampled_zero_deltas(c.codes), el);
    if (2 * std::max(zc, zd) < el) continue;  // the half-zero rule alone (HEAD 3165a14)
    // runs within blocks of 32, of zero codes and of zero deltas (element 0's delta is 0)
    std::uint32_t rc = 0, rd = 0;
    for (std::uint32_t i = 0; i < el; ++i) {
      const bool z0 = c.codes[i] == 0, d0 = i == 0 || c.codes[i] == c.codes[i - 1];
      const bool pz0 = i % 32 != 0 && c.codes[i - 1] == 0, pd0 = i % 32 != 0 && (i - 1 == 0 || c.codes[i - 1] == c.codes[i - 2]);
      rc += z0 && !pz0; rd += d0 && !pd0;
    }
    const std::uint64_t fl = host::detail::fixed_length_tile<A>(values, p).size();
    std::uint64_t bar = format::entropy_bar(fl), best = fl;
    const auto d = hf::deltas_of<A>(values, p);
    const auto e = hf::estimate_tile(d, el, sizeof(T));
    std::uint64_t he = e.bytes;
    if (e.bytes < bar) { const auto h = hf::encode_tile_with<T>(values, d, e.literals).size(); if (h < bar) { best = h; bar = h; } }
    const auto pred = zr::choose_predictor(c.codes);
    const auto zt = zr::encode_tile_with<T>(values, c, pred).size();
    const std::uint32_t z = pred == zr::predictor::codes ? zc : zd, r = pred == zr::predictor::codes ? rc : rd;
    std::printf("%-12s %-4s %g t%-4llu %s pred %s z %.3f runs %5u mean %6.2f | zr %6llu alt %6llu (fl %6llu he %6llu) zr/alt %.3f %s\n", name,
                sizeof(T) == 4 ? "f32" : std::is_same_v<T, __half> ? "f16" : "bf16", bound, (unsigned long long)t,
                vd == format::zero_run_sample::measure ? "SAMP" : vd == format::zero_run_sample::count_all ? "CALL" : "SKIP",
                pred == zr::predictor::codes ? "codes " : "deltas", double(z) / el, r, double(z) / r,
                (unsigned long long)zt, (unsigned long long)best, (unsigned long long)fl, (unsigned long long)he, double(zt) / best, zt < bar ? "WIN" : "lose");
  }
}
int main() {
  const std::size_t n = std::size_t{16} << 20;
  const auto noise = make_noise(n, 7); const auto smooth = make_smooth<float>(n, 7);
  for (double b : {1e-3, 1e-4}) {
    run<float>("smooth", smooth, b); run<__nv_bfloat16>("smooth", smooth, b); run<__half>("smooth", smooth, b);
    run<float>("noise", noise, b); run<__nv_bfloat16>("noise", noise, b); run<__half>("noise", noise, b);
    for (const char* fn : {"trinidad", "pop_t", "fice", "hgt", "uv300_U", "uv300_V", "nc4uvt_T", "nc4uvt_U", "nc4uvt_V", "vinth2p_T", "sst", "sstanom_SST", "seam_ps"}) {
      const auto v = load(std::string("data/") + fn + ".f32"); run<float>(fn, v, b); run<__nv_bfloat16>(fn, v, b); run<__half>(fn, v, b);
    }
  }
}
