// What a decode kernel reports when a chunk is bad: the first problem of a launch, with its tile.
#pragma once

#include <cstdint>

#include "ncclz/config.hpp"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail {

/// Why a decode stopped; the first error of a launch is kept (with its tile) in device memory.
enum class decode_status : std::uint32_t {
  ok = 0,
  bad_header,
  wrong_dtype,
  wrong_quantizer,
  wrong_count,
  truncated,
  bad_tile_offset,
  truncated_tile,
  bad_tile_mode,
  bad_width,
  bad_outlier_index,
  bad_codebook,      ///< huffman: a code length over 11 bits, or a code that is not complete
  corrupt_subblock,  ///< huffman / zero_run: a sub-block's stream does not decode to exactly its stored bits
  bad_tile_header,   ///< a tile's mode-specific header (reserved bytes, counts, predictor) is invalid
  bad_block_step,    ///< fixed_rate: a step of the step table is negative, NaN or infinite
  bad_checksum,      ///< a tile fails its checksum, or the header its check (tile 0)
};

struct decode_report {
  std::uint32_t status;  ///< decode_status
  std::uint32_t tile;
};

__device__ inline void report(decode_report* r, decode_status s, std::uint32_t tile) {
  if (atomicCAS(&r->status, 0u, static_cast<std::uint32_t>(s)) == 0u) r->tile = tile;
}

}  // namespace device::detail
NCCLZ_END_KERNEL_NAMESPACE
