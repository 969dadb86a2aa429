// Partitions of a buffer: segments (one per rank of a ring) and pipeline chunks inside them.
//
//   auto s = ncclz::schedule::segment_of(count, nranks, r);    // the part rank r owns
//   for (auto c : ncclz::schedule::chunks_of(s, chunk_elements)) ...
//
// Boundaries fall on multiples of a granule, by default format::kTileElements (8192), so every
// segment and chunk but the buffer's last compresses as whole tiles. Only the buffer's end may
// sit between granules. Sizes are balanced in whole granules: with u = ceil(count / granule)
// granules over p parts, part i gets u / p granules, plus one for i < u % p. The partial last
// granule (if any) lands in the last non-empty part. When count is small some parts are empty;
// an empty part starts at `count`, so the parts always cover [0, count) in order.
//
// Pure integer logic (no CUDA), host-only because invalid arguments throw ncclz::invalid_argument.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ncclz/error.hpp"
#include "ncclz/format.hpp"

namespace ncclz::schedule {

/// Elements [first, first + count) of a buffer.
struct segment {
  std::uint64_t first;
  std::uint64_t count;
  [[nodiscard]] constexpr std::uint64_t end() const { return first + count; }
  friend constexpr bool operator==(const segment&, const segment&) = default;
};

namespace detail {
// Checks shared by the schedule headers; messages name the function and the argument. They are
// constexpr so valid calls stay constant expressions; only the failing branch is not.
constexpr void check_positive(const char* function, const char* what, std::uint64_t v) {
  if (v == 0) ncclz::detail::throw_invalid(function, std::string(what) + " must be >= 1, got 0");
}

constexpr void check_nranks(const char* function, int nranks) {
  if (nranks < 1) {
    ncclz::detail::throw_invalid(function, "nranks must be >= 1, got " + std::to_string(nranks));
  }
}

/// `what` (a rank, root or index) must lie in [0, n).
constexpr void check_index(const char* function, const char* what, std::int64_t v, std::int64_t n,
                        const char* n_name) {
  if (v < 0 || v >= n) {
    ncclz::detail::throw_invalid(function, std::string(what) + " = " + std::to_string(v) + " is outside [0, " +
                                               n_name + " = " + std::to_string(n) + ")");
  }
}

/// `v` rounded up to a multiple of `g`, saturating at the largest multiple that fits.
constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t g) {
  const std::uint64_t q = v / g + (v % g != 0);
  return q > std::numeric_limits<std::uint64_t>::max() / g ? std::numeric_limits<std::uint64_t>::max() / g * g
                                                           : q * g;
}
}  // namespace detail

/// Part `index` of `count` elements split into `parts` granule-aligned, balanced parts.
[[nodiscard]] constexpr segment segment_of(std::uint64_t count, int parts, int index,
                                           std::uint64_t granule = format::kTileElements) {
  constexpr const char* fn = "schedule::segment_of";
  if (parts < 1) ncclz::detail::throw_invalid(fn, "parts must be >= 1, got " + std::to_string(parts));
  detail::check_index(fn, "index", index, parts, "parts");
  detail::check_positive(fn, "granule", granule);
  // Work in granules; the last one may be partial, so convert back with a clamp to `count`
  // (which also keeps granules * granule from overflowing near 2^64).
  const std::uint64_t units = count / granule + (count % granule != 0);
  const std::uint64_t p = static_cast<std::uint64_t>(parts), i = static_cast<std::uint64_t>(index);
  const std::uint64_t base = units / p, extra = units % p;
  const std::uint64_t before = i * base + (i < extra ? i : extra);
  const std::uint64_t mine = base + (i < extra ? 1 : 0);
  const std::uint64_t first = before >= units ? count : before * granule;
  const std::uint64_t end = before + mine >= units ? count : (before + mine) * granule;
  return {first, end - first};
}

/// All `parts` parts of `count` elements, in order (see segment_of).
[[nodiscard]] constexpr std::vector<segment> segments(std::uint64_t count, int parts,
                                                      std::uint64_t granule = format::kTileElements) {
  if (parts < 1) {
    ncclz::detail::throw_invalid("schedule::segments", "parts must be >= 1, got " + std::to_string(parts));
  }
  std::vector<segment> out;
  out.reserve(static_cast<std::size_t>(parts));
  for (int i = 0; i < parts; ++i) out.push_back(segment_of(count, parts, i, granule));
  return out;
}

/// Number of pipeline chunks of `s`: chunk_elements rounded up to a granule multiple, the last
/// chunk shorter; an empty segment has none.
[[nodiscard]] constexpr std::uint64_t chunk_count(segment s, std::uint64_t chunk_elements,
                                                  std::uint64_t granule = format::kTileElements) {
  constexpr const char* fn = "schedule::chunk_count";
  detail::check_positive(fn, "chunk_elements", chunk_elements);
  detail::check_positive(fn, "granule", granule);
  const std::uint64_t c = detail::round_up(chunk_elements, granule);
  return s.count / c + (s.count % c != 0);
}

/// Chunk `k` of `s`, in absolute element positions (so it starts on a granule multiple when `s` does).
[[nodiscard]] constexpr segment chunk_of(segment s, std::uint64_t chunk_elements, std::uint64_t k,
                                         std::uint64_t granule = format::kTileElements) {
  const std::uint64_t n = chunk_count(s, chunk_elements, granule);  // validates the sizes
  if (k >= n) {
    ncclz::detail::throw_invalid("schedule::chunk_of", "chunk k = " + std::to_string(k) + " is outside [0, " +
                                                           std::to_string(n) + ")");
  }
  const std::uint64_t c = detail::round_up(chunk_elements, granule);
  const std::uint64_t off = k * c;  // < s.count: cannot overflow
  return {s.first + off, s.count - off < c ? s.count - off : c};
}

/// All chunks of `s`, in order (see chunk_of).
[[nodiscard]] constexpr std::vector<segment> chunks_of(segment s, std::uint64_t chunk_elements,
                                                       std::uint64_t granule = format::kTileElements) {
  const std::uint64_t n = chunk_count(s, chunk_elements, granule);
  std::vector<segment> out;
  out.reserve(static_cast<std::size_t>(n));
  for (std::uint64_t k = 0; k < n; ++k) out.push_back(chunk_of(s, chunk_elements, k, granule));
  return out;
}

}  // namespace ncclz::schedule
