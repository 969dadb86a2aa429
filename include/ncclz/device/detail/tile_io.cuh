// Where the codec kernels read their values from and write them to: sources (input values,
// quantized as they are read, or a reduction's codes) and sinks (values, dequantized, or codes),
// moved between global memory and the warps' stages (tile_stage.cuh) in coalesced order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclz/codec.hpp"
#include "ncclz/config.hpp"
#include "ncclz/device/detail/block_scales.cuh"
#include "ncclz/device/detail/tile_stage.cuh"
#include "ncclz/format.hpp"
#include "ncclz/warp/warp_bits.cuh"

NCCLZ_BEGIN_KERNEL_NAMESPACE
namespace device::detail {

/// Vector of V consecutive values, 16 bytes.
template <class T>
struct alignas(16) vec16 {
  static constexpr int size = 16 / sizeof(T);
  T v[size];
};

/// Reads the warp's `count` values (up to 1024, from `src`) and stages their codes; returns the
/// code of the value before them (`src[-1]`, with `before_p`) where `with_before`, else 0.
/// Every load of a batch goes out before any is used, the value before the warp with them: two
/// memory latencies fewer on every warp's way (docs/design.md, "Tuning constants").
template <class Q, class T>
__device__ __forceinline__ std::int32_t stage_codes(const T* __restrict__ src, std::uint32_t count, const quant_params<T>& p,
                                                    warp_stage& stage, bool with_before, const quant_params<T>& before_p) {
  using V = vec16<T>;
  constexpr int kVec = V::size;
  constexpr int kIters = 1024 / (32 * kVec);
  // Loads in flight a thread: 128 bytes at most. All 16 of double's (256 bytes) spilled in the
  // Adaptive encoder (ptxas: 60 bytes).
  constexpr int kBatch = kIters < 8 ? kIters : 8;
  const unsigned lane = warp::lane_id();
  const bool vector_ok = count == 1024 && reinterpret_cast<std::uintptr_t>(src) % 16 == 0;
  const T before = with_before ? src[-1] : T{};
#pragma unroll
  for (int batch = 0; batch < kIters; batch += kBatch) {
    V x[kBatch];
    if (vector_ok) {
#pragma unroll
      for (int it = 0; it < kBatch; ++it) x[it] = reinterpret_cast<const V*>(src)[(batch + it) * 32 + lane];
    } else {
#pragma unroll
      for (int it = 0; it < kBatch; ++it) {
        const std::uint32_t e = ((batch + it) * 32 + lane) * kVec;
#pragma unroll
        for (int v = 0; v < kVec; ++v) x[it].v[v] = e + v < count ? src[e + v] : T{};
      }
    }
#pragma unroll
    for (int it = 0; it < kBatch; ++it) {
      const std::uint32_t e = ((batch + it) * 32 + lane) * kVec;
      // Codes go straight into the vector stores: an array of them stayed in local memory for the
      // 16-bit types (31 st.local a warp's rows, never read back).
      const auto code = [&](int v) -> std::int32_t {
        std::int32_t q = 0;
        return e + v >= count ? 0 : (Q::template quantize<T>(x[it].v[v], p, q) ? q : kOutlierCode);
      };
      std::int32_t* row = &stage[e / 32][e % 32];
      if constexpr (kVec == 2) {
        *reinterpret_cast<int2*>(row) = make_int2(code(0), code(1));
      } else {
#pragma unroll
        for (int v = 0; v < kVec; v += 4)  // 4 or 8 codes: one or two 16-byte stores
          *reinterpret_cast<int4*>(row + v) = make_int4(code(v), code(v + 1), code(v + 2), code(v + 3));
      }
    }
  }
  std::int32_t q = 0;
  return with_before && Q::template quantize<T>(before, before_p, q) ? q : 0;
}

__device__ __forceinline__ std::int32_t code_or_zero(std::int32_t c) { return c == kOutlierCode ? 0 : c; }

/// Where the encoder's codes come from: input values, quantized as they are read. A tile that
/// would not shrink is stored raw (its values), unless AllowsRaw is false: a reduction's chunk,
/// whose receiver adds codes, keeps every tile coded (as code_source does) and so is the chunk
/// code_source makes of quantize_kernel's codes, without those codes going through memory.
template <class T, bool AllowsRaw = true>
struct value_source {
  const T* values;
  static constexpr bool allows_raw = AllowsRaw;
  /// Stages the codes of `count` values from `first`; returns the code of the value before them
  /// (an outlier's: 0) with `before_p` where `with_before`, else 0.
  template <class Q>
  __device__ std::int32_t stage(std::uint64_t first, std::uint32_t count, const quant_params<T>& p, warp_stage& s,
                                bool with_before, const quant_params<T>& before_p) const {
    return stage_codes<Q>(values + first, count, p, s, with_before, before_p);
  }
  __device__ T outlier_value(std::uint64_t i) const { return values[i]; }
  __device__ T raw_value(std::uint64_t i) const { return values[i]; }
};

/// Codes already made (a collective's partial sum): kOutlierCode marks elements whose value sits
/// in `outlier_values`. Tiles are never raw, since raw tiles hold values and a partial sum must
/// stay in codes to be added exactly at the next hop.
template <class T>
struct code_source {
  const std::int32_t* codes;
  const T* outlier_values;
  static constexpr bool allows_raw = false;
  template <class Q>
  __device__ std::int32_t stage(std::uint64_t first, std::uint32_t count, const quant_params<T>&, warp_stage& s,
                                bool with_before, const quant_params<T>&) const {
    const unsigned lane = warp::lane_id();
    const std::int32_t* src = codes + first;
    const std::int32_t before = with_before ? code_or_zero(src[-1]) : 0;
    const bool vector_ok = count == 1024 && reinterpret_cast<std::uintptr_t>(src) % 16 == 0;
#pragma unroll
    for (int it = 0; it < 8; ++it) {
      const std::uint32_t e = (it * 32 + lane) * 4;
      int4 c;
      if (vector_ok) {
        c = reinterpret_cast<const int4*>(src)[it * 32 + lane];
      } else {
        c.x = e < count ? src[e] : 0;
        c.y = e + 1 < count ? src[e + 1] : 0;
        c.z = e + 2 < count ? src[e + 2] : 0;
        c.w = e + 3 < count ? src[e + 3] : 0;
      }
      *reinterpret_cast<int4*>(&s[e / 32][e % 32]) = c;
    }
    return before;
  }
  __device__ T outlier_value(std::uint64_t i) const { return outlier_values[i]; }
  __device__ T raw_value(std::uint64_t) const { return T{}; }  // never called: no raw tiles
};

/// Writes the warp's staged codes, dequantized, to `dst` (up to 1024 values) in coalesced order.
template <class Q, class T>
__device__ __forceinline__ void unstage_values(const warp_stage& stage, std::uint32_t count, const quant_params<T>& p,
                                               T* __restrict__ dst) {
  using V = vec16<T>;
  constexpr int kVec = V::size;
  constexpr int kIters = 1024 / (32 * kVec);
  const unsigned lane = warp::lane_id();
  const bool vector_ok = count == 1024 && reinterpret_cast<std::uintptr_t>(dst) % 16 == 0;
#pragma unroll
  for (int it = 0; it < kIters; ++it) {
    const std::uint32_t e = (it * 32 + lane) * kVec;
    const std::int32_t* row = &stage[e / 32][e % 32];
    V x;
#pragma unroll
    for (int v = 0; v < kVec; ++v) x.v[v] = Q::template dequantize<T>(row[v], p);
    if (vector_ok) {
      reinterpret_cast<V*>(dst)[it * 32 + lane] = x;
    } else {
#pragma unroll
      for (int v = 0; v < kVec; ++v)
        if (e + v < count) dst[e + v] = x.v[v];
    }
  }
}

/// Where the decoder puts a tile: values (the codec), or codes and outlier values (a collective's
/// partial sum, to be added to at the next hop; raw tiles are not accepted there).
template <class Q, class T>
struct value_sink {
  T* values;
  static constexpr bool accepts_raw = true;
  __device__ void unstage(const warp_stage& s, std::uint64_t first, std::uint32_t count, const quant_params<T>& p) const {
    unstage_values<Q>(s, count, p, values + first);
  }
  __device__ void value(std::uint64_t i, T v) const { values[i] = v; }
  __device__ void outlier(std::uint64_t i, T v) const { values[i] = v; }
};

template <class Q, class T>
struct code_sink {
  std::int32_t* codes;
  T* outlier_values;
  static constexpr bool accepts_raw = false;
  __device__ void unstage(const warp_stage& s, std::uint64_t first, std::uint32_t count, const quant_params<T>&) const {
    const unsigned lane = warp::lane_id();
    std::int32_t* dst = codes + first;
    const bool vector_ok = count == 1024 && reinterpret_cast<std::uintptr_t>(dst) % 16 == 0;
#pragma unroll
    for (int it = 0; it < 8; ++it) {
      const std::uint32_t e = (it * 32 + lane) * 4;
      const int4 c = *reinterpret_cast<const int4*>(&s[e / 32][e % 32]);
      if (vector_ok) {
        reinterpret_cast<int4*>(dst)[it * 32 + lane] = c;
      } else {
        if (e < count) dst[e] = c.x;
        if (e + 1 < count) dst[e + 1] = c.y;
        if (e + 2 < count) dst[e + 2] = c.z;
        if (e + 3 < count) dst[e + 3] = c.w;
      }
    }
  }
  __device__ void value(std::uint64_t, T) const {}  // never called: no raw tiles
  __device__ void outlier(std::uint64_t i, T v) const {
    codes[i] = kOutlierCode;
    outlier_values[i] = v;
  }
};

}  // namespace device::detail
NCCLZ_END_KERNEL_NAMESPACE
