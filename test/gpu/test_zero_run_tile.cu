// The zero_run tile mode's device coder (ncclz/device/detail/tile/zero_run/) against the host
// reference (ncclz/host/zero_run_reference.hpp): test-only kernels quantize each tile on the device,
// stage its codes, call measure + write (and write the outliers the simple way) and the bytes must
// be the host's; decode must read the host's tiles to the host's codes and values, and corrupted
// or truncated tiles must fail exactly where the host's decode_tile fails (or decode to what the
// host decodes), never hang or crash. Fresh random data in every run (the seed is printed on failure;
// NCCLZ_TEST_SEED=<seed> repeats it).
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/device/detail/tile/zero_run/decode.cuh"
#include "ncclz/device/detail/tile/zero_run/encode.cuh"
#include "ncclz/error.hpp"
#include "ncclz/format.hpp"
#include "ncclz/host/zero_run_reference.hpp"

#include "../host/test_support.hpp"

namespace {

namespace fmt = ncclz::format;
namespace zr = ncclz::host::detail::zero_run;
namespace zrk = ncclz::device::detail::tile::zero_run;
using ncclz::device::detail::decode_status;
using ncclz::device::detail::kOutlierCode;
using ncclz::device::detail::kTileThreads;
using ncclz::device::detail::kTileWarps;
using ncclz::device::detail::load_subblock_rows;
using ncclz::device::detail::staged;
using ncclz::device::detail::warp_stage;
using ncclz_test::bits_of;
using ncclz_test::format_error_of;
using ncclz_test::fresh_seed;
using ncclz_test::from_double;
using ncclz_test::limits;
using bytes = std::vector<std::byte>;
using AbsFixed = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using RelFixed = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;

/// One tile of a launch: its values (encode) or bytes (decode).
struct tile_job {
  std::uint64_t first;     ///< first element in the input / code arrays
  std::uint64_t at;        ///< the tile's bytes: offset in the tile buffer (8-byte aligned)
  std::uint64_t span;      ///< decode: bytes the tile may use
  std::uint32_t elements;
};

/// Encodes tile blockIdx.x of `in` as the codec kernels will: quantize and stage, measure, put the
/// stream together in kStreamWords of shared memory where it fits (with 0, never: write puts it
/// together in the tile), write, then the outliers (thread 0, in element order: simple, not fast)
/// and the padding after them.
template <class Codec, class T, bool kOutliers, bool kWrite = true, std::uint32_t kStreamWords = zrk::kStreamBufferWords>
__global__ void __launch_bounds__(kTileThreads) encode_tiles(const T* in, const tile_job* jobs, ncclz::quant_params<T> p,
                                                             std::byte* out, std::uint64_t* sizes) {
  using Q = typename Codec::quantizer;
  __shared__ alignas(16) warp_stage stages[kTileWarps];
  __shared__ zrk::encode_shared s;
  __shared__ std::uint32_t stream[kStreamWords > 0 ? kStreamWords : 1];
  __shared__ std::uint32_t outliers;
  const tile_job job = jobs[blockIdx.x];
  if (threadIdx.x == 0) outliers = 0;
  __syncthreads();
  for (std::uint32_t e = threadIdx.x; e < fmt::kTileElements; e += kTileThreads) {
    std::int32_t code = 0;
    if (e < job.elements) {
      std::int32_t q = 0;
      if (Q::template quantize<T>(in[job.first + e], p, q)) {
        code = q;
      } else {
        code = kOutlierCode;
        atomicAdd(&outliers, 1u);
      }
    }
    staged(stages, e) = code;
  }
  __syncthreads();
  const std::uint32_t outlier_count = outliers;
  const zrk::plan pl = zrk::measure<T>(s, stages, job.elements, outlier_count);
  std::byte* const tile = out + job.at;
  if constexpr (kWrite) {
    const bool staged_stream = zrk::stage_stream(s, stages, job.elements, stream, kStreamWords);
    __syncthreads();
    zrk::write<T>(s, stages, job.elements, outlier_count, tile, staged_stream ? stream : nullptr);
  }
  if (threadIdx.x == 0) {
    std::uint32_t o = 0;
    if constexpr (kOutliers) {
      auto* index = reinterpret_cast<std::uint16_t*>(tile + pl.outlier_index);
      T* values = reinterpret_cast<T*>(tile + pl.outlier_values);
      for (std::uint32_t e = 0; e < job.elements; ++e) {
        if (staged(stages, e) == kOutlierCode) {
          index[o] = static_cast<std::uint16_t>(e);
          values[o] = in[job.first + e];
          ++o;
        }
      }
      for (std::uint64_t b = pl.outlier_index + 2ull * o; b < pl.outlier_values; ++b) tile[b] = std::byte{0};
      for (std::uint64_t b = pl.outlier_values + std::uint64_t{o} * sizeof(T); b < pl.bytes; ++b) tile[b] = std::byte{0};
    }
    sizes[blockIdx.x] = pl.bytes;
  }
}

/// What decode_tiles reports per tile.
struct decode_result {
  std::uint32_t status;        ///< decode_status
  std::uint32_t uniform;       ///< 1 if every thread returned the same status
  std::uint64_t outlier_index;
  std::uint64_t outlier_values;
};

/// Decodes tile blockIdx.x; on success its codes go to codes[first..first + elements): the values
/// in the sub-block rows are the codes zig-zagged, or deltas whose inclusive prefix sum plus the
/// tile's base gives them (here summed block by block, then over the blocks by thread 0).
template <class T>
__global__ void __launch_bounds__(kTileThreads) decode_tiles(const std::byte* tiles, const tile_job* jobs, std::int32_t* codes,
                                                             decode_result* results) {
  __shared__ alignas(16) warp_stage stages[kTileWarps];
  __shared__ zrk::decode_shared s;
  __shared__ std::uint32_t first_status;
  __shared__ std::uint32_t block_before[kTileThreads];
  const tile_job job = jobs[blockIdx.x];
  for (std::uint32_t e = threadIdx.x; e < fmt::kTileElements; e += kTileThreads) staged(stages, e) = 0x5A5A5A5A;  // poison
  __syncthreads();
  std::uint64_t outlier_index = 0, outlier_values = 0;
  bool deltas = false;
  const decode_status st = zrk::decode<T>(s, tiles + job.at, job.span, job.elements, stages, deltas, outlier_index, outlier_values);
  __syncthreads();
  if (threadIdx.x == 0) first_status = static_cast<std::uint32_t>(st);
  __syncthreads();
  const int uniform = __syncthreads_and(static_cast<std::uint32_t>(st) == first_status);
  if (st == decode_status::ok) {
    const std::uint32_t first = threadIdx.x * 32;
    const std::uint32_t block_count = first < job.elements ? min(job.elements - first, 32u) : 0u;
    std::uint32_t z[32];
    load_subblock_rows(stages, block_count, z);
    std::uint32_t sum = 0;
    for (int i = 0; i < 32; ++i) {
      sum += static_cast<std::uint32_t>(fmt::unzigzag(z[i]));
      z[i] = deltas ? sum : static_cast<std::uint32_t>(fmt::unzigzag(z[i]));
    }
    block_before[threadIdx.x] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
      std::uint32_t before = static_cast<std::uint32_t>(reinterpret_cast<const fmt::tile_header*>(tiles + job.at)->base);
      for (std::uint32_t t = 0; t < kTileThreads; ++t) {
        const std::uint32_t block_sum = block_before[t];
        block_before[t] = before;
        before += block_sum;
      }
    }
    __syncthreads();
    for (std::uint32_t i = 0; i < block_count; ++i) {
      codes[job.first + first + i] = static_cast<std::int32_t>(deltas ? block_before[threadIdx.x] + z[i] : z[i]);
    }
  }
  if (threadIdx.x == 0) results[blockIdx.x] = {static_cast<std::uint32_t>(st), static_cast<std::uint32_t>(uniform), outlier_index, outlier_values};
}

