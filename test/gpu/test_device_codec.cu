// The device codec against the host reference codec: bit-exact streams both ways, the error bound
// on every element, bad chunks and bad arguments rejected. Fresh random data in every test.
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

const char* name_of(shape s) {
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

double error_bound_of(const std::vector<std::byte>& chunk) {
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
// Without tile checksums.
using Unchecked = ncclz::Integrity<ncclz::NoChecksums>;
using RelFLNoCheck = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>, Unchecked>;
using RelAdNoCheck = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Adaptive>, Unchecked>;
using Fixed8NoCheck = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<8>>, ncclz::EntropyCoder<ncclz::FixedLength>, Unchecked>;

}  // namespace

TEMPLATE_TEST_CASE("device codec is bit-exact with the host reference: FixedRate", "[gpu][codec][fixed_rate]",
                   (combo<Fixed8, float>), (combo<Fixed8, double>), (combo<Fixed8, __half>), (combo<Fixed8, __nv_bfloat16>),
                   (combo<Fixed4, float>), (combo<Fixed4, double>), (combo<Fixed4, __half>), (combo<Fixed4, __nv_bfloat16>),
                   (combo<Fixed8Ad, float>), (combo<Fixed8Ad, __nv_bfloat16>), (combo<Fixed8NoCheck, float>),
                   (combo<Fixed8NoCheck, double>)) {
  using Codec = typename TestType::codec;
  using T = typename TestType::value;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1023}, std::size_t{1024}, std::size_t{1025},
                              std::size_t{8193}, (std::size_t{1} << 20) + 7}) {
    for (const shape s : {shape::smooth, shape::noisy, shape::constant, shape::spiky, shape::special, shape::overflow,
                          shape::blocky}) {
      const bool large = n > 100000;  // the host reference takes a while: fewer cases there
      if (large && s != shape::smooth && s != shape::special && s != shape::blocky) continue;
      for (const double bound : {static_cast<double>(Codec::quantizer::bits), 0.0}) {
        if (large && bound == 0.0) continue;
        CAPTURE(n, name_of(s), bound);
        require_device_matches_host<Codec>(make_input<T>(s, n, rng), bound);
      }
    }
  }
}

