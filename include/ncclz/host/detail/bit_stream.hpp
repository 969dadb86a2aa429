// The LSB-first bit stream the host references of the entropy tile modes write and read
// (docs/format.md, "Bit order"): bit k of the stream is bit k % 8 of byte k / 8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ncclz::host::detail {

/// Appends bits least significant first.
class bit_writer {
 public:
  void put(std::uint64_t value, std::uint32_t bits) {
    for (std::uint32_t k = 0; k < bits; ++k, ++size_) {
      if (size_ % 8 == 0) bytes_.push_back(std::byte{0});
      bytes_.back() |= static_cast<std::byte>(((value >> k) & 1u) << (size_ % 8));
    }
  }
  [[nodiscard]] std::uint64_t size() const { return size_; }
  [[nodiscard]] const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
  std::uint64_t size_ = 0;
};

/// `bits` (<= 56) bits of `stream` from bit `at`, the first one lowest; bits past the end read 0.
inline std::uint64_t peek_bits(std::span<const std::byte> stream, std::uint64_t at, std::uint32_t bits) {
  std::uint64_t window = 0;
  const std::uint64_t first = at / 8;
  for (std::uint64_t k = 0; k < 8 && first + k < stream.size(); ++k) {
    window |= std::uint64_t{static_cast<std::uint8_t>(stream[first + k])} << (8 * k);
  }
  return (window >> (at % 8)) & ((std::uint64_t{1} << bits) - 1);
}

}  // namespace ncclz::host::detail
