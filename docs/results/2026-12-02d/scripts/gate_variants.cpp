// Host: variants of Adaptive's gate on the bench's inputs and the fields (REL 1e-3, 1e-4): the
// sample binned under L0 and L1 literals (-DALPHA0=L0 -DALPHA1=L1) and a margin of bar >> MSHIFT
// (0: none). Per input: tiles the gate passes (256 literals as in 3d1cbee, then L0, L1), tiles
// huffman takes against fixed_length's bar, and the taken tiles each variant would stop (with the
// bytes that costs). zero_run is left out, so "lost" is against fixed_length only.
// g++ -std=c++20 -O2 -I<include> -Ibenchmarks -I/usr/local/cuda/include -DALPHA0=64 -DALPHA1=128 -DMSHIFT=7 THIS
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
namespace hh = host::detail::huffman;
#include "generated_inputs.hpp"  // the bench's noise and smooth inputs (-Ibenchmarks)
using namespace ncclz_bench;
std::uint64_t gate_with(const hh::tile_deltas& d, std::uint32_t elements, std::uint32_t vb, double Ld) {
  const std::uint32_t L = (std::uint32_t)Ld;
  std::array<std::uint32_t, hh::kMaxSymbols> hist{};
  for (std::size_t j = 0; j < d.zigzagged.size(); ++j)
    if (format::in_selector_sample(static_cast<std::uint32_t>(j + 1))) ++hist[hh::symbol_of(d.zigzagged[j], L)];
  std::uint64_t sum = 0, extra = 0; std::uint32_t sampled = 0;
  for (std::uint32_t s = 0; s < hh::kMaxSymbols; ++s) {
    sum += format::huffman::c_log_c(hist[s]); sampled += hist[s];
    if (s >= L) extra += std::uint64_t{hist[s]} * format::huffman::escape_bits(format::huffman::class_width(s, L), L);
  }
  return format::huffman::gate_tile_bytes(sum, extra, sampled, elements, (std::uint32_t)d.outlier_index.size(), vb);
}
template <class T>
void run(const char* name, const std::vector<float>& f, double bound) {
  std::vector<T> in(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) in[i] = from_compute<T>(static_cast<compute_t<T>>(f[i]));
  std::span<const T> s(in);
  const auto p = Quantizer<RelBound>::make_params<T>(bound, host::find_range(s));
  const double alphas[] = {ALPHA0, ALPHA1}; const int margin_shift = MSHIFT;
  unsigned tiles = 0, gate = 0, gmm[2] = {}, taken = 0, lost[2] = {};
  double lostb[2] = {}, total = 0;
  for (std::uint64_t t = 0; t < format::tile_count(in.size()); ++t) {
    const auto values = s.subspan(t * format::kTileElements, format::tile_elements(in.size(), t));
    const auto el = static_cast<std::uint32_t>(values.size());
    ++tiles;
    const std::uint64_t fl = host::detail::fixed_length_tile<A>(values, p).size();
    const std::uint64_t bar = format::entropy_bar(fl);
    const auto d = hh::deltas_of<A>(values, p);
    const bool g = hh::gate_tile_bytes(d, el, sizeof(T)) < bar;
    bool tk = false; std::uint64_t h = fl;
    if (g) { ++gate; const auto e = hh::estimate_tile(d, el, sizeof(T));
      if (e.bytes < bar) { h = hh::encode_tile_with<T>(values, d, e.literals).size(); tk = h < bar; } }
    taken += tk; total += tk ? h : fl;
    for (int a = 0; a < 2; ++a) { const std::uint64_t gb = gate_with(d, el, sizeof(T), alphas[a]); const bool gm = (margin_shift ? gb + (bar >> margin_shift) : gb) < bar; gmm[a] += gm; if (tk && !gm) { ++lost[a]; lostb[a] += double(fl) - double(h); } }
  }
  std::printf("%-14s %-4s %g: tiles %5u gate256 %5u L0 %5u L1 %5u taken %5u | lost L0 %u (%.3f%% bytes) L1 %u (%.3f%%)\n", name,
              sizeof(T) == 4 ? "f32" : std::is_same_v<T, __half> ? "f16" : "bf16", bound, tiles, gate, gmm[0], gmm[1], taken,
              lost[0], 100 * lostb[0] / total, lost[1], 100 * lostb[1] / total);
}
std::vector<float> load(const std::string& f) { std::ifstream i(f, std::ios::binary | std::ios::ate); std::vector<float> v(i.tellg() / 4); i.seekg(0); i.read((char*)v.data(), v.size() * 4); return v; }
int main() {
  const std::size_t n = std::size_t{16} << 20;
  const auto noise = make_noise(n / 4, 7); const auto smooth = make_smooth<float>(n / 4, 7);
  for (double b : {1e-3, 1e-4}) {
    run<float>("smooth", smooth, b); run<__nv_bfloat16>("smooth", smooth, b); run<__half>("smooth", smooth, b);
    run<float>("noise", noise, b); run<__nv_bfloat16>("noise", noise, b); run<__half>("noise", noise, b);
    for (const char* fn : {"trinidad", "pop_t", "fice", "hgt", "uv300_U", "uv300_V", "nc4uvt_T", "nc4uvt_U", "nc4uvt_V", "vinth2p_T", "sst", "sstanom_SST", "seam_ps"}) {
      const auto v = load(std::string("data/") + fn + ".f32"); run<float>(fn, v, b); run<__nv_bfloat16>(fn, v, b);
    }
  }
}
