// The chunk fuzzer's codecs of one quantizer (rel: 1e-3 of the range): every coder and element type.
#include "fuzz_chunks.hpp"

namespace ncclz_fuzz {

void add_rel(registry& r) { add_quantizer<ncclz::Quantizer<ncclz::RelBound>>(r, 1e-3, "rel"); }

}  // namespace ncclz_fuzz