template <class V>
struct device_array {
  V* ptr = nullptr;
  explicit device_array(std::size_t n) { NCCLZ_CUDA_TRY(cudaMalloc(&ptr, std::max<std::size_t>(n, 1) * sizeof(V))); }
  device_array(const std::vector<V>& h) : device_array(h.size()) {
    if (!h.empty()) NCCLZ_CUDA_TRY(cudaMemcpy(ptr, h.data(), h.size() * sizeof(V), cudaMemcpyHostToDevice));
  }
  ~device_array() { cudaFree(ptr); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  std::vector<V> download(std::size_t n) const {
    std::vector<V> h(n);
    if (n) NCCLZ_CUDA_TRY(cudaMemcpy(h.data(), ptr, n * sizeof(V), cudaMemcpyDeviceToHost));
    return h;
  }
};

void sync_and_check() {
  NCCLZ_CUDA_TRY(cudaGetLastError());
  NCCLZ_CUDA_TRY(cudaDeviceSynchronize());
}

/// Device-encoded tiles of `in` (tiles of 8192, the last what is left), each as its bytes; streams
/// of up to kStreamWords put together in shared memory.
template <class Codec, class T, std::uint32_t kStreamWords = zrk::kStreamBufferWords>
std::vector<bytes> device_encode(const std::vector<T>& in, const ncclz::quant_params<T>& p) {
  std::vector<tile_job> jobs;
  std::uint64_t capacity = 0;
  for (std::uint64_t t = 0; t < fmt::tile_count(in.size()); ++t) {
    const std::uint32_t n = fmt::tile_elements(in.size(), t);
    jobs.push_back({t * fmt::kTileElements, capacity, 0, n});
    capacity += zr::max_tile_bytes(n, sizeof(T));
  }
  if (jobs.empty()) return {};
  device_array<T> d_in(in);
  device_array<tile_job> d_jobs(jobs);
  device_array<std::byte> d_out(capacity);
  device_array<std::uint64_t> d_sizes(jobs.size());
  NCCLZ_CUDA_TRY(cudaMemset(d_out.ptr, 0xA5, capacity));  // poison: every byte must be written
  encode_tiles<Codec, T, true, true, kStreamWords>
      <<<static_cast<unsigned>(jobs.size()), kTileThreads>>>(d_in.ptr, d_jobs.ptr, p, d_out.ptr, d_sizes.ptr);
  sync_and_check();
  const std::vector<std::uint64_t> sizes = d_sizes.download(jobs.size());
  const std::vector<std::byte> all = d_out.download(capacity);
  std::vector<bytes> tiles;
  for (std::size_t t = 0; t < jobs.size(); ++t) {
    REQUIRE(sizes[t] <= zr::max_tile_bytes(jobs[t].elements, sizeof(T)));
    tiles.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(jobs[t].at), all.begin() + static_cast<std::ptrdiff_t>(jobs[t].at + sizes[t]));
  }
  return tiles;
}

