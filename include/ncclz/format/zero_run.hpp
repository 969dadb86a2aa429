// The zero_run tile mode (docs/format.md, "Zero-run tile"): everything the host reference
// (ncclz/host/zero_run_reference.hpp) and the device coder (ncclz/device/detail/tile/zero_run/)
// share, as __host__ __device__ code. The layout, the choice of every form, the bits a sub-block
// writes and the decoding of a sub-block with every check are written once, here, over a value
// accessor (`values(i)`: the sub-block's i-th zig-zagged value), a bit writer (`put(v, bits)`) and
// a bit reader over 32-bit words, so both sides write and accept the same bytes by construction.
//
// Everything here works one sub-block at a time, streaming: no arrays of the sub-block's runs or
// magnitudes, so one GPU thread can measure, write or decode a sub-block in registers.
#pragma once

#if !defined(__CUDA_ARCH__)
#  include <bit>
#endif
#include <cstdint>

#include "ncclz/config.hpp"
#include "ncclz/detail/subblocks.hpp"
#include "ncclz/format.hpp"

// Loops with a constant trip count over register arrays: unrolled on the device so the arrays stay
// in registers; the host compiler does not know the pragma (and unrolls what pays by itself).
#if defined(__CUDA_ARCH__)
#  define NCCLZ_ZERO_RUN_UNROLL _Pragma("unroll")
#else
#  define NCCLZ_ZERO_RUN_UNROLL
#endif
// The templates below are __host__ __device__ and call their accessor, writer or word loader,
// which is host-only on the host side and device-only on the device side: nvcc must not check a
// call that its instantiation never makes (Thrust's __thrust_exec_check_disable__).
#if defined(__CUDACC__)
#  define NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#  define NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
#endif

