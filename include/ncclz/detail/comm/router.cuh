// Which route a call takes: NCCL's own collective, uncompressed, or the compressed schedule.
// Below communicator_config::fallback_below_bytes, NCCL. Above it, with autotune, per collective,
// element size and power of two of the bytes: call 0 warms the compressed path (buffers,
// connections), call 1 is timed compressed, call 2 timed with NCCL, call 3 decides on the slowest
// rank's times (one 8-byte allreduce), so all ranks take the same route from then on.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <map>

#include "ncclz/communicator_config.hpp"
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
    const std::uint64_t bytes = count * sizeof(T);
    last_ = nullptr;
    if (bytes < config_.fallback_below_bytes) return nccl_route(c, bytes, nullptr, info);
    if (!config_.autotune) return route(false);
    int size_class = 0;
    while (size_class < 63 && (std::uint64_t{1} << (size_class + 1)) <= bytes) ++size_class;
    tuning& t = tuning_[(static_cast<std::uint64_t>(c) << 40) | (std::uint64_t{sizeof(T)} << 32) | static_cast<std::uint64_t>(size_class)];
    last_ = &t;
    if (!t.decided) {
      switch (t.calls++) {
        case 0: return route(false);
        case 1: return timed_route(t, 0, false, stream);
        case 2: return nccl_route(c, bytes, &t, info, stream);
        default: decide(t, stream);
      }
    }
    return t.compress ? route(false) : nccl_route(c, bytes, nullptr, info);
  }

  /// The probe times of the last call's size class, once decided (call_info's autotune fields).
  void annotate(call_info& info) const {
    if (last_ != nullptr && last_->decided) {
      info.autotune_ncclz_ms = last_->ms[0];
      info.autotune_nccl_ms = last_->ms[1];
    }
  }

 private:
  struct tuning {
    int calls = 0;
    bool decided = false, compress = true;
    float ms[2] = {0, 0};  // slowest rank's compressed and NCCL probe times
    event_handle events[4];  // start/end of both probes
  };

  route timed_route(tuning& t, int probe, bool nccl, cudaStream_t stream) {
    NCCLZ_CUDA_TRY(cudaEventRecord(t.events[2 * probe].get(), stream));
    return route(nccl, t.events[2 * probe + 1].get(), stream);
  }

  /// NCCL's own collective: fills info as a fallback (timed as the NCCL probe when `t`).
  route nccl_route(schedule::collective c, std::uint64_t bytes, tuning* t, call_info& info, cudaStream_t stream = nullptr) {
    info = call_info{};
    info.collective = schedule::name(c);
    info.schedule = "nccl";
    info.coder = "none";
    info.input_bytes = bytes;
    info.fallback = true;
    if (t == nullptr) return route(true);
    return timed_route(*t, 1, true, stream);
  }

  /// The slowest rank's probe times, by one allreduce, so that every rank takes the same route.
  void decide(tuning& t, cudaStream_t stream) {
    constexpr const char* fn = "Communicator (autotune)";
    tp_.wait(fn, stream);  // both probes have run
    NCCLZ_CUDA_TRY(cudaEventElapsedTime(&t.ms[0], t.events[0].get(), t.events[1].get()));
    NCCLZ_CUDA_TRY(cudaEventElapsedTime(&t.ms[1], t.events[2].get(), t.events[3].get()));
    d_ms_.reserve(2 * sizeof(float));
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(d_ms_.data(), t.ms, sizeof t.ms, cudaMemcpyHostToDevice, stream));
    tp_.enqueue(ncclAllReduce(d_ms_.data(), d_ms_.data(), 2, ncclFloat32, ncclMax, tp_.comm(), stream), "ncclAllReduce");
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(t.ms, d_ms_.data(), sizeof t.ms, cudaMemcpyDeviceToHost, stream));
    tp_.wait(fn, stream);
    t.compress = t.ms[0] < t.ms[1];
    t.decided = true;
  }

  transport& tp_;
  const communicator_config& config_;
  std::map<std::uint64_t, tuning> tuning_;  // per collective, element size, size class
  const tuning* last_ = nullptr;            // the last call's
  device_buffer d_ms_;
};

}  // namespace ncclz::detail::comm
