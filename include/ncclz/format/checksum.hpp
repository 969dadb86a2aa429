// Tile and header checksums (version 2; docs/format.md, "Checksums").
#pragma once

#include <cstdint>
#include <cstring>

#include "ncclz/config.hpp"
#include "ncclz/format/chunk.hpp"

namespace ncclz::format {

// --- checksums (version 2) ------------------------------------------------------------------------
// A tile's checksum covers its bytes, read as little-endian u32 words w_0, w_1, ... (a tile
// starts and ends on 8-byte boundaries), the words of its steps in the step table (fixed_rate;
// from kStepCheckPosition on), its size in bytes, its index and the chunk's header check (so a
// tile of another chunk, coded with another step or count, fails in this one):
//
//   S = sum over i of check_term(w_i, i)  (mod 2^32),   check = tile_check(S, bytes, tile, header check)
//
// A sum of one term a word lets the 256 threads of a tile's block each hash the words they hold,
// in any order, and the host hash them in one loop, to the same value. check_term is a bijection
// of the word for each position, so a change confined to one word always changes S; any other
// change goes unseen with a chance of about 2^-32. The header check covers the header's words
// but payload_bytes (a change there moves the last tile's end, which its checksum covers) and
// itself; version 2 chunks always carry it, with or without tile checksums, so a flipped flag
// cannot turn the tile checks off unseen.

/// MurmurHash3's 32-bit finalizer: a bijection that carries every input bit into every output bit.
NCCLZ_HOST_DEVICE constexpr std::uint32_t fmix32(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

/// The term of word `word` at position `position` of a checked range.
NCCLZ_HOST_DEVICE constexpr std::uint32_t check_term(std::uint32_t word, std::uint32_t position) {
  return fmix32(word + position * 0x9E3779B9u);
}

/// Position of the first word of a tile's steps among its terms: past any tile's own words.
inline constexpr std::uint32_t kStepCheckPosition = 1u << 31;

/// A tile's checksum from the sum of its terms, its size in bytes, its index and the chunk's
/// header check.
NCCLZ_HOST_DEVICE constexpr std::uint32_t tile_check(std::uint32_t sum, std::uint64_t bytes, std::uint64_t tile,
                                                    std::uint32_t header_check) {
  const auto b = static_cast<std::uint32_t>(bytes ^ (bytes >> 32));
  const std::uint32_t seed = fmix32(header_check ^ fmix32(b + static_cast<std::uint32_t>(tile) * 0x85EBCA6Bu));
  return fmix32(sum + seed);
}

/// The header's u32 words, and which of them the header check covers: all but payload_bytes
/// (words 6 and 7) and header_check (word 15).
inline constexpr std::uint32_t kHeaderWords = sizeof(chunk_header) / 4;
NCCLZ_HOST_DEVICE constexpr bool is_payload_word(std::uint32_t i) { return i == 6 || i == 7; }
NCCLZ_HOST_DEVICE constexpr bool header_word_checked(std::uint32_t i) { return !is_payload_word(i) && i != 15; }

/// The header check from the sum of the checked words' terms.
NCCLZ_HOST_DEVICE constexpr std::uint32_t header_check(std::uint32_t sum) { return fmix32(sum ^ 0x4E435A32u); }

/// The header check of `h` (what its header_check field must hold in version 2).
NCCLZ_HOST_DEVICE inline std::uint32_t header_check_of(const chunk_header& h) {
  std::uint32_t words[kHeaderWords];
  memcpy(words, &h, sizeof words);
  std::uint32_t sum = 0;
  for (std::uint32_t i = 0; i < kHeaderWords; ++i) sum += header_word_checked(i) ? check_term(words[i], i) : 0u;
  return header_check(sum);
}

/// The header the encoders (the host's and the device's) write, all but its check (0 here);
/// payload_bytes is 0: the check leaves it out, and it is known only once every tile's size is.
NCCLZ_HOST_DEVICE inline chunk_header header_fields(std::uint8_t value_type, std::uint8_t quantizer, std::uint8_t coder,
                                                    std::uint64_t element_count, double bound, double error_bound,
                                                    double step, std::uint32_t flags) {
  chunk_header h{};
  h.magic = kMagic;
  h.version = kVersion;
  h.value_type = value_type;
  h.quantizer = quantizer;
  h.coder = coder;
  h.tile_elements = kTileElements;
  h.tile_count = static_cast<std::uint32_t>(tile_count(element_count));
  h.element_count = element_count;
  h.bound = bound;  // the caller's bound (FixedRate: Bits)
  h.error_bound = error_bound;
  h.step = step;
  h.flags = flags;
  return h;
}

}  // namespace ncclz::format