namespace ncclz::format::zero_run {

using ncclz::detail::kSubblockElements;
using ncclz::detail::subblock_count;

inline constexpr std::uint8_t kTileMode = static_cast<std::uint8_t>(tile_mode::zero_run);  // 3
inline constexpr std::uint32_t kTileSubblocks = format::kTileElements / kSubblockElements;  // 32
inline constexpr std::uint32_t kGroupElements = format::kBlockElements;  // one width per 32 values
inline constexpr std::uint32_t kFormBits = 4;
inline constexpr std::uint32_t kMaxRice = 8;   // forms 0..8: sparse, Rice parameter = form; a run is < 256
inline constexpr std::uint32_t kDense = 9;     // form 9: dense
inline constexpr std::uint32_t kCountBits = 8;  // nonzeros of a sparse sub-block minus 1 (1..256 nonzeros)
inline constexpr std::uint32_t kWidthBits = 6;  // a group's width, 0..32
inline constexpr std::uint32_t kSignModeBits = 2;
inline constexpr std::uint32_t kMagnitudeFormBits = 4;  // 0..14: Rice parameter; 15: groups of 32
inline constexpr std::uint32_t kMagnitudeGroups = 15;
inline constexpr std::uint32_t kMaxStoredMagnitude = 0x7FFFFFFFu;  // a Rice-coded one; bounds its unary quotient
inline constexpr std::uint32_t kMaxMinMagnitude = 0x80000000u;    // min_magnitude is 1..2^31

/// The signs of a sparse sub-block's nonzeros.
enum class sign_mode : std::uint32_t { mixed = 0 /* a bit each, 1 = negative */, positive = 1, negative = 2 };

/// How a tile's values are made from its codes q (the element's code; 0 for an outlier).
enum class predictor : std::uint8_t {
  codes = 0,   ///< value i = zigzag(q[i]); base is 0
  deltas = 1,  ///< value i = zigzag(q[i] - q[i-1]), q[-1] = base = q[0]: the fixed-length tile's values
};

/// Follows the tile header.
struct zero_run_header {
  std::uint8_t predictor;       ///< ncclz::format::zero_run::predictor
  std::uint8_t reserved0;       ///< zero
  std::uint16_t reserved1;      ///< zero
  std::uint32_t min_magnitude;  ///< 1..2^31: sparse sub-blocks store each nonzero's magnitude minus it
};
static_assert(sizeof(zero_run_header) == 8);

NCCLZ_HOST_DEVICE constexpr std::uint32_t group_count(std::uint32_t values) {
  return (values + kGroupElements - 1) / kGroupElements;
}

/// The largest sub-block a valid encoder writes: dense, every value 32 bits wide.
inline constexpr std::uint32_t kMaxSubblockBits = kFormBits + group_count(kSubblockElements) * kWidthBits + kSubblockElements * 32;
static_assert(kMaxSubblockBits <= 0xFFFF, "a sub-block's bit length must fit its u16");

/// Where the parts of a zero_run tile start, relative to the tile, and its total size.
struct tile_layout : format::stream_tail {
  std::uint64_t subblock_bits;  ///< u16 per sub-block: the bits of its stream (0: all values zero)
  std::uint64_t stream;         ///< the sub-blocks' streams back to back, LSB first; 4-byte aligned
};

NCCLZ_HOST_DEVICE constexpr tile_layout tile_layout_of(std::uint32_t subblocks, std::uint64_t stream_bits,
                                                       std::uint32_t outliers, std::uint32_t value_bytes) {
  const std::uint64_t subblock_bits = sizeof(format::tile_header) + sizeof(zero_run_header);
  const std::uint64_t stream = format::align_up(subblock_bits + 2ull * subblocks, 4);
  return {format::stream_tail_of(stream, stream_bits, outliers, value_bytes), subblock_bits, stream};
}

/// The largest zero_run tile an encoder writes for `elements` values: every sub-block dense at 32
/// bits, every value an outlier.
NCCLZ_HOST_DEVICE constexpr std::uint64_t max_tile_bytes(std::uint32_t elements, std::uint32_t value_bytes) {
  const std::uint32_t full = elements / kSubblockElements, rest = elements % kSubblockElements;
  const std::uint64_t bits = std::uint64_t{full} * kMaxSubblockBits +
                             (rest > 0 ? kFormBits + group_count(rest) * kWidthBits + rest * 32ull : 0);
  return tile_layout_of(subblock_count(elements), bits, elements, value_bytes).total;
}

// --- values -------------------------------------------------------------------------------------

/// The value a predictor codes for code `q` whose predecessor is `prev` (uint32 wrap-around).
NCCLZ_HOST_DEVICE constexpr std::uint32_t predict(std::int32_t q, std::int32_t prev, predictor pred) {
  const auto u = static_cast<std::uint32_t>(q);
  return format::zigzag(static_cast<std::int32_t>(pred == predictor::deltas ? u - static_cast<std::uint32_t>(prev) : u));
}

/// The predictors whose streams the encoder measures, bit 0 codes and bit 1 deltas, from the tile's
/// zero codes and zero deltas (element 0's delta from base counts as zero). Where at least half the
/// values are zero under one of them (the sparse tiles Adaptive codes in this mode) and the two
/// counts are more than 1/16 of the elements apart, the one with more zeros alone (the runs
/// decide the size there); otherwise both, and the shorter stream is kept (codes on a tie: small
/// dense values can favour the codes with fewer zeros). Measuring is most of the encoder's work;
/// on the libncarg-data fields at REL 1e-3 this keeps the exact choice's bytes and measures one
/// predictor on 68% of the tiles.
NCCLZ_HOST_DEVICE constexpr std::uint32_t measured_predictors(std::uint32_t zero_codes, std::uint32_t zero_deltas,
                                                             std::uint32_t elements) {
  const std::uint32_t more = zero_codes > zero_deltas ? zero_codes : zero_deltas;
  const std::uint32_t gap = more - (zero_codes > zero_deltas ? zero_deltas : zero_codes);
  if (2ull * more < elements || 16ull * gap <= elements) return 3u;
  return zero_deltas > zero_codes ? 2u : 1u;
}

/// A nonzero zig-zagged value's sign and magnitude (z = 2m for +m, 2m - 1 for -m; m <= 2^31).
NCCLZ_HOST_DEVICE constexpr bool is_negative(std::uint32_t z) { return (z & 1u) != 0; }
NCCLZ_HOST_DEVICE constexpr std::uint32_t magnitude(std::uint32_t z) { return (z >> 1) + (z & 1u); }

/// Bit length of v (0 for 0).
NCCLZ_HOST_DEVICE inline std::uint32_t value_width(std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  return 32u - static_cast<std::uint32_t>(__clz(v));
#else
  return static_cast<std::uint32_t>(std::bit_width(v));
#endif
}

/// Zero bits below the lowest one of v (v != 0).
NCCLZ_HOST_DEVICE inline std::uint32_t trailing_zeros(std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__ffs(static_cast<int>(v)) - 1);
#else
  return static_cast<std::uint32_t>(std::countr_zero(v));
#endif
}