TEST_CASE("device FixedRate: a bad step table or bound is rejected", "[gpu][codec][fixed_rate]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const std::vector<float> in = make_input<float>(shape::blocky, 3 * 8192 + 100, rng);
  const std::vector<std::byte> good = ncclz::host::compress<Fixed8>(std::span<const float>(in), 8);
  ncclz::Compressor<Fixed8, float> codec(in.size());
  device_buffer<std::byte> d_chunk(good.size());
  device_buffer<float> d_out(in.size());
  const std::uint64_t steps = sizeof(ncclz::format::chunk_header) + ncclz::format::step_table_offset(4, ncclz::format::kTileChecks);
  for (const float bad : {-1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    CAPTURE(bad);
    std::vector<std::byte> c = good;
    std::memcpy(c.data() + steps + 4 * 9, &bad, 4);
    upload(d_chunk.ptr, c);
    codec.decompress(d_chunk.ptr, c.size(), d_out.ptr, in.size());
    REQUIRE_THROWS_WITH(codec.check(), Catch::Contains("step table"));
  }
  upload(d_chunk.ptr, good);
  codec.decompress(d_chunk.ptr, good.size(), d_out.ptr, in.size());
  REQUIRE_NOTHROW(codec.check());
  device_buffer<float> d_in(in.size());
  REQUIRE_THROWS_AS(codec.compress(d_in.ptr, in.size(), d_chunk.ptr, good.size(), 1e-3), ncclz::invalid_argument);
  // Too small for the step table: max_compressed_bytes<T> without the Codec.
  const std::size_t without_steps = ncclz::max_compressed_bytes<float>(in.size());
  device_buffer<std::byte> d_small(without_steps);
  REQUIRE_THROWS_AS(codec.compress(d_in.ptr, in.size(), d_small.ptr, without_steps, 8), ncclz::invalid_argument);
}

TEMPLATE_TEST_CASE("device codec is bit-exact with the host reference", "[gpu][codec]", (combo<RelFL, float>),
                   (combo<RelFL, double>), (combo<RelFL, __half>), (combo<RelFL, __nv_bfloat16>), (combo<AbsFL, float>),
                   (combo<AbsFL, double>), (combo<AbsFL, __half>), (combo<AbsFL, __nv_bfloat16>), (combo<RelRaw, float>),
                   (combo<RelRaw, double>), (combo<RelRaw, __half>), (combo<RelRaw, __nv_bfloat16>),
                   (combo<AbsRaw, float>), (combo<AbsRaw, double>), (combo<AbsRaw, __half>),
                   (combo<AbsRaw, __nv_bfloat16>), (combo<RelHuf, float>), (combo<RelHuf, double>),
                   (combo<RelHuf, __half>), (combo<RelHuf, __nv_bfloat16>), (combo<AbsHuf, float>), (combo<RelAd, float>),
                   (combo<RelAd, double>), (combo<RelAd, __half>), (combo<RelAd, __nv_bfloat16>), (combo<AbsAd, float>),
                   (combo<AbsAd, __half>), (combo<RelZR, float>), (combo<RelZR, double>), (combo<RelZR, __half>),
                   (combo<RelZR, __nv_bfloat16>), (combo<AbsZR, float>), (combo<RelFLNoCheck, float>),
                   (combo<RelFLNoCheck, __half>), (combo<RelAdNoCheck, float>), (combo<RelAdNoCheck, double>)) {
  using Codec = typename TestType::codec;
  using T = typename TestType::value;
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

/// The chunk a collective sends a peer, made two ways: quantize_kernel's codes (and outliers'
/// values) encoded from memory (code_source), and the values quantized by the encoder as it reads
/// them (value_source<T, false>); both with the code limit of `ranks` ranks. Returns them.
template <class Codec, class T>
std::pair<std::vector<std::byte>, std::vector<std::byte>> reduction_chunks(const T* d_in, std::size_t n, double bound,
                                                                           std::uint32_t ranks) {
  namespace k = ncclz::device::detail;
  namespace dd = ncclz::device::detail;
  using Q = typename Codec::quantizer;
  // As the collectives size a reduction's chunk: no raw fallback bounds it.
  const std::size_t capacity = ncclz::format::max_fixed_chunk_bytes(n, sizeof(T)) + k::step_table_bytes<Q, T>(n);
  const dd::workspace_layout l = dd::layout_for(n);
  device_buffer<std::byte> ws(ncclz::device::workspace_bytes<T>(n)), chunk(capacity);
  device_buffer<std::int32_t> codes(n);
  device_buffer<T> outliers(n);
  device_buffer<double> block_max(ncclz::format::scale_count(n) + 1), step(1);
  device_buffer<std::uint64_t> size(1);
  dd::range_keys* range = dd::reset_compress_state(ws.ptr, n, nullptr);
  if constexpr (Q::needs_range) dd::launch_range(d_in, n, range, nullptr);
  k::block_scales scales{};
  if constexpr (ncclz::is_blockwise_v<Q>) scales = dd::launch_block_max(d_in, n, block_max.ptr, nullptr);
  auto* tile_words = reinterpret_cast<std::uint64_t*>(ws.ptr + l.tile_words);
  const unsigned tiles = std::max<unsigned>(static_cast<unsigned>(ncclz::format::tile_count(n)), 1u);
  const auto encoded = [&](auto kernel, auto source) {
    dd::reset_tile_words(ws.ptr, n, nullptr);
    NCCLZ_CUDA_TRY(cudaMemset(chunk.ptr, 0xA5, capacity));  // poison: every byte must be written
    dd::prefer_shared_memory(kernel);
    kernel<<<tiles, k::kTileThreads>>>(source, n, chunk.ptr, size.ptr, range, bound, ranks, tile_words, scales);
    NCCLZ_CUDA_TRY(cudaGetLastError());
    std::uint64_t bytes = 0;
    NCCLZ_CUDA_TRY(cudaMemcpy(&bytes, size.ptr, sizeof bytes, cudaMemcpyDeviceToHost));
    REQUIRE(bytes <= capacity);
    return download(chunk.ptr, bytes);
  };
  if (n) {
    k::quantize_kernel<Q, T><<<static_cast<unsigned>((n + 255) / 256), 256>>>(d_in, n, codes.ptr, outliers.ptr, range, bound,
                                                                               ranks, step.ptr, scales);
    NCCLZ_CUDA_TRY(cudaGetLastError());
  }
  auto from_codes = encoded(k::encode_kernel<Codec, T, k::code_source<T>>, k::code_source<T>{codes.ptr, outliers.ptr});
  auto from_values = encoded(k::encode_kernel<Codec, T, k::value_source<T, false>>, k::value_source<T, false>{d_in});
  return {std::move(from_codes), std::move(from_values)};
}

TEMPLATE_TEST_CASE("a reduction's chunk quantized by its encoder is the chunk of quantize_kernel's codes, byte for byte",
                   "[gpu][codec][reduction]", (combo<RelFL, float>), (combo<RelFL, __half>), (combo<AbsFL, double>),
                   (combo<RelHuf, float>), (combo<RelHuf, __nv_bfloat16>), (combo<RelZR, float>), (combo<RelAd, float>),
                   (combo<RelAd, double>), (combo<RelAd, __half>), (combo<RelAd, __nv_bfloat16>), (combo<AbsAd, float>),
                   (combo<Fixed8, float>), (combo<Fixed4, __nv_bfloat16>), (combo<Fixed8Ad, float>)) {
  using Codec = typename TestType::codec;
  using T = typename TestType::value;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const double bound = [] {
    if constexpr (ncclz::is_blockwise_v<typename Codec::quantizer>) return static_cast<double>(Codec::quantizer::bits);
    else return Codec::quantizer::needs_range ? 1e-3 : 1e-2;
  }();
  // 4 ranks: codes limited to 2^30 / 4, so the overflow shape has outliers a single codec would not.
  for (const std::size_t n : {std::size_t{0}, std::size_t{33}, std::size_t{8193}, std::size_t{3} * 8192 + 777}) {
    for (const shape s : {shape::smooth, shape::noisy, shape::special, shape::overflow, shape::sparse, shape::blocky}) {
      CAPTURE(n, name_of(s));
      const std::vector<T> in = make_input<T>(s, n + 1, rng);
      device_buffer<T> d_in(n + 1);
      upload(d_in.ptr, in);
      for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {  // 1: an element-aligned, not 16-byte-aligned start
        CAPTURE(offset);
        const auto [from_codes, from_values] = reduction_chunks<Codec>(d_in.ptr + offset, n, bound, 4);
        REQUIRE(from_values.size() == from_codes.size());
        const auto mismatch = std::mismatch(from_values.begin(), from_values.end(), from_codes.begin());
        INFO("first differing byte at " << (mismatch.first - from_values.begin()) << " of " << from_values.size());
        REQUIRE(mismatch.first == from_values.end());
      }
    }
  }
}

TEST_CASE("adaptive chunks hold zero_run tiles where codes are sparse", "[gpu][codec]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const std::vector<float> in = make_input<float>(shape::sparse, 20 * 8192 + 5, rng);
  const std::vector<std::byte> chunk = ncclz::host::compress<RelAd>(std::span<const float>(in), 1e-3);
  const std::vector<std::size_t> modes = tile_modes(chunk);
  CAPTURE(modes[0], modes[1], modes[2], modes[3]);
  REQUIRE(modes[static_cast<int>(ncclz::tile_mode::zero_run)] > 10);
  require_device_matches_host<RelAd>(in, 1e-3);
}

TEST_CASE("adaptive counts every element's zeros where its sample is near half", "[gpu][codec]") {
  // In each 16 values, 10 repeat the one before: 5/8 of the deltas are zero, so zero_run is
  // measured (and wins), but the sample (elements 1, 9, 17, ...) sees half of them zero, within
  // 1/16 of half, where the device must count every element as the host does.
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> in(20 * 8192 + 5);
  constexpr bool repeats[16] = {false, true, true, true, true, true, true, false,
                                false, false, true, true, true, true, false, false};
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = i > 0 && repeats[i % 16] ? in[i - 1] : u(rng);
  const std::vector<std::byte> chunk = ncclz::host::compress<RelAd>(std::span<const float>(in), 1e-3);
  const std::vector<std::size_t> modes = tile_modes(chunk);
  CAPTURE(modes[0], modes[1], modes[2], modes[3]);
  REQUIRE(modes[static_cast<int>(ncclz::tile_mode::zero_run)] > 10);
  require_device_matches_host<RelAd>(in, 1e-3);
}

TEST_CASE("adaptive measures zero_run near half zero where the codes are zero, and not where scattered deltas are", "[gpu][codec]") {
  // Both halves have a sample at exactly half zero (elements 1, 9, 17, ...), so every element is
  // counted. Zero codes at random (runs of about 2) between random values: zero_run must be
  // measured, and wins. Half the deltas zero in pairs, the steps between them small: zero_run is
  // not measured (its runs average under 3) and huffman wins. The device must choose as the host.
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  constexpr std::size_t kTiles = 16;
  std::vector<float> in = ncclz_test::half_zero_codes(kTiles, rng);
  in.resize(2 * kTiles * 8192 + 5);
  constexpr char kPairs[] = "zznnzznnnnzznnzz";  // 'z': the value repeats the one before
  float prev = 0.5f;
  for (std::size_t i = kTiles * 8192; i < in.size(); ++i) {
    prev = kPairs[i % 16] == 'z' ? prev : prev + (rng() % 2 ? 0.004f : -0.004f);
    in[i] = prev;
  }
  const std::vector<std::byte> chunk = ncclz::host::compress<RelAd>(std::span<const float>(in), 1e-3);
  const std::vector<std::size_t> modes = tile_modes(chunk);
  CAPTURE(modes[0], modes[1], modes[2], modes[3]);
  REQUIRE(modes[static_cast<int>(ncclz::tile_mode::zero_run)] >= kTiles);
  REQUIRE(modes[static_cast<int>(ncclz::tile_mode::huffman)] >= kTiles - 1);
  require_device_matches_host<RelAd>(in, 1e-3);
}

TEMPLATE_TEST_CASE("huffman and adaptive chunks hold huffman tiles where codes are skewed", "[gpu][codec]", RelHuf, RelAd) {
  using Codec = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const std::vector<float> in = make_input<float>(shape::skewed, 20 * 8192 + 5, rng);
  const std::vector<std::byte> chunk = ncclz::host::compress<Codec>(std::span<const float>(in), 1e-3);
  const std::vector<std::size_t> modes = tile_modes(chunk);
  CAPTURE(modes[0], modes[1], modes[2]);
  REQUIRE(modes[static_cast<int>(ncclz::tile_mode::huffman)] > 10);
  const std::vector<std::byte> fixed = ncclz::host::compress<RelFL>(std::span<const float>(in), 1e-3);
  REQUIRE(chunk.size() < fixed.size());
  require_device_matches_host<Codec>(in, 1e-3);
}

TEST_CASE("adaptive keeps zero_run where huffman's estimate passes but its code loses, as the host does", "[gpu][codec]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  // A walk in steps of one code (AbsBound 0.005: a step of 0.01) that stays put 64.5% of the time
  // and jumps two codes 0.3% of it: zero_run is measured and huffman's entropy estimate passes on
  // every tile, but where the jumps give a fourth delta a code of its own the two one-step deltas'
  // codes grow to 2 and 3 bits and zero_run is smaller (host, seeds 1-3: 9-11 of 32 tiles; the
  // others huffman). The device gives up those codebooks after the merge (build_tile's
  // give_up_at) and finishes the others: the same bytes either way.
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<float> in(32 * 8192);
  double x = 0;
  for (float& v : in) {
    const double r = u(rng);
    if (r < 0.003) x += u(rng) < 0.5 ? -0.02 : 0.02;
    else if (r < 0.179) x += 0.01;
    else if (r < 0.355) x -= 0.01;
    v = static_cast<float>(1000.0 + x);
  }
  const std::vector<std::byte> chunk = ncclz::host::compress<AbsAd>(std::span<const float>(in), 0.005);
  const std::vector<std::size_t> modes = tile_modes(chunk);
  CAPTURE(modes[2], modes[3]);
  REQUIRE(modes[static_cast<int>(ncclz::tile_mode::zero_run)] > 0);
  REQUIRE(modes[static_cast<int>(ncclz::tile_mode::huffman)] > 0);
  require_device_matches_host<AbsAd>(in, 0.005);
}

TEMPLATE_TEST_CASE("wide huffman tiles (sub-blocks of 128) decode on the device as on the host", "[gpu][codec]",
                   RelHuf, RelAd) {
  using Codec = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  // Skewed codes at REL 1e-5: over 8 bits a value, so each huffman tile codes its stream in 64
  // sub-blocks, which warps 0 and 1 parse; the last tile's 3000 values (24 sub-blocks) fit the
  // 8 KB the decoder stages in shared memory, the others do not.
  const std::vector<float> in = make_input<float>(shape::skewed, 20 * 8192 + 3000, rng);
  const std::vector<std::byte> chunk = ncclz::host::compress<Codec>(std::span<const float>(in), 1e-5);
  REQUIRE(ncclz_test::halved_huffman_tiles(chunk) > 10);
  require_device_matches_host<Codec>(in, 1e-5);
}

TEMPLATE_TEST_CASE("huffman tiles whose code and escape take over 32 bits code on the device as on the host", "[gpu][codec]",
                   AbsHuf, AbsAd) {
  using Codec = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(-1, 1);
  // Codes of a few units, and one value in 500 a spike of up to 2^29 codes: its deltas escape in
  // classes of 25-31 bits, each held by a few deltas a tile and so given long codes. The stream
  // writer puts such a code and its escape in two steps (tile/huffman/encode.cuh, emit_stream).
  std::vector<double> in(6 * 8192 + 1000);
  for (double& v : in) v = 4e-5 * normal(rng) + (rng() % 500 == 0 ? 1e4 * uniform(rng) : 0.0);
  const std::vector<std::byte> chunk = ncclz::host::compress<Codec>(std::span<const double>(in), 1e-5);
  REQUIRE(ncclz_test::huffman_tiles_wider_than_word(chunk) > 3);
  require_device_matches_host<Codec>(in, 1e-5);
}

/// Flips 1-3 random bits of `good` (a chunk of `in` under Codec) 300 times; the device must reject
/// exactly the chunks the host rejects and decode the others to the host's bits. Resealed
/// (ncclz_test::reseal) after the flips, so that the structural checks behind the checksums are
/// what the decoders reach, and then as they are, where the checksums reject every one.
template <class Codec, class T>
void require_same_verdicts_on_corruption(const std::vector<T>& in, const std::vector<std::byte>& good, std::mt19937_64& rng,
                                         bool resealed) {
  CAPTURE(resealed);
  ncclz::Compressor<Codec, T> codec(in.size());
  device_buffer<std::byte> d_chunk(good.size());
  device_buffer<T> d_out(in.size());
  const std::uint64_t tiles = ncclz::format::tile_count(in.size());
  // Past the tile table and the check table (with its padding, which no decoder reads).
  const std::size_t payload = sizeof(ncclz::format::chunk_header) + 2 * ncclz::format::table_bytes(tiles);
  std::size_t rejected = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::byte> bad = good;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) {
      const std::size_t at = payload + rng() % (bad.size() - payload);
      bad[at] ^= static_cast<std::byte>(1u << (rng() % 8));
    }
    if (resealed) ncclz_test::reseal(bad);
    bool host_rejects = false;
    std::vector<T> host_out(in.size());
    try {
      ncclz::host::decompress<Codec>(std::span<const std::byte>(bad), std::span<T>(host_out));
    } catch (const ncclz::format_error&) {
      host_rejects = true;
    }
    upload(d_chunk.ptr, bad);
    codec.decompress(d_chunk.ptr, bad.size(), d_out.ptr, in.size());
    bool device_rejects = false;
    try {
      codec.check();
    } catch (const ncclz::format_error&) {
      device_rejects = true;
    }
    CAPTURE(trial);
    REQUIRE(device_rejects == host_rejects);
    if (!host_rejects) {
      const std::vector<T> device_out = download(d_out.ptr, in.size());
      REQUIRE(std::memcmp(device_out.data(), host_out.data(), in.size() * sizeof(T)) == 0);
    }
    rejected += host_rejects;
  }
  if (resealed) REQUIRE(rejected > 0);
  else REQUIRE(rejected == 300);
}
template <class Codec, class T>
void require_same_verdicts_on_corruption(const std::vector<T>& in, const std::vector<std::byte>& good, std::mt19937_64& rng) {
  for (const bool resealed : {true, false}) require_same_verdicts_on_corruption<Codec>(in, good, rng, resealed);
}

