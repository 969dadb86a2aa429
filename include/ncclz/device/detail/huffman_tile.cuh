// The device coder of the huffman tile mode (docs/format.md, "Huffman tile"); it writes the bytes
// host/huffman_reference.hpp writes (the GPU tests compare them).
//
// One thread block of 256 threads codes one tile, thread t holding the zig-zagged deltas of block t
// (elements 32t..32t+31) in registers, as the fixed-length coder does. The steps:
//   1. histogram of the deltas' symbols under 256 literals in shared memory (one plain atomic a
//      delta: deduplicating a warp's equal symbols cost more than it saved);
//   2. every literal count L = 1..256 is scored at once, thread t scoring L = t + 1 from prefix sums
//      of the histogram (integer entropy + escape bits + 4 bits a stored length, as the host's
//      estimated_bits; the escape classes wider than L's own, which do not depend on L, summed
//      for every L by each warp at once), and the least wins (the smallest L on a tie);
//   3. (only if the caller wants the exact size) the length-limited canonical codebook: the used
//      symbols sorted by a bitonic sort, the two-queue Huffman merge and JPEG's length limiting on
//      one thread (at most 279 merges), canonical codes from ranks within each length (ballots);
//      then each thread's bit count and a block scan give every thread its bit offset;
//   4. write: each thread writes its codes (one emit_entry a symbol) into the stream, built in
//      shared memory when it fits there, then copied out.
// Decoding builds the 2048-entry table in shared memory from the stored lengths (canonical order
// by ballots; each thread fills 8 consecutive windows with one binary search and a walk; a window
// holding two or three whole literal codes decodes them all; an escape's entry carries its bit
// count) and copies the stream's first 8 KB to shared memory (tile_words), then warp 0 decodes,
// lane k sub-block k, its 256 deltas into the sub-block rows over the stage (tile_stage.cuh;
// parse_subblock, with no branch on the data; a halved tile's 64 sub-blocks of 128: warps 0 and
// 1, lane k of warp w sub-block 2k + w), or, where the caller wants the tile done soonest,
// every warp decodes every 8th run of 256 values (a sub-block or two halves), its 32 lanes parsing
// a 32nd of the bits each (warp_decode_subblock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ncclz/config.hpp"
#include "ncclz/format/huffman.hpp"
#include "ncclz/device/detail/decode_status.cuh"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/format.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace kernels {
namespace huffman {

using namespace ncclz::format::huffman;
using format::bit_width;
using format::tile_header;

/// Symbols are grouped by 32 (a warp's lanes) to rank them within their code length.
inline constexpr std::uint32_t kSymbolGroups = (kMaxSymbols + 31) / 32;
using group_counts = std::uint16_t[kSymbolGroups][kMaxCodeLength + 1];

/// By all 256 threads: the rank of symbol threadIdx.x + 256 r (r = 0, 1) among the symbols of its
/// code length, by symbol (canonical codes are consecutive there). Lanes of one length find each
/// other with __match_any_sync; earlier groups of 32 add their counts. `counts` must be zero on
/// entry; ends with a barrier.
__device__ __forceinline__ void ranks_within_length(const std::uint8_t* length, std::uint32_t symbols, group_counts& counts,
                                                    std::uint32_t (&rank)[2]) {
#pragma unroll
  for (int round = 0; round < 2; ++round) {
    const std::uint32_t sym = threadIdx.x + round * kTileThreads;
    const std::uint32_t len = sym < symbols ? length[sym] : 0u;
    const std::uint32_t peers = __match_any_sync(warp::kFullMask, len);
    rank[round] = __popc(peers & ((1u << warp::lane_id()) - 1u));
    if (sym / 32 < kSymbolGroups && len != 0 && rank[round] == 0) counts[sym / 32][len] = static_cast<std::uint16_t>(__popc(peers));
  }
  __syncthreads();
#pragma unroll
  for (int round = 0; round < 2; ++round) {
    const std::uint32_t sym = threadIdx.x + round * kTileThreads;
    const std::uint32_t len = sym < symbols ? length[sym] : 0u;
    if (len == 0) continue;
    for (std::uint32_t g = 0; g < sym / 32; ++g) rank[round] += counts[g][len];
  }
}

/// The canonical code of the first symbol of length `len` (the host's next_code[len]).
__device__ __forceinline__ std::uint32_t first_canonical_code(const std::uint32_t* count_of_length, std::uint32_t len) {
  std::uint32_t code = 0;
  for (std::uint32_t k = 1; k <= len; ++k) code = (code + (k > 1 ? count_of_length[k - 1] : 0u)) << 1;
  return code;
}

/// Slots of the encoder's sort of the used symbols: two per thread.
inline constexpr std::uint32_t kSortSlots = 2 * kTileThreads;
static_assert(kMaxSymbols <= kSortSlots, "every symbol has a sort slot");

/// What the stream holds for a symbol, in one 8-byte load a delta when sizing and writing the
/// stream. `fields`: its bit-reversed canonical code, the code's bits in the stream (0 when the
/// symbol is alone), its escape bit count, and on top the bits of code and escape together.
/// `escape_from`: what a delta z of the symbol escapes as z - escape_from, in its escape bits (the
/// class's first value: 2^(w-1) for width w, L for the first class; the literal itself for a
/// literal, which leaves nothing). A delta's bits are then code | (z - escape_from) << length,
/// with no masks or selects.
struct alignas(8) emit_entry {
  static constexpr std::uint32_t kLengthShift = 11, kEscapeBitsShift = 15, kBitsShift = 21;
  std::uint32_t fields;
  std::uint32_t escape_from;
  __device__ std::uint32_t code() const { return fields & ((1u << kLengthShift) - 1); }
  __device__ std::uint32_t length() const { return (fields >> kLengthShift) & 0xFu; }
  __device__ std::uint32_t escape_bits() const { return (fields >> kEscapeBitsShift) & 0x1Fu; }
  /// length() + escape_bits(): a delta's bits in the stream.
  __device__ std::uint32_t bits() const { return fields >> kBitsShift; }
};
static_assert(kMaxCodeLength < (1u << (emit_entry::kEscapeBitsShift - emit_entry::kLengthShift)), "a code length fits its field");
static_assert(emit_entry::kLengthShift >= kMaxCodeLength, "a code fits below its length");
static_assert(emit_entry::kBitsShift + bit_width(kMaxCodeLength + kMaxExtraBits) <= 32, "a delta's bits fit the entry's top");

/// Per-tile scratch of the encoder (about 9 KB).
struct encode_shared {
  std::uint32_t hist[kMaxSymbols + 1];  ///< symbol counts under 256 literals; the last bin takes what is not counted
  union {
    std::uint32_t counts[kMaxSymbols];  ///< symbol counts under the chosen L (step 3, up to its sort)
    emit_entry emit[kMaxSymbols + 1];   ///< then what the stream holds for each symbol; the last: nothing (not coded)
  };
  union {
    struct {  // step 2
      std::uint32_t count_before[kMaxLiterals + 1];  ///< deltas below each literal value
      std::uint64_t clogc_before[kMaxLiterals + 1];  ///< their sum of c log c
    } score;
    struct {  // step 3
      union {
        std::uint32_t sort_keys[kSortSlots];  ///< count << 9 | symbol, sorted (unused symbols: ~0, last)
        std::uint32_t weight[2 * kMaxSymbols];  ///< then the merge's leaves (in that order) and nodes
      };
      std::uint16_t parent[2 * kMaxSymbols];
      std::uint16_t sorted_down[kMaxSymbols];  ///< used symbols by (count descending, symbol)
      std::uint32_t length_count[kMaxSymbols + 1];
      group_counts length_groups;
      std::uint32_t first_code[kMaxCodeLength + 1];
    } build;
  };
  std::uint8_t length[kMaxSymbols];    ///< as stored (0 = unused)
  std::uint64_t warp_u64[kTileWarps];
  std::uint32_t gate_sums[2][kTileWarps];  ///< gate_tile_bytes' per-warp sums
  std::uint32_t warp_u32[kTileWarps];
  std::uint16_t half_subblock_bits[kMaxTileSubblocks];  ///< the bits of each 128 values' codes
  std::uint64_t best;  ///< (estimated bits << 9) | (L - 1)
  std::uint32_t estimated_symbols;  ///< the symbol count of estimate_tile's winning L
  std::uint32_t used;  ///< symbols with a nonzero count (build_tile)
  std::uint32_t escape_bits;  ///< the tile's escape bits (build_tile)
  bool gave_up;  ///< build_tile stopped short: the tile cannot come under its give_up_at
  std::uint32_t total;  ///< deltas coded
};

static_assert(offsetof(encode_shared, build.length_count) >= offsetof(encode_shared, score.count_before) + sizeof(encode_shared::score.count_before),
              "build_tile clears its length counts while other threads read estimate_tile's prefix counts");

/// What steps 1-2 found: the alphabet and the estimated tile size.
struct estimate {
  std::uint32_t literals;
  std::uint32_t symbols;
  std::uint64_t bytes;
};

/// The exact tile (step 3).
struct plan {
  std::uint32_t literals;
  std::uint32_t symbols;
  std::uint64_t stream_bits;
  bool halved;  ///< sub-blocks of 128 (format::huffman::halves_subblocks)
  bool codes_fit_word;  ///< every used symbol's code and escape take 32 bits or fewer (emit_stream)
  tile_layout layout;  ///< layout.total: ~0 where build_tile gave up (no tile was built)
};

/// Block-wide exclusive prefix sum of one value per thread (u32 or u64); every thread also gets
/// the total. Lane k of each warp then takes warp k's total: warp reductions (u32) or a three-step
/// scan over eight lanes (u64) give what comes before the warp and the tile's total, in fewer
/// instructions than every thread adding all eight (ncu: the scan was about 3% of the encoder's
/// instructions where every tile is huffman).
template <class U>
__device__ __forceinline__ U block_exclusive_sum(U v, U* warp_totals, U& total) {
  static_assert(std::is_same_v<U, std::uint32_t> || std::is_same_v<U, std::uint64_t>, "a u32 or u64 sum");
  const unsigned lane = warp::lane_id(), w = threadIdx.x / 32;
  U inclusive = v;
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const U up = __shfl_up_sync(warp::kFullMask, inclusive, d);
    if (lane >= d) inclusive += up;
  }
  if (lane == 31) warp_totals[w] = inclusive;
  __syncthreads();
  const U warp_total = lane < kTileWarps ? warp_totals[lane] : U{0};
  U before;
  if constexpr (sizeof(U) == 4) {
    total = __reduce_add_sync(warp::kFullMask, warp_total);
    before = __reduce_add_sync(warp::kFullMask, lane < w ? warp_total : U{0});
  } else {
    U through = warp_total;  // lanes 0-7: warps 0..lane
#pragma unroll
    for (unsigned d = 1; d < kTileWarps; d <<= 1) {
      const U up = __shfl_up_sync(warp::kFullMask, through, d);
      if (lane >= d) through += up;
    }
    total = __shfl_sync(warp::kFullMask, through, kTileWarps - 1);
    const U through_before = __shfl_sync(warp::kFullMask, through, w > 0 ? w - 1 : 0);
    before = w > 0 ? through_before : U{0};
  }
  __syncthreads();  // warp_totals may be reused at once
  return before + inclusive - v;
}

