// A user quantizer whose id is not an ncclz::quantizer_id: Codec must say what `id` has to be.
#include "ncclz/codec.hpp"

struct PlainIntId : ncclz::Quantizer<ncclz::AbsBound> {
  static constexpr int id = 7;
};

using Broken = ncclz::Codec<PlainIntId, ncclz::EntropyCoder<ncclz::FixedLength>>;
Broken broken;
