// Host tests of the chunk format (ncclz/format.hpp) and of how the reference decoder treats
// corrupt and truncated streams: every bad stream gives ncclz::format_error with a message, never
// a crash and never a read past the caller's span. (Run this file once under
// -fsanitize=address,undefined after changing the decoder: the truncated streams below live in
// heap buffers of exactly their size, so an over-read is reported.)
//
// Random inputs are fresh on every run; each test case prints its seed on failure. Rerun a
// failure with NCCLZ_TEST_SEED=<seed> to get the same inputs again.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/detail/validate.hpp"
#include "ncclz/error.hpp"
#include "ncclz/format.hpp"
#include "ncclz/host/reference_codec.hpp"

namespace {

namespace fmt = ncclz::format;
using Catch::Matchers::Contains;
using AbsFixed = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using RelFixed = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using AbsRaw = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::Raw>>;
using RelRaw = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Raw>>;
using bytes = std::vector<std::byte>;

constexpr std::uint64_t kHeader = sizeof(fmt::chunk_header);

using ncclz_test::fresh_seed;
using ncclz_test::from_double;
using ncclz_test::limits;
using ncclz_test::load;
using ncclz_test::store;

/// Values whose tiles code (at an absolute bound of 1e-3) as, in order: fixed-length with outliers
/// (smooth values, NaN, Inf, values far past 2^30 steps), raw (all outliers), then fixed-length
/// without outliers to fill `n`.
template <class T>
std::vector<T> mixed_input(std::size_t n, std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<T> v(n);
  const double phase = 6.28 * u(g);
  for (std::size_t i = 0; i < n; ++i) v[i] = from_double<T>(std::sin(phase + 1e-3 * static_cast<double>(i)));
  for (std::size_t i = 0; i < std::min<std::size_t>(n, fmt::kTileElements); ++i) {
    const double r = u(g);
    if (r < 0.005) v[i] = limits<T>::quiet_NaN();
    else if (r < 0.01) v[i] = limits<T>::infinity();
    else if (r < 0.015) v[i] = from_double<T>(1e30 * u(g));  // Inf for __half
  }
  // Every value of tile 1 is an outlier (random mantissas far past 2^30 steps, some NaN; Inf
  // for __half): the coder must store the tile raw.
  for (std::size_t i = fmt::kTileElements; i < std::min<std::size_t>(n, 2 * fmt::kTileElements); ++i) {
    v[i] = u(g) < 0.01 ? limits<T>::quiet_NaN() : from_double<T>((u(g) < 0.5 ? -1e12 : 1e12) * (1.0 + u(g)));
  }
  return v;
}

/// Where the parts of a stream are (offsets from the start of the stream).
struct layout {
  fmt::chunk_header h;
  std::vector<std::uint64_t> tile;  // start of each tile
  std::vector<std::uint64_t> tile_end;
};

layout layout_of(const bytes& s) {
  layout l;
  l.h = ncclz::detail::parse_header(s.data(), s.size());
  for (std::uint64_t t = 0; t < l.h.tile_count; ++t) l.tile.push_back(kHeader + 8 * std::uint64_t{load<std::uint32_t>(s, kHeader + 4 * t)});
  for (std::uint64_t t = 0; t < l.h.tile_count; ++t) l.tile_end.push_back(t + 1 < l.h.tile_count ? l.tile[t + 1] : s.size());
  return l;
}

/// Decodes `s`, resealed (ncclz_test::reseal: the structural checks are what these tests reach;
/// the checksums have tests of their own), from a heap buffer of exactly its size. Returns "" on
/// success, the message of a format_error otherwise; any other exception escapes (and fails the
/// test).
template <class Codec, class T>
std::string decode(const bytes& s, std::size_t n) {
  bytes exact(s.begin(), s.end());
  ncclz_test::reseal(exact);
  std::vector<T> out(n);
  try {
    ncclz::host::decompress<Codec, T>(std::span<const std::byte>(exact.data(), exact.size()), std::span<T>(out));
  } catch (const ncclz::format_error& e) {
    const std::string what = e.what();
    return what.empty() ? std::string("<format_error with an empty message>") : what;
  }
  return "";
}

/// The decoder's verdict on a corrupt stream: must be a format_error whose message contains the
/// last argument.
#define REQUIRE_FORMAT_ERROR(Codec, T, stream, n, ...)                  \
  do {                                                                  \
    const std::string message_ = decode<Codec, T>((stream), (n));       \
    INFO("decode said: " << (message_.empty() ? "<success>" : message_)); \
    REQUIRE_FALSE(message_.empty());                                    \
    REQUIRE_THAT(message_, Contains("ncclz") && Contains(__VA_ARGS__)); \
  } while (0)

}  // namespace

