// Smoke test of real multi-rank NCCL: one process per rank, started by scripts/emulated_cluster.sh
// (all ranks on one GPU, sockets on loopback; docs/benchmarks.md, "Hardware and method") or by
// mpirun/srun on a real cluster. It checks that the bootstrap (ncclz/bootstrap.hpp) and the transport work before
// any ncclz collective is blamed:
//   - ncclAllReduce (float, sum) of several sizes, out of place and in place, every element checked
//     against the sum of all ranks' inputs;
//   - a ring of ncclSend/ncclRecv in one group, every element checked;
//   - the time of the 16 Mi-element allreduce (CUDA events) with algbw and busbw (2(n-1)/n).
//
// Inputs are fresh on every run: rank 0 draws a seed (or takes NCCLZ_TEST_SEED) and broadcasts it;
// element i of rank r's input is a hash of (seed, r, i), so every rank can compute every other
// rank's input and the exact reference. The values are multiples of 2^-12 small enough that any
// summation order is exact in float, so results are compared bit for bit. Outputs are poisoned
// with NaN before each collective.
//
// Exit status: 0 when every check passed on every rank, 1 on any mismatch or error, 77 (meson's
// "skipped") when there is no CUDA device. Every rank runs every step even after a mismatch, so
// the ranks stay in step and all report.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "ncclz/bootstrap.hpp"
#include "ncclz/error.hpp"
#include "rank_main.hpp"

namespace {

constexpr std::uint64_t kRingSalt = 0x9e3779b97f4a7c15ull;  // ring data differ from allreduce data

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Element i of rank r's input: k * 2^-12 with k an integer in [-K, K], K = 2^23 / nranks - 1, so
// every partial sum of up to nranks such values is a multiple of 2^-12 below 2^11 in magnitude:
// exact in float whatever order NCCL adds in.
struct input_generator {
  std::uint64_t seed;
  std::int64_t k_max;

  input_generator(std::uint64_t s, int nranks) : seed(s), k_max((std::int64_t{1} << 23) / nranks - 1) {}

  [[nodiscard]] float operator()(int rank, std::size_t i) const {
    const std::uint64_t h = splitmix64(seed ^ splitmix64((std::uint64_t(rank) << 48) ^ std::uint64_t(i)));
    const std::int64_t k = static_cast<std::int64_t>(h % std::uint64_t(2 * k_max + 1)) - k_max;
    return static_cast<float>(k) * (1.0f / 4096.0f);
  }
};

// Device memory owned for the scope.
struct device_buffer {
  void* ptr = nullptr;
  explicit device_buffer(std::size_t bytes) { NCCLZ_CUDA_TRY(cudaMalloc(&ptr, bytes)); }
  ~device_buffer() { NCCLZ_CUDA_TRY_NO_THROW(cudaFree(ptr)); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  [[nodiscard]] float* f() const { return static_cast<float*>(ptr); }
};

struct event_pair {
  cudaEvent_t start = nullptr, stop = nullptr;
  event_pair() {
    NCCLZ_CUDA_TRY(cudaEventCreate(&start));
    NCCLZ_CUDA_TRY(cudaEventCreate(&stop));
  }
  ~event_pair() {
    NCCLZ_CUDA_TRY_NO_THROW(cudaEventDestroy(start));
    NCCLZ_CUDA_TRY_NO_THROW(cudaEventDestroy(stop));
  }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;
};

struct stream_holder {
  cudaStream_t s = nullptr;
  stream_holder() { NCCLZ_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~stream_holder() { NCCLZ_CUDA_TRY_NO_THROW(cudaStreamDestroy(s)); }
  stream_holder(const stream_holder&) = delete;
  stream_holder& operator=(const stream_holder&) = delete;
};

// Compares `got` with `want` bit for bit (NaN poison never equals); prints the first few
// mismatches; returns their count.
std::size_t compare(const char* what, int rank, const std::vector<float>& got, const std::vector<float>& want) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!(got[i] == want[i])) {
      if (bad < 5) {
        std::fprintf(stderr, "rank %d: %s: element %zu is %.9g, expected %.9g\n", rank, what, i,
                     static_cast<double>(got[i]), static_cast<double>(want[i]));
      }
      ++bad;
    }
  }
  if (bad != 0) std::fprintf(stderr, "rank %d: %s: %zu of %zu elements wrong\n", rank, what, bad, want.size());
  return bad;
}

std::uint64_t agree_on_seed(ncclz::cluster_comm& cc, cudaStream_t stream) {
  std::uint64_t seed = 0;
  if (cc.rank() == 0) {
    if (const char* s = std::getenv("NCCLZ_TEST_SEED")) {
      seed = std::strtoull(s, nullptr, 0);
    } else {
      std::random_device rd;
      seed = (std::uint64_t{rd()} << 32) ^ rd();
    }
  }
  device_buffer d(sizeof seed);
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(d.ptr, &seed, sizeof seed, cudaMemcpyHostToDevice, stream));
  cc.check(ncclBroadcast(d.ptr, d.ptr, 1, ncclUint64, 0, cc.comm(), stream), "ncclBroadcast(seed)");
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(&seed, d.ptr, sizeof seed, cudaMemcpyDeviceToHost, stream));
  cc.synchronize(stream);
  return seed;
}