TEMPLATE_TEST_CASE("device decoder agrees with the host on corrupted huffman chunks", "[gpu][codec]", float, __half) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  // Every tile huffman: the decoder parses each tile's sub-blocks one lane each.
  const std::vector<T> in = make_input<T>(shape::skewed, 3 * 8192 + 77, rng);
  const std::vector<std::byte> good = ncclz::host::compress<RelHuf>(std::span<const T>(in), 1e-3);
  REQUIRE(tile_modes(good)[static_cast<int>(ncclz::tile_mode::huffman)] > 0);
  require_same_verdicts_on_corruption<RelHuf>(in, good, rng);
  // At REL 1e-5 the tiles are halved (over 8 bits a value): warps 0 and 1 parse them.
  const std::vector<std::byte> wide = ncclz::host::compress<RelHuf>(std::span<const T>(in), 1e-5);
  REQUIRE(ncclz_test::halved_huffman_tiles(wide) > 0);
  require_same_verdicts_on_corruption<RelHuf>(in, wide, rng);
}

TEMPLATE_TEST_CASE("device decoder agrees with the host on adaptive chunks with few huffman tiles", "[gpu][codec]",
                   float, __half) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  // Two skewed tiles among sparse ones (17 tiles): huffman tiles few in the chunk, which the
  // decoder parses with all eight warps (huffman::decode_tile's for_latency).
  std::vector<T> in;
  for (int t = 0; t < 16; ++t) {
    const std::vector<T> part = make_input<T>(t == 2 || t == 12 ? shape::skewed : shape::sparse, 8192, rng);
    in.insert(in.end(), part.begin(), part.end());
  }
  in.resize(in.size() + 77, in.back());
  const std::vector<std::byte> good = ncclz::host::compress<RelAd>(std::span<const T>(in), 1e-3);
  const std::vector<std::size_t> modes = tile_modes(good);
  CAPTURE(modes[0], modes[1], modes[2], modes[3]);
  REQUIRE(modes[static_cast<int>(ncclz::tile_mode::huffman)] > 0);
  // The 8 tiles decode_kernel samples, (2k + 1) / 16 of the way through: at most one huffman.
  const std::uint32_t tiles = static_cast<std::uint32_t>(ncclz::format::tile_count(in.size()));
  int sampled_huffman = 0;
  for (std::uint32_t k = 0; k < 8; ++k) {
    sampled_huffman += ncclz_test::tile_mode_of(good, static_cast<std::uint32_t>((2ull * k + 1) * tiles / 16)) ==
                       static_cast<int>(ncclz::tile_mode::huffman);
  }
  REQUIRE(sampled_huffman <= 1);
  require_device_matches_host<RelAd>(in, 1e-3);
  require_same_verdicts_on_corruption<RelAd>(in, good, rng);
  // The same at REL 1e-5, where the two huffman tiles are halved (64 sub-blocks over 8 warps).
  const std::vector<std::byte> wide = ncclz::host::compress<RelAd>(std::span<const T>(in), 1e-5);
  REQUIRE(ncclz_test::halved_huffman_tiles(wide) > 0);
  require_device_matches_host<RelAd>(in, 1e-5);
  require_same_verdicts_on_corruption<RelAd>(in, wide, rng);
}

