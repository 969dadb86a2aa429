// The zero_run tile mode on the device (docs/format.md, "Zero-run tile"), encoding: what a tile's
// thread block calls to measure and write one zero_run tile whose codes are staged in shared
// memory (tile_stage.cuh). Byte for byte the host reference's tiles (ncclz/host/zero_run_reference.hpp):
// the choices and the checked decoding of a sub-block are the same code,
// ncclz/format/zero_run.hpp; this file spreads it over the block. The device writer lays
// the bits out in parallel (below); the GPU tests compare its bytes with format::zero_run::put_subblock's.
//
// Encoding works a block of 32 values a lane, as the fixed_length encoder does: lane l of warp w
// holds block 32w + l, and a sub-block of 256 values is the 8 blocks of a segment of 8 lanes (the
// warp's 4 sub-blocks side by side). Measuring (what every tile pays where a selector weighs this
// mode) reads each lane's 32 codes once for both predictors (a bit mask of its nonzero values
// under each, the least magnitudes), then, for each predictor format::zero_run::measured_predictors names,
// visits the lane's nonzeros alone (a loop over the mask's set bits): the runs before them, their
// signs and the bit counts of their magnitudes add up in per-lane counters, 4 to a word, which 3
// shuffle steps sum over the segment; every lane then runs the shared choice for its sub-block.
// Writing visits the nonzeros again, each lane ORing its own fields in at offsets that measuring
// left it (the bits of the segment's earlier lanes, scanned), into shared memory where the stream
// fits (then copied out whole), into the tile itself otherwise. Nothing walks a sub-block value by
// value, and no lane waits on another's fields.
// Measure has three block barriers, stage_stream one (or write, where the stream does not fit).
// Decoding: decode.cuh.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclz/format/zero_run.hpp"
#include "ncclz/device/detail/decode_status.cuh"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail::tile::zero_run {

inline constexpr std::uint32_t kSubblocksPerWarp = format::zero_run::kTileSubblocks / kTileWarps;  // 4
static_assert(kSubblocksPerWarp * format::zero_run::kSubblockElements == kBlocksPerWarp * format::kBlockElements,
              "a warp's sub-blocks are the codes of its own stage");

/// Zero counts travel packed, (zero codes << 16) | zero deltas, one word a warp, and a tile's are
/// summed in that packing (warp::sum_of): each half sums to at most a tile's elements, so neither
/// carries into the other.
static_assert(format::kTileElements < (1u << 16), "a tile's zero counts fit a half word");

/// Per-tile scratch of measure and write (shared memory). What a lane keeps of its own block
/// between them sits in its warp's scratch words (scratch_word).
struct encode_shared {
  std::uint32_t least[kTileWarps][2];                  ///< per warp and predictor: least magnitude - 1, ~0u for none
  std::uint32_t zeros[kTileWarps];                     ///< per warp: (zero codes << 16) | zero deltas
  std::uint32_t min_magnitude[2];                      ///< per predictor
  std::uint32_t subblock_bits[2][format::zero_run::kTileSubblocks];  ///< per predictor and sub-block: the chosen form's bits
  std::uint32_t subblock_plan[2][format::zero_run::kTileSubblocks];  ///< the same: the plan, packed (pack_plan)
  std::uint32_t run_bits[2][format::zero_run::kTileSubblocks];       ///< the same, sparse: the runs' bits
  std::uint8_t group_width[2][format::zero_run::kTileSubblocks][8];  ///< the same: the widths of the magnitudes' groups of 32
  std::uint32_t subblock_start[format::zero_run::kTileSubblocks];    ///< the chosen predictor's: bit offset in the stream
  std::uint32_t predictor;                             ///< the chosen one
  std::uint32_t stream_bits;                           ///< its stream's length
};
static_assert(sizeof(encode_shared) <= 2048);

/// Stream words the encoding kernels give stage_stream where they have no other use for the space
/// (the ZeroRun coder's own; Adaptive lends its huffman scratch, which is larger): streams up to 8
/// bits a value are put together in shared memory and copied out whole.
inline constexpr std::uint32_t kStreamBufferWords = 2048;