// One allreduce of `count` elements, checked. In place when `in_place`.
std::size_t check_allreduce(ncclz::cluster_comm& cc, cudaStream_t stream, const input_generator& gen,
                            std::size_t count, bool in_place) {
  const int rank = cc.rank();
  const int nranks = cc.nranks();
  std::vector<float> mine(count), want(count), got(count);
  for (std::size_t i = 0; i < count; ++i) {
    double sum = 0.0;
    for (int r = 0; r < nranks; ++r) {
      const float v = gen(r, i);
      if (r == rank) mine[i] = v;
      sum += v;
    }
    want[i] = static_cast<float>(sum);  // exact: see input_generator
  }
  const std::size_t bytes = count * sizeof(float);
  device_buffer send(bytes);
  device_buffer recv_storage(in_place ? 1 : bytes);
  float* recv = in_place ? send.f() : recv_storage.f();
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(send.ptr, mine.data(), bytes, cudaMemcpyHostToDevice, stream));
  if (!in_place) NCCLZ_CUDA_TRY(cudaMemsetAsync(recv, 0xff, bytes, stream));  // NaN poison
  cc.check(ncclAllReduce(send.ptr, recv, count, ncclFloat, ncclSum, cc.comm(), stream), "ncclAllReduce");
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(got.data(), recv, bytes, cudaMemcpyDeviceToHost, stream));
  cc.synchronize(stream);
  const std::string what =
      "allreduce " + std::to_string(count) + " floats " + (in_place ? "in place" : "out of place");
  return compare(what.c_str(), rank, got, want);
}

// Each rank sends its data to rank + 1 and receives from rank - 1, in one group; checked.
std::size_t check_ring(ncclz::cluster_comm& cc, cudaStream_t stream, const input_generator& gen, std::size_t count) {
  const int rank = cc.rank();
  const int nranks = cc.nranks();
  const int next = (rank + 1) % nranks;
  const int prev = (rank + nranks - 1) % nranks;
  std::vector<float> mine(count), want(count), got(count);
  for (std::size_t i = 0; i < count; ++i) {
    mine[i] = gen(rank, i);
    want[i] = gen(prev, i);
  }
  const std::size_t bytes = count * sizeof(float);
  device_buffer send(bytes), recv(bytes);
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(send.ptr, mine.data(), bytes, cudaMemcpyHostToDevice, stream));
  NCCLZ_CUDA_TRY(cudaMemsetAsync(recv.ptr, 0xff, bytes, stream));
  NCCLZ_NCCL_TRY(ncclGroupStart());
  cc.check(ncclSend(send.ptr, count, ncclFloat, next, cc.comm(), stream), "ncclSend");
  cc.check(ncclRecv(recv.ptr, count, ncclFloat, prev, cc.comm(), stream), "ncclRecv");
  cc.check(ncclGroupEnd(), "ncclGroupEnd (ring of ncclSend/ncclRecv)");
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(got.data(), recv.ptr, bytes, cudaMemcpyDeviceToHost, stream));
  cc.synchronize(stream);
  const std::string what = "ring send/recv " + std::to_string(count) + " floats from rank " + std::to_string(prev);
  return compare(what.c_str(), rank, got, want);
}

// Times `iterations` back-to-back allreduces of `count` floats after `warmup` untimed ones, then
// checks the last result.
std::size_t time_allreduce(ncclz::cluster_comm& cc, cudaStream_t stream, const input_generator& gen,
                           std::size_t count, int warmup, int iterations) {
  const int rank = cc.rank();
  const int nranks = cc.nranks();
  std::vector<float> mine(count), want(count), got(count);
  for (std::size_t i = 0; i < count; ++i) {
    double sum = 0.0;
    for (int r = 0; r < nranks; ++r) {
      const float v = gen(r, i);
      if (r == rank) mine[i] = v;
      sum += v;
    }
    want[i] = static_cast<float>(sum);
  }
  const std::size_t bytes = count * sizeof(float);
  device_buffer send(bytes), recv(bytes);
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(send.ptr, mine.data(), bytes, cudaMemcpyHostToDevice, stream));
  for (int i = 0; i < warmup; ++i) {
    cc.check(ncclAllReduce(send.ptr, recv.ptr, count, ncclFloat, ncclSum, cc.comm(), stream), "ncclAllReduce (warm-up)");
  }
  cc.synchronize(stream);
  NCCLZ_CUDA_TRY(cudaMemsetAsync(recv.ptr, 0xff, bytes, stream));
  event_pair ev;
  NCCLZ_CUDA_TRY(cudaEventRecord(ev.start, stream));
  for (int i = 0; i < iterations; ++i) {
    cc.check(ncclAllReduce(send.ptr, recv.ptr, count, ncclFloat, ncclSum, cc.comm(), stream), "ncclAllReduce (timed)");
  }
  NCCLZ_CUDA_TRY(cudaEventRecord(ev.stop, stream));
  cc.synchronize(stream);
  float ms = 0.0f;
  NCCLZ_CUDA_TRY(cudaEventElapsedTime(&ms, ev.start, ev.stop));
  const double seconds = static_cast<double>(ms) / 1e3 / iterations;
  const double algbw = static_cast<double>(bytes) / seconds / 1e9;
  const double busbw = algbw * 2.0 * (nranks - 1) / nranks;
  std::printf("rank %d/%d: allreduce float sum %zu elements (%.0f MiB): avg %.3f ms over %d (after %d warm-up), "
              "algbw %.2f GB/s, busbw %.2f GB/s\n",
              rank, nranks, count, static_cast<double>(bytes) / (1 << 20), seconds * 1e3, iterations, warmup, algbw,
              busbw);
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(got.data(), recv.ptr, bytes, cudaMemcpyDeviceToHost, stream));
  cc.synchronize(stream);
  const std::string what = "timed allreduce " + std::to_string(count) + " floats";
  return compare(what.c_str(), rank, got, want);
}