/// The low `bits` (0..32) bits set.
NCCLZ_HOST_DEVICE constexpr std::uint32_t low_mask(std::uint32_t bits) {
  return bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1u;
}

/// Bits of v as a Rice code of parameter k: v >> k zeros, a one, k low bits.
NCCLZ_HOST_DEVICE constexpr std::uint64_t rice_code_bits(std::uint32_t v, std::uint32_t k) {
  return std::uint64_t{v >> k} + 1 + k;
}

// --- what the encoder chooses: exact integer bit counts, ties to the smaller id ------------------

/// A choice among forms: its id and bits.
struct choice {
  std::uint32_t form = 0;
  std::uint64_t bits = 0;
};

/// Bits of `count` values stored as groups of 32 from the widths (bit lengths of their largest) of
/// the groups: 6 + size x width each.
NCCLZ_HOST_DEVICE constexpr std::uint64_t group_bits(std::uint32_t size, std::uint32_t width) {
  return kWidthBits + std::uint64_t{size} * width;
}

/// Bits of values stored as groups of 32, each a 6-bit width and the values in that width, fed one
/// value at a time (a last, shorter group counts as it is).
class grouped_counter {
 public:
  NCCLZ_HOST_DEVICE void add(std::uint32_t v) {
    any_ |= v;
    if (++in_group_ == kGroupElements) {
      bits_ += group_bits(kGroupElements, value_width(any_));
      in_group_ = 0;
      any_ = 0;
    }
  }
  [[nodiscard]] NCCLZ_HOST_DEVICE std::uint64_t bits() const {
    return bits_ + (in_group_ > 0 ? group_bits(in_group_, value_width(any_)) : 0);
  }

 private:
  std::uint64_t bits_ = 0;
  std::uint32_t in_group_ = 0, any_ = 0;
};

/// What the magnitude form's choice needs of a sparse sub-block's stored magnitudes (each nonzero's
/// magnitude minus the tile's least, m < 2^31; at most a sub-block's 256): sums over them. The
/// host adds them magnitude by magnitude (magnitude_stats); the device with warp reductions.
/// Rice(j) takes m >> j + 1 + j bits, and the sum of m >> j is high 2^(16 - j) plus the sum over
/// bits b >= j of low_bits[b] 2^(b - j) (j <= 14): 17 counts, where 15 sums of m >> j held 15
/// 64-bit words in the device encoder's registers (they spilled).
struct magnitude_sums {
  std::uint32_t count = 0;
  std::uint32_t high = 0;            ///< sum of m >> 16
  std::uint32_t low_bits[16] = {};  ///< how many m have bit b set, b < 16
  std::uint64_t grouped_bits = 0;   ///< as groups of 32: sum of group_bits(size, width)
};

/// Rice(j) for j of 0..14, or groups of 32 (form 15): the fewest bits, the form field included,
/// the smaller form on a tie. From magnitude_sums' fields, `low_bit(b)` giving low_bits[b] (the
/// device reads its counts out of packed counters).
NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
template <class LowBits>
NCCLZ_HOST_DEVICE choice choose_magnitude_form(std::uint32_t count, std::uint32_t high, std::uint64_t grouped_bits,
                                               const LowBits& low_bit) {
  choice best{kMagnitudeGroups, kMagnitudeFormBits + grouped_bits};
  std::uint64_t low = low_bit(15);  // the sum of (m mod 2^16) >> (j + 1), from the top bit down
  NCCLZ_ZERO_RUN_UNROLL
  for (std::uint32_t j = kMagnitudeGroups; j-- > 0;) {  // downwards, so a tie keeps the smaller j
    low = 2 * low + low_bit(j);
    const std::uint64_t rice_bits = (std::uint64_t{high} << (16 - j)) + low + std::uint64_t{count} * (1 + j);
    if (kMagnitudeFormBits + rice_bits <= best.bits) best = {j, kMagnitudeFormBits + rice_bits};
  }
  return best;
}

