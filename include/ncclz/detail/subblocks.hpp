// The sub-block layout of the entropy tile modes (docs/format.md, huffman and zero_run tiles),
// shared by the host references and the device coders: a tile's values in sub-blocks of 256, one
// warp lane each, whose bit streams follow one another; after the stream, the outliers
// (format::stream_tail_of).
#pragma once

#include <cstdint>

#include "ncclz/config.hpp"
#include "ncclz/format.hpp"

namespace ncclz::detail {

inline constexpr std::uint32_t kSubblockElements = 256;  // eight fixed-length blocks

NCCLZ_HOST_DEVICE constexpr std::uint32_t subblock_count(std::uint32_t elements) {
  return (elements + kSubblockElements - 1) / kSubblockElements;
}

}  // namespace ncclz::detail
