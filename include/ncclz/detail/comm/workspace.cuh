// Device and pinned host memory of a Communicator, allocated on first use and grown only when a
// call needs more, never per call.
//
// Device: [codec workspace | decode reports | header rows | meta sets | chunk slots]. The decode
// report of this rank's decodes comes first, then room for every rank's (gathered by check()).
// A header row per rank carries the call's range keys, fingerprint and slot capacity
// (call_agreement.hpp). A meta set has one row per rank, {count, bytes sent to rank 0, ...,
// bytes sent to rank n-1}: each rank's encoder writes its chunk sizes into its own row, and one
// ncclAllGather gives every rank every row. Pinned host copies: the meta sets, then the applied
// error bound; the header rows and the gathered reports. The reductions' code buffers
// (reduce_buffers) are a second allocation, sized by their own calls.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>

#include "ncclz/codec.hpp"
#include "ncclz/detail/comm/call_agreement.hpp"
#include "ncclz/detail/cuda_resources.hpp"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/format.hpp"

namespace ncclz::detail::comm {

/// Runs before memory that work in flight may still use is freed: a watched wait for that work,
/// so that a transfer stuck on a dead peer becomes an error instead of a cudaFree that never
/// returns.
using before_free_fn = std::function<void()>;

class workspace {
 public:
  workspace(int nranks, before_free_fn before_free) : nranks_(nranks), before_free_(std::move(before_free)) {
    grow_host_meta(1);
    host_rows_.reserve(sizeof(std::uint64_t) * static_cast<std::size_t>(nranks) * (kHeaderWords + 1));
  }

  /// Room for `slots` chunks of up to `chunk_bytes`, a codec workspace of `workspace_bytes` and
  /// `meta_sets` meta sets. Growing drops the old contents (cudaFree waits for work using them).
  void reserve(std::size_t chunk_bytes, std::size_t workspace_bytes, int slots, int meta_sets) {
    const std::size_t chunk_capacity = format::align_up(chunk_bytes, 256);
    const std::size_t codec = format::align_up(workspace_bytes, 256);
    grow_host_meta(meta_sets);
    if (held_bytes_ != 0 && chunk_capacity <= chunk_capacity_ && codec <= codec_capacity_ && slots <= slots_ &&
        meta_sets <= device_meta_sets_) {
      return;
    }
    if (held_bytes_ != 0) before_free_();
    device_.release();
    held_bytes_ = 0;
    chunk_capacity_ = std::max(chunk_capacity, chunk_capacity_);
    codec_capacity_ = std::max(codec, codec_capacity_);
    slots_ = std::max(slots, slots_);
    device_meta_sets_ = std::max(meta_sets, device_meta_sets_);
    const std::size_t bytes =
        codec_capacity_ + report_bytes() + header_bytes() + meta_bytes() + chunk_capacity_ * static_cast<std::size_t>(slots_);
    device_.reserve(bytes);
    held_bytes_ = bytes;
  }

  /// Device bytes held now (0 before the first compressed call).
  [[nodiscard]] std::size_t held_bytes() const noexcept { return held_bytes_; }
  [[nodiscard]] std::size_t chunk_capacity() const noexcept { return chunk_capacity_; }

  [[nodiscard]] std::byte* codec() const { return device_.data(); }
  [[nodiscard]] device::detail::decode_report* report() const {
    return reinterpret_cast<device::detail::decode_report*>(device_.data() + codec_capacity_);
  }
  /// Room for every rank's decode report, gathered (check()).
  [[nodiscard]] std::uint64_t* gathered_reports() const {
    return reinterpret_cast<std::uint64_t*>(device_.data() + codec_capacity_ + sizeof(std::uint64_t));
  }
  [[nodiscard]] std::uint64_t* host_reports() const {
    return host_rows_.as<std::uint64_t>() + static_cast<std::size_t>(nranks_) * kHeaderWords;
  }
  /// The header rows of every rank (kHeaderWords each), on the device and their pinned copy.
  [[nodiscard]] std::uint64_t* header_rows() const {
    return reinterpret_cast<std::uint64_t*>(device_.data() + codec_capacity_ + report_bytes());
  }
  [[nodiscard]] std::uint64_t* host_header_rows() const { return host_rows_.as<std::uint64_t>(); }
  [[nodiscard]] device::detail::range_keys* range_keys() const {
    return reinterpret_cast<device::detail::range_keys*>(codec() + device::detail::layout_for(0).range);
  }
  /// Words of one meta set.
  [[nodiscard]] std::size_t meta_words() const {
    return static_cast<std::size_t>(nranks_) * static_cast<std::size_t>(nranks_ + 1);
  }
  [[nodiscard]] std::uint64_t* meta(int set = 0) const {
    return reinterpret_cast<std::uint64_t*>(device_.data() + codec_capacity_ + report_bytes() + header_bytes()) +
           meta_words() * static_cast<std::size_t>(set);
  }
  [[nodiscard]] std::uint64_t* meta_row(int r, int set = 0) const { return meta(set) + static_cast<std::size_t>(r) * (nranks_ + 1); }
  /// Device word where the encoder of rank `from`'s chunk for rank `to` puts its size.
  [[nodiscard]] std::uint64_t* meta_slot(int from, int to, int set = 0) const { return meta_row(from, set) + 1 + to; }
  [[nodiscard]] std::byte* chunk(int slot) const {
    return device_.data() + codec_capacity_ + report_bytes() + header_bytes() + meta_bytes() +
           chunk_capacity_ * static_cast<std::size_t>(slot);
  }

