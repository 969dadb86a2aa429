// The zero_run tile mode on the device (docs/format.md, "Zero-run tile"): what a tile's thread
// block calls to measure, write and decode one zero_run tile whose codes are staged in shared
// memory (tile_stage.cuh). Byte for byte the host reference's tiles (ncclz/host/zero_run_reference.hpp):
// the choices, the bits of a sub-block and its decoding with every check are the same code,
// ncclz/detail/zero_run_format.hpp; this file spreads it over the block.
//
// One thread a sub-block (and a predictor, when measuring): the sub-blocks of warp w's stage
// (4 of them) go to lanes 0..3 (0..7) of warp w, so all four SM sub-partitions work and the
// threads of one warp touch only 4 stage rows at a time. Everything else (the least magnitude, the
// predictor, the offsets, zeroing the stream, the deltas' prefix sums) is spread over all 256
// threads or one warp, with three block barriers in measure, one in write and two in decode.
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

/// Per-tile scratch of measure and write (shared memory).
struct encode_shared {
  std::uint32_t least[kTileWarps][2];                  ///< per warp and predictor: least magnitude, ~0u for none
  std::uint32_t min_magnitude[2];                      ///< per predictor
  std::uint32_t subblock_bits[2][zr::kTileSubblocks];  ///< per predictor and sub-block: the chosen form's bits
  std::uint32_t subblock_plan[2][zr::kTileSubblocks];  ///< the same: the plan, packed (pack_plan)
  std::uint32_t subblock_start[zr::kTileSubblocks];    ///< the chosen predictor's: bit offset in the stream
  std::uint32_t predictor;                             ///< the chosen one
  std::uint32_t stream_bits;                           ///< its stream's length
};
static_assert(sizeof(encode_shared) <= 2048);

/// Per-tile scratch of decode (shared memory).
struct decode_shared {
  std::uint32_t subblock_sum[zr::kTileSubblocks];  ///< deltas predictor: each sub-block's sum of deltas
};
static_assert(sizeof(decode_shared) <= 2048);

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

/// Writes a sub-block's bits [begin, end) into stream words zeroed beforehand: its first and last
/// words are shared with its neighbours (atomicOr), the ones between are its own (plain stores).
class stream_writer {
 public:
  __device__ stream_writer(std::uint32_t* words, std::uint32_t begin, std::uint32_t end)
      : words_(words), word_(begin / 32), first_word_(begin / 32), last_word_((end - 1) / 32), have_(begin % 32) {}
  __device__ void put(std::uint32_t v, std::uint32_t bits) {  // v < 2^bits, bits <= 32
    buffer_ |= std::uint64_t{v} << have_;
    have_ += bits;
    if (have_ >= 32) {
      store(static_cast<std::uint32_t>(buffer_));
      buffer_ >>= 32;
      have_ -= 32;
    }
  }
  __device__ void flush() {
    if (have_ > 0) store(static_cast<std::uint32_t>(buffer_));
  }

 private:
  __device__ void store(std::uint32_t v) {
    if (word_ == first_word_ || word_ == last_word_) atomicOr(words_ + word_, v);
    else words_[word_] = v;
    ++word_;
  }
  std::uint32_t* words_;
  std::uint32_t word_, first_word_, last_word_, have_;
  std::uint64_t buffer_ = 0;
};

/// Stream word i of a tile in global memory (read-only while decoding).
struct global_words {
  const std::uint32_t* words;
  __device__ std::uint32_t operator()(std::uint32_t i) const { return __ldg(words + i); }
};

/// Takes a sub-block's decoded values in order: the codes predictor stages each value's code; the
/// deltas predictor stages the running sum of the deltas within the sub-block (the sums of the
/// earlier sub-blocks and base are added once they are all known).
struct stage_sink {
  warp_stage* stages;
  std::uint32_t e;
  bool deltas;
  std::uint32_t running;
  __device__ void operator()(std::uint32_t z) {
    const auto v = static_cast<std::uint32_t>(format::unzigzag(z));
    running += v;
    staged(stages, e++) = static_cast<std::int32_t>(deltas ? running : v);
  }
};

