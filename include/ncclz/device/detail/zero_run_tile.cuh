// The zero_run tile mode on the device (docs/format.md, "Zero-run tile"): what a tile's thread
// block calls to measure, write and decode one zero_run tile whose codes are staged in shared
// memory (tile_stage.cuh). Byte for byte the host reference's tiles (ncclz/host/zero_run_reference.hpp):
// the choices and the checked decoding of a sub-block are the same code,
// ncclz/detail/zero_run_format.hpp; this file spreads it over the block. The device writer lays
// the bits out in parallel (below); the GPU tests compare its bytes with zr::put_subblock's.
//
// Measuring (what every tile pays where a selector weighs this mode) is warp-wide: warp w sums up
// the sub-blocks of its own stage (4 of them) under each predictor zr::measured_predictors names
// with ballots and reductions, then every lane runs the shared choice. Writing is warp-wide too:
// warp w writes its sub-blocks one at a time, every field's place from warp scans, each lane ORing
// in its own values' bits.
// Decoding reads the stream from shared memory where it fits, into the sub-block rows
// (tile_stage.cuh): the coded sub-blocks go round the 8 warps, a whole warp each: a dense one a
// row of 32 at a time, a sparse one's Rice codes parsed by all lanes at once (warp_rice_codes);
// a sub-block they decline (or a stream that does not fit) goes through zr::get_subblock, every
// check one field at a time, in lane b of warp 0. The caller turns the values into codes as it
// does the huffman tile's deltas. Everything else (the least magnitude, the predictor, the
// offsets, zeroing the stream) is spread over all 256 threads or one warp, with three block
// barriers in measure, one in write and three in decode.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclz/detail/zero_run_format.hpp"
#include "ncclz/device/detail/decode_status.cuh"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace kernels {
namespace zero_run {

namespace zr = ::ncclz::detail::zero_run;

inline constexpr std::uint32_t kSubblocksPerWarp = zr::kTileSubblocks / kTileWarps;  // 4
static_assert(zr::kSubblockElements == static_cast<std::uint32_t>(kTileThreads),
              "decode's prefix sums give thread t element t of each sub-block");
static_assert(kSubblocksPerWarp * zr::kSubblockElements == kBlocksPerWarp * format::kBlockElements,
              "a warp's sub-blocks are the codes of its own stage");

/// Zero counts travel packed, (zero codes << 16) | zero deltas, one word a warp, and a tile's are
/// summed in that packing (warp::sum_of): each half sums to at most a tile's elements, so neither
/// carries into the other.
static_assert(format::kTileElements < (1u << 16), "a tile's zero counts fit a half word");

/// Per-tile scratch of measure and write (shared memory).
struct encode_shared {
  std::uint32_t least[kTileWarps][2];                  ///< per warp and predictor: least magnitude, ~0u for none
  std::uint32_t zeros[kTileWarps];                     ///< per warp: (zero codes << 16) | zero deltas
  std::uint32_t min_magnitude[2];                      ///< per predictor
  std::uint32_t subblock_bits[2][zr::kTileSubblocks];  ///< per predictor and sub-block: the chosen form's bits
  std::uint32_t subblock_plan[2][zr::kTileSubblocks];  ///< the same: the plan, packed (pack_plan)
  std::uint32_t run_bits[2][zr::kTileSubblocks];       ///< the same, sparse: the runs' bits
  std::uint64_t group_widths[2][zr::kTileSubblocks];   ///< the same: the magnitudes' group widths, 6 bits each
  std::uint32_t subblock_start[zr::kTileSubblocks];    ///< the chosen predictor's: bit offset in the stream
  std::uint32_t predictor;                             ///< the chosen one
  std::uint32_t stream_bits;                           ///< its stream's length
};
static_assert(sizeof(encode_shared) <= 2048);

// Decode copies the stream to shared memory first when it is no longer than kStagedStreamWords
// (tile_stage.cuh).

/// Zero words after the staged stream: the fast decoders read a field from the word it starts in
/// and the next (a Rice code's low bits from up to two words on), never checking for the end.
inline constexpr std::uint32_t kStreamPadWords = 2;

/// Per-tile scratch of decode (shared memory; it shares its space with the huffman decoder's, which
/// is larger).
struct decode_shared {
  std::uint32_t stream[kStagedStreamWords + kStreamPadWords];
  std::uint32_t general;  ///< bit b: sub-block b goes the general (zr::get_subblock) way
};

/// Where a tile's parts lie (bytes from the tile's start).
struct plan {
  std::uint64_t bytes;           ///< the whole tile, padded to 8
  std::uint64_t outlier_index;   ///< offset of the u16 outlier index array
  std::uint64_t outlier_values;  ///< offset of the outlier values
};

namespace detail {

__device__ __forceinline__ std::int32_t code_of(std::int32_t staged_code) {
  return staged_code == kOutlierCode ? 0 : staged_code;  // an outlier's code counts as 0
}

__device__ __forceinline__ std::uint32_t pack_plan(const zr::subblock_plan& p) {
  return p.form | (p.magnitude_form << 4) | (static_cast<std::uint32_t>(p.signs) << 8) | (p.nonzeros << 16);
}
__device__ __forceinline__ zr::subblock_plan unpack_plan(std::uint32_t v) {
  return {v & 0xFu, v >> 16, static_cast<zr::sign_mode>((v >> 8) & 0x3u), (v >> 4) & 0xFu};
}

/// A sub-block's zig-zagged values, made from the staged codes as they are read.
struct staged_values {
  warp_stage* stages;
  std::uint32_t first;   ///< the sub-block's first element in the tile
  zr::predictor pred;
  std::int32_t before;   ///< deltas: the code before `first` (the tile's first code for sub-block 0)
  __device__ std::uint32_t operator()(std::uint32_t i) const {
    const std::int32_t q = code_of(staged(stages, first + i));
    if (pred == zr::predictor::codes) return zr::predict(q, 0, pred);
    return zr::predict(q, i == 0 ? before : code_of(staged(stages, first + i - 1)), pred);
  }
};

/// The prediction of a sub-block's first element under the deltas predictor.
__device__ __forceinline__ std::int32_t code_before(warp_stage* stages, std::uint32_t first) {
  return code_of(staged(stages, first == 0 ? 0 : first - 1));
}

/// ORs the `bits` (<= 32) low bits of v (v < 2^bits) into the stream at bit `at`; the words are
/// zeroed beforehand, so zero bits cost nothing.
__device__ __forceinline__ void or_bits(std::uint32_t* words, std::uint32_t at, std::uint32_t v, std::uint32_t bits) {
  if (v == 0) return;
  const std::uint32_t word = at / 32, shift = at % 32;
  atomicOr(words + word, v << shift);
  if (shift != 0 && shift + bits > 32) atomicOr(words + word + 1, v >> (32 - shift));
}

/// A Rice code of parameter k for v at bit `at`: v >> k zeros (already there), a one, k low bits.
__device__ __forceinline__ void or_rice(std::uint32_t* words, std::uint32_t at, std::uint32_t v, std::uint32_t k) {
  const std::uint32_t q = v >> k;
  or_bits(words, at + q, 1u, 1);
  or_bits(words, at + q + 1, v & zr::low_mask(k), k);
}

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
  return window32(words, p) & zr::low_mask(bits);
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
    if (end - at < zr::kWidthBits) return kNoParse;  // at <= end throughout
    const std::uint32_t width = bits_at(words, at, zr::kWidthBits);
    const std::uint32_t stop = at + zr::kWidthBits + size * width;
    if (width > 32 || stop > end) return kNoParse;
    if (lane < size) sink(g * 32 + lane, bits_at(words, at + zr::kWidthBits + lane * width, width));
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
/// when zr::get_subblock would accept the bits (the same values); false, warp-uniform, otherwise.
__device__ __forceinline__ bool decode_dense(const std::uint32_t* words, std::uint32_t begin, std::uint32_t end, std::uint32_t n,
                                             std::uint32_t* row) {
  return warp_groups(words, begin + zr::kFormBits, end, n, row_sink{row}) == end;
}

/// Parses `count` (1..256) Rice codes of parameter k (0..14) from bit `start` of a staged stream,
/// none reaching past bit `end`, by the whole warp: emit(i, v) for code i (value v) in whichever
/// lane finds it, each once. Returns the bit after the last code, or kNoParse (warp-uniform) where
/// the codes do not all end by `end` or a quotient runs over a whole 1024-bit chunk (which
/// zr::get_subblock is left to judge).
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
    if (at < end) window = window32(words, at) & zr::low_mask(end - at < 32 ? end - at : 32);
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
      const std::uint32_t holder = __ballot_sync(warp::kFullMask, end_bit != 0);
      end_bit = __shfl_sync(warp::kFullMask, end_bit, __ffs(static_cast<int>(holder)) - 1);
      return end_bit <= end ? end_bit : kNoParse;
    }
    if (total == 0) return kNoParse;  // a quotient over the whole chunk
    first += total;
    chunk = __shfl_sync(warp::kFullMask, last, 31) + k;  // the code after the chunk's last terminator
  }
}