NCCLZ_HOST_DEVICE inline choice choose_magnitude_form(const magnitude_sums& m) {
  return choose_magnitude_form(m.count, m.high, m.grouped_bits, [&m](std::uint32_t b) { return m.low_bits[b]; });
}

/// Runs of zeros in a sub-block are under 256: 8 bits.
inline constexpr std::uint32_t kRunBits = 8;
static_assert(kSubblockElements <= (1u << kRunBits), "a run fits 8 bits");

/// What the form choice of a sub-block needs: sums over its values. The host adds them value by
/// value (subblock_stats); the device with warp reductions (device/detail/tile/zero_run/); the choice is this
/// code on both. The runs' Rice(k) bits take the sum of r >> k, which is the sum over bits b >= k
/// of run_bits[b] 2^(b - k), as the magnitudes' do.
struct subblock_sums {
  std::uint32_t nonzeros = 0;
  std::uint32_t negatives = 0;              ///< nonzeros with a negative sign
  std::uint64_t dense_bits = 0;             ///< the values as groups of 32: sum of group_bits(size, width)
  std::uint32_t run_bits[kRunBits] = {};  ///< over the runs of zeros before each nonzero: how many have bit b set
  magnitude_sums magnitudes;
};

NCCLZ_HOST_DEVICE constexpr sign_mode signs_of(std::uint32_t nonzeros, std::uint32_t negatives) {
  return negatives == nonzeros ? sign_mode::negative : (negatives > 0 ? sign_mode::mixed : sign_mode::positive);
}
NCCLZ_HOST_DEVICE constexpr sign_mode signs_of(const subblock_sums& s) { return signs_of(s.nonzeros, s.negatives); }

/// The sum of r >> k over the runs, from their bit counts (`run_bit(b)`, b < kRunBits).
NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
template <class RunBits>
NCCLZ_HOST_DEVICE std::uint32_t run_shifted(const RunBits& run_bit, std::uint32_t k) {
  std::uint32_t shifted = 0;
  NCCLZ_ZERO_RUN_UNROLL
  for (std::uint32_t b = kRunBits; b-- > 0;) shifted = b >= k ? 2 * shifted + run_bit(b) : shifted;
  return shifted;
}

/// The smallest form, given the magnitudes' (choose_magnitude_form): exact bit counts, the smaller
/// form on a tie; 0 bits (no form) when every value is 0. Dense: 4 + sum over groups of (6 + 32
/// w); sparse k: 4 + 8 + the runs' Rice(k) bits + 2 (+ a bit per nonzero if mixed) + the
/// magnitudes' bits. From subblock_sums' fields, `run_bit(b)` giving run_bits[b].
NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
template <class RunBits>
NCCLZ_HOST_DEVICE choice choose_form(std::uint32_t nonzeros, std::uint32_t negatives, std::uint64_t dense_bits,
                                     const RunBits& run_bit, const choice& magnitudes) {
  const std::uint32_t c = nonzeros;
  if (c == 0) return {};
  choice best{kDense, kFormBits + dense_bits};
  const std::uint64_t sign_bits = kSignModeBits + (signs_of(c, negatives) == sign_mode::mixed ? c : 0);
  const std::uint64_t sparse_fixed = kFormBits + kCountBits + sign_bits + magnitudes.bits;
  std::uint32_t shifted = 0;  // the sum of r >> k, from the top bit down (0 for k = 8)
  NCCLZ_ZERO_RUN_UNROLL
  for (std::uint32_t k = kMaxRice + 1; k-- > 0;) {
    if (k < kRunBits) shifted = 2 * shifted + run_bit(k);
    const std::uint64_t bits = sparse_fixed + shifted + std::uint64_t{c} * (1 + k);
    if (bits <= best.bits) best = {k, bits};
  }
  return best;
}
static_assert(kMaxRice == kRunBits, "Rice(8) of a run under 256 is its 9 fixed bits");

