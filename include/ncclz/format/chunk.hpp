// The chunk's frame (docs/format.md, "Chunk"): the header, the tile table, the check and step
// tables, the tile header, the raw tile and the tail every coded tile ends with, and the size
// rules over them. The public entry is ncclz/format.hpp, which includes this.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ncclz/config.hpp"

namespace ncclz::format {

inline constexpr std::uint32_t kMagic = 0x315A434Eu;  // "NCZ1" read as little-endian bytes
/// The version this build writes. Version 1 (no flags, no checksums: its flags and header check
/// words are 0) is still read.
inline constexpr std::uint8_t kVersion = 2;
inline constexpr std::uint8_t kOldestVersion = 1;
/// Header flags (version 2). kTileChecks: each tile's checksum is in the check table.
inline constexpr std::uint32_t kTileChecks = 1u;
inline constexpr std::uint32_t kKnownFlags = kTileChecks;
inline constexpr std::uint32_t kBlockElements = 32;  // one warp, one value per lane
inline constexpr std::uint32_t kTileBlocks = 256;
inline constexpr std::uint32_t kTileElements = kBlockElements * kTileBlocks;  // 8192
inline constexpr std::uint32_t kMaxWidth = 32;                                // bits of a zig-zagged delta
/// Codes are kept strictly inside (-2^30, 2^30) so a delta of two codes fits an int32.
inline constexpr double kMaxCodeMagnitude = 1073741824.0;
/// Tile offsets are u32 in 8-byte units: a chunk's payload stays below 32 GiB.
inline constexpr std::uint64_t kMaxPayloadBytes = (std::uint64_t{1} << 32) * 8u - 8u;
/// A fixed_rate chunk's scale block: 1024 consecutive values (one warp's share of a tile, 8 a
/// tile) share one step, stored in the chunk's step table.
inline constexpr std::uint32_t kScaleBlockElements = 1024;
static_assert(kTileElements % kScaleBlockElements == 0, "a tile holds whole scale blocks");

struct chunk_header {
  std::uint32_t magic;          ///< kMagic
  std::uint8_t version;         ///< kVersion
  std::uint8_t value_type;      ///< ncclz::dtype
  std::uint8_t quantizer;       ///< ncclz::quantizer_id
  std::uint8_t coder;           ///< ncclz::coder_id
  std::uint32_t tile_elements;  ///< kTileElements
  std::uint32_t tile_count;     ///< ceil(element_count / tile_elements)
  std::uint64_t element_count;
  std::uint64_t payload_bytes;  ///< bytes after this header: table + tiles
  double bound;                 ///< the bound the caller asked for (absolute, or relative factor)
  double error_bound;           ///< the absolute bound applied to every element
  double step;                  ///< quantization step (a value of the element type, widened)
  std::uint32_t flags;          ///< kTileChecks or 0 (version 1: 0)
  std::uint32_t header_check;   ///< header_check_of (version 1: 0)
};
static_assert(sizeof(chunk_header) == 64 && std::is_trivially_copyable_v<chunk_header>);

struct tile_header {
  std::uint8_t mode;            ///< ncclz::tile_mode
  std::uint8_t reserved;        ///< zero
  std::uint16_t outlier_count;  ///< values stored exactly in the outlier list
  std::int32_t base;            ///< code of the tile's first element (the prediction of element 0)
};
static_assert(sizeof(tile_header) == 8 && std::is_trivially_copyable_v<tile_header>);

NCCLZ_HOST_DEVICE constexpr std::uint64_t align_up(std::uint64_t bytes, std::uint64_t to) {
  return (bytes + to - 1) / to * to;
}

NCCLZ_HOST_DEVICE constexpr std::uint64_t tile_count(std::uint64_t elements) {
  return elements / kTileElements + (elements % kTileElements != 0);  // no wrap-around near 2^64
}

NCCLZ_HOST_DEVICE constexpr std::uint32_t tile_elements(std::uint64_t elements, std::uint64_t tile) {
  const std::uint64_t first = tile * kTileElements;
  const std::uint64_t left = elements - first;
  return static_cast<std::uint32_t>(left < kTileElements ? left : kTileElements);
}

NCCLZ_HOST_DEVICE constexpr std::uint32_t tile_blocks(std::uint32_t elements) {
  return (elements + kBlockElements - 1) / kBlockElements;
}

NCCLZ_HOST_DEVICE constexpr std::uint64_t table_bytes(std::uint64_t tiles) {
  return align_up(tiles * sizeof(std::uint32_t), 8);
}

/// Bytes of the check table (a u32 per tile, zero-padded to 8) of a chunk with these flags.
NCCLZ_HOST_DEVICE constexpr std::uint64_t check_table_bytes(std::uint64_t tiles, std::uint32_t flags) {
  return (flags & kTileChecks) != 0 ? table_bytes(tiles) : 0;
}

/// Where the step table (fixed_rate) starts, in bytes from the end of the header: after the tile
/// table and the check table. The tiles follow the step table.
NCCLZ_HOST_DEVICE constexpr std::uint64_t step_table_offset(std::uint64_t tiles, std::uint32_t flags) {
  return table_bytes(tiles) + check_table_bytes(tiles, flags);
}

/// Scale blocks (steps of a fixed_rate chunk) of `elements` values.
NCCLZ_HOST_DEVICE constexpr std::uint64_t scale_count(std::uint64_t elements) {
  return (elements + kScaleBlockElements - 1) / kScaleBlockElements;
}

/// Bytes of one step in a fixed_rate chunk's step table: the compute type's (f64 for f64 values,
/// f32 for f32, f16 and bf16).
NCCLZ_HOST_DEVICE constexpr std::uint32_t scale_bytes(std::uint32_t value_bytes) { return value_bytes == 8 ? 8u : 4u; }

/// Bytes of a fixed_rate chunk's step table, which follows the tile table: one step per scale
/// block, zero-padded to a multiple of 8.
NCCLZ_HOST_DEVICE constexpr std::uint64_t scale_table_bytes(std::uint64_t elements, std::uint32_t value_bytes) {
  return align_up(scale_count(elements) * scale_bytes(value_bytes), 8);
}

/// Bytes of a raw tile of `elements` values of `value_bytes` each.
NCCLZ_HOST_DEVICE constexpr std::uint64_t raw_tile_bytes(std::uint32_t elements, std::uint32_t value_bytes) {
  return align_up(sizeof(tile_header) + std::uint64_t{elements} * value_bytes, 8);
}

/// Where the parts after a tile's coded stream start (relative to the tile), and the tile's size:
/// every coded tile mode ends this way.
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
  t.outlier_index = stream + align_up((stream_bits + 7) / 8, 4);
  t.outlier_values = align_up(t.outlier_index + 2ull * outliers, value_bytes);
  t.total = align_up(t.outlier_values + std::uint64_t{outliers} * value_bytes, 8);
  return t;
}