/// Word k (0..127) of a warp's scratch while its tile is measured and written as a zero_run tile:
/// the padding of its stage's rows (words 32..35 of each row hold no code). Word k lies in bank
/// k % 32, so lane l's word 32j + l never conflicts with another lane's.
__device__ __forceinline__ std::uint32_t& scratch_word(warp_stage& stage, std::uint32_t k) {
  return reinterpret_cast<std::uint32_t&>(stage[k / 4][32 + k % 4]);
}
static_assert(kStageRow == 36 && kBlocksPerWarp * 4 == 128, "4 words of padding a row, 128 a warp");
/// Scratch words of lane l: l + kScratchMask, its nonzeros under the chosen predictor; l +
/// kScratchPlace and l + kScratchMore, where its fields go (measure_predictor); l + kScratchGroups,
/// measuring only: an OR of the magnitudes of group l % 8 of sub-block l / 8.
inline constexpr std::uint32_t kScratchMask = 0, kScratchPlace = 32, kScratchMore = 64, kScratchGroups = 96;

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

__device__ __forceinline__ std::uint32_t pack_plan(const format::zero_run::subblock_plan& p) {
  return p.form | (p.magnitude_form << 4) | (static_cast<std::uint32_t>(p.signs) << 8) | (p.nonzeros << 16);
}
__device__ __forceinline__ format::zero_run::subblock_plan unpack_plan(std::uint32_t v) {
  return {v & 0xFu, v >> 16, static_cast<format::zero_run::sign_mode>((v >> 8) & 0x3u), (v >> 4) & 0xFu};
}

/// The code before element `first` of the tile, which its delta is from (element 0's own code: its
/// delta from base is 0).
__device__ __forceinline__ std::int32_t code_before(warp_stage* stages, std::uint32_t first) {
  return code_of(staged(stages, first == 0 ? 0 : first - 1));
}

/// ORs the `bits` (<= 32) low bits of v (v < 2^bits) into the stream at bit `at`; the words are
/// zeroed beforehand, so zero bits cost nothing. `words` is shared memory (stage_stream) or the
/// tile (write, where the stream does not fit there).
__device__ __forceinline__ void or_bits(std::uint32_t* words, std::uint32_t at, std::uint32_t v, std::uint32_t bits) {
  if (v == 0) return;
  const std::uint32_t word = at / 32, shift = at % 32;
  atomicOr(words + word, v << shift);
  if (shift != 0 && shift + bits > 32) atomicOr(words + word + 1, v >> (32 - shift));
}

/// Lanes 8s..8s+7 of a warp hold the 8 blocks of one sub-block: a segment.
inline constexpr std::uint32_t kSegmentLanes = format::zero_run::kSubblockElements / format::kBlockElements;
static_assert(kSegmentLanes * kSubblocksPerWarp == 32, "a warp's sub-blocks are its 4 segments");

/// v summed over the lane's segment, in each of its lanes.
__device__ __forceinline__ std::uint32_t segment_sum(std::uint32_t v) {
#pragma unroll
  for (std::uint32_t d = kSegmentLanes / 2; d > 0; d /= 2) v += __shfl_xor_sync(warp::kFullMask, v, d);
  return v;
}
/// v summed over the segment's earlier lanes.
__device__ __forceinline__ std::uint32_t segment_exclusive_sum(std::uint32_t v) {
  const std::uint32_t pos = warp::lane_id() % kSegmentLanes;
  std::uint32_t through = v;
#pragma unroll
  for (std::uint32_t d = 1; d < kSegmentLanes; d *= 2) {
    const std::uint32_t up = __shfl_up_sync(warp::kFullMask, through, d);
    if (pos >= d) through += up;
  }
  return through - v;
}
/// The largest v of the segment's earlier lanes, -1 in its first lane.
__device__ __forceinline__ std::int32_t segment_exclusive_max(std::int32_t v) {
  const std::uint32_t pos = warp::lane_id() % kSegmentLanes;
#pragma unroll
  for (std::uint32_t d = 1; d < kSegmentLanes; d *= 2) {
    const std::int32_t up = __shfl_up_sync(warp::kFullMask, v, d);
    if (pos >= d) v = max(v, up);
  }
  const std::int32_t before = __shfl_up_sync(warp::kFullMask, v, 1);
  return pos == 0 ? -1 : before;
}

