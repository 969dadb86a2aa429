// Which route a call takes: NCCL's own collective, uncompressed, or the compressed schedule with
// one of the Codec's coders (coder_choice.hpp). Below communicator_config::fallback_below_bytes,
// NCCL. Above it, with autotune, per collective, element size and power of two of the bytes, the
// route the probes of route_tuning.hpp chose: a warm call of each route, interleaved probes (each
// starting once a 1-value allreduce has aligned the ranks), a decision on the medians of the
// slowest rank's times (one small allreduce), so all ranks take the same route and coder;
// probed again every config.autotune_recheck_calls calls. Without autotune, compressed with the
// coder that codes where nothing is timed (Codec::coder::id: Adaptive's for EntropyCoder<Auto>).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>

#include "ncclz/communicator_config.hpp"
#include "ncclz/detail/comm/coder_choice.hpp"
#include "ncclz/detail/comm/route_tuning.hpp"
#include "ncclz/detail/comm/transport.cuh"
#include "ncclz/detail/cuda_resources.hpp"
#include "ncclz/schedule/schedule.hpp"

namespace ncclz::detail::comm {

/// How one call goes. A call the autotuner times records its end event when this goes out of
/// scope, after the call's work is enqueued.
class route {
 public:
  route(bool to_nccl, coder_id with, cudaEvent_t end_event = nullptr, cudaStream_t on = nullptr)
      : nccl(to_nccl), coder(with), end_(end_event), stream_(on) {}
  route(const route&) = delete;
  route& operator=(const route&) = delete;
  ~route() {
    if (end_) NCCLZ_CUDA_TRY_NO_THROW(cudaEventRecord(end_, stream_));
  }
  const bool nccl;        ///< NCCL's own collective, uncompressed
  const coder_id coder;   ///< the compressed route's entropy coder

 private:
  cudaEvent_t end_;
  cudaStream_t stream_;
};

class router {
 public:
  /// `coders`: the Codec's compressed routes (coders_of<Codec>()); `untimed`: its coder where
  /// nothing is timed (Codec::coder::id).
  router(transport& tp, const communicator_config& config, coder_set coders, coder_id untimed)
      : tp_(tp), config_(config), coders_(coders), untimed_(untimed), routes_(coders.count + 1) {}

  /// The route of a call of `c` on `count` values of T. A NCCL route fills `info` as a fallback.
  template <class T>
  route route_for(schedule::collective c, std::size_t count, cudaStream_t stream, call_info& info) {
    const std::uint64_t bytes = count * sizeof(T);
    last_ = nullptr;
    if (bytes < config_.fallback_below_bytes) return nccl_route(c, bytes, info);
    if (!config_.autotune) return route(false, untimed_);
    int size_class = 0;
    while (size_class < 63 && (std::uint64_t{1} << (size_class + 1)) <= bytes) ++size_class;
    tuning& t = tuning_[(static_cast<std::uint64_t>(c) << 40) | (std::uint64_t{sizeof(T)} << 32) | static_cast<std::uint64_t>(size_class)];
    last_ = &t;
    const route_tuning::step s = t.plan.next(routes_, config_.autotune_recheck_calls);
    switch (s.what) {
      case route_tuning::kind::keep:
      case route_tuning::kind::warm: return take(s.route, c, bytes, info);
      case route_tuning::kind::probe: {
        align_ranks(stream);
        const int first = event_index(s.round, s.route);
        NCCLZ_CUDA_TRY(cudaEventRecord(t.events[first].get(), stream));
        return take(s.route, c, bytes, info, t.events[first + 1].get(), stream);
      }
      case route_tuning::kind::decide: break;
    }
    decide(t, stream);
    return take(t.plan.chosen, c, bytes, info);
  }

