// What the device codec's tests (test_device_codec*.cu) share: device buffers, input shapes, the
// bound check, the device-against-host comparison and the codecs they run. The tests are split
// over several translation units so that they compile in parallel.
#pragma once

#include <catch2/catch.hpp>

#include <ncclz/host/reference_codec.hpp>
#include <ncclz/ncclz.cuh>

#include "codec_kernels.cuh"  // the codecs' kernels, compiled once (src/kernels/)
#include "../host/test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

template <class T>
struct device_buffer {
  T* ptr = nullptr;
  std::size_t count = 0;
  explicit device_buffer(std::size_t n) : count(n) { NCCLZ_CUDA_TRY(cudaMalloc(&ptr, std::max<std::size_t>(n, 1) * sizeof(T))); }
  ~device_buffer() { cudaFree(ptr); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
};

using ncclz_test::fresh_seed;
using ncclz_test::from_double;
using ncclz_test::limits;
using ncclz_test::tile_modes;
using ncclz_test::to_double;

enum class shape { smooth, noisy, constant, spiky, special, overflow, sparse, skewed, blocky };

inline const char* name_of(shape s) {
  switch (s) {
    case shape::smooth: return "smooth";
    case shape::noisy: return "noisy";
    case shape::constant: return "constant";
    case shape::spiky: return "spiky";
    case shape::special: return "nan_inf";
    case shape::overflow: return "overflow";
    case shape::sparse: return "sparse";
    case shape::skewed: return "skewed";
    case shape::blocky: return "blocky";
  }
  return "?";
}

template <class T>
std::vector<T> make_input(shape s, std::size_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(-1, 1);
  const double phase = uniform(rng) * 3;
  double walk = 0;
  for (std::size_t i = 0; i < n; ++i) {
    walk += 0.01 * normal(rng);
    switch (s) {
      case shape::smooth: v[i] = from_double<T>(100 * std::sin(i * 1e-3 + phase) + walk); break;
      case shape::noisy: v[i] = from_double<T>(uniform(rng)); break;
      case shape::constant: v[i] = from_double<T>(3.25 + phase); break;
      case shape::spiky: v[i] = from_double<T>(std::sin(i * 1e-2) + (rng() % 997 == 0 ? 1e4 * uniform(rng) : 0.0)); break;
      case shape::special: v[i] = from_double<T>(std::sin(i * 1e-2) + walk); break;
      case shape::overflow: v[i] = from_double<T>(1e12 * uniform(rng)); break;  // Inf for __half
      // Thresholded gradients: 90% zeros.
      case shape::sparse: v[i] = from_double<T>(rng() % 10 == 0 ? normal(rng) : 0.0); break;
      // Laplace-like noise: most deltas near zero, a long tail (codes Huffman wins on).
      case shape::skewed: v[i] = from_double<T>((rng() % 2 ? 1 : -1) * std::log(1 - 0.999 * std::fabs(uniform(rng))) * (rng() % 64 == 0 ? 40.0 : 1.0)); break;
      case shape::blocky:  // gradient-like: a scale per 1024 values, some blocks all zero
        v[i] = (i / 1024) % 5 == 3 ? from_double<T>(0.0) : from_double<T>(normal(rng) * std::ldexp(1.0, static_cast<int>((i / 1024) * 7 % 17) - 8));
        break;
    }
  }
  if (s == shape::special) {
    for (std::size_t i = 0; i < n; i += 1 + rng() % 300) {
      const int k = static_cast<int>(rng() % 3);
      v[i] = k == 0 ? limits<T>::quiet_NaN() : (k == 1 ? limits<T>::infinity() : from_double<T>(-to_double(limits<T>::infinity())));
    }
  }
  return v;
}

template <class T>
void require_within_bound(const std::vector<T>& in, const std::vector<T>& out, double eb) {
  std::size_t bad = 0, first_bad = 0;
  double max_err = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    bool ok;
    const double x = to_double(in[i]), y = to_double(out[i]);
    if (std::isnan(x)) ok = std::isnan(y);
    else if (std::isinf(x)) ok = y == x;
    else {
      const double err = std::fabs(x - y);
      ok = err <= eb;  // also false for a NaN out
      if (err > max_err) max_err = err;
    }
    if (!ok && bad++ == 0) first_bad = i;
  }
  INFO("max error " << max_err << " bound " << eb << "; first bad element " << first_bad);
  REQUIRE(bad == 0);
}

inline double error_bound_of(const std::vector<std::byte>& chunk) {
  return ncclz::detail::parse_header(chunk.data(), chunk.size()).error_bound;
}