/// Where a delta not coded goes in the histogram and the emit table: their last slot (never read
/// in the histogram; no bits in the emit table). Choosing the index keeps a branch off each delta.
inline constexpr std::uint32_t kNotCodedSlot = kMaxSymbols;

/// Whether element i of this thread's block is a coded delta (element 0 of the tile is not).
__device__ __forceinline__ bool coded(std::uint32_t i, std::uint32_t count) { return i < count && (threadIdx.x != 0 || i != 0); }

/// The emit entry of this thread's delta i: the last one (no bits) where it is not coded. The
/// index is chosen, not the entry: a load under the condition compiled to a branch around it, a
/// delta at a time, and a load of both spilled in the Huffman encoder (ptxas: 60 bytes).
__device__ __forceinline__ emit_entry emit_of(const encode_shared& s, const symbol_map& symbol,
                                              const std::uint32_t (&zz)[32], std::uint32_t count, int i) {
  return s.emit[coded(static_cast<std::uint32_t>(i), count) ? symbol(zz[i]) : kNotCodedSlot];
}

/// By all 256 threads, before a block barrier that comes before estimate_tile (the encoder's
/// first): clears what estimate_tile accumulates into, which saves that step a barrier of its own.
__device__ __forceinline__ void begin_estimate(encode_shared& s) {
  // Two stores, not a loop: 280 bins over 256 threads (ptxas: 25 instructions instead of 55).
  static_assert(kMaxSymbols > kTileThreads && kMaxSymbols <= 2 * kTileThreads, "a thread clears one bin or two");
  s.hist[threadIdx.x] = 0;
  if (threadIdx.x < kMaxSymbols - kTileThreads) s.hist[kTileThreads + threadIdx.x] = 0;
  if (threadIdx.x == 0) s.best = ~std::uint64_t{0};
}

/// Which of a thread's deltas count_deltas adds: all, the gate's sample, or the others.
enum class delta_set { all, sample, rest };

/// Adds this thread's coded deltas of `which` set to s.hist (under 256 literals).
template <delta_set kWhich>
__device__ __forceinline__ void count_deltas(encode_shared& s, const std::uint32_t (&zz)[32], std::uint32_t count) {
  // One shared-memory atomic a delta. Lanes holding the same symbol used to add it once
  // (__match_any_sync first), but the match cost more than the atomics it saved (64 MiB, REL 1e-3,
  // Huffman encode: tiled fields 378-381 -> 393-396 GB/s, noise 297-300 -> 350-352). Every delta
  // adds, those not coded to kNotCodedSlot: an atomic under a condition compiled to a branch
  // around it, six instructions more a delta.
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    // Blocks start at multiples of 32 elements: element 32b + i is in the sample where i is.
    if (kWhich != delta_set::all && format::in_selector_sample(static_cast<std::uint32_t>(i)) != (kWhich == delta_set::sample)) continue;
    atomicAdd(&s.hist[coded(i, count) ? symbol_of(zz[i], kMaxLiterals) : kNotCodedSlot], 1u);
  }
}

/// Adaptive's gate (format::huffman::gate_tile_bytes), by all 256 threads after begin_estimate and
/// a block barrier: counts the sample's deltas into s.hist and returns the bytes the sample
/// estimates a huffman tile at (the same in every thread). estimate_tile(..., true) counts the rest.
template <class T>
__device__ __forceinline__ std::uint64_t gate_tile_bytes(encode_shared& s, const std::uint32_t (&zz)[32], std::uint32_t count,
                                                         std::uint32_t elements, std::uint32_t outliers) {
  count_deltas<delta_set::sample>(s, zz, count);
  __syncthreads();
  // Thread t: bin t, and for t < 24 the escape class bin 256 + t. Every sum fits 32 bits, and in
  // 32-bit arithmetic (sample_c_log_c): c lg c sums to at most S lg S < 2^31 (16.16, S <= 2048
  // sampled deltas); the escape bits (31 at most a delta, under 2^16) share a word with the
  // symbols held (at most 280).
  constexpr std::uint32_t kMaxSampled = format::kTileElements / format::kSelectorStride;
  static_assert(kMaxSampled <= kMaxSampleCount && kMaxSampled * kMaxExtraBits < (1u << 16), "the gate's sums fit 32 bits");
  const std::uint32_t c = s.hist[threadIdx.x];
  std::uint32_t clogc = sample_c_log_c(c);
  std::uint32_t packed = c != 0 ? 1u << 16 : 0u;  // symbols held above, escape bits below
  if (threadIdx.x < kMaxSymbols - kMaxLiterals) {
    const std::uint32_t sym = kMaxLiterals + threadIdx.x, n = s.hist[sym];
    clogc += sample_c_log_c(n);
    packed += (n != 0 ? 1u << 16 : 0u) + n * escape_bits(class_width(sym, kMaxLiterals), kMaxLiterals);
  }
  clogc = __reduce_add_sync(warp::kFullMask, clogc);
  packed = __reduce_add_sync(warp::kFullMask, packed);
  if (warp::lane_id() == 0) {
    s.gate_sums[0][threadIdx.x / 32] = clogc;
    s.gate_sums[1][threadIdx.x / 32] = packed;
  }
  __syncthreads();
  clogc = warp::sum_of(s.gate_sums[0]);
  packed = warp::sum_of(s.gate_sums[1]);
  // A full tile's size as a constant (nearly every tile): the estimate's 64-bit arithmetic folds.
  constexpr std::uint32_t kFullTile = format::kTileElements;
  return elements == kFullTile
             ? format::huffman::gate_tile_bytes(clogc, packed & 0xFFFFu, packed >> 16, kFullTile, outliers, sizeof(T))
             : format::huffman::gate_tile_bytes(clogc, packed & 0xFFFFu, packed >> 16, elements, outliers, sizeof(T));
}

