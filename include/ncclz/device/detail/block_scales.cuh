// Per-block steps of a blockwise quantizer (Quantizer<FixedRate<Bits>>): the maxima of an input's
// scale blocks, and what the encode, decode and element-wise kernels need from them. For any
// other quantizer every helper here gives back the chunk's parameters and writes nothing, so the
// kernels call them unconditionally.
//
// A scale block is 1024 consecutive values of a chunk (format::kScaleBlockElements): one warp's
// share of a tile, 8 a tile. Block maxima are the largest |x| over the block's finite values, held
// as doubles (exact for every element type; non-negative doubles order like their bits, so
// atomicMax on the bits merges them and NCCL's ncclMax on ncclFloat64 merges them across ranks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "ncclz/config.hpp"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/format.hpp"
#include "ncclz/quantizer.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail {

/// Where the encoder finds the maxima of a chunk's scale blocks: block_max[b] for block b of the
/// chunk, and chunk_max, at least the largest of them (the header's step and error_bound). Null
/// for quantizers that are not blockwise.
struct block_scales {
  const double* block_max = nullptr;
  const double* chunk_max = nullptr;
};

inline constexpr int kBlockMaxThreads = 256;

/// block_max[b] = the largest finite |x| of scale block b of `in` (0 when it has none), one warp a
/// block; *overall = max(*overall, every block's). `overall` must be reset (0.0) by the caller.
template <class T>
__global__ void __launch_bounds__(kBlockMaxThreads)
    block_max_kernel(const T* __restrict__ in, std::uint64_t count, double* __restrict__ block_max, double* overall) {
  using C = compute_t<T>;
  constexpr int kVec = 16 / sizeof(T);
  struct alignas(16) vec {
    T v[kVec];
  };
  const unsigned lane = warp::lane_id();
  const std::uint64_t blocks = format::scale_count(count);
  const std::uint64_t warps = std::uint64_t{gridDim.x} * (blockDim.x / 32);
  C largest = 0;
  for (std::uint64_t b = std::uint64_t{blockIdx.x} * (blockDim.x / 32) + threadIdx.x / 32; b < blocks; b += warps) {
    const std::uint64_t first = b * format::kScaleBlockElements;
    const std::uint64_t n = count - first < format::kScaleBlockElements ? count - first : format::kScaleBlockElements;
    const T* src = in + first;
    C m = 0;
    const auto fold = [&m](T x) {
      const C a = fabs(to_compute(x));
      if (a <= std::numeric_limits<C>::max()) m = a > m ? a : m;  // NaN and Inf are left out
    };
    if (n == format::kScaleBlockElements && reinterpret_cast<std::uintptr_t>(src) % 16 == 0) {
#pragma unroll
      for (int it = 0; it < static_cast<int>(format::kScaleBlockElements) / (32 * kVec); ++it) {
        const vec x = reinterpret_cast<const vec*>(src)[it * 32 + lane];
#pragma unroll
        for (int v = 0; v < kVec; ++v) fold(x.v[v]);
      }
    } else {
      for (std::uint64_t e = lane; e < n; e += 32) fold(src[e]);
    }
#pragma unroll
    for (unsigned d = 16; d > 0; d >>= 1) {
      const C o = __shfl_xor_sync(warp::kFullMask, m, d);
      m = o > m ? o : m;
    }
    if (lane == 0) block_max[b] = static_cast<double>(m);
    largest = m > largest ? m : largest;
  }
  if (lane == 0 && largest > C(0)) {
    atomicMax(reinterpret_cast<unsigned long long*>(overall),
              static_cast<unsigned long long>(__double_as_longlong(static_cast<double>(largest))));
  }
}

/// steps[b] = the step of block b (Q::block_step), widened to double (exactly), for the
/// element-wise kernels of the reductions.
template <class Q, class T>
__global__ void __launch_bounds__(kBlockMaxThreads)
    block_steps_kernel(const double* __restrict__ block_max, std::uint64_t blocks, double* __restrict__ steps) {
  for (std::uint64_t b = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; b < blocks;
       b += std::uint64_t{gridDim.x} * blockDim.x) {
    steps[b] = static_cast<double>(Q::template block_step<T>(block_max[b]));
  }
}

/// Bytes of a chunk's step table: format::scale_table_bytes for a blockwise quantizer, else 0.
template <class Q, class T>
NCCLZ_HOST_DEVICE constexpr std::uint64_t step_table_bytes(std::uint64_t count) {
  if constexpr (is_blockwise_v<Q>) return format::scale_table_bytes(count, sizeof(T));
  else return 0;
}

