// Smallest and largest finite value of an input, in one read, for RelBound.
//
// Values are mapped to unsigned keys whose order is the float order, and combined with atomicMax
// on (key) and (~key): both start at 0, a key no finite value maps to, so one memset resets them.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ncclz/detail/config.hpp"
#include "ncclz/quantizer.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace kernels {

template <class T>
using key_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, unsigned long long>;

template <class T>
__device__ __forceinline__ key_t<T> order_key(T x) {
  using K = key_t<T>;
  K bits;
  memcpy(&bits, &x, sizeof bits);
  constexpr K sign = K{1} << (sizeof(K) * 8 - 1);
  return (bits & sign) ? ~bits : (bits | sign);
}

template <class T>
__device__ __forceinline__ T from_order_key(key_t<T> key) {
  using K = key_t<T>;
  constexpr K sign = K{1} << (sizeof(K) * 8 - 1);
  const K bits = (key & sign) ? (key & ~sign) : ~key;
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
  return {from_order_key<T>(static_cast<key_t<T>>(~keys->not_lo)), from_order_key<T>(static_cast<key_t<T>>(keys->hi))};
}

inline constexpr int kRangeThreads = 256;

template <class T>
__global__ void __launch_bounds__(kRangeThreads) range_kernel(const T* __restrict__ in, std::uint64_t count,
                                                              range_keys* keys) {
  using K = key_t<T>;
  K hi = 0, not_lo = 0;
  constexpr int kUnroll = 8;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < count; i += kUnroll * stride) {
    T x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x[u] = in[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (isfinite(x[u])) {
        const K k = order_key(x[u]);
        hi = max(hi, k);
        not_lo = max(not_lo, static_cast<K>(~k));
      }
    }
  }
  for (; i < count; i += stride) {
    if (isfinite(in[i])) {
      const K k = order_key(in[i]);
      hi = max(hi, k);
      not_lo = max(not_lo, static_cast<K>(~k));
    }
  }
#pragma unroll
  for (unsigned d = 16; d > 0; d >>= 1) {
    hi = max(hi, static_cast<K>(__shfl_xor_sync(warp::kFullMask, hi, d)));
    not_lo = max(not_lo, static_cast<K>(__shfl_xor_sync(warp::kFullMask, not_lo, d)));
  }
  if (warp::lane_id() == 0 && hi != 0) {
    atomicMax(&keys->hi, static_cast<unsigned long long>(hi));
    atomicMax(&keys->not_lo, static_cast<unsigned long long>(not_lo));
  }
}

}  // namespace kernels
NCCLZ_END_KERNEL_NAMESPACE