TEST_CASE("format: header layout and constants are stable", "[format]") {
  static_assert(offsetof(fmt::chunk_header, magic) == 0);
  static_assert(offsetof(fmt::chunk_header, version) == 4);
  static_assert(offsetof(fmt::chunk_header, value_type) == 5);
  static_assert(offsetof(fmt::chunk_header, quantizer) == 6);
  static_assert(offsetof(fmt::chunk_header, coder) == 7);
  static_assert(offsetof(fmt::chunk_header, tile_elements) == 8);
  static_assert(offsetof(fmt::chunk_header, tile_count) == 12);
  static_assert(offsetof(fmt::chunk_header, element_count) == 16);
  static_assert(offsetof(fmt::chunk_header, payload_bytes) == 24);
  static_assert(offsetof(fmt::chunk_header, bound) == 32);
  static_assert(offsetof(fmt::chunk_header, error_bound) == 40);
  static_assert(offsetof(fmt::chunk_header, step) == 48);
  static_assert(offsetof(fmt::chunk_header, flags) == 56);
  static_assert(offsetof(fmt::chunk_header, header_check) == 60);
  static_assert(offsetof(fmt::tile_header, mode) == 0 && offsetof(fmt::tile_header, outlier_count) == 2 &&
                offsetof(fmt::tile_header, base) == 4);
  static_assert(fmt::kTileElements == 8192 && fmt::kBlockElements == 32 && fmt::kMaxWidth == 32);

  const std::vector<float> in = {1.0f, 2.0f, 3.0f};
  const bytes s = ncclz::host::compress<AbsFixed, float>(in, 0.25);
  REQUIRE(s.size() >= kHeader);
  REQUIRE(std::memcmp(s.data(), "NCZ1", 4) == 0);  // the magic number reads "NCZ1"
  REQUIRE(static_cast<std::uint8_t>(s[4]) == fmt::kVersion);
  REQUIRE(static_cast<std::uint8_t>(s[5]) == static_cast<std::uint8_t>(ncclz::dtype::f32));
  REQUIRE(static_cast<std::uint8_t>(s[6]) == static_cast<std::uint8_t>(ncclz::quantizer_id::abs));
  REQUIRE(static_cast<std::uint8_t>(s[7]) == static_cast<std::uint8_t>(ncclz::coder_id::fixed_length));
  REQUIRE(load<double>(s, 32) == 0.25);  // bound
  REQUIRE(load<double>(s, 40) == 0.25);  // error_bound
  REQUIRE(load<double>(s, 48) == 0.5);   // step
  REQUIRE(load<std::uint32_t>(s, 56) == fmt::kTileChecks);  // flags
  REQUIRE(load<std::uint32_t>(s, 60) == fmt::header_check_of(load<fmt::chunk_header>(s, 0)));
}

TEST_CASE("format: tile count, tile elements, blocks and table size at the boundaries", "[format]") {
  static_assert(fmt::tile_count(0) == 0 && fmt::tile_count(1) == 1 && fmt::tile_count(8191) == 1 &&
                fmt::tile_count(8192) == 1 && fmt::tile_count(8193) == 2 && fmt::tile_count(16384) == 2 &&
                fmt::tile_count(16385) == 3);
  static_assert(fmt::tile_count(std::uint64_t{1} << 40) == std::uint64_t{1} << 27);
  static_assert(fmt::tile_count(~std::uint64_t{0}) == std::uint64_t{1} << 51);  // no wrap-around near 2^64
  static_assert(fmt::tile_elements(1, 0) == 1 && fmt::tile_elements(8192, 0) == 8192 &&
                fmt::tile_elements(8193, 0) == 8192 && fmt::tile_elements(8193, 1) == 1 &&
                fmt::tile_elements(16383, 1) == 8191);
  static_assert(fmt::tile_blocks(0) == 0 && fmt::tile_blocks(1) == 1 && fmt::tile_blocks(31) == 1 &&
                fmt::tile_blocks(32) == 1 && fmt::tile_blocks(33) == 2 && fmt::tile_blocks(8192) == 256);
  static_assert(fmt::table_bytes(0) == 0 && fmt::table_bytes(1) == 8 && fmt::table_bytes(2) == 8 &&
                fmt::table_bytes(3) == 16);
  static_assert(fmt::raw_tile_bytes(0, 4) == 8 && fmt::raw_tile_bytes(1, 4) == 16 && fmt::raw_tile_bytes(2, 4) == 16 &&
                fmt::raw_tile_bytes(3, 4) == 24 && fmt::raw_tile_bytes(1, 8) == 16 &&
                fmt::raw_tile_bytes(8192, 4) == 8 + 32768 && fmt::raw_tile_bytes(8192, 8) == 8 + 65536);
  // With the check table, as large as the tile table.
  static_assert(fmt::max_chunk_bytes(0, 4) == 64 && fmt::max_chunk_bytes(1, 4) == 64 + 8 + 8 + 16 &&
                fmt::max_chunk_bytes(8193, 8) == 64 + 8 + 8 + (8 + 65536) + 16);
  static_assert(fmt::align_up(0, 8) == 0 && fmt::align_up(1, 8) == 8 && fmt::align_up(8, 8) == 8 &&
                fmt::align_up(9, 4) == 12);

  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  std::vector<std::uint64_t> counts = {0, 1, 31, 32, 33, 8191, 8192, 8193, 16383, 16384, 16385};
  for (int i = 0; i < 2000; ++i) counts.push_back(g() % (std::uint64_t{1} << (1 + g() % 36)));
  for (const std::uint64_t n : counts) {
    CAPTURE(n);
    const std::uint64_t tiles = fmt::tile_count(n);
    REQUIRE(tiles * fmt::kTileElements >= n);
    REQUIRE((tiles == 0 || (tiles - 1) * fmt::kTileElements < n));
    if (tiles == 0) continue;
    // Every tile but the last is full; the last holds the rest, at least one value.
    REQUIRE(fmt::tile_elements(n, 0) == std::min<std::uint64_t>(n, fmt::kTileElements));
    const std::uint32_t last = fmt::tile_elements(n, tiles - 1);
    REQUIRE(last >= 1);
    REQUIRE(last <= fmt::kTileElements);
    REQUIRE((tiles - 1) * fmt::kTileElements + last == n);
    if (tiles > 1) REQUIRE(fmt::tile_elements(n, tiles - 2) == fmt::kTileElements);
    REQUIRE(fmt::table_bytes(tiles) % 8 == 0);
    REQUIRE(fmt::table_bytes(tiles) >= 4 * tiles);
    REQUIRE(fmt::table_bytes(tiles) < 4 * tiles + 8);
    for (const std::uint32_t vb : {4u, 8u}) {
      std::uint64_t sum = kHeader + 2 * fmt::table_bytes(tiles) + (tiles - 1) * fmt::raw_tile_bytes(fmt::kTileElements, vb) +
                          fmt::raw_tile_bytes(last, vb);
      REQUIRE(fmt::max_chunk_bytes(n, vb) == sum);
    }
  }
}

