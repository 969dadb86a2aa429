// ncclz chunk fuzzer: mutates chunks of every coder x quantizer x element type, with and without
// tile checksums, and decodes each with the host reference decoder.
//
//   fuzz_chunks [--chunks N] [--seed S]
//
// Mutations: 1-4 flipped bits; an overwritten run of 1-32 bytes (random, zero, 0xFF, or bytes
// from elsewhere in the chunk); length inflation (bytes appended, payload_bytes or a tile offset
// raised); truncation (payload_bytes rewritten to match, or not); a splice of the chunk's start
// and the end of another chunk of the same input (another coder, or the other checksum policy);
// another codec's chunk, whole; random buffers (some behind the chunk's own header and tables).
// Each decode must end in a format_error or in values; values are checked against the input and
// the bound the chunk given promised (bit for bit for lossless).
//
// Fails (exit 1) on any other exception, on a source chunk that does not decode within its bound,
// and on any mutated chunk of a source with tile checksums that decodes to a value out of its
// bound. Sources without checksums may decode out of bound (flipped bits in their values): those
// are counted, as the cost of turning checksums off. Runs under -fsanitize=address,undefined too
// (meson's fuzz_chunks_sanitized), where an out-of-bounds read is a failure.
#include "fuzz_chunks.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <utility>

namespace ncclz_fuzz {

std::vector<std::vector<double>> make_inputs() {
  std::mt19937_64 g(20240611);  // fixed: the inputs are part of the test, the mutations are seeded
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<std::vector<double>> in;
  in.push_back({});                  // empty
  in.push_back({0.5});               // one value
  in.push_back(std::vector<double>(3000, 3.25));  // constant
  {
    std::vector<double> v(777);  // smooth, short of a tile
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.01 * static_cast<double>(i));
    in.push_back(v);
  }
  {
    std::vector<double> v(8192);  // noise, one tile
    for (double& x : v) x = uniform(g);
    in.push_back(v);
  }
  {
    std::vector<double> v(8193);  // sparse: a tenth nonzero, a tile and one value
    for (double& x : v) x = g() % 10 == 0 ? normal(g) : 0.0;
    in.push_back(v);
  }
  {
    std::vector<double> v(12000);  // smooth with NaN, +-Inf and values far past 2^30 steps
    for (std::size_t i = 0; i < v.size(); ++i) {
      v[i] = 10 * std::sin(0.002 * static_cast<double>(i)) + 0.01 * normal(g);
      const std::uint64_t r = g() % 400;
      if (r == 0) v[i] = std::nan("");
      else if (r == 1) v[i] = (g() & 1) ? HUGE_VAL : -HUGE_VAL;
      else if (r == 2) v[i] = 1e30 * uniform(g);
    }
    in.push_back(v);
  }
  {
    std::vector<double> v(20000);  // skewed: small values and rare spikes, three tiles
    for (double& x : v) x = 1e-3 * normal(g) + (g() % 300 == 0 ? 1e3 * uniform(g) : 0.0);
    in.push_back(v);
  }
  return in;
}

