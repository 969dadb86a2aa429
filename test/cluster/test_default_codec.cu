// The short form, ncclz::Communicator<ncclz::Codec<>> (RelBound, EntropyCoder<Auto>, the default
// schedule, pipeline and configuration), on real multi-rank NCCL (scripts/emulated_cluster.sh):
// for every collective, the calls of one size class go through the autotuner's warm calls and
// interleaved probes of its three routes (NCCL's own collective, compressed with FixedLength,
// compressed with Adaptive), its decision and the calls on it. Every call's result keeps the
// bound on every element; every rank takes the same route and coder on every call; each route
// runs while probing; the decision is the one route_tuning::choose makes of the medians call_info
// reports; a re-check decides again. Then FixedRate<8> with the default coder (its codes coded by
// either coder), and the untimed meaning of Auto (autotune off: Adaptive).
//
// Every rank can compute every rank's input (a function of a seed rank 0 draws and broadcasts,
// NCCLZ_TEST_SEED reproduces it). Exit 0 when all checks pass on this rank, 1 otherwise, 77 without
// a GPU. Every rank runs every step, so ranks stay in step even after a failure.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ncclz/bootstrap.hpp"
#include "ncclz/detail/comm/route_tuning.hpp"
#include "ncclz/ncclz.cuh"
#include "codec_kernels.cuh"  // the codecs' kernels, compiled once (src/kernels/)
#include "rank_main.hpp"

namespace {

using ncclz::test::device_array;
using ncclz::test::same_on_all_ranks;
using route_tuning = ncclz::detail::comm::route_tuning;
using collective = ncclz::schedule::collective;

using Default = ncclz::Codec<>;
using Fixed8Default = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<8>>>;
static_assert(std::is_same_v<Default::coder, ncclz::EntropyCoder<ncclz::Auto>>);

// 4 MiB a rank: above the default fallback threshold (2 MiB), so the autotuner decides.
constexpr std::size_t kCount = std::size_t{1} << 20;
constexpr double kRel = 1e-3;
// 3 warm calls, 9 probes, the deciding call, and 3 calls on the decision.
constexpr int kCalls = 3 + 3 * route_tuning::kRounds + 1 + 3;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Rank r's input: a smooth field with rank-dependent phase and scale, hash noise, and a NaN and
/// an Inf on rank 1.
std::vector<float> input_of(std::uint64_t seed, int rank, std::size_t count) {
  std::vector<float> v(count);
  const double phase = static_cast<double>(splitmix64(seed + rank) % 6283) / 1000.0;
  for (std::size_t i = 0; i < count; ++i) {
    const double noise = static_cast<double>(splitmix64(seed ^ (std::uint64_t(rank) << 40) ^ i) % 1000) * 1e-4;
    v[i] = static_cast<float>((rank + 1) * 10.0 * std::sin(static_cast<double>(i) * 1e-3 + phase) + noise);
  }
  if (rank == 1 && count > 100) {
    v[7] = std::numeric_limits<float>::quiet_NaN();
    v[count / 3] = std::numeric_limits<float>::infinity();
  }
  return v;
}

struct checker {
  int rank;
  int failures = 0;
  void fail(const std::string& what) {
    ++failures;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
  }
};

/// |got - want| <= eb plus one ulp of the result; NaN and Inf as IEEE arithmetic gives them.
std::size_t violations(const float* got, const double* want, std::size_t n, double eb) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(want[i])) bad += !std::isnan(got[i]);
    else if (std::isinf(want[i])) bad += static_cast<double>(got[i]) != want[i];
    else {
      const float rounded = static_cast<float>(want[i]);
      const double ulp = std::fabs(static_cast<double>(std::nextafter(rounded, std::numeric_limits<float>::infinity())) - rounded);
      bad += !(std::fabs(static_cast<double>(got[i]) - want[i]) <= eb + ulp);
    }
  }
  return bad;
}

/// The route a call took: 0 compressed with FixedLength, 1 with Adaptive, 2 NCCL's (the order
/// of the autotuner's routes), -1 anything else.
int route_of(const ncclz::call_info& info) {
  if (info.fallback) return 2;
  if (std::strcmp(info.coder, "fixed_length") == 0) return 0;
  if (std::strcmp(info.coder, "adaptive") == 0) return 1;
  return -1;
}