TEST_CASE("format: fixed_tile_layout_of aligns every part and wastes no more than the alignment", "[format]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  constexpr auto empty_tile = fmt::fixed_tile_layout_of(256, 0, 0, 4);
  static_assert(empty_tile.widths == 8 && empty_tile.planes == 264 && empty_tile.outlier_index == 264 &&
                empty_tile.outlier_values == 264 && empty_tile.total == 264);
  for (int i = 0; i < 100000; ++i) {
    const auto blocks = static_cast<std::uint32_t>(g() % (fmt::kTileBlocks + 1));
    const std::uint64_t words = blocks == 0 ? 0 : g() % (std::uint64_t{blocks} * fmt::kMaxWidth + 1);
    const auto outliers = static_cast<std::uint32_t>(g() % 3 == 0 ? 0 : g() % (fmt::kTileElements + 1));
    const std::uint32_t vb = (g() & 1u) ? 4u : 8u;
    CAPTURE(blocks, words, outliers, vb);
    const fmt::fixed_tile_layout l = fmt::fixed_tile_layout_of(blocks, words, outliers, vb);
    REQUIRE(l.widths == sizeof(fmt::tile_header));
    REQUIRE(l.planes % 4 == 0);
    REQUIRE(l.planes >= l.widths + blocks);
    REQUIRE(l.planes < l.widths + blocks + 4);
    REQUIRE(l.outlier_index == l.planes + 4 * words);
    REQUIRE(l.outlier_values % vb == 0);
    REQUIRE(l.outlier_values >= l.outlier_index + 2ull * outliers);
    REQUIRE(l.outlier_values < l.outlier_index + 2ull * outliers + vb);
    REQUIRE(l.total % 8 == 0);
    REQUIRE(l.total >= l.outlier_values + std::uint64_t{outliers} * vb);
    REQUIRE(l.total < l.outlier_values + std::uint64_t{outliers} * vb + 8);
  }
}

TEMPLATE_TEST_CASE("format: max_chunk_bytes is the size of an all-raw stream", "[format]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{32}, std::size_t{8191},
                              std::size_t{8192}, std::size_t{8193}, std::size_t{3 * 8192 + 5}}) {
    CAPTURE(n);
    const std::vector<T> in = mixed_input<T>(n, g);
    const bytes abs_raw = ncclz::host::compress<AbsRaw, T>(in, 1e-3);
    const bytes rel_raw = ncclz::host::compress<RelRaw, T>(in, 1e-3);
    REQUIRE(abs_raw.size() == fmt::max_chunk_bytes(n, sizeof(T)));
    REQUIRE(rel_raw.size() == fmt::max_chunk_bytes(n, sizeof(T)));
    // Every tile of such a stream is raw and holds the input bit for bit.
    const layout l = layout_of(abs_raw);
    for (std::uint64_t t = 0; t < l.h.tile_count; ++t) {
      REQUIRE(static_cast<std::uint8_t>(abs_raw[l.tile[t]]) == static_cast<std::uint8_t>(ncclz::tile_mode::raw));
      REQUIRE(l.tile_end[t] - l.tile[t] == fmt::raw_tile_bytes(fmt::tile_elements(n, t), sizeof(T)));
      REQUIRE(std::memcmp(abs_raw.data() + l.tile[t] + sizeof(fmt::tile_header), in.data() + t * fmt::kTileElements,
                          fmt::tile_elements(n, t) * sizeof(T)) == 0);
    }
    REQUIRE(ncclz::host::compress<AbsFixed, T>(in, 1e-3).size() <= fmt::max_chunk_bytes(n, sizeof(T)));
  }
}