TEST_CASE("device codec round-trips an input over 1 GiB within the bound", "[gpu][codec][large]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const std::size_t n = (std::size_t{1} << 28) + 4099;  // 1 GiB of float and a partial tile
  std::vector<float> in(n);
  const double phase = static_cast<double>(rng() % 1000) / 100.0;
  std::uint64_t lcg = rng();
  float walk = 0;
  for (std::size_t i = 0; i < n; ++i) {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    walk += static_cast<float>(static_cast<std::int64_t>(lcg >> 40) - (1 << 23)) * 1e-9f;
    in[i] = static_cast<float>(50.0 * std::sin(static_cast<double>(i) * 1e-4 + phase)) + walk;
  }
  in[n / 3] = std::numeric_limits<float>::quiet_NaN();
  in[n / 2] = -std::numeric_limits<float>::infinity();
  require_device_matches_host<RelFL>(in, 1e-3);
}

TEMPLATE_TEST_CASE("device codec reads inputs at any element-aligned address", "[gpu][codec]", float, __half) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const std::vector<T> in = make_input<T>(shape::smooth, 100003, rng);
  device_buffer<T> d_in(in.size());
  upload(d_in.ptr, in);
  ncclz::Compressor<RelFL, T> codec(in.size());
  const std::size_t cap = ncclz::max_compressed_bytes<T>(in.size());
  device_buffer<std::byte> d_chunk(cap);
  for (const std::size_t offset : {1, 3, 5}) {
    CAPTURE(offset);
    const std::vector<T> part(in.begin() + offset, in.end());
    const std::vector<std::byte> host_chunk = ncclz::host::compress<RelFL>(std::span<const T>(part), 1e-3);
    codec.compress(d_in.ptr + offset, part.size(), d_chunk.ptr, cap, 1e-3);
    REQUIRE(codec.compressed_bytes() == host_chunk.size());
    REQUIRE(download(d_chunk.ptr, host_chunk.size()) == host_chunk);
    device_buffer<T> d_out(part.size() + 1);
    codec.decompress(d_chunk.ptr, cap, d_out.ptr + 1, part.size());  // misaligned output too
    codec.check();
    require_within_bound(part, download(d_out.ptr + 1, part.size()), error_bound_of(host_chunk));
  }
  const auto* byte_misaligned = reinterpret_cast<const T*>(reinterpret_cast<const char*>(d_in.ptr) + 1);
  REQUIRE_THROWS_AS(codec.compress(byte_misaligned, 10, d_chunk.ptr, cap, 1e-3), ncclz::invalid_argument);
  REQUIRE_THROWS_AS(codec.compress(d_in.ptr, 10, d_chunk.ptr + 4, cap - 4, 1e-3), ncclz::invalid_argument);
}

