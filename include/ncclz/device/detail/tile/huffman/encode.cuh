// The device encoder of the huffman tile mode (docs/format.md, "Huffman tile"); it writes the bytes
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
// Decoding: decode.cuh.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ncclz/block/block_scan.cuh"
#include "ncclz/config.hpp"
#include "ncclz/device/detail/tile/huffman/codebook.cuh"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/format.hpp"
#include "ncclz/format/huffman.hpp"
#include "ncclz/tuning/huffman.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail::tile::huffman {


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
  bool codes;           ///< zz held codes, not deltas (format::huffman::kCodesPredictor); the encoder sets it
  tile_layout layout;  ///< layout.total: ~0 where build_tile gave up (no tile was built)
};

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
  // One shared-memory atomic a delta: adding each symbol once per warp cost more than it saved.
  // Every delta adds, those not coded to kNotCodedSlot, with no branch (docs/design.md).
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    // Blocks start at multiples of 32 elements: element 32b + i is in the sample where i is.
    if (kWhich != delta_set::all && tuning::in_selector_sample(static_cast<std::uint32_t>(i)) != (kWhich == delta_set::sample)) continue;
    atomicAdd(&s.hist[coded(i, count) ? symbol_of(zz[i], kMaxLiterals) : kNotCodedSlot], 1u);
  }
}

/// Adaptive's gate (tuning::huffman_gate_tile_bytes), by all 256 threads after begin_estimate and
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
  constexpr std::uint32_t kMaxSampled = format::kTileElements / tuning::adaptive_policy::selector_stride;
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
             ? tuning::huffman_gate_tile_bytes(clogc, packed & 0xFFFFu, packed >> 16, kFullTile, outliers, sizeof(T))
             : tuning::huffman_gate_tile_bytes(clogc, packed & 0xFFFFu, packed >> 16, elements, outliers, sizeof(T));
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
  const std::uint64_t packed_before = block::exclusive_sum<kTileWarps>(c_log_c(c) << kCountBits | c, s.warp_u64, packed_total);
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
  offset = block::exclusive_sum<kTileWarps>(bits, s.warp_u32, stream_bits);
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
/// null, and the stream is emitted into the tile directly. With `kChecked`, returns this thread's
/// check terms of the words it wrote whole: the headers, the code lengths and sub-block lengths,
/// and a staged stream (an unstaged one is ORed together by several threads: read it back).
template <bool kChecked>
__device__ __forceinline__ std::uint32_t write_tile(const encode_shared& s, const plan& pl, std::uint32_t elements,
                                                    std::uint32_t outliers, std::int32_t base, std::byte* tile,
                                                    const std::uint32_t (&zz)[32], std::uint32_t count, std::uint32_t offset,
                                                    const std::uint32_t* staged) {
  const tile_layout& l = pl.layout;
  std::uint32_t sum = 0;
  if (threadIdx.x == 0) {
    const tile_header th{static_cast<std::uint8_t>(tile_mode::huffman), 0, static_cast<std::uint16_t>(outliers), base};
    const huffman_header hh{static_cast<std::uint16_t>(pl.symbols), static_cast<std::uint8_t>(pl.literals - 1),
                            flags_for(pl.halved, pl.codes)};
    *reinterpret_cast<tile_header*>(tile) = th;
    *reinterpret_cast<huffman_header*>(tile + sizeof(tile_header)) = hh;
    if constexpr (kChecked) {
      std::uint32_t words[3];
      static_assert(sizeof(th) + sizeof(hh) == sizeof words);
      memcpy(words, &th, sizeof th);
      memcpy(words + 2, &hh, sizeof hh);
      for (std::uint32_t w = 0; w < 3; ++w) sum += format::check_term(words[w], w);
    }
  }
  // Code-length nibbles, sub-block lengths and the padding between: a word a thread.
  static_assert(sizeof(tile_header) + sizeof(huffman_header) == 12, "the code lengths start at word 3");
  const std::uint32_t subblocks = tile_subblocks(elements, pl.halved);
  const auto byte_at = [&](std::uint64_t at) -> std::uint32_t {
    if (at < l.subblock_bits) {
      const std::uint64_t k = 2 * (at - l.code_lengths);
      std::uint32_t byte = 0;
      if (k < pl.symbols) byte = s.length[k];
      if (k + 1 < pl.symbols) byte |= static_cast<std::uint32_t>(s.length[k + 1]) << 4;
      return byte;
    }
    const std::uint64_t b = (at - l.subblock_bits) / 2;
    if (b >= subblocks) return 0;
    const std::uint32_t bits =
        pl.halved ? s.half_subblock_bits[b] : std::uint32_t{s.half_subblock_bits[2 * b]} + s.half_subblock_bits[2 * b + 1];
    return (bits >> (8 * ((at - l.subblock_bits) % 2))) & 0xFFu;
  };
  auto* tile_words = reinterpret_cast<std::uint32_t*>(tile);
  for (std::uint64_t w = l.code_lengths / 4 + threadIdx.x; w < l.stream / 4; w += kTileThreads) {
    const std::uint32_t word = byte_at(4 * w) | byte_at(4 * w + 1) << 8 | byte_at(4 * w + 2) << 16 | byte_at(4 * w + 3) << 24;
    tile_words[w] = word;
    if constexpr (kChecked) sum += format::check_term(word, static_cast<std::uint32_t>(w));
  }
  auto* words = tile_words + l.stream / 4;
  if (staged != nullptr) {
    const auto first_word = static_cast<std::uint32_t>(l.stream / 4);
    for (std::uint32_t k = threadIdx.x; k < stream_words(pl); k += kTileThreads) {
      const std::uint32_t word = staged[k];
      words[k] = word;
      if constexpr (kChecked) sum += format::check_term(word, first_word + k);
    }
  } else {
    emit_stream(s, pl, zz, count, offset, words);
  }
  return sum;
}

}  // namespace device::detail::tile::huffman
NCCLZ_END_KERNEL_NAMESPACE
