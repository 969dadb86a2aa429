// ncclz-perf with Codec<Quantizer<RelBound>, EntropyCoder<Auto>>, in a translation unit of its own.
#include "../perf_rank.cuh"

int ncclz::perf::run_rel_auto(const rank_context& c) {
  return run_types<Codec<Quantizer<RelBound>, EntropyCoder<Auto>>>(c);
}
