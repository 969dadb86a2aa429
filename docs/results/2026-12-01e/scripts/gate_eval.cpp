// Host analysis (not built by meson): per tile of ncclz-codec-bench's smooth (or noise) input, the
// fixed_length bytes, its entropy bar, Adaptive's gate (format::huffman::gate_tile_bytes), huffman's
// estimate and exact tile; how many tiles pass each, and how many exact winners the gate stops.
//   g++ -std=c++20 -O2 -Iinclude -Ibenchmarks -I/usr/local/cuda/include docs/results/2026-12-01e/scripts/gate_eval.cpp -o /tmp/g
//   /tmp/g 1e-4 64   (REL bound, MiB)      /tmp/g 1e-3 16 noise
#include <cstdio>
#include <random>
#include <cmath>
#include "ncclz/host/reference_codec.hpp"
#include "generated_inputs.hpp"  // the bench's noise and smooth inputs
using namespace ncclz;
using namespace ncclz_bench;
int main(int argc, char** argv) {
  using C = Codec<Quantizer<RelBound>, EntropyCoder<Adaptive>>;
  const double bound = argc > 1 ? atof(argv[1]) : 1e-4;
  const std::size_t n = (argc > 2 ? atoi(argv[2]) : 16) << 20 >> 2;
  std::vector<float> in;
  if (argc > 3) { in = make_noise(n, 0x28ccec9171bef295ull); }
  else in = make_smooth<float>(n, 0x28ccec9171bef295ull);
  const auto p = C::quantizer::make_params<float>(bound, host::find_range<float>(in));
  int tiles = 0, gate_pass = 0, est_pass = 0, exact_pass = 0, gate_miss = 0;
  double gsum = 0, esum = 0, bsum = 0;
  for (std::size_t t = 0; t * 8192 < n; ++t, ++tiles) {
    std::span<const float> v(in.data() + t * 8192, 8192);
    const auto f = host::detail::fixed_length_tile<C>(v, p).size();
    const auto bar = format::entropy_bar(f);
    const auto d = host::detail::huffman::deltas_of<C>(v, p);
    const auto g = host::detail::huffman::gate_tile_bytes(d, 8192, 4);
    const auto hist = host::detail::huffman::histogram(d.zigzagged);
    const auto L = host::detail::huffman::choose_literals(hist);
    const auto sym = host::detail::huffman::symbol_counts(hist, L).size();
    const auto est = format::huffman::estimated_tile_bytes(host::detail::huffman::estimated_bits(hist, L), sym, 8192, d.outlier_index.size(), 4);
    const auto h = est < bar ? host::detail::huffman::encode_tile_with<float>(v, d, L).size() : ~0ull;
    gate_pass += g < bar; est_pass += est < bar; exact_pass += h < bar; gate_miss += g >= bar && h < bar;
    gsum += g; esum += est; bsum += bar;
    if (t < 4) std::printf("tile %zu fixed %zu bar %llu gate %llu est %llu L %u symbols %zu\n", t, f, (unsigned long long)bar, (unsigned long long)g, (unsigned long long)est, L, sym);
  }
  std::printf("bound %g tiles %d: pass gate %d, estimate %d, exact %d; exact winners the gate stops %d; mean bar %.0f gate %.0f est %.0f\n",
              bound, tiles, gate_pass, est_pass, exact_pass, gate_miss, bsum / tiles, gsum / tiles, esum / tiles);
}