/// Runs `calls` calls of collective `c` of communicator `comm` on this rank's input, each checked
/// against `want` within `eb` (where the rank gets a result), with the same route on every rank.
/// Returns the routes taken.
template <class Comm>
std::vector<int> run_calls(ncclz::cluster_comm& cc, checker& ck, cudaStream_t stream, Comm& comm, collective c,
                           const std::vector<std::vector<float>>& inputs, int calls) {
  const int n = cc.nranks(), me = cc.rank();
  const std::size_t count = inputs[0].size();  // reduce_scatter and alltoall: n blocks of `block`
  const std::size_t block = count / static_cast<std::size_t>(n);
  std::vector<double> want;
  std::size_t out_count = count;
  bool gets_result = true;
  double eb = 0;
  {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& v : inputs)
      for (const float x : v)
        if (std::isfinite(x)) lo = std::min(lo, static_cast<double>(x)), hi = std::max(hi, static_cast<double>(x));
    eb = kRel * (hi - lo);
  }
  const auto sum = [&](std::size_t first, std::size_t k) {
    std::vector<double> s(k, 0.0);
    for (const auto& v : inputs)
      for (std::size_t i = 0; i < k; ++i) s[i] += static_cast<double>(v[first + i]);
    return s;
  };
  switch (c) {
    case collective::allreduce: want = sum(0, count); break;
    case collective::reduce:
      want = sum(0, count);
      gets_result = me == 0;
      break;
    case collective::reduce_scatter:
      want = sum(static_cast<std::size_t>(me) * block, block);
      out_count = block;
      break;
    case collective::allgather:
      out_count = count * n;
      for (int r = 0; r < n; ++r) want.insert(want.end(), inputs[r].begin(), inputs[r].end());
      break;
    case collective::broadcast: want.assign(inputs[0].begin(), inputs[0].end()); break;
    case collective::alltoall:
      out_count = block * n;
      for (int p = 0; p < n; ++p) {
        const float* from = inputs[p].data() + static_cast<std::size_t>(me) * block;
        want.insert(want.end(), from, from + block);
      }
      break;
  }
  device_array<float> d_send(count), d_recv(out_count);
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(d_send.ptr, inputs[me].data(), count * sizeof(float), cudaMemcpyHostToDevice, stream));
  std::vector<float> got(out_count);
  std::vector<int> routes;
  for (int k = 0; k < calls; ++k) {
    NCCLZ_CUDA_TRY(cudaMemsetAsync(d_recv.ptr, 0xFF, out_count * sizeof(float), stream));  // NaN poison
    switch (c) {
      case collective::allreduce: comm.allreduce(d_send.ptr, d_recv.ptr, count, ncclSum, kRel, stream); break;
      case collective::reduce: comm.reduce(d_send.ptr, d_recv.ptr, count, ncclSum, 0, kRel, stream); break;
      case collective::reduce_scatter: comm.reduce_scatter(d_send.ptr, d_recv.ptr, block, ncclSum, kRel, stream); break;
      case collective::allgather: comm.allgather(d_send.ptr, d_recv.ptr, count, kRel, stream); break;
      case collective::broadcast: comm.broadcast(me == 0 ? d_send.ptr : d_recv.ptr, d_recv.ptr, count, 0, kRel, stream); break;
      case collective::alltoall: comm.alltoall(d_send.ptr, d_recv.ptr, block, kRel, stream); break;
    }
    comm.check(stream);
    const ncclz::call_info info = comm.last_call();
    const std::string what = std::string(ncclz::schedule::name(c)) + " call " + std::to_string(k) + " (" +
                             (info.fallback ? "NCCL" : info.coder) + ")";
    NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), d_recv.ptr, out_count * sizeof(float), cudaMemcpyDeviceToHost));
    if (gets_result) {
      if (const std::size_t bad = violations(got.data(), want.data(), out_count, eb))
        ck.fail(what + ": " + std::to_string(bad) + " elements outside the bound " + std::to_string(eb));
      if (!info.fallback && !(info.error_bound <= eb * (1 + 1e-9)))
        ck.fail(what + ": applied bound " + std::to_string(info.error_bound) + " > " + std::to_string(eb));
    }
    const int r = route_of(info);
    if (r < 0) ck.fail(what + ": call_info names coder '" + info.coder + "'");
    if (!same_on_all_ranks(cc, &r, sizeof r, stream)) ck.fail(what + ": ranks took different routes");
    routes.push_back(r);
  }
  return routes;
}