/// A tile to decode: its bytes (the span is their size) and element count.
struct encoded_tile {
  bytes data;
  std::uint32_t elements;
};

struct decoded_tile {
  decode_result result;
  std::vector<std::int32_t> codes;  ///< staged codes, when ok
};

template <class T>
std::vector<decoded_tile> device_decode(const std::vector<encoded_tile>& tiles) {
  std::vector<tile_job> jobs;
  std::uint64_t at = 0, first = 0;
  for (const encoded_tile& t : tiles) {
    jobs.push_back({first, at, t.data.size(), t.elements});
    at += fmt::align_up(t.data.size(), 8);
    first += t.elements;
  }
  if (jobs.empty()) return {};
  std::vector<std::byte> all(at, std::byte{0xEE});
  for (std::size_t t = 0; t < tiles.size(); ++t) std::copy(tiles[t].data.begin(), tiles[t].data.end(), all.begin() + static_cast<std::ptrdiff_t>(jobs[t].at));
  device_array<std::byte> d_tiles(all);
  device_array<tile_job> d_jobs(jobs);
  device_array<std::int32_t> d_codes(first);
  device_array<decode_result> d_results(jobs.size());
  decode_tiles<T><<<static_cast<unsigned>(jobs.size()), kTileThreads>>>(d_tiles.ptr, d_jobs.ptr, d_codes.ptr, d_results.ptr);
  sync_and_check();
  const std::vector<std::int32_t> codes = d_codes.download(first);
  const std::vector<decode_result> results = d_results.download(jobs.size());
  std::vector<decoded_tile> out;
  for (std::size_t t = 0; t < jobs.size(); ++t) {
    decoded_tile d{results[t], {}};
    if (results[t].status == static_cast<std::uint32_t>(decode_status::ok)) {
      d.codes.assign(codes.begin() + static_cast<std::ptrdiff_t>(jobs[t].first),
                     codes.begin() + static_cast<std::ptrdiff_t>(jobs[t].first + jobs[t].elements));
    }
    out.push_back(std::move(d));
  }
  return out;
}

/// The values a device decode stands for: the staged codes dequantized, the outliers patched from
/// the tile's arrays (as the kernels will), or "" and the values; else a note on what is wrong.
template <class Codec, class T>
std::vector<T> values_of(const decoded_tile& d, const bytes& tile, const ncclz::quant_params<T>& p, bool& outlier_index_bad) {
  using Q = typename Codec::quantizer;
  std::vector<T> v(d.codes.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = Q::template dequantize<T>(d.codes[i], p);
  const auto outliers = ncclz_test::load<fmt::tile_header>(tile, 0).outlier_count;
  outlier_index_bad = false;
  for (std::uint32_t o = 0; o < outliers; ++o) {
    const auto i = ncclz_test::load<std::uint16_t>(tile, d.result.outlier_index + 2ull * o);
    if (i >= v.size()) {
      outlier_index_bad = true;
      continue;
    }
    v[i] = ncclz_test::load<T>(tile, d.result.outlier_values + std::uint64_t{o} * sizeof(T));
  }
  return v;
}

template <class T>
void require_same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (bits_of(a[i]) != bits_of(b[i])) {
      INFO("element " << i << ": " << bits_of(a[i]) << " vs " << bits_of(b[i]));
      REQUIRE(bits_of(a[i]) == bits_of(b[i]));
    }
  }
}

