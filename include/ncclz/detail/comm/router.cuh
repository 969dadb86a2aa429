// Which route a call takes: NCCL's own collective, uncompressed, or the compressed schedule.
// Below communicator_config::fallback_below_bytes, NCCL. Above it, with autotune, per collective,
// element size and power of two of the bytes, the route the probes of route_tuning.hpp chose: a
// warm call of each route, interleaved probes, a decision on the medians of the slowest rank's
// times (one small allreduce), so all ranks take the same route; probed again every
// config.autotune_recheck_calls calls.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>

#include "ncclz/communicator_config.hpp"
#include "ncclz/detail/comm/route_tuning.hpp"
#include "ncclz/detail/comm/transport.cuh"
#include "ncclz/detail/cuda_resources.hpp"
#include "ncclz/schedule/schedule.hpp"

namespace ncclz::detail::comm {

/// How one call goes. A call the autotuner times records its end event when this goes out of
/// scope, after the call's work is enqueued.
class route {
 public:
  explicit route(bool to_nccl, cudaEvent_t end_event = nullptr, cudaStream_t on = nullptr)
      : nccl(to_nccl), end_(end_event), stream_(on) {}
  route(const route&) = delete;
  route& operator=(const route&) = delete;
  ~route() {
    if (end_) NCCLZ_CUDA_TRY_NO_THROW(cudaEventRecord(end_, stream_));
  }
  const bool nccl;  ///< NCCL's own collective, uncompressed

 private:
  cudaEvent_t end_;
  cudaStream_t stream_;
};

class router {
 public:
  router(transport& tp, const communicator_config& config) : tp_(tp), config_(config) {}

  /// The route of a call of `c` on `count` values of T. A NCCL route fills `info` as a fallback.
  template <class T>
  route route_for(schedule::collective c, std::size_t count, cudaStream_t stream, call_info& info) {
    using step = route_tuning::step;
    const std::uint64_t bytes = count * sizeof(T);
    last_ = nullptr;
    if (bytes < config_.fallback_below_bytes) return nccl_route(c, bytes, info);
    if (!config_.autotune) return route(false);
    int size_class = 0;
    while (size_class < 63 && (std::uint64_t{1} << (size_class + 1)) <= bytes) ++size_class;
    tuning& t = tuning_[(static_cast<std::uint64_t>(c) << 40) | (std::uint64_t{sizeof(T)} << 32) | static_cast<std::uint64_t>(size_class)];
    last_ = &t;
    if (!t.probing) {
      if (t.decisions > 0 && t.calls < std::max<std::uint64_t>(config_.autotune_recheck_calls, 1)) {
        ++t.calls;
        return t.compress ? route(false) : nccl_route(c, bytes, info);
      }
      t.probing = true;  // the first call of the class, or time to check the decision again
      t.calls = 0;
    }
    const std::uint64_t k = t.calls++;
    const bool rechecking = t.decisions > 0;
    switch (route_tuning::step_of(k, rechecking)) {
      case step::warm_compressed: return route(false);
      case step::warm_nccl: return nccl_route(c, bytes, info);
      case step::probe_compressed: return timed_route(t, route_tuning::round_of(k, rechecking), 0, stream);
      case step::probe_nccl: {
        nccl_route(c, bytes, info);
        return timed_route(t, route_tuning::round_of(k, rechecking), 1, stream);
      }
      case step::decide: break;
    }
    decide(t, stream);
    t.probing = false;
    t.calls = 1;  // this call is the first of the decision
    return t.compress ? route(false) : nccl_route(c, bytes, info);
  }

  /// The probe medians of the last call's size class, once decided (call_info's autotune fields).
  void annotate(call_info& info) const {
    if (last_ != nullptr && last_->decisions > 0) {
      info.autotune_ncclz_ms = last_->median[0];
      info.autotune_nccl_ms = last_->median[1];
      info.autotune_decisions = last_->decisions;
    }
  }

 private:
  static constexpr int kRounds = route_tuning::kRounds;
  struct tuning {
    std::uint64_t calls = 0;  // since probing started, or since the last decision
    int decisions = 0;
    bool probing = false, compress = true;
    float median[2] = {0, 0};  // slowest rank's compressed and NCCL probe medians
    event_handle events[2 * 2 * kRounds];  // per round, per route: start, end
  };

  route timed_route(tuning& t, int round, int which, cudaStream_t stream) {
    const int first = (2 * round + which) * 2;
    NCCLZ_CUDA_TRY(cudaEventRecord(t.events[first].get(), stream));
    return route(which == 1, t.events[first + 1].get(), stream);
  }

  /// NCCL's own collective: fills info as a fallback.
  route nccl_route(schedule::collective c, std::uint64_t bytes, call_info& info) {
    info = call_info{};
    info.collective = schedule::name(c);
    info.schedule = "nccl";
    info.coder = "none";
    info.input_bytes = bytes;
    info.fallback = true;
    return route(true);
  }

  /// The slowest rank's probe times, by one allreduce, so that every rank takes the same route.
  void decide(tuning& t, cudaStream_t stream) {
    constexpr const char* fn = "Communicator (autotune)";
    tp_.wait(fn, stream);  // every probe has run
    float ms[2 * kRounds];
    for (int round = 0; round < kRounds; ++round) {
      for (int which = 0; which < 2; ++which) {
        const int first = (2 * round + which) * 2;
        NCCLZ_CUDA_TRY(cudaEventElapsedTime(&ms[which * kRounds + round], t.events[first].get(), t.events[first + 1].get()));
      }
    }
    d_ms_.reserve(sizeof ms);
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(d_ms_.data(), ms, sizeof ms, cudaMemcpyHostToDevice, stream));
    tp_.enqueue(ncclAllReduce(d_ms_.data(), d_ms_.data(), 2 * kRounds, ncclFloat32, ncclMax, tp_.comm(), stream), "ncclAllReduce");
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(ms, d_ms_.data(), sizeof ms, cudaMemcpyDeviceToHost, stream));
    tp_.wait(fn, stream);
    for (int which = 0; which < 2; ++which) {
      std::array<float, kRounds> v;
      for (int round = 0; round < kRounds; ++round) v[round] = ms[which * kRounds + round];
      t.median[which] = route_tuning::median(v);
    }
    t.compress = route_tuning::compress(t.median[0], t.median[1]);
    ++t.decisions;
  }

  transport& tp_;
  const communicator_config& config_;
  std::map<std::uint64_t, tuning> tuning_;  // per collective, element size, size class
  const tuning* last_ = nullptr;            // the last call's
  device_buffer d_ms_;
};

}  // namespace ncclz::detail::comm