namespace {

enum kind { flip, overwrite, inflate, truncate, splice, foreign, random_buffer, kKinds };
const char* const kKindNames[kKinds] = {"bit flips", "overwrite", "inflation", "truncation", "splice", "other chunk",
                                        "random buffer"};

struct counts {
  std::uint64_t chunks = 0, rejected = 0, in_bound = 0, out_of_bound = 0, crashed = 0;
  void add(outcome o) {
    ++chunks;
    rejected += o == outcome::rejected;
    in_bound += o == outcome::in_bound;
    out_of_bound += o == outcome::out_of_bound;
    crashed += o == outcome::crashed;
  }
};

template <class V>
void store(std::vector<std::byte>& b, std::uint64_t at, V v) {
  if (at + sizeof v <= b.size()) std::memcpy(b.data() + at, &v, sizeof v);
}
template <class V>
V load(const std::vector<std::byte>& b, std::uint64_t at) {
  V v{};
  if (at + sizeof v <= b.size()) std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

/// Where a chunk's tables end (its first tile starts), or its size if it has no tile.
std::uint64_t tables_end(const std::vector<std::byte>& c) {
  const auto h = load<fmt::chunk_header>(c, 0);
  if (h.tile_count == 0) return c.size();
  return std::min<std::uint64_t>(c.size(), sizeof h + 8ull * load<std::uint32_t>(c, sizeof h));
}

struct mutated {
  std::vector<std::byte> bytes;
  const source* ref;
};

mutated mutate(kind k, const source& s, const registry& r, const std::vector<std::size_t>& family, std::mt19937_64& g) {
  std::vector<std::byte> c = s.bytes;
  const source* ref = &s;
  const auto random_bytes = [&](std::size_t n) {
    std::vector<std::byte> b(n);
    for (std::byte& x : b) x = static_cast<std::byte>(g());
    return b;
  };
  switch (k) {
    case flip: {
      const int flips = 1 + static_cast<int>(g() % 4);
      for (int f = 0; f < flips; ++f) {
        std::uint64_t at;
        switch (g() % 4) {
          case 0: at = g() % sizeof(fmt::chunk_header); break;  // the header
          case 1: at = g() % std::max<std::uint64_t>(tables_end(c), 1); break;  // header and tables
          default: at = g() % c.size(); break;
        }
        at = std::min<std::uint64_t>(at, c.size() - 1);
        c[at] ^= static_cast<std::byte>(1u << (g() % 8));
      }
      break;
    }
    case overwrite: {
      const std::uint64_t n = std::min<std::uint64_t>(1 + g() % 32, c.size());
      const std::uint64_t at = g() % (c.size() - n + 1);
      const std::uint64_t from = g() % (c.size() - n + 1);
      const int fill = static_cast<int>(g() % 4);
      for (std::uint64_t i = 0; i < n; ++i) {
        c[at + i] = fill == 0 ? static_cast<std::byte>(g()) : fill == 1 ? std::byte{0} : fill == 2 ? std::byte{0xFF} : s.bytes[from + i];
      }
      break;
    }
    case inflate: {
      const auto h = load<fmt::chunk_header>(c, 0);
      switch (g() % 4) {
        case 0: {  // bytes appended, payload_bytes raised to cover them
          const std::uint64_t more = 8 * (1 + g() % 512);
          const std::vector<std::byte> tail = (g() & 1) ? random_bytes(more) : std::vector<std::byte>(more);
          c.insert(c.end(), tail.begin(), tail.end());
          store<std::uint64_t>(c, 24, h.payload_bytes + more);
          break;
        }
        case 1: {  // payload_bytes raised alone
          store<std::uint64_t>(c, 24, h.payload_bytes + 8 * (1 + g() % 64));
          break;
        }
        case 2: {  // bytes appended alone: a buffer larger than its chunk
          const std::vector<std::byte> tail = random_bytes(8 * (1 + g() % 64));
          c.insert(c.end(), tail.begin(), tail.end());
          break;
        }
        default: {  // a tile offset moved on
          if (h.tile_count == 0) break;
          const std::uint64_t t = g() % h.tile_count;
          store<std::uint32_t>(c, sizeof h + 4 * t, load<std::uint32_t>(c, sizeof h + 4 * t) + 1 + static_cast<std::uint32_t>(g() % 8));
          break;
        }
      }
      break;
    }
    case truncate: {
      const std::uint64_t length = g() % c.size();
      c.resize(length);
      if ((g() & 1) && length >= sizeof(fmt::chunk_header)) {  // payload_bytes made to match
        const std::uint64_t payload = (length - sizeof(fmt::chunk_header)) / 8 * 8;
        c.resize(sizeof(fmt::chunk_header) + payload);
        store<std::uint64_t>(c, 24, payload);
      }
      break;
    }
    case splice: {
      const source& d = r.sources[family[g() % family.size()]];
      const std::uint64_t cut = g() % (c.size() + 1);
      const std::uint64_t from = (g() & 1) ? std::min<std::uint64_t>(cut, d.bytes.size()) : g() % (d.bytes.size() + 1);
      c.resize(cut);
      c.insert(c.end(), d.bytes.begin() + static_cast<std::ptrdiff_t>(from), d.bytes.end());
      break;
    }
    case foreign: {
      ref = &r.sources[g() % r.sources.size()];
      c = ref->bytes;
      break;
    }
    default: {  // random bytes, alone or behind the chunk's header (and tables)
      const int prefix_kind = static_cast<int>(g() % 3);
      const std::uint64_t prefix = prefix_kind == 0 ? 0 : prefix_kind == 1 ? std::min<std::uint64_t>(c.size(), 64) : tables_end(c);
      c.resize(prefix);
      const std::vector<std::byte> tail = random_bytes(g() % 2048);
      c.insert(c.end(), tail.begin(), tail.end());
      break;
    }
  }
  return {std::move(c), ref};
}

int run(int argc, char** argv) {
  std::uint64_t chunks = 1000000, seed = 0;
  bool seeded = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--chunks" && i + 1 < argc) chunks = std::strtoull(argv[++i], nullptr, 0);
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 0), seeded = true;
    else {
      std::fprintf(stderr, "usage: fuzz_chunks [--chunks N] [--seed S]\n");
      return 2;
    }
  }
  if (!seeded) {
    std::random_device rd;
    seed = (std::uint64_t{rd()} << 32) ^ rd();
  }
  const auto start = std::chrono::steady_clock::now();
  registry r;
  r.inputs = make_inputs();
  add_abs(r);
  add_rel(r);
  add_lossless(r);
  add_fixed8(r);
  add_fixed4(r);
  const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz_chunks: seed 0x%016llx; %zu source chunks (%zu codecs x element types, %zu inputs, with and without "
              "tile checksums) made in %.1f s\n",
              static_cast<unsigned long long>(seed), r.sources.size(), r.decoders.size(), r.inputs.size(), setup_s);

