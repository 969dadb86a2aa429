// The encode and decode kernels of the chunk format (ncclz/format.hpp). One thread block codes
// one tile of 8192 values; each of its 8 warps codes 32 consecutive blocks of 32 values.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclz/codec.hpp"
#include "ncclz/detail/config.hpp"
#include "ncclz/device/detail/decoupled_lookback.cuh"
#include "ncclz/device/detail/range_kernel.cuh"
#include "ncclz/format.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace kernels {

inline constexpr int kTileThreads = 256;
inline constexpr int kTileWarps = kTileThreads / 32;
inline constexpr int kBlocksPerWarp = format::kTileBlocks / kTileWarps;  // 32
static_assert(kBlocksPerWarp == 32, "a warp's block widths are held one per lane");

/// Why a decode stopped; the first error of a launch is kept (with its tile) in device memory.
enum class decode_status : std::uint32_t {
  ok = 0,
  bad_header,
  wrong_dtype,
  wrong_quantizer,
  wrong_count,
  truncated,
  bad_tile_offset,
  truncated_tile,
  bad_tile_mode,
  bad_width,
  bad_outlier_index,
};

struct decode_report {
  std::uint32_t status;  ///< decode_status
  std::uint32_t tile;
};

__device__ inline void report(decode_report* r, decode_status s, std::uint32_t tile) {
  if (atomicCAS(&r->status, 0u, static_cast<std::uint32_t>(s)) == 0u) r->tile = tile;
}

template <class T>
__device__ __forceinline__ T load_value(const std::byte* p) {
  return *reinterpret_cast<const T*>(p);
}

/// Shared state of the encode kernel.
struct encode_shared {
  std::uint32_t tile;
  std::uint32_t mode;
  std::uint64_t tile_begin;  ///< from the start of the chunk
  std::int32_t base;
  std::uint32_t warp_plane_words[kTileWarps];
  std::uint32_t warp_outliers[kTileWarps];
  std::uint32_t outlier_mask[format::kTileBlocks];
  std::uint8_t width[format::kTileBlocks];
};

