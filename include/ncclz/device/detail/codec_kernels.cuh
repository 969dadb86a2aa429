// The encode and decode kernels of the chunk format (ncclz/format.hpp). One thread block codes
// one tile of 8192 values; each of its 8 warps codes 32 consecutive blocks of 32 values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "ncclz/codec.hpp"
#include "ncclz/config.hpp"
#include "ncclz/device/detail/block_scales.cuh"
#include "ncclz/device/detail/decode_status.cuh"
#include "ncclz/device/detail/decoupled_lookback.cuh"
#include "ncclz/device/detail/huffman_tile.cuh"
#include "ncclz/device/detail/tile_check.cuh"
#include "ncclz/device/detail/zero_run_tile.cuh"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/device/detail/range_kernel.cuh"
#include "ncclz/format.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace kernels {

/// Vector of V consecutive values, 16 bytes.
template <class T>
struct alignas(16) vec16 {
  static constexpr int size = 16 / sizeof(T);
  T v[size];
};

/// Reads the warp's `count` values (up to 1024, from `src`) and stages their codes; returns the
/// code of the value before them (`src[-1]`, with `before_p`) where `with_before`, else 0.
/// Every load of a batch goes out before any is used, the value before the warp with them. One
/// loop choosing per vector between the aligned and the ragged read used the first vector as soon
/// as it came, and the value before the warp was read and coded ahead of the stage: two memory
/// latencies more on every warp's way (ncu of 83429c8, f16 smooth at REL 1e-4, AbsBound: 1,166 of
/// Adaptive's 6,580 stall samples there, 692 of FixedLength's 5,904; 64 MiB: Adaptive 518 -> 547
/// GB/s, FixedLength 2.3% faster over the bench's rows).
template <class Q, class T>
__device__ __forceinline__ std::int32_t stage_codes(const T* __restrict__ src, std::uint32_t count, const quant_params<T>& p,
                                                    warp_stage& stage, bool with_before, const quant_params<T>& before_p) {
  using V = vec16<T>;
  constexpr int kVec = V::size;
  constexpr int kIters = 1024 / (32 * kVec);
  // Loads in flight a thread: 128 bytes at most. All 16 of double's (256 bytes) spilled in the
  // Adaptive encoder (ptxas: 60 bytes).
  constexpr int kBatch = kIters < 8 ? kIters : 8;
  const unsigned lane = warp::lane_id();
  const bool vector_ok = count == 1024 && reinterpret_cast<std::uintptr_t>(src) % 16 == 0;
  const T before = with_before ? src[-1] : T{};
#pragma unroll
  for (int batch = 0; batch < kIters; batch += kBatch) {
    V x[kBatch];
    if (vector_ok) {
#pragma unroll
      for (int it = 0; it < kBatch; ++it) x[it] = reinterpret_cast<const V*>(src)[(batch + it) * 32 + lane];
    } else {
#pragma unroll
      for (int it = 0; it < kBatch; ++it) {
        const std::uint32_t e = ((batch + it) * 32 + lane) * kVec;
#pragma unroll
        for (int v = 0; v < kVec; ++v) x[it].v[v] = e + v < count ? src[e + v] : T{};
      }
    }
#pragma unroll
    for (int it = 0; it < kBatch; ++it) {
      const std::uint32_t e = ((batch + it) * 32 + lane) * kVec;
      // Codes go straight into the vector stores: an array of them stayed in local memory for the
      // 16-bit types (31 st.local a warp's rows, never read back).
      const auto code = [&](int v) -> std::int32_t {
        std::int32_t q = 0;
        return e + v >= count ? 0 : (Q::template quantize<T>(x[it].v[v], p, q) ? q : kOutlierCode);
      };
      std::int32_t* row = &stage[e / 32][e % 32];
      if constexpr (kVec == 2) {
        *reinterpret_cast<int2*>(row) = make_int2(code(0), code(1));
      } else {
#pragma unroll
        for (int v = 0; v < kVec; v += 4)  // 4 or 8 codes: one or two 16-byte stores
          *reinterpret_cast<int4*>(row + v) = make_int4(code(v), code(v + 1), code(v + 2), code(v + 3));
      }
    }
  }
  std::int32_t q = 0;
  return with_before && Q::template quantize<T>(before, before_p, q) ? q : 0;
}

__device__ __forceinline__ std::int32_t code_or_zero(std::int32_t c) { return c == kOutlierCode ? 0 : c; }

/// Where the encoder's codes come from: input values, quantized as they are read. A tile that
/// would not shrink is stored raw (its values), unless AllowsRaw is false: a reduction's chunk,
/// whose receiver adds codes, keeps every tile coded (as code_source does) and so is the chunk
/// code_source makes of quantize_kernel's codes, without those codes going through memory.
template <class T, bool AllowsRaw = true>
struct value_source {
  const T* values;
  static constexpr bool allows_raw = AllowsRaw;
  /// Stages the codes of `count` values from `first`; returns the code of the value before them
  /// (an outlier's: 0) with `before_p` where `with_before`, else 0.
  template <class Q>
  __device__ std::int32_t stage(std::uint64_t first, std::uint32_t count, const quant_params<T>& p, warp_stage& s,
                                bool with_before, const quant_params<T>& before_p) const {
    return stage_codes<Q>(values + first, count, p, s, with_before, before_p);
  }
  __device__ T outlier_value(std::uint64_t i) const { return values[i]; }
  __device__ T raw_value(std::uint64_t i) const { return values[i]; }
};

/// Codes already made (a collective's partial sum): kOutlierCode marks elements whose value sits
/// in `outlier_values`. Tiles are never raw, since raw tiles hold values and a partial sum must
/// stay in codes to be added exactly at the next hop.
template <class T>
struct code_source {
  const std::int32_t* codes;
  const T* outlier_values;
  static constexpr bool allows_raw = false;
  template <class Q>
  __device__ std::int32_t stage(std::uint64_t first, std::uint32_t count, const quant_params<T>&, warp_stage& s,
                                bool with_before, const quant_params<T>&) const {
    const unsigned lane = warp::lane_id();
    const std::int32_t* src = codes + first;
    const std::int32_t before = with_before ? code_or_zero(src[-1]) : 0;
    const bool vector_ok = count == 1024 && reinterpret_cast<std::uintptr_t>(src) % 16 == 0;
#pragma unroll
    for (int it = 0; it < 8; ++it) {
      const std::uint32_t e = (it * 32 + lane) * 4;
      int4 c;
      if (vector_ok) {
        c = reinterpret_cast<const int4*>(src)[it * 32 + lane];
      } else {
        c.x = e < count ? src[e] : 0;
        c.y = e + 1 < count ? src[e + 1] : 0;
        c.z = e + 2 < count ? src[e + 2] : 0;
        c.w = e + 3 < count ? src[e + 3] : 0;
      }
      *reinterpret_cast<int4*>(&s[e / 32][e % 32]) = c;
    }
    return before;
  }
  __device__ T outlier_value(std::uint64_t i) const { return outlier_values[i]; }
  __device__ T raw_value(std::uint64_t) const { return T{}; }  // never called: no raw tiles
};

