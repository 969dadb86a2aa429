// Byte-level helpers of the host reference coders: unaligned little-endian loads and stores into
// a tile, and the error a corrupt tile raises.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "ncclz/error.hpp"
#include "ncclz/format.hpp"

namespace ncclz::host::detail {

template <class T>
void put(std::vector<std::byte>& out, std::uint64_t at, const T& v) {
  std::memcpy(out.data() + at, &v, sizeof v);
}
template <class T>
T get(std::span<const std::byte> in, std::uint64_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof v);
  return v;
}

using format::bit_width;

[[noreturn]] inline void corrupt_tile(std::uint64_t tile, const std::string& what) {
  throw format_error("ncclz: corrupted stream: tile " + std::to_string(tile) + " " + what);
}

}  // namespace ncclz::host::detail
