// The fixed_length tile mode's layout (docs/format.md, "Fixed-length tile") and the largest
// chunk whose tiles are all fixed_length.
#pragma once

#include <cstdint>

#include "ncclz/config.hpp"
#include "ncclz/format/chunk.hpp"

namespace ncclz::format {

/// Where the parts of a fixed-length tile start, relative to the tile, and its total size.
struct fixed_tile_layout : stream_tail {
  std::uint64_t widths;  ///< one byte per block
  std::uint64_t planes;  ///< 4 bytes per bit plane, blocks in order
};

NCCLZ_HOST_DEVICE constexpr fixed_tile_layout fixed_tile_layout_of(std::uint32_t blocks, std::uint64_t plane_words,
                                                                   std::uint32_t outliers, std::uint32_t value_bytes) {
  fixed_tile_layout l{};
  l.widths = sizeof(tile_header);
  l.planes = align_up(l.widths + blocks, 4);
  static_cast<stream_tail&>(l) = stream_tail_of(l.planes, plane_words * 32, outliers, value_bytes);  // the planes are the stream
  return l;
}

/// The largest chunk whose tiles are all fixed_length (the collectives' partial sums, which stay
/// in codes): every block at full width and every value an outlier bounds any real tile; with
/// tile checksums.
NCCLZ_HOST_DEVICE constexpr std::uint64_t max_fixed_chunk_bytes(std::uint64_t elements, std::uint32_t value_bytes) {
  const std::uint64_t tiles = tile_count(elements);
  std::uint64_t bytes = sizeof(chunk_header) + step_table_offset(tiles, kTileChecks);
  for (int last = 0; last < 2 && tiles > 0; ++last) {
    const std::uint32_t n = last ? tile_elements(elements, tiles - 1) : kTileElements;
    const std::uint32_t blocks = tile_blocks(n);
    const std::uint64_t tile = fixed_tile_layout_of(blocks, std::uint64_t{blocks} * kMaxWidth, n, value_bytes).total;
    bytes += last ? tile : (tiles - 1) * tile;
  }
  return bytes;
}

}  // namespace ncclz::format