/// Shared state of the encode kernel; the entropy modes' scratch only where the coder tries them.
struct encode_shared_common {
  std::uint64_t tile_begin;  ///< from the start of the chunk
  std::uint32_t warp_totals[kTileWarps];  ///< (outliers << 16) | plane words, per warp
  std::uint32_t warp_zeros[kTileWarps];   ///< (zero codes << 16) | zero deltas, per warp
  std::uint32_t warp_zeros_all[kTileWarps];  ///< warp_zeros over every element (where the sample is near half)
  std::uint32_t warp_zero_runs[kTileWarps];  ///< runs of zero deltas, per warp (where the sample is near half)
  std::uint32_t warp_checks[kTileWarps];     ///< check terms summed per warp (tile checksums)
  std::uint32_t header_check;                ///< the chunk's header check (tile checksums include it)
  alignas(16) warp_stage stage[kTileWarps];
};
// Coders with entropy modes park each thread's place in a fixed_length tile while they try those
// (kParkPlace in encode_kernel). Not in the common part: fixed_length and raw tiles' kernels would
// fit fewer blocks an SM (Raw's 5, from 6: noise 687 -> 623 GB/s).
struct encode_shared_huffman : encode_shared_common {
  huffman::encode_shared huffman;
  std::uint32_t parked_place[kTileThreads];
};
// Coders with zero_run tiles put a tile's stream together in shared memory where it fits
// (zero_run::stage_stream): the ZeroRun coder in words of its own, Adaptive in its huffman scratch,
// which a zero_run tile leaves unused once its mode is chosen.
struct encode_shared_zero_run : encode_shared_common {
  zero_run::encode_shared zero_run;
  std::uint32_t parked_place[kTileThreads];
  std::uint32_t zero_run_stream[zero_run::kStreamBufferWords];
};
struct encode_shared_adaptive : encode_shared_common {
  union {
    huffman::encode_shared huffman;
    std::uint32_t zero_run_stream[sizeof(huffman::encode_shared) / 4];
  };
  zero_run::encode_shared zero_run;
  std::uint32_t parked_place[kTileThreads];
};
static_assert(sizeof(huffman::encode_shared) / 4 >= zero_run::kStreamBufferWords, "Adaptive stages zero_run streams as ZeroRun does");
template <class Coder>
using encode_shared = std::conditional_t<
    Coder::tries_huffman && Coder::tries_zero_run, encode_shared_adaptive,
    std::conditional_t<Coder::tries_huffman, encode_shared_huffman,
                       std::conditional_t<Coder::tries_zero_run, encode_shared_zero_run, encode_shared_common>>>;

/// Registers per thread the encode kernel may use: the entropy modes need more than fixed_length.
/// Adaptive and Huffman take fixed_length's 64 (4 blocks an SM, some spills): the fourth block
/// hides more of the codebook's one-thread steps and barriers than the spills cost (64 MiB:
/// Adaptive, REL 1e-4, smooth field 644-654 -> 675-679 GB/s, noise 301-306 -> 341; Huffman, REL
/// 1e-3, tiled fields 393-397 -> 423, noise 357 -> 394-396, smooth 383-389 -> 413-417).
template <class Codec, class T>
constexpr int encode_min_blocks() {
  if constexpr (Codec::coder::tries_huffman) return sizeof(T) <= 4 ? 4 : 3;
  if constexpr (Codec::coder::tries_zero_run) return 3;
  else return sizeof(T) <= 4 ? 4 : 3;
}

/// Where a thread's block goes in a fixed_length tile, and the tile's totals, from its width, the
/// packed counts ((outliers << 16) | plane words) of its warp's earlier blocks, and every warp's
/// total in `warp_totals`.
struct block_place {
  std::uint32_t width;              ///< bits a delta (plane words) of the thread's block
  std::uint32_t words_before;       ///< plane words of the warp's earlier blocks
  std::uint32_t warp_words;         ///< plane words of the warp's blocks
  std::uint32_t words_before_warp;  ///< plane words of the tile's earlier warps
  std::uint32_t outliers_before;    ///< outliers of the tile's earlier blocks
  std::uint32_t plane_words;        ///< plane words of the tile
  std::uint32_t outliers;           ///< outliers of the tile
};
__device__ __forceinline__ block_place place_block(const std::uint32_t (&warp_totals)[kTileWarps], std::uint32_t width,
                                                   std::uint32_t packed_before, unsigned warp_index) {
  // The warps' packed totals, a lane each, summed by warp reductions: each half sums to at most a
  // tile's 8192, so neither carries into the other.
  block_place b{};
  const unsigned lane = warp::lane_id();
  const std::uint32_t warp_total = lane < kTileWarps ? warp_totals[lane] : 0u;
  const std::uint32_t tile_total = __reduce_add_sync(warp::kFullMask, warp_total);
  const std::uint32_t before_warp = __reduce_add_sync(warp::kFullMask, lane < warp_index ? warp_total : 0u);
  b.plane_words = tile_total & 0xffffu;
  b.outliers = tile_total >> 16;
  b.words_before_warp = before_warp & 0xffffu;
  const std::uint32_t outliers_before_warp = before_warp >> 16;
  b.width = width;
  b.words_before = packed_before & 0xffffu;
  b.warp_words = __shfl_sync(warp::kFullMask, b.words_before + width, 31);
  b.outliers_before = outliers_before_warp + (packed_before >> 16);
  return b;
}

/// place_block's per-thread inputs in one word: the earlier blocks' counts (under 1024 each: 10
/// bits at bits 0 and 16) and the width (bits 10-15).
__device__ __forceinline__ std::uint32_t park_place(std::uint32_t width, std::uint32_t packed_before) {
  static_assert(kBlocksPerWarp * format::kBlockElements <= 1024 && format::kMaxWidth < 64, "the counts take 10 bits, the width 6");
  return packed_before | width << 10;
}
__device__ __forceinline__ block_place place_parked(const std::uint32_t (&warp_totals)[kTileWarps], std::uint32_t parked,
                                                    unsigned warp_index) {
  return place_block(warp_totals, (parked >> 10) & 0x3Fu, parked & ~(0x3Fu << 10), warp_index);
}

/// The tile's outliers: index and value arrays at the given offsets of `dst`, and the zero padding
/// after each up to `total`. Lane l of warp w holds the outliers of block 32w + l in `bits`.
template <class T, class Source>
__device__ __forceinline__ void write_outliers(const Source& in, std::byte* dst, std::uint64_t index_at, std::uint64_t values_at,
                                               std::uint64_t total, std::uint32_t outliers, std::uint32_t before,
                                               std::uint32_t bits, std::uint32_t first, std::uint64_t tile_first) {
  if (threadIdx.x < 8) {
    const std::uint64_t index_end = index_at + 2u * outliers;
    if (index_end + threadIdx.x < values_at) dst[index_end + threadIdx.x] = std::byte{0};
    const std::uint64_t values_end = values_at + std::uint64_t{outliers} * sizeof(T);
    if (values_end + threadIdx.x < total) dst[values_end + threadIdx.x] = std::byte{0};
  }
  auto* outlier_index = reinterpret_cast<std::uint16_t*>(dst + index_at);
  auto* outlier_values = reinterpret_cast<T*>(dst + values_at);
  for (std::uint32_t at = before; bits != 0; bits &= bits - 1, ++at) {
    const std::uint32_t e = first + static_cast<std::uint32_t>(__ffs(bits) - 1);
    outlier_index[at] = static_cast<std::uint16_t>(e);
    outlier_values[at] = in.outlier_value(tile_first + e);
  }
}

/// Bit planes of this lane's block: planes[k], k < width, holds bit k of each of its 32 zig-zagged
/// deltas. By a whole warp (the lanes agree on the widest block).
__device__ __forceinline__ void write_planes(std::uint32_t* planes, const std::uint32_t (&zz)[32], std::uint32_t width) {
  const std::uint32_t max_width = __reduce_max_sync(warp::kFullMask, width);
  if (max_width <= 8) {
    // Narrow blocks (the common case): pack four deltas a word, one per byte, and gather bit k of
    // four bytes at once with a multiply (bytes' bit 0 land in bits 24..27, no carries).
    std::uint32_t packed[8];
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const std::uint32_t lo = __byte_perm(zz[4 * m], zz[4 * m + 1], 0x0040);
      const std::uint32_t hi = __byte_perm(zz[4 * m + 2], zz[4 * m + 3], 0x0040);
      packed[m] = __byte_perm(lo, hi, 0x5410);
    }
    for (std::uint32_t k = 0; k < max_width; ++k) {
      std::uint32_t plane = 0;
#pragma unroll
      for (int m = 0; m < 8; ++m) plane |= ((((packed[m] >> k) & 0x01010101u) * 0x01020408u) >> 24) << (4 * m);
      if (k < width) planes[k] = plane;
    }
  } else {
    for (std::uint32_t k = 0; k < max_width; ++k) {
      std::uint32_t plane = 0;
#pragma unroll
      for (int i = 0; i < 32; ++i) plane |= ((zz[i] >> k) & 1u) << i;
      if (k < width) planes[k] = plane;
    }
  }
}