/// The autotuner's account after its decision: medians of all three routes, and the route taken
/// on the decision being the one they choose.
void check_decision(checker& ck, const std::string& what, const ncclz::call_info& info, int route, int decisions) {
  if (info.autotune_decisions != decisions)
    ck.fail(what + ": " + std::to_string(info.autotune_decisions) + " decisions, not " + std::to_string(decisions));
  if (!(info.autotune_fixed_length_ms > 0 && info.autotune_adaptive_ms > 0 && info.autotune_nccl_ms > 0))
    ck.fail(what + ": call_info lacks a route's probe median");
  if (info.autotune_ncclz_ms != std::min(info.autotune_fixed_length_ms, info.autotune_adaptive_ms))
    ck.fail(what + ": autotune_ncclz_ms is not the faster coder's median");
  const int chosen =
      route_tuning::choose({info.autotune_fixed_length_ms, info.autotune_adaptive_ms, info.autotune_nccl_ms}, route_tuning::kMaxRoutes);
  if (route != chosen)
    ck.fail(what + ": took route " + std::to_string(route) + ", the medians choose " + std::to_string(chosen));
}

const char* route_name(int r) { return r == 0 ? "FixedLength" : r == 1 ? "Adaptive" : r == 2 ? "NCCL" : "?"; }

