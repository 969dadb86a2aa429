// Owning handles for the CUDA resources the host objects hold: device and pinned memory, streams
// and events. Each frees what it holds in its destructor without throwing, and grows or creates
// only when asked, so the classes that use them need no hand-written destructor.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "ncclz/error.hpp"

namespace ncclz::detail {

/// Device memory of `size()` bytes; reserve() grows it (the old contents are dropped) and never
/// shrinks it. cudaFree waits for all work on the device, so an owner whose work may hang on a
/// dead peer passes `before_free`, a watched wait for that work, to run first.
class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() { release(); }

  /// At least `bytes`; returns true where it allocated anew.
  template <class BeforeFree = void (*)()>
  bool reserve(std::size_t bytes, BeforeFree before_free = [] {}) {
    if (bytes <= size_ && data_ != nullptr) return false;
    if (data_ != nullptr) before_free();
    release();
    NCCLZ_CUDA_TRY(cudaMalloc(&data_, bytes));
    size_ = bytes;
    return true;
  }
  void release() noexcept {
    if (data_ != nullptr) NCCLZ_CUDA_TRY_NO_THROW(cudaFree(data_));
    data_ = nullptr;
    size_ = 0;
  }
  [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(data_); }
  template <class T>
  [[nodiscard]] T* as() const noexcept {
    return static_cast<T*>(data_);
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Page-locked host memory (cudaMallocHost), the target of the device-to-host copies of sizes.
class pinned_buffer {
 public:
  pinned_buffer() = default;
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  ~pinned_buffer() { release(); }

  template <class BeforeFree = void (*)()>
  bool reserve(std::size_t bytes, BeforeFree before_free = [] {}) {
    if (bytes <= size_ && data_ != nullptr) return false;
    if (data_ != nullptr) before_free();
    release();
    NCCLZ_CUDA_TRY(cudaMallocHost(&data_, bytes));
    size_ = bytes;
    return true;
  }
  void release() noexcept {
    if (data_ != nullptr) NCCLZ_CUDA_TRY_NO_THROW(cudaFreeHost(data_));
    data_ = nullptr;
    size_ = 0;
  }
  template <class T>
  [[nodiscard]] T* as() const noexcept {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

/// A non-blocking stream, made on first use.
class stream_handle {
 public:
  stream_handle() = default;
  stream_handle(const stream_handle&) = delete;
  stream_handle& operator=(const stream_handle&) = delete;
  ~stream_handle() {
    if (stream_ != nullptr) NCCLZ_CUDA_TRY_NO_THROW(cudaStreamDestroy(stream_));
  }

  /// The stream, created with `priority` (cudaDeviceGetStreamPriorityRange) the first time.
  cudaStream_t get(int priority = 0) {
    if (stream_ == nullptr) NCCLZ_CUDA_TRY(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, priority));
    return stream_;
  }
  [[nodiscard]] bool made() const noexcept { return stream_ != nullptr; }

 private:
  cudaStream_t stream_ = nullptr;
};

/// A CUDA event, created on first use (timing or not, as constructed).
class event_handle {
 public:
  explicit event_handle(bool timing = true) : flags_(timing ? cudaEventDefault : cudaEventDisableTiming) {}
  event_handle(const event_handle&) = delete;
  event_handle& operator=(const event_handle&) = delete;
  event_handle(event_handle&& o) noexcept : event_(std::exchange(o.event_, nullptr)), flags_(o.flags_) {}
  event_handle& operator=(event_handle&&) = delete;
  ~event_handle() {
    if (event_ != nullptr) NCCLZ_CUDA_TRY_NO_THROW(cudaEventDestroy(event_));
  }

  cudaEvent_t get() {
    if (event_ == nullptr) NCCLZ_CUDA_TRY(cudaEventCreateWithFlags(&event_, flags_));
    return event_;
  }
  /// The event as made so far (null before the first get()).
  [[nodiscard]] cudaEvent_t peek() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
  unsigned flags_;
};

}  // namespace ncclz::detail
