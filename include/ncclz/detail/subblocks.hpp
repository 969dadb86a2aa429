// The sub-block layout of the entropy tile modes (docs/format.md, huffman and zero_run tiles),
// shared by the host references and the device coders: a tile's values in sub-blocks of 256, one
// warp lane each, whose bit streams follow one another; after the stream, the outliers as in a
// fixed-length tile.
#pragma once

#include <cstdint>

#include "ncclz/detail/config.hpp"
#include "ncclz/format.hpp"

namespace ncclz::detail {

inline constexpr std::uint32_t kSubblockElements = 256;  // eight fixed-length blocks

NCCLZ_HOST_DEVICE constexpr std::uint32_t subblock_count(std::uint32_t elements) {
  return (elements + kSubblockElements - 1) / kSubblockElements;
}

/// Where the parts after a tile's bit stream start (relative to the tile), and the tile's size.
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
  t.outlier_index = stream + format::align_up((stream_bits + 7) / 8, 4);
  t.outlier_values = format::align_up(t.outlier_index + 2ull * outliers, value_bytes);
  t.total = format::align_up(t.outlier_values + std::uint64_t{outliers} * value_bytes, 8);
  return t;
}

}  // namespace ncclz::detail