/// Where a kernel is launched as a programmatic dependent of the stream's previous kernel (its
/// blocks may start while that one's last blocks finish), waits until that kernel has finished
/// and its writes are visible; otherwise returns at once.
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Encodes tile blockIdx.x. Tile offsets come from the decoupled look-back, which needs blocks to
/// start in index order, as the hardware launches them (CUB's single-pass scans rely on the same).
///
/// `ranks` > 1 divides the code limit (|q| < 2^30 / ranks) so that sums of `ranks` codes stay
/// codes; the collectives pass their rank count, the codec 1.
template <class Codec, class T, class Source = value_source<T>>
__global__ void __launch_bounds__(kTileThreads, encode_min_blocks<Codec, T>()) encode_kernel(Source in, std::uint64_t count,
                                                                 std::byte* __restrict__ out,
                                                                 std::uint64_t* __restrict__ out_bytes,
                                                                 const range_keys* __restrict__ range, double bound,
                                                                 std::uint32_t ranks,
                                                                 std::uint64_t* __restrict__ tile_words,
                                                                 block_scales scales = {}) {
  using Q = typename Codec::quantizer;
  wait_for_previous_grid();  // launch_encode's: nothing the kernels before wrote (range, block maxima) is read before this
  // Tiles are coded unless the coder is Raw and the source has values to store raw.
  constexpr bool kCodeTiles = Codec::coder::codes_tiles || !Source::allows_raw;
  using Coder = typename Codec::coder;
  __shared__ encode_shared<Coder> s;
  const std::uint32_t tiles = static_cast<std::uint32_t>(format::tile_count(count));
  const unsigned lane = warp::lane_id();
  const unsigned warp_index = threadIdx.x / 32;
  const std::uint32_t tile = blockIdx.x;

  quant_params<T> p = Q::template make_params<T>(bound, Q::needs_range ? load_range<T>(range) : value_range<T>::empty());
  if (ranks > 1) p.code_limit = static_cast<compute_t<T>>(floor(static_cast<double>(p.code_limit) / ranks));
  p = header_params<Q>(p, scales);  // blockwise: the largest block's; blocks use their own below
  constexpr std::uint32_t kFlags = Codec::chunk_flags;
  constexpr bool kChecked = (kFlags & format::kTileChecks) != 0;
  const std::uint64_t table = format::table_bytes(tiles);
  // Tiles follow the check table (tile checksums) and the step table (fixed_rate).
  const std::uint64_t tiles_begin = format::step_table_offset(tiles, kFlags) + step_table_bytes<Q, T>(count);
  auto* header = reinterpret_cast<format::chunk_header*>(out);
  if (threadIdx.x == 0 && (tile == 0 || kChecked)) {
    // Every field but payload_bytes, which the last tile writes (the header check leaves it out).
    // Each tile's checksum includes the header check.
    format::chunk_header h{};
    h.magic = format::kMagic;
    h.version = format::kVersion;
    h.value_type = static_cast<std::uint8_t>(dtype_of<T>());
    h.quantizer = static_cast<std::uint8_t>(Q::id);
    h.coder = static_cast<std::uint8_t>(Codec::coder::id);
    h.tile_elements = format::kTileElements;
    h.tile_count = tiles;
    h.element_count = count;
    h.bound = p.bound;
    h.error_bound = p.error_bound;
    h.step = static_cast<double>(p.step);
    h.flags = kFlags;
    const std::uint32_t header_check = format::header_check_of(h);
    s.header_check = header_check;
  }
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
    header->flags = kFlags;
    header->header_check = s.header_check;
    if (tiles == 0) {
      header->payload_bytes = 0;
      if (out_bytes) *out_bytes = sizeof(format::chunk_header);
    }
    for (std::uint64_t b = tiles * 4u; b < table; ++b) {
      out[sizeof(format::chunk_header) + b] = std::byte{0};
      if (kChecked) out[sizeof(format::chunk_header) + table + b] = std::byte{0};  // the check table's padding
    }
  }
  if (tile >= tiles) return;

  const std::uint32_t elements = format::tile_elements(count, tile);
  const std::uint32_t blocks = format::tile_blocks(elements);
  const std::uint64_t tile_first = std::uint64_t{tile} * format::kTileElements;
  const std::uint32_t warp_first = warp_index * kBlocksPerWarp * format::kBlockElements;  // within the tile
  const std::uint32_t warp_count = warp_first < elements ? min(elements - warp_first, 1024u) : 0u;
  warp_stage& stage = s.stage[warp_index];

  // The first prediction of warp w > 0 is the code of the element before it (re-quantized from
  // the input: the same function of the same value, so the same code the previous warp staged).
  // Blockwise quantizers code each warp's 1024 values (one scale block) with the block's step.
  std::int32_t before_warp = 0;
  const std::uint64_t warp_block = (tile_first + warp_first) / format::kScaleBlockElements;
  if (warp_count > 0) {
    const quant_params<T> wp = block_params_at<Q>(p, scales, warp_block);
    if (lane == 0) store_block_step<Q>(out, count, warp_block, wp, kFlags);
    if (kCodeTiles) {
      const bool with_before = warp_index > 0;
      before_warp = in.template stage<Q>(tile_first + warp_first, warp_count, wp, stage, with_before,
                                         with_before ? block_params_at<Q>(p, scales, warp_block - 1) : wp);
    }
  }
  __syncwarp();

  // Lane l codes block l of its warp: deltas from the previous element, zig-zag, width, outliers.
  const std::uint32_t block = warp_index * kBlocksPerWarp + lane;
  const std::uint32_t block_count = warp_count > lane * 32u ? min(warp_count - lane * 32u, 32u) : 0u;
  std::uint32_t zz[32];
  std::uint32_t width = 0, outlier_bits = 0, sampled_zero_codes = 0, sampled_zero_deltas = 0;
  const std::int32_t base = warp_index == 0 ? code_or_zero(stage[0][0]) : 0;  // only warp 0 uses it
  // The code before this lane's block: the first delta's prediction.
  const std::int32_t block_before = lane > 0 ? code_or_zero(stage[lane - 1][31]) : (warp_index > 0 ? before_warp : base);
  if (kCodeTiles && block_count > 0) {
    std::int32_t prev = block_before;
    std::uint32_t any = 0;
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      const int4 codes4 = *reinterpret_cast<const int4*>(&stage[lane][4 * c]);
      const std::int32_t codes[4] = {codes4.x, codes4.y, codes4.z, codes4.w};
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        const int i = 4 * c + v;
        const bool present = static_cast<std::uint32_t>(i) < block_count;
        const bool outlier = codes[v] == kOutlierCode;
        const std::int32_t q = outlier ? 0 : codes[v];
        const auto delta = static_cast<std::int32_t>(static_cast<std::uint32_t>(q) - static_cast<std::uint32_t>(prev));
        prev = q;
        zz[i] = present ? format::zigzag(delta) : 0u;
        any |= zz[i];
        if (format::in_selector_sample(static_cast<std::uint32_t>(i))) {  // blocks start at multiples of 32
          sampled_zero_codes += present && q == 0;
          sampled_zero_deltas += present && delta == 0;
        }
        outlier_bits |= (present && outlier) ? (1u << i) : 0u;
      }
    }
    width = 32u - static_cast<std::uint32_t>(__clz(any));
  }
  const std::uint32_t packed = (static_cast<std::uint32_t>(__popc(outlier_bits)) << 16) | width;
  const std::uint32_t packed_through = warp::inclusive_sum(packed);
  if (lane == 31) s.warp_totals[warp_index] = packed_through;
  // Coders that try entropy modes park what places the block in a fixed_length tile in shared
  // memory and work it out again after the trials: held in registers through them, it spilled
  // (ncu, Adaptive f32 smooth at REL 1e-4: 52 local loads and stores a warp on a fixed_length
  // tile, and their long-scoreboard stalls most of Adaptive's extra stall samples there).
  constexpr bool kParkPlace = (Coder::tries_fixed_length || !Source::allows_raw) && (Coder::tries_huffman || Coder::tries_zero_run);
  if constexpr (kParkPlace) s.parked_place[threadIdx.x] = park_place(width, packed_through - packed);
  if constexpr (Coder::tries_zero_run) {
    const std::uint32_t zeros = __reduce_add_sync(warp::kFullMask, (sampled_zero_codes << 16) | sampled_zero_deltas);
    if (lane == 0) s.warp_zeros[warp_index] = zeros;
  }
  if constexpr (Coder::tries_huffman) huffman::begin_estimate(s.huffman);
  __syncthreads();

  const block_place trial_place = place_block(s.warp_totals, width, packed_through - packed, warp_index);
  const std::uint32_t outliers = trial_place.outliers;

  // The tile's mode: the smallest of those the coder tries, every size exact, where an entropy mode
  // must save 1/32 of a fixed_length tile to replace it; raw when that is no larger (input values),
  // fixed_length when raw is not allowed (codes must stay codes). Ties go to the earlier mode.
  // zero_run is measured first, so huffman's codebook (the slow part) is built only when its
  // estimate beats both fixed_length's bar and zero_run.
  const format::fixed_tile_layout trial_layout = format::fixed_tile_layout_of(blocks, trial_place.plane_words, outliers, sizeof(T));
  const std::uint64_t raw_bytes = format::raw_tile_bytes(elements, sizeof(T));
  constexpr std::uint64_t kNone = ~std::uint64_t{0};
  tile_mode mode = tile_mode::raw;
  std::uint64_t tile_bytes = kNone;
  // What an entropy mode's tile must come under to be taken: the mode held, less 1/32 of it where
  // that is a fixed_length tile the coder weighs (format::entropy_bar).
  std::uint64_t entropy_bar = kNone;
  if (Coder::tries_fixed_length || !Source::allows_raw) {
    mode = tile_mode::fixed_length;
    tile_bytes = trial_layout.total;
    entropy_bar = Coder::tries_fixed_length ? format::entropy_bar(trial_layout.total) : trial_layout.total;
  }
  [[maybe_unused]] zero_run::plan zero_run_plan{kNone, 0, 0};
  [[maybe_unused]] bool huffman_cannot_win = false;
  if constexpr (Coder::tries_zero_run) {
    // The sample first; where it comes too close to half to tell, every element's zeros.
    const std::uint32_t sampled = warp::sum_of(s.warp_zeros);
    const format::zero_run_sample verdict = format::zero_run_verdict(sampled >> 16, sampled & 0xffffu, elements);
    bool measure_zero_run = std::is_same_v<typename Coder::strategy, ZeroRun> || verdict == format::zero_run_sample::measure;
    if (kCodeTiles && !measure_zero_run && verdict == format::zero_run_sample::count_all) {
      // Zeros, and runs of zero deltas (one at the block's start or after a nonzero starts one).
      // The deltas from the stage's codes, in a loop: unrolled over zz, this step took 8 KB of
      // code, which tiles that go on to huffman then missed in the instruction cache (ncu,
      // Adaptive bf16 smooth at REL 1e-4).
      std::uint32_t zero_codes = 0, zero_deltas = 0, delta_runs = 0;
      bool delta_was_zero = false;
      std::int32_t prev = block_before;
#pragma unroll 1
      for (int c = 0; c < 8; ++c) {
        const int4 codes4 = *reinterpret_cast<const int4*>(&stage[lane][4 * c]);
        const std::int32_t codes[4] = {codes4.x, codes4.y, codes4.z, codes4.w};
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const bool present = static_cast<std::uint32_t>(4 * c + v) < block_count;
          const std::int32_t q = code_or_zero(codes[v]);
          const bool delta_zero = present && q == prev;  // zz's delta is zero
          zero_codes += present && q == 0;
          zero_deltas += delta_zero;
          delta_runs += delta_zero && !delta_was_zero;
          delta_was_zero = delta_zero;
          prev = q;
        }
      }
      // Zero codes and zero deltas packed as the sample's counts are (in arrays of their own: no
      // barrier for the sample's readers first); the runs in a word of their own.
      const std::uint32_t zeros = __reduce_add_sync(warp::kFullMask, (zero_codes << 16) | zero_deltas);
      const std::uint32_t runs = __reduce_add_sync(warp::kFullMask, delta_runs);
      if (lane == 0) {
        s.warp_zeros_all[warp_index] = zeros;
        s.warp_zero_runs[warp_index] = runs;
      }
      __syncthreads();
      const std::uint32_t all = warp::sum_of(s.warp_zeros_all), all_runs = warp::sum_of(s.warp_zero_runs);
      measure_zero_run = format::zero_run_worth_trying(all >> 16, all & 0xffffu, all_runs, elements);
    }
    if (kCodeTiles && measure_zero_run) {
      zero_run_plan = zero_run::measure<T>(s.zero_run, s.stage, elements, outliers);
      if constexpr (Coder::tries_huffman || Coder::tries_fixed_length) {
        // The deltas again from the stage (measuring leaves it as it was): holding them through
        // measure cost 32 registers there and spilled (ncu, ptxas: 176 bytes).
        std::int32_t prev = block_before;
#pragma unroll
        for (int i = 0; i < 32; ++i) {
          const std::int32_t q = code_or_zero(stage[lane][i]);
          zz[i] = static_cast<std::uint32_t>(i) < block_count ? zero_run::zr::predict(q, prev, zero_run::zr::predictor::deltas) : 0u;
          prev = q;
        }
      }
      // Some coded deltas zero and some not (zero_deltas counts element 0's, which huffman does
      // not code): its tile costs a bit a value at least. Where zero_run is already smaller,
      // huffman would lose (ties go to huffman: strictly smaller), so its histogram and codebook
      // are skipped; the chosen bytes are the same.
      const std::uint32_t all_zero_deltas = zero_run::measured_zero_deltas(s.zero_run);
      huffman_cannot_win = all_zero_deltas >= 2 && all_zero_deltas < elements &&
                           zero_run_plan.bytes < format::huffman::least_tile_bytes(elements, outliers, sizeof(T));
    }
  }
  [[maybe_unused]] huffman::plan huffman_plan{};
  [[maybe_unused]] std::uint32_t huffman_offset = 0;
  if constexpr (Coder::tries_huffman) {
    // Adaptive estimates only where its gate's sample does not already put huffman over what it
    // must beat (format::huffman::gate_tile_bytes).
    constexpr bool kGate = Coder::tries_fixed_length;
    const std::uint64_t to_beat = min(entropy_bar, zero_run_plan.bytes);
    if (kCodeTiles && !huffman_cannot_win &&
        (!kGate || huffman::gate_tile_bytes<T>(s.huffman, zz, block_count, elements, outliers) < to_beat)) {
      const huffman::estimate e = huffman::estimate_tile<T>(s.huffman, zz, block_count, elements, outliers, kGate);
      if (e.bytes < to_beat) {
        // Past either, the tile is of no use: it must come under the bar, and zero_run wins a tie
        // only where it is strictly smaller (below).
        const std::uint64_t give_up_at = min(entropy_bar, zero_run_plan.bytes == kNone ? kNone : zero_run_plan.bytes + 1);
        huffman_plan = huffman::build_tile<T>(s.huffman, zz, block_count, e, elements, outliers, huffman_offset, give_up_at);
        if (huffman_plan.layout.total < entropy_bar) {
          mode = tile_mode::huffman;
          tile_bytes = huffman_plan.layout.total;
          entropy_bar = tile_bytes;  // zero_run must beat it outright
        }
      }
    }
  }
  if (zero_run_plan.bytes < entropy_bar) {
    mode = tile_mode::zero_run;
    tile_bytes = zero_run_plan.bytes;
  }
  if (Source::allows_raw && (!kCodeTiles || raw_bytes <= tile_bytes)) {
    mode = tile_mode::raw;
    tile_bytes = raw_bytes;
  }

  const block_place place = [&] {
    if constexpr (kParkPlace) return place_parked(s.warp_totals, s.parked_place[threadIdx.x], warp_index);
    else return trial_place;
  }();
  const std::uint32_t outliers_before = place.outliers_before;

  // Publish the size at once, stage what needs no offset, then learn the offset: the tiles
  // before have published theirs meanwhile, more often than not.
  if (threadIdx.x == 0) lookback_publish(tile_words, tile, tile_bytes);
  // Warp 0 learns the tile's offset and enters it in the table (and the header, for the last tile).
  const auto learn_offset = [&] {
    const std::uint64_t before = lookback_exclusive_prefix(tile_words, tile, tile_bytes);
    if (lane == 0) {
      const std::uint64_t offset = tiles_begin + before;  // from the end of the header
      reinterpret_cast<std::uint32_t*>(out + sizeof(format::chunk_header))[tile] = static_cast<std::uint32_t>(offset / 8);
      s.tile_begin = sizeof(format::chunk_header) + offset;
      if (tile == tiles - 1) {
        header->payload_bytes = offset + tile_bytes;
        if (out_bytes) *out_bytes = sizeof(format::chunk_header) + offset + tile_bytes;
      }
    }
  };
  // Tile checksums: the tile's check from each thread's terms of the words it wrote (`sum`), the
  // words from `read_from` on read back, and the tile's steps, into the check table.
  [[maybe_unused]] const auto seal = [&](std::uint32_t sum, const std::byte* dst, std::uint64_t read_from, std::uint64_t bytes) {
    const tile_step_words steps = step_words_of<is_blockwise_v<Q>>(out, count, kFlags, sizeof(T), tile);
    const std::uint32_t total = block_check_sum(sum, dst, read_from, bytes, steps, s.warp_checks);
    if (threadIdx.x == 0) {
      reinterpret_cast<std::uint32_t*>(out + sizeof(format::chunk_header) + table)[tile] =
          format::tile_check(total, bytes, tile, s.header_check);
    }
  };
  const std::uint32_t first = warp_first + lane * 32u;  // this thread's block, within the tile
  if constexpr (Coder::tries_zero_run) {
    // A zero_run tile on its own way to the end (the deltas in zz, which the other modes write
    // from, are dead on it: held through the stream's assembly, they spilled): its stream put
    // together in shared memory while the tiles before publish, then copied out.
    if (mode == tile_mode::zero_run) {
      const bool staged =
          zero_run::stage_stream(s.zero_run, s.stage, elements, s.zero_run_stream, sizeof(s.zero_run_stream) / 4);
      if (warp_index == 0) learn_offset();
      __syncthreads();
      std::byte* const dst = out + s.tile_begin;
      zero_run::write<T>(s.zero_run, s.stage, elements, outliers, dst, staged ? s.zero_run_stream : nullptr);
      write_outliers<T>(in, dst, zero_run_plan.outlier_index, zero_run_plan.outlier_values, zero_run_plan.bytes, outliers,
                        outliers_before, outlier_bits, first, tile_first);
      if constexpr (kChecked) seal(0u, dst, 0, zero_run_plan.bytes);  // its words, read back
      return;
    }
  }
  [[maybe_unused]] const std::uint32_t* staged_stream = nullptr;
  if constexpr (Coder::tries_huffman) {
    auto* scratch = reinterpret_cast<std::uint32_t*>(s.stage);  // free: a huffman tile's deltas are in zz
    if (mode == tile_mode::huffman && huffman::stream_words(huffman_plan) <= sizeof(s.stage) / 4) {
      huffman::emit_stream(s.huffman, huffman_plan, zz, block_count, huffman_offset, scratch);
      staged_stream = scratch;
    }
  }
  // A fixed_length tile's planes go to the warp's own stage (its codes are in zz now; a warp's
  // planes take at most 32 words a block, 1024, and the stage holds 1152): the bit transposition
  // then overlaps the look-back's wait instead of following it. For doubles warp 0 looks back
  // first and transposes after, which publishes the tile's inclusive prefix sooner: 64 MiB,
  // Adaptive smooth_f64 1e-4 844 -> 943 GB/s; on the other types that order lost 3-7%
  // (FixedLength noise f32 1e-3 729 -> 698, Adaptive f16 noise 1e-4 284 -> 264).
  // The block's planes pointer is spelled out per branch on purpose: each spelling compiles to
  // the code that was measured and GPU-tested (one shared variable changes FixedLength f16's).
  constexpr bool kWarp0PlanesAfterLookback = sizeof(T) == 8;
  const bool stage_planes = mode == tile_mode::fixed_length && warp_count > 0;
  [[maybe_unused]] std::uint32_t* const staged_block_planes = kWarp0PlanesAfterLookback ? reinterpret_cast<std::uint32_t*>(stage) + place.words_before : nullptr;
  if constexpr (kWarp0PlanesAfterLookback) {
    if (warp_index != 0 && stage_planes) write_planes(staged_block_planes, zz, place.width);
  } else {
    if (stage_planes) write_planes(reinterpret_cast<std::uint32_t*>(stage) + place.words_before, zz, place.width);
  }
  if (warp_index == 0) {
    learn_offset();
    if constexpr (kWarp0PlanesAfterLookback) {
      if (stage_planes) write_planes(staged_block_planes, zz, place.width);
    }
  }
  __syncthreads();
  std::byte* const dst = out + s.tile_begin;

  if (mode == tile_mode::raw) {
    if (threadIdx.x == 0) {
      format::tile_header th{static_cast<std::uint8_t>(tile_mode::raw), 0, 0, 0};
      *reinterpret_cast<format::tile_header*>(dst) = th;
    }
    T* values = reinterpret_cast<T*>(dst + sizeof(format::tile_header));
    constexpr std::uint32_t kValuesWord = sizeof(format::tile_header) / 4;  // the values' first word
    [[maybe_unused]] std::uint32_t sum = 0;
    if constexpr (sizeof(T) == 2) {
      // Two values a thread, the word they share: its check term from one thread.
      for (std::uint32_t e = 2 * threadIdx.x; e < elements; e += 2 * kTileThreads) {
        const T a = in.raw_value(tile_first + e);
        values[e] = a;
        std::uint64_t word = value_bits(a);
        if (e + 1 < elements) {
          const T b = in.raw_value(tile_first + e + 1);
          values[e + 1] = b;
          word |= value_bits(b) << 16;
        }
        if constexpr (kChecked) sum += format::check_term(static_cast<std::uint32_t>(word), kValuesWord + e / 2);
      }
    } else {
      for (std::uint32_t e = threadIdx.x; e < elements; e += kTileThreads) {
        const T v = in.raw_value(tile_first + e);
        values[e] = v;
        if constexpr (kChecked) sum += element_terms(v, kValuesWord, e);
      }
    }
    const std::uint64_t used = sizeof(format::tile_header) + std::uint64_t{elements} * sizeof(T);
    if (threadIdx.x < raw_bytes - used) dst[used + threadIdx.x] = std::byte{0};
    if constexpr (kChecked) {
      if (threadIdx.x == 0) {  // the header's words (all zero) and the padding's whole words after the values
        sum += format::check_term(0, 0) + format::check_term(0, 1);
        for (std::uint64_t w = (used + 3) / 4; w < raw_bytes / 4; ++w) sum += format::check_term(0, static_cast<std::uint32_t>(w));
      }
      seal(sum, dst, raw_bytes, raw_bytes);
    }
    return;
  }
  if constexpr (Coder::tries_huffman) {
    if (mode == tile_mode::huffman) {
      huffman::write_tile(s.huffman, huffman_plan, elements, outliers, base, dst, zz, block_count, huffman_offset,
                          staged_stream);
      write_outliers<T>(in, dst, huffman_plan.layout.outlier_index, huffman_plan.layout.outlier_values,
                        huffman_plan.layout.total, outliers, outliers_before, outlier_bits, first, tile_first);
      if constexpr (kChecked) seal(0u, dst, 0, huffman_plan.layout.total);  // its words, read back
      return;
    }
  }
  // Worked out again only here, where a fixed_length tile is written (held through the trials,
  // the trial's layout took registers).
  const format::fixed_tile_layout layout =
      kParkPlace ? format::fixed_tile_layout_of(blocks, place.plane_words, outliers, sizeof(T)) : trial_layout;
  if (threadIdx.x == 0) {
    format::tile_header th{static_cast<std::uint8_t>(tile_mode::fixed_length), 0, static_cast<std::uint16_t>(outliers), base};
    *reinterpret_cast<format::tile_header*>(dst) = th;
  }
  // Width bytes, with the zero padding up to the planes.
  for (std::uint32_t b = threadIdx.x; b < layout.planes - layout.widths; b += kTileThreads) {
    if (b >= blocks) dst[layout.widths + b] = std::byte{0};
  }
  if (block < blocks) dst[layout.widths + block] = static_cast<std::byte>(place.width);
  write_outliers<T>(in, dst, layout.outlier_index, layout.outlier_values, layout.total, outliers, outliers_before,
                    outlier_bits, first, tile_first);

  // The warp's planes, staged before the look-back, copied out whole words by consecutive lanes.
  [[maybe_unused]] std::uint32_t sum = 0;
  if (warp_count > 0) {
    const std::uint32_t warp_words = place.warp_words;
    auto* planes = reinterpret_cast<std::uint32_t*>(dst + layout.planes) + place.words_before_warp;
    const auto* staged_planes = reinterpret_cast<const std::uint32_t*>(stage);
    [[maybe_unused]] const std::uint32_t first_word = static_cast<std::uint32_t>(layout.planes / 4) + place.words_before_warp;
    for (std::uint32_t i = lane; i < warp_words; i += 32) {
      const std::uint32_t word = staged_planes[i];
      planes[i] = word;
      if constexpr (kChecked) sum += format::check_term(word, first_word + i);
    }
  }
  if constexpr (kChecked) {
    // The width bytes, four a word (zero past the tile's blocks): from the lane of the first.
    const std::uint32_t w1 = __shfl_down_sync(warp::kFullMask, place.width, 1);
    const std::uint32_t w2 = __shfl_down_sync(warp::kFullMask, place.width, 2);
    const std::uint32_t w3 = __shfl_down_sync(warp::kFullMask, place.width, 3);
    if (block % 4 == 0 && block < blocks) {
      sum += format::check_term(place.width | w1 << 8 | w2 << 16 | w3 << 24,
                                static_cast<std::uint32_t>(layout.widths / 4) + block / 4);
    }
    if (threadIdx.x == 0) {  // the tile header's words, and without outliers the zero words after the planes
      sum += format::check_term(static_cast<std::uint32_t>(tile_mode::fixed_length) | outliers << 16, 0) +
             format::check_term(static_cast<std::uint32_t>(base), 1);
      if (outliers == 0) {
        for (std::uint64_t w = layout.outlier_index / 4; w < layout.total / 4; ++w) sum += format::check_term(0, static_cast<std::uint32_t>(w));
      }
    }
    // The outlier list is written in its own layout: read back.
    seal(sum, dst, outliers > 0 ? layout.outlier_index : layout.total, layout.total);
  }
}