/// The whole round: device tiles == host tiles byte for byte (their streams put together in shared
/// memory where they fit kStreamWords, in the tile otherwise); the device decodes the host's tiles
/// to the host's codes and (patched) values.
template <class Codec, std::uint32_t kStreamWords = zrk::kStreamBufferWords, class T>
void require_device_matches_host(const std::vector<T>& in, double bound) {
  const auto p = ncclz_test::params_for<Codec>(in, bound);
  const std::vector<bytes> device_tiles = device_encode<Codec, T, kStreamWords>(in, p);
  REQUIRE(device_tiles.size() == fmt::tile_count(in.size()));
  std::vector<encoded_tile> host_tiles;
  std::vector<zr::tile_codes> host_codes;
  for (std::uint64_t t = 0; t < fmt::tile_count(in.size()); ++t) {
    const std::span<const T> values = std::span<const T>(in).subspan(t * fmt::kTileElements, fmt::tile_elements(in.size(), t));
    host_tiles.push_back({zr::encode_tile<Codec, T>(values, p), static_cast<std::uint32_t>(values.size())});
    host_codes.push_back(zr::codes_of<Codec>(values, p));
    const bytes& h = host_tiles.back().data;
    const bytes& d = device_tiles[t];
    CAPTURE(t, values.size(), h.size(), d.size());
    REQUIRE(d.size() == h.size());
    const auto mismatch = std::mismatch(d.begin(), d.end(), h.begin());
    INFO("first differing byte " << (mismatch.first - d.begin()));
    REQUIRE(mismatch.first == d.end());
  }
  const std::vector<decoded_tile> decoded = device_decode<T>(host_tiles);
  for (std::size_t t = 0; t < decoded.size(); ++t) {
    CAPTURE(t);
    REQUIRE(decoded[t].result.uniform == 1);
    REQUIRE(decoded[t].result.status == static_cast<std::uint32_t>(decode_status::ok));
    REQUIRE(decoded[t].codes == host_codes[t].codes);  // an outlier's position holds 0, its code as coded
    std::vector<T> host_out(host_tiles[t].elements);
    REQUIRE(format_error_of(host_tiles[t].data, [&](std::span<const std::byte> s) {
              zr::decode_tile<Codec, T>(s, t, p, std::span<T>(host_out));
            }).empty());
    bool outlier_index_bad = false;
    require_same_bits(values_of<Codec>(decoded[t], host_tiles[t].data, p, outlier_index_bad), host_out);
    REQUIRE(!outlier_index_bad);
  }
}

// --- data -----------------------------------------------------------------------------------------

/// Laplace noise (scale 1) whose values under `threshold` in magnitude are 0 (ln 10: 90% zeros).
std::vector<double> thresholded(std::size_t n, double threshold, std::mt19937_64& g) {
  std::exponential_distribution<double> e(1.0);
  std::vector<double> v(n);
  for (auto& x : v) {
    const double m = e(g);
    x = m < threshold ? 0.0 : ((g() & 1u) ? m : -m);
  }
  return v;
}

enum class shape { sparse90, sparse99_clustered, relu_noise, relu_smooth, smooth, zeros, constant, outliers };

const char* name_of(shape s) {
  switch (s) {
    case shape::sparse90: return "sparse 90%";
    case shape::sparse99_clustered: return "sparse 99%, clustered";
    case shape::relu_noise: return "ReLU of noise";
    case shape::relu_smooth: return "ReLU of a smooth field";
    case shape::smooth: return "smooth field";
    case shape::zeros: return "all zeros";
    case shape::constant: return "constant";
    case shape::outliers: return "sparse with NaN/Inf/huge";
  }
  return "?";
}

template <class T>
std::vector<T> make_input(shape s, std::size_t n, std::mt19937_64& g) {
  std::vector<double> v(n, 0.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  switch (s) {
    case shape::sparse90: v = thresholded(n, std::log(10.0), g); break;
    case shape::sparse99_clustered:
      for (std::size_t i = 0; i < n;) {
        i += g() % 2000;
        for (const std::size_t end = std::min(n, i + 1 + g() % 20); i < end; ++i) v[i] = ((g() & 1u) ? 0.05 : -0.05) + 0.5 * normal(g);
      }
      break;
    case shape::relu_noise:
      for (auto& x : v) x = std::max(0.0, normal(g));
      break;
    case shape::relu_smooth: {
      const std::vector<T> w = ncclz_test::wavy_field<T>(n, 1.0, g);
      for (std::size_t i = 0; i < n; ++i) v[i] = std::max(0.0, ncclz_test::to_double(w[i]) + 0.02 * normal(g));
      break;
    }
    case shape::smooth: {
      const std::vector<T> w = ncclz_test::wavy_field<T>(n, 100.0, g);
      for (std::size_t i = 0; i < n; ++i) v[i] = ncclz_test::to_double(w[i]);
      break;
    }
    case shape::zeros: break;
    case shape::constant: std::fill(v.begin(), v.end(), 3.25); break;
    case shape::outliers: v = thresholded(n, std::log(10.0), g); break;
  }
  std::vector<T> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = from_double<T>(v[i]);
  if (s == shape::outliers) ncclz_test::add_outliers(out, 0.01, g);
  return out;
}

constexpr shape kShapes[] = {shape::sparse90, shape::sparse99_clustered, shape::relu_noise, shape::relu_smooth,
                             shape::smooth,   shape::zeros,              shape::constant,   shape::outliers};

}  // namespace

