// A user quantizer that forgot dequantize: Codec must say which member is missing.
#include "ncclz/codec.hpp"

struct HalfStep {
  static constexpr ncclz::quantizer_id id = ncclz::quantizer_id::user;
  static constexpr bool needs_range = false;
  static constexpr const char* name = "half_step";
  template <class T>
  static ncclz::quant_params<T> make_params(double bound, ncclz::value_range<T>) {
    return {T(bound), T(1 / bound), bound / 2, bound};
  }
  template <class T>
  static bool quantize(T x, const ncclz::quant_params<T>& p, std::int32_t& q) {
    q = static_cast<std::int32_t>(x * p.inv_step);
    return true;
  }
};

using Broken = ncclz::Codec<HalfStep, ncclz::EntropyCoder<ncclz::FixedLength>>;
Broken broken;
