// The chunk fuzzer's codecs of one quantizer (fixed_rate, 4 bits): every coder and element type.
#include "fuzz_chunks.hpp"

namespace ncclz_fuzz {

void add_fixed4(registry& r) { add_quantizer<ncclz::Quantizer<ncclz::FixedRate<4>>>(r, 4, "fixed4"); }

}  // namespace ncclz_fuzz