TEMPLATE_TEST_CASE("zero_run device tiles are the host's, byte for byte, and decode to the host's values",
                   "[gpu][zero_run]", float, double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  for (const std::size_t n : {std::size_t{1}, std::size_t{255}, std::size_t{257}, std::size_t{8191}, std::size_t{3 * 8192 + 100}}) {
    for (const shape s : kShapes) {
      const std::vector<T> in = make_input<T>(s, n, g);
      for (const double bound : {1e-2, 1e-4}) {
        CAPTURE(n, name_of(s), bound);
        require_device_matches_host<RelFixed>(in, bound);
        require_device_matches_host<AbsFixed>(in, bound);
        require_device_matches_host<RelFixed, 0>(in, bound);  // every stream put together in its tile
      }
    }
  }
}

TEST_CASE("zero_run device tiles: exact codes at the edges (widest values, runs over sub-block edges, every value an outlier)",
          "[gpu][zero_run]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const double big = (1 << 30) - 1.0;
  std::vector<std::vector<double>> inputs;
  std::vector<double> v(8192, 0.0);
  for (std::uint32_t i = 0; i < v.size(); ++i) v[i] = (i % 2 ? -1.0 : 1.0) * big;  // deltas of 2^31 - 2
  inputs.push_back(v);
  for (std::uint32_t i = 0; i < v.size(); i += 3) v[i] = 0.0;
  inputs.push_back(v);
  std::fill(v.begin(), v.end(), 0.0);
  for (const std::uint32_t i : {0u, 255u, 256u, 767u, 1024u, 4095u, 8191u}) v[i] = 5.0;
  inputs.push_back(v);
  for (std::uint32_t i = 0; i < v.size(); i += 97) v[i] = -big;
  inputs.push_back(v);
  inputs.emplace_back(8192, std::numeric_limits<double>::quiet_NaN());
  std::vector<double> ramp(8192);
  for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = 100000.0 + 3.0 * static_cast<double>(i);
  inputs.push_back(ramp);
  for (const auto& in : inputs) {
    CAPTURE(&in - inputs.data());
    require_device_matches_host<AbsFixed>(in, 0.5);  // step 1: the values are the codes
    require_device_matches_host<AbsFixed, 0>(in, 0.5);
  }
}

// The device encoder works a block of 32 values a lane and a sub-block a segment of 8 lanes: runs
// that cross a block or a sub-block, fields that cross stream words, counters at their limits and
// tiles that end inside a block all go through paths the host's sequential coder does not have.
TEST_CASE("zero_run device tiles: runs over block and sub-block edges, long Rice quotients, full counters, ragged ends",
          "[gpu][zero_run]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  std::vector<std::vector<double>> inputs;
  std::vector<double> v(8192, 0.0);
  // Nonzeros on both sides of block edges (runs of 0, and of 30 across a lane's block), and runs
  // from the end of one sub-block into the next.
  for (std::uint32_t i = 0; i < v.size(); i += 32) {
    v[i] = 2.0;
    if (i % 256 == 224) v[i + 31] = -3.0;
    if (i % 1024 == 512) v[i] = 0.0;
  }
  inputs.push_back(v);
  // One nonzero a sub-block: at its last value (a run of 255), its first, or its middle.
  std::fill(v.begin(), v.end(), 0.0);
  for (std::uint32_t b = 0; b < 32; ++b) v[256 * b + (b % 3 == 0 ? 255 : (b % 3 == 1 ? 0 : 128))] = b % 2 ? 7.0 : -7.0;
  inputs.push_back(v);
  // 100 nonzeros, then 155 zeros and one more: the runs' Rice(0), a quotient of 155 bits; the
  // magnitudes mostly the least, one of 40 in each group of 32: Rice(0), quotients of 39 bits.
  std::fill(v.begin(), v.end(), 0.0);
  for (std::uint32_t b = 0; b < 32; ++b) {
    for (std::uint32_t i = 0; i < 100; ++i) v[256 * b + i] = (i % 2 ? 1.0 : -1.0) * (i % 32 == 31 ? 40.0 : 1.0);
    v[256 * b + 255] = 40.0;
  }
  inputs.push_back(v);
  // Every value of a sub-block nonzero with one stored magnitude bit set (a count of 256), and
  // 128 runs of one zero (a run count of 128).
  std::fill(v.begin(), v.end(), 0.0);
  v[0] = 1.0;
  for (std::uint32_t i = 256; i < 512; ++i) v[i] = 3.0;
  for (std::uint32_t i = 1024; i < 1280; i += 2) v[i + 1] = i % 6 == 0 ? -5.0 : 5.0;
  inputs.push_back(v);
  // Sparse values whose magnitudes need 30 bits, in groups, beside small ones.
  std::fill(v.begin(), v.end(), 0.0);
  for (std::uint32_t i = 0; i < v.size(); i += 1 + static_cast<std::uint32_t>(g() % 9)) {
    v[i] = (g() % 2 ? 1.0 : -1.0) * static_cast<double>(g() % 4 == 0 ? (1u << 29) + g() % (1u << 29) : 1 + g() % 3);
  }
  inputs.push_back(v);
  // Tiles that end inside a block and inside a sub-block, their last value far from 0 (its delta
  // to the zero after the end must not count).
  for (const std::size_t n : {std::size_t{8193}, std::size_t{8192 + 31}, std::size_t{8192 + 33}, std::size_t{8192 + 255},
                              std::size_t{8192 + 257}, std::size_t{8192 + 4001}}) {
    std::vector<double> r(n, 0.0);
    for (std::size_t i = 0; i < n; i += 1 + g() % 7) r[i] = static_cast<double>(static_cast<int>(g() % 11) - 5);
    r.back() = 1000.0;
    inputs.push_back(r);
    std::fill(r.begin(), r.end(), 0.0);  // and all zero
    inputs.push_back(r);
  }
  for (const auto& in : inputs) {
    CAPTURE(&in - inputs.data(), in.size());
    require_device_matches_host<AbsFixed>(in, 0.5);  // step 1: the values are the codes
    require_device_matches_host<AbsFixed, 0>(in, 0.5);
  }
}