TEMPLATE_TEST_CASE("format: every truncation of a stream is a format_error", "[format][truncation]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);

  auto check_truncations = [&](const bytes& full, std::size_t n, const std::vector<std::uint64_t>& lengths) {
    for (const std::uint64_t length : lengths) {
      CAPTURE(length, full.size());
      const bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(length));
      REQUIRE_FORMAT_ERROR(AbsFixed, T, cut, n, "ncclz");
      // The same cut with payload_bytes rewritten to match: now the header agrees with the buffer
      // and the tile table and the tiles themselves must catch it.
      if (length >= kHeader) {
        bytes patched = cut;
        store<std::uint64_t>(patched, 24, length - kHeader);
        REQUIRE_FORMAT_ERROR(AbsFixed, T, patched, n, "ncclz");
      }
    }
  };

  SECTION("a small stream, every length") {
    const std::size_t n = 20000;
    const std::vector<T> in = mixed_input<T>(n, g);
    const bytes full = ncclz::host::compress<AbsFixed, T>(in, 1e-3);
    const layout l = layout_of(full);
    REQUIRE(l.h.tile_count == 3);
    REQUIRE(static_cast<std::uint8_t>(full[l.tile[0]]) == static_cast<std::uint8_t>(ncclz::tile_mode::fixed_length));
    REQUIRE(load<std::uint16_t>(full, l.tile[0] + 2) > 0);
    REQUIRE(static_cast<std::uint8_t>(full[l.tile[1]]) == static_cast<std::uint8_t>(ncclz::tile_mode::raw));
    REQUIRE(static_cast<std::uint8_t>(full[l.tile[2]]) == static_cast<std::uint8_t>(ncclz::tile_mode::fixed_length));
    REQUIRE(decode<AbsFixed, T>(full, n).empty());
    std::vector<std::uint64_t> lengths(full.size());
    for (std::uint64_t i = 0; i < full.size(); ++i) lengths[i] = i;
    check_truncations(full, n, lengths);
  }
  SECTION("a 2^20 + 7 value stream, a sample of lengths") {
    const std::size_t n = (std::size_t{1} << 20) + 7;
    const std::vector<T> in = mixed_input<T>(n, g);
    const bytes full = ncclz::host::compress<AbsFixed, T>(in, 1e-3);
    const layout l = layout_of(full);
    REQUIRE(decode<AbsFixed, T>(full, n).empty());
    std::vector<std::uint64_t> lengths = {0, 1, 8, 63, 64, 65, 72};
    for (std::uint64_t t = 0; t < l.h.tile_count; t += 17) {
      for (const std::int64_t d : {-8, -1, 0, 1, 8}) lengths.push_back(l.tile[t] + d);
    }
    for (const std::int64_t d : {1, 2, 7, 8, 9, 16}) lengths.push_back(full.size() - d);
    for (int i = 0; i < 48; ++i) lengths.push_back(g() % full.size());
    check_truncations(full, n, lengths);
  }
}