  int failures = 0;
  // Every source decodes within its bound.
  for (const source& s : r.sources) {
    std::string what;
    const outcome o = r.decoders[s.decoder]->decode(s.bytes, s.input, s, what);
    if (o != outcome::in_bound) {
      std::printf("FAILED: source %s input %d (%s) does not decode within its bound %s\n", s.codec.c_str(), s.input,
                  s.checked ? "checked" : "unchecked", what.c_str());
      ++failures;
    }
  }
  // Splice partners: the chunks of the same quantizer (and bound), element type and input, which
  // promise the same bound.
  const auto quantizer_of = [](const source& s) { return s.codec.substr(0, s.codec.find('/')); };
  std::map<std::tuple<std::string, int, int>, std::vector<std::size_t>> families;
  for (std::size_t i = 0; i < r.sources.size(); ++i) {
    families[{quantizer_of(r.sources[i]), r.sources[i].dtype, r.sources[i].input}].push_back(i);
  }

  std::mt19937_64 g(seed);
  counts by_kind[2][kKinds];                               // [checked][kind]
  std::map<std::pair<std::string, bool>, counts> by_quantizer;  // (quantizer, checked)
  const std::uint64_t per_source = (chunks + r.sources.size() - 1) / r.sources.size();
  std::uint64_t done = 0;
  for (std::uint64_t round = 0; round < per_source; ++round) {
    for (const source& s : r.sources) {
      const auto k = static_cast<kind>(g() % kKinds);
      const auto& family = families[{quantizer_of(s), s.dtype, s.input}];
      const mutated m = mutate(k, s, r, family, g);
      std::string what;
      const outcome o = r.decoders[s.decoder]->decode(m.bytes, s.input, *m.ref, what);
      by_kind[s.checked][k].add(o);
      by_quantizer[{quantizer_of(s), s.checked}].add(o);
      ++done;
      if (o == outcome::crashed || (o == outcome::out_of_bound && s.checked)) {
        if (++failures <= 20) {
          std::printf("FAILED: %s of %s input %d (%s): %s%s\n", kKindNames[k], s.codec.c_str(), s.input,
                      s.checked ? "checked" : "unchecked", o == outcome::crashed ? "unexpected exception: " : "decoded out of bound",
                      what.c_str());
        }
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf("\n%-14s %-9s %10s %10s %10s %12s %8s\n", "mutation", "checksums", "chunks", "rejected", "decoded", "out_of_bound",
              "crashed");
  counts total[2];
  for (int checked = 1; checked >= 0; --checked) {
    for (int k = 0; k < kKinds; ++k) {
      const counts& c = by_kind[checked][k];
      std::printf("%-14s %-9s %10llu %10llu %10llu %12llu %8llu\n", kKindNames[k], checked ? "on" : "off",
                  static_cast<unsigned long long>(c.chunks), static_cast<unsigned long long>(c.rejected),
                  static_cast<unsigned long long>(c.in_bound + c.out_of_bound), static_cast<unsigned long long>(c.out_of_bound),
                  static_cast<unsigned long long>(c.crashed));
      total[checked].chunks += c.chunks, total[checked].rejected += c.rejected, total[checked].in_bound += c.in_bound;
      total[checked].out_of_bound += c.out_of_bound, total[checked].crashed += c.crashed;
    }
  }
  std::printf("\n%-14s %-9s %10s %10s %10s %12s %8s\n", "quantizer", "checksums", "chunks", "rejected", "decoded", "out_of_bound",
              "crashed");
  for (const auto& [key, c] : by_quantizer) {
    std::printf("%-14s %-9s %10llu %10llu %10llu %12llu %8llu\n", key.first.c_str(), key.second ? "on" : "off",
                static_cast<unsigned long long>(c.chunks), static_cast<unsigned long long>(c.rejected),
                static_cast<unsigned long long>(c.in_bound + c.out_of_bound), static_cast<unsigned long long>(c.out_of_bound),
                static_cast<unsigned long long>(c.crashed));
  }
  for (int checked = 1; checked >= 0; --checked) {
    const counts& c = total[checked];
    std::printf("\nchecksums %-3s: %llu mutated chunks, %llu rejected, %llu decoded (%llu within bound, %llu out of bound), "
                "%llu unexpected exceptions",
                checked ? "on" : "off", static_cast<unsigned long long>(c.chunks), static_cast<unsigned long long>(c.rejected),
                static_cast<unsigned long long>(c.in_bound + c.out_of_bound), static_cast<unsigned long long>(c.in_bound),
                static_cast<unsigned long long>(c.out_of_bound), static_cast<unsigned long long>(c.crashed));
  }
  std::printf("\n%s: %llu mutated chunks in %.1f s (%.0f a second), seed 0x%016llx\n", failures ? "FAILED" : "OK",
              static_cast<unsigned long long>(done), seconds, static_cast<double>(done) / seconds,
              static_cast<unsigned long long>(seed));
  return failures ? 1 : 0;
}

}  // namespace
}  // namespace ncclz_fuzz

int main(int argc, char** argv) {
  try {
    return ncclz_fuzz::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_chunks: error: %s\n", e.what());
    return 2;
  }
}