/// The 4 bits of v (v < 16) one a byte, bit b at bit 8b (the four shifted copies the product adds
/// do not overlap): four 8-bit counters to add a value's bits into at once.
__device__ __forceinline__ std::uint32_t byte_spread(std::uint32_t v) { return (v * 0x00204081u) & 0x01010101u; }
/// Counter b (0..3) of such a word.
__device__ __forceinline__ std::uint32_t byte_of(std::uint32_t w, std::uint32_t b) { return (w >> (8 * b)) & 0xFFu; }

/// |v| as an unsigned (2^31 for INT32_MIN).
__device__ __forceinline__ std::uint32_t magnitude_of(std::int32_t v) {
  return v < 0 ? 0u - static_cast<std::uint32_t>(v) : static_cast<std::uint32_t>(v);
}

/// Value i (zig-zagged) of a lane's block under `pred`: `row` its staged codes, `before` the code
/// before it.
__device__ __forceinline__ std::uint32_t block_value(const std::int32_t* row, std::uint32_t i, std::int32_t before, format::zero_run::predictor pred) {
  const std::int32_t q = code_of(row[i]);
  if (pred == format::zero_run::predictor::codes) return format::zero_run::predict(q, 0, pred);
  return format::zero_run::predict(q, i == 0 ? before : code_of(row[i == 0 ? 0 : i - 1]), pred);
}

/// What a lane keeps of one predictor's measure, for write.
struct lane_fields {
  std::uint32_t nonzeros;  ///< bit i: value i of the lane's block is nonzero
  std::uint32_t place;     ///< sparse: runs' bits of the segment's earlier lanes | their nonzeros << 16; dense: their groups' bits
  std::uint32_t more;      ///< sparse: Rice magnitudes' bits of the earlier lanes | (their last nonzero + 1) << 16; dense: the block's width
};

