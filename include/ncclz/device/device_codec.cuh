// Device-wide compression and decompression of one chunk, stream-ordered, with no host
// synchronisation inside (CUB's device-level shape).
//
//   using Codec = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
//   size_t ws = ncclz::device::workspace_bytes<float>(max_count);            // once
//   cudaMalloc(&d_ws, ws); cudaMalloc(&d_chunk, ncclz::max_compressed_bytes<float>(max_count));
//   ncclz::device::compress<Codec>(d_ws, ws, d_in, n, d_chunk, cap, d_size, 1e-3, stream);
//   ncclz::device::decompress<Codec>(d_ws, ws, d_chunk, cap, d_out, n, stream);
//   ncclz::device::throw_if_decode_failed(d_ws, stream);                      // optional, syncs
//
// compress writes the chunk's size in bytes to *d_size (device memory). decompress reads every
// size it needs from the chunk itself and records the first problem it meets (bad header,
// truncated or corrupted tile) in the workspace; throw_if_decode_failed turns that into a
// format_error. Arguments are checked on the host before anything is queued.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "ncclz/codec.hpp"
#include "ncclz/detail/validate.hpp"
#include "ncclz/device/detail/decode_kernel.cuh"
#include "ncclz/device/detail/encode_kernel.cuh"
#include "ncclz/error.hpp"
#include "ncclz/format.hpp"

namespace ncclz {

/// Bytes a chunk of `count` values of T can take at most (every tile raw). Size output buffers
/// with this: the real size is known only once the device has compressed. A Codec whose quantizer
/// is blockwise (FixedRate) adds its step table: pass it, max_compressed_bytes<T, Codec>(count).
/// Throws invalid_argument for a count no chunk can hold (the sizes would wrap around).
template <class T, class Codec = void>
constexpr std::size_t max_compressed_bytes(std::size_t count) {
  detail::validate_count<T>("max_compressed_bytes", count);
  std::size_t bytes = format::max_chunk_bytes(count, sizeof(T));
  if constexpr (!std::is_void_v<Codec>) bytes += device::detail::step_table_bytes<typename Codec::quantizer, T>(count);
  return bytes;
}

}  // namespace ncclz

// The host side of the device API shares its namespace with the kernels (device/detail/), so it
// sits in the architecture-keyed namespace too (config.hpp): one ncclz::device, never two.
NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device {

namespace detail {

struct workspace_layout {
  std::size_t report;       ///< decode_report
  std::size_t range;        ///< range_keys
  std::size_t block_max;    ///< double per scale block, then their maximum (blockwise quantizers)
  std::size_t tile_words;   ///< u64 per tile, decoupled look-back
  std::size_t total;
};

inline workspace_layout layout_for(std::size_t count) {
  workspace_layout l{};
  l.report = 0;
  l.range = 16;
  l.block_max = 64;
  l.tile_words = l.block_max + (format::scale_count(count) + 1) * sizeof(double);
  l.total = l.tile_words + format::tile_count(count) * sizeof(std::uint64_t);
  return l;
}

/// Kernels that stage tiles in shared memory run more blocks per SM with the largest carveout.
template <class Kernel>
void prefer_shared_memory(Kernel* kernel) {
  NCCLZ_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                      cudaSharedmemCarveoutMaxShared));
}

/// Launches `kernel` as a programmatic dependent of the stream's previous kernel where the device
/// has them (compute capability 9.0 on): its blocks are dispatched as that kernel's last blocks
/// finish, instead of after a launch gap, and wait for it inside (wait_for_previous_grid). The
/// encoder after the range pass, 64 MiB f32: compress 1-3 us sooner on every coder.
template <class... Params, class... Args>
void launch_dependent(void (*kernel)(Params...), unsigned grid, unsigned block, cudaStream_t stream, Args... args) {
  int device = 0, major = 0;
  NCCLZ_CUDA_TRY(cudaGetDevice(&device));
  NCCLZ_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(block);
  config.stream = stream;
  cudaLaunchAttribute dependent{};
  dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &dependent;
  config.numAttrs = major >= 9 ? 1 : 0;
  NCCLZ_CUDA_TRY(cudaLaunchKernelEx(&config, kernel, args...));
}