int run() {
  ncclz::cluster_comm cc(ncclz::rank_from_environment());
  const int rank = cc.rank();
  const int nranks = cc.nranks();
  stream_holder stream;

  if (rank == 0) {
    int version = 0;
    NCCLZ_NCCL_TRY(ncclGetVersion(&version));
    cudaDeviceProp prop{};
    NCCLZ_CUDA_TRY(cudaGetDeviceProperties(&prop, cc.device()));
    const char* mps = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
    const char* net = std::getenv("NCCL_NET");
    const char* threads = std::getenv("NCCL_SOCKET_NTHREADS");
    const char* socks = std::getenv("NCCL_NSOCKS_PERTHREAD");
    std::printf("nccl_smoke: %d rank(s), NCCL %d.%d.%d, device %d (%s), MPS %s, NCCL_NET=%s, "
                "NCCL_SOCKET_NTHREADS=%s, NCCL_NSOCKS_PERTHREAD=%s\n",
                nranks, version / 10000, (version / 100) % 100, version % 100, cc.device(), prop.name,
                mps != nullptr ? mps : "off", net != nullptr ? net : "(default)",
                threads != nullptr ? threads : "(default)", socks != nullptr ? socks : "(default)");
  }

  const std::uint64_t seed = agree_on_seed(cc, stream.s);
  if (rank == 0) std::printf("nccl_smoke: seed 0x%016" PRIx64 " (rerun with NCCLZ_TEST_SEED=0x%016" PRIx64 ")\n", seed, seed);
  const input_generator gen(seed, nranks);
  const input_generator ring_gen(seed ^ kRingSalt, nranks);

  std::size_t bad = 0;
  for (const std::size_t count : {std::size_t{1} << 10, std::size_t{1000003}, std::size_t{1} << 20, std::size_t{1} << 24}) {
    bad += check_allreduce(cc, stream.s, gen, count, /*in_place=*/false);
  }
  bad += check_allreduce(cc, stream.s, gen, std::size_t{1} << 20, /*in_place=*/true);
  bad += check_ring(cc, stream.s, ring_gen, std::size_t{1} << 10);
  bad += check_ring(cc, stream.s, ring_gen, std::size_t{1} << 22);
  bad += time_allreduce(cc, stream.s, gen, std::size_t{1} << 24, /*warmup=*/2, /*iterations=*/10);

  // Every rank learns whether any rank failed, so rank 0's terminal tells the whole story.
  device_buffer flag(sizeof(int));
  int failed = bad != 0 ? 1 : 0;
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(flag.ptr, &failed, sizeof failed, cudaMemcpyHostToDevice, stream.s));
  cc.check(ncclAllReduce(flag.ptr, flag.ptr, 1, ncclInt32, ncclSum, cc.comm(), stream.s), "ncclAllReduce(failures)");
  int failed_ranks = 0;
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(&failed_ranks, flag.ptr, sizeof failed_ranks, cudaMemcpyDeviceToHost, stream.s));
  cc.synchronize(stream.s);

  if (bad == 0) {
    std::printf("rank %d/%d ok\n", rank, nranks);
  } else {
    std::printf("rank %d/%d FAILED: %zu wrong elements\n", rank, nranks, bad);
  }
  if (rank == 0) {
    if (failed_ranks == 0) {
      std::printf("nccl_smoke: all %d rank(s) ok\n", nranks);
    } else {
      std::printf("nccl_smoke: FAILED on %d of %d rank(s)\n", failed_ranks, nranks);
    }
  }
  std::fflush(stdout);
  return bad == 0 && failed_ranks == 0 ? 0 : 1;
}

}  // namespace

int main() { return ncclz::test::rank_main("nccl_smoke", run); }