TEMPLATE_TEST_CASE("format: a corrupt header is a format_error that names the field", "[format][corruption]", float,
                   double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const std::size_t n = 20000;
  const bytes good = ncclz::host::compress<AbsFixed, T>(mixed_input<T>(n, g), 1e-3);
  REQUIRE(decode<AbsFixed, T>(good, n).empty());
  const fmt::chunk_header h = ncclz::detail::parse_header(good.data(), good.size());

  auto with = [&](std::uint64_t at, auto value) {
    bytes s = good;
    store(s, at, value);
    return s;
  };
  for (const std::uint32_t magic : {0u, fmt::kMagic ^ 1u, fmt::kMagic ^ 0x80000000u, 0x315A434Fu}) {
    CAPTURE(magic);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(0, magic), n, "magic");
  }
  for (const std::uint8_t version : {0, 3, 255}) {
    CAPTURE(version);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(4, version), n, "version");
  }
  for (const std::uint8_t dtype : {0, 5, 255}) {
    CAPTURE(dtype);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(5, dtype), n, "dtype");
  }
  for (const ncclz::dtype other : {ncclz::dtype::f32, ncclz::dtype::f64, ncclz::dtype::f16, ncclz::dtype::bf16}) {
    // another valid dtype: the stream no longer matches the output
    if (other == ncclz::dtype_of<T>()) continue;
    const auto id = static_cast<std::uint8_t>(other);
    CAPTURE(static_cast<int>(id));
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(5, id), n, ncclz::detail::dtype_name(id));
  }
  for (const std::uint8_t quantizer : {0, 2, 128, 255}) {
    CAPTURE(quantizer);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(6, quantizer), n, "quantizer");
  }
  for (const std::uint8_t coder : {5, 6, 128, 255}) {
    CAPTURE(coder);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(7, coder), n, "coder");
  }
  for (const std::uint32_t tile_elements : {0u, 1u, 4096u, 8191u, 8193u, 16384u, 0xFFFFFFFFu}) {
    CAPTURE(tile_elements);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(8, tile_elements), n, "tile size");
  }
  for (const std::uint32_t tile_count : {0u, 2u, 4u, 0xFFFFFFFFu}) {
    CAPTURE(tile_count);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(12, tile_count), n, "tile count");
  }
  for (const std::uint64_t element_count : {std::uint64_t{0}, std::uint64_t{n - 1}, std::uint64_t{n + 1},
                                            std::uint64_t{3 * 8192}, ~std::uint64_t{0}}) {
    CAPTURE(element_count);
    const std::string m = decode<AbsFixed, T>(with(16, element_count), n);
    CAPTURE(m);
    REQUIRE_FALSE(m.empty());
    REQUIRE_THAT(m, Contains("tile count") || Contains("elements"));
  }
  for (const std::uint64_t payload : {h.payload_bytes + 8, h.payload_bytes + 1, ~std::uint64_t{0},
                                      std::uint64_t{1} << 63, fmt::kMaxPayloadBytes + 8}) {
    CAPTURE(payload);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(24, payload), n, "truncated");
  }
  for (const std::uint64_t payload : {std::uint64_t{0}, std::uint64_t{8}, h.payload_bytes - 1, h.payload_bytes - 4}) {
    CAPTURE(payload);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(24, payload), n, "tile table");
  }
  {  // shorter by whole words: the header is fine, the last tile is cut short
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(24, h.payload_bytes - 8), n, "tile 2");
  }
  {  // 2^64 - 1 elements in no tiles: a tile count that wraps around must not make it look whole
    bytes s = with(16, ~std::uint64_t{0});
    store(s, 12, std::uint32_t{0});
    REQUIRE_FALSE(decode<AbsFixed, T>(s, n).empty());
  }
  if constexpr (!std::is_same_v<ncclz::compute_t<T>, double>) {
    // Finite as a double, 0 or Inf in the float the decoder computes in: refused, not zeros or NaN.
    for (const double step : {1e300, 1e-300}) {
      CAPTURE(step);
      REQUIRE_FORMAT_ERROR(AbsFixed, T, with(48, step), n, "compute type");
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const double step : {0.0, -0.0, -1.0, nan, inf, -inf}) {
    CAPTURE(step);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(48, step), n, "quantizer parameters");
  }
  for (const double eb : {-1.0, nan, -inf}) {
    CAPTURE(eb);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(40, eb), n, "quantizer parameters");
  }
  for (const std::uint32_t flags : {2u, 3u, 0x80000001u}) {
    CAPTURE(flags);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, with(56, flags), n, "flags");
  }
  // Shorter than a header, down to nothing and a null pointer.
  REQUIRE_FORMAT_ERROR(AbsFixed, T, bytes(good.begin(), good.begin() + 63), n, "header");
  {
    std::vector<T> out(n);
    REQUIRE_THROWS_AS((ncclz::host::decompress<AbsFixed, T>(std::span<const std::byte>(), std::span<T>(out))),
                      ncclz::format_error);
  }
}

