// For every tile where Adaptive's huffman estimate passes (so the device builds a codebook), the
// estimate against the huffman tile actually built (host reference, same selection rules as the
// device): literal count L, symbols stored and used, the longest code, the code's bits (11-bit
// limited and 30-bit), whether huffman wins the tile, and the order-0 entropy H with a
// one-bit-for-the-top-symbol correction of it ("corr", valid where that symbol holds over 2/5 of
// the deltas) and the estimate it would give. It also applies build_tile's give-up rule (the
// unlimited code's bits and the escape bits, laid out, against min(bar, zero_run + 1)) and says
// GAVE UP ON A WINNER where that rule would stop a tile huffman wins; the last line counts both.
// Inputs: the codec bench's smooth and noise (seed 7, 64 MiB) as f32, bf16 and f16, smooth as
// f64, and the 13 fields (from /tmp/d/data: tools/make_datasets.sh), REL 1e-3 and 1e-4. The tile
// summary lines are selector_paths.cpp's (docs/results/2026-12-03/scripts), whose per-tile
// selection this repeats. From the repository root:
//   g++ -std=c++20 -O2 -Iinclude -I/usr/local/cuda/include -Idocs/results/2026-12-03/scripts -o /tmp/estimate_vs_build docs/results/2026-12-03b/scripts/estimate_vs_build.cpp -L/usr/local/cuda/lib64 -lcudart
#include <cstdio>
#include <fstream>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
static long gave_up_count = 0, bad_count = 0;
#include <map>
#include <cmath>
#include <algorithm>
#include <string>
#include "ncclz/host/reference_codec.hpp"
#include "../../../../benchmarks/generated_inputs.hpp"


using AdaptiveRel = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Adaptive>>;
namespace format = ncclz::format;
namespace hd = ncclz::host::detail;

template <class T>
void paths(const char* name, const std::vector<T>& in, double bound) {
  const auto p = AdaptiveRel::quantizer::template make_params<T>(bound, ncclz::host::find_range(std::span<const T>(in)));
  std::map<std::string, int> n;
  const std::size_t tiles = format::tile_count(in.size());
  for (std::size_t t = 0; t < tiles; ++t) {
    const std::size_t first = t * format::kTileElements, count = std::min<std::size_t>(format::kTileElements, in.size() - first);
    std::span<const T> v(in.data() + first, count);
    const auto elements = static_cast<std::uint32_t>(count);
    const std::uint64_t fl = hd::fixed_length_tile<AdaptiveRel>(v, p).size();
    const std::uint64_t bar = format::entropy_bar(fl);
    const hd::zero_run::tile_codes c = hd::zero_run::codes_of<AdaptiveRel>(v, p);
    const auto verdict = format::zero_run_verdict(hd::zero_run::sampled_zero_codes(c.codes), hd::zero_run::sampled_zero_deltas(c.codes), elements);
    bool measured = verdict == format::zero_run_sample::measure;
    if (verdict == format::zero_run_sample::count_all)
      measured = format::zero_run_worth_trying(hd::zero_run::zero_codes(c.codes), hd::zero_run::zero_deltas(c.codes),
                                               hd::zero_run::zero_delta_runs(c.codes), elements);
    std::uint64_t zr = ~0ull;
    if (measured) zr = hd::zero_run::encode_tile_with<T>(v, c, hd::zero_run::choose_predictor(c.codes)).size();
    const hd::huffman::tile_deltas d = hd::huffman::deltas_of<AdaptiveRel>(v, p);
    const std::uint64_t to_beat = std::min(bar, zr);
    const bool gate = hd::huffman::gate_tile_bytes(d, elements, sizeof(T)) < to_beat;
    bool est = false;
    if (gate) {
      const auto e = hd::huffman::estimate_tile(d, elements, sizeof(T));
      est = e.bytes < to_beat;
      if (est) {
        const std::uint64_t h = hd::huffman::encode_tile_with<T>(v, d, e.literals).size();
        const bool wins = h < std::min(bar, zr) || (h < bar && !(zr < h));
        const auto hist = hd::huffman::histogram(d.zigzagged);
        const auto counts = hd::huffman::symbol_counts(hist, e.literals);
        double N = 0, c1 = 0, slogs = 0;
        for (auto c : counts) { N += c; c1 = std::max<double>(c1, c); if (c) slogs += c * std::log2(double(c)); }
        const double H = N * std::log2(N) - slogs;
        const double rest = N - c1 > 0 ? (N - c1) * std::log2(N - c1) - (slogs - c1 * std::log2(c1)) : 0;
        const double corr = c1 > 0.4 * N ? N + rest : H;
        {
          double L11 = 0, L30 = 0; int used = 0, maxlen = 0;
          const auto l11 = hd::huffman::limited_code_lengths(counts);
          const auto l30 = hd::huffman::limited_code_lengths(counts, 30);
          for (std::size_t k = 0; k < counts.size(); ++k) { L11 += double(counts[k]) * l11[k]; L30 += double(counts[k]) * l30[k]; used += counts[k] > 0; maxlen = std::max<int>(maxlen, l30[k]); }
          std::printf("L %u syms %zu used %d maxlen %d L11 %.0f L30 %.0f ", e.literals, counts.size(), used, maxlen, L11, L30);
          // build_tile's give-up rule (device, e3b4e90 + give_up_at): the unlimited code's bits and the escapes.
          std::uint64_t least = 0;
          for (std::size_t k = 0; k < counts.size(); ++k) {
            if (counts[k] == 0) continue;
            if (used >= 2) least += std::uint64_t{counts[k]} * l30[k];
            if (k >= e.literals) least += std::uint64_t{counts[k]} * ncclz::format::huffman::escape_bits(ncclz::format::huffman::class_width(std::uint32_t(k), e.literals), e.literals);
          }
          const std::uint64_t give_up_at = std::min<std::uint64_t>(bar, zr == ~0ull ? ~0ull : zr + 1);
          const std::uint64_t least_total = format::huffman::tile_layout_of(std::uint32_t(counts.size()), format::huffman::tile_subblocks(elements, format::huffman::halves_subblocks(least, elements)), least, std::uint32_t(d.outlier_index.size()), sizeof(T)).total;
          gave_up_count += least_total >= give_up_at;
          if (least_total >= give_up_at && wins) { std::printf("GAVE UP ON A WINNER "); bad_count++; }
        }
        {
          const double extra_bits = double(hd::huffman::estimated_bits(hist, e.literals)) / 65536.0 - H / 1.0;
          const std::uint64_t cb = (std::uint64_t)((corr + extra_bits) * 65536.0);
          const auto eb2 = format::huffman::estimated_tile_bytes(cb, (std::uint32_t)counts.size(), elements, (std::uint32_t)d.outlier_index.size(), sizeof(T));
          std::printf("est_corr %llu (tobeat %llu) %s ", (unsigned long long)eb2, (unsigned long long)to_beat, eb2 < to_beat ? "PASS" : "reject");
        }
        std::printf("p1 %.3f H %.0f corr %.0f (+%.1f%%) ", c1 / N, H, corr, 100 * (corr / H - 1));
        std::printf("%s %.0e tile %zu est %llu huff %llu (%.4f of est) bar %llu zr %llu win %d margin %.4f\n", name, bound, t,
                    (unsigned long long)e.bytes, (unsigned long long)h, double(h) / e.bytes, (unsigned long long)bar, (unsigned long long)zr, wins, double(to_beat) / h);
      }
    }
    const char* vs[] = {"skip", "measure", "count_all"};
    n[std::string("verdict ") + vs[static_cast<int>(verdict)]]++;
    if (measured) n["zero_run measured"]++;
    if (gate) n["gate passed (estimate run)"]++;
    if (est) n["estimate passed (codebook built)"]++;
  }
  std::printf("%-7s %.0e  tiles %zu:", name, bound, tiles);
  for (auto& [k, c] : n) std::printf("  %s %d", k.c_str(), c);
  std::printf("\n");
}