TEST_CASE("device codec rejects bad arguments before queuing work", "[gpu][codec]") {
  ncclz::Compressor<RelFL, float> codec(1000);
  device_buffer<float> d_in(1000);
  const std::size_t cap = ncclz::max_compressed_bytes<float>(1000);
  device_buffer<std::byte> d_chunk(cap);
  REQUIRE_THROWS_AS(codec.compress(nullptr, 10, d_chunk.ptr, cap, 1e-3), ncclz::invalid_argument);
  REQUIRE_THROWS_AS(codec.compress(d_in.ptr, 10, nullptr, cap, 1e-3), ncclz::invalid_argument);
  REQUIRE_THROWS_AS(codec.compress(d_in.ptr, 1000, d_chunk.ptr, cap - 1, 1e-3), ncclz::invalid_argument);
  REQUIRE_THROWS_AS(codec.compress(d_in.ptr, 1001, d_chunk.ptr, cap, 1e-3), ncclz::invalid_argument);
  for (const double bad : {0.0, -1e-3, std::nan(""), std::numeric_limits<double>::infinity()}) {
    REQUIRE_THROWS_AS(codec.compress(d_in.ptr, 10, d_chunk.ptr, cap, bad), ncclz::invalid_argument);
  }
  REQUIRE_THROWS_AS(codec.decompress(d_chunk.ptr, 10, d_in.ptr, 10), ncclz::format_error);
  REQUIRE_NOTHROW(codec.compress(d_in.ptr, 0, d_chunk.ptr, cap, 1e-3));
  // A workspace too small: the message says what the call needs.
  device_buffer<std::byte> small(16);
  REQUIRE_THROWS_WITH((ncclz::device::decompress<RelFL>(small.ptr, 16, d_chunk.ptr, cap, d_in.ptr, 1000)),
                      Catch::Contains("decompress needs") && !Catch::Contains("0 values"));
  REQUIRE_THROWS_WITH((ncclz::device::compress<RelFL>(small.ptr, 16, d_in.ptr, 1000, d_chunk.ptr, cap, nullptr, 1e-3)),
                      Catch::Contains("compressing 1000 values needs"));
}

