// ncclz-codec-bench --lossless DIR (cases.cuh): the lossless codec on raw arrays.
#include "cases.cuh"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <type_traits>

namespace ncclz_bench::codec_bench {

// --- lossless (--lossless DIR) ------------------------------------------------------------------
template <class Strategy>
using LosslessC = ncclz::Codec<ncclz::Quantizer<ncclz::Lossless>, ncclz::EntropyCoder<Strategy>>;

struct LosslessTotal {
  std::uint64_t in = 0, out = 0;
};

/// One array: the lossless chunk's ratio, compress and decompress throughput, and whether the
/// decoded bits are the input's. Returns false when they are not.
template <class LosslessFL, class T>
bool lossless_row(const Context& c, const std::string& name, const std::vector<T>& host, LosslessTotal& total) {
  DeviceBuffers<T> b(host);
  const Timing comp = time_op(c, [&] {
    ncclz::device::compress<LosslessFL>(b.ws, b.ws_bytes, b.in, b.n, b.chunk, b.cap, b.size, 0.0, c.stream);
  }, [] {});
  std::uint64_t size = 0;
  NCCLZ_CUDA_TRY(cudaMemcpy(&size, b.size, sizeof size, cudaMemcpyDeviceToHost));
  NCCLZ_CUDA_TRY(cudaMemset(b.out, 0xFF, b.n * sizeof(T)));
  const Timing decomp = time_op(c, [&] {
    ncclz::device::decompress<LosslessFL>(b.ws, b.ws_bytes, b.chunk, size, b.out, b.n, c.stream);
  }, [] {});
  ncclz::device::throw_if_decode_failed(b.ws, c.stream);
  std::vector<T> out(b.n);
  NCCLZ_CUDA_TRY(cudaMemcpy(out.data(), b.out, b.n * sizeof(T), cudaMemcpyDeviceToHost));
  const bool same = std::memcmp(out.data(), host.data(), b.n * sizeof(T)) == 0;
  const std::size_t bytes = b.n * sizeof(T);
  std::printf("%-44s %-12s %-5s %10zu %8.3f %8.4f %12.1f %12.1f %s\n", name.c_str(), LosslessFL::coder::name,
              sizeof(T) == 4 ? "f32" : std::is_same_v<T, __half> ? "f16" : "bf16", b.n, bytes / kMiB,
              size ? double(bytes) / double(size) : 0.0, gbps(bytes, comp.med_ms), gbps(bytes, decomp.med_ms),
              same ? "yes" : "NO");
  total.in += bytes;
  total.out += size;
  return same;
}

/// --lossless DIR: every DIR/*.f32, *.bf16 and *.f16 (raw little-endian, tools/make_gradients.py),
/// through Codec<Quantizer<Lossless>, EntropyCoder<coder>> for each of --coders. Returns 1 if a round
/// trip lost a bit.
int bench_lossless(const Context& c, const std::string& dir, const std::vector<std::string>& coders) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext == ".f32" || ext == ".bf16" || ext == ".f16") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error("--lossless " + dir + ": no .f32, .bf16 or .f16 files");
  std::printf("# lossless: Quantizer<lossless>+EntropyCoder<coder>, median of %d runs; bit_exact: decoded bits == input\n",
              c.runs);
  std::printf("%-44s %-12s %-5s %10s %8s %8s %12s %12s %s\n", "input", "coder", "type", "values", "MiB", "ratio", "comp_GB/s",
              "decomp_GB/s", "bit_exact");
  bool ok = true;
  std::vector<std::vector<char>> contents;  // read once, coded by each coder
  for (const auto& path : files) {
    std::ifstream f(path, std::ios::binary);
    contents.emplace_back((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }
  for (const std::string& coder : coders) {
    LosslessTotal f32, b16, f16;
    for (std::size_t k = 0; k < files.size(); ++k) {
      const std::vector<char>& raw = contents[k];
      const auto load = [&]<class T>(T) {
        std::vector<T> v(raw.size() / sizeof(T));
        std::memcpy(static_cast<void*>(v.data()), raw.data(), v.size() * sizeof(T));
        return v;
      };
      const std::string ext = files[k].extension().string(), name = files[k].filename().string();
      const auto rows = [&]<class Codec>() {
        if (ext == ".f32") ok &= lossless_row<Codec>(c, name, load(0.0f), f32);
        else if (ext == ".bf16") ok &= lossless_row<Codec>(c, name, load(__nv_bfloat16{}), b16);
        else ok &= lossless_row<Codec>(c, name, load(__half{}), f16);
      };
      if (coder == "huffman") rows.template operator()<LosslessC<ncclz::Huffman>>();
      else if (coder == "adaptive") rows.template operator()<LosslessC<ncclz::Adaptive>>();
      else rows.template operator()<LosslessC<ncclz::FixedLength>>();
    }
    for (const auto& [label, t] : {std::pair{"all f32", f32}, std::pair{"all bf16", b16}, std::pair{"all f16", f16}}) {
      if (t.in) std::printf("%-44s %-12s ratio %.4f (%.3f MiB -> %.3f MiB)\n", label, coder.c_str(), double(t.in) / double(t.out),
                            t.in / kMiB, t.out / kMiB);
    }
  }
  std::printf("%s: lossless round trips %s\n", ok ? "OK" : "FAILED", ok ? "bit-exact" : "LOST BITS");
  return ok ? 0 : 1;
}

}  // namespace ncclz_bench::codec_bench
