// ncclz-perf with Codec<Quantizer<AbsBound>, EntropyCoder<FixedLength>>, in a translation unit of its own.
#include "../perf_rank.cuh"

int ncclz::perf::run_abs_fixed_length(const rank_context& c) {
  return run_types<Codec<Quantizer<AbsBound>, EntropyCoder<FixedLength>>>(c);
}
