// Host: Adaptive's gate with B bits a sampled symbol (format::huffman::kGateBitsPerSymbol), B = 0
// (369d9d9's gate), 8, 10, 12, 14, 16, on the bench's noise and smooth inputs (f32, bf16, f16;
// noise at six bounds) and the 13 fields (REL 1e-3, 1e-4). Per input and B: tiles the gate passes
// / tiles huffman takes against fixed_length's bar that the gate stops, and the bytes that costs
// (zero_run left out). B = kGateBitsPerSymbol is checked against the library's gate tile by tile.
// g++ -std=c++20 -O2 -Iinclude -Ibenchmarks -I/usr/local/cuda/include THIS
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>
#include "ncclz/host/reference_codec.hpp"
using namespace ncclz;
using A = Codec<Quantizer<RelBound>, EntropyCoder<Adaptive>>;
namespace hh = host::detail::huffman;
namespace fh = format::huffman;
#include "generated_inputs.hpp"  // the bench's noise and smooth inputs (-Ibenchmarks)
using namespace ncclz_bench;
constexpr int kBits[] = {0, 8, 10, 12, 14, 16};
constexpr int kVariants = 6;
// format::huffman::gate_tile_bytes with `bits_per_symbol` in place of kGateBitsPerSymbol.
std::uint64_t gate_with(const hh::tile_deltas& d, std::uint32_t elements, std::uint32_t vb, std::uint64_t bits_per_symbol) {
  std::array<std::uint32_t, hh::kMaxSymbols> hist{};
  for (std::size_t j = 0; j < d.zigzagged.size(); ++j)
    if (format::in_selector_sample(static_cast<std::uint32_t>(j + 1))) ++hist[hh::symbol_of(d.zigzagged[j], 256)];
  std::uint64_t clogc = 0, extra = 0, symbols = 0;
  for (std::uint32_t s = 0; s < hh::kMaxSymbols; ++s) {
    clogc += fh::c_log_c(hist[s]);
    symbols += hist[s] > 0;
    if (s >= 256) extra += std::uint64_t{hist[s]} * fh::escape_bits(fh::class_width(s, 256), 256);
  }
  const std::uint64_t coded = elements > 0 ? elements - 1 : 0;
  const std::uint32_t sampled = format::selector_sample_size(elements);
  const std::uint64_t entropy = sampled == 0 ? 0 : std::uint64_t{sampled} * fh::log2_fixed(sampled) - clogc;
  const std::uint64_t sample_bits = sampled == 0 ? 0 : ((entropy + (extra << 16)) * coded / sampled) >> 16;
  const std::uint64_t bytes = fh::tile_layout_of(1, fh::subblock_count(elements), sample_bits + bits_per_symbol * symbols,
                                                 static_cast<std::uint32_t>(d.outlier_index.size()), vb).total;
  return bytes + bytes / fh::kGateMarginDivisor;
}
template <class T>
void run(const char* name, const std::vector<float>& f, double bound) {
  std::vector<T> in(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) in[i] = from_compute<T>(static_cast<compute_t<T>>(f[i]));
  std::span<const T> s(in);
  const auto p = Quantizer<RelBound>::make_params<T>(bound, host::find_range(s));
  unsigned tiles = 0, taken = 0, pass[kVariants] = {}, lost[kVariants] = {};
  double total = 0, lost_bytes[kVariants] = {};
  for (std::uint64_t t = 0; t < format::tile_count(in.size()); ++t) {
    const auto values = s.subspan(t * format::kTileElements, format::tile_elements(in.size(), t));
    const auto el = static_cast<std::uint32_t>(values.size());
    ++tiles;
    const std::uint64_t fl = host::detail::fixed_length_tile<A>(values, p).size();
    const std::uint64_t bar = format::entropy_bar(fl);
    const auto d = hh::deltas_of<A>(values, p);
    const auto e = hh::estimate_tile(d, el, sizeof(T));
    std::uint64_t h = fl;
    bool tk = false;
    if (e.bytes < bar) { h = hh::encode_tile_with<T>(values, d, e.literals).size(); tk = h < bar; }
    taken += tk;
    total += tk ? h : fl;
    if (gate_with(d, el, sizeof(T), fh::kGateBitsPerSymbol) != hh::gate_tile_bytes(d, el, sizeof(T))) throw std::logic_error("gate_with != library");
    for (int v = 0; v < kVariants; ++v) {
      const bool passes = gate_with(d, el, sizeof(T), kBits[v]) < bar;
      pass[v] += passes;
      if (tk && !passes) { ++lost[v]; lost_bytes[v] += double(fl) - double(h); }
    }
  }
  std::printf("%-12s %-4s %-6g tiles %4u taken %4u |", name, sizeof(T) == 4 ? "f32" : std::is_same_v<T, __half> ? "f16" : "bf16", bound, tiles, taken);
  for (int v = 0; v < kVariants; ++v) std::printf(" %4u/%3u %5.2f%% |", pass[v], lost[v], 100 * lost_bytes[v] / total);
  std::printf("\n");
}
std::vector<float> load(const std::string& f) { std::ifstream i(f, std::ios::binary | std::ios::ate); std::vector<float> v(i.tellg() / 4); i.seekg(0); i.read((char*)v.data(), v.size() * 4); return v; }
int main() {
  std::printf("per B bits a sampled symbol:"); for (int b : kBits) std::printf(" [B=%d passed/stopped wins, bytes]", b); std::printf("\n");
  const std::size_t n = std::size_t{16} << 20;
  const auto noise = make_noise(n / 4, 7); const auto smooth = make_smooth<float>(n / 4, 7);
  for (double b : {1e-2, 3e-3, 2e-3, 1e-3, 5e-4, 1e-4}) {
    run<float>("noise", noise, b); run<__nv_bfloat16>("noise", noise, b); run<__half>("noise", noise, b);
  }
  for (double b : {1e-3, 1e-4}) {
    run<float>("smooth", smooth, b); run<__nv_bfloat16>("smooth", smooth, b); run<__half>("smooth", smooth, b);
    for (const char* fn : {"trinidad", "pop_t", "fice", "hgt", "uv300_U", "uv300_V", "nc4uvt_T", "nc4uvt_U", "nc4uvt_V", "vinth2p_T", "sst", "sstanom_SST", "seam_ps"}) {
      const auto v = load(std::string("data/") + fn + ".f32"); run<float>(fn, v, b); run<__nv_bfloat16>(fn, v, b); run<__half>(fn, v, b);
    }
  }
}