  /// The pinned copy of meta set `set`, row r.
  [[nodiscard]] std::uint64_t* host_row(int r, int set) const {
    return host_.as<std::uint64_t>() + meta_words() * static_cast<std::size_t>(set) + static_cast<std::size_t>(r) * (nranks_ + 1);
  }
  /// Pinned words free for a call's own small reads (the ring's sizes), at the start of the copy.
  [[nodiscard]] std::uint64_t* host_scratch() const { return host_.as<std::uint64_t>(); }
  [[nodiscard]] double* host_bound() const {
    return reinterpret_cast<double*>(host_.as<std::uint64_t>() + meta_words() * static_cast<std::size_t>(host_meta_sets_));
  }
  /// Sizes from the meta exchange of `set`.
  [[nodiscard]] std::uint64_t sent_bytes(int from, int to, int set = 0) const { return host_row(from, set)[1 + to]; }
  /// The one chunk rank r coded for everyone (allgather, broadcast, a reduction's owners).
  [[nodiscard]] std::uint64_t chunk_size(int r, int set = 0) const { return sent_bytes(r, r, set); }

 private:
  /// This rank's decode report, then every rank's.
  std::size_t report_bytes() const { return format::align_up(sizeof(std::uint64_t) * (1 + static_cast<std::size_t>(nranks_)), 256); }
  std::size_t header_bytes() const {
    return format::align_up(sizeof(std::uint64_t) * kHeaderWords * static_cast<std::size_t>(nranks_), 256);
  }
  std::size_t meta_bytes() const {
    return format::align_up(sizeof(std::uint64_t) * meta_words() * static_cast<std::size_t>(device_meta_sets_), 256);
  }
  /// Grown between calls only, when no copy into it is pending.
  void grow_host_meta(int sets) {
    if (sets <= host_meta_sets_) return;
    if (host_meta_sets_ != 0) before_free_();
    host_.release();
    host_meta_sets_ = 0;
    host_.reserve(sizeof(std::uint64_t) * (meta_words() * static_cast<std::size_t>(sets) + 8));
    host_meta_sets_ = sets;
  }

  int nranks_;
  before_free_fn before_free_;
  device_buffer device_;
  pinned_buffer host_;
  pinned_buffer host_rows_;  // header rows, then gathered reports
  std::size_t held_bytes_ = 0, chunk_capacity_ = 0, codec_capacity_ = 0;
  int slots_ = 0, device_meta_sets_ = 1, host_meta_sets_ = 0;
};

/// Code buffers of the reductions: this rank's codes of its whole input (the ring's; the direct
/// reductions quantize into the sum and keep none), the running reduction of one segment, a
/// segment's decoded codes, and the quantization steps.
class reduce_buffers {
 public:
  explicit reduce_buffers(before_free_fn before_free) : before_free_(std::move(before_free)) {}

  std::int32_t* own_codes = nullptr;
  void* own_values = nullptr;
  std::int32_t* acc_codes = nullptr;
  void* acc_values = nullptr;
  std::int32_t* peer_codes = nullptr;
  void* peer_values = nullptr;
  double* step = nullptr;
  double* result_step = nullptr;   ///< the owners' coarser step (sum_bound.hpp)
  std::uint64_t* sizes = nullptr;  ///< ring: [0] this step's send, [1] this step's receive

  [[nodiscard]] std::size_t bytes() const noexcept { return memory_.size(); }

  /// Room for `count` own codes and two segments of `largest_segment`, carved anew.
  template <class T>
  void reserve(std::size_t count, std::size_t largest_segment) {
    const auto codes_and_values = [](std::size_t n) {
      return format::align_up(format::align_up(n * sizeof(std::int32_t), 16) + n * sizeof(T), 256);
    };
    const std::size_t own = codes_and_values(count), seg = codes_and_values(largest_segment);
    memory_.reserve(own + 2 * seg + 256, before_free_);
    std::byte* p = memory_.data();
    const auto carve = [&p](std::int32_t*& codes, void*& values, std::size_t n, std::size_t bytes) {
      codes = reinterpret_cast<std::int32_t*>(p);
      values = p + format::align_up(n * sizeof(std::int32_t), 16);
      p += bytes;
    };
    carve(own_codes, own_values, count, own);
    carve(acc_codes, acc_values, largest_segment, seg);
    carve(peer_codes, peer_values, largest_segment, seg);
    step = reinterpret_cast<double*>(p);
    result_step = step + 1;
    sizes = reinterpret_cast<std::uint64_t*>(p + 64);
  }

 private:
  before_free_fn before_free_;
  device_buffer memory_;
};

}  // namespace ncclz::detail::comm