template <class T>
std::vector<T> download(const T* d, std::size_t n) {
  std::vector<T> h(n);
  if (n) NCCLZ_CUDA_TRY(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

template <class T>
void upload(T* d, const std::vector<T>& h) {
  if (!h.empty()) NCCLZ_CUDA_TRY(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
}

/// Device and host must write the same bytes, and read each other's bytes to the same values.
template <class Codec, class T>
void require_device_matches_host(const std::vector<T>& in, double bound) {
  const std::size_t n = in.size();
  const std::vector<std::byte> host_chunk = ncclz::host::compress<Codec>(std::span<const T>(in), bound);

  ncclz::Compressor<Codec, T> codec(n);
  const std::size_t capacity = ncclz::max_compressed_bytes<T, Codec>(n);
  device_buffer<T> d_in(n), d_out(n);
  device_buffer<std::byte> d_chunk(capacity);
  upload(d_in.ptr, in);
  NCCLZ_CUDA_TRY(cudaMemset(d_chunk.ptr, 0xA5, capacity));  // poison: padding must be written too
  codec.compress(d_in.ptr, n, d_chunk.ptr, capacity, bound);
  const std::uint64_t size = codec.compressed_bytes();
  REQUIRE(size == host_chunk.size());
  const std::vector<std::byte> device_chunk = download(d_chunk.ptr, size);
  const auto mismatch = std::mismatch(device_chunk.begin(), device_chunk.end(), host_chunk.begin());
  INFO("first differing byte at " << (mismatch.first - device_chunk.begin()) << " of " << size);
  REQUIRE(mismatch.first == device_chunk.end());

  // The device decodes the host's chunk to exactly what the host decodes it to.
  std::vector<T> host_out(n);
  ncclz::host::decompress<Codec>(std::span<const std::byte>(host_chunk), std::span<T>(host_out));
  upload(d_chunk.ptr, host_chunk);
  if (n) NCCLZ_CUDA_TRY(cudaMemset(d_out.ptr, 0xFF, n * sizeof(T)));
  codec.decompress(d_chunk.ptr, host_chunk.size(), d_out.ptr, n);
  codec.check();
  const std::vector<T> device_out = download(d_out.ptr, n);
  REQUIRE(std::memcmp(device_out.data(), host_out.data(), n * sizeof(T)) == 0);
  require_within_bound(in, device_out, error_bound_of(host_chunk));
}

template <class C, class V>
struct combo {
  using codec = C;
  using value = V;
};
using RelFL = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using AbsFL = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using RelRaw = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Raw>>;
using AbsRaw = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::Raw>>;
using RelHuf = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Huffman>>;
using AbsHuf = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::Huffman>>;
using RelAd = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Adaptive>>;
using AbsAd = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::Adaptive>>;
using RelZR = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::ZeroRun>>;
using AbsZR = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::ZeroRun>>;
using Fixed8 = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<8>>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using Fixed4 = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<4>>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using Fixed8Ad = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<8>>, ncclz::EntropyCoder<ncclz::Adaptive>>;
using Fixed4Ad = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<4>>, ncclz::EntropyCoder<ncclz::Adaptive>>;
using Fixed8Huf = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<8>>, ncclz::EntropyCoder<ncclz::Huffman>>;
// Without tile checksums.
using Unchecked = ncclz::Integrity<ncclz::NoChecksums>;
using RelFLNoCheck = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>, Unchecked>;
using RelAdNoCheck = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Adaptive>, Unchecked>;
using Fixed8NoCheck = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<8>>, ncclz::EntropyCoder<ncclz::FixedLength>, Unchecked>;

/// Device and host code each shape, size and bound of TEST_CASE "device codec is bit-exact with
/// the host reference" to the same bytes (its element types are split over test_device_codec.cu
/// and test_device_codec_entropy.cu).
template <class Codec, class T>
void require_bit_exact_with_host() {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const bool rel = Codec::quantizer::needs_range;
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{31}, std::size_t{32}, std::size_t{33},
                              std::size_t{8191}, std::size_t{8192}, std::size_t{8193}, (std::size_t{1} << 20) + 7}) {
    for (const shape s : {shape::smooth, shape::noisy, shape::constant, shape::spiky, shape::special, shape::overflow,
                          shape::sparse, shape::skewed}) {
      // The host reference of the entropy modes takes a while on a million values: fewer cases there.
      const bool large = n > 100000 && Codec::coder::id != ncclz::coder_id::fixed_length && Codec::coder::id != ncclz::coder_id::raw;
      if (large && s != shape::smooth && s != shape::sparse && s != shape::special) continue;
      for (const double bound : rel ? std::vector<double>{1e-2, 1e-4} : std::vector<double>{1e-1, 1e-4}) {
        if (large && bound == (rel ? 1e-2 : 1e-1)) continue;
        CAPTURE(n, name_of(s), bound);
        require_device_matches_host<Codec>(make_input<T>(s, n, rng), bound);
      }
    }
  }
}

}  // namespace
