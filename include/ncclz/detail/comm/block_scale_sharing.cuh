// FixedRate's scale blocks shared by all ranks of a reduction: the maxima of the input's blocks,
// merged across ranks by one ncclMax allreduce (8 B per 1024 values), and their steps. Every rank
// then quantizes with the same steps, so codes of different ranks add exactly. Blocks start
// afresh at each segment's first element, so every chunk of a segment or of a pipeline part
// (tile-aligned within its segment) holds whole blocks, also for a reduce_scatter whose recvcount
// is not a multiple of 1024.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ncclz/detail/comm/transport.cuh"
#include "ncclz/detail/comm/workspace.cuh"
#include "ncclz/detail/cuda_resources.hpp"
#include "ncclz/device/detail/block_scales.cuh"
#include "ncclz/device/detail/reduce_kernels.cuh"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/format.hpp"
#include "ncclz/schedule/partition.hpp"

namespace ncclz::detail::comm {

template <class Q>
class block_scale_sharing {
 public:
  block_scale_sharing(transport& tp, before_free_fn before_free) : tp_(tp), before_free_(std::move(before_free)) {}

  /// The maxima of `send`'s scale blocks, segment by segment, merged across ranks, and their
  /// steps. Returns the bytes this rank sent for them.
  template <class T>
  std::uint64_t share(const T* send, const std::vector<schedule::segment>& seg, cudaStream_t stream) {
    seg_ = seg;
    first_block_.clear();
    std::uint64_t blocks = 0;
    for (const schedule::segment& g : seg) {
      first_block_.push_back(blocks);
      blocks += format::scale_count(g.count);
    }
    memory_.reserve((2 * blocks + 1) * sizeof(double), before_free_);
    blocks_ = blocks;
    max_ = memory_.as<double>();
    steps_ = max_ + blocks + 1;
    NCCLZ_CUDA_TRY(cudaMemsetAsync(max_ + blocks, 0, sizeof(double), stream));
    constexpr std::uint64_t kWarps = ncclz::device::detail::kBlockMaxThreads / 32;
    const auto grid_for = [](std::uint64_t items) {
      return static_cast<unsigned>(std::clamp<std::uint64_t>(items, 1, std::uint64_t(device::detail::sm_count()) * 8));
    };
    for (std::size_t r = 0; r < seg.size(); ++r) {
      const std::uint64_t b = format::scale_count(seg[r].count);
      if (b == 0) continue;
      ncclz::device::detail::block_max_kernel<T><<<grid_for((b + kWarps - 1) / kWarps), ncclz::device::detail::kBlockMaxThreads, 0, stream>>>(
          send + seg[r].first, seg[r].count, max_ + first_block_[r], max_ + blocks);
      NCCLZ_CUDA_TRY(cudaGetLastError());
    }
    tp_.enqueue(ncclAllReduce(max_, max_, blocks + 1, ncclFloat64, ncclMax, tp_.comm(), stream), "ncclAllReduce");
    if (blocks > 0) {
      const std::uint64_t threads = ncclz::device::detail::kElementwiseThreads;
      ncclz::device::detail::block_steps_kernel<Q, T><<<grid_for((blocks + threads - 1) / threads), ncclz::device::detail::kBlockMaxThreads, 0,
                                                 stream>>>(max_, blocks, steps_);
      NCCLZ_CUDA_TRY(cudaGetLastError());
    }
    return (blocks + 1) * sizeof(double);
  }

  /// What the encoder of the chunk starting at element `first` reads the block maxima from.
  [[nodiscard]] ncclz::device::detail::block_scales at(std::uint64_t first) const { return {max_ + block_at(first), max_ + blocks_}; }
  /// The steps of the blocks from element `first` on.
  [[nodiscard]] const double* steps_at(std::uint64_t first) const { return steps_ + block_at(first); }

 private:
  /// Index of the scale block that starts at element `first` of the call's input (the first
  /// element of a segment or of a pipeline part); the end of the table if it is in none.
  std::uint64_t block_at(std::uint64_t first) const {
    for (std::size_t r = 0; r < seg_.size(); ++r) {
      const schedule::segment& g = seg_[r];
      if (first < g.first || first >= g.end()) continue;
      if ((first - g.first) % format::kScaleBlockElements != 0) {
        throw error("ncclz::Communicator: internal error: a chunk starts inside a FixedRate scale block");
      }
      return first_block_[r] + (first - g.first) / format::kScaleBlockElements;
    }
    return blocks_;
  }

  transport& tp_;
  before_free_fn before_free_;
  device_buffer memory_;
  double* max_ = nullptr;    // blocks + 1: each block's largest finite |x| over all ranks, then the largest of all
  double* steps_ = nullptr;  // blocks: their steps, for accumulate_kernel and dequantize_kernel
  std::uint64_t blocks_ = 0;
  std::vector<schedule::segment> seg_;      // the segments of the call
  std::vector<std::uint64_t> first_block_;  // index of each segment's first block
};

}  // namespace ncclz::detail::comm
