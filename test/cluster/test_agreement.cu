// Ranks that disagree on a call: rank 0 passes a different bound, op, element type, coder, count,
// root, collective, schedule or quantizer than the others. Every rank must throw
// ncclz::invalid_argument with the same account of the disagreement, naming the field, within a
// second. Where every rank's next NCCL operation is the same (all but FixedRate against another
// quantizer), the communicator must still work: a correct allreduce follows each such case and
// keeps its bound. The FixedRate case comes last: there the ranks that cannot finish their next
// operation abort the communicator.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cmath>
#include <cstdint>
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
using Fixed8 = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<8>>, ncclz::EntropyCoder<ncclz::FixedLength>>;

constexpr std::size_t kCount = std::size_t{1} << 20;

ncclz::communicator_config compress_always() {
  ncclz::communicator_config c;
  c.fallback_below_bytes = 0;
  c.autotune = false;
  c.timeout = std::chrono::seconds(20);
  return c;
}

struct harness {
  ncclz::cluster_comm& cc;
  cudaStream_t stream;
  device_array<float> f_send{kCount * 8}, f_recv{kCount * 8};
  device_array<double> d_send{kCount}, d_recv{kCount};
  int failures = 0;

  /// The account of the disagreement, without the name of the call this rank made.
  static std::string account(const std::string& message) {
    const std::size_t from = message.find("ranks passed"), to = message.find("reports this)");
    return from == std::string::npos || to == std::string::npos ? message : message.substr(from, to - from);
  }

  template <class Comm>
  void expect_refused(const char* name, const char* field, Comm& comm, const std::function<void()>& call, bool usable = true) {
    std::string message;
    const auto start = std::chrono::steady_clock::now();
    try {
      call();
      comm.check(stream);
    } catch (const ncclz::invalid_argument& e) {
      message = e.what();
    } catch (const std::exception& e) {
      message = std::string("a different exception: ") + e.what();
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    bool ok = message.find(field) != std::string::npos && waited < 1.0;
    const std::string told = account(message);
    const bool same = usable ? ncclz::test::same_on_all_ranks(cc, told.data(), told.size(), stream) : true;
    ok = ok && same;
    if (usable) {  // the communicator still works: one correct allreduce, checked against its bound
      comm.allreduce(f_send.ptr, f_recv.ptr, kCount, ncclSum, 1e-3, stream);
      comm.check(stream);
      ok = ok && comm.last_call().error_bound > 0 && !comm.aborted();
    }
    if (!ok) ++failures;
    std::printf("rank %d: %-12s %s in %.3f s%s: %s\n", cc.rank(), name, ok ? "ok" : "FAILED", waited,
                same ? "" : " (messages differ across ranks)", message.c_str());
  }
};

int run() {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  ncclz::cluster_comm cc(ncclz::rank_from_environment());
  cudaStream_t stream;
  NCCLZ_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  harness h{cc, stream};
  const bool odd = cc.rank() == 0;
  std::vector<float> input(kCount * 8);
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = std::sin(static_cast<float>(i) * 1e-3f) * (cc.rank() + 1);
  NCCLZ_CUDA_TRY(cudaMemcpy(h.f_send.ptr, input.data(), input.size() * sizeof(float), cudaMemcpyHostToDevice));
  NCCLZ_CUDA_TRY(cudaMemset(h.d_send.ptr, 0, kCount * sizeof(double)));

  ncclz::Communicator<RelFL> fl(cc.comm(), compress_always());
  ncclz::Communicator<RelAd> ad(cc.comm(), compress_always());
  ncclz::Communicator<RelFL, ncclz::schedule::Ring> ring(cc.comm(), compress_always());
  // Every communicator has connected once before the cases.
  fl.allreduce(h.f_send.ptr, h.f_recv.ptr, kCount, ncclSum, 1e-3, stream);
  ad.allreduce(h.f_send.ptr, h.f_recv.ptr, kCount, ncclSum, 1e-3, stream);
  ring.allreduce(h.f_send.ptr, h.f_recv.ptr, kCount, ncclSum, 1e-3, stream);
  fl.check(stream);

  float* s = h.f_send.ptr;
  float* r = h.f_recv.ptr;
  h.expect_refused("bound", "error bounds", fl, [&] { fl.allreduce(s, r, kCount, ncclSum, odd ? 1e-2 : 1e-4, stream); });
  h.expect_refused("op", "reduction ops", fl, [&] { fl.allreduce(s, r, kCount, odd ? ncclMax : ncclSum, 1e-3, stream); });
  h.expect_refused("count", "counts", fl, [&] { fl.allreduce(s, r, odd ? kCount + 8192 : kCount, ncclSum, 1e-3, stream); });
  h.expect_refused("root", "roots", fl, [&] { fl.reduce(s, r, kCount, ncclSum, odd ? 0 : 1, 1e-3, stream); });
  h.expect_refused("element", "element types", fl, [&] {
    if (odd) fl.allreduce(h.d_send.ptr, h.d_recv.ptr, kCount, ncclSum, 1e-3, stream);
    else fl.allreduce(s, r, kCount, ncclSum, 1e-3, stream);
  });
  h.expect_refused("collective", "collectives", fl, [&] {
    if (odd) fl.allgather(s, r, kCount, 1e-3, stream);
    else fl.allreduce(s, r, kCount, ncclSum, 1e-3, stream);
  });
  h.expect_refused("coder", "entropy coders", fl, [&] {
    if (odd) ad.allreduce(s, r, kCount, ncclSum, 1e-3, stream);
    else fl.allreduce(s, r, kCount, ncclSum, 1e-3, stream);
  });
  if (cc.nranks() > 1) {
    h.expect_refused("schedule", "schedules", fl, [&] {
      if (odd) ring.allreduce(s, r, kCount, ncclSum, 1e-3, stream);
      else fl.allreduce(s, r, kCount, ncclSum, 1e-3, stream);
    });
  }
  {
    ncclz::Communicator<Fixed8> fixed8(cc.comm(), compress_always());
    fixed8.allreduce(s, r, kCount, ncclSum, 0.0, stream);
    h.expect_refused(
        "quantizer", "quantizers", fl,
        [&] {
          if (odd) fixed8.allreduce(s, r, kCount, ncclSum, 0.0, stream);
          else fl.allreduce(s, r, kCount, ncclSum, 1e-3, stream);
        },
        /*usable=*/false);
    if (fl.aborted() || fixed8.aborted()) cc.mark_aborted();
  }
  std::printf("rank %d/%d: %s\n", cc.rank(), cc.nranks(), h.failures == 0 ? "all cases ok" : "FAILED");
  NCCLZ_CUDA_TRY(cudaStreamDestroy(stream));
  return h.failures == 0 ? 0 : 1;
}

}  // namespace

int main() { return ncclz::test::rank_main("test_agreement", run); }
