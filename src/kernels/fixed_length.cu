// The kernels of group FIXED_LENGTH (codec_kernels.cuh), compiled here once for every program.
#include "codec_kernels.cuh"

NCCLZ_INSTANTIATE_KERNELS(NCCLZ_KERNELS_FIXED_LENGTH)
