// 03_broadcast_field: the root broadcasts a real climate field with ncclz; every rank checks the
// field it received against the original, element by element.
//
//   tools/make_datasets.sh data          # once: real fields from Debian's libncarg-data
//   scripts/emulated_cluster.sh -n 4 -- build/examples/03_broadcast_field data/trinidad.f32 [REL_BOUND]
//
// The root reads the raw float32 file and broadcasts it with a bound relative to the field's
// value range; the compressed chunk is made once and moved unchanged. To check, every rank also
// reads the file (here all ranks share a disk; in a real job only the root would have it).
// Exits non-zero on any element outside the bound, 77 without a GPU or without the file.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "ncclz/bootstrap.hpp"
#include "ncclz/ncclz.cuh"

namespace {

std::vector<float> read_field(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const auto bytes = static_cast<std::size_t>(in.tellg());
  std::vector<float> v(bytes / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  return v;
}

}  // namespace

int main(int argc, char** argv) try {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  const std::string path = argc > 1 ? argv[1] : "data/trinidad.f32";
  const double rel = argc > 2 ? std::stod(argv[2]) : 1e-3;
  const std::vector<float> field = read_field(path);
  if (field.empty()) {
    std::printf("SKIP: %s is missing or empty (make it with tools/make_datasets.sh data)\n", path.c_str());
    return 77;
  }

  ncclz::cluster_comm cc;
  cudaStream_t stream;
  NCCLZ_CUDA_TRY(cudaStreamCreate(&stream));
  using Codec = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
  ncclz::communicator_config config;
  config.fallback_below_bytes = 0;  // compress even a small field, to show the ratio
  config.autotune = false;
  ncclz::Communicator<Codec> comm(cc.comm(), config);

  const int root = 0;
  const std::size_t count = field.size();
  float* d_field = nullptr;
  NCCLZ_CUDA_TRY(cudaMalloc(&d_field, count * sizeof(float)));
  if (cc.rank() == root) NCCLZ_CUDA_TRY(cudaMemcpy(d_field, field.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  comm.broadcast(d_field, d_field, count, root, rel, stream);
  comm.check(stream);

  std::vector<float> got(count);
  NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), d_field, count * sizeof(float), cudaMemcpyDeviceToHost));
  const auto [lo, hi] = std::minmax_element(field.begin(), field.end());
  const double eb = rel * (static_cast<double>(*hi) - static_cast<double>(*lo));
  std::size_t bad = 0;
  double max_err = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - static_cast<double>(field[i]));
    max_err = std::max(max_err, err);
    bad += !(err <= eb);
  }
  const ncclz::call_info info = comm.last_call();
  std::printf("rank %d: %s, %zu values, ratio %.2f, max error %.3g <= %.3g: %s\n", cc.rank(), path.c_str(), count, info.ratio,
              max_err, eb, bad == 0 ? "ok" : "VIOLATED");
  cudaFree(d_field);
  NCCLZ_CUDA_TRY(cudaStreamDestroy(stream));
  return bad == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "03_broadcast_field: %s\n", e.what());
  return 2;
}