template <class Codec, class T>
__global__ void __launch_bounds__(kTileThreads) encode_kernel(const T* __restrict__ in, std::uint64_t count,
                                                              std::byte* __restrict__ out,
                                                              std::uint64_t* __restrict__ out_bytes,
                                                              const range_keys* __restrict__ range, double bound,
                                                              std::uint64_t* __restrict__ tile_words,
                                                              std::uint32_t* __restrict__ tile_ticket) {
  using Q = typename Codec::quantizer;
  __shared__ encode_shared s;
  const std::uint32_t tiles = static_cast<std::uint32_t>(format::tile_count(count));
  const unsigned lane = warp::lane_id();
  const unsigned warp_index = threadIdx.x / 32;

  if (threadIdx.x == 0) s.tile = atomicAdd(tile_ticket, 1u);
  __syncthreads();
  const std::uint32_t tile = s.tile;

  const quant_params<T> p = Q::template make_params<T>(bound, Q::needs_range ? load_range<T>(range) : value_range<T>::empty());
  const std::uint64_t table = format::table_bytes(tiles);
  auto* header = reinterpret_cast<format::chunk_header*>(out);
  if (tile == 0 && threadIdx.x == 0) {
    header->magic = format::kMagic;
    header->version = format::kVersion;
    header->value_type = static_cast<std::uint8_t>(dtype_of<T>());
    header->quantizer = static_cast<std::uint8_t>(Q::id);
    header->coder = static_cast<std::uint8_t>(Codec::coder::id);
    header->tile_elements = format::kTileElements;
    header->tile_count = tiles;
    header->element_count = count;
    header->bound = p.bound;
    header->error_bound = p.error_bound;
    header->step = static_cast<double>(p.step);
    header->reserved = 0;
    if (tiles == 0) {
      header->payload_bytes = 0;
      if (out_bytes) *out_bytes = sizeof(format::chunk_header);
    }
    for (std::uint64_t b = tiles * 4u; b < table; ++b) out[sizeof(format::chunk_header) + b] = std::byte{0};
  }
  if (tile >= tiles) return;

  const std::uint32_t elements = format::tile_elements(count, tile);
  const std::uint32_t blocks = format::tile_blocks(elements);
  const std::uint64_t tile_first = std::uint64_t{tile} * format::kTileElements;
  const std::uint32_t warp_first = warp_index * kBlocksPerWarp * format::kBlockElements;  // within the tile

  // Pass over the input: codes, deltas from the previous element, zig-zag, widths, outliers.
  std::uint32_t zz[kBlocksPerWarp];
  std::uint32_t warp_plane_words = 0, warp_outliers = 0;
  if (Codec::coder::codes_tiles && warp_first < elements) {
    T x[kBlocksPerWarp];
#pragma unroll
    for (int j = 0; j < kBlocksPerWarp; ++j) {
      const std::uint32_t e = warp_first + j * 32 + lane;
      x[j] = e < elements ? in[tile_first + e] : T(0);
    }
    // The element before this warp's first one: predicted from itself in warp 0 (delta 0; the
    // tile header's base carries it), from the previous warp's last element otherwise.
    std::int32_t prev = 0;
    if (warp_index > 0) {
      std::int32_t q;
      prev = Q::template quantize<T>(in[tile_first + warp_first - 1], p, q) ? q : 0;
    }
#pragma unroll
    for (int j = 0; j < kBlocksPerWarp; ++j) {
      const std::uint32_t e = warp_first + j * 32 + lane;
      std::int32_t q = 0;
      const bool present = e < elements;
      const bool coded = present && Q::template quantize<T>(x[j], p, q);
      if (!coded) q = 0;
      const unsigned outliers = __ballot_sync(warp::kFullMask, present && !coded);
      if (j == 0 && warp_index == 0) {
        const std::int32_t first = __shfl_sync(warp::kFullMask, q, 0);
        prev = first;
        if (lane == 0) s.base = first;
      }
      std::int32_t before = __shfl_up_sync(warp::kFullMask, q, 1);
      if (lane == 0) before = prev;
      prev = __shfl_sync(warp::kFullMask, q, 31);
      const auto delta = static_cast<std::int32_t>(static_cast<std::uint32_t>(q) - static_cast<std::uint32_t>(before));
      zz[j] = present ? format::zigzag(delta) : 0u;
      const std::uint32_t width = warp::block_width(zz[j]);
      warp_plane_words += width;
      warp_outliers += __popc(outliers);
      if (lane == 0) {
        s.width[warp_index * kBlocksPerWarp + j] = static_cast<std::uint8_t>(width);
        s.outlier_mask[warp_index * kBlocksPerWarp + j] = outliers;
      }
    }
  }
  if (lane == 0) {
    s.warp_plane_words[warp_index] = warp_plane_words;
    s.warp_outliers[warp_index] = warp_outliers;
  }
  __syncthreads();

  // Tile size, mode and offset (warp 0), then every thread writes its part.
  std::uint64_t plane_words = 0;
  std::uint32_t outliers = 0, plane_words_before = 0, outliers_before = 0;
#pragma unroll
  for (int w = 0; w < kTileWarps; ++w) {
    if (w == static_cast<int>(warp_index)) {
      plane_words_before = static_cast<std::uint32_t>(plane_words);
      outliers_before = outliers;
    }
    plane_words += s.warp_plane_words[w];
    outliers += s.warp_outliers[w];
  }
  const format::fixed_tile_layout layout = format::fixed_tile_layout_of(blocks, plane_words, outliers, sizeof(T));
  const std::uint64_t raw_bytes = format::raw_tile_bytes(elements, sizeof(T));
  const bool raw = !Codec::coder::codes_tiles || layout.total >= raw_bytes;
  const std::uint64_t tile_bytes = raw ? raw_bytes : layout.total;
  if (warp_index == 0) {
    const std::uint64_t before = lookback_exclusive_prefix(tile_words, tile, tile_bytes);
    if (lane == 0) {
      const std::uint64_t offset = table + before;  // from the end of the header
      reinterpret_cast<std::uint32_t*>(out + sizeof(format::chunk_header))[tile] = static_cast<std::uint32_t>(offset / 8);
      s.tile_begin = sizeof(format::chunk_header) + offset;
      if (tile == tiles - 1) {
        header->payload_bytes = offset + tile_bytes;
        if (out_bytes) *out_bytes = sizeof(format::chunk_header) + offset + tile_bytes;
      }
    }
  }
  __syncthreads();
  std::byte* const dst = out + s.tile_begin;

  if (raw) {
    if (threadIdx.x == 0) {
      format::tile_header th{static_cast<std::uint8_t>(tile_mode::raw), 0, 0, 0};
      *reinterpret_cast<format::tile_header*>(dst) = th;
    }
    T* values = reinterpret_cast<T*>(dst + sizeof(format::tile_header));
    for (std::uint32_t e = threadIdx.x; e < elements; e += kTileThreads) values[e] = in[tile_first + e];
    const std::uint64_t used = sizeof(format::tile_header) + std::uint64_t{elements} * sizeof(T);
    if (threadIdx.x < raw_bytes - used) dst[used + threadIdx.x] = std::byte{0};
    return;
  }

  if (threadIdx.x == 0) {
    format::tile_header th{static_cast<std::uint8_t>(tile_mode::fixed_length), 0, static_cast<std::uint16_t>(outliers),
                           s.base};
    *reinterpret_cast<format::tile_header*>(dst) = th;
  }
  // Width bytes, with the zero padding up to the planes.
  for (std::uint32_t b = threadIdx.x; b < layout.planes - layout.widths; b += kTileThreads) {
    dst[layout.widths + b] = b < blocks ? std::byte{s.width[b]} : std::byte{0};
  }
  // Zero padding after the outlier indices and at the end of the tile.
  if (threadIdx.x < 8) {
    const std::uint64_t index_end = layout.outlier_index + 2u * outliers;
    if (index_end + threadIdx.x < layout.outlier_values) dst[index_end + threadIdx.x] = std::byte{0};
    const std::uint64_t values_end = layout.outlier_values + std::uint64_t{outliers} * sizeof(T);
    if (values_end + threadIdx.x < layout.total) dst[values_end + threadIdx.x] = std::byte{0};
  }
  if (warp_first >= elements) return;

  auto* planes = reinterpret_cast<std::uint32_t*>(dst + layout.planes) + plane_words_before;
  auto* outlier_index = reinterpret_cast<std::uint16_t*>(dst + layout.outlier_index) + outliers_before;
  auto* outlier_values = reinterpret_cast<T*>(dst + layout.outlier_values) + outliers_before;
#pragma unroll
  for (int j = 0; j < kBlocksPerWarp; ++j) {
    const std::uint32_t width = s.width[warp_index * kBlocksPerWarp + j];
    const std::uint32_t mine = warp::transpose_to_planes(zz[j], width);
    if (lane < width) planes[lane] = mine;
    planes += width;
    const unsigned mask = s.outlier_mask[warp_index * kBlocksPerWarp + j];
    if (mask != 0) {
      if ((mask >> lane) & 1u) {
        const unsigned rank = __popc(mask & ((1u << lane) - 1u));
        const std::uint32_t e = warp_first + j * 32 + lane;
        outlier_index[rank] = static_cast<std::uint16_t>(e);
        outlier_values[rank] = in[tile_first + e];
      }
      const unsigned n = __popc(mask);
      outlier_index += n;
      outlier_values += n;
    }
  }
}