TEST_CASE("device decoder reports corrupted and mismatched chunks", "[gpu][codec]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  std::vector<float> in = make_input<float>(shape::smooth, 3 * 8192 + 100, rng);
  in[5] = std::numeric_limits<float>::quiet_NaN();  // one outlier in tile 0
  const std::vector<std::byte> good = ncclz::host::compress<RelFL>(std::span<const float>(in), 1e-3);
  const auto header = ncclz::detail::parse_header(good.data(), good.size());
  const std::uint64_t payload = sizeof(ncclz::format::chunk_header);
  std::uint32_t tile0;
  std::memcpy(&tile0, good.data() + payload, 4);
  const std::uint64_t tile0_at = payload + std::uint64_t{tile0} * 8;
  REQUIRE(static_cast<int>(good[tile0_at]) == static_cast<int>(ncclz::tile_mode::fixed_length));

  ncclz::Compressor<RelFL, float> codec(in.size());
  device_buffer<std::byte> d_chunk(good.size() + 64);
  device_buffer<float> d_out(in.size());

  const auto expect_failure = [&](std::vector<std::byte> chunk, std::size_t capacity, std::size_t count,
                                  const char* what) {
    CAPTURE(what);
    upload(d_chunk.ptr, chunk);
    codec.decompress(d_chunk.ptr, capacity, d_out.ptr, count);
    REQUIRE_THROWS_AS(codec.check(), ncclz::format_error);
  };
  auto with = [&](std::size_t at, std::byte v) {
    std::vector<std::byte> c = good;
    c[at] = v;
    return c;
  };
  expect_failure(with(0, std::byte{0}), good.size(), in.size(), "magic");
  expect_failure(with(4, std::byte{9}), good.size(), in.size(), "version");
  expect_failure(good, good.size() - 8, in.size(), "truncated");
  expect_failure(good, good.size(), in.size() - 1, "count");
  expect_failure(with(payload + 1, std::byte{0x7f}), good.size(), in.size(), "tile offset");
  expect_failure(with(tile0_at, std::byte{7}), good.size(), in.size(), "tile mode");
  expect_failure(with(tile0_at + 8, std::byte{40}), good.size(), in.size(), "width");
  {
    std::vector<std::byte> c = good;  // outlier count beyond what the tile holds
    c[tile0_at + 2] = std::byte{0xff};
    c[tile0_at + 3] = std::byte{0x7f};
    expect_failure(c, good.size(), in.size(), "outlier count");
  }
  // Checksums: a bit of tile 0's planes, of the check table, the header's flag.
  const auto expect_checksum_failure = [&](const std::vector<std::byte>& chunk, const char* what) {
    CAPTURE(what);
    upload(d_chunk.ptr, chunk);
    codec.decompress(d_chunk.ptr, chunk.size(), d_out.ptr, in.size());
    REQUIRE_THROWS_WITH(codec.check(), Catch::Contains("checksum"));
  };
  expect_checksum_failure(with(tile0_at + 300, good[tile0_at + 300] ^ std::byte{4}), "plane bit");
  const std::uint64_t checks = payload + ncclz::format::table_bytes(header.tile_count);
  expect_checksum_failure(with(checks + 4, good[checks + 4] ^ std::byte{1}), "check table");
  expect_checksum_failure(with(56, std::byte{0}), "flag cleared");
  {  // a version 1 chunk (no flags, no checks): the same tiles without checksums, version byte 1
    std::vector<std::byte> v1 = ncclz::host::compress<RelFLNoCheck>(std::span<const float>(in), 1e-3);
    v1[4] = std::byte{1};
    std::memset(v1.data() + 56, 0, 8);
    std::vector<float> host_out(in.size());
    ncclz::host::decompress<RelFL>(std::span<const std::byte>(v1), std::span<float>(host_out));
    upload(d_chunk.ptr, v1);
    codec.decompress(d_chunk.ptr, v1.size(), d_out.ptr, in.size());
    REQUIRE_NOTHROW(codec.check());
    REQUIRE(std::memcmp(download(d_out.ptr, in.size()).data(), host_out.data(), in.size() * sizeof(float)) == 0);
    v1[56] = std::byte{1};  // flags in a version 1 header
    expect_failure(v1, v1.size(), in.size(), "version 1 with flags");
  }

  // The good chunk still decodes after all that.
  upload(d_chunk.ptr, good);
  codec.decompress(d_chunk.ptr, good.size(), d_out.ptr, in.size());
  REQUIRE_NOTHROW(codec.check());
  require_within_bound(in, download(d_out.ptr, in.size()), header.error_bound);

  // A float chunk is not a double chunk, nor a 16-bit one; an f16 chunk is not a bf16 one.
  ncclz::Compressor<RelFL, double> wrong_type(in.size());
  device_buffer<double> d_out64(in.size());
  wrong_type.decompress(d_chunk.ptr, good.size(), d_out64.ptr, in.size());
  REQUIRE_THROWS_AS(wrong_type.check(), ncclz::format_error);
  ncclz::Compressor<RelFL, __half> as_f16(in.size());
  device_buffer<__half> d_out16(in.size());
  as_f16.decompress(d_chunk.ptr, good.size(), d_out16.ptr, in.size());
  REQUIRE_THROWS_AS(as_f16.check(), ncclz::format_error);
  std::vector<__half> in16(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) in16[i] = from_double<__half>(in[i]);
  const std::vector<std::byte> chunk16 = ncclz::host::compress<RelFL>(std::span<const __half>(in16), 1e-3);
  device_buffer<std::byte> d_chunk16(chunk16.size());
  upload(d_chunk16.ptr, chunk16);
  ncclz::Compressor<RelFL, __nv_bfloat16> as_bf16(in.size());
  device_buffer<__nv_bfloat16> d_out_bf16(in.size());
  as_bf16.decompress(d_chunk16.ptr, chunk16.size(), d_out_bf16.ptr, in.size());
  REQUIRE_THROWS_AS(as_bf16.check(), ncclz::format_error);
  as_f16.decompress(d_chunk16.ptr, chunk16.size(), d_out16.ptr, in.size());
  REQUIRE_NOTHROW(as_f16.check());
}

