// The compressed chunk format (docs/format.md is the prose version of this file).
//
// A chunk is: chunk_header (64 B) | tile table (tile_count x u32, padded to 8 B) | check table
// (a checksum per tile, where the header's flags say so) | step table (fixed_rate) | tiles.
// Tiles hold kTileElements consecutive values each (the last one may hold fewer) and start on
// 8-byte boundaries; the table gives each tile's offset from the end of the header in 8-byte
// units, so any tile can be decoded (and its checksum verified) without reading the others.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

// The 16-bit element types. Their conversions to and from float work in host code too (g++ or
// nvcc); ncclz calls only the conversion functions, so it also builds with
// __CUDA_NO_HALF_CONVERSIONS__ / __CUDA_NO_HALF_OPERATORS__ defined (as PyTorch builds do).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ncclz/config.hpp"

namespace ncclz {

/// Element types a chunk can hold (the dtype byte of the header).
enum class dtype : std::uint8_t { f32 = 1, f64 = 2, f16 = 3, bf16 = 4 };

/// Which quantizer produced the codes (the quantizer byte of the header).
enum class quantizer_id : std::uint8_t { abs = 1, rel = 2, lossless = 3, fixed_rate = 4, user = 128 };

/// Which entropy-coder policy wrote the chunk (the coder byte of the header).
enum class coder_id : std::uint8_t { raw = 0, fixed_length = 1, huffman = 2, zero_run = 3, adaptive = 4 };

/// Whether a header's coder byte names a coder this build reads.
NCCLZ_HOST_DEVICE constexpr bool is_known_coder(std::uint8_t v) { return v <= static_cast<std::uint8_t>(coder_id::adaptive); }

/// How one tile is stored (the first byte of each tile).
enum class tile_mode : std::uint8_t {
  raw = 0,           ///< the input values, bit for bit
  fixed_length = 1,  ///< width bytes, bit planes of zig-zagged code deltas, outlier list
  huffman = 2,       ///< per-tile canonical Huffman code of the deltas, 32 or 64 sub-block streams, outlier list
  zero_run = 3,      ///< Rice-coded runs of zero codes or deltas, 32 sub-block streams, outlier list
};

template <class T>
inline constexpr bool is_supported_value_type_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                                  std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

template <class T>
constexpr dtype dtype_of() {
  static_assert(is_supported_value_type_v<T>, "ncclz: supported element types are float, double, __half and __nv_bfloat16");
  if constexpr (std::is_same_v<T, float>) return dtype::f32;
  else if constexpr (std::is_same_v<T, double>) return dtype::f64;
  else if constexpr (std::is_same_v<T, __half>) return dtype::f16;
  else return dtype::bf16;
}

/// Whether a header's dtype byte names an element type this build reads.
NCCLZ_HOST_DEVICE constexpr bool is_known_dtype(std::uint8_t v) {
  return v == static_cast<std::uint8_t>(dtype::f32) || v == static_cast<std::uint8_t>(dtype::f64) ||
         v == static_cast<std::uint8_t>(dtype::f16) || v == static_cast<std::uint8_t>(dtype::bf16);
}

/// The type the quantizer computes in: the element type itself for float and double; float for the
/// 16-bit types, which hold every one of their values exactly in a float but not a code of 2^30.
template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// x widened to the compute type (exact).
template <class T>
NCCLZ_HOST_DEVICE inline compute_t<T> to_compute(T x) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(x);
  else return x;
}

/// v rounded to the element type, to nearest even (once: float -> half directly, no detour).
template <class T>
NCCLZ_HOST_DEVICE inline T from_compute(compute_t<T> v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(v);
  else return v;
}