__device__ __forceinline__ std::uint32_t subblock_size(std::uint32_t elements, std::uint32_t b) {
  const std::uint32_t first = b * zr::kSubblockElements;
  return elements - first < zr::kSubblockElements ? elements - first : zr::kSubblockElements;
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
  std::uint32_t least_codes = ~0u, least_deltas = ~0u;
  for (std::uint32_t e = threadIdx.x; e < elements; e += kTileThreads) {
    const std::int32_t q = code_of(staged(stages, e));
    const std::uint32_t zc = zr::predict(q, 0, zr::predictor::codes);
    const std::uint32_t zd = zr::predict(q, e == 0 ? first_code : code_of(staged(stages, e - 1)), zr::predictor::deltas);
    if (zc != 0) least_codes = min(least_codes, zr::magnitude(zc));
    if (zd != 0) least_deltas = min(least_deltas, zr::magnitude(zd));
  }
  least_codes = __reduce_min_sync(warp::kFullMask, least_codes);
  least_deltas = __reduce_min_sync(warp::kFullMask, least_deltas);
  if (lane == 0) {
    s.least[warp_index][0] = least_codes;
    s.least[warp_index][1] = least_deltas;
  }
  __syncthreads();

  // Lanes 0..7 of warp w: sub-block 4w + lane / 2 under predictor lane % 2; both predictors of a
  // sub-block read the same codes at the same time (broadcasts).
  if (lane < 2 * kSubblocksPerWarp) {
    const std::uint32_t b = warp_index * kSubblocksPerWarp + lane / 2;
    const std::uint32_t p = lane % 2;
    std::uint32_t least = ~0u;
#pragma unroll
    for (int w = 0; w < kTileWarps; ++w) least = min(least, s.least[w][p]);
    const std::uint32_t min_magnitude = least == ~0u ? 1u : least;
    if (b == 0) s.min_magnitude[p] = min_magnitude;
    std::uint32_t bits = 0, packed = 0;
    if (b < subblocks) {
      const std::uint32_t first = b * zr::kSubblockElements, n = detail::subblock_size(elements, b);
      const auto pred = static_cast<zr::predictor>(p);
      zr::subblock_stats stats(min_magnitude);
      std::int32_t prev = detail::code_before(stages, first);
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::int32_t q = code_of(staged(stages, first + i));
        stats.add(zr::predict(q, prev, pred));
        prev = q;
      }
      const zr::choice c = stats.choose_form();
      bits = static_cast<std::uint32_t>(c.bits);  // <= kMaxSubblockBits
      packed = detail::pack_plan(stats.plan(c.form));
    }
    s.subblock_bits[p][b] = bits;
    s.subblock_plan[p][b] = packed;
  }
  __syncthreads();

  // Warp 0: deltas only where their stream is shorter (codes on a tie), and the chosen
  // sub-blocks' offsets.
  if (warp_index == 0) {
    const std::uint32_t codes = s.subblock_bits[0][lane], deltas = s.subblock_bits[1][lane];
    const std::uint32_t codes_total = __reduce_add_sync(warp::kFullMask, codes);
    const std::uint32_t deltas_total = __reduce_add_sync(warp::kFullMask, deltas);
    const std::uint32_t p = deltas_total < codes_total ? 1u : 0u;
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

/// Writes the tile measure measured (s as it left it) at `tile` (8-byte aligned, not zeroed): the
/// tile header (mode 3, the outlier count, base), the zero_run header, the sub-block lengths, the
/// stream and every padding byte before pl.outlier_index; not the outliers nor what follows them.
/// All kTileThreads threads.
template <class T>
__device__ void write(const encode_shared& s, const plan& pl, warp_stage* stages, std::uint32_t elements,
                      std::uint32_t outliers, std::byte* tile) {
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
  if (lane < kSubblocksPerWarp) {
    const std::uint32_t b = warp_index * kSubblocksPerWarp + lane;
    if (b < subblocks && s.subblock_bits[p][b] > 0) {
      const std::uint32_t first = b * zr::kSubblockElements;
      detail::stream_writer w(words, s.subblock_start[b], s.subblock_start[b] + s.subblock_bits[p][b]);
      const detail::staged_values values{stages, first, pred, detail::code_before(stages, first)};
      zr::put_subblock(w, values, detail::subblock_size(elements, b), detail::unpack_plan(s.subblock_plan[p][b]), min_magnitude);
      w.flush();
    }
  }
  (void)pl;  // the layout is recomputed from s (the same numbers): pl is the caller's copy
}

/// Decodes the zero_run tile at `tile` (`span`: bytes up to the next tile; nothing past it is read)
/// of `elements` values with every check of the host decode_tile but the outlier indices' (the
/// caller patches outliers from outlier_index / outlier_values, which it is given, and checks
/// them). On success the code of every element e < elements is in staged(stages, e) (an outlier's
/// position holds what the stream holds), visible to the whole block, and it returns ok; otherwise
/// the problem, the same in every thread. All kTileThreads threads.
template <class T>
__device__ decode_status decode(decode_shared& s, const std::byte* tile, std::uint64_t span, std::uint32_t elements,
                                warp_stage* stages, std::uint64_t& outlier_index, std::uint64_t& outlier_values) {
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

  // Lane j < 4 of warp w decodes sub-block 4w + j into its warp's stage.
  const std::uint32_t b = warp_index * kSubblocksPerWarp + lane % kSubblocksPerWarp;
  const std::uint32_t my_length = __shfl_sync(warp::kFullMask, length, b);
  const std::uint32_t my_begin = __shfl_sync(warp::kFullMask, through, b) - my_length;
  bool bad = false;
  if (lane < kSubblocksPerWarp && b < subblocks) {
    const std::uint32_t first = b * zr::kSubblockElements, n = detail::subblock_size(elements, b);
    detail::stage_sink out{stages, first, deltas, 0};
    if (my_length == 0) {
      for (std::uint32_t i = 0; i < n; ++i) out(0u);  // every value 0
    } else {
      const detail::global_words words{reinterpret_cast<const std::uint32_t*>(tile + l.stream)};
      zr::bit_reader<detail::global_words> r(words, my_begin, my_begin + my_length);
      bad = zr::get_subblock(r, n, zh.min_magnitude, out) != zr::subblock_error::none;
    }
    s.subblock_sum[b] = out.running;
  }
  if (__syncthreads_or(bad)) return decode_status::corrupt_subblock;
  if (deltas) {
    // Codes = base + the deltas of the earlier sub-blocks + the running sum within the sub-block.
    auto before = static_cast<std::uint32_t>(th.base);
    for (std::uint32_t sb = 0; sb < subblocks; ++sb) {
      const std::uint32_t e = sb * zr::kSubblockElements + threadIdx.x;
      if (e < elements) {
        std::int32_t& c = staged(stages, e);
        c = static_cast<std::int32_t>(static_cast<std::uint32_t>(c) + before);
      }
      before += s.subblock_sum[sb];
    }
    __syncthreads();
  }
  return decode_status::ok;
}

}  // namespace zero_run
}  // namespace kernels
NCCLZ_END_KERNEL_NAMESPACE
