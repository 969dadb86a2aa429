// Host analysis (not built by meson): per tile of ncclz-codec-bench's smooth (or noise) input, the
// fixed_length bytes, its entropy bar, Adaptive's gate (format::huffman::gate_tile_bytes), huffman's
// estimate and exact tile; how many tiles pass each, and how many exact winners the gate stops.
//   g++ -std=c++20 -O2 -Iinclude -I/usr/local/cuda/include docs/results/2026-12-01e/scripts/gate_eval.cpp -o /tmp/g
//   /tmp/g 1e-4 64   (REL bound, MiB)      /tmp/g 1e-3 16 noise
#include <cstdio>
#include <random>
#include <cmath>
#include "ncclz/host/reference_codec.hpp"
using namespace ncclz;
static std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
std::vector<float> make_smooth(std::size_t n, std::uint64_t seed) {
  constexpr std::size_t W = 4096; constexpr int K = 4;
  const std::size_t H = (n + W - 1) / W;
  std::mt19937_64 g(seed); std::uniform_real_distribution<double> u(0.0, 1.0);
  const double two_pi = 6.283185307179586;
  std::vector<double> sx(K * W), cx(K * W), sy(K * H), cy(K * H), amp(K);
  for (int k = 0; k < K; ++k) {
    amp[k] = (0.5 + u(g)) / (k + 1);
    const double a = two_pi / (256 + 3840 * u(g)), b = two_pi / (256 + 3840 * u(g)), p = two_pi * u(g);
    for (std::size_t i = 0; i < W; ++i) sx[k * W + i] = std::sin(a * double(i)), cx[k * W + i] = std::cos(a * double(i));
    for (std::size_t j = 0; j < H; ++j) sy[k * H + j] = std::sin(b * double(j) + p), cy[k * H + j] = std::cos(b * double(j) + p);
  }
  std::vector<float> v(n); std::uint64_t s = seed ^ 0x5DEECE66Dull; double walk = 0.0;
  for (std::size_t idx = 0; idx < n; ++idx) {
    const std::size_t i = idx % W, j = idx / W; double x = 0.0;
    for (int k = 0; k < K; ++k) x += amp[k] * (sx[k * W + i] * cy[k * H + j] + cx[k * W + i] * sy[k * H + j]);
    walk = 0.999 * walk + 1e-3 * (double(splitmix64(s) >> 11) * 0x1p-52 - 1.0);
    v[idx] = float(x + walk);
  }
  return v;
}
int main(int argc, char** argv) {
  using C = Codec<Quantizer<RelBound>, EntropyCoder<Adaptive>>;
  const double bound = argc > 1 ? atof(argv[1]) : 1e-4;
  const std::size_t n = (argc > 2 ? atoi(argv[2]) : 16) << 20 >> 2;
  std::vector<float> in;
  if (argc > 3) { in.resize(n); std::uint64_t s = 0x28ccec9171bef295ull ^ 0xA5A5A5A5A5A5A5A5ull; for (float& x : in) x = float(splitmix64(s) >> 40) * 0x1p-23f - 1.0f; }
  else in = make_smooth(n, 0x28ccec9171bef295ull);
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
