// The codec bench's generated inputs (smooth and noise), in a header so that host-only programs
// (studies of the coders' choices with the reference codec) measure the same data the bench does.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "ncclz/format.hpp"

namespace ncclz_bench {

inline std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
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
    v[idx] = ncclz::from_compute<T>(static_cast<ncclz::compute_t<T>>(x + walk));
  }
  return v;
}

/// Uniform floats in [-1, 1), 24 random bits each.
inline std::vector<float> make_noise(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  std::uint64_t s = seed ^ 0xA5A5A5A5A5A5A5A5ull;
  for (float& x : v) x = float(splitmix64(s) >> 40) * 0x1p-23f - 1.0f;
  return v;
}

}  // namespace ncclz_bench
