// The public types that go with Communicator: its configuration, what a call reports, and the
// NCCL name of an element type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <nccl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ncclz/codec.hpp"

namespace ncclz {

/// NCCL's name of an element type ncclz supports.
template <class T>
constexpr ncclDataType_t nccl_type() {
  static_assert(is_supported_value_type_v<T>, "ncclz::nccl_type<T>: T must be float, double, __half or __nv_bfloat16");
  if constexpr (std::is_same_v<T, float>) return ncclFloat;
  else if constexpr (std::is_same_v<T, double>) return ncclDouble;
  else if constexpr (std::is_same_v<T, __half>) return ncclFloat16;
  else return ncclBfloat16;
}

/// What the last collective did, for the caller's logs and benchmarks.
struct call_info {
  const char* collective = "none";
  const char* coder = "";           ///< the entropy coder that ran ("fixed_length", "adaptive", ...; "none": NCCL's route)
  const char* schedule = "";        ///< algorithm run: "direct", "ring", "tree", "recursive_doubling", or "nccl" (fallback)
  std::uint64_t input_bytes = 0;    ///< this rank's uncompressed payload
  std::uint64_t bytes_sent = 0;     ///< bytes this rank handed to NCCL (payloads, sizes, range)
  std::uint64_t chunk_bytes = 0;    ///< compressed bytes of the chunk(s) this rank coded last
  double ratio = 0;                 ///< their uncompressed bytes / chunk_bytes
  double error_bound = 0;           ///< absolute bound every result element keeps (on ranks that compressed)
  int parts = 0;                    ///< pipeline parts the message was cut into (Pipeline)
  int size_waits = 0;               ///< host waits for compressed sizes
  double size_wait_ms = 0;          ///< host time spent in them (includes GPU work still queued)
  bool fallback = false;            ///< the call went to NCCL's own collective, uncompressed
  /// The autotuner's probes of this call's size class: medians of the slowest rank's times,
  /// timed on the stream (0 until it decided): NCCL's route, the fastest compressed route, and
  /// each coder's compressed route (with EntropyCoder<Auto> both; otherwise the Codec's coder
  /// alone, 0 for the other); and how many decisions it has made for the class (probes are
  /// repeated every autotune_recheck_calls).
  float autotune_ncclz_ms = 0, autotune_nccl_ms = 0;
  float autotune_fixed_length_ms = 0, autotune_adaptive_ms = 0;
  int autotune_decisions = 0;
};

struct communicator_config {
  /// How long a host wait may last before the communicator is aborted and the call throws.
  std::chrono::milliseconds timeout{std::chrono::minutes(2)};
  /// Calls whose per-rank input is smaller go to NCCL's own collective, uncompressed and exact
  /// (call_info::fallback says so): there the host waits for compressed sizes cost more than
  /// compression saves. 0 compresses every call. The default is the least size at which a
  /// compressed call was measured faster than NCCL (docs/design.md); above it the autotuner
  /// decides. As with NCCL, the ranks must agree on the count for the fallback path, which does
  /// not check it.
  std::size_t fallback_below_bytes = std::size_t{1} << 20;
  /// Above that threshold, probe the routes for each collective, element size and size class
  /// (power of two of the bytes) and keep the fastest: NCCL's own collective and the compressed
  /// route with each coder the Codec may run (EntropyCoder<Auto>: FixedLength and Adaptive). A
  /// warm call of each, 3 probes of each interleaved, the medians of the slowest rank's times;
  /// the faster coder's route, and only where it wins against NCCL by more than 5%; all ranks
  /// decide together. This keeps ncclz at NCCL's speed on fast links (NVLink), where compression
  /// cannot pay. With fallback_below_bytes = 0 and autotune = false every call is compressed
  /// (EntropyCoder<Auto>: with Adaptive).
  bool autotune = true;
  /// Calls of a size class after which the autotuner probes the routes again.
  std::uint64_t autotune_recheck_calls = 1000;
  /// Direct reductions are cut into parts of at least this many bytes of each rank's input (at
  /// most the Pipeline's limit), so that coding one part overlaps moving another; every part
  /// costs its own size exchanges (docs/design.md: how 64 MiB was chosen).
  std::size_t pipeline_part_bytes = std::size_t{64} << 20;
  /// Sums that move on (allreduce, reduce) with 4 ranks or more: each rank quantizes with
  /// bound / (n + k) and each owner requantizes its reduced codes k times coarser (k the largest
  /// power of two <= n) before it sends them, instead of bound / n and the sums as they are
  /// (detail/sum_bound.hpp says why and what it saves). Every
  /// rank must pass the same value. Not for FixedRate (its steps are the blocks') nor Lossless.
  bool split_sum_bound = true;
  /// The direct reductions move their payloads and size exchanges on streams of the device's
  /// greatest priority, joined to the caller's: where other work shares the GPU, NCCL's kernels
  /// start ahead of queued coding blocks (docs/design.md has the measurement).
  bool priority_transfers = true;
  /// Record CUDA events at the phase boundaries of each compressed call, for phase_times().
  bool profile_phases = false;
  /// Fault injection, for tests of what a corrupted chunk does: the rank of this number flips
  /// one bit in the middle of each chunk it codes for an allgather or a broadcast, after coding
  /// it, as a link that corrupts data would. Under a Codec with tile checksums (the default) the
  /// decodes of that chunk fail and check() throws on every rank. -1 (the default): none.
  int flip_bit_in_chunks_of_rank = -1;
};

/// GPU-timeline time of one kind of phase of the last call (Communicator::phase_times).
struct phase_time {
  const char* phase;  ///< "codec" (range, quantize, encode, decode, reduce), "size exchange",
                      ///< "host gap" (stream idle while the host reads sizes), "transfer" (payloads)
  float ms;
};

}  // namespace ncclz
