// The chunk fuzzer's codecs of one quantizer (lossless): every coder and element type.
#include "fuzz_chunks.hpp"

namespace ncclz_fuzz {

void add_lossless(registry& r) { add_quantizer<ncclz::Quantizer<ncclz::Lossless>>(r, 0, "lossless"); }

}  // namespace ncclz_fuzz