TEMPLATE_TEST_CASE("format: a corrupt tile table or tile is a format_error", "[format][corruption]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const std::size_t n = 20000;  // tiles: fixed with outliers, raw, fixed (3616 values)
  const bytes good = ncclz::host::compress<AbsFixed, T>(mixed_input<T>(n, g), 1e-3);
  const layout l = layout_of(good);
  REQUIRE(l.h.tile_count == 3);
  REQUIRE(static_cast<std::uint8_t>(good[l.tile[0]]) == static_cast<std::uint8_t>(ncclz::tile_mode::fixed_length));
  REQUIRE(static_cast<std::uint8_t>(good[l.tile[1]]) == static_cast<std::uint8_t>(ncclz::tile_mode::raw));
  REQUIRE(static_cast<std::uint8_t>(good[l.tile[2]]) == static_cast<std::uint8_t>(ncclz::tile_mode::fixed_length));
  const auto outliers0 = load<std::uint16_t>(good, l.tile[0] + 2);
  REQUIRE(outliers0 > 0);
  REQUIRE(decode<AbsFixed, T>(good, n).empty());
  const std::uint64_t payload = l.h.payload_bytes;
  auto entry = [](std::uint64_t t) { return kHeader + 4 * t; };

  SECTION("tile table entries outside the payload, inside the table, or out of order") {
    for (const std::uint32_t bad : {0u, 1u, static_cast<std::uint32_t>(payload / 8 + 1), 0xFFFFFFFFu}) {
      for (std::uint64_t t = 0; t < 3; ++t) {
        CAPTURE(bad, t);
        bytes s = good;
        store(s, entry(t), bad);
        REQUIRE_FORMAT_ERROR(AbsFixed, T, s, n, "offset outside");
      }
    }
    bytes swapped = good;  // non-monotone: tile 1 would end before it starts
    store(swapped, entry(1), load<std::uint32_t>(good, entry(2)));
    store(swapped, entry(2), load<std::uint32_t>(good, entry(1)));
    REQUIRE_FORMAT_ERROR(AbsFixed, T, swapped, n, "offset outside");
    bytes past_next = good;
    store(past_next, entry(1), load<std::uint32_t>(good, entry(2)) + 1);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, past_next, n, "tile");
    bytes empty_last = good;  // the last tile starts at the end of the payload: no room for a header
    store(empty_last, entry(2), static_cast<std::uint32_t>(payload / 8));
    REQUIRE_FORMAT_ERROR(AbsFixed, T, empty_last, n, "tile 2");
    bytes early = good;  // tile 1 starts 8 bytes early: tile 0 is cut short
    store(early, entry(1), load<std::uint32_t>(good, entry(1)) - 1);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, early, n, "tile 0");
  }
  SECTION("an unknown tile mode") {
    for (const std::uint8_t mode : {2, 3, 127, 255}) {
      for (std::uint64_t t = 0; t < 3; ++t) {
        CAPTURE(mode, t);
        bytes s = good;
        s[l.tile[t]] = static_cast<std::byte>(mode);
        REQUIRE_FORMAT_ERROR(AbsFixed, T, s, n, "unknown mode");
      }
    }
  }
  SECTION("a raw tile made fixed-length, a fixed-length tile made raw") {
    // Either may decode (to other values) or fail; neither may crash or read past the span.
    for (std::uint64_t t = 0; t < 3; ++t) {
      bytes s = good;
      s[l.tile[t]] = static_cast<std::byte>(static_cast<std::uint8_t>(s[l.tile[t]]) ^ 1u);
      CAPTURE(t);
      const std::string m = decode<AbsFixed, T>(s, n);
      if (!m.empty()) REQUIRE_THAT(m, Contains("tile"));
    }
  }
  SECTION("a block width over 32 bits") {
    const std::uint32_t blocks[] = {fmt::tile_blocks(8192), 0, fmt::tile_blocks(static_cast<std::uint32_t>(n - 2 * 8192))};
    for (const std::uint64_t t : {0u, 2u}) {
      for (const std::uint8_t w : {33, 64, 255}) {
        for (const std::uint32_t b : {0u, blocks[t] / 2, blocks[t] - 1}) {
          CAPTURE(t, w, b);
          bytes s = good;
          s[l.tile[t] + sizeof(fmt::tile_header) + b] = static_cast<std::byte>(w);
          REQUIRE_FORMAT_ERROR(AbsFixed, T, s, n, "width");
        }
      }
    }
    // Widths that are legal but need more planes than the tile holds.
    bytes s = good;
    for (std::uint32_t b = 0; b < blocks[2]; ++b) s[l.tile[2] + sizeof(fmt::tile_header) + b] = static_cast<std::byte>(32);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, s, n, "truncated");
  }
  SECTION("an outlier count past the tile") {
    for (const std::uint16_t count : {static_cast<std::uint16_t>(8193), static_cast<std::uint16_t>(30000),
                                      static_cast<std::uint16_t>(65535)}) {
      CAPTURE(count);
      REQUIRE_FORMAT_ERROR(AbsFixed, T, [&] { bytes s = good; store(s, l.tile[0] + 2, count); return s; }(), n,
                           "outlier");
    }
    // The last tile, given room to spare after it so that only the count itself is wrong: the
    // tile's 3616 values, and 3617 outliers.
    const std::uint32_t elements = fmt::tile_elements(n, 2);
    bytes roomy = good;
    roomy.resize(good.size() + 8 * 8192, std::byte{0});
    store<std::uint64_t>(roomy, 24, roomy.size() - kHeader);
    REQUIRE(decode<AbsFixed, T>(roomy, n).empty());  // slack after the last tile alone is not an error
    for (const std::uint32_t count : {elements + 1, elements + 100}) {
      CAPTURE(count);
      bytes s = roomy;
      store(s, l.tile[2] + 2, static_cast<std::uint16_t>(count));
      REQUIRE_FORMAT_ERROR(AbsFixed, T, s, n, "outlier");
    }
  }
  SECTION("an outlier index outside the tile") {
    // Tile 0's outlier list starts after its widths and planes.
    std::uint64_t words = 0;
    for (std::uint32_t b = 0; b < fmt::kTileBlocks; ++b) words += static_cast<std::uint8_t>(good[l.tile[0] + 8 + b]);
    const fmt::fixed_tile_layout tl = fmt::fixed_tile_layout_of(fmt::kTileBlocks, words, outliers0, sizeof(T));
    REQUIRE(l.tile[0] + tl.total == l.tile_end[0]);
    for (std::uint16_t o = 0; o < outliers0; ++o) REQUIRE(load<std::uint16_t>(good, l.tile[0] + tl.outlier_index + 2 * o) < 8192);
    for (const std::uint16_t index : {static_cast<std::uint16_t>(8192), static_cast<std::uint16_t>(8193),
                                      static_cast<std::uint16_t>(65535)}) {
      for (const std::uint16_t o : {std::uint16_t{0}, static_cast<std::uint16_t>(outliers0 - 1)}) {
        CAPTURE(index, o);
        bytes s = good;
        store(s, l.tile[0] + tl.outlier_index + 2 * o, index);
        REQUIRE_FORMAT_ERROR(AbsFixed, T, s, n, "outlier index");
      }
    }
  }
}

