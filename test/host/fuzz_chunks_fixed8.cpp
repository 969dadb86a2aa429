// The chunk fuzzer's codecs of one quantizer (fixed_rate, 8 bits): every coder and element type.
#include "fuzz_chunks.hpp"

namespace ncclz_fuzz {

void add_fixed8(registry& r) { add_quantizer<ncclz::Quantizer<ncclz::FixedRate<8>>>(r, 8, "fixed8"); }

}  // namespace ncclz_fuzz