namespace {
using LosslessFL = ncclz::Codec<ncclz::Quantizer<ncclz::Lossless>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using LosslessRaw = ncclz::Codec<ncclz::Quantizer<ncclz::Lossless>, ncclz::EntropyCoder<ncclz::Raw>>;

/// Gradient-like values (Gaussian, per-256 scales over three decades, a tenth of the 256-blocks
/// exactly 0: zeros scattered among nonzero values cost full-width deltas) or
/// random bit patterns (every NaN payload, subnormal and -0.0 there is, in time), for the
/// lossless codec; NaN 0x7FFFFFFE (the fp32 pattern quantize refuses) is planted too.
template <class T>
std::vector<T> lossless_input(bool random_bits, std::size_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  std::normal_distribution<double> normal;
  double scale = 1;
  for (std::size_t i = 0; i < n; ++i) {
    if (random_bits) {
      const std::uint64_t b = rng();
      std::memcpy(static_cast<void*>(&v[i]), &b, sizeof(T));
      continue;
    }
    if (i % 256 == 0) scale = rng() % 10 == 0 ? 0.0 : std::pow(10.0, -5.0 + 3.0 * static_cast<double>(rng() % 1000) / 1000.0);
    v[i] = from_double<T>(scale * normal(rng));
  }
  if constexpr (std::is_same_v<T, float>) {
    if (n > 5) {
      const std::uint32_t b = ncclz::Quantizer<ncclz::Lossless>::kOutlierBits;
      std::memcpy(&v[5], &b, 4);
    }
  }
  return v;
}
}  // namespace

