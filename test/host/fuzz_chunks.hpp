// The chunk fuzzer's parts (fuzz_chunks.cpp runs them): source chunks of every coder, quantizer
// and element type, with and without tile checksums, and a decoder for each that says whether a
// chunk decodes and, if it does, whether every value keeps the bound its source chunk promised.
// One translation unit a quantizer instantiates them (fuzz_chunks_<quantizer>.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/detail/validate.hpp"
#include "ncclz/error.hpp"
#include "ncclz/format.hpp"
#include "ncclz/host/reference_codec.hpp"

namespace ncclz_fuzz {

namespace fmt = ncclz::format;

/// The inputs every codec codes: doubles, rounded to each element type.
std::vector<std::vector<double>> make_inputs();

/// What a decoded value may differ from its input by: `tolerance` (absolute), or nothing at all
/// (bit for bit) where it is negative; NaN and +-Inf must come back as they went in.
struct source {
  std::vector<std::byte> bytes;  ///< the chunk, unmutated
  std::string codec;             ///< "quantizer/coder/type", for the report
  int input = 0;                 ///< which input (index into make_inputs())
  int dtype = 0;                 ///< ncclz::dtype
  int quantizer = 0;             ///< ncclz::quantizer_id
  bool checked = false;          ///< written with tile checksums
  std::vector<double> tolerance;
  std::size_t decoder = 0;       ///< index of the decoder of its codec
};

enum class outcome { rejected, in_bound, out_of_bound, crashed };

/// Decodes chunks as one Codec and element type, and judges what comes out.
struct decoder {
  virtual ~decoder() = default;
  /// Decodes `chunk` expecting the element count of input `expect` (the caller's count), and
  /// judges the values against `ref`'s input and tolerance. `what` gets an unexpected exception's
  /// message.
  virtual outcome decode(std::span<const std::byte> chunk, int expect, const source& ref, std::string& what) const = 0;
};

struct registry {
  std::vector<std::vector<double>> inputs;
  std::vector<source> sources;
  std::vector<std::unique_ptr<decoder>> decoders;
};

template <class T>
double to_double(T x) {
  return static_cast<double>(ncclz::to_compute(x));
}

template <class T>
std::vector<T> rounded(const std::vector<double>& v) {
  std::vector<T> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = ncclz::from_compute<T>(static_cast<ncclz::compute_t<T>>(v[i]));
  return out;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Whether `y` is what a decoder may give for `x` under `tolerance`.
template <class T>
bool keeps_bound(T x, T y, double tolerance) {
  if (tolerance < 0) return same_bits(x, y);
  const double a = to_double(x), b = to_double(y);
  if (std::isnan(a)) return std::isnan(b);
  if (std::isinf(a)) return a == b;
  return std::isfinite(b) && std::fabs(a - b) <= tolerance;
}

template <class Codec, class T>
struct decoder_of final : decoder {
  std::vector<std::vector<T>> inputs;
  explicit decoder_of(const std::vector<std::vector<double>>& in) {
    for (const auto& v : in) inputs.push_back(rounded<T>(v));
  }
  outcome decode(std::span<const std::byte> chunk, int expect, const source& ref, std::string& what) const override {
    std::vector<T> out(inputs[static_cast<std::size_t>(expect)].size());
    // A heap copy of exactly the chunk's size: an over-read shows under -fsanitize=address.
    const std::vector<std::byte> exact(chunk.begin(), chunk.end());
    try {
      ncclz::host::decompress<Codec, T>(std::span<const std::byte>(exact.data(), exact.size()), std::span<T>(out));
    } catch (const ncclz::format_error&) {
      return outcome::rejected;
    } catch (const std::exception& e) {
      what = e.what();
      return outcome::crashed;
    }
    // Decoded: the values must keep the bound of the chunk that was given (the reference).
    if (ref.dtype != static_cast<int>(ncclz::dtype_of<T>()) || ref.input != expect) return outcome::out_of_bound;
    const std::vector<T>& x = inputs[static_cast<std::size_t>(expect)];
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!keeps_bound(x[i], out[i], ref.tolerance[i])) return outcome::out_of_bound;
    }
    return outcome::in_bound;
  }
};

