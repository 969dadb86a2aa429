// The kernels of group HUFFMAN (codec_kernels.cuh), compiled here once for every program.
#include "codec_kernels.cuh"

NCCLZ_INSTANTIATE_KERNELS(NCCLZ_KERNELS_HUFFMAN)