/// Validates the chunk header against the launch; returns false (and reports) when it is bad.
template <class Codec, class T>
__device__ bool check_header(const format::chunk_header& h, std::uint64_t capacity, std::uint64_t count,
                             decode_report* r) {
  using format::chunk_header;
  decode_status s = decode_status::ok;
  if (h.magic != format::kMagic || h.version != format::kVersion || h.tile_elements != format::kTileElements ||
      h.tile_count != format::tile_count(h.element_count) || h.reserved != 0 || !(h.step > 0.0) ||
      !(h.step <= 1.7976931348623157e308) || !(h.error_bound >= 0.0) ||
      (h.coder != static_cast<std::uint8_t>(coder_id::raw) && h.coder != static_cast<std::uint8_t>(coder_id::fixed_length))) {
    s = decode_status::bad_header;
  } else if (h.value_type != static_cast<std::uint8_t>(dtype_of<T>())) {
    s = decode_status::wrong_dtype;
  } else if (h.quantizer != static_cast<std::uint8_t>(Codec::quantizer::id)) {
    s = decode_status::wrong_quantizer;
  } else if (h.element_count != count) {
    s = decode_status::wrong_count;
  } else if (h.payload_bytes > capacity - sizeof(chunk_header) || h.payload_bytes > format::kMaxPayloadBytes ||
             h.payload_bytes < format::table_bytes(h.tile_count) || h.payload_bytes % 8 != 0) {
    s = decode_status::truncated;
  }
  if (s != decode_status::ok) report(r, s, 0);
  return s == decode_status::ok;
}

