// ncclz-lossless-study: which bit mapping should Quantizer<Lossless> use? Compressed sizes of
// fp32, bf16 and fp16 arrays under candidate mappings of a value's bits to an int32 code, with
// the host reference coders: fixed-length (the chunk host::compress writes), huffman tiles
// (huffman_reference.hpp, the coming Huffman/Adaptive coders) and zero-run tiles, each tile kept
// raw where that is smaller, as the device selector does. Host only, sequential.
//
//   ncclz-lossless-study [--synthetic N] [FILE.f32|FILE.bf16|FILE.f16 ...]
//
// A FILE is raw little-endian values, its type named by its extension (tools/make_gradients.py
// writes them). --synthetic N adds N generated gradient-like fp32 values (and their bf16 rounding):
// per-layer scales over three decades, Gaussian values with per-row scales, a tenth of the rows
// zero (dead units).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/host/huffman_reference.hpp"
#include "ncclz/host/reference_codec.hpp"
#include "ncclz/host/zero_run_reference.hpp"

namespace {

template <class T>
std::uint32_t bits_of(T x) {
  if constexpr (sizeof(T) == 2) {
    std::uint16_t b;
    std::memcpy(&b, &x, 2);
    return b;
  } else {
    std::uint32_t b;
    std::memcpy(&b, &x, 4);
    return b;
  }
}
template <class T>
T from_bits(std::uint32_t b) {
  T x;
  if constexpr (sizeof(T) == 2) {
    const auto h = static_cast<std::uint16_t>(b);
    std::memcpy(static_cast<void*>(&x), &h, 2);
  } else {
    std::memcpy(static_cast<void*>(&x), &b, 4);
  }
  return x;
}

/// Field layout of T: bits of mantissa and exponent.
template <class T>
constexpr int mantissa_bits() {
  if constexpr (std::is_same_v<T, float>) return 23;
  else if constexpr (std::is_same_v<T, __half>) return 10;
  else return 7;
}

/// A candidate mapping as a quantizer policy: code(bits) and bits(code), every code but
/// INT32_MIN (the device kernels' outlier mark; the pattern mapped there is an outlier).
template <class Map>
struct Candidate {
  static constexpr ncclz::quantizer_id id = ncclz::quantizer_id::user;
  static constexpr bool needs_range = false;
  static constexpr const char* name = Map::name;
  template <class T>
  static ncclz::quant_params<T> make_params(double b, ncclz::value_range<T> r) {
    return ncclz::Quantizer<ncclz::Lossless>::make_params<T>(b, r);
  }
  template <class T>
  static bool quantize(T x, const ncclz::quant_params<T>&, std::int32_t& q) {
    if constexpr (sizeof(T) == 8) return false;
    else {
      q = static_cast<std::int32_t>(Map::template code<T>(bits_of(x)));
      return q != INT32_MIN;
    }
  }
  template <class T>
  static T dequantize(std::int32_t q, const ncclz::quant_params<T>&) {
    if constexpr (sizeof(T) == 8) return 0;
    else return from_bits<T>(Map::template bits<T>(static_cast<std::uint32_t>(q)));
  }
};

/// What Quantizer<Lossless> does (sign in bit 0).
struct SignLow {
  static constexpr const char* name = "sign_low (chosen)";
};
/// Codes ordered like the values: s ? -mag - 1 : mag.
struct Ordered {
  static constexpr const char* name = "ordered";
  template <class T>
  static std::uint32_t code(std::uint32_t b) {
    constexpr int n = 8 * sizeof(T);
    const std::uint32_t mag = b & ((1u << (n - 1)) - 1u);
    return (b >> (n - 1)) ? ~mag : mag;
  }
  template <class T>
  static std::uint32_t bits(std::uint32_t q) {
    constexpr int n = 8 * sizeof(T);
    const bool neg = static_cast<std::int32_t>(q) < 0;
    const std::uint32_t mag = neg ? ~q : q;
    return (neg ? 1u << (n - 1) : 0u) | mag;
  }
};
/// The bits themselves (sign on top).
struct Bits {
  static constexpr const char* name = "bits";
  template <class T>
  static std::uint32_t code(std::uint32_t b) { return b; }
  template <class T>
  static std::uint32_t bits(std::uint32_t q) { return q; }
};
/// Mantissa above exponent above sign.
struct MantissaHigh {
  static constexpr const char* name = "mantissa_high";
  template <class T>
  static std::uint32_t code(std::uint32_t b) {
    constexpr int n = 8 * sizeof(T), m = mantissa_bits<T>(), e = n - 1 - m;
    const std::uint32_t man = b & ((1u << m) - 1u), ex = (b >> m) & ((1u << e) - 1u), s = b >> (n - 1);
    return (man << (e + 1)) | (ex << 1) | s;
  }
  template <class T>
  static std::uint32_t bits(std::uint32_t q) {
    constexpr int n = 8 * sizeof(T), m = mantissa_bits<T>(), e = n - 1 - m;
    const std::uint32_t s = q & 1u, ex = (q >> 1) & ((1u << e) - 1u), man = q >> (e + 1);
    return (s << (n - 1)) | (ex << m) | man;
  }
};

struct sizes {
  std::uint64_t fixed = 0, huffman = 0, zero_run = 0, best = 0;
};

/// Chunk bytes of `in` with quantizer Q under each tile coder (each tile: min of that coder's tile
/// and raw; `best`: the smallest of all), plus the chunk header and tile table.
template <class Q, class T>
sizes measure(std::span<const T> in) {
  using Codec = ncclz::Codec<Q, ncclz::EntropyCoder<ncclz::FixedLength>>;
  namespace fmt = ncclz::format;
  const auto p = Q::template make_params<T>(0.0, ncclz::value_range<T>::empty());
  const std::uint64_t tiles = fmt::tile_count(in.size());
  const std::uint64_t overhead = sizeof(fmt::chunk_header) + fmt::table_bytes(tiles);
  sizes s{overhead, overhead, overhead, overhead};
  std::vector<std::byte> scratch(fmt::max_chunk_bytes(fmt::kTileElements, sizeof(T)) + 64);
  for (std::uint64_t t = 0; t < tiles; ++t) {
    const std::span<const T> v = in.subspan(t * fmt::kTileElements, fmt::tile_elements(in.size(), t));
    const std::uint64_t raw = fmt::raw_tile_bytes(static_cast<std::uint32_t>(v.size()), sizeof(T));
    const std::uint64_t fixed = ncclz::host::detail::encode_tile<Codec, T>(v, p, scratch, 0);  // raw when smaller
    const std::uint64_t huff = std::min<std::uint64_t>(raw, ncclz::host::detail::huffman::encode_tile<Codec, T>(v, p).size());
    const std::uint64_t zr = std::min<std::uint64_t>(raw, ncclz::host::detail::zero_run::encode_tile<Codec, T>(v, p).size());
    s.fixed += fixed;
    s.huffman += huff;
    s.zero_run += zr;
    s.best += std::min({fixed, huff, zr});
  }
  return s;
}

template <class T>
void report(const std::string& what, const std::vector<T>& values) {
  const std::span<const T> in(values);
  const double bytes = static_cast<double>(in.size_bytes());
  const auto row = [&](const char* name, sizes s) {
    std::printf("%-34s %-5s %10zu  %-18s %7.4f %7.4f %7.4f %7.4f\n", what.c_str(),
                std::is_same_v<T, float> ? "f32" : std::is_same_v<T, __half> ? "f16" : "bf16", in.size(), name,
                bytes / s.fixed, bytes / s.huffman, bytes / s.zero_run, bytes / s.best);
    std::fflush(stdout);
  };
  row(SignLow::name, measure<ncclz::Quantizer<ncclz::Lossless>, T>(in));
  row(Ordered::name, measure<Candidate<Ordered>, T>(in));
  row(Bits::name, measure<Candidate<Bits>, T>(in));
  row(MantissaHigh::name, measure<Candidate<MantissaHigh>, T>(in));
}

std::vector<float> synthetic(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<float> v;
  v.reserve(n);
  while (v.size() < n) {
    const std::size_t rows = 64 + g() % 512, cols = 64 + g() % 1024;
    const double layer = std::pow(10.0, -5.0 + 3.0 * u(g));
    for (std::size_t r = 0; r < rows && v.size() < n; ++r) {
      const bool dead = u(g) < 0.1;
      const double row = layer * std::exp(0.5 * normal(g));
      for (std::size_t c = 0; c < cols && v.size() < n; ++c) v.push_back(dead ? 0.0f : static_cast<float>(row * normal(g)));
    }
  }
  return v;
}

template <class T>
std::vector<T> load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::vector<char> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<T> v(raw.size() / sizeof(T));
  std::memcpy(static_cast<void*>(v.data()), raw.data(), v.size() * sizeof(T));
  return v;
}

