// Codec<Quantizer, EntropyCoder, Integrity>: the compile-time recipe of a compressor, checked here.
//
//   using Codec = ncclz::Codec<>;   // Quantizer<RelBound>, EntropyCoder<Auto>, Integrity<TileChecksums>
//   using Codec = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
//   // without tile checksums, for a trusted link:
//   using Trusted = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Auto>,
//                                ncclz::Integrity<ncclz::NoChecksums>>;
//
// The default coder, EntropyCoder<Auto>, lets a Communicator time FixedLength against Adaptive
// (and NCCL's own collective) and keep the faster; a single-GPU codec codes as Adaptive
// (entropy_coder.hpp).
//
// Host-only code (the reference codec, tests) uses this header alone; device code adds
// ncclz/device/device_codec.cuh (or the umbrella ncclz/ncclz.cuh).
#pragma once

#include "ncclz/entropy_coder.hpp"
#include "ncclz/integrity.hpp"
#include "ncclz/quantizer.hpp"

namespace ncclz {

template <class Q = Quantizer<RelBound>, class C = EntropyCoder<Auto>, class I = Integrity<TileChecksums>>
struct Codec {
  static_assert(detail::check_quantizer<Q>::value,
                "ncclz::Codec<Q, C>: Q must model ncclz::QuantizerPolicy (see the messages above)");
  static_assert(EntropyCoderPolicy<C>,
                "ncclz::Codec<Q, C>: C must model ncclz::EntropyCoderPolicy: use ncclz::EntropyCoder<S> with S one of "
                "ncclz::Auto, ncclz::FixedLength, ncclz::Huffman, ncclz::ZeroRun, ncclz::Adaptive, ncclz::Raw");
  static_assert(IntegrityPolicy<I>,
                "ncclz::Codec<Q, C, I>: I must model ncclz::IntegrityPolicy: use ncclz::Integrity<ncclz::TileChecksums> "
                "(the default) or ncclz::Integrity<ncclz::NoChecksums>");
  using quantizer = Q;
  using coder = C;
  using integrity = I;
  /// The flags of the chunks this codec writes (format::kTileChecks or 0).
  static constexpr std::uint32_t chunk_flags = I::tile_checksums ? format::kTileChecks : 0u;
};

/// The chunk header a Codec's encoders (the host reference's and the device's) write for `count`
/// values of T quantized with `p`: its payload_bytes 0 and its check 0 (format::header_fields).
template <class Codec, class T>
NCCLZ_HOST_DEVICE inline format::chunk_header chunk_header_fields_of(std::uint64_t count, const quant_params<T>& p) {
  return format::header_fields(static_cast<std::uint8_t>(dtype_of<T>()), static_cast<std::uint8_t>(Codec::quantizer::id),
                               static_cast<std::uint8_t>(Codec::coder::id), count, p.bound, p.error_bound,
                               static_cast<double>(p.step), Codec::chunk_flags);
}

/// chunk_header_fields_of with its check filled in (format::header_check_of).
template <class Codec, class T>
NCCLZ_HOST_DEVICE inline format::chunk_header chunk_header_of(std::uint64_t count, const quant_params<T>& p) {
  format::chunk_header h = chunk_header_fields_of<Codec, T>(count, p);
  h.header_check = format::header_check_of(h);
  return h;
}

/// The built-in codecs, for loops over every combination in tests and benchmarks. Adaptive codes
/// FixedRate's codes as well; its FixedRate kernels come in through EntropyCoder<Auto> alone.
template <class F>
void for_each_builtin_codec(F&& f) {
  f.template operator()<Codec<Quantizer<AbsBound>, EntropyCoder<Auto>>>();
  f.template operator()<Codec<Quantizer<RelBound>, EntropyCoder<Auto>>>();
  f.template operator()<Codec<Quantizer<AbsBound>, EntropyCoder<FixedLength>>>();
  f.template operator()<Codec<Quantizer<RelBound>, EntropyCoder<FixedLength>>>();
  f.template operator()<Codec<Quantizer<AbsBound>, EntropyCoder<Raw>>>();
  f.template operator()<Codec<Quantizer<RelBound>, EntropyCoder<Raw>>>();
  f.template operator()<Codec<Quantizer<AbsBound>, EntropyCoder<Adaptive>>>();
  f.template operator()<Codec<Quantizer<RelBound>, EntropyCoder<Adaptive>>>();
  f.template operator()<Codec<Quantizer<FixedRate<8>>, EntropyCoder<FixedLength>>>();
  f.template operator()<Codec<Quantizer<FixedRate<4>>, EntropyCoder<FixedLength>>>();
  f.template operator()<Codec<Quantizer<FixedRate<8>>, EntropyCoder<Auto>>>();
  f.template operator()<Codec<Quantizer<FixedRate<4>>, EntropyCoder<Auto>>>();
}

}  // namespace ncclz
