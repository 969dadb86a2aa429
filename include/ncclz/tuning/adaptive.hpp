// The Adaptive coder's tile-mode selector: its tuning policy and the rules it applies with it,
// on the host (host/reference_codec.hpp) and the device (device/detail/encode_kernel.cuh) alike,
// so both pick the same mode for every tile. None of this is part of the wire format: a decoder
// reads whatever mode a tile names. What was measured to choose each constant is in
// docs/design.md, "Tuning constants".
#pragma once

#include <cstdint>

#include "ncclz/config.hpp"

namespace ncclz::tuning {

/// The selector's constants, one line of evidence each (docs/design.md has the measurements).
struct adaptive_policy {
  /// An entropy tile must come under fixed_length less 1/32: those modes decode 3-5x slower.
  static constexpr std::uint64_t entropy_bar_divisor = 32;
  /// The sample is every 8th element (1, 9, 17, ...): counting all cost 4-5% of the encode.
  static constexpr std::uint32_t selector_stride = 8;
  /// Zero deltas must run 3 long on average: zero_run won every tile at 3.5+, lost every one under 3.
  static constexpr std::uint32_t min_mean_zero_run = 3;
  /// A sample 9/16 zero or more measures zero_run outright (61-65% zero wins by up to 18%).
  static constexpr std::uint32_t measure_sixteenths = 9;
  /// A sample under 7/16 zero skips it; between, every element is counted (a sample alone let
  /// through 34 tiles instead of 21).
  static constexpr std::uint32_t skip_sixteenths = 7;
};
static_assert(adaptive_policy::skip_sixteenths <= adaptive_policy::measure_sixteenths &&
                  adaptive_policy::measure_sixteenths <= 16,
              "adaptive_policy: skip_sixteenths <= measure_sixteenths <= 16");

/// What a huffman or zero_run tile must come under for a selector that weighs fixed_length
/// (Adaptive) to take it instead of the fixed_length tile of `fixed_length_bytes`.
NCCLZ_HOST_DEVICE constexpr std::uint64_t entropy_bar(std::uint64_t fixed_length_bytes) {
  return fixed_length_bytes - fixed_length_bytes / adaptive_policy::entropy_bar_divisor;
}

/// The elements of a tile the selector counts before it measures zero_run or estimates huffman:
/// 1, 9, 17, ... (every selector_stride-th, from element 1).
NCCLZ_HOST_DEVICE constexpr bool in_selector_sample(std::uint32_t element) {
  return element % adaptive_policy::selector_stride == 1;
}
/// How many of a tile's `elements` are in the sample.
NCCLZ_HOST_DEVICE constexpr std::uint32_t selector_sample_size(std::uint32_t elements) {
  return (elements + adaptive_policy::selector_stride - 2) / adaptive_policy::selector_stride;
}

/// Whether the selector measures the zero_run size of a tile whose sample came too close to half
/// zero to tell (zero_run_verdict), from every element's count: at least half of its codes are
/// zero, or half of its code deltas are zero in runs of min_mean_zero_run or more on average (runs
/// counted within each block of 32 elements: a zero delta that starts its block, or follows a
/// nonzero one, starts one). Zero codes need no runs: each delta into or out of a zero code is as
/// wide as the code, which huffman pays and zero_run does not.
NCCLZ_HOST_DEVICE constexpr bool zero_run_worth_trying(std::uint32_t zero_codes, std::uint32_t zero_deltas,
                                                       std::uint32_t zero_delta_runs, std::uint32_t elements) {
  return elements > 0 &&
         (2ull * zero_codes >= elements ||
          (2ull * zero_deltas >= elements && zero_deltas >= std::uint64_t{adaptive_policy::min_mean_zero_run} * zero_delta_runs));
}

/// What the sample of a tile says of measuring its zero_run size, from the sample's zero codes and
/// zero deltas: measure at measure_sixteenths zero or more, skip under skip_sixteenths, and in
/// between (or with no sample) count every element and let zero_run_worth_trying decide.
enum class zero_run_sample : std::uint8_t { skip, measure, count_all };
NCCLZ_HOST_DEVICE constexpr zero_run_sample zero_run_verdict(std::uint32_t sampled_zero_codes, std::uint32_t sampled_zero_deltas,
                                                             std::uint32_t elements) {
  const std::uint64_t sampled = selector_sample_size(elements);
  const std::uint64_t most = sampled_zero_codes > sampled_zero_deltas ? sampled_zero_codes : sampled_zero_deltas;
  if (sampled == 0) return zero_run_sample::count_all;
  if (16 * most >= adaptive_policy::measure_sixteenths * sampled) return zero_run_sample::measure;
  return 16 * most < adaptive_policy::skip_sixteenths * sampled ? zero_run_sample::skip : zero_run_sample::count_all;
}

}  // namespace ncclz::tuning