/// The largest chunk `elements` values can produce: every tile raw, with tile checksums.
NCCLZ_HOST_DEVICE constexpr std::uint64_t max_chunk_bytes(std::uint64_t elements, std::uint32_t value_bytes) {
  const std::uint64_t tiles = tile_count(elements);
  std::uint64_t bytes = sizeof(chunk_header) + step_table_offset(tiles, kTileChecks);
  if (tiles > 0) {
    bytes += (tiles - 1) * raw_tile_bytes(kTileElements, value_bytes);
    bytes += raw_tile_bytes(tile_elements(elements, tiles - 1), value_bytes);
  }
  return bytes;
}

/// The number of bits v needs (0 for 0).
NCCLZ_HOST_DEVICE constexpr std::uint32_t bit_width(std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  if (!std::is_constant_evaluated()) return 32u - static_cast<std::uint32_t>(__clz(static_cast<int>(v)));
#endif
  std::uint32_t w = 0;
  for (; v != 0; v >>= 1) ++w;
  return w;
}

NCCLZ_HOST_DEVICE constexpr std::uint32_t zigzag(std::int32_t v) {
  return (static_cast<std::uint32_t>(v) << 1) ^ static_cast<std::uint32_t>(v >> 31);
}
NCCLZ_HOST_DEVICE constexpr std::int32_t unzigzag(std::uint32_t v) {
  return static_cast<std::int32_t>(v >> 1) ^ -static_cast<std::int32_t>(v & 1u);
}

}  // namespace ncclz::format