namespace {

/// Decodes `variants` (corrupted or truncated copies of tiles) on the device and on the host:
/// the device fails exactly where the host does (but for outlier indices, which the kernels check)
/// and decodes to the host's values elsewhere; every thread returns the same status.
template <class Codec, class T>
std::pair<int, int> require_same_verdicts(const std::vector<encoded_tile>& variants, const ncclz::quant_params<T>& p) {
  const std::vector<decoded_tile> decoded = device_decode<T>(variants);
  int ok = 0, rejected = 0;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    CAPTURE(v, variants[v].data.size());
    REQUIRE(decoded[v].result.uniform == 1);
    std::vector<T> host_out(variants[v].elements);
    const std::string error = format_error_of(variants[v].data, [&](std::span<const std::byte> s) {
      zr::decode_tile<Codec, T>(s, 0, p, std::span<T>(host_out));
    });
    CAPTURE(error, decoded[v].result.status);
    const bool host_ok = error.empty() || error.find("outlier index") != std::string::npos;
    const bool device_ok = decoded[v].result.status == static_cast<std::uint32_t>(decode_status::ok);
    REQUIRE(device_ok == host_ok);
    if (!device_ok) {
      ++rejected;
      continue;
    }
    ++ok;
    bool outlier_index_bad = false;
    const std::vector<T> device_out = values_of<Codec>(decoded[v], variants[v].data, p, outlier_index_bad);
    REQUIRE(outlier_index_bad == !error.empty());
    if (error.empty()) require_same_bits(device_out, host_out);
  }
  return {ok, rejected};
}

}  // namespace

TEMPLATE_TEST_CASE("zero_run device decode: flipped bits and truncations fail as on the host, never hang", "[gpu][zero_run][corruption]",
                   float, double, __half, __nv_bfloat16) {
  using T = TestType;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  for (const shape s : {shape::sparse90, shape::outliers, shape::relu_noise, shape::smooth}) {
    CAPTURE(name_of(s));
    const std::vector<T> in = make_input<T>(s, 8192 + 3000, g);
    const auto p = ncclz_test::params_for<RelFixed>(in, 1e-3);
    std::vector<encoded_tile> variants;
    for (std::uint64_t t = 0; t < fmt::tile_count(in.size()); ++t) {
      const std::span<const T> values = std::span<const T>(in).subspan(t * fmt::kTileElements, fmt::tile_elements(in.size(), t));
      const bytes tile = zr::encode_tile<RelFixed, T>(values, p);
      const auto n = static_cast<std::uint32_t>(values.size());
      for (int trial = 0; trial < 1500; ++trial) {  // 1 to 3 flips, half of them in the first 96 bytes
        bytes b = tile;
        for (int f = 0, flips = 1 + static_cast<int>(g() % 3); f < flips; ++f) {
          const std::uint64_t at = (g() % 2) ? g() % std::min<std::uint64_t>(b.size(), 96) : g() % b.size();
          b[at] ^= static_cast<std::byte>(1u << (g() % 8));
        }
        variants.push_back({b, n});
      }
      for (int trial = 0; trial < 200; ++trial) {  // truncated: any length, the last 64 bytes more often
        const std::uint64_t length = (g() % 2) ? g() % tile.size() : tile.size() - 1 - g() % std::min<std::uint64_t>(tile.size(), 64);
        variants.push_back({bytes(tile.begin(), tile.begin() + static_cast<std::ptrdiff_t>(length)), n});
      }
      variants.push_back({tile, n});
    }
    const auto [ok, rejected] = require_same_verdicts<RelFixed, T>(variants, p);
    INFO("decoded " << ok << ", rejected " << rejected);
    REQUIRE(ok > 0);
    REQUIRE(rejected > 0);
  }
}

