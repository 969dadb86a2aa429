// The kernels of group ABS_ADAPTIVE_F64_BF16 (codec_kernels.cuh), compiled here once for every program.
#include "codec_kernels.cuh"

NCCLZ_INSTANTIATE_KERNELS(NCCLZ_KERNELS_ABS_ADAPTIVE_F64_BF16)