NCCLZ_HOST_DEVICE inline choice choose_form(const subblock_sums& s, const choice& magnitudes) {
  return choose_form(s.nonzeros, s.negatives, s.dense_bits, [&s](std::uint32_t b) { return s.run_bits[b]; }, magnitudes);
}

/// The smallest form (the magnitudes' form worked out here).
NCCLZ_HOST_DEVICE inline choice choose_form(const subblock_sums& s) {
  return s.nonzeros == 0 ? choice{} : choose_form(s, choose_magnitude_form(s.magnitudes));
}

/// How one sub-block is written: what put_subblock needs besides the values.
struct subblock_plan {
  std::uint32_t form = 0;            ///< 0..8: sparse, Rice parameter of the runs; 9: dense
  std::uint32_t nonzeros = 0;        ///< 0: every value 0, nothing written
  sign_mode signs = sign_mode::positive;
  std::uint32_t magnitude_form = 0;  ///< sparse only: 0..14 Rice parameter, 15 groups
};

/// The plan of `form` (choose_form's, or another one to test).
NCCLZ_HOST_DEVICE inline subblock_plan plan_of(const subblock_sums& s, std::uint32_t form) {
  return {form, s.nonzeros, signs_of(s), s.nonzeros > 0 ? choose_magnitude_form(s.magnitudes).form : 0};
}

/// Stored magnitudes fed in order: their magnitude_sums.
class magnitude_stats {
 public:
  NCCLZ_HOST_DEVICE void add(std::uint32_t m) {
    ++sums_.count;
    sums_.high += m >> 16;
    NCCLZ_ZERO_RUN_UNROLL
    for (std::uint32_t b = 0; b < 16; ++b) sums_.low_bits[b] += (m >> b) & 1u;
    groups_.add(m);
  }
  [[nodiscard]] NCCLZ_HOST_DEVICE magnitude_sums sums() const {
    magnitude_sums m = sums_;
    m.grouped_bits = groups_.bits();
    return m;
  }

 private:
  magnitude_sums sums_;
  grouped_counter groups_;
};

/// One sub-block's values fed in order (sequentially): their subblock_sums.
class subblock_stats {
 public:
  NCCLZ_HOST_DEVICE explicit subblock_stats(std::uint32_t min_magnitude) : min_magnitude_(min_magnitude) {}

  NCCLZ_HOST_DEVICE void add(std::uint32_t z) {
    dense_.add(z);
    if (z == 0) {
      ++run_;
      return;
    }
    NCCLZ_ZERO_RUN_UNROLL
    for (std::uint32_t b = 0; b < kRunBits; ++b) sums_.run_bits[b] += (run_ >> b) & 1u;  // run_ < 256
    ++sums_.nonzeros;
    sums_.negatives += z & 1u;
    magnitudes_.add(magnitude(z) - min_magnitude_);
    run_ = 0;
  }

  [[nodiscard]] NCCLZ_HOST_DEVICE subblock_sums sums() const {
    subblock_sums s = sums_;
    s.dense_bits = dense_.bits();
    s.magnitudes = magnitudes_.sums();
    return s;
  }

 private:
  std::uint32_t min_magnitude_;
  std::uint32_t run_ = 0;  // zeros since the last nonzero
  subblock_sums sums_;
  grouped_counter dense_;
  magnitude_stats magnitudes_;
};

// --- writing a sub-block ------------------------------------------------------------------------
// A Writer has `put(std::uint32_t v, std::uint32_t bits)`: appends the `bits` (0..32) low bits of
// v, least significant first; v < 2^bits.

/// v >> k zero bits, a one bit, then the k low bits of v.
NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
template <class Writer>
NCCLZ_HOST_DEVICE void put_rice(Writer& w, std::uint32_t v, std::uint32_t k) {
  std::uint32_t q = v >> k;
  for (; q >= 32; q -= 32) w.put(0, 32);
  w.put(1u << q, q + 1);
  w.put(v & low_mask(k), k);
}

