// Compressor<Codec, T>: owns the device workspace and a pinned size word for one stream of
// compress/decompress calls, so callers need no two-phase bookkeeping. It allocates once, in the
// constructor, and never per call; the calls are asynchronous except the two that say they wait.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "ncclz/device/device_codec.cuh"
#include "ncclz/error.hpp"

namespace ncclz {

template <class Codec, class T>
class Compressor {
 public:
  /// Sizes the workspace for chunks of up to `max_count` values.
  explicit Compressor(std::size_t max_count)
      : max_count_(checked_max_count(max_count)), workspace_bytes_(device::workspace_bytes<T>(max_count)) {
    NCCLZ_CUDA_TRY(cudaMalloc(&workspace_, workspace_bytes_));
    try {
      NCCLZ_CUDA_TRY(cudaMalloc(&d_size_, sizeof(std::uint64_t)));
      NCCLZ_CUDA_TRY(cudaMallocHost(&h_size_, sizeof(std::uint64_t)));
    } catch (...) {
      release();
      throw;
    }
  }
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;
  Compressor(Compressor&& o) noexcept { swap(o); }
  Compressor& operator=(Compressor&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }
  ~Compressor() { release(); }

  [[nodiscard]] std::size_t max_count() const noexcept { return max_count_; }
  /// Capacity an output chunk needs for `count` values.
  [[nodiscard]] static constexpr std::size_t max_compressed_bytes(std::size_t count) {
    return ncclz::max_compressed_bytes<T, Codec>(count);
  }

  /// Queues compression of `count` values; the size lands in device memory (d_size()).
  void compress(const T* d_in, std::size_t count, void* d_out, std::size_t out_capacity, double bound,
                cudaStream_t stream = nullptr) {
    check_count("Compressor::compress", count);
    device::compress<Codec>(workspace_, workspace_bytes_, d_in, count, d_out, out_capacity, d_size_, bound, stream);
  }

  /// Device word holding the size of the last compressed chunk, for stream-ordered use.
  [[nodiscard]] const std::uint64_t* d_size() const noexcept { return d_size_; }

  /// Waits for `stream` and returns the size in bytes of the last compressed chunk.
  std::uint64_t compressed_bytes(cudaStream_t stream = nullptr) {
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(h_size_, d_size_, sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream));
    NCCLZ_CUDA_TRY(cudaStreamSynchronize(stream));
    return *h_size_;
  }

  /// Queues decompression; a bad chunk is reported by check().
  void decompress(const void* d_in, std::size_t in_capacity, T* d_out, std::size_t count, cudaStream_t stream = nullptr) {
    check_count("Compressor::decompress", count);
    device::decompress<Codec>(workspace_, workspace_bytes_, d_in, in_capacity, d_out, count, stream);
  }

  /// Waits for `stream`; throws format_error if the last decompress met a bad chunk.
  void check(cudaStream_t stream = nullptr) { device::throw_if_decode_failed(workspace_, stream); }

 private:
  /// A max_count no chunk can hold would wrap the workspace arithmetic around: refused up front.
  static std::size_t checked_max_count(std::size_t max_count) {
    detail::validate_count<T>("Compressor", max_count);
    return max_count;
  }
  void check_count(const char* fn, std::size_t count) const {
    if (count > max_count_) {
      detail::throw_invalid(fn, "count " + std::to_string(count) + " exceeds the max_count " + std::to_string(max_count_) +
                                    " this Compressor was built for");
    }
  }
  void release() noexcept {
    if (workspace_) NCCLZ_CUDA_TRY_NO_THROW(cudaFree(workspace_));
    if (d_size_) NCCLZ_CUDA_TRY_NO_THROW(cudaFree(d_size_));
    if (h_size_) NCCLZ_CUDA_TRY_NO_THROW(cudaFreeHost(h_size_));
    workspace_ = nullptr;
    d_size_ = nullptr;
    h_size_ = nullptr;
  }
  void swap(Compressor& o) noexcept {
    std::swap(max_count_, o.max_count_);
    std::swap(workspace_bytes_, o.workspace_bytes_);
    std::swap(workspace_, o.workspace_);
    std::swap(d_size_, o.d_size_);
    std::swap(h_size_, o.h_size_);
  }

  std::size_t max_count_ = 0;
  std::size_t workspace_bytes_ = 0;
  void* workspace_ = nullptr;
  std::uint64_t* d_size_ = nullptr;
  std::uint64_t* h_size_ = nullptr;
};

}  // namespace ncclz