/// The header check of the chunk at `in` (version 2; format::header_check_of), by a whole warp: a
/// word a lane.
__device__ __forceinline__ std::uint32_t warp_header_check(const std::byte* in) {
  const unsigned lane = warp::lane_id();
  const std::uint32_t word = lane < format::kHeaderWords ? reinterpret_cast<const std::uint32_t*>(in)[lane] : 0u;
  const std::uint32_t term = lane < format::kHeaderWords && format::header_word_checked(lane) ? format::check_term(word, lane) : 0u;
  return format::header_check(__reduce_add_sync(warp::kFullMask, term));
}

/// Validates the chunk header against the launch; returns false (and reports) when it is bad.
/// `header_check`: what the header's check must be (warp_header_check).
template <class Codec, class T>
__device__ bool check_header(const format::chunk_header& h, std::uint64_t capacity, std::uint64_t count,
                             std::uint32_t header_check, decode_report* r) {
  using format::chunk_header;
  decode_status s = decode_status::ok;
  // Version 1 has no flags and no header check: both words are 0 there.
  const bool flags_ok = h.version == 1 ? h.flags == 0 && h.header_check == 0 : (h.flags & ~format::kKnownFlags) == 0;
  if (h.magic != format::kMagic || h.version < format::kOldestVersion || h.version > format::kVersion || !flags_ok ||
      h.tile_elements != format::kTileElements || h.tile_count != format::tile_count(h.element_count) || !(h.step > 0.0) ||
      !(h.step <= 1.7976931348623157e308) || !(h.error_bound >= 0.0) ||
      (!is_known_coder(h.coder))) {
    s = decode_status::bad_header;
  } else if (h.value_type != static_cast<std::uint8_t>(dtype_of<T>())) {
    s = decode_status::wrong_dtype;
  } else if (!(static_cast<compute_t<T>>(h.step) > compute_t<T>(0)) ||
             !(static_cast<compute_t<T>>(h.step) <= std::numeric_limits<compute_t<T>>::max())) {
    s = decode_status::bad_header;  // a step the decoder's compute type cannot hold (0, Inf after narrowing)
  } else if (h.quantizer != static_cast<std::uint8_t>(Codec::quantizer::id)) {
    s = decode_status::wrong_quantizer;
  } else if (h.element_count != count) {
    s = decode_status::wrong_count;
  } else if (h.payload_bytes > capacity - sizeof(chunk_header) || h.payload_bytes > format::kMaxPayloadBytes ||
             h.payload_bytes < format::step_table_offset(h.tile_count, h.flags) + step_table_bytes<typename Codec::quantizer, T>(count) ||
             h.payload_bytes % 8 != 0) {
    s = decode_status::truncated;
  } else if (h.version >= 2 && h.header_check != header_check) {
    s = decode_status::bad_checksum;
  }
  if (s != decode_status::ok) report(r, s, 0);
  return s == decode_status::ok;
}