/// `n` values from `values(first)` as groups of 32: a 6-bit width each, then the values in it.
NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
template <class Writer, class Values>
NCCLZ_HOST_DEVICE void put_groups(Writer& w, const Values& values, std::uint32_t n) {
  for (std::uint32_t g = 0; g < n; g += kGroupElements) {
    const std::uint32_t end = n - g < kGroupElements ? n : g + kGroupElements;
    std::uint32_t any = 0;
    for (std::uint32_t i = g; i < end; ++i) any |= values(i);
    const std::uint32_t width = value_width(any);
    w.put(width, kWidthBits);
    for (std::uint32_t i = g; i < end; ++i) w.put(values(i), width);
  }
}

/// Writes one sub-block of `n` values (`values(i)`, i < n, zig-zagged) as `p` says (nothing for an
/// all-zero one). Reads the values up to four times, in order.
NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
template <class Writer, class Values>
NCCLZ_HOST_DEVICE void put_subblock(Writer& w, const Values& values, std::uint32_t n, const subblock_plan& p,
                                    std::uint32_t min_magnitude) {
  if (p.nonzeros == 0) return;
  w.put(p.form, kFormBits);
  if (p.form == kDense) {
    put_groups(w, values, n);
    return;
  }
  w.put(p.nonzeros - 1, kCountBits);
  std::uint32_t run = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (values(i) == 0) {
      ++run;
    } else {
      put_rice(w, run, p.form);
      run = 0;
    }
  }
  w.put(static_cast<std::uint32_t>(p.signs), kSignModeBits);
  if (p.signs == sign_mode::mixed) {
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t z = values(i);
      if (z != 0) w.put(z & 1u, 1);
    }
  }
  w.put(p.magnitude_form, kMagnitudeFormBits);
  auto stored = [&](std::uint32_t z) { return magnitude(z) - min_magnitude; };
  if (p.magnitude_form != kMagnitudeGroups) {
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t z = values(i);
      if (z != 0) put_rice(w, stored(z), p.magnitude_form);
    }
    return;
  }
  // Groups of 32 nonzeros: the width of the next 32, then them.
  for (std::uint32_t i = 0; i < n;) {
    std::uint32_t any = 0, count = 0, end = i;
    for (; end < n && count < kGroupElements; ++end) {
      const std::uint32_t z = values(end);
      if (z != 0) {
        any |= stored(z);
        ++count;
      }
    }
    if (count == 0) break;
    const std::uint32_t width = value_width(any);
    w.put(width, kWidthBits);
    for (; i < end; ++i) {
      const std::uint32_t z = values(i);
      if (z != 0) w.put(stored(z), width);
    }
  }
}

// --- reading a sub-block ------------------------------------------------------------------------

enum class read_status : std::uint32_t { ok, past_end, over_limit };

/// Reads bits [begin, end) of a stream of 32-bit little-endian words, least significant bit first;
/// `Words` is `std::uint32_t operator()(std::uint32_t i) const`, word i. It loads no word past the
/// one that holds bit end - 1, and never loops longer than the bits it has.
template <class Words>
class bit_reader {
 public:
  NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
  NCCLZ_HOST_DEVICE bit_reader(const Words& words, std::uint32_t begin, std::uint32_t end)
      : words_(words), at_(begin), end_(end), next_word_(begin / 32) {
    if (begin % 32 != 0 && begin < end) {
      buffer_ = words_(next_word_++) >> (begin % 32);
      have_ = 32 - begin % 32;
    }
  }

  [[nodiscard]] NCCLZ_HOST_DEVICE std::uint32_t left() const { return end_ - at_; }
  [[nodiscard]] NCCLZ_HOST_DEVICE bool at_end() const { return at_ == end_; }

  /// `bits` (0..32) bits as an integer, first bit lowest; false (and nothing read) if fewer are left.
  NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
  NCCLZ_HOST_DEVICE bool get(std::uint32_t bits, std::uint32_t& v) {
    if (left() < bits) return false;
    refill();
    v = static_cast<std::uint32_t>(buffer_) & low_mask(bits);
    consume(bits);
    return true;
  }

  /// Skips `bits` bits; false if fewer are left.
  NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
  NCCLZ_HOST_DEVICE bool skip(std::uint32_t bits) {
    if (left() < bits) return false;
    while (bits > 0) {
      refill();
      const std::uint32_t take = bits < 32 ? bits : 32;
      consume(take);
      bits -= take;
    }
    return true;
  }

