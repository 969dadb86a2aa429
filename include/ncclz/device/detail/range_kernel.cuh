// Smallest and largest finite value of an input, in one read, for RelBound.
//
// Values are mapped to unsigned keys whose order is the float order, and combined with atomicMax
// on (key) and (~key): both start at 0, a key no finite value maps to, so one memset resets them.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ncclz/config.hpp"
#include "ncclz/quantizer.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail {

/// The bits of a value of T, and its key: 32 bits for the 16-bit types too, since warp shuffles
/// and atomics work on 32 and 64 bits.
template <class T>
using bits_t = std::conditional_t<sizeof(T) == 2, std::uint16_t, std::conditional_t<sizeof(T) == 4, std::uint32_t, unsigned long long>>;
template <class T>
using key_t = std::conditional_t<sizeof(T) == 8, unsigned long long, std::uint32_t>;

template <class T>
__device__ __forceinline__ key_t<T> order_key(T x) {
  using B = bits_t<T>;
  B bits;
  memcpy(&bits, &x, sizeof bits);
  constexpr B sign = B{1} << (sizeof(B) * 8 - 1);
  return static_cast<B>((bits & sign) ? ~bits : (bits | sign));
}

template <class T>
__device__ __forceinline__ T from_order_key(key_t<T> key) {
  using B = bits_t<T>;
  constexpr B sign = B{1} << (sizeof(B) * 8 - 1);
  const auto k = static_cast<B>(key);
  const auto bits = static_cast<B>((k & sign) ? (k & ~sign) : ~k);
  T x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

/// Device storage of a range being reduced: all zero means "no finite value seen".
struct range_keys {
  unsigned long long hi;      ///< max of order_key
  unsigned long long not_lo;  ///< max of ~order_key, i.e. ~min
};

template <class T>
__device__ __forceinline__ value_range<T> load_range(const range_keys* keys) {
  if (keys->hi == 0) return value_range<T>::empty();
  return {to_compute(from_order_key<T>(static_cast<key_t<T>>(~keys->not_lo))),
          to_compute(from_order_key<T>(static_cast<key_t<T>>(keys->hi)))};
}

inline constexpr int kRangeThreads = 256;

template <class T>
__device__ __forceinline__ void accumulate(T x, key_t<T>& hi, key_t<T>& not_lo) {
  if (isfinite(to_compute(x))) {
    const key_t<T> k = order_key(x);
    hi = max(hi, k);
    not_lo = max(not_lo, static_cast<key_t<T>>(~k));
  }
}

template <class T>
__global__ void __launch_bounds__(kRangeThreads) range_kernel(const T* __restrict__ in, std::uint64_t count,
                                                              range_keys* keys) {
  using K = key_t<T>;
  constexpr int kVec = 16 / sizeof(T);
  struct alignas(16) vec {
    T v[kVec];
  };
  K hi = 0, not_lo = 0;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  const std::uint64_t first = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  // 16-byte loads over the aligned body, four in flight per thread; scalar loads for the rest.
  const std::uint64_t vectors = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 ? count / kVec : 0;
  const vec* body = reinterpret_cast<const vec*>(in);
  constexpr int kUnroll = 4;
  std::uint64_t i = first;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    vec x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x[u] = body[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int v = 0; v < kVec; ++v) accumulate(x[u].v[v], hi, not_lo);
  }
  for (; i < vectors; i += stride)
#pragma unroll
    for (int v = 0; v < kVec; ++v) accumulate(body[i].v[v], hi, not_lo);
  for (std::uint64_t j = vectors * kVec + first; j < count; j += stride) accumulate(in[j], hi, not_lo);
#pragma unroll
  for (unsigned d = 16; d > 0; d >>= 1) {
    hi = max(hi, static_cast<K>(__shfl_xor_sync(warp::kFullMask, hi, d)));
    not_lo = max(not_lo, static_cast<K>(__shfl_xor_sync(warp::kFullMask, not_lo, d)));
  }
  // One pair of atomics a block, not a warp: the grid's 8448 warps' atomics on the same two words
  // took a third of the kernel (64 MiB f32: 32.7 -> 22.8 us, a plain read of it 22-24 us).
  constexpr int kWarps = kRangeThreads / 32;
  __shared__ K warp_hi[kWarps], warp_not_lo[kWarps];
  if (warp::lane_id() == 0) {
    warp_hi[threadIdx.x / 32] = hi;
    warp_not_lo[threadIdx.x / 32] = not_lo;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned w = 1; w < blockDim.x / 32; ++w) {  // blockDim.x <= kRangeThreads (launch bounds)
      hi = max(hi, warp_hi[w]);
      not_lo = max(not_lo, warp_not_lo[w]);
    }
    if (hi != 0) {
      atomicMax(&keys->hi, static_cast<unsigned long long>(hi));
      atomicMax(&keys->not_lo, static_cast<unsigned long long>(not_lo));
    }
  }
}

}  // namespace device::detail
NCCLZ_END_KERNEL_NAMESPACE