struct decode_shared_common {
  std::uint32_t warp_sum[kTileWarps];
  std::uint32_t warp_checks[kTileWarps];  ///< check terms summed per warp (tile checksums)
  alignas(16) warp_stage stage[kTileWarps];
};
/// The decoder reads raw and fixed_length tiles always, the entropy modes where its coder writes
/// them (their tables would cost every other decoder occupancy).
struct decode_shared_entropy : decode_shared_common {
  union {  // one tile mode at a time
    huffman::decode_shared huffman;
    zero_run::decode_shared zero_run;
  };
};
static_assert(sizeof(zero_run::decode_shared) <= sizeof(huffman::decode_shared), "zero_run's scratch costs no occupancy");
template <class Coder>
using decode_shared =
    std::conditional_t<Coder::tries_huffman || Coder::tries_zero_run, decode_shared_entropy, decode_shared_common>;

/// Writes the warp's staged codes, dequantized, to `dst` (up to 1024 values) in coalesced order.
template <class Q, class T>
__device__ __forceinline__ void unstage_values(const warp_stage& stage, std::uint32_t count, const quant_params<T>& p,
                                               T* __restrict__ dst) {
  using V = vec16<T>;
  constexpr int kVec = V::size;
  constexpr int kIters = 1024 / (32 * kVec);
  const unsigned lane = warp::lane_id();
  const bool vector_ok = count == 1024 && reinterpret_cast<std::uintptr_t>(dst) % 16 == 0;
#pragma unroll
  for (int it = 0; it < kIters; ++it) {
    const std::uint32_t e = (it * 32 + lane) * kVec;
    const std::int32_t* row = &stage[e / 32][e % 32];
    V x;
#pragma unroll
    for (int v = 0; v < kVec; ++v) x.v[v] = Q::template dequantize<T>(row[v], p);
    if (vector_ok) {
      reinterpret_cast<V*>(dst)[it * 32 + lane] = x;
    } else {
#pragma unroll
      for (int v = 0; v < kVec; ++v)
        if (e + v < count) dst[e + v] = x.v[v];
    }
  }
}

