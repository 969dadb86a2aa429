// ncclz-perf with Codec<Quantizer<RelBound>, EntropyCoder<FixedLength>>, in a translation unit of its own.
#include "../perf_rank.cuh"

int ncclz::perf::run_rel_fixed_length(const rank_context& c) {
  return run_types<Codec<Quantizer<RelBound>, EntropyCoder<FixedLength>>>(c);
}
