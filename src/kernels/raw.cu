// The kernels of group RAW (codec_kernels.cuh), compiled here once for every program.
#include "codec_kernels.cuh"

NCCLZ_INSTANTIATE_KERNELS(NCCLZ_KERNELS_RAW)
