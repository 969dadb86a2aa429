// Which of Adaptive's steps each tile takes (host reference logic, same rules as the device):
// the zero_run sample's verdict, whether zero_run is measured, whether huffman's gate passes,
// whether its estimate passes, and the mode kept. Inputs: the codec bench's smooth and noise
// (seed 7, 64 MiB f32), REL 1e-3 and 1e-4. From the repository root:
//   g++ -std=c++20 -O2 -Iinclude -I/usr/local/cuda/include -o /tmp/selector_paths docs/results/2026-12-03/scripts/selector_paths.cpp
#include <cstdio>
#include <map>
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
    if (gate) est = hd::huffman::estimate_tile(d, elements, sizeof(T)).bytes < to_beat;
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
  for (double b : {1e-3, 1e-4}) {
    paths("smooth", smooth, b);
    paths("noise", noise, b);
  }
}