TEMPLATE_TEST_CASE("format: random byte flips decode or fail with format_error, never crash", "[format][fuzz]", float,
                   double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const std::size_t n = 20000;
  const std::vector<T> in = mixed_input<T>(n, g);
  struct named {
    const char* what;
    bytes stream;
    bool rel;
  };
  const named streams[] = {{"abs fixed", ncclz::host::compress<AbsFixed, T>(in, 1e-3), false},
                           {"rel fixed", ncclz::host::compress<RelFixed, T>(in, 1e-4), true},
                           {"abs raw", ncclz::host::compress<AbsRaw, T>(in, 1e-3), false}};
  int decoded = 0, rejected = 0;
  for (const named& x : streams) {
    CAPTURE(x.what);
    const layout l = layout_of(x.stream);
    for (int trial = 0; trial < 1500; ++trial) {
      bytes s = x.stream;
      const int flips = 1 + static_cast<int>(g() % 4);
      // Mostly the payload; sometimes the tile table or a tile's first bytes, where it matters most.
      for (int f = 0; f < flips; ++f) {
        std::uint64_t at;
        switch (g() % 4) {
          case 0: at = kHeader + g() % (l.tile[0] - kHeader); break;               // table
          case 1: at = l.tile[g() % l.tile.size()] + g() % 300; break;              // tile headers, widths
          default: at = kHeader + g() % (s.size() - kHeader); break;                // anywhere in the payload
        }
        at = std::min<std::uint64_t>(at, s.size() - 1);
        s[at] ^= static_cast<std::byte>(1u << (g() % 8));
        if (g() % 4 == 0) s[at] = static_cast<std::byte>(g());
      }
      const std::string m = x.rel ? decode<RelFixed, T>(s, n) : decode<AbsFixed, T>(s, n);
      if (m.empty()) ++decoded;
      else ++rejected;
    }
  }
  INFO("decoded " << decoded << ", rejected " << rejected);
  // Both outcomes happen: flips in plane data decode to other values, flips in the structure fail.
  REQUIRE(decoded > 0);
  REQUIRE(rejected > 0);
}

namespace {
using AbsFixedUnchecked = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::FixedLength>,
                                       ncclz::Integrity<ncclz::NoChecksums>>;
using Fixed8 = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<8>>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using RelAdaptive = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Adaptive>>;

/// Decodes `s` as it is (not resealed), from a heap buffer of exactly its size: "" or the message.
template <class Codec, class T>
std::string decode_as_is(const bytes& s, std::size_t n) {
  const bytes exact(s.begin(), s.end());
  std::vector<T> out(n);
  try {
    ncclz::host::decompress<Codec, T>(std::span<const std::byte>(exact.data(), exact.size()), std::span<T>(out));
  } catch (const ncclz::format_error& e) {
    return e.what();
  }
  return "";
}

/// The bytes of a chunk no decoder reads: the zero padding after its tile table, check table and
/// step table (fixed_rate).
std::vector<bool> unread_bytes(const bytes& s, std::uint32_t value_bytes) {
  const fmt::chunk_header h = ncclz::detail::parse_header(s.data(), s.size());
  std::vector<bool> unread(s.size(), false);
  const auto pad = [&](std::uint64_t used, std::uint64_t size) {
    for (std::uint64_t b = kHeader + used; b < kHeader + size; ++b) unread[b] = true;
  };
  const std::uint64_t table = fmt::table_bytes(h.tile_count);
  pad(4 * h.tile_count, table);
  if (h.flags & fmt::kTileChecks) pad(table + 4 * h.tile_count, 2 * table);
  if (h.quantizer == static_cast<std::uint8_t>(ncclz::quantizer_id::fixed_rate)) {
    const std::uint64_t at = fmt::step_table_offset(h.tile_count, h.flags);
    pad(at + fmt::scale_count(h.element_count) * fmt::scale_bytes(value_bytes), at + fmt::scale_table_bytes(h.element_count, value_bytes));
  }
  return unread;
}

/// Flips one random bit of each byte of `good` in turn (skipping `unread_bytes`): every one must
/// be rejected. Returns how many were tried.
template <class Codec, class T>
std::size_t require_every_flip_rejected(const bytes& good, std::size_t n, std::mt19937_64& g) {
  REQUIRE(decode_as_is<Codec, T>(good, n).empty());
  const std::vector<bool> unread = unread_bytes(good, sizeof(T));
  std::size_t tried = 0;
  for (std::uint64_t at = 0; at < good.size(); ++at) {
    if (unread[at]) continue;
    bytes s = good;
    const int bit = static_cast<int>(g() % 8);
    s[at] ^= static_cast<std::byte>(1u << bit);
    CAPTURE(at, bit);
    REQUIRE_FALSE(decode_as_is<Codec, T>(s, n).empty());
    ++tried;
  }
  return tried;
}
}  // namespace

