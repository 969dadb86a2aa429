// ncclz: compression-enabled GPU collectives over NCCL. The one header to include.
//
//   #include <ncclz/ncclz.cuh>
//   using Codec = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
//   ncclz::Compressor<Codec, float> c(max_count);
//
// Layers, from the top: compressor.cuh (owning host object) -> device/ (device-wide calls and
// their kernels) -> warp/ (warp-wide helpers); codec.hpp, quantizer.hpp,
// entropy_coder.hpp and format.hpp are plain C++ shared with host/ (the reference codec).
#pragma once

#include "ncclz/codec.hpp"
#include "ncclz/communicator.cuh"
#include "ncclz/compressor.cuh"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/entropy_coder.hpp"
#include "ncclz/error.hpp"
#include "ncclz/format.hpp"
#include "ncclz/quantizer.hpp"
#include "ncclz/version.hpp"
