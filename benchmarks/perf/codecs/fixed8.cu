// ncclz-perf with Codec<Quantizer<FixedRate<8>>, EntropyCoder<FixedLength>>, in a translation unit of its own.
#include "../perf_rank.cuh"

int ncclz::perf::run_fixed8(const rank_context& c) {
  return run_types<Codec<Quantizer<FixedRate<8>>, EntropyCoder<FixedLength>>>(c);
}
