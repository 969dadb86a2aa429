// The reduction engine of the compressed reductions: how a reduction's codes are made (the bound
// each rank quantizes with, so that a sum of n codes stays a code within the bound), and the
// device steps on codes that the schedules compose: code a chunk, decode one into codes, add or
// min/max codes exactly, requantize an owner's sum, dequantize. With a blockwise quantizer
// (FixedRate) the steps are the blocks', shared by all ranks (block_scale_sharing).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/detail/comm/block_scale_sharing.cuh"
#include "ncclz/detail/comm/context.cuh"
#include "ncclz/detail/comm/workspace.cuh"
#include "ncclz/detail/sum_bound.hpp"
#include "ncclz/device/detail/reduce_kernels.cuh"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/schedule/partition.hpp"

namespace ncclz::detail::comm {

/// How the codes of one reduction are made: a sum of n codes must stay a code and within the
/// bound, so each rank quantizes with bound / n and codes below 2^30 / n; min and max of codes
/// are exact, so they keep the whole bound and code range.
struct code_reduction {
  ncclRedOp_t op;
  double code_bound;          ///< the bound each rank quantizes with
  std::uint32_t limit_ranks;  ///< divides the code limit
  int bound_scale;            ///< result bound = code bound x this
  double bound;               ///< what the caller asked for
  std::uint32_t coarsen = 1;  ///< owners requantize their reduced codes at this many steps (sum_bound.hpp)
  /// The bound the owners' chunks are coded with.
  [[nodiscard]] double result_code_bound() const { return code_bound * coarsen; }
};

template <class Codec>
inline constexpr bool is_lossless_v = Codec::quantizer::id == quantizer_id::lossless;

/// The code_reduction of `op` on `nranks` ranks; `moves_result`: the reduced segments are coded
/// again and sent on (allreduce, reduce), which lets a sum split its bound (sum_bound.hpp).
template <class Codec>
code_reduction reduction_for(const char* fn, ncclRedOp_t op, double bound, int nranks, bool moves_result, bool split_sum_bound) {
  const auto n = static_cast<std::uint32_t>(nranks);
  switch (op) {
    case ncclSum: {
      constexpr bool kCanCoarsen = !is_blockwise_v<typename Codec::quantizer> && !is_lossless_v<Codec>;
      const sum_bound_split split = detail::split_sum_bound(bound, n, kCanCoarsen && moves_result && split_sum_bound);
      return {op, split.code_bound, n, static_cast<int>(split.units), bound, split.coarsen};
    }
    case ncclMin:
    case ncclMax: return {op, bound, 1u, 1, bound};
    default:
      throw_invalid(fn, "op " + std::to_string(static_cast<int>(op)) +
                            " is not supported: ncclSum, ncclMin and ncclMax are (for ncclAvg use ncclSum and "
                            "scale by 1/nranks; for ncclProd, NCCL's own collective)");
  }
}

[[nodiscard]] inline std::uint64_t largest_segment(const std::vector<schedule::segment>& seg) {
  std::uint64_t largest = 0;
  for (const auto& g : seg) largest = std::max(largest, g.count);
  return largest;
}

/// Grid of the element-wise kernels for `count` elements.
[[nodiscard]] inline unsigned elementwise_grid(std::size_t count) {
  const std::size_t blocks = (count + ncclz::device::detail::kElementwiseThreads - 1) / ncclz::device::detail::kElementwiseThreads;
  return static_cast<unsigned>(std::clamp<std::size_t>(blocks, 1, std::size_t(device::detail::sm_count()) * 8));
}

template <class Codec>
class code_reducer {
  using Q = typename Codec::quantizer;

 public:
  explicit code_reducer(context<Codec>& ctx) : buffers(ctx.settler()), ctx_(ctx), scales_(ctx.tp, ctx.settler()) {}

  reduce_buffers buffers;
  [[nodiscard]] std::size_t held_bytes() const noexcept { return buffers.bytes(); }

  /// Blockwise quantizers: the steps every rank shares for the segments `seg` of `send` (after
  /// the call's header is settled: this is the call's second NCCL operation).
  template <class T>
  void share_block_scales(const char* fn, const T* send, const std::vector<schedule::segment>& seg, cudaStream_t stream) {
    if constexpr (is_blockwise_v<Q>) {
      ctx_.settle_header(fn);
      ctx_.range_bytes_sent += scales_.template share<T>(send, seg, stream);
    }
  }

  /// Quantizes `count` values of `in` (elements from `first` of the call's input) into codes
  /// and outlier values; also writes the step (buffers.step), even for no values.
  template <class T>
  void quantize(const T* in, std::size_t count, std::int32_t* codes, T* values, const device::detail::range_keys* range,
                const code_reduction& red, std::uint64_t first, cudaStream_t stream) {
    ncclz::device::detail::quantize_kernel<Q, T><<<elementwise_grid(count), ncclz::device::detail::kElementwiseThreads, 0, stream>>>(
        in, count, codes, values, range, red.code_bound, red.limit_ranks, buffers.step, scales_at(first));
    NCCLZ_CUDA_TRY(cudaGetLastError());
  }