/// Measures the sub-block of the lane's segment under predictor p (lanes of every segment of the
/// warp together): the lane's nonzeros (mask `nonzeros`, of its block of `block_count` values in
/// `row`, the code before it `before`) visited alone, their sums over the segment, the shared
/// choice; the segment's first lane stores the choice in s, and the lane gets back where its
/// fields go. The same sums as format::zero_run::subblock_stats adds one value at a time: per lane, the runs'
/// bits and the stored magnitudes' low 16 bits in 8-bit counters (a lane has at most 32 values)
/// and the sum of their high bits; summed over the segment, the run counters stay under 128 (a
/// run with bit b set is a run of 2^b zeros or more, plus its nonzero), the magnitudes' may reach
/// 256 and are summed in 16 bits at the last step. The magnitudes' groups of 32 (by rank in the
/// sub-block; a lane's nonzeros fall in two at most) are ORed in the warp's scratch words.
__device__ __forceinline__ lane_fields measure_predictor(encode_shared& s, warp_stage& stage, std::uint32_t nonzeros,
                                                         std::int32_t before, std::uint32_t block_count, std::uint32_t p,
                                                         std::uint32_t min_magnitude) {
  const unsigned lane = warp::lane_id();
  const std::uint32_t pos = lane % kSegmentLanes, segment = lane - pos;
  const std::uint32_t b = threadIdx.x / 32 * kSubblocksPerWarp + lane / kSegmentLanes;
  const auto pred = static_cast<format::zero_run::predictor>(p);
  const std::int32_t* const row = stage[lane];
  const auto count = static_cast<std::uint32_t>(__popc(nonzeros));
  const std::uint32_t rank_before = segment_exclusive_sum(count);
  const std::int32_t last_before =
      segment_exclusive_max(nonzeros != 0 ? static_cast<std::int32_t>(32 * pos + 31 - __clz(static_cast<int>(nonzeros))) : -1);
  const std::uint32_t group = rank_before / 32;
  std::uint32_t any = 0, negatives = 0, high = 0, group_or = 0, next_group_or = 0;
  std::uint32_t run_counts[2] = {0, 0}, bit_counts[4] = {0, 0, 0, 0};
  std::int32_t last = last_before;
  std::uint32_t rank = rank_before;
  for (std::uint32_t left = nonzeros; left != 0; left &= left - 1, ++rank) {
    const auto i = static_cast<std::uint32_t>(__ffs(static_cast<int>(left)) - 1);
    const std::uint32_t z = block_value(row, i, before, pred);
    const auto at = static_cast<std::int32_t>(32 * pos + i);
    const auto run = static_cast<std::uint32_t>(at - last - 1);  // < 256: within the sub-block
    last = at;
    any |= z;
    negatives += z & 1u;
    run_counts[0] += byte_spread(run & 15u);
    run_counts[1] += byte_spread(run >> 4);
    const std::uint32_t m = format::zero_run::magnitude(z) - min_magnitude;
#pragma unroll
    for (std::uint32_t t = 0; t < 4; ++t) bit_counts[t] += byte_spread((m >> (4 * t)) & 15u);
    high += m >> 16;
    if (rank / 32 == group) {
      group_or |= m;
    } else {
      next_group_or |= m;
    }
  }
  // The groups' ORs: the lane's word (group pos of its sub-block) zeroed, the lanes' ORs in.
  std::uint32_t& group_word = scratch_word(stage, kScratchGroups + lane);
  group_word = 0;
  __syncwarp();
  if (count > 0) atomicOr(&scratch_word(stage, kScratchGroups + segment + group), group_or);
  if (next_group_or != 0) atomicOr(&scratch_word(stage, kScratchGroups + segment + group + 1), next_group_or);
  __syncwarp();
  const std::uint32_t group_width = format::zero_run::value_width(group_word);

  // The sub-block's sums, in every lane of the segment, kept as packed as they were added (the
  // shared choice reads the counts out of them).
  const std::uint32_t width = format::zero_run::value_width(any);
  const std::uint32_t dense_bits = block_count > 0 ? format::zero_run::kWidthBits + block_count * width : 0u;
  const std::uint32_t counts = segment_sum(count << 16 | negatives);
  const std::uint32_t c = counts >> 16;
  const std::uint32_t runs_low = segment_sum(run_counts[0]), runs_high = segment_sum(run_counts[1]);  // each under 128
  const auto run_bit = [&](std::uint32_t bit) { return byte_of(bit < 4 ? runs_low : runs_high, bit % 4); };
  std::uint32_t even[4], odd[4];  // bits 4t and 4t + 2, 4t + 1 and 4t + 3 of the magnitudes: 16-bit counts
#pragma unroll
  for (std::uint32_t t = 0; t < 4; ++t) {
    std::uint32_t v = bit_counts[t];
    v += __shfl_xor_sync(warp::kFullMask, v, 4);
    v += __shfl_xor_sync(warp::kFullMask, v, 2);  // 4 lanes: at most 128 a counter
    even[t] = v & 0x00FF00FFu;
    odd[t] = (v >> 8) & 0x00FF00FFu;
    even[t] += __shfl_xor_sync(warp::kFullMask, even[t], 1);
    odd[t] += __shfl_xor_sync(warp::kFullMask, odd[t], 1);  // 8 lanes: up to 256
  }
  const auto low_bit = [&](std::uint32_t bit) {
    const std::uint32_t w = bit % 2 == 0 ? even[bit / 4] : odd[bit / 4];
    return bit % 4 < 2 ? w & 0xFFFFu : w >> 16;
  };
  const std::uint32_t in_group = c > 32 * pos ? min(c - 32 * pos, 32u) : 0u;
  const std::uint32_t grouped_bits = segment_sum(in_group > 0 ? format::zero_run::kWidthBits + in_group * group_width : 0u);
  const format::zero_run::choice magnitudes = format::zero_run::choose_magnitude_form(c, segment_sum(high), grouped_bits, low_bit);
  const format::zero_run::choice choice = format::zero_run::choose_form(c, counts & 0xFFFFu, segment_sum(dense_bits), run_bit, magnitudes);
  const std::uint32_t k = choice.form, j = magnitudes.form;
  const bool dense = k == format::zero_run::kDense;
  if (pos == 0) {
    s.subblock_bits[p][b] = static_cast<std::uint32_t>(choice.bits);  // <= kMaxSubblockBits
    s.subblock_plan[p][b] = pack_plan({k, c, format::zero_run::signs_of(c, counts & 0xFFFFu), c > 0 ? j : 0u});
    s.run_bits[p][b] = dense ? 0u : format::zero_run::run_shifted(run_bit, k) + c * (1 + k);
  }
  s.group_width[p][b][pos] = static_cast<std::uint8_t>(group_width);

  // The lane's own bits: its runs in Rice(k), its magnitudes in Rice(j) (in groups they are placed
  // by rank), from its counters; then the bits of the segment's earlier lanes.
  std::uint32_t lane_runs = format::zero_run::run_shifted([&](std::uint32_t bit) { return byte_of(run_counts[bit / 4], bit % 4); }, k);
  std::uint32_t lane_magnitudes = 0;  // the sum of (m mod 2^16) >> j
#pragma unroll
  for (std::uint32_t bit = 16; bit-- > 0;) {
    lane_magnitudes = bit >= j ? 2 * lane_magnitudes + byte_of(bit_counts[bit / 4], bit % 4) : lane_magnitudes;
  }
  // The chosen Rice(j)'s bits are few (under the groups' bits), so high << (16 - j) is too.
  lane_runs += count * (1 + k);
  lane_magnitudes = j < format::zero_run::kMagnitudeGroups ? lane_magnitudes + (high << (16 - j)) + count * (1 + j) : 0u;
  const std::uint32_t place = segment_exclusive_sum(dense ? dense_bits : lane_runs);
  const std::uint32_t magnitudes_before = segment_exclusive_sum(lane_magnitudes);
  if (dense) return {nonzeros, place, width};
  return {nonzeros, place | rank_before << 16, magnitudes_before | static_cast<std::uint32_t>(last_before + 1) << 16};
}

