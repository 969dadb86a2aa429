// Argument and stream checks shared by the device API and the host reference codec, so both
// reject the same things with the same words.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "ncclz/error.hpp"
#include "ncclz/format.hpp"
#include "ncclz/quantizer.hpp"

namespace ncclz::detail {

inline std::string to_string_bytes(std::uint64_t v) { return std::to_string(v) + " B"; }

template <class Q>
void validate_bound(const char* function, double bound) {
  if constexpr (Q::id == quantizer_id::lossless) {
    // Nothing is quantized: a bound would promise an error the codec never makes, or one it does not keep.
    if (bound != 0.0) {
      char got[32];
      std::snprintf(got, sizeof got, "%g", bound);
      throw_invalid(function, std::string("the lossless quantizer takes bound 0 (every value is kept bit for bit), got ") + got);
    }
    return;
  }
  if constexpr (is_blockwise_v<Q>) {
    if (bound != 0.0 && bound != static_cast<double>(Q::bits)) {
      throw_invalid(function, std::string("the bound of ") + Q::name + " must be its bit count " + std::to_string(Q::bits) +
                                  " (or 0), got " + std::to_string(bound) + ": FixedRate steps come from the data");
    }
    return;
  }
  if (!(bound > 0.0) || !std::isfinite(bound)) {
    throw_invalid(function, std::string("error bound must be a finite number > 0 (") + Q::name +
                                " bound), got " + std::to_string(bound));
  }
}

/// Largest element count one chunk can hold: even all-raw tiles stay inside the u32 tile table.
template <class T>
constexpr std::uint64_t max_chunk_elements() {
  return format::kMaxPayloadBytes / (sizeof(T) + 1);
}

template <class T>
void validate_count(const char* function, std::uint64_t count) {
  if (count > max_chunk_elements<T>()) {
    throw_invalid(function, "count " + std::to_string(count) + " is too large for one chunk (at most " +
                                std::to_string(max_chunk_elements<T>()) + " values)");
  }
}

inline const char* dtype_name(std::uint8_t v) {
  switch (static_cast<dtype>(v)) {
    case dtype::f32: return "f32";
    case dtype::f64: return "f64";
    case dtype::f16: return "f16";
    case dtype::bf16: return "bf16";
  }
  return "unknown";
}

/// Checks a chunk header against the bytes the caller holds. Throws format_error.
inline format::chunk_header parse_header(const void* bytes, std::uint64_t size) {
  using format::chunk_header;
  if (bytes == nullptr) throw format_error("ncclz: compressed stream is a null pointer");
  if (size < sizeof(chunk_header)) {
    throw format_error("ncclz: compressed stream truncated: " + to_string_bytes(size) + " is shorter than the " +
                       to_string_bytes(sizeof(chunk_header)) + " header");
  }
  chunk_header h;
  std::memcpy(&h, bytes, sizeof h);
  if (h.magic != format::kMagic) throw format_error("ncclz: not an ncclz stream (bad magic number)");
  if (h.version < format::kOldestVersion || h.version > format::kVersion) {
    throw format_error("ncclz: stream format version " + std::to_string(h.version) + " is not supported (this build reads " +
                       std::to_string(format::kOldestVersion) + " to " + std::to_string(format::kVersion) + ")");
  }
  // Version 1 has no flags and no header check: both words are 0 there.
  if (h.version == 1 ? (h.flags != 0 || h.header_check != 0) : (h.flags & ~format::kKnownFlags) != 0) {
    throw format_error("ncclz: stream header has unknown flags");
  }
  if (!is_known_dtype(h.value_type)) {
    throw format_error("ncclz: stream has unknown dtype " + std::to_string(h.value_type));
  }
  if (!is_known_coder(h.coder)) {
    throw format_error("ncclz: stream has unknown coder id " + std::to_string(h.coder));
  }
  if (h.tile_elements != format::kTileElements) {
    throw format_error("ncclz: stream tile size " + std::to_string(h.tile_elements) + " is not " +
                       std::to_string(format::kTileElements));
  }
  if (h.tile_count != format::tile_count(h.element_count)) {
    throw format_error("ncclz: stream tile count " + std::to_string(h.tile_count) + " does not match its " +
                       std::to_string(h.element_count) + " elements");
  }
  if (h.payload_bytes > format::kMaxPayloadBytes || h.payload_bytes > size - sizeof(chunk_header)) {
    throw format_error("ncclz: compressed stream truncated: header announces " + to_string_bytes(h.payload_bytes) +
                       " of payload, the buffer holds " + to_string_bytes(size - sizeof(chunk_header)));
  }
  if (h.payload_bytes < format::step_table_offset(h.tile_count, h.flags) || h.payload_bytes % 8 != 0) {
    throw format_error("ncclz: stream payload of " + to_string_bytes(h.payload_bytes) + " cannot hold its tile table");
  }
  if (!(h.step > 0.0) || !std::isfinite(h.step) || !(h.error_bound >= 0.0)) {
    throw format_error("ncclz: stream header has invalid quantizer parameters");
  }
  if (h.version >= 2 && h.header_check != format::header_check_of(h)) {
    throw format_error("ncclz: corrupted stream: the chunk header fails its check");
  }
  return h;
}

/// Checks that a parsed header is what the caller asked to decode.
template <class Codec, class T>
void check_header_matches(const format::chunk_header& h, std::uint64_t count) {
  if (h.value_type != static_cast<std::uint8_t>(dtype_of<T>())) {
    throw format_error(std::string("ncclz: stream holds ") + dtype_name(h.value_type) + " values, the output is " +
                       dtype_name(static_cast<std::uint8_t>(dtype_of<T>())));
  }
  if (h.quantizer != static_cast<std::uint8_t>(Codec::quantizer::id)) {
    throw format_error(std::string("ncclz: stream was written by another quantizer (id ") + std::to_string(h.quantizer) +
                       ") than this codec's " + Codec::quantizer::name);
  }
  if (h.element_count != count) {
    throw format_error("ncclz: stream holds " + std::to_string(h.element_count) + " elements, the caller expects " +
                       std::to_string(count));
  }
  // The decoder computes in compute_t<T>: a step that narrows to 0 or Inf would decode to zeros or NaN.
  const auto step = static_cast<compute_t<T>>(h.step);
  if (!(step > compute_t<T>(0)) || !(step <= std::numeric_limits<compute_t<T>>::max())) {
    throw format_error("ncclz: stream step " + std::to_string(h.step) + " does not fit the " + dtype_name(h.value_type) +
                       " decoder's compute type");
  }
}

}  // namespace ncclz::detail
