// ncclz-collectives-bench: ncclz's allreduce, reduce_scatter, allgather and broadcast against NCCL's
// own, on the same buffers, one row per size. Run one process per rank, e.g. on the emulated
// cluster:
//
//   scripts/emulated_cluster.sh -n 4 -- build/benchmarks/ncclz-collectives-bench --data data
//
// size is the collective's whole buffer (allreduce/broadcast: the vector; allgather: what each
// rank receives; reduce_scatter: what each rank sends), as nccl-tests counts it. Times are the
// median over --runs after two warm-ups, of the slowest rank. "ncclz" is the default
// configuration (small calls fall back to NCCL), "forced" compresses every size.
// max_diff is the largest |ncclz - NCCL| over the result (NCCL's float sums round too, far below
// the bound); eb is the bound ncclz applied. Inputs: the real fields of --data DIR (*.f32,
// concatenated and tiled, each rank from another offset), or a generated smooth field.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ncclz/bootstrap.hpp"
#include "ncclz/ncclz.cuh"

namespace {

using Codec = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;

std::vector<float> load_fields(const std::string& dir) {
  std::vector<float> all;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".f32") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary | std::ios::ate);
    std::vector<float> v(static_cast<std::size_t>(in.tellg()) / sizeof(float));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

std::vector<float> input_for(const std::vector<float>& fields, int rank, std::size_t count) {
  std::vector<float> v(count);
  if (fields.empty()) {
    for (std::size_t i = 0; i < count; ++i)
      v[i] = static_cast<float>(20.0 * std::sin(i * 7e-4 + rank) * std::cos(i * 3e-6) + 0.5 * rank);
  } else {
    const std::size_t offset = static_cast<std::size_t>(rank) * 104729u;
    for (std::size_t i = 0; i < count; ++i) v[i] = fields[(offset + i) % fields.size()];
  }
  return v;
}

struct timer {
  ncclz::cluster_comm& cc;
  cudaStream_t stream;
  int runs;
  cudaEvent_t a, b;
  timer(ncclz::cluster_comm& c, cudaStream_t s, int r) : cc(c), stream(s), runs(r) {
    NCCLZ_CUDA_TRY(cudaEventCreate(&a));
    NCCLZ_CUDA_TRY(cudaEventCreate(&b));
  }
  ~timer() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  /// Median ms of `op` on this rank, then the largest over the ranks.
  template <class Op>
  float median_ms(Op&& op, float* d_scratch) {
    std::vector<float> t;
    for (int i = 0; i < runs + 2; ++i) {
      NCCLZ_CUDA_TRY(cudaEventRecord(a, stream));
      op();
      NCCLZ_CUDA_TRY(cudaEventRecord(b, stream));
      cc.synchronize(stream);
      float ms = 0;
      NCCLZ_CUDA_TRY(cudaEventElapsedTime(&ms, a, b));
      if (i >= 2) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    float m = t[t.size() / 2];
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(d_scratch, &m, sizeof m, cudaMemcpyHostToDevice, stream));
    cc.check(ncclAllReduce(d_scratch, d_scratch, 1, ncclFloat, ncclMax, cc.comm(), stream), "ncclAllReduce(time)");
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(&m, d_scratch, sizeof m, cudaMemcpyDeviceToHost, stream));
    cc.synchronize(stream);
    return m;
  }
};

double max_diff(const float* a, const float* b, std::size_t n) {
  std::vector<float> x(n), y(n);
  NCCLZ_CUDA_TRY(cudaMemcpy(x.data(), a, n * sizeof(float), cudaMemcpyDeviceToHost));
  NCCLZ_CUDA_TRY(cudaMemcpy(y.data(), b, n * sizeof(float), cudaMemcpyDeviceToHost));
  double m = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (std::isfinite(y[i])) m = std::max(m, std::fabs(static_cast<double>(x[i]) - y[i]));
  return m;
}