/// ORs the fields of the lane's block, as measure chose and placed them, into the zeroed stream
/// `words` (the sub-block's headers by its segment's lanes: the form, count, sign mode and
/// magnitude form by the first, group t's width by lane t). Warp-collective operations: none.
__device__ __forceinline__ void put_fields(const encode_shared& s, warp_stage* stages, std::uint32_t elements, std::uint32_t* words) {
  const unsigned lane = warp::lane_id();
  const std::uint32_t pos = lane % kSegmentLanes;
  const std::uint32_t b = threadIdx.x / 32 * kSubblocksPerWarp + lane / kSegmentLanes;
  const std::uint32_t p = s.predictor;
  const format::zero_run::subblock_plan plan = unpack_plan(s.subblock_plan[p][b]);
  if (b >= format::zero_run::subblock_count(elements) || plan.nonzeros == 0) return;
  warp_stage& stage = stages[threadIdx.x / 32];
  const std::uint32_t first = threadIdx.x * 32;  // the lane's block: block threadIdx.x of the tile
  const std::uint32_t block_count = first < elements ? min(elements - first, 32u) : 0u;
  const std::uint32_t nonzeros = scratch_word(stage, kScratchMask + lane);
  const std::uint32_t place = scratch_word(stage, kScratchPlace + lane), more = scratch_word(stage, kScratchMore + lane);
  const std::int32_t before = code_before(stages, first);
  const std::int32_t* const row = stage[lane];
  const auto pred = static_cast<format::zero_run::predictor>(p);
  const std::uint32_t start = s.subblock_start[b];
  if (pos == 0) or_bits(words, start, plan.form, format::zero_run::kFormBits);
  if (plan.form == format::zero_run::kDense) {
    // The lane's block is a group: its width, then its values in it, bits [at, end) that are the
    // lane's alone but for the words at either end. Put together a word at a time: the words
    // inside stored, the two at the ends ORed.
    if (block_count == 0) return;
    const std::uint32_t width = more, at = start + format::zero_run::kFormBits + place;
    const std::uint32_t end = at + format::zero_run::kWidthBits + block_count * width, first_word = at / 32, last_word = (end - 1) / 32;
    std::uint32_t word = first_word, filled = at % 32 + format::zero_run::kWidthBits;  // bits in `pending`, from word's bit 0
    std::uint64_t pending = std::uint64_t{width} << (at % 32);
    const auto emit = [&] {
      const auto bits = static_cast<std::uint32_t>(pending);
      if (word == first_word || word == last_word) {
        if (bits != 0) atomicOr(words + word, bits);
      } else {
        words[word] = bits;
      }
      ++word;
      pending >>= 32;
      filled -= 32;
    };
    if (filled >= 32) emit();
    if (width > 0) {
#pragma unroll
      for (std::uint32_t i = 0; i < 32; ++i) {
        if (i < block_count) {
          const std::uint32_t z = (nonzeros >> i & 1u) != 0 ? block_value(row, i, before, pred) : 0u;
          pending |= std::uint64_t{z} << filled;  // filled < 32, z < 2^width
          filled += width;
          if (filled >= 32) emit();
        }
      }
    }
    if (filled > 0) emit();  // the last word's bits
    return;
  }
  const std::uint32_t k = plan.form, j = plan.magnitude_form, c = plan.nonzeros;
  const bool mixed = plan.signs == format::zero_run::sign_mode::mixed, grouped = j == format::zero_run::kMagnitudeGroups;
  const std::uint32_t signs_at = start + format::zero_run::kFormBits + format::zero_run::kCountBits + s.run_bits[p][b];
  const std::uint32_t form_at = signs_at + format::zero_run::kSignModeBits + (mixed ? c : 0u);
  const std::uint32_t magnitudes_at = form_at + format::zero_run::kMagnitudeFormBits;
  if (pos == 0) {
    or_bits(words, start + format::zero_run::kFormBits, c - 1, format::zero_run::kCountBits);
    or_bits(words, signs_at, static_cast<std::uint32_t>(plan.signs), format::zero_run::kSignModeBits);
    or_bits(words, form_at, j, format::zero_run::kMagnitudeFormBits);
  }
  const std::uint32_t rank_before = place >> 16, group = rank_before / 32;
  // Groups of 32 magnitudes: where the lane's two (at most) start and their widths; lane t writes
  // group t's width.
  std::uint32_t group_at = 0, group_width = 0, next_group_at = 0, next_group_width = 0;
  if (grouped) {
    std::uint32_t at = magnitudes_at;
    for (std::uint32_t t = 0; t * 32 < c; ++t) {
      const std::uint32_t w = s.group_width[p][b][t];
      if (t == pos) or_bits(words, at, w, format::zero_run::kWidthBits);
      if (t == group) {
        group_at = at;
        group_width = w;
      }
      if (t == group + 1) {
        next_group_at = at;
        next_group_width = w;
      }
      at += format::zero_run::kWidthBits + min(c - t * 32, 32u) * w;
    }
  }
  const std::uint32_t min_magnitude = s.min_magnitude[p];
  std::uint32_t run_at = start + format::zero_run::kFormBits + format::zero_run::kCountBits + (place & 0xFFFFu);
  std::uint32_t magnitude_at = magnitudes_at + (more & 0xFFFFu);
  std::int32_t last = static_cast<std::int32_t>(more >> 16) - 1;
  std::uint32_t rank = rank_before;
  for (std::uint32_t left = nonzeros; left != 0; left &= left - 1, ++rank) {
    const auto i = static_cast<std::uint32_t>(__ffs(static_cast<int>(left)) - 1);
    const std::uint32_t z = block_value(row, i, before, pred);
    const auto at = static_cast<std::int32_t>(32 * pos + i);
    const auto run = static_cast<std::uint32_t>(at - last - 1);
    last = at;
    // A Rice code: q zeros (already there), a one, the k low bits.
    or_bits(words, run_at + (run >> k), (run & format::zero_run::low_mask(k)) << 1 | 1u, k + 1);
    run_at += (run >> k) + 1 + k;
    if (mixed) or_bits(words, signs_at + format::zero_run::kSignModeBits + rank, z & 1u, 1);
    const std::uint32_t m = format::zero_run::magnitude(z) - min_magnitude;
    if (grouped) {
      const bool next = rank / 32 != group;
      const std::uint32_t w = next ? next_group_width : group_width;
      or_bits(words, (next ? next_group_at : group_at) + format::zero_run::kWidthBits + (rank % 32) * w, m, w);
    } else {
      or_bits(words, magnitude_at + (m >> j), (m & format::zero_run::low_mask(j)) << 1 | 1u, j + 1);
      magnitude_at += (m >> j) + 1 + j;
    }
  }
}

}  // namespace detail