int run() {
  ncclz::cluster_comm cc(ncclz::rank_from_environment());
  cudaStream_t stream;
  NCCLZ_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::uint64_t seed = ncclz::test::shared_seed(cc, stream, "test_default_codec");
  checker ck{cc.rank()};
  const int n = cc.nranks();
  std::vector<std::vector<float>> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(input_of(seed, r, kCount));

  // The short form, with nothing but the caller's communicator.
  ncclz::Communicator<Default> comm(cc.comm());
  for (const collective c : {collective::allreduce, collective::reduce_scatter, collective::reduce, collective::allgather,
                             collective::broadcast, collective::alltoall}) {
    const std::vector<int> routes = run_calls(cc, ck, stream, comm, c, inputs, kCalls);
    const std::string what = std::string("default codec ") + ncclz::schedule::name(c);
    // Warm-ups and probes run every route, in the plan's order.
    route_tuning::state plan;
    for (int k = 0; k < 3 + 3 * route_tuning::kRounds; ++k) {
      const route_tuning::step s = plan.next(3, ncclz::communicator_config{}.autotune_recheck_calls);
      if (routes[k] != s.route) {
        ck.fail(what + ": call " + std::to_string(k) + " took route " + std::to_string(routes[k]) + ", the plan's is " +
                std::to_string(s.route));
      }
    }
    for (int k = 3 + 3 * route_tuning::kRounds + 1; k < kCalls; ++k)
      if (routes[k] != routes[k - 1]) ck.fail(what + ": the route changed between re-checks");
    const ncclz::call_info& info = comm.last_call();
    check_decision(ck, what, info, routes.back(), 1);
    if (cc.rank() == 0) {
      std::printf("%-36s medians FixedLength %8.3f ms, Adaptive %8.3f ms, NCCL %8.3f ms: %s\n", what.c_str(),
                  info.autotune_fixed_length_ms, info.autotune_adaptive_ms, info.autotune_nccl_ms, route_name(routes.back()));
    }
  }

  {  // a re-check after 4 calls on the decision decides again, on every rank alike
    ncclz::communicator_config config;
    config.autotune_recheck_calls = 4;
    ncclz::Communicator<Default> again(cc.comm(), config);
    const std::vector<int> routes = run_calls(cc, ck, stream, again, collective::allreduce, inputs, 13 + 3 + 10);
    check_decision(ck, "default codec allreduce, re-checked", again.last_call(), routes.back(), 2);
  }

  {  // FixedRate<8>'s codes, with the default coder: every element within the reported bound, which
     // is nranks x the largest block's step / 2
    using Q = Fixed8Default::quantizer;
    double largest = 0;
    for (const auto& v : inputs)
      for (const float x : v)
        if (std::isfinite(x)) largest = std::max(largest, std::fabs(static_cast<double>(x)));
    const double eb = n * static_cast<double>(Q::block_step<float>(largest)) / 2;
    std::vector<double> want(kCount, 0.0);
    for (const auto& v : inputs)
      for (std::size_t i = 0; i < kCount; ++i) want[i] += static_cast<double>(v[i]);
    for (const bool autotune : {true, false}) {
      ncclz::communicator_config config;
      config.autotune = autotune;
      ncclz::Communicator<Fixed8Default> fixed(cc.comm(), config);
      device_array<float> d_send(kCount), d_recv(kCount);
      NCCLZ_CUDA_TRY(cudaMemcpy(d_send.ptr, inputs[cc.rank()].data(), kCount * sizeof(float), cudaMemcpyHostToDevice));
      std::vector<float> got(kCount);
      std::vector<int> seen;
      for (int k = 0; k < (autotune ? kCalls : 2); ++k) {
        fixed.allreduce(d_send.ptr, d_recv.ptr, kCount, ncclSum, 0.0, stream);
        fixed.check(stream);
        NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), d_recv.ptr, kCount * sizeof(float), cudaMemcpyDeviceToHost));
        const ncclz::call_info& info = fixed.last_call();
        const std::string what = std::string("fixed8 default coder allreduce") + (autotune ? "" : " (autotune off)") +
                                 " call " + std::to_string(k) + " (" + (info.fallback ? "NCCL" : info.coder) + ")";
        if (const std::size_t bad = violations(got.data(), want.data(), kCount, eb))
          ck.fail(what + ": " + std::to_string(bad) + " elements outside the bound " + std::to_string(eb));
        if (!info.fallback && info.error_bound != eb)
          ck.fail(what + ": reported bound " + std::to_string(info.error_bound) + " != " + std::to_string(eb));
        const int r = route_of(info);
        if (!same_on_all_ranks(cc, &r, sizeof r, stream)) ck.fail(what + ": ranks took different routes");
        if (!autotune && r != 1) ck.fail(what + ": without autotune the default coder codes as Adaptive");
        seen.push_back(r);
      }
      if (autotune) {
        for (const int r : {0, 1, 2})
          if (std::find(seen.begin(), seen.end(), r) == seen.end()) ck.fail(std::string("fixed8: route ") + route_name(r) + " never ran");
        check_decision(ck, "fixed8 default coder allreduce", fixed.last_call(), seen.back(), 1);
        if (cc.rank() == 0) {
          const ncclz::call_info& info = fixed.last_call();
          std::printf("%-36s medians FixedLength %8.3f ms, Adaptive %8.3f ms, NCCL %8.3f ms: %s\n", "fixed8 default codec allreduce",
                      info.autotune_fixed_length_ms, info.autotune_adaptive_ms, info.autotune_nccl_ms, route_name(seen.back()));
        }
      }
    }
  }

  {  // without autotune, and with every call compressed, the default coder codes as Adaptive
    ncclz::communicator_config config;
    config.autotune = false;
    config.fallback_below_bytes = 0;
    ncclz::Communicator<Default> untimed(cc.comm(), config);
    const std::vector<int> routes = run_calls(cc, ck, stream, untimed, collective::allreduce, inputs, 2);
    for (const int r : routes)
      if (r != 1) ck.fail(std::string("untimed default codec: ran ") + route_name(r) + ", not Adaptive");
    if (untimed.last_call().autotune_decisions != 0) ck.fail("untimed default codec: the autotuner decided");
  }

  cc.synchronize(stream);
  NCCLZ_CUDA_TRY(cudaStreamDestroy(stream));
  std::printf("rank %d/%d: %s\n", cc.rank(), cc.nranks(), ck.failures == 0 ? "ok" : "FAILED");
  return ck.failures == 0 ? 0 : 1;
}

}  // namespace

int main() { return ncclz::test::rank_main("test_default_codec", run); }