  /// Encodes a reduction's chunk into `out` from `source` with the call's coder, with the step of `bound`
  /// (red.code_bound, or red.result_code_bound() for an owner's requantized codes); its size
  /// lands in *d_size. Sources: code_source (codes already made, kOutlierCode marking values
  /// kept beside: a sum's), or value_source<T, false> (input values quantized as they are read,
  /// with quantize_kernel's parameters and never a raw tile: the chunk code_source makes of
  /// quantize_kernel's codes, without those codes going through memory).
  template <class T, class Source>
  void encode_chunk(Source source, std::size_t count, std::byte* out, std::uint64_t* d_size, const code_reduction& red,
                    double bound, std::uint64_t first, cudaStream_t stream) {
    static_assert(!Source::allows_raw, "a reduction's chunk is added to as codes: its tiles may not be raw");
    const auto tiles = static_cast<unsigned>(format::tile_count(count));
    const device::detail::workspace_layout l = device::detail::layout_for(count);
    ctx_.with_call_coder([&]<class C>() {
      auto kernel = ncclz::device::detail::encode_kernel<C, T, Source>;
      device::detail::prefer_shared_memory(kernel);
      kernel<<<tiles > 0 ? tiles : 1u, ncclz::device::detail::kTileThreads, 0, stream>>>(
          source, count, out, d_size, ctx_.ws.range_keys(), bound, red.limit_ranks,
          reinterpret_cast<std::uint64_t*>(ctx_.ws.codec() + l.tile_words), scales_at(first));
    });
    NCCLZ_CUDA_TRY(cudaGetLastError());
  }

  /// Decodes a chunk of codes into `codes` (outliers' values into `values`) with the call's coder.
  template <class T>
  void decode_codes(const std::byte* in, std::uint64_t in_bytes, std::size_t count, std::int32_t* codes, void* values,
                    cudaStream_t stream) {
    ctx_.with_call_coder([&]<class C>() {
      device::detail::launch_decode_kernel<C, T>(in, in_bytes, ncclz::device::detail::code_sink<Q, T>{codes, static_cast<T*>(values)}, count,
                                                 ctx_.ws.report(), stream);
    });
  }

  /// acc = op(acc, codes/values), element-wise, on the elements from `first` of the input.
  template <class T>
  void accumulate(const code_reduction& red, const std::int32_t* codes, const T* values, std::size_t count,
                  std::uint64_t first, cudaStream_t stream) {
    auto* acc_values = static_cast<T*>(buffers.acc_values);
    const auto launch = [&](auto kernel) {
      kernel<<<elementwise_grid(count), ncclz::device::detail::kElementwiseThreads, 0, stream>>>(buffers.acc_codes, acc_values, codes,
                                                                                         values, count, steps_at(first), step_shift());
    };
    switch (red.op) {
      case ncclMin: launch(ncclz::device::detail::accumulate_kernel<ncclz::device::detail::min_op, T>); break;
      case ncclMax: launch(ncclz::device::detail::accumulate_kernel<ncclz::device::detail::max_op, T>); break;
      default: launch(ncclz::device::detail::accumulate_kernel<ncclz::device::detail::sum_op, T>); break;
    }
    NCCLZ_CUDA_TRY(cudaGetLastError());
  }

  /// The reduced codes in buffers.acc_* (of the input's elements from `first` on) as values;
  /// after coarsen_result, pass `red` for the coarse step.
  template <class T>
  void dequantize(std::size_t count, T* out, std::uint64_t first, cudaStream_t stream, const code_reduction* red = nullptr) {
    const double* steps = red != nullptr && red->coarsen > 1 ? buffers.result_step : steps_at(first);
    ncclz::device::detail::dequantize_kernel<T><<<elementwise_grid(count), ncclz::device::detail::kElementwiseThreads, 0, stream>>>(
        buffers.acc_codes, static_cast<const T*>(buffers.acc_values), count, steps, out, step_shift());
    NCCLZ_CUDA_TRY(cudaGetLastError());
  }

  /// An owner's reduced codes in buffers.acc_*, requantized at red.coarsen steps before they are
  /// coded and sent on (sum_bound.hpp); buffers.result_step gets the step.
  template <class T>
  void coarsen_result(const code_reduction& red, std::size_t count, cudaStream_t stream) {
    if constexpr (!is_blockwise_v<Q> && !is_lossless_v<Codec>) {
      if (red.coarsen <= 1 || count == 0) return;
      ncclz::device::detail::requantize_kernel<Q, T><<<elementwise_grid(count), ncclz::device::detail::kElementwiseThreads, 0, stream>>>(
          buffers.acc_codes, static_cast<T*>(buffers.acc_values), count, ctx_.ws.range_keys(), red.code_bound, red.bound,
          red.limit_ranks, red.coarsen, buffers.result_step);
      NCCLZ_CUDA_TRY(cudaGetLastError());
    }
  }

 private:
  /// What the encoder of the chunk starting at element `first` reads the block maxima from
  /// (nothing unless blockwise).
  ncclz::device::detail::block_scales scales_at(std::uint64_t first) const {
    if constexpr (is_blockwise_v<Q>) return scales_.at(first);
    else return {};
  }
  /// Steps for the element-wise kernels working on elements from `first` on: one step, or one
  /// per scale block (see step_shift).
  const double* steps_at(std::uint64_t first) const {
    if constexpr (is_blockwise_v<Q>) return scales_.steps_at(first);
    else return buffers.step;
  }
  static constexpr unsigned step_shift() { return is_blockwise_v<Q> ? 10u : 63u; }
  static_assert(format::kScaleBlockElements == 1u << 10, "step_shift() is log2 of the scale block");

  context<Codec>& ctx_;
  block_scale_sharing<Q> scales_;
};

}  // namespace ncclz::detail::comm