TEMPLATE_TEST_CASE("format: any bit flipped in a chunk with tile checksums is rejected", "[format][checksum]", float, double,
                   __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const std::size_t n = 20000;
  const std::vector<T> in = mixed_input<T>(n, g);
  SECTION("fixed_length and raw tiles") {
    const bytes good = ncclz::host::compress<AbsFixed, T>(in, 1e-3);
    REQUIRE(require_every_flip_rejected<AbsFixed, T>(good, n, g) > good.size() - 16);
  }
  SECTION("fixed_rate: the step table too") {
    const bytes good = ncclz::host::compress<Fixed8, T>(in, 8);
    require_every_flip_rejected<Fixed8, T>(good, n, g);
  }
  SECTION("huffman and zero_run tiles") {
    std::vector<T> sparse = in;
    for (std::size_t i = 0; i < n; ++i) {
      if (i % 5 != 0) sparse[i] = from_double<T>(0.0);
    }
    const bytes good = ncclz::host::compress<RelAdaptive, T>(sparse, 1e-3);
    const std::vector<std::size_t> modes = ncclz_test::tile_modes(good);
    CAPTURE(modes[0], modes[1], modes[2], modes[3]);
    REQUIRE(modes[static_cast<int>(ncclz::tile_mode::huffman)] + modes[static_cast<int>(ncclz::tile_mode::zero_run)] > 0);
    require_every_flip_rejected<RelAdaptive, T>(good, n, g);
  }
}

TEMPLATE_TEST_CASE("format: chunks without tile checksums, and version 1 chunks, still decode", "[format][checksum]", float,
                   __half) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const std::size_t n = 20000;
  const std::vector<T> in = mixed_input<T>(n, g);
  const bytes checked = ncclz::host::compress<AbsFixed, T>(in, 1e-3);
  const bytes unchecked = ncclz::host::compress<AbsFixedUnchecked, T>(in, 1e-3);
  const fmt::chunk_header hc = ncclz::detail::parse_header(checked.data(), checked.size());
  const fmt::chunk_header hu = ncclz::detail::parse_header(unchecked.data(), unchecked.size());
  REQUIRE(hc.flags == fmt::kTileChecks);
  REQUIRE(hu.flags == 0);
  REQUIRE(hu.version == fmt::kVersion);
  REQUIRE(hu.header_check == fmt::header_check_of(hu));
  // The same tiles; the unchecked chunk lacks the check table alone.
  REQUIRE(checked.size() == unchecked.size() + fmt::table_bytes(hc.tile_count));
  REQUIRE(std::equal(checked.end() - static_cast<std::ptrdiff_t>(hc.payload_bytes - 2 * fmt::table_bytes(hc.tile_count)),
                     checked.end(), unchecked.end() - static_cast<std::ptrdiff_t>(hu.payload_bytes - fmt::table_bytes(hu.tile_count))));

  // Either codec reads either chunk, to the same values.
  std::vector<T> a(n), b(n), c(n);
  ncclz::host::decompress<AbsFixed, T>(checked, std::span<T>(a));
  ncclz::host::decompress<AbsFixed, T>(unchecked, std::span<T>(b));
  ncclz::host::decompress<AbsFixedUnchecked, T>(checked, std::span<T>(c));
  REQUIRE(std::memcmp(a.data(), b.data(), n * sizeof(T)) == 0);
  REQUIRE(std::memcmp(a.data(), c.data(), n * sizeof(T)) == 0);

  // A version 1 chunk: the unchecked chunk with its version byte 1, flags and header check 0.
  bytes v1 = unchecked;
  v1[4] = std::byte{1};
  store<std::uint64_t>(v1, 56, 0);
  std::vector<T> d(n);
  ncclz::host::decompress<AbsFixed, T>(v1, std::span<T>(d));
  REQUIRE(std::memcmp(a.data(), d.data(), n * sizeof(T)) == 0);
  for (const std::uint64_t word : {std::uint64_t{1}, std::uint64_t{1} << 32, std::uint64_t{1} << 63}) {
    CAPTURE(word);
    REQUIRE_FORMAT_ERROR(AbsFixed, T, [&] { bytes s = v1; store(s, 56, word); return s; }(), n, "flags");
  }

  // The header check guards every header field but payload_bytes; a flag turned off is refused.
  for (std::uint64_t at = 0; at < kHeader; ++at) {
    if (at >= 24 && at < 32) continue;
    for (const bytes* s : {&checked, &unchecked}) {
      bytes t = *s;
      t[at] ^= static_cast<std::byte>(1u << (g() % 8));
      CAPTURE(at);
      REQUIRE_FALSE(decode_as_is<AbsFixed, T>(t, n).empty());
    }
  }
  // Without tile checksums, a flipped bit in a tile's planes decodes (to other values).
  int decoded = 0;
  for (int trial = 0; trial < 200; ++trial) {
    bytes t = unchecked;
    const std::uint64_t at = kHeader + fmt::table_bytes(hu.tile_count) + 300 + g() % 1000;  // tile 0, past its widths
    t[at] ^= static_cast<std::byte>(1u << (g() % 8));
    decoded += decode_as_is<AbsFixed, T>(t, n).empty();
  }
  REQUIRE(decoded > 0);
}