int main() {
  const std::size_t n = (64u << 20) / sizeof(float);
  const auto smooth = ncclz_bench::make_smooth<float>(n, 7);
  const auto noise = ncclz_bench::make_noise(n, 7);
  const auto smooth64 = ncclz_bench::make_smooth<double>(n / 2, 7);
  std::vector<__nv_bfloat16> sb(n), nb(n); std::vector<__half> sh(n), nh(n);
  for (std::size_t i = 0; i < n; ++i) { sb[i] = __float2bfloat16(smooth[i]); nb[i] = __float2bfloat16(noise[i]); sh[i] = __float2half(smooth[i]); nh[i] = __float2half(noise[i]); }
  const char* fields[] = {"fice", "hgt", "nc4uvt_T", "nc4uvt_U", "nc4uvt_V", "pop_t", "seam_ps", "sst", "sstanom_SST", "trinidad", "uv300_U", "uv300_V", "vinth2p_T"};
  for (double b : {1e-3, 1e-4}) {
    paths("smooth", smooth, b); paths("noise", noise, b); paths("smooth64", smooth64, b);
    paths("smooth_bf16", sb, b); paths("noise_bf16", nb, b); paths("smooth_f16", sh, b); paths("noise_f16", nh, b);
    for (const char* f : fields) {
      std::ifstream in(std::string("/tmp/d/data/") + f + ".f32", std::ios::binary);
      if (!in) continue;
      std::vector<float> v((std::istreambuf_iterator<char>(in)), {});
      std::vector<float> vals(v.size() * sizeof(char) / sizeof(float));
      in.clear(); in.seekg(0); in.read(reinterpret_cast<char*>(vals.data()), vals.size() * sizeof(float));
      paths(f, vals, b);
    }
  }
  std::printf("TOTAL gave up %ld, gave up on a winner %ld\n", gave_up_count, bad_count);
}
