// The kernels of group FIXED8_ADAPTIVE_F32_F16 (codec_kernels.cuh), compiled here once for every program.
#include "codec_kernels.cuh"

NCCLZ_INSTANTIATE_KERNELS(NCCLZ_KERNELS_FIXED8_ADAPTIVE_F32_F16)