inline int sm_count() {
  int device = 0, sms = 0;
  NCCLZ_CUDA_TRY(cudaGetDevice(&device));
  NCCLZ_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

/// Compress needs the workspace of `count` values; decompress (`decode`) only its first bytes,
/// where the decode report is, which the workspace of any count holds.
inline void check_workspace(const char* fn, const void* ws, std::size_t ws_bytes, std::size_t count, bool decode = false) {
  if (ws == nullptr) ncclz::detail::throw_invalid(fn, "workspace is a null pointer");
  if (reinterpret_cast<std::uintptr_t>(ws) % 16 != 0) ncclz::detail::throw_invalid(fn, "workspace must be 16-byte aligned");
  const std::size_t need = layout_for(decode ? 0 : count).total;
  if (ws_bytes < need) {
    ncclz::detail::throw_invalid(
        fn, "workspace of " + std::to_string(ws_bytes) + " B is too small: " +
                (decode ? "decompress needs " + std::to_string(need) + " B (workspace_bytes<T>(n) of any n holds them)"
                        : "compressing " + std::to_string(count) + " values needs workspace_bytes<T>(" + std::to_string(count) +
                              ") = " + std::to_string(need) + " B"));
  }
}

template <class T>
void check_values(const char* fn, const char* name, const T* p, std::size_t count) {
  if (count > 0 && p == nullptr) ncclz::detail::throw_invalid(fn, std::string(name) + " is a null pointer with count > 0");
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) != 0) {
    ncclz::detail::throw_invalid(fn, std::string(name) + " is not aligned to its element size (" + std::to_string(alignof(T)) + " B)");
  }
}

inline void check_chunk(const char* fn, const char* name, const void* p) {
  if (p == nullptr) ncclz::detail::throw_invalid(fn, std::string(name) + " is a null pointer");
  if (reinterpret_cast<std::uintptr_t>(p) % 8 != 0) {
    ncclz::detail::throw_invalid(fn, std::string(name) + " (a compressed chunk) must be 8-byte aligned");
  }
}
}  // namespace detail

namespace detail {
/// Throws format_error saying what a decode reported, if it reported anything.
inline void throw_if_failed(const char* fn, const decode_report& r) {
  const char* what = nullptr;
  switch (static_cast<decode_status>(r.status)) {
    case decode_status::ok: return;
    case decode_status::bad_header: what = "bad chunk header (magic, version, tile size, coder or parameters)"; break;
    case decode_status::wrong_dtype: what = "the chunk holds another element type than the output"; break;
    case decode_status::wrong_quantizer: what = "the chunk was written by another quantizer than this codec's"; break;
    case decode_status::wrong_count: what = "the chunk holds another element count than the caller expects"; break;
    case decode_status::truncated: what = "compressed stream truncated: the header announces more payload than the buffer holds"; break;
    case decode_status::bad_tile_offset: what = "corrupted stream: a tile offset points outside the stream"; break;
    case decode_status::truncated_tile: what = "corrupted stream: a tile is truncated"; break;
    case decode_status::bad_tile_mode: what = "a tile has an unknown mode, or one this codec's coder does not write (decode with the codec that compressed)"; break;
    case decode_status::bad_width: what = "corrupted stream: a block width is over 32 bits"; break;
    case decode_status::bad_outlier_index: what = "corrupted stream: an outlier index is outside its tile"; break;
    case decode_status::bad_codebook: what = "corrupted stream: a Huffman codebook is invalid (length over 11 bits or not complete)"; break;
    case decode_status::corrupt_subblock: what = "corrupted stream: a sub-block does not decode to exactly its stored length"; break;
    case decode_status::bad_tile_header: what = "corrupted stream: a tile's coder header is invalid"; break;
    case decode_status::bad_block_step: what = "corrupted stream: a step of the fixed_rate step table is negative or not finite"; break;
    case decode_status::bad_checksum: what = "corrupted stream: a tile fails its checksum, or the chunk header its check"; break;
  }
  if (what == nullptr) what = "unknown decode status";
  throw format_error(std::string("ncclz::") + fn + ": " + what + " (tile " + std::to_string(r.tile) + ")");
}
}  // namespace detail

/// Device workspace for compress and decompress of up to `count` values (either T).
template <class T>
std::size_t workspace_bytes(std::size_t count) {
  return detail::layout_for(count).total;
}