TEMPLATE_TEST_CASE("device lossless codec: the host's bytes, and every value's bits back", "[gpu][codec][lossless]",
                   (combo<LosslessFL, float>), (combo<LosslessFL, double>), (combo<LosslessFL, __half>),
                   (combo<LosslessFL, __nv_bfloat16>), (combo<LosslessRaw, float>), (combo<LosslessRaw, __nv_bfloat16>)) {
  using Codec = typename TestType::codec;
  using T = typename TestType::value;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{33}, std::size_t{8193}, (std::size_t{1} << 20) + 7}) {
    for (const bool random_bits : {false, true}) {
      CAPTURE(n, random_bits);
      const std::vector<T> in = lossless_input<T>(random_bits, n, rng);
      require_device_matches_host<Codec>(in, 0.0);
      // Device to device: the decoded bits are the input's.
      ncclz::Compressor<Codec, T> codec(n);
      const std::size_t capacity = ncclz::max_compressed_bytes<T>(n);
      device_buffer<T> d_in(n), d_out(n);
      device_buffer<std::byte> d_chunk(capacity);
      upload(d_in.ptr, in);
      codec.compress(d_in.ptr, n, d_chunk.ptr, capacity, 0.0);
      const std::uint64_t size = codec.compressed_bytes();
      codec.decompress(d_chunk.ptr, size, d_out.ptr, n);
      codec.check();
      const std::vector<T> out = download(d_out.ptr, n);
      REQUIRE(std::memcmp(out.data(), in.data(), n * sizeof(T)) == 0);
      if (Codec::coder::codes_tiles && !random_bits && n > 8192 && sizeof(T) <= 4) {
        REQUIRE(size < n * sizeof(T));  // gradients do compress
      }
    }
  }
  ncclz::Compressor<Codec, T> codec(16);
  device_buffer<T> d(16);
  device_buffer<std::byte> chunk(ncclz::max_compressed_bytes<T>(16));
  REQUIRE_THROWS_AS(codec.compress(d.ptr, 16, chunk.ptr, ncclz::max_compressed_bytes<T>(16), 1e-3), ncclz::invalid_argument);
}
