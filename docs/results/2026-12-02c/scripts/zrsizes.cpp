// Host: the sizes of zero_run tiles (ZeroRun coder) on every field at REL 1e-3 and 1e-4: how
// much shared memory staging a zero_run tile's stream before the look-back would need.
// g++ -std=c++20 -O2 -Iinclude -I/usr/local/cuda/include THIS -o /tmp/zrsizes && /tmp/zrsizes data/*.f32
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>
#include "ncclz/host/reference_codec.hpp"
using namespace ncclz;
int main(int argc, char** argv) {
  using Z = Codec<Quantizer<RelBound>, EntropyCoder<ZeroRun>>;
  std::vector<std::uint64_t> all;
  for (int i = 1; i < argc; ++i) {
    std::ifstream f(argv[i], std::ios::binary | std::ios::ate);
    std::vector<float> v(f.tellg() / 4); f.seekg(0); f.read(reinterpret_cast<char*>(v.data()), v.size() * 4);
    for (double b : {1e-3, 1e-4}) {
      const auto c = host::compress<Z>(std::span<const float>(v), b);
      format::chunk_header h; std::memcpy(&h, c.data(), sizeof h);
      std::vector<std::uint64_t> sz;
      for (std::uint32_t t = 0; t < h.tile_count; ++t) {
        std::uint32_t a, e; std::memcpy(&a, c.data() + sizeof h + 4 * t, 4);
        if (t + 1 < h.tile_count) std::memcpy(&e, c.data() + sizeof h + 4 * (t + 1), 4);
        const std::uint64_t begin = std::uint64_t{a} * 8, end = t + 1 < h.tile_count ? std::uint64_t{e} * 8 : h.payload_bytes;
        sz.push_back(end - begin);
      }
      std::sort(sz.begin(), sz.end());
      all.insert(all.end(), sz.begin(), sz.end());
      std::printf("%-28s %g tiles %4zu  median %6llu  p90 %6llu  max %6llu bytes\n", argv[i], b, sz.size(),
                  (unsigned long long)sz[sz.size() / 2], (unsigned long long)sz[sz.size() * 9 / 10], (unsigned long long)sz.back());
    }
  }
  std::sort(all.begin(), all.end());
  std::printf("all: %zu tiles, median %llu, p90 %llu, p99 %llu, max %llu bytes; under 8 KB: %.1f%%\n", all.size(),
              (unsigned long long)all[all.size() / 2], (unsigned long long)all[all.size() * 9 / 10], (unsigned long long)all[all.size() * 99 / 100],
              (unsigned long long)all.back(), 100.0 * (std::lower_bound(all.begin(), all.end(), 8192) - all.begin()) / all.size());
}
