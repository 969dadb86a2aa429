// The chunk fuzzer's codecs of one quantizer (abs: 1e-3): every coder and element type.
#include "fuzz_chunks.hpp"

namespace ncclz_fuzz {

void add_abs(registry& r) { add_quantizer<ncclz::Quantizer<ncclz::AbsBound>>(r, 1e-3, "abs"); }

}  // namespace ncclz_fuzz
