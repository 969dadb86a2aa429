// CUDA events at the phase boundaries of a compressed call (communicator_config::profile_phases),
// read back as the time of each kind of phase (Communicator::phase_times).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "ncclz/communicator_config.hpp"
#include "ncclz/detail/cuda_resources.hpp"
#include "ncclz/error.hpp"

namespace ncclz::detail::comm {

class phase_clock {
 public:
  explicit phase_clock(bool enabled) : enabled_(enabled) {}

  /// Starts a call's marks.
  void restart(cudaStream_t stream) {
    used_ = 0;
    mark("start", stream);
  }

  /// Ends the phase running since the last mark.
  void mark(const char* phase, cudaStream_t stream) {
    if (!enabled_) return;
    if (used_ == marks_.size()) marks_.push_back({event_handle{}, phase});
    marks_[used_].phase = phase;
    NCCLZ_CUDA_TRY(cudaEventRecord(marks_[used_].event.get(), stream));
    ++used_;
  }

  /// Time per kind of phase, summed over its occurrences, in the order the phases first occur.
  [[nodiscard]] std::vector<phase_time> times() const {
    std::vector<phase_time> out;
    for (std::size_t i = 1; i < used_; ++i) {
      float ms = 0;
      NCCLZ_CUDA_TRY(cudaEventElapsedTime(&ms, marks_[i - 1].event.peek(), marks_[i].event.peek()));
      auto it = std::find_if(out.begin(), out.end(), [&](const phase_time& p) { return std::strcmp(p.phase, marks_[i].phase) == 0; });
      if (it == out.end()) out.push_back({marks_[i].phase, ms});
      else it->ms += ms;
    }
    return out;
  }

 private:
  struct phase_mark {
    event_handle event;
    const char* phase;  // the phase that ends at this event
  };
  bool enabled_;
  std::vector<phase_mark> marks_;
  std::size_t used_ = 0;
};

}  // namespace ncclz::detail::comm
