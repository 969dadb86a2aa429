// Entropy-coder policies: integer codes <-> bytes, losslessly.
//
//   ncclz::EntropyCoder<ncclz::FixedLength>   // cuSZp-style bit planes, Raw fallback per tile
//   ncclz::EntropyCoder<ncclz::Huffman>       // per-tile canonical Huffman code, built on the device
//   ncclz::EntropyCoder<ncclz::ZeroRun>       // run lengths of zeros, for sparse data
//   ncclz::EntropyCoder<ncclz::Adaptive>      // per tile, the smallest of the three (device-side selector)
//   ncclz::EntropyCoder<ncclz::Raw>           // values stored as they are: exact pass-through
//   ncclz::EntropyCoder<ncclz::Auto>          // the default: FixedLength or Adaptive, whichever is faster
//
// Overview. Codes are cut into tiles of 8192 values and blocks of 32. FixedLength stores each
// block's zig-zagged code deltas (each code minus the one before it in the tile) as `w` bit planes
// of 4 bytes, w being the bit width of the block's largest delta, plus one width byte per block:
// a block of equal codes costs that one byte. Values the quantizer cannot code go to the tile's
// outlier list. A tile that would come out larger than its raw values is stored raw, so a chunk
// never grows by more than its header and tile table.
//
// Performance considerations. One warp codes one block in registers (ballot per bit plane), one
// read of the input and one write of the output; tile offsets come from a single-pass decoupled
// look-back scan, so compression needs no second pass and no host round trip.
//
// Auto. FixedLength codes several times faster than Adaptive; Adaptive's chunks are smaller. Which
// one makes a collective faster depends on the data and the link, so a Communicator times both
// (and NCCL's own collective) per collective and size class and keeps the fastest
// (detail/comm/router.cuh). Where nothing is timed (Compressor, device::compress, the host
// reference codec, a Communicator with autotune off, lossless reductions) Auto codes as Adaptive:
// with no link to weigh the coding time against, the smallest chunk is the aim. Every chunk
// records the coder that wrote it (Adaptive's id for an untimed Auto chunk).
#pragma once

#include <concepts>
#include <type_traits>

#include "ncclz/auto.hpp"
#include "ncclz/format.hpp"

namespace ncclz {

/// Strategy tag: bit-plane coding of code deltas with a width byte per 32 codes.
struct FixedLength {
  static constexpr coder_id id = coder_id::fixed_length;
  static constexpr const char* name = "fixed_length";
};

/// Strategy tag: every tile stored raw (the input values, bit for bit; no error at all).
struct Raw {
  static constexpr coder_id id = coder_id::raw;
  static constexpr const char* name = "raw";
};

/// Strategy tag: a canonical Huffman code of the code deltas per tile, built on the device from
/// the tile's histogram (codes of at most 11 bits; wide deltas escape by bit width).
struct Huffman {
  static constexpr coder_id id = coder_id::huffman;
  static constexpr const char* name = "huffman";
};

/// Strategy tag: run lengths of zero codes (or zero deltas), for sparse data such as thresholded
/// gradients.
struct ZeroRun {
  static constexpr coder_id id = coder_id::zero_run;
  static constexpr const char* name = "zero_run";
};

/// Strategy tag: per tile, the smallest of fixed_length, huffman and zero_run (raw if none wins),
/// chosen on the device from exact sizes and the histogram's entropy.
struct Adaptive {
  static constexpr coder_id id = coder_id::adaptive;
  static constexpr const char* name = "adaptive";
};

template <class Strategy>
struct EntropyCoder {
  static_assert(std::is_same_v<Strategy, FixedLength> || std::is_same_v<Strategy, Raw> || std::is_same_v<Strategy, Huffman> ||
                    std::is_same_v<Strategy, ZeroRun> || std::is_same_v<Strategy, Adaptive>,
                "ncclz::EntropyCoder<Strategy>: Strategy must be ncclz::Auto, ncclz::FixedLength, ncclz::Huffman, "
                "ncclz::ZeroRun, ncclz::Adaptive or ncclz::Raw");
  using strategy = Strategy;
  static constexpr coder_id id = Strategy::id;
  static constexpr const char* name = Strategy::name;
  /// Whether tiles may be coded at all (otherwise every tile is raw).
  static constexpr bool codes_tiles = !std::is_same_v<Strategy, Raw>;
  /// The tile modes this coder tries. A tile is stored in the smallest of them, or raw when that is
  /// smaller still (input values), or fixed_length when raw is not allowed (a collective's partial
  /// sums stay in codes).
  static constexpr bool tries_fixed_length = std::is_same_v<Strategy, FixedLength> || std::is_same_v<Strategy, Adaptive>;
  static constexpr bool tries_huffman = std::is_same_v<Strategy, Huffman> || std::is_same_v<Strategy, Adaptive>;
  static constexpr bool tries_zero_run = std::is_same_v<Strategy, ZeroRun> || std::is_same_v<Strategy, Adaptive>;
};

/// The default coder: in a Communicator, FixedLength or Adaptive per collective and size class,
/// whichever the route autotuner measured faster; elsewhere Adaptive (file comment). Its kernels'
/// members are Adaptive's, so an untimed Auto chunk is an Adaptive chunk, byte for byte.
template <>
struct EntropyCoder<Auto> : EntropyCoder<Adaptive> {
  using strategy = Auto;
  static constexpr const char* name = "auto";
};

/// What ncclz needs from an EntropyCoder policy.
template <class C>
concept EntropyCoderPolicy = requires {
  typename C::strategy;
  { C::id } -> std::convertible_to<coder_id>;
  { C::name } -> std::convertible_to<const char*>;
  { C::codes_tiles } -> std::convertible_to<bool>;
};

static_assert(EntropyCoderPolicy<EntropyCoder<FixedLength>>);
static_assert(EntropyCoderPolicy<EntropyCoder<Raw>>);
static_assert(EntropyCoderPolicy<EntropyCoder<Adaptive>>);
static_assert(EntropyCoderPolicy<EntropyCoder<Auto>>);

}  // namespace ncclz