  /// The probe medians of the last call's size class, once decided (call_info's autotune
  /// fields): NCCL's, the fastest compressed route's, and each coder's.
  void annotate(call_info& info) const {
    if (last_ == nullptr || last_->plan.decisions == 0) return;
    info.autotune_nccl_ms = last_->median[routes_ - 1];
    info.autotune_ncclz_ms = *std::min_element(last_->median.begin(), last_->median.begin() + (routes_ - 1));
    for (int r = 0; r + 1 < routes_; ++r) {
      if (coders_.ids[r] == coder_id::fixed_length) info.autotune_fixed_length_ms = last_->median[r];
      if (coders_.ids[r] == coder_id::adaptive) info.autotune_adaptive_ms = last_->median[r];
    }
    info.autotune_decisions = last_->plan.decisions;
  }

 private:
  static constexpr int kRounds = route_tuning::kRounds;
  static constexpr int kMaxRoutes = route_tuning::kMaxRoutes;
  struct tuning {
    route_tuning::state plan;
    std::array<float, kMaxRoutes> median{};         // slowest rank's probe medians, per route
    event_handle events[2 * kMaxRoutes * kRounds];  // per round, per route: start, end
  };

  static constexpr int event_index(int round, int r) { return (round * kMaxRoutes + r) * 2; }

  /// Route `r` (NCCL's the last), timed up to `end_event` where given.
  route take(int r, schedule::collective c, std::uint64_t bytes, call_info& info, cudaEvent_t end_event = nullptr,
             cudaStream_t stream = nullptr) {
    if (r == routes_ - 1) {
      nccl_route(c, bytes, info);
      return route(true, untimed_, end_event, stream);
    }
    return route(false, coders_.ids[r], end_event, stream);
  }

  /// NCCL's own collective: fills info as a fallback.
  route nccl_route(schedule::collective c, std::uint64_t bytes, call_info& info) {
    info = call_info{};
    info.collective = schedule::name(c);
    info.schedule = "nccl";
    info.coder = "none";
    info.input_bytes = bytes;
    info.fallback = true;
    return route(true, untimed_);
  }

  /// One 1-value allreduce ahead of a probe's start event, so that the probe starts when the
  /// last rank has come: a rooted collective's peers would otherwise time their wait for it.
  void align_ranks(cudaStream_t stream) {
    d_ms_.reserve(sizeof(float) * kMaxRoutes * kRounds);
    tp_.enqueue(ncclAllReduce(d_ms_.data(), d_ms_.data(), 1, ncclFloat32, ncclMax, tp_.comm(), stream), "ncclAllReduce");
  }

  /// The slowest rank's probe times, by one allreduce, so that every rank takes the same route.
  void decide(tuning& t, cudaStream_t stream) {
    constexpr const char* fn = "Communicator (autotune)";
    tp_.wait(fn, stream);  // every probe has run
    float ms[kMaxRoutes * kRounds];  // per route, per round
    const int n = routes_ * kRounds;
    for (int r = 0; r < routes_; ++r) {
      for (int round = 0; round < kRounds; ++round) {
        const int first = event_index(round, r);
        NCCLZ_CUDA_TRY(cudaEventElapsedTime(&ms[r * kRounds + round], t.events[first].get(), t.events[first + 1].get()));
      }
    }
    d_ms_.reserve(sizeof(float) * kMaxRoutes * kRounds);
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(d_ms_.data(), ms, sizeof(float) * n, cudaMemcpyHostToDevice, stream));
    tp_.enqueue(ncclAllReduce(d_ms_.data(), d_ms_.data(), n, ncclFloat32, ncclMax, tp_.comm(), stream), "ncclAllReduce");
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(ms, d_ms_.data(), sizeof(float) * n, cudaMemcpyDeviceToHost, stream));
    tp_.wait(fn, stream);
    t.median = route_tuning::medians(ms, routes_);
    t.plan.decided(route_tuning::choose(t.median, routes_));
  }

  transport& tp_;
  const communicator_config& config_;
  const coder_set coders_;
  const coder_id untimed_;
  const int routes_;                        // compressed routes, then NCCL's
  std::map<std::uint64_t, tuning> tuning_;  // per collective, element size, size class
  const tuning* last_ = nullptr;            // the last call's
  device_buffer d_ms_;
};

}  // namespace ncclz::detail::comm
