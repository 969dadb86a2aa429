// Host: Adaptive and FixedLength chunk bytes of each field at REL 1e-3 and 1e-4 (the selector-rule checks of
// the eighth session). g++ -std=c++20 -O2 -Iinclude -I/usr/local/cuda/include THIS -o /tmp/ratio && /tmp/ratio data/*.f32
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>
#include "ncclz/host/reference_codec.hpp"
using namespace ncclz;
int main(int argc, char** argv) {
  using A = Codec<Quantizer<RelBound>, EntropyCoder<Adaptive>>;
  using F = Codec<Quantizer<RelBound>, EntropyCoder<FixedLength>>;
  for (int i = 1; i < argc; ++i) {
    std::ifstream f(argv[i], std::ios::binary | std::ios::ate);
    std::vector<float> v(f.tellg() / 4); f.seekg(0); f.read(reinterpret_cast<char*>(v.data()), v.size() * 4);
    for (double b : {1e-3, 1e-4}) {
      const auto a = host::compress<A>(std::span<const float>(v), b).size();
      const auto l = host::compress<F>(std::span<const float>(v), b).size();
      std::printf("%s %g adaptive %zu fixed %zu ratio_a %.3f ratio_f %.3f\n", argv[i], b, a, l, 4.0 * v.size() / a, 4.0 * v.size() / l);
    }
  }
}