/// Each value's tolerance in a chunk `chunk` of Codec: bit for bit (lossless), its block's step / 2
/// (fixed_rate: from the step table), or the header's error bound.
template <class Codec, class T>
std::vector<double> tolerance_of(const std::vector<std::byte>& chunk, std::size_t n) {
  using Q = typename Codec::quantizer;
  const fmt::chunk_header h = ncclz::detail::parse_header(chunk.data(), chunk.size());
  std::vector<double> t(n, h.error_bound);
  if constexpr (Q::id == ncclz::quantizer_id::lossless) {
    std::fill(t.begin(), t.end(), -1.0);
  } else if constexpr (ncclz::is_blockwise_v<Q>) {
    using C = ncclz::compute_t<T>;
    const std::uint64_t at = sizeof h + fmt::step_table_offset(h.tile_count, h.flags);
    for (std::size_t i = 0; i < n; ++i) {
      C step;
      std::memcpy(&step, chunk.data() + at + (i / fmt::kScaleBlockElements) * sizeof(C), sizeof(C));
      t[i] = static_cast<double>(step) / 2;
    }
  }
  return t;
}

/// Chunks of every input under Codec, with and without tile checksums, and Codec's decoder.
template <class Q, class Coder, class T>
void add_codec(registry& r, double bound, const char* qname) {
  using Checked = ncclz::Codec<Q, Coder>;
  using Unchecked = ncclz::Codec<Q, Coder, ncclz::Integrity<ncclz::NoChecksums>>;
  const std::size_t index = r.decoders.size();
  auto d = std::make_unique<decoder_of<Checked, T>>(r.inputs);
  for (std::size_t k = 0; k < r.inputs.size(); ++k) {
    const std::vector<T>& in = d->inputs[k];
    for (const bool checked : {true, false}) {
      source s;
      s.bytes = checked ? ncclz::host::compress<Checked, T>(std::span<const T>(in), bound)
                        : ncclz::host::compress<Unchecked, T>(std::span<const T>(in), bound);
      s.codec = std::string(qname) + "/" + Coder::name + "/" + ncclz::detail::dtype_name(static_cast<std::uint8_t>(ncclz::dtype_of<T>()));
      s.input = static_cast<int>(k);
      s.dtype = static_cast<int>(ncclz::dtype_of<T>());
      s.quantizer = static_cast<int>(Q::id);
      s.checked = checked;
      s.tolerance = tolerance_of<Checked, T>(s.bytes, in.size());
      s.decoder = index;
      r.sources.push_back(std::move(s));
    }
  }
  r.decoders.push_back(std::move(d));
}

/// Every coder and element type under quantizer Q.
template <class Q>
void add_quantizer(registry& r, double bound, const char* qname) {
  const auto coders = [&]<class T>() {
    add_codec<Q, ncclz::EntropyCoder<ncclz::Raw>, T>(r, bound, qname);
    add_codec<Q, ncclz::EntropyCoder<ncclz::FixedLength>, T>(r, bound, qname);
    add_codec<Q, ncclz::EntropyCoder<ncclz::Huffman>, T>(r, bound, qname);
    add_codec<Q, ncclz::EntropyCoder<ncclz::ZeroRun>, T>(r, bound, qname);
    add_codec<Q, ncclz::EntropyCoder<ncclz::Adaptive>, T>(r, bound, qname);
  };
  coders.template operator()<float>();
  coders.template operator()<double>();
  coders.template operator()<__half>();
  coders.template operator()<__nv_bfloat16>();
}

void add_abs(registry& r);
void add_rel(registry& r);
void add_lossless(registry& r);
void add_fixed8(registry& r);
void add_fixed4(registry& r);

}  // namespace ncclz_fuzz
