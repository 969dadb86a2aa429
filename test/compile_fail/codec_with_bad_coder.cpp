// Passing a strategy tag where an EntropyCoder policy belongs: the message says what to use.
#include "ncclz/codec.hpp"

using Broken = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::FixedLength>;
Broken broken;