namespace detail {
// The phases of compress and decompress, for callers (the collectives) that put work between
// them, such as an allreduce of the range keys across ranks. Arguments are checked by the callers.

/// Resets the range keys and every tile's look-back word; returns the range keys.
inline range_keys* reset_compress_state(void* d_workspace, std::size_t count, cudaStream_t stream) {
  const workspace_layout l = layout_for(count);
  auto* ws = static_cast<std::byte*>(d_workspace);
  NCCLZ_CUDA_TRY(cudaMemsetAsync(ws + l.range, 0, l.total - l.range, stream));
  return reinterpret_cast<range_keys*>(ws + l.range);
}

/// Resets only the look-back words, keeping the range keys (for a second encode with the same range).
inline void reset_tile_words(void* d_workspace, std::size_t count, cudaStream_t stream) {
  const workspace_layout l = layout_for(count);
  NCCLZ_CUDA_TRY(cudaMemsetAsync(static_cast<std::byte*>(d_workspace) + l.tile_words, 0, l.total - l.tile_words, stream));
}

/// Folds the finite values of d_in into the range keys (RelBound only).
template <class T>
void launch_range(const T* d_in, std::size_t count, range_keys* range, cudaStream_t stream) {
  if (count == 0) return;
  const std::size_t blocks = (count + detail::kRangeThreads - 1) / detail::kRangeThreads;
  const int grid = static_cast<int>(std::min<std::size_t>(blocks, std::size_t(sm_count()) * 8));
  detail::range_kernel<T><<<grid, detail::kRangeThreads, 0, stream>>>(d_in, count, range);
  NCCLZ_CUDA_TRY(cudaGetLastError());
}

/// Writes the maxima of d_in's scale blocks, then their overall maximum, at `block_max`
/// (scale_count(count) + 1 doubles); returns where the encoder finds them.
template <class T>
detail::block_scales launch_block_max(const T* d_in, std::size_t count, double* block_max, cudaStream_t stream) {
  const std::uint64_t blocks = format::scale_count(count);
  NCCLZ_CUDA_TRY(cudaMemsetAsync(block_max + blocks, 0, sizeof(double), stream));
  if (count > 0) {
    constexpr std::uint64_t kWarps = detail::kBlockMaxThreads / 32;
    const int grid = static_cast<int>(std::min<std::uint64_t>((blocks + kWarps - 1) / kWarps, std::uint64_t(sm_count()) * 8));
    detail::block_max_kernel<T><<<grid, detail::kBlockMaxThreads, 0, stream>>>(d_in, count, block_max,
                                                                                              block_max + blocks);
    NCCLZ_CUDA_TRY(cudaGetLastError());
  }
  return {block_max, block_max + blocks};
}

/// Encodes with the range already in `range` (ignored by AbsBound). A blockwise quantizer's block
/// maxima are found here, from d_in alone.
template <class Codec, class T>
void launch_encode(void* d_workspace, const T* d_in, std::size_t count, void* d_out, std::uint64_t* d_size,
                   const range_keys* range, double bound, cudaStream_t stream) {
  const workspace_layout l = layout_for(count);
  const auto tiles = static_cast<unsigned>(format::tile_count(count));
  detail::block_scales scales{};
  if constexpr (is_blockwise_v<typename Codec::quantizer>) {
    scales = launch_block_max(d_in, count, reinterpret_cast<double*>(static_cast<std::byte*>(d_workspace) + l.block_max), stream);
  }
  prefer_shared_memory(detail::encode_kernel<Codec, T>);
  launch_dependent(detail::encode_kernel<Codec, T>, tiles > 0 ? tiles : 1u, detail::kTileThreads, stream,
                   detail::value_source<T>{d_in}, std::uint64_t{count}, static_cast<std::byte*>(d_out), d_size, range,
                   bound, 1u, reinterpret_cast<std::uint64_t*>(static_cast<std::byte*>(d_workspace) + l.tile_words), scales);
}

/// Launches decode_kernel<Codec, T, Sink> over the `count` values of the chunk at `in`, one block
/// a tile (an empty chunk still has a header to check: one block does it). Its shared memory is
/// dynamic (more than a kernel may declare statically), so the kernel is allowed it first.
template <class Codec, class T, class Sink>
void launch_decode_kernel(const std::byte* in, std::uint64_t capacity, Sink out, std::uint64_t count, decode_report* report,
                          cudaStream_t stream) {
  auto* kernel = detail::decode_kernel<Codec, T, Sink>;
  constexpr std::size_t shared_bytes = sizeof(detail::decode_shared<typename Codec::coder>);
  // Once a device (the attributes stay there), not host calls before every launch.
  static std::atomic<std::uint64_t> ready{0};  // bit d: set on device d
  int device = 0;
  NCCLZ_CUDA_TRY(cudaGetDevice(&device));
  const std::uint64_t bit = device >= 0 && device < 64 ? std::uint64_t{1} << device : 0;
  if (bit == 0 || (ready.load(std::memory_order_acquire) & bit) == 0) {
    prefer_shared_memory(kernel);
    NCCLZ_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)));
    ready.fetch_or(bit, std::memory_order_release);
  }
  const auto tiles = static_cast<unsigned>(format::tile_count(count));
  kernel<<<tiles > 0 ? tiles : 1u, detail::kTileThreads, shared_bytes, stream>>>(in, capacity, out, count, report);
  NCCLZ_CUDA_TRY(cudaGetLastError());
}