  /// A unary quotient q (q zeros, then a one) with q <= limit: over_limit as soon as more than
  /// `limit` zeros are read, past_end if the bits end first. Word at a time, so bounded by the bits
  /// left / 32 steps, whatever the limit.
  NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
  NCCLZ_HOST_DEVICE read_status unary(std::uint32_t limit, std::uint32_t& q) {
    std::uint32_t zeros = 0;
    for (;;) {
      if (at_ == end_) return read_status::past_end;
      refill();
      const std::uint32_t window = left() < 32 ? left() : 32;  // have_ >= window after refill
      const std::uint32_t bits = static_cast<std::uint32_t>(buffer_) & low_mask(window);
      if (bits != 0) {
        const std::uint32_t t = trailing_zeros(bits);
        consume(t + 1);
        if (t > limit - zeros) return read_status::over_limit;  // zeros <= limit here
        q = zeros + t;
        return read_status::ok;
      }
      consume(window);
      if (window > limit - zeros) return read_status::over_limit;
      zeros += window;
    }
  }

  /// A Rice code of parameter k (0..31) whose value is at most `limit`.
  NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
  NCCLZ_HOST_DEVICE read_status rice(std::uint32_t k, std::uint32_t limit, std::uint32_t& v) {
    // The common case in one step: the quotient's one bit in the next 32 bits, the whole code in
    // the buffer and before the end. Anything else (a long quotient, the end near) goes the
    // general way below, which gives the same value and the same errors.
    if (at_ != end_) {
      refill();
      const std::uint32_t window = left() < 32 ? left() : 32;
      const std::uint32_t bits = static_cast<std::uint32_t>(buffer_) & low_mask(window);
      if (bits != 0) {
        const std::uint32_t t = trailing_zeros(bits), length = t + 1 + k;
        if (t <= (limit >> k) && length <= left() && length <= have_) {
          const std::uint32_t low = static_cast<std::uint32_t>(buffer_ >> (t + 1)) & low_mask(k);
          consume(length);
          v = (t << k) | low;
          return v > limit ? read_status::over_limit : read_status::ok;
        }
      }
    }
    std::uint32_t q = 0, low = 0;
    const read_status s = unary(limit >> k, q);
    if (s != read_status::ok) return s;
    if (!get(k, low)) return read_status::past_end;
    v = (q << k) | low;
    return v > limit ? read_status::over_limit : read_status::ok;
  }

 private:
  // Invariant: next_word_ * 32 == at_ + have_ (once the first word is loaded); buffer_ holds the
  // have_ bits from at_ on.
  NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
  NCCLZ_HOST_DEVICE void refill() {
    if (have_ <= 32 && next_word_ * 32ull < end_) {
      buffer_ |= std::uint64_t{words_(next_word_++)} << have_;
      have_ += 32;
    }
  }
  NCCLZ_HOST_DEVICE void consume(std::uint32_t bits) {  // bits <= 32 <= have_ or bits <= have_
    buffer_ >>= bits;
    have_ -= bits;
    at_ += bits;
  }

  Words words_;
  std::uint32_t at_, end_, next_word_;
  std::uint32_t have_ = 0;
  std::uint64_t buffer_ = 0;
};

/// Why a sub-block does not decode (docs/format.md lists what a decoder rejects).
enum class subblock_error : std::uint32_t {
  none = 0,
  past_end,                ///< a field runs past the sub-block's stored length
  unknown_form,            ///< form 10..15
  wide_group,              ///< a group width over 32
  too_many_nonzeros,       ///< more nonzeros than the sub-block's values
  run_past_end,            ///< a run of zeros leaves no room for the nonzeros after it
  unknown_sign_mode,       ///< sign mode 3
  magnitude_over_31_bits,  ///< a Rice-coded magnitude over 2^31 - 1
  magnitude_past_32_bits,  ///< min_magnitude + a magnitude makes a value over 2^32 - 1
  ends_early,              ///< the fields end before the stored length
};

