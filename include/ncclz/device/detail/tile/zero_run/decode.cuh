// The zero_run tile mode on the device (docs/format.md, "Zero-run tile"), decoding: what a tile's
// thread block calls to decode one zero_run tile, byte for byte what encode.cuh and the host
// reference (ncclz/host/zero_run_reference.hpp) write. The checked decoding of a sub-block is
// ncclz/format/zero_run.hpp's; this file spreads it over the block.
//
// Decoding reads the stream from shared memory where it fits, into the sub-block rows
// (tile_stage.cuh): the coded sub-blocks go round the 8 warps, a whole warp each: a dense one a
// row of 32 at a time, a sparse one's Rice codes parsed by all lanes at once (warp_rice_codes);
// a sub-block they decline (or a stream that does not fit) goes through
// format::zero_run::get_subblock, every check one field at a time, in lane b of warp 0. The caller
// turns the values into codes as it does the huffman tile's deltas. The offsets and zeroing
// are spread over all 256 threads or one warp, with three block barriers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclz/format/zero_run.hpp"
#include "ncclz/device/detail/decode_status.cuh"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail::tile::zero_run {

static_assert(format::zero_run::kSubblockElements == static_cast<std::uint32_t>(kTileThreads),
              "decode's prefix sums give thread t element t of each sub-block");

// Decode copies the stream to shared memory first when it is no longer than kStagedStreamWords
// (tile_stage.cuh).

/// Zero words after the staged stream: the fast decoders read a field from the word it starts in
/// and the next (a Rice code's low bits from up to two words on), never checking for the end.
inline constexpr std::uint32_t kStreamPadWords = 2;

/// Per-tile scratch of decode (shared memory; it shares its space with the huffman decoder's, which
/// is larger).
struct decode_shared {
  std::uint32_t stream[kStagedStreamWords + kStreamPadWords];
  std::uint32_t general;  ///< bit b: sub-block b goes the general (format::zero_run::get_subblock) way
};

