// The device decoder of the huffman tile mode (docs/format.md, "Huffman tile"): it reads the bytes
// encode.cuh and host/huffman_reference.hpp write.
//
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
#include "ncclz/device/detail/decode_status.cuh"
#include "ncclz/device/detail/tile/huffman/codebook.cuh"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/format.hpp"
#include "ncclz/format/huffman.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail::tile::huffman {

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
/// the warp's rounds and scans cost the same for 128 values as for 256 (docs/design.md).
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
/// three times the instructions, or one lane a sub-block (warp 0), the fewest instructions. The
/// caller asks for latency where huffman tiles are few in the chunk, among tiles of modes that
/// finish sooner: the launch waits for its slowest blocks; where many tiles are huffman, the other
/// blocks on the SM fill the issue slots the one-lane parse leaves (docs/design.md).
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
  // and 1, lane k of warp w sub-block 2k + w. One warp of 32 lanes, not four of 8: with no branch
  // to take apart, a warp's lanes issue together (docs/design.md). Halving instead shortens the chain each
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

}  // namespace device::detail::tile::huffman
NCCLZ_END_KERNEL_NAMESPACE
