// Host analysis (not built by meson): per tile of ncclz-codec-bench's smooth (or noise) input, the fixed_length
// bytes, huffman's estimate and its exact tile, and how much each tile where huffman wins saves.
//   g++ -std=c++20 -O2 -Iinclude -Ibenchmarks -I/usr/local/cuda/include docs/results/2026-12-01d/bar/adaptive_tiles.cpp -o /tmp/t
//   /tmp/t 1e-4 64   (REL bound, MiB)      /tmp/t 1e-3 16 noise q   (noise; q: no per-tile lines)
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
  int est_wins = 0, exact_wins = 0, tiles = 0; double fsum = 0, hsum = 0, esum = 0;
  for (std::size_t t = 0; t * 8192 < n; ++t, ++tiles) {
    std::span<const float> v(in.data() + t * 8192, 8192);
    const auto f = host::detail::fixed_length_tile<C>(v, p).size();
    const auto d = host::detail::huffman::deltas_of<C>(v, p);
    const auto hist = host::detail::huffman::histogram(d.zigzagged);
    const auto L = host::detail::huffman::choose_literals(hist);
    const auto sym = host::detail::huffman::symbol_counts(hist, L).size();
    const auto est = format::huffman::estimated_tile_bytes(host::detail::huffman::estimated_bits(hist, L), sym, 8192, d.outlier_index.size(), 4);
    const auto h = host::detail::huffman::encode_tile_with<float>(v, d, L).size();
    est_wins += est < f; if (h < f) if (argc < 5) std::printf("win tile %zu fixed %zu exact %zu saves %.2f%%\n", t, f, h, 100.0*(f-h)/f); exact_wins += h < f; fsum += f; hsum += h; esum += est;
    if (t < 6) std::printf("tile %zu fixed %zu est %llu exact %zu L %u\n", t, f, (unsigned long long)est, h, L);
  }
  std::printf("bound %g tiles %d: estimate beats fixed %d, exact beats fixed %d; sums fixed %.0f est %.0f exact %.0f\n", bound, tiles, est_wins, exact_wins, fsum, esum, hsum);
}