namespace detail {

/// Stream word i of a tile in global memory (read-only while decoding).
struct global_words {
  const std::uint32_t* words;
  __device__ std::uint32_t operator()(std::uint32_t i) const { return __ldg(words + i); }
};
/// The same, copied to shared memory.
struct shared_words {
  const std::uint32_t* words;
  __device__ std::uint32_t operator()(std::uint32_t i) const { return words[i]; }
};

/// Bits [p, p + 32) of a staged stream (bits past its end read as the pad's zeros).
__device__ __forceinline__ std::uint32_t window32(const std::uint32_t* words, std::uint32_t p) {
  return __funnelshift_r(words[p / 32], words[p / 32 + 1], p % 32);
}
/// The `bits` (0..32) bits from bit p as an integer, first bit lowest.
__device__ __forceinline__ std::uint32_t bits_at(const std::uint32_t* words, std::uint32_t p, std::uint32_t bits) {
  return window32(words, p) & format::zero_run::low_mask(bits);
}
/// What warp_groups and warp_rice_codes return when the bits do not parse there (see them).
inline constexpr std::uint32_t kNoParse = ~0u;

/// `count` values stored as groups of 32 (a 6-bit width, then the values in it) from bit `at` of a
/// staged stream, none past bit `end` (at <= end), by the whole warp, a group a step: sink(i, v)
/// for value i in lane i % 32. Returns the bit after them, or kNoParse (warp-uniform) where a width
/// is over 32 or the bits run past `end`.
template <class Sink>
__device__ __forceinline__ std::uint32_t warp_groups(const std::uint32_t* words, std::uint32_t at, std::uint32_t end,
                                                     std::uint32_t count, Sink&& sink) {
  const unsigned lane = warp::lane_id();
  for (std::uint32_t g = 0; g * 32 < count; ++g) {
    const std::uint32_t size = count - g * 32 < 32 ? count - g * 32 : 32;
    if (end - at < format::zero_run::kWidthBits) return kNoParse;  // at <= end throughout
    const std::uint32_t width = bits_at(words, at, format::zero_run::kWidthBits);
    const std::uint32_t stop = at + format::zero_run::kWidthBits + size * width;
    if (width > 32 || stop > end) return kNoParse;
    if (lane < size) sink(g * 32 + lane, bits_at(words, at + format::zero_run::kWidthBits + lane * width, width));
    at = stop;
  }
  return at;
}

/// Takes a sub-block's nonzero values, zig-zagged, into its sub-block row (zeroed beforehand).
struct row_sink {
  std::uint32_t* row;
  __device__ void operator()(std::uint32_t i, std::uint32_t z) const { row[i] = z; }
};

/// The fast way through a dense sub-block of n values, bits [begin, end) of the staged stream
/// (begin + 4 <= end; its form is read): warp_groups into `row`. True with the values in `row`
/// when format::zero_run::get_subblock would accept the bits (the same values); false, warp-uniform, otherwise.
__device__ __forceinline__ bool decode_dense(const std::uint32_t* words, std::uint32_t begin, std::uint32_t end, std::uint32_t n,
                                             std::uint32_t* row) {
  return warp_groups(words, begin + format::zero_run::kFormBits, end, n, row_sink{row}) == end;
}

/// Parses `count` (1..256) Rice codes of parameter k (0..14) from bit `start` of a staged stream,
/// none reaching past bit `end`, by the whole warp: emit(i, v) for code i (value v) in whichever
/// lane finds it, each once. Returns the bit after the last code, or kNoParse (warp-uniform) where
/// the codes do not all end by `end` or a quotient runs over a whole 1024-bit chunk (which
/// format::zero_run::get_subblock is left to judge).
///
/// A chunk of 1024 bits is spread over the lanes, 32 each. A code's one bit (its terminator) is
/// the first one at or after its start, and the next code starts k bits after it, so where a lane's
/// codes start depends only on the offset (0..k) at which the first of them starts in its window.
/// Each lane walks its window from every such offset (walks from different offsets meet at a
/// common terminator after a code or two, so each but the first is short); the true offsets are
/// then handed from lane to lane, and each lane emits the codes its true walk finds.
template <class Emit>
__device__ __forceinline__ std::uint32_t warp_rice_codes(const std::uint32_t* words, std::uint32_t start, std::uint32_t end,
                                                         std::uint32_t count, std::uint32_t k, Emit&& emit) {
  const unsigned lane = warp::lane_id();
  std::uint32_t chunk = start, first = 0;  // a code starts at `chunk`; `first` codes lie before it
  for (;;) {
    if (chunk >= end) return kNoParse;
    const std::uint32_t at = chunk + 32 * lane;
    std::uint32_t window = 0;  // no terminator at or past `end`
    if (at < end) window = window32(words, at) & format::zero_run::low_mask(end - at < 32 ? end - at : 32);
    // The walk from offset `pos`: the terminators it finds (mask) and the offset in the next
    // window it leaves off at; `meet` = a walk already made, joined at its first shared terminator.
    std::uint32_t walked = 0, walked_exit = 0;
    auto walk = [&](std::uint32_t pos, bool meet, std::uint32_t& mask) -> std::uint32_t {
      for (;;) {
        const std::uint32_t rest = pos < 32 ? window >> pos : 0u;
        if (rest == 0) return 0u;  // the code's quotient goes on into the next window
        const std::uint32_t t = pos + static_cast<std::uint32_t>(__ffs(static_cast<int>(rest))) - 1;
        if (meet && (walked >> t & 1u) != 0) {
          mask |= walked & (~0u << t);
          return walked_exit;
        }
        mask |= 1u << t;
        pos = t + 1 + k;
        if (pos >= 32) return pos - 32;
      }
    };
    walked_exit = walk(0, false, walked);
    std::uint64_t exits = walked_exit;  // 4 bits per entry offset
    for (std::uint32_t d = 1; d <= k; ++d) {
      std::uint32_t unused = 0;
      exits |= std::uint64_t{walk(d, true, unused)} << (4 * d);
    }
    // Hand the true entry offsets on, lane by lane, over the lanes with bits to read.
    const std::uint32_t lanes = end - chunk >= 1024 ? 32u : (end - chunk + 31) / 32;
    std::uint32_t entry = 0;
    for (std::uint32_t l = 0; l + 1 < lanes; ++l) {
      const auto out = static_cast<std::uint32_t>(exits >> (4 * entry)) & 15u;
      const std::uint32_t next = __shfl_sync(warp::kFullMask, out, l);
      if (lane == l + 1) entry = next;
    }
    std::uint32_t mask = 0;
    if (entry == 0) {
      mask = walked;
    } else {
      walk(entry, true, mask);
    }
    // Code indices and each lane's first code start (after the last terminator of earlier lanes).
    const auto found = static_cast<std::uint32_t>(__popc(mask));
    const std::uint32_t through = warp::inclusive_sum(found);
    const std::uint32_t total = __shfl_sync(warp::kFullMask, through, 31);
    std::uint32_t last = mask != 0 ? at + 32 - static_cast<std::uint32_t>(__clz(static_cast<int>(mask))) : 0u;  // terminator + 1
#pragma unroll
    for (std::uint32_t d = 1; d < 32; d *= 2) {
      const std::uint32_t up = __shfl_up_sync(warp::kFullMask, last, d);
      if (lane >= d) last = max(last, up);
    }
    const std::uint32_t before = __shfl_up_sync(warp::kFullMask, last, 1);
    std::uint32_t code_start = lane > 0 && before != 0 ? before + k : chunk;
    std::uint32_t i = first + through - found, end_bit = 0;
    for (std::uint32_t left = mask; left != 0; left &= left - 1, ++i) {
      const std::uint32_t t = at + static_cast<std::uint32_t>(__ffs(static_cast<int>(left))) - 1;
      if (i < count) emit(i, ((t - code_start) << k) | bits_at(words, t + 1, k));
      if (i == count - 1) end_bit = t + 1 + k;
      code_start = t + 1 + k;
    }
    if (first + total >= count) {  // the bit after the last code, from the lane that found it
      end_bit = warp::first_nonzero(end_bit);
      return end_bit <= end ? end_bit : kNoParse;
    }
    if (total == 0) return kNoParse;  // a quotient over the whole chunk
    first += total;
    chunk = __shfl_sync(warp::kFullMask, last, 31) + k;  // the code after the chunk's last terminator
  }
}

/// The runs of a sparse sub-block of form 0 (Rice parameter 0: a run of r zeros is r zero bits
/// and a one), from bit `start`, none past bit `end`, by the whole warp: there each of the first
/// values has one bit, a one where it is nonzero, so nonzero i sits where the i-th one bit does.
/// Lane l takes bits 8l .. 8l + 7 and writes the positions of its ones into `positions`. Returns
/// the bit after the `nonzeros`-th one, or kNoParse (warp-uniform) where fewer ones lie within
/// the first `n` bits and before `end`: exactly where format::zero_run::get_subblock rejects the
/// runs (the last nonzero's position under n is every run's limit at once).
__device__ __forceinline__ std::uint32_t unary_positions(const std::uint32_t* words, std::uint32_t start, std::uint32_t end,
                                                         std::uint32_t n, std::uint32_t nonzeros, std::uint8_t* positions) {
  static_assert(format::zero_run::kSubblockElements == 8 * 32, "8 bits a lane cover a sub-block");
  const unsigned lane = warp::lane_id();
  const std::uint32_t span = end - start < n ? end - start : n;  // start <= end
  const std::uint32_t from = 8 * lane;
  const std::uint32_t ones = from < span ? bits_at(words, start + from, span - from < 8 ? span - from : 8) : 0u;
  const auto found = static_cast<std::uint32_t>(__popc(ones));
  const std::uint32_t through = warp::inclusive_sum(found);
  if (__shfl_sync(warp::kFullMask, through, 31) < nonzeros) return kNoParse;
  std::uint32_t i = through - found, last = 0;
  for (std::uint32_t left = ones; left != 0 && i < nonzeros; left &= left - 1, ++i) {
    const std::uint32_t at = from + static_cast<std::uint32_t>(__ffs(static_cast<int>(left))) - 1;
    positions[i] = static_cast<std::uint8_t>(at);
    if (i == nonzeros - 1) last = start + at + 1;
  }
  return warp::first_nonzero(last);
}

/// A sparse sub-block's (form 0..8) nonzeros by the whole warp: the runs (warp_rice_codes), their
/// positions (a warp scan; form 0's both at once, unary_positions), kept in `positions` (256 bytes
/// of the warp's own), the signs, then the magnitudes (warp_rice_codes, or a group of 32 a step)
/// into `row` (zeroed). Every check of format::zero_run::get_subblock, in bulk where the outcome is
/// the same (the runs' limits as one check of their sum, every run at most 255). True with the
/// values in `row` exactly when format::zero_run::get_subblock would accept the bits; false
/// (warp-uniform; `row` may hold some values) otherwise.
__device__ __forceinline__ bool decode_sparse(const std::uint32_t* words, std::uint32_t begin, std::uint32_t end, std::uint32_t n,
                                              std::uint32_t min_magnitude, std::uint32_t* row, std::uint8_t* positions) {
  const unsigned lane = warp::lane_id();
  if (end - begin < format::zero_run::kFormBits + format::zero_run::kCountBits) return false;
  const std::uint32_t k = bits_at(words, begin, format::zero_run::kFormBits);
  const std::uint32_t nonzeros = bits_at(words, begin + format::zero_run::kFormBits, format::zero_run::kCountBits) + 1;
  if (k > format::zero_run::kMaxRice || nonzeros > n) return false;
  bool bad = false;
  // The warp's previous sub-block read `positions` in other lanes than those that write it now.
  __syncwarp();
  const std::uint32_t runs_begin = begin + format::zero_run::kFormBits + format::zero_run::kCountBits;
  std::uint32_t p = 0;
  if (k == 0) {
    p = unary_positions(words, runs_begin, end, n, nonzeros, positions);
    if (p == kNoParse) return false;
  } else {
    p = warp_rice_codes(words, runs_begin, end, nonzeros, k, [&](std::uint32_t i, std::uint32_t run) {
      bad |= run > 255;  // a run past any sub-block's end: invalid, and a byte holds the others
      positions[i] = static_cast<std::uint8_t>(run);
    });
    if (__any_sync(warp::kFullMask, bad) || p == kNoParse) return false;
    __syncwarp();
    // Positions: the inclusive sums of run + 1, less one; the nonzeros fit when the last is < n (the
    // same verdict as each run's own limit, run <= n - next - (nonzeros left)).
    std::uint32_t placed = 0;
    for (std::uint32_t r = 0; r * 32 < nonzeros; ++r) {
      const std::uint32_t i = r * 32 + lane;
      const std::uint32_t step = i < nonzeros ? positions[i] + 1u : 0u;
      const std::uint32_t through = placed + warp::inclusive_sum(step);
      __syncwarp();
      if (i < nonzeros && through <= n) positions[i] = static_cast<std::uint8_t>(through - 1);
      placed = __shfl_sync(warp::kFullMask, through, 31);
    }
    if (placed > n) return false;
  }
  if (end - p < format::zero_run::kSignModeBits) return false;
  __syncwarp();
  const std::uint32_t signs = bits_at(words, p, format::zero_run::kSignModeBits);
  p += format::zero_run::kSignModeBits;
  if (signs > static_cast<std::uint32_t>(format::zero_run::sign_mode::negative)) return false;
  const bool mixed = signs == static_cast<std::uint32_t>(format::zero_run::sign_mode::mixed);
  const std::uint32_t signs_at = p;
  if (mixed) p += nonzeros;
  if (p > end || end - p < format::zero_run::kMagnitudeFormBits) return false;
  const std::uint32_t j = bits_at(words, p, format::zero_run::kMagnitudeFormBits);
  p += format::zero_run::kMagnitudeFormBits;
  auto put = [&](std::uint32_t i, std::uint32_t stored) {  // stored < 2^31 (a group's width <= 32 is checked, so < 2^32)
    const std::uint32_t negative = mixed ? bits_at(words, signs_at + i, 1)
                                         : static_cast<std::uint32_t>(signs == static_cast<std::uint32_t>(format::zero_run::sign_mode::negative));
    const std::uint64_t m = std::uint64_t{min_magnitude} + stored;
    const std::uint64_t z = negative != 0 ? 2 * m - 1 : 2 * m;
    bad |= z > 0xFFFFFFFFu;
    row[positions[i]] = static_cast<std::uint32_t>(z);
  };
  // Rice codes: a quotient under 1024 with j <= 14 keeps each magnitude under 2^31, no limit to check.
  p = j == format::zero_run::kMagnitudeGroups ? warp_groups(words, p, end, nonzeros, put) : warp_rice_codes(words, p, end, nonzeros, j, put);
  return !__any_sync(warp::kFullMask, bad) && p == end;
}

__device__ __forceinline__ std::uint32_t subblock_size(std::uint32_t elements, std::uint32_t b) {
  const std::uint32_t first = b * format::zero_run::kSubblockElements;
  return elements - first < format::zero_run::kSubblockElements ? elements - first : format::zero_run::kSubblockElements;
}

}  // namespace detail

