// Host: how far Adaptive's huffman path goes per tile (gate, estimate, codebook built, taken) on the
// bench's noise and smooth inputs, f32/bf16/f16, REL 1e-3 and 1e-4; the waste is tiles whose
// codebook is built and then loses to fixed_length's bar.
// g++ -std=c++20 -O2 -Iinclude -Ibenchmarks -I/usr/local/cuda/include THIS -o /tmp/stages && /tmp/stages
#include <cstdio>
#include <cmath>
#include <random>
#include <vector>
#include "ncclz/host/reference_codec.hpp"
#include "generated_inputs.hpp"  // the bench's noise and smooth inputs
using namespace ncclz;
using namespace ncclz_bench;
using A = Codec<Quantizer<RelBound>, EntropyCoder<Adaptive>>;
template <class T>
void stages(const char* name, const std::vector<float>& f, double bound) {
  std::vector<T> in(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) in[i] = from_compute<T>(static_cast<compute_t<T>>(f[i]));
  std::span<const T> s(in);
  const auto p = Quantizer<RelBound>::make_params<T>(bound, host::find_range(s));
  unsigned tiles = 0, gate = 0, est = 0, taken = 0;
  double est_err = 0;
  for (std::uint64_t t = 0; t < format::tile_count(in.size()); ++t) {
    const auto values = s.subspan(t * format::kTileElements, format::tile_elements(in.size(), t));
    const auto elements = static_cast<std::uint32_t>(values.size());
    ++tiles;
    const std::uint64_t fl = host::detail::fixed_length_tile<A>(values, p).size();
    const std::uint64_t bar = format::entropy_bar(fl);
    const auto d = host::detail::huffman::deltas_of<A>(values, p);
    if (host::detail::huffman::gate_tile_bytes(d, elements, sizeof(T)) >= bar) continue;
    ++gate;
    const auto e = host::detail::huffman::estimate_tile(d, elements, sizeof(T));
    if (e.bytes >= bar) continue;
    ++est;
    const auto h = host::detail::huffman::encode_tile_with<T>(values, d, e.literals).size();
    est_err += double(h) / e.bytes - 1;
    if (h < bar) ++taken;
  }
  std::printf("%-8s %-5s %g: tiles %u gate-pass %u estimate-pass %u huffman-taken %u (built-and-dropped %u; exact/estimate-1 %.4f)\n",
              name, sizeof(T) == 4 ? "f32" : std::is_same_v<T, __half> ? "f16" : "bf16", bound, tiles, gate, est, taken, est - taken,
              est ? est_err / est : 0.0);
}
int main() {
  const std::size_t n = std::size_t{16} << 20;  // 64 MiB of f32 (the bench's size)
  const auto noise = make_noise(n / 4, 7);  // a quarter: the rates are what matters
  const auto smooth = make_smooth<float>(n / 4, 7);
  for (double b : {1e-3, 1e-4}) {
    stages<float>("smooth", smooth, b);
    stages<__nv_bfloat16>("smooth", smooth, b);
    stages<__half>("smooth", smooth, b);
    stages<float>("noise", noise, b);
    stages<__nv_bfloat16>("noise", noise, b);
    stages<__half>("noise", noise, b);
  }
}
