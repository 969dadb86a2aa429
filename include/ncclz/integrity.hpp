// Integrity policies: whether the chunks a Codec writes carry a checksum per tile.
//
//   ncclz::Integrity<ncclz::TileChecksums>  // the default: every tile's checksum in the chunk,
//                                           // verified before any of its values is used
//   ncclz::Integrity<ncclz::NoChecksums>    // no tile checksums, for links that are trusted
//
// Overview. A checksum (docs/format.md, "Checksums") is a fast 32-bit hash of the tile's bytes
// and steps, computed by the encoder's thread block as it writes the tile, and by the decoder's
// as it reads it; a tile that fails it is a decode error like any other format error (a
// collective's check() then throws on every rank). The header check is in every chunk either
// way. Decoders verify what the chunk says it carries, whatever their own policy: a Codec of
// either policy reads the chunks of the other, and chunks of format version 1 (no checksums).
//
// Performance considerations. The checksum costs 4 bytes a tile (of 8192 values) and a few
// integer operations a word of compressed data, on both sides; docs/collectives.md ("What
// checksums cost") has the codec bench's figures with and without.
#pragma once

#include <concepts>
#include <type_traits>

namespace ncclz {

/// Strategy tag: a checksum per tile (the default).
struct TileChecksums {
  static constexpr bool tile_checksums = true;
  static constexpr const char* name = "tile_checksums";
};

/// Strategy tag: no tile checksums (structural checks only: a corrupted value may decode).
struct NoChecksums {
  static constexpr bool tile_checksums = false;
  static constexpr const char* name = "no_checksums";
};

template <class Strategy>
struct Integrity {
  static_assert(std::is_same_v<Strategy, TileChecksums> || std::is_same_v<Strategy, NoChecksums>,
                "ncclz::Integrity<Strategy>: Strategy must be ncclz::TileChecksums or ncclz::NoChecksums");
  using strategy = Strategy;
  static constexpr bool tile_checksums = Strategy::tile_checksums;
  static constexpr const char* name = Strategy::name;
};

/// What ncclz needs from an Integrity policy.
template <class I>
concept IntegrityPolicy = requires {
  typename I::strategy;
  { I::tile_checksums } -> std::convertible_to<bool>;
  { I::name } -> std::convertible_to<const char*>;
};

static_assert(IntegrityPolicy<Integrity<TileChecksums>>);
static_assert(IntegrityPolicy<Integrity<NoChecksums>>);

}  // namespace ncclz