/// The parameters block `block` of the chunk is quantized with: its own (blockwise), else the
/// chunk's.
template <class Q, class T>
__device__ __forceinline__ quant_params<T> block_params_at(const quant_params<T>& chunk, const block_scales& s,
                                                           std::uint64_t block) {
  if constexpr (is_blockwise_v<Q>) return Q::template block_params<T>(s.block_max[block]);
  else return chunk;
}

/// The chunk-wide parameters the encoder writes into the header. Blockwise: those of the largest
/// block (error_bound = its step / 2, bound = Bits), with step 1 when no block has a nonzero step
/// (a header's step must be > 0; the decoder reads the step table instead).
template <class Q, class T>
__device__ __forceinline__ quant_params<T> header_params(const quant_params<T>& chunk, const block_scales& s) {
  if constexpr (is_blockwise_v<Q>) {
    quant_params<T> h = Q::template block_params<T>(s.chunk_max ? *s.chunk_max : 0.0);
    if (!(h.step > compute_t<T>(0))) h.step = compute_t<T>(1);
    return h;
  } else {
    return chunk;
  }
}

/// Stores block `block`'s step in the chunk's step table (blockwise only; one thread a block),
/// and the table's zero padding with the last block. `flags`: the chunk's (where the table is).
template <class Q, class T>
__device__ __forceinline__ void store_block_step(std::byte* chunk, std::uint64_t count, std::uint64_t block,
                                                 const quant_params<T>& p, std::uint32_t flags) {
  if constexpr (is_blockwise_v<Q>) {
    using C = compute_t<T>;
    auto* table = reinterpret_cast<C*>(chunk + sizeof(format::chunk_header) + format::step_table_offset(format::tile_count(count), flags));
    table[block] = p.step;
    const std::uint64_t blocks = format::scale_count(count);
    if (block + 1 == blocks && (blocks * sizeof(C)) % 8 != 0) table[blocks] = C(0);
  }
}

/// Decode: reads the steps of tile `tile`'s blocks from the chunk's step table (lanes 0..7) and
/// checks them (finite, >= 0); the verdict is the same in every warp of the tile, so a caller may
/// leave the whole thread block on false. `step` becomes warp `warp_index`'s block step. A no-op
/// that returns true unless blockwise. The header check has made sure the table is in the chunk.
/// `flags`: the chunk's (where the table is).
template <class Q, class T>
__device__ __forceinline__ bool load_block_step(const std::byte* chunk, std::uint64_t count, std::uint32_t tile,
                                                unsigned warp_index, compute_t<T>& step, std::uint32_t flags) {
  if constexpr (is_blockwise_v<Q>) {
    using C = compute_t<T>;
    const auto* table = reinterpret_cast<const C*>(chunk + sizeof(format::chunk_header) +
                                                   format::step_table_offset(format::tile_count(count), flags));
    const unsigned lane = warp::lane_id();
    const std::uint64_t block = std::uint64_t{tile} * (format::kTileElements / format::kScaleBlockElements) + lane;
    C s = 0;
    bool bad = false;
    if (lane < format::kTileElements / format::kScaleBlockElements && block < format::scale_count(count)) {
      s = table[block];
      bad = !(s >= C(0) && s <= std::numeric_limits<C>::max());
    }
    step = __shfl_sync(warp::kFullMask, s, static_cast<int>(warp_index));
    return !__any_sync(warp::kFullMask, bad);
  } else {
    return true;
  }
}

/// Quantizes `count` values with the steps of their scale blocks (blockwise quantize_kernel):
/// one warp a block, lanes on consecutive elements.
template <class Q, class T>
__device__ __forceinline__ void quantize_blockwise(const T* __restrict__ in, std::uint64_t count, std::int32_t* __restrict__ codes,
                                                   T* __restrict__ outlier_values, const block_scales& s) {
  const unsigned lane = warp::lane_id();
  const std::uint64_t blocks = format::scale_count(count);
  const std::uint64_t warps = std::uint64_t{gridDim.x} * (blockDim.x / 32);
  for (std::uint64_t b = std::uint64_t{blockIdx.x} * (blockDim.x / 32) + threadIdx.x / 32; b < blocks; b += warps) {
    const quant_params<T> p = Q::template block_params<T>(s.block_max[b]);
    const std::uint64_t first = b * format::kScaleBlockElements;
    const std::uint64_t end = count - first < format::kScaleBlockElements ? count : first + format::kScaleBlockElements;
    for (std::uint64_t i = first + lane; i < end; i += 32) quantize_or_keep<Q>(in[i], p, codes[i], outlier_values[i]);
  }
}

}  // namespace device::detail
NCCLZ_END_KERNEL_NAMESPACE