TEST_CASE("zero_run device decode: each bad field gets its status", "[gpu][zero_run][corruption]") {
  std::vector<double> v(1000, 0.0);
  for (std::size_t i = 0; i < v.size(); i += 9) v[i] = static_cast<double>(i % 7) - 3.0;
  v[0] = 3.0;
  v[10] = std::numeric_limits<double>::infinity();
  const auto p = ncclz_test::exact_codes();
  const bytes tile = zr::encode_tile<AbsFixed, double>(v, p);
  REQUIRE(ncclz_test::load<zr::zero_run_header>(tile, sizeof(fmt::tile_header)).predictor == 0);  // codes: base must be 0
  const zr::tile_layout head = zr::tile_layout_of(zr::subblock_count(1000), 0, 0, 8);
  struct edit {
    const char* what;
    decode_status expected;
    bytes data;
  };
  std::vector<edit> edits;
  auto with = [&](const char* what, decode_status expected, auto change) {
    bytes t = tile;
    change(t);
    edits.push_back({what, expected, t});
  };
  with("intact", decode_status::ok, [](bytes&) {});
  with("mode 2", decode_status::bad_tile_mode, [](bytes& t) { t[0] = std::byte{2}; });
  with("reserved", decode_status::bad_tile_header, [](bytes& t) { t[1] = std::byte{1}; });
  with("reserved0", decode_status::bad_tile_header, [](bytes& t) { t[9] = std::byte{1}; });
  with("predictor 2", decode_status::bad_tile_header, [](bytes& t) { t[8] = std::byte{2}; });
  with("base under codes", decode_status::bad_tile_header, [](bytes& t) { ncclz_test::store<std::int32_t>(t, 4, 5); });
  with("min magnitude 0", decode_status::bad_tile_header, [](bytes& t) { ncclz_test::store<std::uint32_t>(t, 12, 0); });
  with("outliers over elements", decode_status::bad_tile_header, [](bytes& t) { ncclz_test::store<std::uint16_t>(t, 2, 1001); });
  with("sub-block length past the tile", decode_status::truncated_tile,
       [&](bytes& t) { ncclz_test::store<std::uint16_t>(t, head.subblock_bits, 60000); });
  with("headers cut", decode_status::truncated_tile, [&](bytes& t) { t.resize(head.stream - 1); });
  with("form 15", decode_status::corrupt_subblock, [&](bytes& t) { t[head.stream] |= std::byte{0xF}; });
  with("a sub-block one bit short", decode_status::corrupt_subblock, [&](bytes& t) {
    ncclz_test::store<std::uint16_t>(t, head.subblock_bits, ncclz_test::load<std::uint16_t>(t, head.subblock_bits) - 1);
  });
  std::vector<encoded_tile> tiles;
  for (const edit& e : edits) tiles.push_back({e.data, 1000});
  const std::vector<decoded_tile> decoded = device_decode<double>(tiles);
  for (std::size_t i = 0; i < edits.size(); ++i) {
    CAPTURE(edits[i].what);
    REQUIRE(decoded[i].result.uniform == 1);
    REQUIRE(decoded[i].result.status == static_cast<std::uint32_t>(edits[i].expected));
  }
}

// Form 0 (Rice parameter 0) spends one bit of its runs on each value up to the sub-block's last
// nonzero, a one where the value is nonzero; the device reads those bits all at once rather than
// code by code (unary_positions), so every bit of them flipped and every length moved must fail or
// decode exactly as on the host.
TEST_CASE("zero_run device decode: form 0's runs, a bit a value, decode and fail as on the host", "[gpu][zero_run][corruption]") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  // 60% nonzeros of 1..7 either sign (runs of a zero or two: Rice 0 codes them best, and sparse
  // sub-blocks beat dense ones by about a fifth), a nonzero closing the first sub-block and the
  // ragged last one, which has 232 values.
  std::vector<double> v(1000, 0.0);
  for (auto& x : v) {
    if (g() % 5 < 3) x = ((g() & 1u) ? 1.0 : -1.0) * static_cast<double>(1 + g() % 7);
  }
  v[255] = 2.0;
  v.back() = -1.0;
  const auto p = ncclz_test::exact_codes();
  const bytes tile = zr::encode_tile<AbsFixed, double>(v, p);
  const std::uint32_t subblocks = zr::subblock_count(1000);
  const zr::tile_layout head = zr::tile_layout_of(subblocks, 0, 0, 8);
  std::vector<std::uint32_t> begins;  // each sub-block's first bit in the stream
  std::uint32_t at = 0, form0 = 0;
  for (std::uint32_t b = 0; b < subblocks; ++b) {
    begins.push_back(at);
    const std::uint32_t length = ncclz_test::load<std::uint16_t>(tile, head.subblock_bits + 2ull * b);
    const auto byte = std::to_integer<std::uint32_t>(tile[head.stream + at / 8]) | std::to_integer<std::uint32_t>(tile[head.stream + at / 8 + 1]) << 8;
    form0 += length > 0 && ((byte >> (at % 8)) & ((1u << zr::kFormBits) - 1)) == 0;
    at += length;
  }
  begins.push_back(at);
  REQUIRE(form0 == subblocks);  // what this case is about
  std::vector<encoded_tile> variants{{tile, 1000}};
  for (const std::uint32_t b : {0u, subblocks - 1}) {  // every bit of a full sub-block and of the ragged one
    for (std::uint32_t bit = begins[b]; bit < begins[b + 1]; ++bit) {
      bytes t = tile;
      t[head.stream + bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
      variants.push_back({t, 1000});
    }
  }
  for (std::uint32_t b = 0; b < subblocks; ++b) {  // each length one bit longer or shorter
    for (const int d : {-1, 1}) {
      bytes t = tile;
      const auto length = ncclz_test::load<std::uint16_t>(t, head.subblock_bits + 2ull * b);
      ncclz_test::store<std::uint16_t>(t, head.subblock_bits + 2ull * b, static_cast<std::uint16_t>(length + d));
      variants.push_back({t, 1000});
    }
  }
  const auto [ok, rejected] = require_same_verdicts<AbsFixed, double>(variants, p);
  INFO("decoded " << ok << ", rejected " << rejected);
  REQUIRE(ok > 0);
  REQUIRE(rejected > 0);
}

