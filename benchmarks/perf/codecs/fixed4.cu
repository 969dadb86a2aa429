// ncclz-perf with Codec<Quantizer<FixedRate<4>>, EntropyCoder<FixedLength>>, in a translation unit of its own.
#include "../perf_rank.cuh"

int ncclz::perf::run_fixed4(const rank_context& c) {
  return run_types<Codec<Quantizer<FixedRate<4>>, EntropyCoder<FixedLength>>>(c);
}