/// Decodes one sub-block of `n` values (1..256) from `r` (positioned on its bits, ending at its
/// stored length), with every check: calls out(i, z) for each nonzero value z, element i of the
/// sub-block, in increasing i (the caller has zeroed the others), and returns none; a problem
/// stops it (out may have been called for some values). `min_magnitude` is the tile's (1..2^31, checked by the caller). Two passes over a
/// sparse sub-block's runs (the first checks them and finds the signs and magnitudes, the second
/// reads the three together), so no per-nonzero arrays.
NCCLZ_ZERO_RUN_EXEC_CHECK_DISABLE
template <class Reader, class Sink>
NCCLZ_HOST_DEVICE subblock_error get_subblock(Reader& r, std::uint32_t n, std::uint32_t min_magnitude, Sink& out) {
  std::uint32_t form = 0;
  if (!r.get(kFormBits, form)) return subblock_error::past_end;
  if (form > kDense) return subblock_error::unknown_form;
  if (form == kDense) {
    for (std::uint32_t g = 0; g < n; g += kGroupElements) {
      std::uint32_t width = 0;
      if (!r.get(kWidthBits, width)) return subblock_error::past_end;
      if (width > 32) return subblock_error::wide_group;
      const std::uint32_t end = n - g < kGroupElements ? n : g + kGroupElements;
      for (std::uint32_t i = g; i < end; ++i) {
        std::uint32_t z = 0;
        if (!r.get(width, z)) return subblock_error::past_end;
        if (z != 0) out(i, z);
      }
    }
    return r.at_end() ? subblock_error::none : subblock_error::ends_early;
  }
  std::uint32_t count = 0;
  if (!r.get(kCountBits, count)) return subblock_error::past_end;
  const std::uint32_t nonzeros = count + 1;
  if (nonzeros > n) return subblock_error::too_many_nonzeros;
  // The run before nonzero k and the nonzeros after it must fit: room = n - next - (nonzeros - k).
  Reader runs = r;
  for (std::uint32_t k = 0, next = 0; k < nonzeros; ++k) {
    std::uint32_t run = 0;
    const read_status s = r.rice(form, n - next - (nonzeros - k), run);
    if (s != read_status::ok) return s == read_status::past_end ? subblock_error::past_end : subblock_error::run_past_end;
    next += run + 1;
  }
  std::uint32_t signs = 0;
  if (!r.get(kSignModeBits, signs)) return subblock_error::past_end;
  if (signs > static_cast<std::uint32_t>(sign_mode::negative)) return subblock_error::unknown_sign_mode;
  Reader sign_bits = r;
  if (signs == static_cast<std::uint32_t>(sign_mode::mixed) && !r.skip(nonzeros)) return subblock_error::past_end;
  std::uint32_t magnitude_form = 0;
  if (!r.get(kMagnitudeFormBits, magnitude_form)) return subblock_error::past_end;

  std::uint32_t next = 0, width = 0;
  for (std::uint32_t k = 0; k < nonzeros; ++k) {
    std::uint32_t run = 0, negative = signs == static_cast<std::uint32_t>(sign_mode::negative) ? 1u : 0u, stored = 0;
    runs.rice(form, n - next - (nonzeros - k), run);  // read and checked above
    if (signs == static_cast<std::uint32_t>(sign_mode::mixed)) sign_bits.get(1, negative);
    if (magnitude_form == kMagnitudeGroups) {
      if (k % kGroupElements == 0) {
        if (!r.get(kWidthBits, width)) return subblock_error::past_end;
        if (width > 32) return subblock_error::wide_group;
      }
      if (!r.get(width, stored)) return subblock_error::past_end;
    } else {
      const read_status s = r.rice(magnitude_form, kMaxStoredMagnitude, stored);
      if (s != read_status::ok) {
        return s == read_status::past_end ? subblock_error::past_end : subblock_error::magnitude_over_31_bits;
      }
    }
    const std::uint64_t m = std::uint64_t{min_magnitude} + stored;
    const std::uint64_t z = negative != 0 ? 2 * m - 1 : 2 * m;
    if (z > 0xFFFFFFFFu) return subblock_error::magnitude_past_32_bits;
    next += run;
    out(next, static_cast<std::uint32_t>(z));
    ++next;
  }
  return r.at_end() ? subblock_error::none : subblock_error::ends_early;
}

}  // namespace ncclz::format::zero_run
