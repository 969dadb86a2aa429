// The decode kernel of the chunk format (ncclz/format.hpp): one thread block decodes one tile.
// The entropy modes' own steps are in tile/ (huffman, zero_run); the encoder is encode_kernel.cuh.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ncclz/codec.hpp"
#include "ncclz/config.hpp"
#include "ncclz/device/detail/block_scales.cuh"
#include "ncclz/device/detail/decode_status.cuh"
#include "ncclz/device/detail/tile/huffman/decode.cuh"
#include "ncclz/device/detail/tile/zero_run/decode.cuh"
#include "ncclz/device/detail/tile_check.cuh"
#include "ncclz/device/detail/tile_io.cuh"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/format.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail {

/// The header check of the chunk at `in` (version 2), by a whole warp.
__device__ __forceinline__ std::uint32_t warp_header_check(const std::byte* in) {
  const unsigned lane = warp::lane_id();
  return warp_header_check_of(lane < format::kHeaderWords ? reinterpret_cast<const std::uint32_t*>(in)[lane] : 0u);
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
    tile::huffman::decode_shared huffman;
    tile::zero_run::decode_shared zero_run;
  };
};
static_assert(sizeof(tile::zero_run::decode_shared) <= sizeof(tile::huffman::decode_shared), "zero_run's scratch costs no occupancy");
template <class Coder>
using decode_shared =
    std::conditional_t<Coder::tries_huffman || Coder::tries_zero_run, decode_shared_entropy, decode_shared_common>;

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
          // Whether huffman tiles are few in the chunk (tile::huffman::decode_tile's for_latency): at most
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
  bool values_are_codes = false;  // the codes predictor (zero_run, huffman); otherwise deltas from the tile's base
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
          tile::huffman::decode_tile<T>(s.huffman, src, span, elements, outliers, s.stage, few_huffman != 0, outlier_index_at,
                                  outlier_values_at);
      if (st != decode_status::ok) {
        if (threadIdx.x == 0) report(r, st, tile);
        return;
      }
      load_subblock_rows(s.stage, block_count, running);
      // The codes predictor (FixedRate): the values are the codes, element 0 the tile's base.
      values_are_codes = format::huffman::uses_codes_predictor(s.huffman.header);
      if (values_are_codes && threadIdx.x == 0) running[0] = format::zigzag(static_cast<std::int32_t>(base));
    }
  } else if (Coder::tries_zero_run && mode == static_cast<std::uint8_t>(tile_mode::zero_run)) {
    if constexpr (Coder::tries_zero_run) {
      bool deltas = true;
      const decode_status st =
          tile::zero_run::decode<T>(s.zero_run, src, span, elements, s.stage, deltas, outlier_index_at, outlier_values_at);
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

  // Codes: the values themselves (the codes predictor), or the tile base + the deltas of all
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

}  // namespace device::detail
NCCLZ_END_KERNEL_NAMESPACE