/// A sparse sub-block's (form 0..8) nonzeros by the whole warp: the runs (warp_rice_codes), their
/// positions (a warp scan, kept in `positions`, 256 bytes of the warp's own), the signs, then the
/// magnitudes (warp_rice_codes, or a group of 32 a step) into `row` (zeroed). Every check of
/// zr::get_subblock, in bulk where the outcome is the same (the runs' limits as one check of their
/// sum, every run at most 255). True with the values in `row` exactly when zr::get_subblock would
/// accept the bits; false (warp-uniform; `row` may hold some values) otherwise.
__device__ __forceinline__ bool decode_sparse(const std::uint32_t* words, std::uint32_t begin, std::uint32_t end, std::uint32_t n,
                                              std::uint32_t min_magnitude, std::uint32_t* row, std::uint8_t* positions) {
  const unsigned lane = warp::lane_id();
  if (end - begin < zr::kFormBits + zr::kCountBits) return false;
  const std::uint32_t k = bits_at(words, begin, zr::kFormBits);
  const std::uint32_t nonzeros = bits_at(words, begin + zr::kFormBits, zr::kCountBits) + 1;
  if (k > zr::kMaxRice || nonzeros > n) return false;
  bool bad = false;
  std::uint32_t p = warp_rice_codes(words, begin + zr::kFormBits + zr::kCountBits, end, nonzeros, k, [&](std::uint32_t i, std::uint32_t run) {
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
  if (placed > n || end - p < zr::kSignModeBits) return false;
  __syncwarp();
  const std::uint32_t signs = bits_at(words, p, zr::kSignModeBits);
  p += zr::kSignModeBits;
  if (signs > static_cast<std::uint32_t>(zr::sign_mode::negative)) return false;
  const bool mixed = signs == static_cast<std::uint32_t>(zr::sign_mode::mixed);
  const std::uint32_t signs_at = p;
  if (mixed) p += nonzeros;
  if (p > end || end - p < zr::kMagnitudeFormBits) return false;
  const std::uint32_t j = bits_at(words, p, zr::kMagnitudeFormBits);
  p += zr::kMagnitudeFormBits;
  auto put = [&](std::uint32_t i, std::uint32_t stored) {  // stored < 2^31 (a group's width <= 32 is checked, so < 2^32)
    const std::uint32_t negative = mixed ? bits_at(words, signs_at + i, 1)
                                         : static_cast<std::uint32_t>(signs == static_cast<std::uint32_t>(zr::sign_mode::negative));
    const std::uint64_t m = std::uint64_t{min_magnitude} + stored;
    const std::uint64_t z = negative != 0 ? 2 * m - 1 : 2 * m;
    bad |= z > 0xFFFFFFFFu;
    row[positions[i]] = static_cast<std::uint32_t>(z);
  };
  // Rice codes: a quotient under 1024 with j <= 14 keeps each magnitude under 2^31, no limit to check.
  p = j == zr::kMagnitudeGroups ? warp_groups(words, p, end, nonzeros, put) : warp_rice_codes(words, p, end, nonzeros, j, put);
  return !__any_sync(warp::kFullMask, bad) && p == end;
}

__device__ __forceinline__ std::uint32_t subblock_size(std::uint32_t elements, std::uint32_t b) {
  const std::uint32_t first = b * zr::kSubblockElements;
  return elements - first < zr::kSubblockElements ? elements - first : zr::kSubblockElements;
}

/// A sub-block of a warp's stage, walked row by row by the whole warp: lane l takes element
/// 32g + l of row g. next(g) gives the lane's predicted value and, for a nonzero, the run of zeros
/// before it (since the previous set bit of the row's ballot, or the last nonzero of an earlier
/// row) and its rank among the sub-block's nonzeros (a popcount). Rows must come in order.
struct row_walk {
  const warp_stage& stage;
  std::uint32_t first_row, n;
  zr::predictor pred;
  std::int32_t carry;      ///< the code before the next row (the sub-block's `before` at first)
  std::int32_t last = -1;  ///< the last nonzero of the rows before, -1 for none
  std::uint32_t rank = 0;  ///< nonzeros in the rows before

  struct element {
    std::uint32_t z;        ///< the predicted (zig-zagged) value, 0 past n
    std::uint32_t nonzero;  ///< the row's ballot of z != 0
    std::uint32_t run;      ///< z != 0: zeros since the previous nonzero
    std::uint32_t rank;     ///< z != 0: nonzeros before it in the sub-block
  };

  __device__ element next(std::uint32_t g) {
    const unsigned lane = warp::lane_id();
    const std::uint32_t i = g * 32 + lane;
    const std::int32_t q = i < n ? code_of(stage[first_row + g][lane]) : 0;
    const std::int32_t up = __shfl_up_sync(warp::kFullMask, q, 1);
    element e{};
    e.z = i < n ? zr::predict(q, lane == 0 ? carry : up, pred) : 0u;
    carry = __shfl_sync(warp::kFullMask, q, 31);
    e.nonzero = __ballot_sync(warp::kFullMask, e.z != 0);
    const std::uint32_t earlier = e.nonzero & ((1u << lane) - 1u);
    if (e.z != 0) {
      const std::int32_t previous = earlier != 0 ? static_cast<std::int32_t>(g * 32 + 31 - __clz(earlier)) : last;
      e.run = static_cast<std::uint32_t>(static_cast<std::int32_t>(i) - previous - 1);
      e.rank = rank + static_cast<std::uint32_t>(__popc(earlier));
    }
    if (e.nonzero != 0) last = static_cast<std::int32_t>(g * 32 + 31 - __clz(e.nonzero));
    rank += static_cast<std::uint32_t>(__popc(e.nonzero));
    return e;
  }
};

/// Bit k of v (k < 8) at bit 4k: eight 4-bit counters to add a value's bits into at once.
__device__ __forceinline__ std::uint32_t nibble_spread(std::uint32_t v) {
  v = (v | (v << 12)) & 0x000F000Fu;
  v = (v | (v << 6)) & 0x03030303u;
  return (v | (v << 3)) & 0x11111111u;
}

/// The sums the form choice needs (zr::subblock_sums) of one sub-block under one predictor, by the
/// whole warp (its stage holds the sub-block) in a row_walk: rows are the dense form's groups (one
/// OR reduction each), runs and ranks (for the magnitudes' groups of 32) come from the walk. The
/// same sums as zr::subblock_stats adds one value at a time (the GPU test compares the bytes this
/// leads to with the host's). Also the widths of the magnitudes' groups of 32 (6 bits each, group t
/// at bit 6t), which the writer places fields by.
__device__ __forceinline__ zr::subblock_sums warp_sums(const warp_stage& stage, std::uint32_t first_row, std::uint32_t n,
                                                       zr::predictor pred, std::int32_t before, std::uint32_t min_magnitude,
                                                       std::uint64_t& group_widths) {
  zr::subblock_sums s;
  group_widths = 0;
  // Per lane, then reduced: runs' r >> k; stored magnitudes m as the sum of m >> 16 and how many
  // have each of the low 16 bits set (zr::magnitude_sums; per lane in 4-bit counters, 8 a word: a
  // lane holds at most 8 values of a sub-block); the OR of the magnitudes in each group of 32
  // nonzeros (at most 8).
  std::uint32_t runs[zr::kMaxRice + 1] = {}, hi = 0, group_or[8] = {};
  std::uint32_t bit_counts[2] = {};  // nibble b of word w: this lane's values with bit 8w + b set
  static_assert(zr::kSubblockElements / 32 <= 15, "a lane's values of a sub-block fit its 4-bit counters");
  row_walk walk{stage, first_row, n, pred, before};
  for (std::uint32_t g = 0; g * 32 < n; ++g) {
    const row_walk::element e = walk.next(g);
    const std::uint32_t size = n - g * 32 < 32 ? n - g * 32 : 32;
    s.dense_bits += zr::group_bits(size, zr::value_width(__reduce_or_sync(warp::kFullMask, e.z)));
    s.negatives += static_cast<std::uint32_t>(__popc(__ballot_sync(warp::kFullMask, zr::is_negative(e.z))));
    if (e.z != 0) {
#pragma unroll
      for (std::uint32_t k = 0; k <= zr::kMaxRice; ++k) runs[k] += e.run >> k;
      const std::uint32_t m = zr::magnitude(e.z) - min_magnitude;
      hi += m >> 16;
      bit_counts[0] += nibble_spread(m & 0xFFu);
      bit_counts[1] += nibble_spread((m >> 8) & 0xFFu);
#pragma unroll
      for (std::uint32_t k = 0; k < 8; ++k) group_or[k] |= e.rank / 32 == k ? m : 0u;
    }
  }
  const std::uint32_t rank = walk.rank;
  if (rank == 0) return s;  // every value 0: no form to choose (choose_form looks at nothing else)
  s.nonzeros = rank;
#pragma unroll
  for (std::uint32_t k = 0; k <= zr::kMaxRice; ++k) s.run_shifted[k] = __reduce_add_sync(warp::kFullMask, runs[k]);
  const std::uint32_t hi_sum = __reduce_add_sync(warp::kFullMask, hi);
  s.magnitudes.count = rank;
  s.magnitudes.high = hi_sum;
#pragma unroll
  for (std::uint32_t b = 0; b < 16; ++b) {
    s.magnitudes.low_bits[b] = __reduce_add_sync(warp::kFullMask, (bit_counts[b / 8] >> (4 * (b % 8))) & 0xFu);
  }
#pragma unroll
  for (std::uint32_t k = 0; k < 8; ++k) {
    const std::uint32_t width = zr::value_width(__reduce_or_sync(warp::kFullMask, group_or[k]));
    group_widths |= std::uint64_t{width} << (6 * k);
    if (rank > k * 32) s.magnitudes.grouped_bits += zr::group_bits(rank - k * 32 < 32 ? rank - k * 32 : 32, width);
  }
  return s;
}

/// Writes one sub-block (zr::put_subblock's bits, at bit `start` of the zeroed stream) by the whole
/// warp whose stage holds it, in a row_walk as warp_sums; every field's place comes from what
/// measuring found (the runs' bits, the magnitudes' group widths) and warp scans, so each lane ORs
/// in its own values' bits: no lane walks the sub-block alone.
__device__ __forceinline__ void write_subblock(std::uint32_t* words, std::uint32_t start, const warp_stage& stage,
                                               std::uint32_t first_row, std::uint32_t n, zr::predictor pred,
                                               std::int32_t before, const zr::subblock_plan& p, std::uint32_t min_magnitude,
                                               std::uint32_t run_bits, std::uint64_t group_widths) {
  const unsigned lane = warp::lane_id();
  if (p.nonzeros == 0) return;
  const std::uint32_t rows = (n + 31) / 32;
  if (lane == 0) or_bits(words, start, p.form, zr::kFormBits);
  if (p.form == zr::kDense) {  // groups of 32 = rows: a width, then the row's values in it
    std::uint32_t at = start + zr::kFormBits;
    row_walk walk{stage, first_row, n, pred, before};
    for (std::uint32_t g = 0; g < rows; ++g) {
      const std::uint32_t z = walk.next(g).z;
      const std::uint32_t size = n - g * 32 < 32 ? n - g * 32 : 32;
      const std::uint32_t width = zr::value_width(__reduce_or_sync(warp::kFullMask, z));
      if (lane == 0) or_bits(words, at, width, zr::kWidthBits);
      if (lane < size) or_bits(words, at + zr::kWidthBits + lane * width, z, width);
      at += zr::kWidthBits + size * width;
    }
    return;
  }
  const std::uint32_t k = p.form, j = p.magnitude_form;
  const bool grouped = j == zr::kMagnitudeGroups, mixed = p.signs == zr::sign_mode::mixed;
  if (lane == 0) or_bits(words, start + zr::kFormBits, p.nonzeros - 1, zr::kCountBits);
  const std::uint32_t signs_at = start + zr::kFormBits + zr::kCountBits + run_bits;
  const std::uint32_t form_at = signs_at + zr::kSignModeBits + (mixed ? p.nonzeros : 0u);
  std::uint32_t group_width[8], group_at[8];
  {
    std::uint32_t at = form_at + zr::kMagnitudeFormBits;
#pragma unroll
    for (std::uint32_t t = 0; t < 8; ++t) {
      group_width[t] = static_cast<std::uint32_t>(group_widths >> (6 * t)) & 63u;
      group_at[t] = at;
      const std::uint32_t in_group = p.nonzeros > t * 32 ? min(p.nonzeros - t * 32, 32u) : 0u;
      if (grouped && in_group > 0) {
        if (lane == 0) or_bits(words, at, group_width[t], zr::kWidthBits);
        at += zr::kWidthBits + in_group * group_width[t];
      }
    }
  }
  if (lane == 0) {
    or_bits(words, signs_at, static_cast<std::uint32_t>(p.signs), zr::kSignModeBits);
    or_bits(words, form_at, j, zr::kMagnitudeFormBits);
  }
  // Each nonzero's run, sign and magnitude at offsets from warp scans.
  row_walk walk{stage, first_row, n, pred, before};
  std::uint32_t run_at = start + zr::kFormBits + zr::kCountBits, magnitude_at = form_at + zr::kMagnitudeFormBits;
  for (std::uint32_t g = 0; g < rows; ++g) {
    const row_walk::element e = walk.next(g);
    const std::uint32_t z = e.z, run = e.run, r = e.rank;
    const std::uint32_t stored = z != 0 ? zr::magnitude(z) - min_magnitude : 0u;
    const std::uint32_t run_length = z != 0 ? (run >> k) + 1 + k : 0u;
    const std::uint32_t run_through = warp::inclusive_sum(run_length);
    const std::uint32_t magnitude_length = z != 0 && !grouped ? (stored >> j) + 1 + j : 0u;
    const std::uint32_t magnitude_through = warp::inclusive_sum(magnitude_length);
    if (z != 0) {
      or_rice(words, run_at + run_through - run_length, run, k);
      if (mixed) or_bits(words, signs_at + zr::kSignModeBits + r, z & 1u, 1);
      if (!grouped) {
        or_rice(words, magnitude_at + magnitude_through - magnitude_length, stored, j);
      } else {
#pragma unroll
        for (std::uint32_t t = 0; t < 8; ++t) {
          if (r / 32 == t) or_bits(words, group_at[t] + zr::kWidthBits + (r % 32) * group_width[t], stored, group_width[t]);
        }
      }
    }
    run_at += __shfl_sync(warp::kFullMask, run_through, 31);
    magnitude_at += __shfl_sync(warp::kFullMask, magnitude_through, 31);
  }
}

}  // namespace detail

/// Chooses the predictor and each sub-block's form exactly as the host reference does; returns the
/// tile's layout, the same in every thread. Called by all kTileThreads threads with block-uniform
/// arguments once the tile's codes are staged (staged(stages, e) for e < elements, kOutlierCode
/// for an outlier, whose code counts as 0) and a __syncthreads has passed. Ends on a barrier.
template <class T>
__device__ plan measure(encode_shared& s, warp_stage* stages, std::uint32_t elements, std::uint32_t outliers) {
  using detail::code_of;
  const unsigned lane = warp::lane_id();
  const unsigned warp_index = threadIdx.x / 32;
  const std::uint32_t subblocks = zr::subblock_count(elements);
  const std::int32_t first_code = elements > 0 ? code_of(staged(stages, 0)) : 0;

  // The least magnitude of the nonzero values under each predictor (consecutive threads read
  // consecutive elements: no bank conflicts).
  std::uint32_t least_codes = ~0u, least_deltas = ~0u, zeros = 0;
  for (std::uint32_t e = threadIdx.x; e < elements; e += kTileThreads) {
    const std::int32_t q = code_of(staged(stages, e));
    const std::uint32_t zc = zr::predict(q, 0, zr::predictor::codes);
    const std::uint32_t zd = zr::predict(q, e == 0 ? first_code : code_of(staged(stages, e - 1)), zr::predictor::deltas);
    if (zc != 0) least_codes = min(least_codes, zr::magnitude(zc));
    if (zd != 0) least_deltas = min(least_deltas, zr::magnitude(zd));
    zeros += (zc == 0 ? 1u << 16 : 0u) + (zd == 0 ? 1u : 0u);
  }
  least_codes = __reduce_min_sync(warp::kFullMask, least_codes);
  least_deltas = __reduce_min_sync(warp::kFullMask, least_deltas);
  zeros = __reduce_add_sync(warp::kFullMask, zeros);  // each count <= 1024
  if (lane == 0) {
    s.least[warp_index][0] = least_codes;
    s.least[warp_index][1] = least_deltas;
    s.zeros[warp_index] = zeros;
  }
  __syncthreads();

  // Warp w: the sub-blocks of its stage (4w..4w+3) under each measured predictor, one at a time.
  const std::uint32_t tile_zeros = warp::sum_of(s.zeros);
  const std::uint32_t measured = zr::measured_predictors(tile_zeros >> 16, tile_zeros & 0xFFFFu, elements);
  std::uint32_t min_magnitude[2];
#pragma unroll
  for (std::uint32_t p = 0; p < 2; ++p) {
    std::uint32_t least = ~0u;
#pragma unroll
    for (int w = 0; w < kTileWarps; ++w) least = min(least, s.least[w][p]);
    min_magnitude[p] = least == ~0u ? 1u : least;
  }
  if (threadIdx.x == 0) {
    s.min_magnitude[0] = min_magnitude[0];
    s.min_magnitude[1] = min_magnitude[1];
  }
  for (std::uint32_t j = 0; j < 2 * kSubblocksPerWarp; ++j) {
    const std::uint32_t b = warp_index * kSubblocksPerWarp + j / 2, p = j % 2;
    if ((measured >> p & 1u) == 0) continue;
    std::uint32_t bits = 0, packed = 0, run_bits = 0;
    std::uint64_t group_widths = 0;
    if (b < subblocks) {
      const std::uint32_t first = b * zr::kSubblockElements;
      const zr::subblock_sums sums =
          detail::warp_sums(stages[warp_index], (b % kSubblocksPerWarp) * (zr::kSubblockElements / 32), detail::subblock_size(elements, b),
                            static_cast<zr::predictor>(p), detail::code_before(stages, first), min_magnitude[p], group_widths);
      const zr::choice c = zr::choose_form(sums);
      bits = static_cast<std::uint32_t>(c.bits);  // <= kMaxSubblockBits
      packed = detail::pack_plan(zr::plan_of(sums, c.form));
      if (c.form < zr::kDense) {  // run_shifted[c.form] by selects: an indexed read put sums on the stack
#pragma unroll
        for (std::uint32_t f = 0; f < zr::kDense; ++f) run_bits = f == c.form ? sums.run_shifted[f] + sums.nonzeros * (1 + f) : run_bits;
      }
    }
    if (lane == 0) {
      s.subblock_bits[p][b] = bits;
      s.subblock_plan[p][b] = packed;
      s.run_bits[p][b] = run_bits;
      s.group_widths[p][b] = group_widths;
    }
  }
  __syncthreads();

  // Warp 0: the predictor measured, or of both deltas only where their stream is shorter (codes
  // on a tie), and the chosen sub-blocks' offsets.
  if (warp_index == 0) {
    const std::uint32_t codes = s.subblock_bits[0][lane], deltas = s.subblock_bits[1][lane];  // stale if not measured
    const std::uint32_t codes_total = __reduce_add_sync(warp::kFullMask, codes);
    const std::uint32_t deltas_total = __reduce_add_sync(warp::kFullMask, deltas);
    const std::uint32_t p = measured == 3u ? (deltas_total < codes_total ? 1u : 0u) : (measured == 2u ? 1u : 0u);
    const std::uint32_t mine = p ? deltas : codes;
    s.subblock_start[lane] = warp::inclusive_sum(mine) - mine;
    if (lane == 0) {
      s.predictor = p;
      s.stream_bits = p ? deltas_total : codes_total;
    }
  }
  __syncthreads();
  const zr::tile_layout l = zr::tile_layout_of(subblocks, s.stream_bits, outliers, sizeof(T));
  return {l.total, l.outlier_index, l.outlier_values};
}

/// The tile's zero deltas (element 0's counts), every element's, as measure counted them.
__device__ __forceinline__ std::uint32_t measured_zero_deltas(const encode_shared& s) {
  return warp::sum_of(s.zeros) & 0xFFFFu;
}

/// Writes the tile measure measured (s as it left it) at `tile` (8-byte aligned, not zeroed): the
/// tile header (mode 3, the outlier count, base), the zero_run header, the sub-block lengths, the
/// stream and every padding byte before the plan's outlier_index (the layout is worked out again
/// from s: the same numbers); not the outliers nor what follows them. All kTileThreads threads.
template <class T>
__device__ void write(const encode_shared& s, warp_stage* stages, std::uint32_t elements, std::uint32_t outliers,
                      std::byte* tile) {
  const unsigned lane = warp::lane_id();
  const unsigned warp_index = threadIdx.x / 32;
  const std::uint32_t subblocks = zr::subblock_count(elements);
  const zr::tile_layout l = zr::tile_layout_of(subblocks, s.stream_bits, outliers, sizeof(T));
  const std::uint32_t p = s.predictor;
  const auto pred = static_cast<zr::predictor>(p);
  const std::uint32_t min_magnitude = s.min_magnitude[p];
  if (threadIdx.x == 0) {
    const std::int32_t base = pred == zr::predictor::deltas && elements > 0 ? detail::code_of(staged(stages, 0)) : 0;
    *reinterpret_cast<format::tile_header*>(tile) = format::tile_header{zr::kTileMode, 0, static_cast<std::uint16_t>(outliers), base};
    *reinterpret_cast<zr::zero_run_header*>(tile + sizeof(format::tile_header)) =
        zr::zero_run_header{static_cast<std::uint8_t>(p), 0, 0, min_magnitude};
  }
  // Sub-block lengths, then zeros up to the stream (u16 slots both).
  auto* lengths = reinterpret_cast<std::uint16_t*>(tile + l.subblock_bits);
  if (threadIdx.x < (l.stream - l.subblock_bits) / 2) {
    lengths[threadIdx.x] = static_cast<std::uint16_t>(threadIdx.x < subblocks ? s.subblock_bits[p][threadIdx.x] : 0u);
  }
  // The stream's words (its padding included) are zeroed first: sub-blocks share their end words.
  auto* words = reinterpret_cast<std::uint32_t*>(tile + l.stream);
  const auto stream_words = static_cast<std::uint32_t>((l.outlier_index - l.stream) / 4);
  for (std::uint32_t i = threadIdx.x; i < stream_words; i += kTileThreads) words[i] = 0;
  __syncthreads();
  // Warp w writes the sub-blocks of its stage, one at a time, all lanes together.
  for (std::uint32_t j = 0; j < kSubblocksPerWarp; ++j) {
    const std::uint32_t b = warp_index * kSubblocksPerWarp + j;
    if (b >= subblocks || s.subblock_bits[p][b] == 0) continue;
    const std::uint32_t first = b * zr::kSubblockElements;
    detail::write_subblock(words, s.subblock_start[b], stages[warp_index], j * (zr::kSubblockElements / 32),
                           detail::subblock_size(elements, b), pred, detail::code_before(stages, first),
                           detail::unpack_plan(s.subblock_plan[p][b]), min_magnitude, s.run_bits[p][b], s.group_widths[p][b]);
  }
}

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
  const std::uint32_t subblocks = zr::subblock_count(elements);
  const zr::tile_layout head = zr::tile_layout_of(subblocks, 0, 0, sizeof(T));
  if (span < head.stream) return decode_status::truncated_tile;
  const format::tile_header th = *reinterpret_cast<const format::tile_header*>(tile);
  const zr::zero_run_header zh = *reinterpret_cast<const zr::zero_run_header*>(tile + sizeof(format::tile_header));
  if (th.mode != zr::kTileMode) return decode_status::bad_tile_mode;
  const bool deltas = zh.predictor == static_cast<std::uint8_t>(zr::predictor::deltas);
  if (th.reserved != 0 || zh.reserved0 != 0 || zh.reserved1 != 0 || zh.predictor > static_cast<std::uint8_t>(zr::predictor::deltas) ||
      zh.min_magnitude < 1 || zh.min_magnitude > zr::kMaxMinMagnitude || (!deltas && th.base != 0) ||
      th.outlier_count > elements) {
    return decode_status::bad_tile_header;
  }
  // Every warp reads the lengths (lane b: sub-block b) and finds the offsets and the layout.
  const auto* lengths = reinterpret_cast<const std::uint16_t*>(tile + head.subblock_bits);
  const std::uint32_t length = lane < subblocks ? static_cast<std::uint32_t>(lengths[lane]) : 0u;
  const std::uint32_t through = warp::inclusive_sum(length);
  const std::uint32_t stream_bits = __shfl_sync(warp::kFullMask, through, 31);
  const zr::tile_layout l = zr::tile_layout_of(subblocks, stream_bits, th.outlier_count, sizeof(T));
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
  for (std::uint32_t k = threadIdx.x; k < zr::kTileSubblocks * kSubblockRow; k += kTileThreads) rows[k] = 0;
  if (threadIdx.x == 0) s.general = staged_stream ? 0u : ~0u;
  __syncthreads();
  // The fast ways (staged streams): the coded sub-blocks go round the warps, a whole warp each
  // (decode_dense, decode_sparse). A sub-block either declines (bits zr::get_subblock rejects, or
  // a Rice quotient over a 1024-bit chunk) goes the general way after them.
  const std::uint32_t begin = through - length, n = lane < subblocks ? detail::subblock_size(elements, lane) : 0u;
  if (staged_stream) {
    const bool coded = lane < subblocks && length > 0;  // a length of 0: every value 0
    const std::uint32_t form = coded && length >= zr::kFormBits ? detail::bits_at(s.stream, begin, zr::kFormBits) : 0u;
    const std::uint32_t dense = __ballot_sync(warp::kFullMask, coded && length >= zr::kFormBits && form == zr::kDense);
    std::uint8_t* const positions = subblock_scratch(stages) + warp_index * zr::kSubblockElements;
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
      zr::bit_reader<detail::shared_words> r(detail::shared_words{s.stream}, begin, begin + length);
      bad = zr::get_subblock(r, n, zh.min_magnitude, out) != zr::subblock_error::none;
    } else {
      zr::bit_reader<detail::global_words> r(detail::global_words{stream}, begin, begin + length);
      bad = zr::get_subblock(r, n, zh.min_magnitude, out) != zr::subblock_error::none;
    }
  }
  if (__syncthreads_or(bad)) return decode_status::corrupt_subblock;
  deltas_predictor = deltas;
  return decode_status::ok;
}

}  // namespace zero_run
}  // namespace kernels
NCCLZ_END_KERNEL_NAMESPACE