/// Steps 1-2, by all 256 threads after begin_estimate and a block barrier (after gate_tile_bytes
/// where `sample_counted`): histogram, literal count, estimated bytes (the same in every thread).
template <class T>
__device__ __forceinline__ estimate estimate_tile(encode_shared& s, const std::uint32_t (&zz)[32], std::uint32_t count,
                                                  std::uint32_t elements, std::uint32_t outliers,
                                                  bool sample_counted = false) {
  if (sample_counted) count_deltas<delta_set::rest>(s, zz, count);
  else count_deltas<delta_set::all>(s, zz, count);
  __syncthreads();

  // Prefix sums over the literal bins (thread t: bin t), both in one scan: the counts (a tile's
  // deltas, below 2^14) in the low bits, c lg c (below 2^34: 8192 deltas of lg <= 14) above.
  constexpr unsigned kCountBits = 14;
  static_assert(format::kTileElements < (1u << kCountBits), "a tile's delta count fits the scan's low bits");
  const std::uint32_t c = s.hist[threadIdx.x];
  std::uint64_t packed_total = 0;
  const std::uint64_t packed_before = block_exclusive_sum(c_log_c(c) << kCountBits | c, s.warp_u64, packed_total);
  constexpr std::uint64_t kCountMask = (std::uint64_t{1} << kCountBits) - 1;
  s.score.count_before[threadIdx.x] = static_cast<std::uint32_t>(packed_before & kCountMask);
  s.score.clogc_before[threadIdx.x] = packed_before >> kCountBits;
  if (threadIdx.x == 0) {
    s.score.count_before[kMaxLiterals] = static_cast<std::uint32_t>(packed_total & kCountMask);
    s.score.clogc_before[kMaxLiterals] = packed_total >> kCountBits;
  }
  __syncthreads();

  // Thread t scores L = t + 1 (the host's estimated_bits). Every delta but the tile's first is
  // coded. Escape classes above L's first (its width's) hold every delta of their width whatever
  // L is, and cost w - 1 bits a delta: each warp sums their terms over the widths above each
  // first width at once, lane k holding width k + 1, and each thread adds its own first class.
  // Summing a thread's classes one by one, up to the widest delta's, took thread 0 (L = 1) about
  // 16 loop steps on noise at REL 1e-4 while the block waited at the barrier below.
  const std::uint32_t total = elements > 0 ? elements - 1 : 0u;
  const std::uint32_t literals = threadIdx.x + 1;
  const std::uint32_t first_width = bit_width(literals);
  std::uint64_t clogc = s.score.clogc_before[literals];
  std::uint32_t extra = 0, used = literals;  // escape bits: under 2^18 (8191 deltas of 31 bits at most)
  {
    const std::uint32_t lane = warp::lane_id(), w = lane + 1;  // deltas of width w: [2^(w-1), 2^w)
    const std::uint32_t n = w <= 8 ? s.score.count_before[1u << w] - s.score.count_before[1u << (w - 1)]
                                   : s.hist[kMaxLiterals + w - 9];
    std::uint64_t clogc_above = c_log_c(n);  // then summed over lanes k.. (widths k + 1..32)
    std::uint32_t extra_above = n * (w - 1);
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
      const std::uint64_t c = __shfl_down_sync(warp::kFullMask, clogc_above, d);
      const std::uint32_t e = __shfl_down_sync(warp::kFullMask, extra_above, d);
      if (lane + d < 32) {
        clogc_above += c;
        extra_above += e;
      }
    }
    const std::uint32_t held = __ballot_sync(warp::kFullMask, n != 0) & ~((1u << first_width) - 1);  // widths above the first
    clogc += __shfl_sync(warp::kFullMask, clogc_above, first_width);  // lane first_width: width first_width + 1 on
    extra += __shfl_sync(warp::kFullMask, extra_above, first_width);
    // The first class: [L, 2^first_width), the escape bin of width 9 for L = 256.
    const std::uint32_t first = first_width <= 8 ? s.score.count_before[1u << first_width] - s.score.count_before[literals]
                                                 : s.hist[kMaxLiterals];
    clogc += c_log_c(first);
    extra += first * escape_bits(first_width, literals);
    if (held != 0) used = literals + (32u - static_cast<std::uint32_t>(__clz(held))) - first_width + 1;
    else if (first != 0) used = literals + 1;
  }
  const std::uint64_t entropy = total == 0 ? 0 : std::uint64_t{total} * log2_fixed(total) - clogc;
  const std::uint64_t bits = entropy + ((extra + kBitsPerCodeLength * used) << 16);
  atomicMin(reinterpret_cast<unsigned long long*>(&s.best), static_cast<unsigned long long>((bits << 9) | (literals - 1)));
  if (threadIdx.x == 0) s.total = total;
  __syncthreads();
  const std::uint64_t best = s.best;
  // Not s.used: build_tile resets that with no barrier before it, while slower warps may still
  // be reading this (that race corrupted tiles now and then).
  if (best == ((bits << 9) | (literals - 1))) s.estimated_symbols = used;  // the winner's symbol count
  __syncthreads();
  estimate e{};
  e.literals = static_cast<std::uint32_t>(best & 0x1FFu) + 1;
  e.symbols = s.estimated_symbols;
  e.bytes = estimated_tile_bytes(best >> 9, e.symbols, elements, outliers, sizeof(T));
  return e;
}

