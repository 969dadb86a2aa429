// ncclz: compression-enabled GPU collectives over NCCL. The one header to include.
//
//   #include <ncclz/ncclz.cuh>
//   ncclz::Compressor<ncclz::Codec<>, float> c(max_count);      // RelBound, EntropyCoder<Auto>
//   ncclz::Communicator<ncclz::Codec<>> comm(nccl_comm);
//
// Layers, from the top: compressor.cuh (owning host object) -> device/ (device-wide calls and
// their kernels) -> warp/ (warp-wide helpers); codec.hpp, quantizer.hpp,
// entropy_coder.hpp and format.hpp are plain C++ shared with host/ (the reference codec).
#pragma once

// What a translation unit needs for ncclz, each named here before any error it would cause further
// down. dependency('ncclz') (Meson), ncclz.pc and the CMake target ncclz::ncclz add the flags.
#if !defined(__CUDACC__)
#  error "ncclz/ncclz.cuh is CUDA: compile this file with nvcc (host-only code can use ncclz/host/*.hpp)"
#elif __cplusplus < 202002L
#  error "ncclz needs C++20: compile with -std=c++20 (nvcc's default is C++17)"
#elif !defined(__CUDACC_RELAXED_CONSTEXPR__) && !defined(__clang__)
#  error "ncclz needs nvcc's --expt-relaxed-constexpr (its device code calls constexpr functions of the C++ library)"
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#  error "ncclz's kernels need compute capability 8.0 or newer: build for sm_80+, e.g. -gencode=arch=compute_90,code=sm_90"
#endif

#include "ncclz/codec.hpp"
#include "ncclz/communicator.cuh"
#include "ncclz/compressor.cuh"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/entropy_coder.hpp"
#include "ncclz/error.hpp"
#include "ncclz/format.hpp"
#include "ncclz/quantizer.hpp"
#include "ncclz/version.hpp"