namespace format {

inline constexpr std::uint32_t kMagic = 0x315A434Eu;  // "NCZ1" read as little-endian bytes
/// The version this build writes. Version 1 (no flags, no checksums: its flags and header check
/// words are 0) is still read.
inline constexpr std::uint8_t kVersion = 2;
inline constexpr std::uint8_t kOldestVersion = 1;
/// Header flags (version 2). kTileChecks: each tile's checksum is in the check table.
inline constexpr std::uint32_t kTileChecks = 1u;
inline constexpr std::uint32_t kKnownFlags = kTileChecks;
inline constexpr std::uint32_t kBlockElements = 32;  // one warp, one value per lane
inline constexpr std::uint32_t kTileBlocks = 256;
inline constexpr std::uint32_t kTileElements = kBlockElements * kTileBlocks;  // 8192
inline constexpr std::uint32_t kMaxWidth = 32;                                // bits of a zig-zagged delta
/// Codes are kept strictly inside (-2^30, 2^30) so a delta of two codes fits an int32.
inline constexpr double kMaxCodeMagnitude = 1073741824.0;
/// Tile offsets are u32 in 8-byte units: a chunk's payload stays below 32 GiB.
inline constexpr std::uint64_t kMaxPayloadBytes = (std::uint64_t{1} << 32) * 8u - 8u;
/// A fixed_rate chunk's scale block: 1024 consecutive values (one warp's share of a tile, 8 a
/// tile) share one step, stored in the chunk's step table.
inline constexpr std::uint32_t kScaleBlockElements = 1024;
static_assert(kTileElements % kScaleBlockElements == 0, "a tile holds whole scale blocks");

struct chunk_header {
  std::uint32_t magic;          ///< kMagic
  std::uint8_t version;         ///< kVersion
  std::uint8_t value_type;      ///< ncclz::dtype
  std::uint8_t quantizer;       ///< ncclz::quantizer_id
  std::uint8_t coder;           ///< ncclz::coder_id
  std::uint32_t tile_elements;  ///< kTileElements
  std::uint32_t tile_count;     ///< ceil(element_count / tile_elements)
  std::uint64_t element_count;
  std::uint64_t payload_bytes;  ///< bytes after this header: table + tiles
  double bound;                 ///< the bound the caller asked for (absolute, or relative factor)
  double error_bound;           ///< the absolute bound applied to every element
  double step;                  ///< quantization step (a value of the element type, widened)
  std::uint32_t flags;          ///< kTileChecks or 0 (version 1: 0)
  std::uint32_t header_check;   ///< header_check_of (version 1: 0)
};
static_assert(sizeof(chunk_header) == 64 && std::is_trivially_copyable_v<chunk_header>);

struct tile_header {
  std::uint8_t mode;            ///< ncclz::tile_mode
  std::uint8_t reserved;        ///< zero
  std::uint16_t outlier_count;  ///< values stored exactly in the outlier list
  std::int32_t base;            ///< code of the tile's first element (the prediction of element 0)
};
static_assert(sizeof(tile_header) == 8 && std::is_trivially_copyable_v<tile_header>);

NCCLZ_HOST_DEVICE constexpr std::uint64_t align_up(std::uint64_t bytes, std::uint64_t to) {
  return (bytes + to - 1) / to * to;
}

NCCLZ_HOST_DEVICE constexpr std::uint64_t tile_count(std::uint64_t elements) {
  return elements / kTileElements + (elements % kTileElements != 0);  // no wrap-around near 2^64
}

NCCLZ_HOST_DEVICE constexpr std::uint32_t tile_elements(std::uint64_t elements, std::uint64_t tile) {
  const std::uint64_t first = tile * kTileElements;
  const std::uint64_t left = elements - first;
  return static_cast<std::uint32_t>(left < kTileElements ? left : kTileElements);
}

NCCLZ_HOST_DEVICE constexpr std::uint32_t tile_blocks(std::uint32_t elements) {
  return (elements + kBlockElements - 1) / kBlockElements;
}

NCCLZ_HOST_DEVICE constexpr std::uint64_t table_bytes(std::uint64_t tiles) {
  return align_up(tiles * sizeof(std::uint32_t), 8);
}

/// Bytes of the check table (a u32 per tile, zero-padded to 8) of a chunk with these flags.
NCCLZ_HOST_DEVICE constexpr std::uint64_t check_table_bytes(std::uint64_t tiles, std::uint32_t flags) {
  return (flags & kTileChecks) != 0 ? table_bytes(tiles) : 0;
}

/// Where the step table (fixed_rate) starts, in bytes from the end of the header: after the tile
/// table and the check table. The tiles follow the step table.
NCCLZ_HOST_DEVICE constexpr std::uint64_t step_table_offset(std::uint64_t tiles, std::uint32_t flags) {
  return table_bytes(tiles) + check_table_bytes(tiles, flags);
}

// --- checksums (version 2) ------------------------------------------------------------------------
// A tile's checksum covers its bytes, read as little-endian u32 words w_0, w_1, ... (a tile
// starts and ends on 8-byte boundaries), the words of its steps in the step table (fixed_rate;
// from kStepCheckPosition on), its size in bytes, its index and the chunk's header check (so a
// tile of another chunk, coded with another step or count, fails in this one):
//
//   S = sum over i of check_term(w_i, i)  (mod 2^32),   check = tile_check(S, bytes, tile, header check)
//
// A sum of one term a word lets the 256 threads of a tile's block each hash the words they hold,
// in any order, and the host hash them in one loop, to the same value. check_term is a bijection
// of the word for each position, so a change confined to one word always changes S; any other
// change goes unseen with a chance of about 2^-32. The header check covers the header's words
// but payload_bytes (a change there moves the last tile's end, which its checksum covers) and
// itself; version 2 chunks always carry it, with or without tile checksums, so a flipped flag
// cannot turn the tile checks off unseen.

/// MurmurHash3's 32-bit finalizer: a bijection that carries every input bit into every output bit.
NCCLZ_HOST_DEVICE constexpr std::uint32_t fmix32(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

/// The term of word `word` at position `position` of a checked range.
NCCLZ_HOST_DEVICE constexpr std::uint32_t check_term(std::uint32_t word, std::uint32_t position) {
  return fmix32(word + position * 0x9E3779B9u);
}

/// Position of the first word of a tile's steps among its terms: past any tile's own words.
inline constexpr std::uint32_t kStepCheckPosition = 1u << 31;

/// A tile's checksum from the sum of its terms, its size in bytes, its index and the chunk's
/// header check.
NCCLZ_HOST_DEVICE constexpr std::uint32_t tile_check(std::uint32_t sum, std::uint64_t bytes, std::uint64_t tile,
                                                    std::uint32_t header_check) {
  const auto b = static_cast<std::uint32_t>(bytes ^ (bytes >> 32));
  const std::uint32_t seed = fmix32(header_check ^ fmix32(b + static_cast<std::uint32_t>(tile) * 0x85EBCA6Bu));
  return fmix32(sum + seed);
}

/// The header's u32 words, and which of them the header check covers: all but payload_bytes
/// (words 6 and 7) and header_check (word 15).
inline constexpr std::uint32_t kHeaderWords = sizeof(chunk_header) / 4;
NCCLZ_HOST_DEVICE constexpr bool header_word_checked(std::uint32_t i) { return i != 6 && i != 7 && i != 15; }

/// The header check from the sum of the checked words' terms.
NCCLZ_HOST_DEVICE constexpr std::uint32_t header_check(std::uint32_t sum) { return fmix32(sum ^ 0x4E435A32u); }

/// The header check of `h` (what its header_check field must hold in version 2).
NCCLZ_HOST_DEVICE inline std::uint32_t header_check_of(const chunk_header& h) {
  std::uint32_t words[kHeaderWords];
  memcpy(words, &h, sizeof words);
  std::uint32_t sum = 0;
  for (std::uint32_t i = 0; i < kHeaderWords; ++i) sum += header_word_checked(i) ? check_term(words[i], i) : 0u;
  return header_check(sum);
}

/// Scale blocks (steps of a fixed_rate chunk) of `elements` values.
NCCLZ_HOST_DEVICE constexpr std::uint64_t scale_count(std::uint64_t elements) {
  return (elements + kScaleBlockElements - 1) / kScaleBlockElements;
}

/// Bytes of one step in a fixed_rate chunk's step table: the compute type's (f64 for f64 values,
/// f32 for f32, f16 and bf16).
NCCLZ_HOST_DEVICE constexpr std::uint32_t scale_bytes(std::uint32_t value_bytes) { return value_bytes == 8 ? 8u : 4u; }

/// Bytes of a fixed_rate chunk's step table, which follows the tile table: one step per scale
/// block, zero-padded to a multiple of 8.
NCCLZ_HOST_DEVICE constexpr std::uint64_t scale_table_bytes(std::uint64_t elements, std::uint32_t value_bytes) {
  return align_up(scale_count(elements) * scale_bytes(value_bytes), 8);
}

/// Bytes of a raw tile of `elements` values of `value_bytes` each.
NCCLZ_HOST_DEVICE constexpr std::uint64_t raw_tile_bytes(std::uint32_t elements, std::uint32_t value_bytes) {
  return align_up(sizeof(tile_header) + std::uint64_t{elements} * value_bytes, 8);
}

/// Where the parts after a tile's coded stream start (relative to the tile), and the tile's size:
/// every coded tile mode ends this way.
struct stream_tail {
  std::uint64_t outlier_index;   ///< u16 element index within the tile, per outlier
  std::uint64_t outlier_values;  ///< the outliers' values, bit for bit
  std::uint64_t total;           ///< padded to 8 bytes
};

/// The tail of a tile whose stream of `stream_bits` starts at `stream`: the stream padded to 4
/// bytes, the outlier indices, padding to `value_bytes`, the outlier values, padding to 8.
NCCLZ_HOST_DEVICE constexpr stream_tail stream_tail_of(std::uint64_t stream, std::uint64_t stream_bits,
                                                       std::uint32_t outliers, std::uint32_t value_bytes) {
  stream_tail t{};
  t.outlier_index = stream + align_up((stream_bits + 7) / 8, 4);
  t.outlier_values = align_up(t.outlier_index + 2ull * outliers, value_bytes);
  t.total = align_up(t.outlier_values + std::uint64_t{outliers} * value_bytes, 8);
  return t;
}

/// Where the parts of a fixed-length tile start, relative to the tile, and its total size.
struct fixed_tile_layout : stream_tail {
  std::uint64_t widths;  ///< one byte per block
  std::uint64_t planes;  ///< 4 bytes per bit plane, blocks in order
};

NCCLZ_HOST_DEVICE constexpr fixed_tile_layout fixed_tile_layout_of(std::uint32_t blocks, std::uint64_t plane_words,
                                                                   std::uint32_t outliers, std::uint32_t value_bytes) {
  fixed_tile_layout l{};
  l.widths = sizeof(tile_header);
  l.planes = align_up(l.widths + blocks, 4);
  static_cast<stream_tail&>(l) = stream_tail_of(l.planes, plane_words * 32, outliers, value_bytes);  // the planes are the stream
  return l;
}

/// The largest chunk `elements` values can produce: every tile raw, with tile checksums.
NCCLZ_HOST_DEVICE constexpr std::uint64_t max_chunk_bytes(std::uint64_t elements, std::uint32_t value_bytes) {
  const std::uint64_t tiles = tile_count(elements);
  std::uint64_t bytes = sizeof(chunk_header) + step_table_offset(tiles, kTileChecks);
  if (tiles > 0) {
    bytes += (tiles - 1) * raw_tile_bytes(kTileElements, value_bytes);
    bytes += raw_tile_bytes(tile_elements(elements, tiles - 1), value_bytes);
  }
  return bytes;
}

/// The largest chunk whose tiles are all fixed_length (the collectives' partial sums, which stay
/// in codes): every block at full width and every value an outlier bounds any real tile; with
/// tile checksums.
NCCLZ_HOST_DEVICE constexpr std::uint64_t max_fixed_chunk_bytes(std::uint64_t elements, std::uint32_t value_bytes) {
  const std::uint64_t tiles = tile_count(elements);
  std::uint64_t bytes = sizeof(chunk_header) + step_table_offset(tiles, kTileChecks);
  for (int last = 0; last < 2 && tiles > 0; ++last) {
    const std::uint32_t n = last ? tile_elements(elements, tiles - 1) : kTileElements;
    const std::uint32_t blocks = tile_blocks(n);
    const std::uint64_t tile = fixed_tile_layout_of(blocks, std::uint64_t{blocks} * kMaxWidth, n, value_bytes).total;
    bytes += last ? tile : (tiles - 1) * tile;
  }
  return bytes;
}

/// What a huffman or zero_run tile must come under for a selector that weighs fixed_length
/// (Adaptive) to take it instead of the fixed_length tile of `fixed_length_bytes`: that less 1/32.
/// Those modes decode 3-5x slower than fixed_length (docs/benchmarks.md), not worth a near tie: on
/// the smooth benchmark field at REL 1e-4, 23 tiles of 2048 went huffman to save 0.2-1.7% each,
/// and the chunk decoded at 519 GB/s instead of 1288. Host and device apply the same rule.
NCCLZ_HOST_DEVICE constexpr std::uint64_t entropy_bar(std::uint64_t fixed_length_bytes) {
  return fixed_length_bytes - fixed_length_bytes / 32;
}

/// The elements of a tile the Adaptive selector counts before it measures zero_run or estimates
/// huffman: 1, 9, 17, ... (every 8th, from element 1). Counting every element's zeros on every
/// tile cost Adaptive 4-5% of its encode where it keeps fixed_length (docs/design.md).
inline constexpr std::uint32_t kSelectorStride = 8;
NCCLZ_HOST_DEVICE constexpr bool in_selector_sample(std::uint32_t element) { return element % kSelectorStride == 1; }
/// How many of a tile's `elements` are in the sample.
NCCLZ_HOST_DEVICE constexpr std::uint32_t selector_sample_size(std::uint32_t elements) {
  return (elements + kSelectorStride - 2) / kSelectorStride;
}

/// Zero deltas a run must hold on average, for zero_run_worth_trying: runs counted within each
/// block of 32 elements (a zero delta that starts its block, or follows a nonzero one, starts one).
inline constexpr std::uint32_t kMinMeanZeroRun = 3;

/// Whether the Adaptive selector measures the zero_run size of a tile whose sample came too close
/// to half zero to tell (zero_run_verdict, below), from every element's count: at least half of
/// its codes are zero, or half of its code deltas are zero in runs of kMinMeanZeroRun or more on
/// average (zero runs are where that mode wins; measuring it is the selector's dearest step, so
/// other tiles skip it). Zero codes need no runs: huffman codes the deltas, and each delta into
/// or out of a zero code is as wide as the code, so half-zero random values cost huffman a wide
/// delta an element (zero_run is 28-30% smaller at REL 1e-3 and 1e-4). A zero delta costs
/// huffman about a bit, as a zero_run run code does, so there the runs decide: on the fields and
/// the bench inputs (f32, bf16, f16, REL 1e-3 and 1e-4) every such tile zero_run wins has runs
/// of 3.5 or more, and every one under 3 it loses (by 5-120%), among them 21 tiles of the smooth
/// input as bf16 at 1e-4 (runs of 1.9-2.0, 40% larger), each a measure the look-back makes every
/// later tile wait for (Adaptive 157 -> 172-173 GB/s). Host and device apply the same rule.
NCCLZ_HOST_DEVICE constexpr bool zero_run_worth_trying(std::uint32_t zero_codes, std::uint32_t zero_deltas,
                                                       std::uint32_t zero_delta_runs, std::uint32_t elements) {
  return elements > 0 && (2ull * zero_codes >= elements ||
                          (2ull * zero_deltas >= elements && zero_deltas >= std::uint64_t{kMinMeanZeroRun} * zero_delta_runs));
}

/// What the selector's sample of a tile says of measuring its zero_run size, from the sample's zero
/// codes and zero deltas: yes where 9/16 of it or more are zero (sparse: measured whatever the
/// runs; on the smooth input at 1e-3, 61-65% zero deltas in runs of 2.0-2.5, zero_run wins by up
/// to 18%), no under 7/16, and in between (or with no sample) every element is counted and
/// zero_run_worth_trying decides. A sample alone, so close to half, let through tiles the whole
/// count stops: 34 of 2048 instead of 21 on the smooth input as bf16 at REL 1e-4, each a zero_run
/// measure the look-back makes every later tile wait for (Adaptive 151 -> 126 GB/s).
enum class zero_run_sample : std::uint8_t { skip, measure, count_all };
NCCLZ_HOST_DEVICE constexpr zero_run_sample zero_run_verdict(std::uint32_t sampled_zero_codes, std::uint32_t sampled_zero_deltas,
                                                             std::uint32_t elements) {
  const std::uint64_t sampled = selector_sample_size(elements);
  const std::uint64_t most = sampled_zero_codes > sampled_zero_deltas ? sampled_zero_codes : sampled_zero_deltas;
  if (sampled == 0) return zero_run_sample::count_all;
  if (16 * most >= 9 * sampled) return zero_run_sample::measure;
  return 16 * most < 7 * sampled ? zero_run_sample::skip : zero_run_sample::count_all;
}

/// The number of bits v needs (0 for 0).
NCCLZ_HOST_DEVICE constexpr std::uint32_t bit_width(std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  if (!std::is_constant_evaluated()) return 32u - static_cast<std::uint32_t>(__clz(static_cast<int>(v)));
#endif
  std::uint32_t w = 0;
  for (; v != 0; v >>= 1) ++w;
  return w;
}

NCCLZ_HOST_DEVICE constexpr std::uint32_t zigzag(std::int32_t v) {
  return (static_cast<std::uint32_t>(v) << 1) ^ static_cast<std::uint32_t>(v >> 31);
}
NCCLZ_HOST_DEVICE constexpr std::int32_t unzigzag(std::uint32_t v) {
  return static_cast<std::int32_t>(v >> 1) ^ -static_cast<std::int32_t>(v & 1u);
}

}  // namespace format
}  // namespace ncclz