/// Where the decoder puts a tile: values (the codec), or codes and outlier values (a collective's
/// partial sum, to be added to at the next hop; raw tiles are not accepted there).
template <class Q, class T>
struct value_sink {
  T* values;
  static constexpr bool accepts_raw = true;
  __device__ void unstage(const warp_stage& s, std::uint64_t first, std::uint32_t count, const quant_params<T>& p) const {
    unstage_values<Q>(s, count, p, values + first);
  }
  __device__ void value(std::uint64_t i, T v) const { values[i] = v; }
  __device__ void outlier(std::uint64_t i, T v) const { values[i] = v; }
};

template <class Q, class T>
struct code_sink {
  std::int32_t* codes;
  T* outlier_values;
  static constexpr bool accepts_raw = false;
  __device__ void unstage(const warp_stage& s, std::uint64_t first, std::uint32_t count, const quant_params<T>&) const {
    const unsigned lane = warp::lane_id();
    std::int32_t* dst = codes + first;
    const bool vector_ok = count == 1024 && reinterpret_cast<std::uintptr_t>(dst) % 16 == 0;
#pragma unroll
    for (int it = 0; it < 8; ++it) {
      const std::uint32_t e = (it * 32 + lane) * 4;
      const int4 c = *reinterpret_cast<const int4*>(&s[e / 32][e % 32]);
      if (vector_ok) {
        reinterpret_cast<int4*>(dst)[it * 32 + lane] = c;
      } else {
        if (e < count) dst[e] = c.x;
        if (e + 1 < count) dst[e + 1] = c.y;
        if (e + 2 < count) dst[e + 2] = c.z;
        if (e + 3 < count) dst[e + 3] = c.w;
      }
    }
  }
  __device__ void value(std::uint64_t, T) const {}  // never called: no raw tiles
  __device__ void outlier(std::uint64_t i, T v) const {
    codes[i] = kOutlierCode;
    outlier_values[i] = v;
  }
};