bool ends_with(const std::string& s, const std::string& e) { return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0; }

}  // namespace

int main(int argc, char** argv) {
  try {
    std::printf("# compression ratio (input bytes / chunk bytes), each tile raw where that is smaller\n");
    std::printf("%-34s %-5s %10s  %-18s %7s %7s %7s %7s\n", "input", "type", "values", "mapping", "fixed", "huffman", "zerorun",
                "best");
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--synthetic" && i + 1 < argc) {
        const std::vector<float> f = synthetic(std::stoul(argv[++i]), 42);
        report("synthetic_gradients", f);
        std::vector<__nv_bfloat16> b(f.size());
        for (std::size_t k = 0; k < f.size(); ++k) b[k] = __float2bfloat16_rn(f[k]);
        report("synthetic_gradients", b);
      } else if (ends_with(a, ".f32")) {
        report(a.substr(a.find_last_of('/') + 1), load<float>(a));
      } else if (ends_with(a, ".bf16")) {
        report(a.substr(a.find_last_of('/') + 1), load<__nv_bfloat16>(a));
      } else if (ends_with(a, ".f16")) {
        report(a.substr(a.find_last_of('/') + 1), load<__half>(a));
      } else {
        std::fprintf(stderr, "usage: ncclz-lossless-study [--synthetic N] [FILE.f32|FILE.bf16|FILE.f16 ...]\n");
        return 2;
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ncclz-lossless-study: %s\n", e.what());
    return 2;
  }
}
