// ncclz-perf with Codec<Quantizer<FixedRate<4>>, EntropyCoder<Auto>>, in a translation unit of its own.
#include "../perf_rank.cuh"

int ncclz::perf::run_fixed4_auto(const rank_context& c) {
  return run_types<Codec<Quantizer<FixedRate<4>>, EntropyCoder<Auto>>>(c);
}