/// Chooses the predictor and each sub-block's form exactly as the host reference does; returns the
/// tile's layout, the same in every thread. Called by all kTileThreads threads with block-uniform
/// arguments once the tile's codes are staged (staged(stages, e) for e < elements, kOutlierCode
/// for an outlier, whose code counts as 0; 0 past the end in a warp that holds elements) and a
/// __syncthreads has passed. Leaves the codes as they were (and the stage's padding holding what
/// write needs). Ends on a barrier.
template <class T>
__device__ plan measure(encode_shared& s, warp_stage* stages, std::uint32_t elements, std::uint32_t outliers) {
  using detail::code_of;
  const unsigned lane = warp::lane_id();
  const unsigned warp_index = threadIdx.x / 32;
  const std::uint32_t subblocks = format::zero_run::subblock_count(elements);
  warp_stage& stage = stages[warp_index];
  const std::uint32_t first = threadIdx.x * 32;  // the lane's block: block threadIdx.x of the tile
  const std::uint32_t block_count = first < elements ? min(elements - first, 32u) : 0u;
  const std::int32_t before = block_count > 0 ? detail::code_before(stages, first) : 0;

  // The lane's values under both predictors: which are nonzero, and the least magnitude less 1
  // (~0u for none: a zero value's magnitude less 1 wraps there).
  std::uint32_t nonzero_codes = 0, nonzero_deltas = 0, least_codes = ~0u, least_deltas = ~0u;
  const std::int32_t* const row = stage[lane];
  auto take = [&](std::int32_t q, std::int32_t& prev, std::uint32_t i) {
    const std::int32_t d = static_cast<std::int32_t>(static_cast<std::uint32_t>(q) - static_cast<std::uint32_t>(prev));
    prev = q;
    nonzero_codes |= q != 0 ? 1u << i : 0u;
    nonzero_deltas |= d != 0 ? 1u << i : 0u;
    least_codes = min(least_codes, detail::magnitude_of(q) - 1u);
    least_deltas = min(least_deltas, detail::magnitude_of(d) - 1u);
  };
  if (block_count == 32) {
    std::int32_t prev = before;
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      const int4 codes4 = *reinterpret_cast<const int4*>(row + 4 * c);
      take(code_of(codes4.x), prev, 4 * c);
      take(code_of(codes4.y), prev, 4 * c + 1);
      take(code_of(codes4.z), prev, 4 * c + 2);
      take(code_of(codes4.w), prev, 4 * c + 3);
    }
  } else if (block_count > 0) {  // the tile's last block
    std::int32_t prev = before;
    for (std::uint32_t i = 0; i < block_count; ++i) take(code_of(row[i]), prev, i);
  }
  const std::uint32_t zeros = (block_count - static_cast<std::uint32_t>(__popc(nonzero_codes))) << 16 |
                              (block_count - static_cast<std::uint32_t>(__popc(nonzero_deltas)));
  {
    const std::uint32_t warp_codes = __reduce_min_sync(warp::kFullMask, least_codes);
    const std::uint32_t warp_deltas = __reduce_min_sync(warp::kFullMask, least_deltas);
    const std::uint32_t warp_zeros = __reduce_add_sync(warp::kFullMask, zeros);  // each count <= 1024
    if (lane == 0) {
      s.least[warp_index][0] = warp_codes;
      s.least[warp_index][1] = warp_deltas;
      s.zeros[warp_index] = warp_zeros;
    }
  }
  __syncthreads();

  const std::uint32_t tile_zeros = warp::sum_of(s.zeros);
  const std::uint32_t measured = format::zero_run::measured_predictors(tile_zeros >> 16, tile_zeros & 0xFFFFu, elements);
  std::uint32_t min_magnitude[2];
