// A chunk corrupted in flight: the last rank flips one bit in the middle of each chunk it codes
// (communicator_config::flip_bit_in_chunks_of_rank), in an allgather and in a broadcast it is
// the root of. Under tile checksums (the default) check() must throw format_error on every rank,
// with the same message, naming the checksum; then a communicator without the fault, on the same
// NCCL communicator, must still give every rank the others' values within the bound.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <ncclz/bootstrap.hpp>
#include <ncclz/ncclz.cuh>
#include "codec_kernels.cuh"  // the codecs' kernels, compiled once (src/kernels/)

#include "rank_main.hpp"

namespace {

using ncclz::test::device_array;
using RelFL = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using RelAd = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Adaptive>>;

constexpr std::size_t kCount = std::size_t{1} << 20;
constexpr double kBound = 1e-3;

ncclz::communicator_config compress_always(int faulty) {
  ncclz::communicator_config c;
  c.fallback_below_bytes = 0;
  c.autotune = false;
  c.timeout = std::chrono::seconds(30);
  c.flip_bit_in_chunks_of_rank = faulty;
  return c;
}

/// Rank r's input: a smooth field of its own.
std::vector<float> input_of(int r) {
  std::vector<float> v(kCount);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i) * 1e-3f + static_cast<float>(r)) * (r + 1);
  return v;
}

/// One collective through a communicator whose last rank corrupts its chunks: every rank must get
/// the same format_error from check(), naming the checksum.
template <class Codec>
bool corrupted_call_fails_everywhere(ncclz::cluster_comm& cc, const char* name, cudaStream_t stream,
                                     const std::function<void(ncclz::Communicator<Codec>&)>& call) {
  std::string message;
  {
    ncclz::Communicator<Codec> comm(cc.comm(), compress_always(cc.nranks() - 1));
    try {
      call(comm);
      comm.check(stream);
    } catch (const ncclz::format_error& e) {
      message = e.what();
    } catch (const std::exception& e) {
      message = std::string("a different exception: ") + e.what();
    }
    if (comm.aborted()) cc.mark_aborted();
  }
  const bool same = ncclz::test::same_on_all_ranks(cc, message.data(), message.size(), stream);
  const bool ok = message.find("checksum") != std::string::npos && same;
  std::printf("rank %d: %-22s %s%s: %s\n", cc.rank(), name, ok ? "ok" : "FAILED", same ? "" : " (messages differ across ranks)",
              message.empty() ? "no error" : message.c_str());
  return ok;
}

int run() {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  ncclz::cluster_comm cc(ncclz::rank_from_environment());
  cudaStream_t stream;
  NCCLZ_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int n = cc.nranks(), faulty = n - 1;
  const std::vector<float> mine = input_of(cc.rank());
  device_array<float> send(kCount), recv(kCount * static_cast<std::size_t>(n));
  NCCLZ_CUDA_TRY(cudaMemcpy(send.ptr, mine.data(), kCount * sizeof(float), cudaMemcpyHostToDevice));
  int failures = 0;

  failures += !corrupted_call_fails_everywhere<RelFL>(cc, "allgather fixed_length", stream, [&](auto& comm) {
    comm.allgather(send.ptr, recv.ptr, kCount, kBound, stream);
  });
  failures += !corrupted_call_fails_everywhere<RelAd>(cc, "allgather adaptive", stream, [&](auto& comm) {
    comm.allgather(send.ptr, recv.ptr, kCount, kBound, stream);
  });
  failures += !corrupted_call_fails_everywhere<RelFL>(cc, "broadcast", stream, [&](auto& comm) {
    comm.broadcast(send.ptr, recv.ptr, kCount, faulty, kBound, stream);
  });

  // The same NCCL communicator, without the fault: every rank's values, within the bound.
  if (!cc.aborted()) {
    ncclz::Communicator<RelFL> comm(cc.comm(), compress_always(-1));
    comm.allgather(send.ptr, recv.ptr, kCount, kBound, stream);
    comm.check(stream);
    std::vector<float> got(kCount * static_cast<std::size_t>(n));
    NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), recv.ptr, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    const double eb = comm.last_call().error_bound;
    std::size_t bad = 0;
    for (int r = 0; r < n; ++r) {
      const std::vector<float> theirs = input_of(r);
      for (std::size_t i = 0; i < kCount; ++i) bad += !(std::fabs(got[r * kCount + i] - theirs[i]) <= eb);
    }
    const bool ok = bad == 0 && eb > 0;
    failures += !ok;
    std::printf("rank %d: %-22s %s (%zu values out of the bound %.3g)\n", cc.rank(), "clean allgather after", ok ? "ok" : "FAILED",
                bad, eb);
  } else {
    ++failures;
    std::printf("rank %d: the communicator was aborted\n", cc.rank());
  }
  std::printf("rank %d/%d: %s\n", cc.rank(), n, failures == 0 ? "all cases ok" : "FAILED");
  NCCLZ_CUDA_TRY(cudaStreamDestroy(stream));
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main() { return ncclz::test::rank_main("test_corruption", run); }
