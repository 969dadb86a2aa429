// FixedRate with a bit count other than 8 or 4: the message must say which to use.
#include "ncclz/codec.hpp"

using Broken = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<6>>, ncclz::EntropyCoder<ncclz::FixedLength>>;
Broken broken;