/// Tiles whose modes a huffman tile's block samples to tell whether huffman tiles are few.
inline constexpr std::uint32_t kModeSamples = 8;

/// Decodes tile blockIdx.x of a chunk (capacity: bytes the caller holds at `in`). Each warp
/// reads and checks the headers and the tile's widths itself (cached broadcast loads), so the
/// only block-wide barrier is the one that carries block sums from warp to warp.
template <class Codec, class T, class Sink = value_sink<typename Codec::quantizer, T>>
__global__ void __launch_bounds__(kTileThreads) decode_kernel(const std::byte* __restrict__ in, std::uint64_t capacity,
                                                              Sink out, std::uint64_t count,
                                                              decode_report* __restrict__ r) {
  using Q = typename Codec::quantizer;
  using Coder = typename Codec::coder;
  // Dynamic: with the entropy modes' scratch (huffman's staged stream) it passes the 48 KB a kernel
  // may declare statically. device::detail::launch_decode_kernel passes its size.
  extern __shared__ __align__(16) unsigned char decode_memory[];
  decode_shared<Coder>& s = *reinterpret_cast<decode_shared<Coder>*>(decode_memory);
  const unsigned lane = warp::lane_id();
  const unsigned warp_index = threadIdx.x / 32;
  const std::uint32_t tile = blockIdx.x;

  // Lane 0 of every warp checks the chunk and finds the tile; the verdict is warp-uniform.
  std::uint64_t begin = 0, end = 0, step_bits = 0;
  std::uint32_t ok = 0, mode = 0, outliers = 0, base = 0, few_huffman = 0, flags = 0, expected_check = 0;
  const std::uint32_t header_check = warp_header_check(in);
  if (lane == 0) {
    const format::chunk_header h = *reinterpret_cast<const format::chunk_header*>(in);
    ok = check_header<Codec, T>(h, capacity, count, header_check, r) && tile < h.tile_count;  // an empty chunk has no tile
    if (ok) {
      const auto* table = reinterpret_cast<const std::uint32_t*>(in + sizeof(format::chunk_header));
      const std::uint64_t payload_end = sizeof(format::chunk_header) + h.payload_bytes;
      flags = h.flags;
      begin = sizeof(format::chunk_header) + std::uint64_t{table[tile]} * 8;
      end = tile + 1 < h.tile_count ? sizeof(format::chunk_header) + std::uint64_t{table[tile + 1]} * 8 : payload_end;
      if (begin < sizeof(format::chunk_header) + format::step_table_offset(h.tile_count, flags) + step_table_bytes<Q, T>(count) ||
          begin > end || end > payload_end ||
          end - begin < sizeof(format::tile_header)) {
        report(r, decode_status::bad_tile_offset, tile);
        ok = 0;
      } else {
        const format::tile_header th = *reinterpret_cast<const format::tile_header*>(in + begin);
        mode = th.mode;
        outliers = th.outlier_count;
        base = static_cast<std::uint32_t>(th.base);
        step_bits = static_cast<std::uint64_t>(__double_as_longlong(h.step));
        if (flags & format::kTileChecks) expected_check = table[format::table_bytes(h.tile_count) / 4 + tile];
        if (Coder::tries_huffman && mode == static_cast<std::uint8_t>(tile_mode::huffman)) {
          // Whether huffman tiles are few in the chunk (huffman::decode_tile's for_latency): at most
          // one of 8 tiles spread over it; one whose offset is past the payload counts as huffman
          // (its own block reports it).
          std::uint32_t sampled_huffman = 0;
          for (std::uint32_t k = 0; k < kModeSamples; ++k) {
            const std::uint32_t j = static_cast<std::uint32_t>((2ull * k + 1) * h.tile_count / (2 * kModeSamples));
            const std::uint64_t at = sizeof(format::chunk_header) + std::uint64_t{table[j]} * 8;
            sampled_huffman += at + sizeof(format::tile_header) > payload_end ||
                               reinterpret_cast<const format::tile_header*>(in + at)->mode == mode;
          }
          few_huffman = sampled_huffman <= 1;
        }
      }
    }
  }
  ok = __shfl_sync(warp::kFullMask, ok, 0);
  if (!ok) return;  // every warp of the block takes the same exit
  begin = __shfl_sync(warp::kFullMask, begin, 0);
  end = __shfl_sync(warp::kFullMask, end, 0);
  mode = __shfl_sync(warp::kFullMask, mode, 0);
  outliers = __shfl_sync(warp::kFullMask, outliers, 0);
  base = __shfl_sync(warp::kFullMask, base, 0);
  step_bits = __shfl_sync(warp::kFullMask, step_bits, 0);
  few_huffman = __shfl_sync(warp::kFullMask, few_huffman, 0);
  flags = __shfl_sync(warp::kFullMask, flags, 0);
  expected_check = __shfl_sync(warp::kFullMask, expected_check, 0);
  const bool checked = (flags & format::kTileChecks) != 0;

  quant_params<T> p{};
  p.step = static_cast<compute_t<T>>(__longlong_as_double(static_cast<long long>(step_bits)));
  if (!load_block_step<Q, T>(in, count, tile, warp_index, p.step, flags)) {  // blockwise: the warp's block step
    if (threadIdx.x == 0) report(r, decode_status::bad_block_step, tile);
    return;  // every warp of the block takes the same exit
  }
  const std::uint32_t elements = format::tile_elements(count, tile);
  const std::uint32_t blocks = format::tile_blocks(elements);
  const std::uint64_t tile_first = std::uint64_t{tile} * format::kTileElements;
  const std::byte* const src = in + begin;
  const std::uint64_t span = end - begin;
  const tile_step_words steps = step_words_of<is_blockwise_v<Q>>(in, count, flags, sizeof(T), tile);
  // Tile checksums: whether the tile's words from `read_from` on, with `sum` (this thread's terms
  // of the words before), and its steps give the checksum in the check table. By the whole block.
  const auto tile_intact = [&](std::uint32_t sum, std::uint64_t read_from, std::uint64_t bytes) {
    return format::tile_check(block_check_sum(sum, src, read_from, bytes, steps, s.warp_checks), span, tile, header_check) ==
           expected_check;
  };
  // Raw and entropy-coded tiles are verified whole before they are decoded (fixed_length tiles as
  // they are read, below).
  if (checked && mode != static_cast<std::uint8_t>(tile_mode::fixed_length) && !tile_intact(0u, 0, span)) {
    if (threadIdx.x == 0) report(r, decode_status::bad_checksum, tile);
    return;
  }

  if (mode == static_cast<std::uint8_t>(tile_mode::raw) && Sink::accepts_raw) {
    if (format::raw_tile_bytes(elements, sizeof(T)) > span) {
      if (threadIdx.x == 0) report(r, decode_status::truncated_tile, tile);
      return;
    }
    const T* values = reinterpret_cast<const T*>(src + sizeof(format::tile_header));
    for (std::uint32_t e = threadIdx.x; e < elements; e += kTileThreads) out.value(tile_first + e, values[e]);
    return;
  }
  if (outliers > elements) {
    if (threadIdx.x == 0) report(r, decode_status::truncated_tile, tile);
    return;
  }

  const std::uint32_t block = warp_index * kBlocksPerWarp + lane;
  const std::uint32_t warp_first = warp_index * kBlocksPerWarp * format::kBlockElements;
  const std::uint32_t warp_count = warp_first < elements ? min(elements - warp_first, 1024u) : 0u;
  const std::uint32_t block_count = warp_count > lane * 32u ? min(warp_count - lane * 32u, 32u) : 0u;
  warp_stage& stage = s.stage[warp_index];
  std::uint32_t running[32];  // zig-zagged deltas, then their running sums within the block
#pragma unroll
  for (int i = 0; i < 32; ++i) running[i] = 0;
  std::uint64_t outlier_index_at = 0, outlier_values_at = 0;
  bool values_are_codes = false;  // zero_run's codes predictor; otherwise deltas from the tile's base
  // A checked fixed_length tile: this thread's check terms of the words it reads, and the part of
  // the tile (the outlier list) the block reads for the checksum alone.
  bool verify_fixed = false;
  std::uint32_t check_sum = 0;
  std::uint64_t check_from = 0, check_to = 0;

  if (mode == static_cast<std::uint8_t>(tile_mode::fixed_length)) {
    if (sizeof(format::tile_header) + blocks > span) {
      if (threadIdx.x == 0) report(r, decode_status::truncated_tile, tile);
      return;
    }
    // Every warp sums all widths (lane j: blocks 8j..8j+7) for the plane offsets of earlier warps
    // and the tile's layout; lane l then decodes block l of its warp.
    const std::byte* const widths = src + sizeof(format::tile_header);
    std::uint32_t group_words = 0, bad = 0;
#pragma unroll
    for (int b = 0; b < 8; ++b) {
      const std::uint32_t blk = lane * 8 + b;
      const std::uint32_t w = blk < blocks ? static_cast<std::uint32_t>(widths[blk]) : 0u;
      group_words += w;
      bad |= w > format::kMaxWidth;
    }
    if (__any_sync(warp::kFullMask, bad)) {
      if (threadIdx.x == 0) report(r, decode_status::bad_width, tile);
      return;
    }
    const std::uint32_t plane_words = __reduce_add_sync(warp::kFullMask, group_words);
    const std::uint32_t words_before_warp = __reduce_add_sync(warp::kFullMask, lane < warp_index * 4 ? group_words : 0u);
    const format::fixed_tile_layout layout = format::fixed_tile_layout_of(blocks, plane_words, outliers, sizeof(T));
    if (layout.total > span) {
      if (threadIdx.x == 0) report(r, decode_status::truncated_tile, tile);
      return;
    }
    outlier_index_at = layout.outlier_index;
    outlier_values_at = layout.outlier_values;
    const std::uint32_t width = block < blocks ? static_cast<std::uint32_t>(widths[block]) : 0u;
    const std::uint32_t words_through = warp::inclusive_sum(width);
    verify_fixed = checked;
    if (warp_count > 0) {
      const std::uint32_t first_plane = words_before_warp + (words_through - width);
      const auto* planes = reinterpret_cast<const std::uint32_t*>(src + layout.planes) + first_plane;
      const std::uint32_t max_width = __reduce_max_sync(warp::kFullMask, width);
      const std::uint32_t first_word = static_cast<std::uint32_t>(layout.planes / 4) + first_plane;
      for (std::uint32_t k = 0; k < max_width; ++k) {
        const std::uint32_t plane = k < width ? planes[k] : 0u;
        if (verify_fixed && k < width) check_sum += format::check_term(plane, first_word + k);
#pragma unroll
        for (int i = 0; i < 32; ++i) running[i] |= ((plane >> i) & 1u) << k;
      }
    }
    if (verify_fixed && warp_index == 0) {
      // The tile header's and the widths' words (with their padding), by warp 0.
      const auto* words = reinterpret_cast<const std::uint32_t*>(src);
      for (std::uint32_t w = lane; w < layout.planes / 4; w += 32) check_sum += format::check_term(words[w], w);
    }
    check_from = layout.outlier_index;
    check_to = layout.total;
  } else if (Coder::tries_huffman && mode == static_cast<std::uint8_t>(tile_mode::huffman)) {
    if constexpr (Coder::tries_huffman) {
      const decode_status st =
          huffman::decode_tile<T>(s.huffman, src, span, elements, outliers, s.stage, few_huffman != 0, outlier_index_at,
                                  outlier_values_at);
      if (st != decode_status::ok) {
        if (threadIdx.x == 0) report(r, st, tile);
        return;
      }
      load_subblock_rows(s.stage, block_count, running);
    }
  } else if (Coder::tries_zero_run && mode == static_cast<std::uint8_t>(tile_mode::zero_run)) {
    if constexpr (Coder::tries_zero_run) {
      bool deltas = true;
      const decode_status st =
          zero_run::decode<T>(s.zero_run, src, span, elements, s.stage, deltas, outlier_index_at, outlier_values_at);
      if (st != decode_status::ok) {
        if (threadIdx.x == 0) report(r, st, tile);
        return;
      }
      load_subblock_rows(s.stage, block_count, running);
      values_are_codes = !deltas;  // the codes predictor: the values are the codes, zig-zagged
    }
  } else {
    if (threadIdx.x == 0) report(r, decode_status::bad_tile_mode, tile);
    return;
  }

  if (verify_fixed) {  // the rest of the tile's terms (its outlier list) and its steps, summed per warp
    const auto* words = reinterpret_cast<const std::uint32_t*>(src);
    for (std::uint64_t w = check_from / 4 + threadIdx.x; w < check_to / 4; w += kTileThreads) {
      check_sum += format::check_term(words[w], static_cast<std::uint32_t>(w));
    }
    if (threadIdx.x < steps.count) check_sum += format::check_term(steps.words[threadIdx.x], format::kStepCheckPosition + threadIdx.x);
    check_sum = __reduce_add_sync(warp::kFullMask, check_sum);
    if (lane == 0) s.warp_checks[warp_index] = check_sum;
  }

  // Codes: the values themselves (zero_run's codes predictor), or the tile base + the deltas of all
  // earlier blocks + the running sum within the block.
  std::uint32_t before = 0;
  if (values_are_codes) {
#pragma unroll
    for (int i = 0; i < 32; ++i) running[i] = static_cast<std::uint32_t>(format::unzigzag(running[i]));
    __syncthreads();  // every thread has read its block from the sub-block rows before any is overwritten
  } else {
    if (warp_count > 0) {
      std::uint32_t sum = 0;
#pragma unroll
      for (int i = 0; i < 32; ++i) {
        sum += static_cast<std::uint32_t>(format::unzigzag(running[i]));
        running[i] = sum;
      }
    }
    const std::uint32_t block_sum = running[31];
    const std::uint32_t sum_through = warp::inclusive_sum(block_sum);
    if (lane == 31) s.warp_sum[warp_index] = sum_through;
    __syncthreads();  // also: every thread has read its staged deltas before any row is overwritten
    // A checked fixed_length tile: its checksum, before any of its values leaves the block.
    if (verify_fixed && format::tile_check(warp::sum_of(s.warp_checks), span, tile, header_check) != expected_check) {
      if (threadIdx.x == 0) report(r, decode_status::bad_checksum, tile);
      return;  // every thread of the block takes the same exit
    }
    before = base + sum_through - block_sum;
#pragma unroll
    for (int w = 0; w < kTileWarps; ++w) before += w < static_cast<int>(warp_index) ? s.warp_sum[w] : 0u;
  }
  if (warp_count > 0) {
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      *reinterpret_cast<int4*>(&stage[lane][4 * c]) =
          make_int4(static_cast<std::int32_t>(before + running[4 * c]), static_cast<std::int32_t>(before + running[4 * c + 1]),
                    static_cast<std::int32_t>(before + running[4 * c + 2]), static_cast<std::int32_t>(before + running[4 * c + 3]));
    }
  }
  __syncwarp();
  if (warp_count > 0) out.unstage(stage, tile_first + warp_first, warp_count, p);
  if (outliers == 0) return;
  __syncthreads();  // the outliers below overwrite values the warps above wrote
  const auto* outlier_index = reinterpret_cast<const std::uint16_t*>(src + outlier_index_at);
  const auto* outlier_values = reinterpret_cast<const T*>(src + outlier_values_at);
  for (std::uint32_t o = threadIdx.x; o < outliers; o += kTileThreads) {
    const std::uint32_t e = outlier_index[o];
    if (e >= elements) {
      report(r, decode_status::bad_outlier_index, tile);
      continue;
    }
    out.outlier(tile_first + e, outlier_values[o]);
  }
}

}  // namespace kernels
NCCLZ_END_KERNEL_NAMESPACE
