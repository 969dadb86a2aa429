// The kernels of group FIXED4_ADAPTIVE_F32_F16 (codec_kernels.cuh), compiled here once for every program.
#include "codec_kernels.cuh"

NCCLZ_INSTANTIATE_KERNELS(NCCLZ_KERNELS_FIXED4_ADAPTIVE_F32_F16)
