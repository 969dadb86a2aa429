// The device codec against the host reference codec: bit-exact streams both ways, the error bound
// on every element, bad chunks and bad arguments rejected. Fresh random data in every test. Here the
// fixed_length and raw coders and the codec's checks; test_device_codec_*.cu the others.
#include "device_codec_support.hpp"

TEMPLATE_TEST_CASE("device codec is bit-exact with the host reference", "[gpu][codec]", (combo<RelFL, float>),
                   (combo<RelFL, double>), (combo<RelFL, __half>), (combo<RelFL, __nv_bfloat16>), (combo<AbsFL, float>),
                   (combo<AbsFL, double>), (combo<AbsFL, __half>), (combo<AbsFL, __nv_bfloat16>), (combo<RelRaw, float>),
                   (combo<RelRaw, double>), (combo<RelRaw, __half>), (combo<RelRaw, __nv_bfloat16>),
                   (combo<AbsRaw, float>), (combo<AbsRaw, double>), (combo<AbsRaw, __half>),
                   (combo<AbsRaw, __nv_bfloat16>), (combo<RelFLNoCheck, float>), (combo<RelFLNoCheck, __half>)) {
  require_bit_exact_with_host<typename TestType::codec, typename TestType::value>();
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