struct decode_shared {
  format::chunk_header header;
  std::uint64_t begin, end;  ///< the tile's bytes, from the start of the chunk
  format::tile_header tile;
  std::uint32_t ok;
  std::uint32_t warp_plane_words[kTileWarps];
  std::uint32_t warp_sum[kTileWarps];
};

/// Decodes tile blockIdx.x of a chunk (capacity: bytes the caller holds at `in`).
template <class Codec, class T>
__global__ void __launch_bounds__(kTileThreads) decode_kernel(const std::byte* __restrict__ in, std::uint64_t capacity,
                                                              T* __restrict__ out, std::uint64_t count,
                                                              decode_report* __restrict__ r) {
  using Q = typename Codec::quantizer;
  __shared__ decode_shared s;
  const unsigned lane = warp::lane_id();
  const unsigned warp_index = threadIdx.x / 32;
  const std::uint32_t tile = blockIdx.x;

  if (threadIdx.x == 0) {
    s.header = *reinterpret_cast<const format::chunk_header*>(in);
    s.ok = check_header<Codec, T>(s.header, capacity, count, r);
    if (s.ok && tile >= s.header.tile_count) s.ok = 0;  // an empty chunk: the header was all there was to check
    if (s.ok) {
      const auto* table = reinterpret_cast<const std::uint32_t*>(in + sizeof(format::chunk_header));
      const std::uint64_t payload_end = sizeof(format::chunk_header) + s.header.payload_bytes;
      s.begin = sizeof(format::chunk_header) + std::uint64_t{table[tile]} * 8;
      s.end = tile + 1 < s.header.tile_count ? sizeof(format::chunk_header) + std::uint64_t{table[tile + 1]} * 8 : payload_end;
      if (s.begin < sizeof(format::chunk_header) + format::table_bytes(s.header.tile_count) || s.begin > s.end ||
          s.end > payload_end || s.end - s.begin < sizeof(format::tile_header)) {
        report(r, decode_status::bad_tile_offset, tile);
        s.ok = 0;
      } else {
        s.tile = *reinterpret_cast<const format::tile_header*>(in + s.begin);
      }
    }
  }
  __syncthreads();
  if (!s.ok) return;

  quant_params<T> p{};
  p.step = static_cast<T>(s.header.step);
  const std::uint32_t elements = format::tile_elements(count, tile);
  const std::uint32_t blocks = format::tile_blocks(elements);
  const std::uint64_t tile_first = std::uint64_t{tile} * format::kTileElements;
  const std::byte* const src = in + s.begin;
  const std::uint64_t span = s.end - s.begin;

  if (s.tile.mode == static_cast<std::uint8_t>(tile_mode::raw)) {
    if (format::raw_tile_bytes(elements, sizeof(T)) > span) {
      if (threadIdx.x == 0) report(r, decode_status::truncated_tile, tile);
      return;
    }
    const T* values = reinterpret_cast<const T*>(src + sizeof(format::tile_header));
    for (std::uint32_t e = threadIdx.x; e < elements; e += kTileThreads) out[tile_first + e] = values[e];
    return;
  }
  if (s.tile.mode != static_cast<std::uint8_t>(tile_mode::fixed_length)) {
    if (threadIdx.x == 0) report(r, decode_status::bad_tile_mode, tile);
    return;
  }
  if (sizeof(format::tile_header) + blocks > span) {
    if (threadIdx.x == 0) report(r, decode_status::truncated_tile, tile);
    return;
  }

  // Lane j of warp w holds the width of block 32*w + j.
  const std::uint32_t block = warp_index * kBlocksPerWarp + lane;
  const std::uint32_t width = block < blocks ? static_cast<std::uint32_t>(src[sizeof(format::tile_header) + block]) : 0u;
  const bool bad_width = __syncthreads_or(width > format::kMaxWidth);
  if (bad_width) {
    if (threadIdx.x == 0) report(r, decode_status::bad_width, tile);
    return;
  }
  const std::uint32_t words_through = warp::inclusive_sum(width);
  if (lane == 31) s.warp_plane_words[warp_index] = words_through;
  __syncthreads();
  std::uint64_t plane_words = 0;
  std::uint32_t words_before_warp = 0;
#pragma unroll
  for (int w = 0; w < kTileWarps; ++w) {
    if (w == static_cast<int>(warp_index)) words_before_warp = static_cast<std::uint32_t>(plane_words);
    plane_words += s.warp_plane_words[w];
  }
  const std::uint32_t outliers = s.tile.outlier_count;
  const format::fixed_tile_layout layout = format::fixed_tile_layout_of(blocks, plane_words, outliers, sizeof(T));
  if (layout.total > span || outliers > elements) {
    if (threadIdx.x == 0) report(r, decode_status::truncated_tile, tile);
    return;
  }

  const std::uint32_t warp_first = warp_index * kBlocksPerWarp * format::kBlockElements;
  std::uint32_t value[kBlocksPerWarp];
  std::uint32_t carry = 0;
  if (warp_first < elements) {
    const auto* planes = reinterpret_cast<const std::uint32_t*>(src + layout.planes) + words_before_warp;
    const std::uint32_t first_word = words_through - width;  // this lane's block, within the warp
    std::uint32_t plane[kBlocksPerWarp];
#pragma unroll
    for (int j = 0; j < kBlocksPerWarp; ++j) {
      const std::uint32_t w = __shfl_sync(warp::kFullMask, width, j);
      const std::uint32_t at = __shfl_sync(warp::kFullMask, first_word, j);
      plane[j] = lane < w ? planes[at + lane] : 0u;
    }
#pragma unroll
    for (int j = 0; j < kBlocksPerWarp; ++j) {
      const std::uint32_t w = __shfl_sync(warp::kFullMask, width, j);
      const std::uint32_t zz = warp::transpose_from_planes(plane[j], w);
      value[j] = carry + warp::inclusive_sum(static_cast<std::uint32_t>(format::unzigzag(zz)));
      carry = __shfl_sync(warp::kFullMask, value[j], 31);
    }
  }
  if (lane == 0) s.warp_sum[warp_index] = carry;
  __syncthreads();
  if (warp_first < elements) {
    std::uint32_t before = static_cast<std::uint32_t>(s.tile.base);
#pragma unroll
    for (int w = 0; w < kTileWarps; ++w) before += w < static_cast<int>(warp_index) ? s.warp_sum[w] : 0u;
#pragma unroll
    for (int j = 0; j < kBlocksPerWarp; ++j) {
      const std::uint32_t e = warp_first + j * 32 + lane;
      if (e < elements) out[tile_first + e] = Q::template dequantize<T>(static_cast<std::int32_t>(before + value[j]), p);
    }
  }
  if (outliers == 0) return;
  __syncthreads();  // the outliers below overwrite what the loop above wrote
  const auto* outlier_index = reinterpret_cast<const std::uint16_t*>(src + layout.outlier_index);
  const auto* outlier_values = reinterpret_cast<const T*>(src + layout.outlier_values);
  for (std::uint32_t o = threadIdx.x; o < outliers; o += kTileThreads) {
    const std::uint32_t e = outlier_index[o];
    if (e >= elements) {
      report(r, decode_status::bad_outlier_index, tile);
      continue;
    }
    out[tile_first + e] = outlier_values[o];
  }
}

}  // namespace kernels
NCCLZ_END_KERNEL_NAMESPACE
