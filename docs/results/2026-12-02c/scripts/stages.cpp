// Host: how far Adaptive's huffman path goes per tile (gate, estimate, codebook built, taken) on the
// bench's noise and smooth inputs, f32/bf16/f16, REL 1e-3 and 1e-4; the waste is tiles whose
// codebook is built and then loses to fixed_length's bar.
// g++ -std=c++20 -O2 -Iinclude -I/usr/local/cuda/include THIS -o /tmp/stages && /tmp/stages
#include <cstdio>
#include <cmath>
#include <random>
#include <vector>
#include "ncclz/host/reference_codec.hpp"
using namespace ncclz;
using A = Codec<Quantizer<RelBound>, EntropyCoder<Adaptive>>;
static std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
std::vector<float> make_noise(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  std::uint64_t s = seed ^ 0xA5A5A5A5A5A5A5A5ull;
  for (float& x : v) x = float(splitmix64(s) >> 40) * 0x1p-23f - 1.0f;
  return v;
}
/// A smooth 2D field (4096 columns): four plane waves with random wavelengths (256..4096 points)
/// and phases, plus a small mean-reverting random walk along memory order.
template <class T>
std::vector<T> make_smooth(std::size_t n, std::uint64_t seed) {
  constexpr std::size_t W = 4096;
  constexpr int K = 4;
  const std::size_t H = (n + W - 1) / W;
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double two_pi = 6.283185307179586;
  // sin(a i + b j + p) = sin(a i) cos(b j + p) + cos(a i) sin(b j + p): tables per column and row.
  std::vector<double> sx(K * W), cx(K * W), sy(K * H), cy(K * H), amp(K);
  for (int k = 0; k < K; ++k) {
    amp[k] = (0.5 + u(g)) / (k + 1);
    const double a = two_pi / (256 + 3840 * u(g)), b = two_pi / (256 + 3840 * u(g)), p = two_pi * u(g);
    for (std::size_t i = 0; i < W; ++i) sx[k * W + i] = std::sin(a * double(i)), cx[k * W + i] = std::cos(a * double(i));
    for (std::size_t j = 0; j < H; ++j) sy[k * H + j] = std::sin(b * double(j) + p), cy[k * H + j] = std::cos(b * double(j) + p);
  }
  std::vector<T> v(n);
  std::uint64_t s = seed ^ 0x5DEECE66Dull;
  double walk = 0.0;
  for (std::size_t idx = 0; idx < n; ++idx) {
    const std::size_t i = idx % W, j = idx / W;
    double x = 0.0;
    for (int k = 0; k < K; ++k) x += amp[k] * (sx[k * W + i] * cy[k * H + j] + cx[k * W + i] * sy[k * H + j]);
    walk = 0.999 * walk + 1e-3 * (double(splitmix64(s) >> 11) * 0x1p-52 - 1.0);
    v[idx] = from_compute<T>(static_cast<compute_t<T>>(x + walk));
  }
  return v;
}

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