/// Step 3, by all 256 threads after estimate_tile: the codebook, the exact tile, and this thread's
/// bit offset in the stream (`offset`). A selector that takes the tile only under `give_up_at`
/// bytes gets a plan of layout.total ~0 and no codebook where the unlimited Huffman code already
/// reaches that: the code the build would finish is no shorter (its lengths are limited, and
/// every optimal code costs the same), and a tile's bytes only grow with its stream's bits.
template <class T>
__device__ __forceinline__ plan build_tile(encode_shared& s, const std::uint32_t (&zz)[32], std::uint32_t count,
                                           const estimate& e, std::uint32_t elements, std::uint32_t outliers,
                                           std::uint32_t& offset, std::uint64_t give_up_at = ~std::uint64_t{0}) {
  const std::uint32_t literals = e.literals, symbols = e.symbols, first_width = bit_width(literals);
  // Counts under L (the host's symbol_counts), read from the 256-literal histogram: an escape
  // class's literal bins from estimate_tile's prefix sums (still in s.score: the build's arrays
  // that share its memory are written after the barrier below). Summing the bins one by one took
  // one thread up to 128 dependent loads while the block waited at that barrier (ncu, Huffman f32
  // noise at REL 1e-4: 6.5% of the kernel's stall samples).
  for (std::uint32_t sym = threadIdx.x; sym < symbols; sym += kTileThreads) {
    std::uint32_t n;
    if (sym < literals) {
      n = s.hist[sym];
    } else {
      const std::uint32_t w = class_width(sym, literals);
      const std::uint32_t lo = w == first_width ? literals : (1u << (w - 1));
      const std::uint32_t hi = w >= 9 ? kMaxLiterals - 1 : (1u << w) - 1;
      n = lo <= hi ? s.score.count_before[hi + 1] - s.score.count_before[lo] : 0u;
      if (w >= 9) n += s.hist[kMaxLiterals + w - 9];
    }
    s.counts[sym] = n;
    s.length[sym] = 0;
  }
  if (threadIdx.x == 0) {
    s.used = 0;
    s.escape_bits = 0;
  }
  for (std::uint32_t k = threadIdx.x; k <= kMaxSymbols; k += kTileThreads) s.build.length_count[k] = 0;
  for (std::uint32_t k = threadIdx.x; k < kSymbolGroups * (kMaxCodeLength + 1); k += kTileThreads) (&s.build.length_groups[0][0])[k] = 0;
  __syncthreads();
  // The used symbols in both orders the host sorts them in. By (count, symbol): a bitonic sort of
  // the unique keys count << 9 | symbol (unused symbols sort last), 45 compare-exchange steps
  // instead of every thread comparing its symbol with all the others.
  auto& keys = s.build.sort_keys;
#pragma unroll
  for (int round = 0; round < 2; ++round) {
    const std::uint32_t sym = threadIdx.x + round * kTileThreads;
    const std::uint32_t c = sym < symbols ? s.counts[sym] : 0u;
    keys[sym] = c != 0 ? (c << 9 | sym) : ~0u;
    if (c != 0) atomicAdd(&s.used, 1u);
    if (c != 0 && sym >= literals) atomicAdd(&s.escape_bits, c * escape_bits(class_width(sym, literals), literals));
  }
  for (std::uint32_t k = 2; k <= kSortSlots; k <<= 1) {
    for (std::uint32_t j = k / 2; j > 0; j /= 2) {
      // A step of j <= 32 stays within each warp's 64 slots: a warp barrier does, unless the slots
      // come from another warp (the first step; the one after a step of j = 64). 10 block
      // barriers, not 45.
      if (k == 2 || j >= 64 || (j == 32 && k >= 128)) __syncthreads();
      else __syncwarp();
      const std::uint32_t i = ((threadIdx.x & ~(j - 1)) << 1) | (threadIdx.x & (j - 1));
      const std::uint32_t a = keys[i], b = keys[i + j];
      if ((a > b) == ((i & k) == 0)) {
        keys[i] = b;
        keys[i + j] = a;
      }
    }
  }
  __syncthreads();
  const std::uint32_t m = s.used;
  // By (count descending, symbol): the symbols of larger counts first, then those of its count
  // before it. Binary searches for where its count's run starts and ends.
  const auto first_at_least = [&](std::uint32_t key) {
    std::uint32_t lo = 0, hi = m;
    while (lo < hi) {
      const std::uint32_t mid = (lo + hi) / 2;
      if (keys[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  for (std::uint32_t i = threadIdx.x; i < m; i += kTileThreads) {
    const std::uint32_t key = keys[i], c = key >> 9;
    const std::uint32_t run_begin = first_at_least(c << 9), run_end = first_at_least((c + 1) << 9);
    s.build.sorted_down[(m - run_end) + (i - run_begin)] = static_cast<std::uint16_t>(key & 0x1FFu);
  }
  __syncthreads();
  for (std::uint32_t i = threadIdx.x; i < m; i += kTileThreads) s.build.weight[i] = keys[i] >> 9;  // its own slot
  __syncthreads();
  std::uint32_t code_bits = 0;  // the unlimited code's: its merged nodes' weights summed (under a tile's 8192 x 280)
  if (threadIdx.x == 0 && m >= 2) {
    // The host's two-queue merge (limited_code_lengths), step for step. The queues' head weights
    // stay in registers: one shared-memory load per pop on this one thread's critical path.
    auto& b = s.build;
    std::uint32_t next_leaf = 0, next_merged = m;
    std::uint32_t leaf_weight = b.weight[0], merged_weight = 0;
    for (std::uint32_t node = m; node < 2 * m - 1; ++node) {
      std::uint32_t pick[2], sum = 0;
      for (auto& a : pick) {
        if (next_leaf < m && (next_merged == node || leaf_weight <= merged_weight)) {
          a = next_leaf++;
          sum += leaf_weight;
          leaf_weight = next_leaf < m ? b.weight[next_leaf] : 0u;
        } else {
          a = next_merged++;
          sum += merged_weight;
          merged_weight = next_merged < node ? b.weight[next_merged] : 0u;
        }
      }
      b.weight[node] = sum;
      code_bits += sum;
      if (next_merged == node) merged_weight = sum;  // the merged queue was empty: this node heads it
      b.parent[pick[0]] = b.parent[pick[1]] = static_cast<std::uint16_t>(node);
    }
  }
  if (threadIdx.x == 0) {
    const std::uint64_t least_bits = std::uint64_t{code_bits} + s.escape_bits;
    s.gave_up = give_up_at != ~std::uint64_t{0} &&
                tile_layout_of(symbols, tile_subblocks(elements, halves_subblocks(least_bits, elements)), least_bits, outliers, sizeof(T))
                        .total >= give_up_at;
  }
  __syncthreads();
  if (s.gave_up) {
    plan lost{};
    lost.layout.total = ~std::uint64_t{0};
    return lost;
  }
  // Each leaf's depth: its number of ancestors (the root is node 2m - 2).
  for (std::uint32_t i = threadIdx.x; i < m && m >= 2; i += kTileThreads) {
    std::uint32_t depth = 0;
    for (std::uint32_t node = i; node != 2 * m - 2; node = s.build.parent[node]) ++depth;
    atomicAdd(&s.build.length_count[depth], 1u);
  }
  __syncthreads();
  if (threadIdx.x == 0 && m >= 2) {
    // JPEG's length limiting (ITU T.81 K.3): two leaves of the deepest level become one a level
    // up; a shallower leaf splits into two to make room, so the Kraft sum stays 1.
    auto& b = s.build;
    for (std::uint32_t deepest = m; deepest > kMaxCodeLength; --deepest) {
      while (b.length_count[deepest] > 0) {
        std::uint32_t j = deepest - 2;
        while (b.length_count[j] == 0) --j;
        b.length_count[deepest] -= 2;
        b.length_count[deepest - 1] += 1;
        b.length_count[j + 1] += 2;
        b.length_count[j] -= 1;
      }
    }
  }
  __syncthreads();
  // Lengths: the k-th symbol by (count descending, symbol) takes the k-th shortest length.
  for (std::uint32_t k = threadIdx.x; k < m; k += kTileThreads) {
    std::uint32_t len = 1;
    if (m >= 2) {
      std::uint32_t through = 0;
      for (len = 1; len <= kMaxCodeLength; ++len) {
        through += s.build.length_count[len];
        if (k < through) break;
      }
    }
    s.length[s.build.sorted_down[k]] = static_cast<std::uint8_t>(len);
  }
  __syncthreads();
  // Canonical codes: consecutive within a length, in symbol order, shorter lengths first.
  if (threadIdx.x <= kMaxCodeLength) s.build.first_code[threadIdx.x] = first_canonical_code(s.build.length_count, threadIdx.x);
  std::uint32_t rank[2];
  ranks_within_length(s.length, m >= 2 ? symbols : 0u, s.build.length_groups, rank);
  bool wider_than_word = false;  // a used symbol whose code and escape take more than 32 bits
#pragma unroll
  for (int round = 0; round < 2; ++round) {
    const std::uint32_t sym = threadIdx.x + round * kTileThreads;
    if (sym >= symbols) continue;
    const std::uint32_t len = s.length[sym];
    const std::uint32_t code = len == 0 || m < 2 ? 0u : __brev(s.build.first_code[len] + rank[round]) >> (32 - len);
    const std::uint32_t stream_len = m >= 2 ? len : 0u;
    std::uint32_t extra = 0, escape_from = sym;  // a literal's
    if (sym >= literals) {
      const std::uint32_t width = class_width(sym, literals);
      extra = escape_bits(width, literals);
      escape_from = width == first_width ? literals : 1u << (width - 1);
    }
    s.emit[sym] = emit_entry{code | stream_len << emit_entry::kLengthShift | extra << emit_entry::kEscapeBitsShift |
                                 (stream_len + extra) << emit_entry::kBitsShift,
                             escape_from};
    wider_than_word |= len != 0 && stream_len + extra > 32;
  }
  if (threadIdx.x == 0) s.emit[kNotCodedSlot] = emit_entry{0, 0};  // deltas not coded: 0 (see emit_stream)
  const bool codes_fit_word = __syncthreads_or(wider_than_word) == 0;

  // This thread's bits, its offset, the sub-blocks' lengths.
  std::uint32_t bits = 0;
  const symbol_map symbol(literals);
#pragma unroll
  for (int i = 0; i < 32; ++i) bits += emit_of(s, symbol, zz, count, i).bits();
  std::uint32_t half = bits;  // four threads (lanes 4j..4j+3) make a half sub-block
  half += __shfl_xor_sync(warp::kFullMask, half, 1);
  half += __shfl_xor_sync(warp::kFullMask, half, 2);
  if (threadIdx.x % 4 == 0) s.half_subblock_bits[threadIdx.x / 4] = static_cast<std::uint16_t>(half);
  // A tile's stream takes under 2^32 bits (8192 deltas of at most kMaxCodeLength + kMaxExtraBits).
  static_assert(std::uint64_t{format::kTileElements} * (kMaxCodeLength + kMaxExtraBits) < (std::uint64_t{1} << 32),
                "a tile's stream bits fit 32 bits");
  std::uint32_t stream_bits = 0;
  offset = block_exclusive_sum(bits, s.warp_u32, stream_bits);
  plan pl{};
  pl.literals = literals;
  pl.symbols = symbols;
  pl.stream_bits = stream_bits;
  pl.halved = halves_subblocks(stream_bits, elements);
  pl.codes_fit_word = codes_fit_word;
  pl.layout = tile_layout_of(symbols, tile_subblocks(elements, pl.halved), stream_bits, outliers, sizeof(T));
  return pl;
}

/// The 32-bit words of a planned tile's stream (its padding included).
__device__ __forceinline__ std::uint32_t stream_words(const plan& pl) {
  return static_cast<std::uint32_t>((pl.layout.outlier_index - pl.layout.stream) / 4);
}

/// Step 4a, by all 256 threads after build_tile: the stream into `target` (shared or global
/// memory, stream_words(pl) words, zeroed here) from this thread's `count` deltas `zz` (0 past
/// `count` where `count` > 0, and the tile's first, which is not coded). The encoder stages it in
/// shared memory before it learns where the tile goes, then copies it out coalesced (write_tile):
/// atomics on global words were its largest stall (ncu), and the look-back's wait overlaps this.
__device__ __forceinline__ void emit_stream(const encode_shared& s, const plan& pl, const std::uint32_t (&zz)[32],
                                            std::uint32_t count, std::uint32_t offset, std::uint32_t* target) {
  for (std::uint32_t k = threadIdx.x; k < stream_words(pl); k += kTileThreads) target[k] = 0;
  __syncthreads();
  // This thread's codes, LSB first from bit `offset`. Every word it fills it stores, its first
  // one too (whose low bits, the thread before's, are zero here); the one it leaves partly filled
  // it ORs in after a barrier, once every store is done. No branch on the data (a predicated
  // store and selects): a thread's code lengths and escapes are its own, and branches on them
  // split its warp.
  std::uint64_t acc = 0;
  std::uint32_t held = offset % 32, word = offset / 32;
  // `bits` (32 at most) more of `value`: under 32 held before, so one word at most is due after.
  const auto put = [&](std::uint32_t value, std::uint32_t bits) {
    acc |= static_cast<std::uint64_t>(value) << held;
    held += bits;
    const bool full = held >= 32;
    if (full) target[word] = static_cast<std::uint32_t>(acc);
    acc = full ? acc >> 32 : acc;
    word += held / 32;
    held %= 32;
  };
  const std::uint32_t literals = pl.literals;
  const symbol_map symbol(literals);
  // A delta not coded is 0 (past the block's count; the tile's first delta, from the element to
  // itself): with the last entry's escape_from of 0 it puts no bits. A block of no elements skips
  // the puts: its zz were never written (zeroing them cost 17 instructions a warp on every tile).
  if (count == 0) {
    // nothing to put
  } else if (pl.codes_fit_word) {
    // Code and escape in one word (nearly every tile: a code takes 11 bits at most, and deltas
    // under 2^22 escape in 21 or fewer): one put a delta, not two.
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const emit_entry e = emit_of(s, symbol, zz, count, i);
      put(e.code() | (zz[i] - e.escape_from) << e.length(), e.bits());
    }
  } else {
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const emit_entry e = emit_of(s, symbol, zz, count, i);
      put(e.code(), e.length());
      put(zz[i] - e.escape_from, e.escape_bits());
    }
  }
  __syncthreads();
  if (held > 0) atomicOr(&target[word], static_cast<std::uint32_t>(acc));  // other threads' bits share it
}

/// Step 4b, by all 256 threads: everything of the tile before its outlier arrays. `tile` is
/// 8-byte aligned global memory; `staged` holds the stream (emit_stream, after a barrier), or is
/// null, and the stream is emitted into the tile directly.
__device__ __forceinline__ void write_tile(const encode_shared& s, const plan& pl, std::uint32_t elements,
                                           std::uint32_t outliers, std::int32_t base, std::byte* tile,
                                           const std::uint32_t (&zz)[32], std::uint32_t count, std::uint32_t offset,
                                           const std::uint32_t* staged) {
  const tile_layout& l = pl.layout;
  if (threadIdx.x == 0) {
    *reinterpret_cast<tile_header*>(tile) =
        tile_header{static_cast<std::uint8_t>(tile_mode::huffman), 0, static_cast<std::uint16_t>(outliers), base};
    *reinterpret_cast<huffman_header*>(tile + sizeof(tile_header)) =
        huffman_header{static_cast<std::uint16_t>(pl.symbols), static_cast<std::uint8_t>(pl.literals - 1), flags_for(pl.halved)};
  }
  // Code-length nibbles, sub-block lengths and the padding between: one byte a thread.
  const std::uint32_t subblocks = tile_subblocks(elements, pl.halved);
  for (std::uint64_t at = l.code_lengths + threadIdx.x; at < l.stream; at += kTileThreads) {
    std::uint32_t byte = 0;
    if (at < l.subblock_bits) {
      const std::uint64_t k = 2 * (at - l.code_lengths);
      if (k < pl.symbols) byte = s.length[k];
      if (k + 1 < pl.symbols) byte |= static_cast<std::uint32_t>(s.length[k + 1]) << 4;
    } else {
      const std::uint64_t b = (at - l.subblock_bits) / 2;
      if (b < subblocks) {
        const std::uint32_t bits = pl.halved ? s.half_subblock_bits[b]
                                             : std::uint32_t{s.half_subblock_bits[2 * b]} + s.half_subblock_bits[2 * b + 1];
        byte = (bits >> (8 * ((at - l.subblock_bits) % 2))) & 0xFFu;
      }
    }
    tile[at] = static_cast<std::byte>(byte);
  }
  auto* words = reinterpret_cast<std::uint32_t*>(tile + l.stream);
  if (staged != nullptr) {
    for (std::uint32_t k = threadIdx.x; k < stream_words(pl); k += kTileThreads) words[k] = staged[k];
  } else {
    emit_stream(s, pl, zz, count, offset, words);
  }
}

/// A decode table entry, by the next 11 stream bits (LSB first): the first code's symbol, and,
/// when the window also holds one or two more whole codes of literals (the first one a literal
/// too), those literals; the length covers every code it holds. Up to three deltas for one lookup
/// on the decoder's dependent chain: short codes (skewed data) are most of a stream.
/// An escape symbol's entry (one code: extra 0) holds, where the literals would, its escape bit
/// count and whether its class is a wide one (width > bit_width(L): the delta is 2^bits + the
/// bits, else L + the bits), so the decoder reads them with the symbol, not after it.
namespace table_entry {
inline constexpr std::uint32_t kLengthShift = 9, kSecondShift = 13, kThirdShift = 21, kExtraShift = 29;
inline constexpr std::uint32_t kEscapeBitsShift = kSecondShift, kWideShift = kSecondShift + 5;
__device__ __forceinline__ std::uint32_t make(std::uint32_t first, std::uint32_t length, std::uint32_t extra = 0,
                                              std::uint32_t second = 0, std::uint32_t third = 0) {
  return first | length << kLengthShift | second << kSecondShift | third << kThirdShift | extra << kExtraShift;
}
/// The entry of one code of symbol `sym`, `length` bits long (an escape's bits not counted).
__device__ __forceinline__ std::uint32_t make_single(std::uint32_t sym, std::uint32_t length, std::uint32_t literals,
                                                     std::uint32_t first_width) {
  if (sym < literals) return make(sym, length);
  const std::uint32_t width = class_width(sym, literals);
  return make(sym, length) | escape_bits(width, literals) << kEscapeBitsShift | std::uint32_t{width > first_width} << kWideShift;
}
}  // namespace table_entry

/// Per-tile scratch of the decoder (about 11 KB).
struct decode_shared {
  std::uint32_t table[1u << kMaxCodeLength];  ///< table_entry, by the next 11 stream bits
  std::uint16_t canonical_symbol[kMaxSymbols];
  std::uint16_t canonical_start[kMaxSymbols];  ///< the code's first 11-bit window, MSB first
  std::uint8_t length[kMaxSymbols];
  std::uint32_t count_of_length[kMaxCodeLength + 1];
  std::uint32_t first_code[kMaxCodeLength + 1];      ///< the canonical code of the first symbol of each length
  std::uint32_t first_position[kMaxCodeLength + 1];  ///< its place in canonical order
  group_counts group_count;  ///< symbols of each length per group of 32
  std::uint32_t subblock_start[kMaxTileSubblocks + 1];
  std::uint32_t kraft, used, status, shortest;
  huffman_header header;
  std::uint32_t stream[kStagedStreamWords];  ///< the stream's first words (tile_words)
};

/// A tile's stream words: the first `staged` from shared memory (decode_tile copies them there),
/// the rest from global memory; none past `count` (they read as 0). Predicated loads, no branch:
/// the lanes of a warp parse different sub-blocks, and any branch they took apart the warp would
/// take one after the other.
struct tile_words {
  const std::uint32_t* global;
  const std::uint32_t* shared;
  std::uint32_t staged, count;
  __device__ std::uint32_t load(std::uint32_t k) const {
    // Two predicated loads, not one through a pointer chosen per word: that made every load a
    // generic one, slower than a shared-memory load where the word is staged.
    const std::uint32_t staged_word = k < staged ? shared[k] : 0u;
    const std::uint32_t global_word = k >= staged && k < count ? __ldg(global + k) : 0u;
    return staged_word | global_word;
  }
  /// Brings word k's line into L1 where it is read from global memory: a lane reads its stream
  /// in order, and a miss stalls every lane of its warp.
  __device__ void prefetch(std::uint32_t k) const {
    if (k >= staged && k < count) asm volatile("prefetch.global.L1 [%0];" ::"l"(global + k));
  }
};

/// The same when the whole stream is staged: shared-memory loads only.
struct staged_words {
  const std::uint32_t* shared;
  std::uint32_t count;
  __device__ std::uint32_t load(std::uint32_t k) const { return k < count ? shared[k] : 0u; }
  __device__ void prefetch(std::uint32_t) const {}
};

/// By one lane: the deltas of a sub-block's stream, bits [begin, end), into row[i, count). Each
/// step looks the next 11 stream bits up; the entry gives one code with its escape bits, or two or
/// three literals. No branch on the data (selects and predicated stores), and one shared-memory
/// load on the step's dependent chain: the stream words at and after the position sit in
/// registers (w0..w3, the position within 32 bits of w0), and the two words after those are
/// loaded at the start of the step, for the shift by up to two words at its end (a step takes at
/// most 11 + 31 bits). The parse this replaced loaded the three words at its position each step,
/// a second load on the chain. True when the codes end at `end` and no escape is malformed.
template <class Words>
__device__ __forceinline__ bool parse_subblock(const decode_shared& s, const Words& words, std::uint32_t begin,
                                               std::uint32_t end, std::uint32_t i, std::uint32_t count,
                                               std::uint32_t literals, std::uint32_t first_width, std::uint32_t* row) {
  std::uint32_t pos = begin, k = begin / 32;
  std::uint32_t w0 = words.load(k), w1 = words.load(k + 1), w2 = words.load(k + 2), w3 = words.load(k + 3);
  bool bad = false;
  while (i < count) {
    const std::uint32_t w4 = words.load(k + 4), w5 = words.load(k + 5);  // used at the step's end
    words.prefetch(k + 64);
    const std::uint32_t o = pos % 32;
    const std::uint32_t lo = __funnelshift_r(w0, w1, o), hi = __funnelshift_r(w1, w2, o);
    const std::uint32_t entry = s.table[lo & ((1u << kMaxCodeLength) - 1)];
    const std::uint32_t extra = entry >> table_entry::kExtraShift;
    std::uint32_t len = (entry >> table_entry::kLengthShift) & 0xFu;
    std::uint32_t z = entry & 0x1FFu;
    const bool several = extra != 0 && i + extra < count;
    if (extra != 0 && !several) len = s.length[z];  // the sub-block's last deltas: the first code alone (a literal)
    const bool escape = z >= literals;              // only in a one-code entry
    const std::uint32_t bits = escape ? (entry >> table_entry::kEscapeBitsShift) & 0x1Fu : 0u;
    const std::uint32_t low = __funnelshift_r(lo, hi, len) & ((1u << bits) - 1u);
    const bool wide = (entry >> table_entry::kWideShift) & 1u;
    // A first-class escape stands for L + low, which must keep L's bit width: below 2^first_width
    // (a comparison, not a bit width: no branch around a FLO on the step's path).
    bad |= escape && !wide && ((literals + low) >> first_width) != 0;
    z = escape ? (wide ? 1u << bits : literals) + low : z;
    pos += len + bits;
    row[i] = z;
    if (several) row[i + 1] = (entry >> table_entry::kSecondShift) & 0xFFu;
    if (several && extra == 2) row[i + 2] = (entry >> table_entry::kThirdShift) & 0xFFu;
    i += several ? extra + 1 : 1u;
    const std::uint32_t shift = pos / 32 - k;  // 0, 1 or 2 words
    k += shift;
    w0 = shift == 0 ? w0 : shift == 1 ? w1 : w2;
    w1 = shift == 0 ? w1 : shift == 1 ? w2 : w3;
    w2 = shift == 0 ? w2 : shift == 1 ? w3 : w4;
    w3 = shift == 0 ? w3 : shift == 1 ? w4 : w5;
  }
  return !bad && pos == end;
}

/// A tile's stream, read from any bit (words past its end read as 0); Words: tile_words or staged_words.
template <class Words>
struct stream_window {
  Words words;
  __device__ std::uint32_t load(std::uint32_t k) const { return words.load(k); }
  /// The 64 bits from bit `pos` on, LSB first.
  __device__ std::uint64_t at(std::uint32_t pos) const {
    const std::uint32_t k = pos / 32, o = pos % 32;
    const std::uint64_t low = load(k) | static_cast<std::uint64_t>(load(k + 1)) << 32;
    return o == 0 ? low : low >> o | static_cast<std::uint64_t>(load(k + 2)) << (64 - o);
  }
};

/// What one table lookup decodes.
struct decoded {
  std::uint32_t bits;  ///< taken from the stream
  std::uint32_t n;     ///< values: 1, or 2-3 literals
  std::uint32_t z[3];  ///< the zig-zagged deltas
  bool bad;            ///< a first-class escape whose bits give another width
};

/// The zig-zagged delta of escape symbol `sym` (>= L) from the escape bits at the bottom of
/// `window`; adds their count to `taken`, and sets `bad` where a first-class escape's bits give
/// another width.
__device__ __forceinline__ std::uint32_t unescape(std::uint32_t sym, std::uint64_t window, std::uint32_t literals,
                                                  std::uint32_t first_width, std::uint32_t& taken, bool& bad) {
  const std::uint32_t width = class_width(sym, literals);
  const std::uint32_t extra_bits = escape_bits(width, literals);
  const auto low = static_cast<std::uint32_t>(window & ((std::uint64_t{1} << extra_bits) - 1));
  taken += extra_bits;
  if (width > first_width) return 1u << extra_bits | low;
  bad |= bit_width(literals + low) != width;
  return literals + low;
}

/// One table lookup at stream bit `pos` (`window`: the bits from there): one code with its escape
/// bits, or two or three literal codes where they all end by `end` (a sub-block's last codes are
/// taken one at a time, as the bits after it are the next sub-block's).
__device__ __forceinline__ decoded decode_at(const decode_shared& s, std::uint64_t window, std::uint32_t pos, std::uint32_t end,
                                             std::uint32_t literals, std::uint32_t first_width) {
  const std::uint32_t entry = s.table[window & ((1u << kMaxCodeLength) - 1)];
  const std::uint32_t extra = entry >> table_entry::kExtraShift;
  decoded d{(entry >> table_entry::kLengthShift) & 0xFu, 1, {entry & 0x1FFu, (entry >> table_entry::kSecondShift) & 0xFFu,
                                                             (entry >> table_entry::kThirdShift) & 0xFFu}, false};
  if (extra != 0 && pos + d.bits <= end) {
    d.n = extra + 1;
    return d;
  }
  if (extra != 0) d.bits = s.length[d.z[0]];
  if (d.z[0] >= literals) d.z[0] = unescape(d.z[0], window >> d.bits, literals, first_width, d.bits, d.bad);
  return d;
}

/// By one whole warp: the `count` values of a sub-block's stream, bits [begin, end), into
/// row[0, count), where every code is at least a bit (two or more symbols used); or of two
/// consecutive sub-blocks of a halved tile as one, the first `before_mid` values ending at bit
/// `mid` (else mid = end and before_mid = count). Lane j takes the
/// codes that start in its 32nd of the bits. Each lane first guesses that a code starts where its
/// share does and parses to the end of its share; its true start is where the lane before stopped,
/// so the lanes whose guess was wrong parse again from there until no start moves (Huffman codes
/// fall back into step within a few codes: a round or two; at most 32, as lane r is right after
/// round r). The lanes' value counts then give each its first index, and they parse once more,
/// writing. True when the codes give exactly `count` values, end at `end`, the value after the
/// first `before_mid` starts at `mid` (no lookup takes literals across it), and no escape is
/// malformed: what the one-lane parse of each sub-block accepts. Halves go two at a time because
/// the warp's rounds and scans cost the same for 128 values as for 256 (Adaptive, tiled fields at
/// REL 1e-4: a half at a time 244-251 -> 214 GB/s).
template <class Window>
__device__ __forceinline__ bool warp_decode_subblock(const decode_shared& s, Window bits, std::uint32_t begin, std::uint32_t mid,
                                                     std::uint32_t end, std::uint32_t count, std::uint32_t before_mid,
                                                     std::uint32_t literals, std::uint32_t first_width, std::uint32_t* row) {
  const unsigned lane = warp::lane_id();
  const std::uint32_t share = (end - begin + 31) / 32;
  const std::uint32_t stop = min(begin + (lane + 1) * share, end);
  std::uint32_t start = min(begin + lane * share, end);
  const auto parse = [&](std::uint32_t& values) {  // from `start` to the first code at or past `stop`
    std::uint32_t pos = start;
    values = 0;
    while (pos < stop) {
      const decoded d = decode_at(s, bits.at(pos), pos, pos < mid ? mid : end, literals, first_width);
      pos += d.bits;
      values += d.n;
    }
    return pos;
  };
  std::uint32_t values = 0;
  std::uint32_t after = parse(values);
  for (;;) {
    std::uint32_t truth = __shfl_up_sync(warp::kFullMask, after, 1);
    if (lane == 0) truth = begin;
    const bool moved = truth != start;
    if (__ballot_sync(warp::kFullMask, moved) == 0) break;
    if (moved) {
      start = truth;
      after = parse(values);
    }
  }
  const std::uint32_t through = warp::inclusive_sum(values);
  if (__shfl_sync(warp::kFullMask, through, 31) != count || __shfl_sync(warp::kFullMask, after, 31) != end) return false;
  std::uint32_t i = through - values;
  bool bad = false, at_mid = false;
  for (std::uint32_t pos = start; pos < stop;) {
    at_mid |= pos == mid && i == before_mid;
    const decoded d = decode_at(s, bits.at(pos), pos, pos < mid ? mid : end, literals, first_width);
    pos += d.bits;
    row[i] = d.z[0];
    if (d.n > 1) row[i + 1] = d.z[1];
    if (d.n > 2) row[i + 2] = d.z[2];
    i += d.n;
    bad |= d.bad;
  }
  return !__any_sync(warp::kFullMask, bad) && (mid == end || __any_sync(warp::kFullMask, at_mid));
}

/// By one whole warp: the same where one symbol is used: its code is empty, so every value is the
/// symbol, or, for an escape class, its escape bits, all of one length.
template <class Window>
__device__ __forceinline__ bool warp_decode_lone(Window bits, std::uint32_t begin, std::uint32_t mid, std::uint32_t end,
                                                 std::uint32_t count, std::uint32_t before_mid, std::uint32_t literals,
                                                 std::uint32_t first_width, std::uint32_t lone, std::uint32_t* row) {
  const std::uint32_t each = lone >= literals ? escape_bits(class_width(lone, literals), literals) : 0u;
  if (mid - begin != before_mid * each || end - begin != count * each) return false;
  bool bad = false;
  for (std::uint32_t i = warp::lane_id(); i < count; i += 32) {
    std::uint32_t taken = 0;
    row[i] = lone >= literals ? unescape(lone, bits.at(begin + i * each), literals, first_width, taken, bad) : lone;
  }
  return !__any_sync(warp::kFullMask, bad);
}

/// By all 256 threads: checks the huffman tile at `tile` (`span` bytes), decodes its zig-zagged
/// deltas into the sub-block rows over the stage (element 0: 0; load_subblock_rows reads them)
/// and gives the outlier arrays' offsets. Returns ok or the problem, the same in every thread.
/// `for_latency` picks how the sub-blocks are parsed (the same values and verdicts either way):
/// by all eight warps (warp_decode_subblock), which finishes the tile soonest but issues about
/// three times the instructions, or one lane a sub-block (warp 0), the fewest instructions. The caller asks for latency where huffman tiles are few in the chunk, among tiles
/// of modes that finish sooner: the launch waits for its slowest blocks (Adaptive on the tiled
/// fields at REL 1e-3, 42 huffman tiles of 2048: decode 336 -> 441 GB/s); where many tiles are
/// huffman tiles, the other blocks on the SM fill the issue slots the lane-a-sub-block parse
/// leaves (all-warp parsing of every tile there: 290 -> 187 GB/s; with 36% huffman tiles, worse
/// as well).
template <class T>
__device__ __forceinline__ decode_status decode_tile(decode_shared& s, const std::byte* tile, std::uint64_t span,
                                                     std::uint32_t elements, std::uint32_t outliers, warp_stage* stages,
                                                     bool for_latency, std::uint64_t& outlier_index,
                                                     std::uint64_t& outlier_values) {
  const auto fail = [&s](decode_status why) { atomicCAS(&s.status, 0u, static_cast<std::uint32_t>(why)); };
  if (threadIdx.x == 0) {
    s.status = 0;
    s.kraft = 0;
    s.used = 0;
    const std::uint64_t headers = sizeof(tile_header) + sizeof(huffman_header);
    if (span < headers) {
      s.status = static_cast<std::uint32_t>(decode_status::truncated_tile);
    } else {
      s.header = *reinterpret_cast<const huffman_header*>(tile + sizeof(tile_header));
      const tile_header th = *reinterpret_cast<const tile_header*>(tile);
      const std::uint32_t literals = s.header.last_literal + 1u;
      if (th.reserved != 0 || has_unknown_flags(s.header) || s.header.symbols < literals ||
          s.header.symbols > max_symbols(literals)) {
        s.status = static_cast<std::uint32_t>(decode_status::bad_tile_header);
      } else if (tile_layout_of(s.header.symbols, tile_subblocks(elements, is_halved(s.header)), 0, 0, sizeof(T)).stream > span) {
        s.status = static_cast<std::uint32_t>(decode_status::truncated_tile);
      }
    }
  }
  for (std::uint32_t k = threadIdx.x; k <= kMaxCodeLength; k += kTileThreads) s.count_of_length[k] = 0;
  for (std::uint32_t k = threadIdx.x; k < kSymbolGroups * (kMaxCodeLength + 1); k += kTileThreads) (&s.group_count[0][0])[k] = 0;
  __syncthreads();
  if (s.status != 0) return static_cast<decode_status>(s.status);
  const std::uint32_t symbols = s.header.symbols, literals = s.header.last_literal + 1u;
  const std::uint32_t first_width = bit_width(literals);
  // Halved: sub-blocks of 128, lane k of warp w parsing sub-block 2k + w; its row is the second
  // half of row k for w = 1 (the rows stay those of 256, which load_subblock_rows reads).
  const bool halved = is_halved(s.header);
  const std::uint32_t subblocks = tile_subblocks(elements, halved), subblock_size = subblock_elements(halved);
  const std::uint32_t per_lane = halved ? 2u : 1u;  // sub-blocks a lane of warp 0 sums the lengths of
  const auto row_of = [&](std::uint32_t b) {
    return b / per_lane * kSubblockRow + b % per_lane * kHalfSubblockElements;
  };
  const tile_layout head = tile_layout_of(symbols, subblocks, 0, 0, sizeof(T));

  // Code lengths, their count per length and the Kraft sum.
  for (std::uint32_t sym = threadIdx.x; sym < symbols; sym += kTileThreads) {
    const std::uint32_t len = stored_code_length(tile[head.code_lengths + sym / 2], sym);
    s.length[sym] = static_cast<std::uint8_t>(len);
    if (len == 0) continue;
    if (len > kMaxCodeLength) {
      fail(decode_status::bad_codebook);
      continue;
    }
    atomicAdd(&s.count_of_length[len], 1u);
    atomicAdd(&s.used, 1u);
    atomicAdd(&s.kraft, 1u << (kMaxCodeLength - len));
  }
  // Sub-block starts (warp 0, a lane the one or two sub-blocks of 256 values).
  if (threadIdx.x < 32) {
    const std::uint32_t b = threadIdx.x * per_lane;
    const auto* const lengths = reinterpret_cast<const std::uint16_t*>(tile + head.subblock_bits);
    const std::uint32_t first = b < subblocks ? lengths[b] : 0u;
    const std::uint32_t second = per_lane == 2 && b + 1 < subblocks ? lengths[b + 1] : 0u;
    const std::uint32_t through = warp::inclusive_sum(first + second);
    if (b == 0) s.subblock_start[0] = 0;
    if (per_lane == 2) s.subblock_start[b + 1] = through - second;
    s.subblock_start[b + per_lane] = through;
  }
  __syncthreads();
  const std::uint32_t used = s.used;
  const std::uint32_t stream_bits = s.subblock_start[32 * per_lane];
  const tile_layout l = tile_layout_of(symbols, subblocks, stream_bits, outliers, sizeof(T));
  if (threadIdx.x == 0) {
    const bool complete =
        used == 0 ? elements <= 1 : used == 1 ? s.kraft == (1u << (kMaxCodeLength - 1)) : s.kraft == (1u << kMaxCodeLength);
    if (!complete) fail(decode_status::bad_codebook);
    if (l.total > span) fail(decode_status::truncated_tile);
    std::uint32_t shortest = kMaxCodeLength;
    for (std::uint32_t len = kMaxCodeLength; len >= 1; --len) shortest = s.count_of_length[len] != 0 ? len : shortest;
    s.shortest = shortest;
  }
  __syncthreads();
  if (s.status != 0) return static_cast<decode_status>(s.status);
  outlier_index = l.outlier_index;
  outlier_values = l.outlier_values;

  // Canonical order and first windows; then the table.
  if (used >= 2) {
    if (threadIdx.x <= kMaxCodeLength) {
      const std::uint32_t len = threadIdx.x;
      std::uint32_t position = 0;
      for (std::uint32_t k = 1; k < len; ++k) position += s.count_of_length[k];
      s.first_code[len] = first_canonical_code(s.count_of_length, len);
      s.first_position[len] = position;
    }
    std::uint32_t rank[2];
    ranks_within_length(s.length, symbols, s.group_count, rank);
#pragma unroll
    for (int round = 0; round < 2; ++round) {
      const std::uint32_t sym = threadIdx.x + round * kTileThreads;
      const std::uint32_t len = sym < symbols ? s.length[sym] : 0u;
      if (len == 0) continue;
      s.canonical_symbol[s.first_position[len] + rank[round]] = static_cast<std::uint16_t>(sym);
      s.canonical_start[s.first_position[len] + rank[round]] =
          static_cast<std::uint16_t>((s.first_code[len] + rank[round]) << (kMaxCodeLength - len));
    }
    __syncthreads();
    // Thread t fills the 8 windows 8t..8t+7 (MSB first), whose first codes come in canonical
    // order: one binary search, then a walk. A literal whose window has room for whole literal
    // codes after it gets up to two of them; while the codes before stay the same the rest of the
    // window rises, so each later code is walked the same way.
    const std::uint32_t shortest = s.shortest;
    const auto last_at_or_below = [&](std::uint32_t window) {
      std::uint32_t lo = 0, hi = used - 1;
      while (lo < hi) {
        const std::uint32_t mid = (lo + hi + 1) / 2;
        if (s.canonical_start[mid] <= window) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    const auto walk = [&](std::uint32_t& p, std::uint32_t window) {
      while (p + 1 < used && s.canonical_start[p + 1] <= window) ++p;
    };
    constexpr std::uint32_t kWindowsPerThread = (1u << kMaxCodeLength) / kTileThreads;
    constexpr std::uint32_t kWindowMask = (1u << kMaxCodeLength) - 1;
    const std::uint32_t first_window = threadIdx.x * kWindowsPerThread;
    std::uint32_t p1 = last_at_or_below(first_window), p2 = 0, p3 = 0, run1 = ~0u, run2 = ~0u;
    for (std::uint32_t j = 0; j < kWindowsPerThread; ++j) {
      const std::uint32_t w = first_window + j;
      walk(p1, w);
      const std::uint32_t sym1 = s.canonical_symbol[p1], l1 = s.length[sym1];
      std::uint32_t entry = table_entry::make_single(sym1, l1, literals, first_width);
      if (sym1 < literals && l1 + shortest <= kMaxCodeLength) {
        const std::uint32_t rest = (w << l1) & kWindowMask;
        if (p1 != run1) {
          run1 = p1;
          run2 = ~0u;
          p2 = last_at_or_below(rest);
        } else {
          walk(p2, rest);
        }
        const std::uint32_t sym2 = s.canonical_symbol[p2], l2 = s.length[sym2];
        if (sym2 < literals && l1 + l2 <= kMaxCodeLength) {
          entry = table_entry::make(sym1, l1 + l2, 1, sym2);
          if (l1 + l2 + shortest <= kMaxCodeLength) {
            const std::uint32_t rest2 = (w << (l1 + l2)) & kWindowMask;
            if (p2 != run2) {
              run2 = p2;
              p3 = last_at_or_below(rest2);
            } else {
              walk(p3, rest2);
            }
            const std::uint32_t sym3 = s.canonical_symbol[p3], l3 = s.length[sym3];
            if (sym3 < literals && l1 + l2 + l3 <= kMaxCodeLength) entry = table_entry::make(sym1, l1 + l2 + l3, 2, sym2, sym3);
          }
        }
      }
      s.table[__brev(w) >> (32 - kMaxCodeLength)] = entry;
    }
  }
  std::uint32_t lone = 0;  // the one symbol used, where only one is
  if (used == 1) {
    for (std::uint32_t sym = 0; sym < symbols; ++sym) lone = s.length[sym] != 0 ? sym : lone;
    if (!for_latency) {
      for (std::uint32_t k = threadIdx.x; k < (1u << kMaxCodeLength); k += kTileThreads) s.table[k] = table_entry::make_single(lone, 0, literals, first_width);
    }
  }
  // The stream's first words to shared memory, by the whole block (tile_words).
  const auto* const stream = reinterpret_cast<const std::uint32_t*>(tile + l.stream);
  const auto stream_words = static_cast<std::uint32_t>((l.outlier_index - l.stream) / 4);
  const tile_words words{stream, s.stream, min(stream_words, kStagedStreamWords), stream_words};
  for (std::uint32_t k = threadIdx.x; k < words.staged; k += kTileThreads) s.stream[k] = __ldg(stream + k);
  __syncthreads();

  std::uint32_t* const deltas = subblock_rows(stages);
  const bool all_staged = words.staged == words.count;  // shared-memory loads only
  if (for_latency) {
    // Each warp decodes every 8th run of 256 values (a sub-block, or two halves), the whole warp one run.
    const auto decode_subblocks = [&](auto bits) {
      for (std::uint32_t r = threadIdx.x / 32; r * kSubblockElements < elements; r += kTileWarps) {
        const std::uint32_t first = r * kSubblockElements, skip = first == 0 ? 1u : 0u;  // element 0 is not coded
        const std::uint32_t count = min(elements - first, kSubblockElements) - skip;
        const std::uint32_t before_mid = min(elements - first, subblock_size) - skip;
        std::uint32_t* const row = deltas + r * kSubblockRow;
        if (skip != 0 && warp::lane_id() == 0) row[0] = 0;
        // Past the last sub-block the starts are the stream's end (the lengths read as 0).
        const std::uint32_t begin = s.subblock_start[r * per_lane], end = s.subblock_start[(r + 1) * per_lane];
        const std::uint32_t mid = s.subblock_start[r * per_lane + 1];
        // No symbol used: an empty tile (count 0), whose table was never built.
        const bool ok = used == 0   ? begin == end && count == 0
                        : used == 1 ? warp_decode_lone(bits, begin, mid, end, count, before_mid, literals, first_width, lone, row + skip)
                                    : warp_decode_subblock(s, bits, begin, mid, end, count, before_mid, literals, first_width, row + skip);
        if (!ok && warp::lane_id() == 0) fail(decode_status::corrupt_subblock);
      }
    };
    if (all_staged) decode_subblocks(stream_window<staged_words>{{s.stream, words.count}});
    else decode_subblocks(stream_window<tile_words>{words});
    __syncthreads();
    return static_cast<decode_status>(s.status);
  }
  // Warp 0 decodes, lane k sub-block k, into the sub-block rows (parse_subblock); halved, warps 0
  // and 1, lane k of warp w sub-block 2k + w. One warp of 32 lanes, against four of 8 (64 MiB, two
  // runs each): tiled fields 356-365 -> 431-436 GB/s at REL 1e-3, 322-327 -> 369-374 at 1e-4,
  // noise 168-169 -> 222-224 at 1e-3: with no branch to take apart, a warp's lanes issue together,
  // and four warps issued four times the instructions. Halving instead shortens the chain each
  // lane waits on.
  const std::uint32_t b = threadIdx.x % 32 * per_lane + threadIdx.x / 32;
  if (threadIdx.x < 32 * per_lane && b < subblocks) {
    const std::uint32_t begin = s.subblock_start[b], end = s.subblock_start[b + 1];
    const std::uint32_t first = b * subblock_size;
    const std::uint32_t count = min(elements - first, subblock_size);
    std::uint32_t* const row = deltas + row_of(b);
    if (first == 0) row[0] = 0;
    const std::uint32_t from = first == 0 ? 1u : 0u;  // element 0 is not coded
    const bool ok = all_staged ? parse_subblock(s, staged_words{s.stream, words.count}, begin, end, from, count, literals, first_width, row)
                               : parse_subblock(s, words, begin, end, from, count, literals, first_width, row);
    if (!ok) fail(decode_status::corrupt_subblock);
  }
  __syncthreads();
  return static_cast<decode_status>(s.status);
}

}  // namespace huffman
}  // namespace kernels
NCCLZ_END_KERNEL_NAMESPACE