/// Decodes one chunk; problems go to `report`, which the caller resets (several chunks may share it).
template <class Codec, class T>
void launch_decode(const void* d_in, std::size_t in_capacity, T* d_out, std::size_t count, decode_report* report,
                   cudaStream_t stream) {
  launch_decode_kernel<Codec, T>(static_cast<const std::byte*>(d_in), in_capacity,
                                 detail::value_sink<typename Codec::quantizer, T>{d_out}, count, report, stream);
}

template <class Codec, class T>
void check_compress_arguments(const char* fn, const void* d_workspace, std::size_t workspace_bytes, const T* d_in,
                              std::size_t count, const void* d_out, std::size_t out_capacity, double bound) {
  static_assert(is_supported_value_type_v<T>, "ncclz: supported element types are float, double, __half and __nv_bfloat16");
  ncclz::detail::validate_bound<typename Codec::quantizer>(fn, bound);
  ncclz::detail::validate_count<T>(fn, count);
  check_workspace(fn, d_workspace, workspace_bytes, count);
  check_values(fn, "d_in", d_in, count);
  check_chunk(fn, "d_out", d_out);
  if (out_capacity < max_compressed_bytes<T, Codec>(count)) {
    ncclz::detail::throw_invalid(fn, "d_out holds " + std::to_string(out_capacity) + " B, need max_compressed_bytes<T, Codec>() = " +
                                         std::to_string(max_compressed_bytes<T, Codec>(count)));
  }
}

template <class T>
void check_decompress_arguments(const char* fn, const void* d_workspace, std::size_t workspace_bytes, const void* d_in,
                                std::size_t in_capacity, const T* d_out, std::size_t count) {
  static_assert(is_supported_value_type_v<T>, "ncclz: supported element types are float, double, __half and __nv_bfloat16");
  ncclz::detail::validate_count<T>(fn, count);
  check_workspace(fn, d_workspace, workspace_bytes, count, /*decode=*/true);
  check_chunk(fn, "d_in", d_in);
  check_values(fn, "d_out", d_out, count);
  if (in_capacity < sizeof(format::chunk_header)) {
    throw format_error(std::string("ncclz::") + fn + ": compressed stream truncated: " + std::to_string(in_capacity) +
                       " B is shorter than the 64 B header");
  }
}
}  // namespace detail

/// Compresses `count` values at `d_in` into the chunk at `d_out` (capacity `out_capacity` bytes,
/// at least max_compressed_bytes<T>(count)); writes the chunk size to *d_size when d_size is not
/// null. `bound` is absolute or relative as Codec's quantizer says.
template <class Codec, class T>
void compress(void* d_workspace, std::size_t workspace_bytes, const T* d_in, std::size_t count, void* d_out,
              std::size_t out_capacity, std::uint64_t* d_size, double bound, cudaStream_t stream = nullptr) {
  detail::check_compress_arguments<Codec>("device::compress", d_workspace, workspace_bytes, d_in, count, d_out,
                                          out_capacity, bound);
  detail::range_keys* range = detail::reset_compress_state(d_workspace, count, stream);
  if constexpr (Codec::quantizer::needs_range) detail::launch_range(d_in, count, range, stream);
  detail::launch_encode<Codec>(d_workspace, d_in, count, d_out, d_size, range, bound, stream);
}

/// Decompresses the chunk at `d_in` (the caller holds `in_capacity` bytes there) into `count`
/// values at `d_out`. Problems with the chunk are recorded, not thrown: see throw_if_decode_failed.
template <class Codec, class T>
void decompress(void* d_workspace, std::size_t workspace_bytes, const void* d_in, std::size_t in_capacity, T* d_out,
                std::size_t count, cudaStream_t stream = nullptr) {
  detail::check_decompress_arguments("device::decompress", d_workspace, workspace_bytes, d_in, in_capacity, d_out, count);
  auto* report = static_cast<detail::decode_report*>(d_workspace);
  NCCLZ_CUDA_TRY(cudaMemsetAsync(report, 0, sizeof(detail::decode_report), stream));
  detail::launch_decode<Codec>(d_in, in_capacity, d_out, count, report, stream);
}

/// Waits for `stream` and throws format_error if the last decompress with this workspace met a
/// bad chunk.
inline void throw_if_decode_failed(const void* d_workspace, cudaStream_t stream = nullptr) {
  detail::decode_report r{};
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(&r, d_workspace, sizeof r, cudaMemcpyDeviceToHost, stream));
  NCCLZ_CUDA_TRY(cudaStreamSynchronize(stream));
  detail::throw_if_failed("device::decompress", r);
}

}  // namespace device
NCCLZ_END_KERNEL_NAMESPACE
