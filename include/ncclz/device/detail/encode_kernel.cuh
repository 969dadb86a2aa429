// The encode kernel of the chunk format (ncclz/format.hpp). One thread block codes one tile of
// 8192 values; each of its 8 warps codes 32 consecutive blocks of 32 values. The tile modes' own
// steps are in tile/ (fixed_length, huffman, zero_run); the decoder is decode_kernel.cuh.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ncclz/block/block_lookback.cuh"
#include "ncclz/codec.hpp"
#include "ncclz/config.hpp"
#include "ncclz/device/detail/block_scales.cuh"
#include "ncclz/device/detail/range_kernel.cuh"
#include "ncclz/device/detail/tile/fixed_length.cuh"
#include "ncclz/device/detail/tile/huffman/encode.cuh"
#include "ncclz/device/detail/tile/zero_run/encode.cuh"
#include "ncclz/device/detail/tile_check.cuh"
#include "ncclz/device/detail/tile_io.cuh"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/format.hpp"
#include "ncclz/tuning/adaptive.hpp"
#include "ncclz/tuning/kernels.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail {

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
// fit fewer blocks an SM (docs/design.md, "Tuning constants").
struct encode_shared_huffman : encode_shared_common {
  tile::huffman::encode_shared huffman;
  std::uint32_t parked_place[kTileThreads];
};
// Coders with zero_run tiles put a tile's stream together in shared memory where it fits
// (tile::zero_run::stage_stream): the ZeroRun coder in words of its own, Adaptive in its huffman scratch,
// which a zero_run tile leaves unused once its mode is chosen.
struct encode_shared_zero_run : encode_shared_common {
  tile::zero_run::encode_shared zero_run;
  std::uint32_t parked_place[kTileThreads];
  std::uint32_t zero_run_stream[tile::zero_run::kStreamBufferWords];
};
struct encode_shared_adaptive : encode_shared_common {
  union {
    tile::huffman::encode_shared huffman;
    std::uint32_t zero_run_stream[sizeof(tile::huffman::encode_shared) / 4];
  };
  tile::zero_run::encode_shared zero_run;
  std::uint32_t parked_place[kTileThreads];
};
static_assert(sizeof(tile::huffman::encode_shared) / 4 >= tile::zero_run::kStreamBufferWords, "Adaptive stages zero_run streams as ZeroRun does");
template <class Coder>
using encode_shared = std::conditional_t<
    Coder::tries_huffman && Coder::tries_zero_run, encode_shared_adaptive,
    std::conditional_t<Coder::tries_huffman, encode_shared_huffman,
                       std::conditional_t<Coder::tries_zero_run, encode_shared_zero_run, encode_shared_common>>>;


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
__global__ void __launch_bounds__(kTileThreads, tuning::encode_kernel_policy<typename Codec::coder, T>::min_blocks)
    encode_kernel(Source in, std::uint64_t count,
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
  if (warp_index == 0 && (tile == 0 || kChecked)) {
    // The header's check (each tile's checksum includes it), a word a lane of warp 0: thread 0
    // alone delayed its warp's first loads in every tile (docs/collectives.md, "What checksums cost").
    const format::chunk_header h = chunk_header_fields_of<Codec, T>(count, p);
    std::uint32_t words[format::kHeaderWords];
    memcpy(words, &h, sizeof words);
    std::uint32_t word = 0;
#pragma unroll
    for (std::uint32_t i = 0; i < format::kHeaderWords; ++i) word = i == lane ? words[i] : word;
    const std::uint32_t check = warp_header_check_of(word);
    if (lane == 0) s.header_check = check;
    static_assert(offsetof(format::chunk_header, header_check) == 4 * (format::kHeaderWords - 1), "the check is the last word");
    // Tile 0 writes every word but payload_bytes', which the last tile writes.
    if (tile == 0 && lane < format::kHeaderWords && !format::is_payload_word(lane)) {
      reinterpret_cast<std::uint32_t*>(out)[lane] = lane == format::kHeaderWords - 1 ? check : word;
    }
  }
  if (tile == 0 && threadIdx.x == 0) {
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
  // The tile's first code in warp 0, the only warp that uses it. Every warp reads its own stage:
  // read only in warp 0, the load (of a fixed address there) was made by every warp and discarded,
  // racing with warp 0's staging. A warp past the tile's end staged nothing and reads nothing.
  const std::int32_t base = warp_count == 0 ? 0 : code_or_zero(stage[0][0]);
  // The code before this lane's block: the first delta's prediction.
  const std::int32_t block_before =
      warp_count == 0 ? 0 : (lane > 0 ? code_or_zero(stage[lane - 1][31]) : (warp_index > 0 ? before_warp : base));
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
        if (tuning::in_selector_sample(static_cast<std::uint32_t>(i))) {  // blocks start at multiples of 32
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
  if constexpr (kParkPlace) s.parked_place[threadIdx.x] = tile::fixed_length::park_place(width, packed_through - packed);
  if constexpr (Coder::tries_zero_run) {
    const std::uint32_t zeros = __reduce_add_sync(warp::kFullMask, (sampled_zero_codes << 16) | sampled_zero_deltas);
    if (lane == 0) s.warp_zeros[warp_index] = zeros;
  }
  if constexpr (Coder::tries_huffman) tile::huffman::begin_estimate(s.huffman);
  __syncthreads();

  const tile::fixed_length::block_place trial_place = tile::fixed_length::place_block(s.warp_totals, width, packed_through - packed, warp_index);
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
  // that is a fixed_length tile the coder weighs (tuning::entropy_bar).
  std::uint64_t entropy_bar = kNone;
  if (Coder::tries_fixed_length || !Source::allows_raw) {
    mode = tile_mode::fixed_length;
    tile_bytes = trial_layout.total;
    entropy_bar = Coder::tries_fixed_length ? tuning::entropy_bar(trial_layout.total) : trial_layout.total;
  }
  // This block's deltas (or codes) into zz again, from the stage's codes: where a step would hold
  // them through its own work instead, they took registers there and spilled.
  [[maybe_unused]] const auto zz_from_stage = [&](bool codes) {
    std::int32_t prev = block_before;
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const std::int32_t q = code_or_zero(stage[lane][i]);
      zz[i] = static_cast<std::uint32_t>(i) < block_count
                  ? format::zero_run::predict(q, prev, codes ? format::zero_run::predictor::codes : format::zero_run::predictor::deltas)
                  : 0u;
      prev = q;
    }
    // The tile's first value is not coded (base holds it): emit_stream needs its zz 0, as its delta is.
    if (codes && threadIdx.x == 0) zz[0] = 0u;
  };
  [[maybe_unused]] tile::zero_run::plan zero_run_plan{kNone, 0, 0};
  [[maybe_unused]] bool huffman_cannot_win = false;
  if constexpr (Coder::tries_zero_run) {
    // The sample first; where it comes too close to half to tell, every element's zeros.
    const std::uint32_t sampled = warp::sum_of(s.warp_zeros);
    const tuning::zero_run_sample verdict = tuning::zero_run_verdict(sampled >> 16, sampled & 0xffffu, elements);
    bool measure_zero_run = std::is_same_v<typename Coder::strategy, ZeroRun> || verdict == tuning::zero_run_sample::measure;
    if (kCodeTiles && !measure_zero_run && verdict == tuning::zero_run_sample::count_all) {
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
      measure_zero_run = tuning::zero_run_worth_trying(all >> 16, all & 0xffffu, all_runs, elements);
    }
    if (kCodeTiles && measure_zero_run) {
      zero_run_plan = tile::zero_run::measure<T>(s.zero_run, s.stage, elements, outliers);
      // The deltas again from the stage (measuring leaves it as it was): holding them through
      // measure cost 32 registers there and spilled (ncu, ptxas: 176 bytes).
      if constexpr (Coder::tries_huffman || Coder::tries_fixed_length) zz_from_stage(false);
      // Some coded deltas zero and some not (zero_deltas counts element 0's, which huffman does
      // not code): its tile costs a bit a value at least. Where zero_run is already smaller,
      // huffman would lose (ties go to huffman: strictly smaller), so its histogram and codebook
      // are skipped; the chosen bytes are the same.
      const std::uint32_t all_zero_deltas = tile::zero_run::measured_zero_deltas(s.zero_run);
      huffman_cannot_win = all_zero_deltas >= 2 && all_zero_deltas < elements &&
                           zero_run_plan.bytes < format::huffman::least_tile_bytes(elements, outliers, sizeof(T));
    }
  }
  [[maybe_unused]] tile::huffman::plan huffman_plan{};
  [[maybe_unused]] std::uint32_t huffman_offset = 0;
  // Blockwise codes (FixedRate) try huffman on the codes as well as on their deltas
  // (format::huffman::kCodesPredictor): the gate's sample of each decides, the codes where strictly
  // smaller (the host reference's rule). zz then holds the codes until the tile's mode is known.
  constexpr bool kChoosePredictor = Coder::tries_huffman && is_blockwise_v<Q>;
  [[maybe_unused]] bool zz_codes = false;
  if constexpr (Coder::tries_huffman) {
    // Adaptive estimates only where its gate's sample does not already put huffman over what it
    // must beat (tuning::huffman_gate_tile_bytes).
    constexpr bool kGate = Coder::tries_fixed_length;
    const std::uint64_t to_beat = min(entropy_bar, zero_run_plan.bytes);
    // zero_run's shortcut reasons on deltas; a codes tile can be smaller than it allows.
    if (kChoosePredictor) huffman_cannot_win = false;
    std::uint64_t gate = 0;
    if (kChoosePredictor && kCodeTiles) {
      gate = tile::huffman::gate_tile_bytes<T>(s.huffman, zz, block_count, elements, outliers);
      tile::huffman::begin_estimate(s.huffman);  // the gate's reads of the histogram are behind its barriers
      __syncthreads();
      zz_from_stage(true);
      const std::uint64_t codes_gate = tile::huffman::gate_tile_bytes<T>(s.huffman, zz, block_count, elements, outliers);
      zz_codes = codes_gate < gate;
      if (zz_codes) {
        gate = codes_gate;
      } else {
        // The deltas win: their gate is known, and the estimate, if the tile gets that far,
        // counts all of them afresh (a third pass over the sample would be paid on every tile).
        zz_from_stage(false);
      }
    }
    if (kCodeTiles && !huffman_cannot_win &&
        (!kGate || (kChoosePredictor ? gate : tile::huffman::gate_tile_bytes<T>(s.huffman, zz, block_count, elements, outliers)) < to_beat)) {
      // The histogram holds the sample of what zz holds, except where the deltas beat the codes.
      if (kChoosePredictor && !zz_codes) {
        tile::huffman::begin_estimate(s.huffman);
        __syncthreads();
      }
      const tile::huffman::estimate e =
          tile::huffman::estimate_tile<T>(s.huffman, zz, block_count, elements, outliers, kChoosePredictor ? zz_codes : kGate);
      if (e.bytes < to_beat) {
        // Past either, the tile is of no use: it must come under the bar, and zero_run wins a tie
        // only where it is strictly smaller (below).
        const std::uint64_t give_up_at = min(entropy_bar, zero_run_plan.bytes == kNone ? kNone : zero_run_plan.bytes + 1);
        huffman_plan = tile::huffman::build_tile<T>(s.huffman, zz, block_count, e, elements, outliers, huffman_offset, give_up_at);
        huffman_plan.codes = zz_codes;
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
  if constexpr (kChoosePredictor) {
    if (zz_codes && mode == tile_mode::fixed_length) zz_from_stage(false);  // fixed_length codes deltas
  }

  const tile::fixed_length::block_place place = [&] {
    if constexpr (kParkPlace) return tile::fixed_length::place_parked(s.warp_totals, s.parked_place[threadIdx.x], warp_index);
    else return trial_place;
  }();
  const std::uint32_t outliers_before = place.outliers_before;

  // Publish the size at once, stage what needs no offset, then learn the offset: the tiles
  // before have published theirs meanwhile, more often than not.
  if (threadIdx.x == 0) block::lookback_publish(tile_words, tile, tile_bytes);
  // Warp 0 learns the tile's offset and enters it in the table (and the header, for the last tile).
  const auto learn_offset = [&] {
    const std::uint64_t before = block::lookback_exclusive_prefix(tile_words, tile, tile_bytes);
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
          tile::zero_run::stage_stream(s.zero_run, s.stage, elements, s.zero_run_stream, sizeof(s.zero_run_stream) / 4);
      if (warp_index == 0) learn_offset();
      __syncthreads();
      std::byte* const dst = out + s.tile_begin;
      tile::zero_run::write<T>(s.zero_run, s.stage, elements, outliers, dst, staged ? s.zero_run_stream : nullptr);
      write_outliers<T>(in, dst, zero_run_plan.outlier_index, zero_run_plan.outlier_values, zero_run_plan.bytes, outliers,
                        outliers_before, outlier_bits, first, tile_first);
      if constexpr (kChecked) seal(0u, dst, 0, zero_run_plan.bytes);  // its words, read back
      return;
    }
  }
  [[maybe_unused]] const std::uint32_t* staged_stream = nullptr;
  // A huffman tile's stream is staged in shared memory where it fits (nearly always).
  [[maybe_unused]] const auto stream_staged = [&] { return tile::huffman::stream_words(huffman_plan) <= sizeof(s.stage) / 4; };
  if constexpr (Coder::tries_huffman) {
    auto* scratch = reinterpret_cast<std::uint32_t*>(s.stage);  // free: a huffman tile's deltas are in zz
    if (mode == tile_mode::huffman && stream_staged()) {
      tile::huffman::emit_stream(s.huffman, huffman_plan, zz, block_count, huffman_offset, scratch);
      staged_stream = scratch;
    }
  }
  // A fixed_length tile's planes go to the warp's own stage (its codes are in zz now; a warp's
  // planes take at most 32 words a block, 1024, and the stage holds 1152): the bit transposition
  // then overlaps the look-back's wait instead of following it. For doubles warp 0 looks back
  // first and transposes after, which publishes the tile's inclusive prefix sooner (faster for
  // 8-byte types only; docs/design.md, "Tuning constants").
  // The block's planes pointer is spelled out per branch on purpose: each spelling compiles to
  // the code that was measured and GPU-tested (one shared variable changes FixedLength f16's).
  constexpr bool kWarp0PlanesAfterLookback = sizeof(T) == 8;
  const bool stage_planes = mode == tile_mode::fixed_length && warp_count > 0;
  [[maybe_unused]] std::uint32_t* const staged_block_planes = kWarp0PlanesAfterLookback ? reinterpret_cast<std::uint32_t*>(stage) + place.words_before : nullptr;
  if constexpr (kWarp0PlanesAfterLookback) {
    if (warp_index != 0 && stage_planes) tile::fixed_length::write_planes(staged_block_planes, zz, place.width);
  } else {
    if (stage_planes) tile::fixed_length::write_planes(reinterpret_cast<std::uint32_t*>(stage) + place.words_before, zz, place.width);
  }
  if (warp_index == 0) {
    learn_offset();
    if constexpr (kWarp0PlanesAfterLookback) {
      if (stage_planes) tile::fixed_length::write_planes(staged_block_planes, zz, place.width);
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
        sum += format::check_term(0, 0) + format::check_term(0, 1) + zero_word_terms(used, raw_bytes);
      }
      seal(sum, dst, raw_bytes, raw_bytes);
    }
    return;
  }
  if constexpr (Coder::tries_huffman) {
    if (mode == tile_mode::huffman) {
      const format::huffman::tile_layout& layout = huffman_plan.layout;
      // Words written in another layout than the thread's own are read back: the outlier list,
      // and a stream emitted in place by several threads a word. Without outliers, the words after
      // the stream are zero.
      [[maybe_unused]] const auto read_from = static_cast<std::uint32_t>(
          !stream_staged() ? layout.stream : outliers > 0 ? layout.outlier_index : layout.total);
      [[maybe_unused]] std::uint32_t sum = tile::huffman::write_tile<kChecked>(
          s.huffman, huffman_plan, elements, outliers, base, dst, zz, block_count, huffman_offset, staged_stream);
      write_outliers<T>(in, dst, layout.outlier_index, layout.outlier_values, layout.total, outliers, outliers_before,
                        outlier_bits, first, tile_first);
      if constexpr (kChecked) {
        if (threadIdx.x == 0 && outliers == 0) sum += zero_word_terms(layout.outlier_index, layout.total);
        seal(sum, dst, read_from, layout.total);
      }
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
      if (outliers == 0) sum += zero_word_terms(layout.outlier_index, layout.total);
    }
    // The outlier list is written in its own layout: read back.
    seal(sum, dst, outliers > 0 ? layout.outlier_index : layout.total, layout.total);
  }
}

}  // namespace device::detail
NCCLZ_END_KERNEL_NAMESPACE
