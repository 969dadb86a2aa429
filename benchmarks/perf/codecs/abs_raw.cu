// ncclz-perf with Codec<Quantizer<AbsBound>, EntropyCoder<Raw>>, in a translation unit of its own.
#include "../perf_rank.cuh"

int ncclz::perf::run_abs_raw(const rank_context& c) {
  return run_types<Codec<Quantizer<AbsBound>, EntropyCoder<Raw>>>(c);
}