TEST_CASE("zero_run device coder: time per tile (printed)", "[gpu][zero_run][perf]") {
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 g(seed);
  const std::size_t tiles = 4096;
  for (const shape s : {shape::sparse90, shape::relu_noise, shape::smooth}) {
    const std::vector<float> in = make_input<float>(s, tiles * fmt::kTileElements, g);
    const auto p = ncclz_test::params_for<RelFixed>(in, 1e-3);
    std::vector<tile_job> jobs;
    std::uint64_t capacity = 0;
    for (std::size_t t = 0; t < tiles; ++t) {
      jobs.push_back({t * fmt::kTileElements, capacity, 0, fmt::kTileElements});
      capacity += zr::max_tile_bytes(fmt::kTileElements, sizeof(float));
    }
    device_array<float> d_in(in);
    device_array<tile_job> d_jobs(jobs);
    device_array<std::byte> d_out(capacity);
    device_array<std::uint64_t> d_sizes(tiles);
    cudaEvent_t start, stop;
    NCCLZ_CUDA_TRY(cudaEventCreate(&start));
    NCCLZ_CUDA_TRY(cudaEventCreate(&stop));
    auto encode = [&] {
      encode_tiles<RelFixed, float, false><<<tiles, kTileThreads>>>(d_in.ptr, d_jobs.ptr, p, d_out.ptr, d_sizes.ptr);
    };
    encode();
    sync_and_check();
    NCCLZ_CUDA_TRY(cudaEventRecord(start));
    for (int r = 0; r < 5; ++r) encode();
    NCCLZ_CUDA_TRY(cudaEventRecord(stop));
    sync_and_check();
    float encode_ms = 0;
    NCCLZ_CUDA_TRY(cudaEventElapsedTime(&encode_ms, start, stop));
    // Quantize and measure alone: what a selector pays for every tile.
    NCCLZ_CUDA_TRY(cudaEventRecord(start));
    for (int r = 0; r < 5; ++r) {
      encode_tiles<RelFixed, float, false, false><<<tiles, kTileThreads>>>(d_in.ptr, d_jobs.ptr, p, d_out.ptr, d_sizes.ptr);
    }
    NCCLZ_CUDA_TRY(cudaEventRecord(stop));
    sync_and_check();
    float measure_ms = 0;
    NCCLZ_CUDA_TRY(cudaEventElapsedTime(&measure_ms, start, stop));
    // Decode the device's own tiles (in place: their offsets are the encode's).
    const std::vector<std::uint64_t> sizes = d_sizes.download(tiles);
    std::uint64_t total = 0;
    for (std::size_t t = 0; t < tiles; ++t) {
      jobs[t].span = sizes[t];
      total += sizes[t];
    }
    device_array<tile_job> d_decode_jobs(jobs);
    device_array<std::int32_t> d_codes(in.size());
    device_array<decode_result> d_results(tiles);
    auto decode = [&] { decode_tiles<float><<<tiles, kTileThreads>>>(d_out.ptr, d_decode_jobs.ptr, d_codes.ptr, d_results.ptr); };
    decode();
    sync_and_check();
    NCCLZ_CUDA_TRY(cudaEventRecord(start));
    for (int r = 0; r < 5; ++r) decode();
    NCCLZ_CUDA_TRY(cudaEventRecord(stop));
    sync_and_check();
    float decode_ms = 0;
    NCCLZ_CUDA_TRY(cudaEventElapsedTime(&decode_ms, start, stop));
    for (const decode_result& r : d_results.download(tiles)) REQUIRE(r.status == static_cast<std::uint32_t>(decode_status::ok));
    const double gb = static_cast<double>(in.size() * sizeof(float)) / 1e9;
    std::cout << "zero_run f32 " << name_of(s) << ": " << tiles << " tiles, " << 8.0 * static_cast<double>(total) / static_cast<double>(in.size())
              << " bits/value; quantize+measure " << gb * 5 / (measure_ms / 1e3) << " GB/s, quantize+measure+write "
              << gb * 5 / (encode_ms / 1e3) << " GB/s, decode (+codes out) "
              << gb * 5 / (decode_ms / 1e3) << " GB/s\n";
    NCCLZ_CUDA_TRY(cudaEventDestroy(start));
    NCCLZ_CUDA_TRY(cudaEventDestroy(stop));
  }
}