/// Decodes the zero_run tile at `tile` (`span`: bytes up to the next tile; nothing past it is read)
/// of `elements` values with every check of the host decode_tile but the outlier indices' (the
/// caller patches outliers from outlier_index / outlier_values, which it is given, and checks
/// them). On success the tile's values, zig-zagged, are in the sub-block rows over the stage
/// (load_subblock_rows; an outlier's position holds what the stream holds), `deltas` says whether
/// they are deltas (codes = base + their inclusive prefix sum) or the codes themselves, and it
/// returns ok; otherwise the problem, the same in every thread. All kTileThreads threads.
template <class T>
__device__ decode_status decode(decode_shared& s, const std::byte* tile, std::uint64_t span, std::uint32_t elements,
                                warp_stage* stages, bool& deltas_predictor, std::uint64_t& outlier_index,
                                std::uint64_t& outlier_values) {
  const unsigned lane = warp::lane_id();
  const unsigned warp_index = threadIdx.x / 32;
  const std::uint32_t subblocks = format::zero_run::subblock_count(elements);
  const format::zero_run::tile_layout head = format::zero_run::tile_layout_of(subblocks, 0, 0, sizeof(T));
  if (span < head.stream) return decode_status::truncated_tile;
  const format::tile_header th = *reinterpret_cast<const format::tile_header*>(tile);
  const format::zero_run::zero_run_header zh = *reinterpret_cast<const format::zero_run::zero_run_header*>(tile + sizeof(format::tile_header));
  if (th.mode != format::zero_run::kTileMode) return decode_status::bad_tile_mode;
  const bool deltas = zh.predictor == static_cast<std::uint8_t>(format::zero_run::predictor::deltas);
  if (th.reserved != 0 || zh.reserved0 != 0 || zh.reserved1 != 0 || zh.predictor > static_cast<std::uint8_t>(format::zero_run::predictor::deltas) ||
      zh.min_magnitude < 1 || zh.min_magnitude > format::zero_run::kMaxMinMagnitude || (!deltas && th.base != 0) ||
      th.outlier_count > elements) {
    return decode_status::bad_tile_header;
  }
  // Every warp reads the lengths (lane b: sub-block b) and finds the offsets and the layout.
  const auto* lengths = reinterpret_cast<const std::uint16_t*>(tile + head.subblock_bits);
  const std::uint32_t length = lane < subblocks ? static_cast<std::uint32_t>(lengths[lane]) : 0u;
  const std::uint32_t through = warp::inclusive_sum(length);
  const std::uint32_t stream_bits = __shfl_sync(warp::kFullMask, through, 31);
  const format::zero_run::tile_layout l = format::zero_run::tile_layout_of(subblocks, stream_bits, th.outlier_count, sizeof(T));
  if (l.total > span) return decode_status::truncated_tile;
  outlier_index = l.outlier_index;
  outlier_values = l.outlier_values;

  // The stream to shared memory when it fits and the sub-block rows zeroed; then lane b of warp 0
  // decodes sub-block b's nonzero values into row b (a warp whose every lane works issues 8 times
  // fewer instructions than eight warps of four: ncu had the old layout issue-bound).
  const auto* stream = reinterpret_cast<const std::uint32_t*>(tile + l.stream);
  const auto stream_words = static_cast<std::uint32_t>((l.outlier_index - l.stream) / 4);
  const bool staged_stream = stream_words <= kStagedStreamWords;
  if (staged_stream) {
    for (std::uint32_t k = threadIdx.x; k < stream_words + kStreamPadWords; k += kTileThreads) {
      s.stream[k] = k < stream_words ? __ldg(stream + k) : 0u;
    }
  }
  std::uint32_t* const rows = subblock_rows(stages);
  for (std::uint32_t k = threadIdx.x; k < format::zero_run::kTileSubblocks * kSubblockRow; k += kTileThreads) rows[k] = 0;
  if (threadIdx.x == 0) s.general = staged_stream ? 0u : ~0u;
  __syncthreads();
  // The fast ways (staged streams): the coded sub-blocks go round the warps, a whole warp each
  // (decode_dense, decode_sparse). A sub-block either declines (bits format::zero_run::get_subblock rejects, or
  // a Rice quotient over a 1024-bit chunk) goes the general way after them.
  const std::uint32_t begin = through - length, n = lane < subblocks ? detail::subblock_size(elements, lane) : 0u;
  if (staged_stream) {
    const bool coded = lane < subblocks && length > 0;  // a length of 0: every value 0
    const std::uint32_t form = coded && length >= format::zero_run::kFormBits ? detail::bits_at(s.stream, begin, format::zero_run::kFormBits) : 0u;
    const std::uint32_t dense = __ballot_sync(warp::kFullMask, coded && length >= format::zero_run::kFormBits && form == format::zero_run::kDense);
    std::uint8_t* const positions = subblock_scratch(stages) + warp_index * format::zero_run::kSubblockElements;
    std::uint32_t rank = 0;
    for (std::uint32_t left = __ballot_sync(warp::kFullMask, coded); left != 0; left &= left - 1, ++rank) {
      if (rank % kTileWarps != warp_index) continue;
      const auto b = static_cast<std::uint32_t>(__ffs(static_cast<int>(left)) - 1);
      const std::uint32_t b_begin = __shfl_sync(warp::kFullMask, begin, b), b_length = __shfl_sync(warp::kFullMask, length, b);
      const std::uint32_t b_n = __shfl_sync(warp::kFullMask, n, b);
      std::uint32_t* const row = rows + b * kSubblockRow;
      const bool ok = (dense >> b & 1u) != 0
                          ? detail::decode_dense(s.stream, b_begin, b_begin + b_length, b_n, row)
                          : detail::decode_sparse(s.stream, b_begin, b_begin + b_length, b_n, zh.min_magnitude, row, positions);
      if (!ok && lane == 0) atomicOr(&s.general, 1u << b);
    }
    __syncthreads();
  }
  // The general way: lane b of warp 0, sub-block b, every check one field at a time.
  const std::uint32_t general = s.general;
  bool bad = false;
  if (warp_index == 0 && lane < subblocks && length > 0 && (general >> lane & 1u) != 0) {
    std::uint32_t* const row = rows + lane * kSubblockRow;
    detail::row_sink out{row};
    if (staged_stream) {
      for (std::uint32_t i = 0; i < n; ++i) row[i] = 0;  // what a fast way left
      format::zero_run::bit_reader<detail::shared_words> r(detail::shared_words{s.stream}, begin, begin + length);
      bad = format::zero_run::get_subblock(r, n, zh.min_magnitude, out) != format::zero_run::subblock_error::none;
    } else {
      format::zero_run::bit_reader<detail::global_words> r(detail::global_words{stream}, begin, begin + length);
      bad = format::zero_run::get_subblock(r, n, zh.min_magnitude, out) != format::zero_run::subblock_error::none;
    }
  }
  if (__syncthreads_or(bad)) return decode_status::corrupt_subblock;
  deltas_predictor = deltas;
  return decode_status::ok;
}

}  // namespace device::detail::tile::zero_run
NCCLZ_END_KERNEL_NAMESPACE
