// The tile modes the entropy coders choose, as the host does, and the device decoder's verdicts on
// corrupted chunks, the host's.
#include "device_codec_support.hpp"

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
