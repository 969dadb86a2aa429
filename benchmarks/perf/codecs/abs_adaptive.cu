// ncclz-perf with Codec<Quantizer<AbsBound>, EntropyCoder<Adaptive>>, in a translation unit of its own.
#include "../perf_rank.cuh"

int ncclz::perf::run_abs_adaptive(const rank_context& c) {
  return run_types<Codec<Quantizer<AbsBound>, EntropyCoder<Adaptive>>>(c);
}