#pragma unroll
  for (std::uint32_t p = 0; p < 2; ++p) {
    std::uint32_t least = ~0u;
#pragma unroll
    for (int w = 0; w < kTileWarps; ++w) least = min(least, s.least[w][p]);
    min_magnitude[p] = least == ~0u ? 1u : least + 1;  // at most 2^31
  }
  if (threadIdx.x == 0) {
    s.min_magnitude[0] = min_magnitude[0];
    s.min_magnitude[1] = min_magnitude[1];
  }
  // Each measured predictor, the warp's 4 sub-blocks at once (one copy of the code for both).
  detail::lane_fields codes_fields{}, deltas_fields{};
#pragma unroll 1
  for (std::uint32_t p = 0; p < 2; ++p) {
    if ((measured >> p & 1u) == 0) continue;
    const detail::lane_fields f = detail::measure_predictor(s, stage, p ? nonzero_deltas : nonzero_codes, before, block_count, p,
                                                            p ? min_magnitude[1] : min_magnitude[0]);
    if (p) {
      deltas_fields = f;
    } else {
      codes_fields = f;
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
  // What write needs of the lane's block, under the chosen predictor.
  const detail::lane_fields chosen = s.predictor ? deltas_fields : codes_fields;
  scratch_word(stage, kScratchMask + lane) = chosen.nonzeros;
  scratch_word(stage, kScratchPlace + lane) = chosen.place;
  scratch_word(stage, kScratchMore + lane) = chosen.more;
  const format::zero_run::tile_layout l = format::zero_run::tile_layout_of(subblocks, s.stream_bits, outliers, sizeof(T));
  return {l.total, l.outlier_index, l.outlier_values};
}

/// The tile's zero deltas (element 0's counts), every element's, as measure counted them.
__device__ __forceinline__ std::uint32_t measured_zero_deltas(const encode_shared& s) {
  return warp::sum_of(s.zeros) & 0xFFFFu;
}

/// Puts the stream of the tile measure measured together in `buffer` (shared memory, `capacity`
/// words) where it fits: zeroes it, a barrier, then each lane ORs its fields in. Returns whether
/// it fit (block-uniform); write copies it out after a barrier of the caller's. All kTileThreads
/// threads, after measure, with the stage as measure left it. Writing no global memory, it can
/// run before the tile's place is known.
__device__ __forceinline__ bool stage_stream(const encode_shared& s, warp_stage* stages, std::uint32_t elements,
                                             std::uint32_t* buffer, std::uint32_t capacity) {
  const std::uint32_t words = (s.stream_bits + 31) / 32;
  if (words > capacity) return false;
  for (std::uint32_t i = threadIdx.x; i < words; i += kTileThreads) buffer[i] = 0;
  __syncthreads();
  detail::put_fields(s, stages, elements, buffer);
  return true;
}

/// Writes the tile measure measured (s and the stage as it left them) at `tile` (8-byte aligned,
/// not zeroed): the tile header (mode 3, the outlier count, base), the zero_run header, the
/// sub-block lengths, the stream (copied from `stream_buffer`, stage_stream's, after a barrier;
/// put together in place where that is null) and every padding byte before the outlier_index (the
/// layout is worked out again from s: the same numbers); not the outliers nor what follows them.
/// All kTileThreads threads.
template <class T>
__device__ void write(const encode_shared& s, warp_stage* stages, std::uint32_t elements, std::uint32_t outliers,
                      std::byte* tile, const std::uint32_t* stream_buffer) {
  const std::uint32_t subblocks = format::zero_run::subblock_count(elements);
  const format::zero_run::tile_layout l = format::zero_run::tile_layout_of(subblocks, s.stream_bits, outliers, sizeof(T));
  const std::uint32_t p = s.predictor;
  const auto pred = static_cast<format::zero_run::predictor>(p);
  if (threadIdx.x == 0) {
    const std::int32_t base = pred == format::zero_run::predictor::deltas && elements > 0 ? detail::code_of(staged(stages, 0)) : 0;
    *reinterpret_cast<format::tile_header*>(tile) = format::tile_header{format::zero_run::kTileMode, 0, static_cast<std::uint16_t>(outliers), base};
    *reinterpret_cast<format::zero_run::zero_run_header*>(tile + sizeof(format::tile_header)) =
        format::zero_run::zero_run_header{static_cast<std::uint8_t>(p), 0, 0, s.min_magnitude[p]};
  }
  // Sub-block lengths, then zeros up to the stream (u16 slots both).
  auto* lengths = reinterpret_cast<std::uint16_t*>(tile + l.subblock_bits);
  if (threadIdx.x < (l.stream - l.subblock_bits) / 2) {
    lengths[threadIdx.x] = static_cast<std::uint16_t>(threadIdx.x < subblocks ? s.subblock_bits[p][threadIdx.x] : 0u);
  }
  // The stream's words, its padding included.
  auto* words = reinterpret_cast<std::uint32_t*>(tile + l.stream);
  const auto stream_words = static_cast<std::uint32_t>((l.outlier_index - l.stream) / 4);
  if (stream_buffer != nullptr) {
    for (std::uint32_t i = threadIdx.x; i < stream_words; i += kTileThreads) words[i] = stream_buffer[i];
    return;
  }
  for (std::uint32_t i = threadIdx.x; i < stream_words; i += kTileThreads) words[i] = 0;  // sub-blocks share their end words
  __syncthreads();
  detail::put_fields(s, stages, elements, words);
}

}  // namespace device::detail::tile::zero_run
NCCLZ_END_KERNEL_NAMESPACE