int run(int argc, char** argv) {
  std::string data;
  double rel = 1e-3;
  int runs = 5;
  std::size_t min_bytes = std::size_t{64} << 10, max_bytes = std::size_t{256} << 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw ncclz::invalid_argument("ncclz-collectives-bench: " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--data") data = next();
    else if (a == "--rel") rel = std::stod(next());
    else if (a == "--runs") runs = std::stoi(next());
    else if (a == "--min-bytes") min_bytes = std::stoull(next());
    else if (a == "--max-bytes") max_bytes = std::stoull(next());
    else throw ncclz::invalid_argument("ncclz-collectives-bench: unknown flag " + a);
  }
  ncclz::cluster_comm cc(ncclz::rank_from_environment());
  const int n = cc.nranks(), me = cc.rank();
  cudaStream_t stream;
  NCCLZ_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::vector<float> fields = data.empty() ? std::vector<float>{} : load_fields(data);
  const std::size_t max_count = max_bytes / sizeof(float);
  const std::vector<float> host_in = input_for(fields, me, max_count);
  float *d_in, *d_out, *d_ref, *d_scratch;
  NCCLZ_CUDA_TRY(cudaMalloc(&d_in, max_bytes));
  NCCLZ_CUDA_TRY(cudaMalloc(&d_out, max_bytes));
  NCCLZ_CUDA_TRY(cudaMalloc(&d_ref, max_bytes));
  NCCLZ_CUDA_TRY(cudaMalloc(&d_scratch, 16));
  NCCLZ_CUDA_TRY(cudaMemcpy(d_in, host_in.data(), max_bytes, cudaMemcpyHostToDevice));
  ncclz::Communicator<Codec> auto_comm(cc.comm());
  ncclz::communicator_config always;
  always.fallback_below_bytes = 0;
  ncclz::Communicator<Codec> forced(cc.comm(), always);
  timer t(cc, stream, runs);
  if (me == 0) {
    std::printf("# %d ranks, REL %.0e, %s, median of %d (slowest rank), NCCL %d.%d.%d\n", n, rel,
                fields.empty() ? "generated smooth field" : "real fields (tiled)", runs, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
    std::printf("%-15s %10s %10s %10s %10s %8s %8s %7s %10s %10s %s\n", "collective", "size(B)", "nccl_ms", "ncclz_ms",
                "forced_ms", "speedup", "forced_x", "ratio", "max_diff", "eb", "path");
  }
  for (const char* coll : {"allreduce", "reduce_scatter", "allgather", "broadcast"}) {
    const std::string c = coll;
    for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
      const std::size_t count = bytes / sizeof(float);
      const std::size_t per_rank = count / n;
      std::size_t out_count = count;
      auto nccl_op = [&] {
        if (c == "allreduce") cc.check(ncclAllReduce(d_in, d_ref, count, ncclFloat, ncclSum, cc.comm(), stream), "ncclAllReduce");
        if (c == "reduce_scatter") cc.check(ncclReduceScatter(d_in, d_ref, per_rank, ncclFloat, ncclSum, cc.comm(), stream), "ncclReduceScatter");
        if (c == "allgather") cc.check(ncclAllGather(d_in, d_ref, per_rank, ncclFloat, cc.comm(), stream), "ncclAllGather");
        if (c == "broadcast") cc.check(ncclBroadcast(d_in, d_ref, count, ncclFloat, 0, cc.comm(), stream), "ncclBroadcast");
      };
      auto ncclz_op = [&](ncclz::Communicator<Codec>& z) {
        return [&] {
          if (c == "allreduce") z.allreduce(d_in, d_out, count, ncclSum, rel, stream);
          if (c == "reduce_scatter") z.reduce_scatter(d_in, d_out, per_rank, ncclSum, rel, stream);
          if (c == "allgather") z.allgather(d_in, d_out, per_rank, rel, stream);
          if (c == "broadcast") z.broadcast(d_in, d_out, count, 0, rel, stream);
        };
      };
      if (c == "reduce_scatter") out_count = per_rank;
      if (c == "allgather") out_count = per_rank * n;
      const float nccl_ms = t.median_ms(nccl_op, d_scratch);
      const float auto_ms = t.median_ms(ncclz_op(auto_comm), d_scratch);
      const bool fell_back = auto_comm.last_call().fallback;
      const float forced_ms = t.median_ms(ncclz_op(forced), d_scratch);
      forced.check(stream);
      const ncclz::call_info info = forced.last_call();
      const double diff = max_diff(d_out, d_ref, out_count);
      if (me == 0) {
        std::printf("%-15s %10zu %10.3f %10.3f %10.3f %8.2f %8.2f %7.2f %10.3e %10.3e %s\n", coll, bytes, nccl_ms, auto_ms,
                    forced_ms, nccl_ms / auto_ms, nccl_ms / forced_ms, info.ratio, diff, info.error_bound,
                    fell_back ? "nccl" : "ncclz");
        std::fflush(stdout);
      }
    }
  }
  cc.synchronize(stream);
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_ref);
  cudaFree(d_scratch);
  NCCLZ_CUDA_TRY(cudaStreamDestroy(stream));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "ncclz-collectives-bench: no CUDA device\n");
    return 2;
  }
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ncclz-collectives-bench: rank %s: %s\n", std::getenv("NCCLZ_RANK") ? std::getenv("NCCLZ_RANK") : "?",
                 e.what());
    return 1;
  }
}
