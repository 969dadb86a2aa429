// ncclz-perf with Codec<Quantizer<AbsBound>, EntropyCoder<Auto>>, in a translation unit of its own.
#include "../perf_rank.cuh"

int ncclz::perf::run_abs_auto(const rank_context& c) {
  return run_types<Codec<Quantizer<AbsBound>, EntropyCoder<Auto>>>(c);
}
