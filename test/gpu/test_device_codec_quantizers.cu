// The device codec's blockwise (FixedRate) and lossless quantizers against the host reference.
#include "device_codec_support.hpp"

TEMPLATE_TEST_CASE("device codec is bit-exact with the host reference: FixedRate", "[gpu][codec][fixed_rate]",
                   (combo<Fixed8, float>), (combo<Fixed8, double>), (combo<Fixed8, __half>), (combo<Fixed8, __nv_bfloat16>),
                   (combo<Fixed4, float>), (combo<Fixed4, double>), (combo<Fixed4, __half>), (combo<Fixed4, __nv_bfloat16>),
                   (combo<Fixed8Ad, float>), (combo<Fixed8Ad, __nv_bfloat16>), (combo<Fixed4Ad, float>),
                   (combo<Fixed4Ad, double>), (combo<Fixed8Huf, float>), (combo<Fixed8NoCheck, float>),
                   (combo<Fixed8NoCheck, double>)) {
  using Codec = typename TestType::codec;
  using T = typename TestType::value;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1023}, std::size_t{1024}, std::size_t{1025},
                              std::size_t{8193}, (std::size_t{1} << 20) + 7}) {
    // skewed and blocky: independent neighbours, where huffman tiles code the codes themselves.
    for (const shape s : {shape::smooth, shape::noisy, shape::constant, shape::spiky, shape::special, shape::overflow,
                          shape::skewed, shape::blocky}) {
      const bool large = n > 100000;  // the host reference takes a while: fewer cases there
      if (large && s != shape::smooth && s != shape::special && s != shape::skewed && s != shape::blocky) continue;
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
