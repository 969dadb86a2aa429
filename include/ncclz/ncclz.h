/* ncclz's C interface: NCCL-style entry points over libncclz, for C, Fortran (bind(C)), ctypes and
 * any caller that cannot instantiate the C++ templates of ncclz/ncclz.cuh, which stay the primary
 * interface. The codec is picked at run time from a fixed menu (ncclzCodec_t); each collective
 * keeps the bound of its C++ counterpart (docs/collectives.md) and returns ncclResult_t:
 *
 *   ncclzConfig config = NCCLZ_CONFIG_INITIALIZER;        (REL bound, the coder chosen by timing)
 *   ncclzComm_t zcomm;
 *   ncclzCommCreate(nccl_comm, &config, &zcomm);
 *   ncclzAllReduce(d_send, d_recv, count, ncclFloat, ncclSum, 1e-3, zcomm, stream);
 *   ncclzCheck(zcomm, stream);                            (waits; ncclInternalError on a bad chunk)
 *   ncclzCommDestroy(zcomm);                              (nccl_comm stays the caller's)
 *
 * On failure a call returns ncclInvalidArgument (bad argument, nothing queued), the NCCL status of
 * a failed NCCL call, ncclUnhandledCudaError, ncclSystemError (out of host memory) or
 * ncclInternalError (a corrupted chunk, anything else); ncclzGetLastError() says what and where,
 * for the calling thread. As in C++, the collectives wait on the host for compressed sizes: they
 * cannot be captured in a CUDA graph. */
#ifndef NCCLZ_NCCLZ_H
#define NCCLZ_NCCLZ_H

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stddef.h>
#include <stdint.h>

#include "ncclz/version.hpp" /* NCCLZ_VERSION: macros only, C as well as C++ */

#ifdef __cplusplus
extern "C" {
#endif

/** The codecs libncclz is built with: a quantizer (REL: the bound is relative to the value range
 *  of all ranks' inputs; ABS: absolute; FixedRate8/4: 8 or 4 bits a value with a step per block
 *  of 1024, the bound argument 8/4 or 0; Lossless: exact, the bound argument 0) and an entropy
 *  coder (Auto, the default: FixedLength or Adaptive per collective and size class, whichever the
 *  autotuner measured faster, or NCCL's own collective where that is faster still; FixedLength:
 *  fastest coding; Adaptive: the smallest of fixed-length, Huffman and zero-run per tile, never
 *  larger than FixedLength). docs/collectives.md states each one's bound. */
typedef enum {
  ncclzRelFixedLength = 0, /**< Quantizer<RelBound>, EntropyCoder<FixedLength> */
  ncclzAbsFixedLength = 1, /**< Quantizer<AbsBound>, EntropyCoder<FixedLength> */
  ncclzRelAdaptive = 2,    /**< Quantizer<RelBound>, EntropyCoder<Adaptive> */
  ncclzAbsAdaptive = 3,    /**< Quantizer<AbsBound>, EntropyCoder<Adaptive> */
  ncclzFixedRate8 = 4,     /**< Quantizer<FixedRate<8>>, EntropyCoder<FixedLength> */
  ncclzFixedRate4 = 5,     /**< Quantizer<FixedRate<4>>, EntropyCoder<FixedLength> */
  ncclzLossless = 6,       /**< Quantizer<Lossless>, EntropyCoder<FixedLength> */
  ncclzRelAuto = 7,        /**< Quantizer<RelBound>, EntropyCoder<Auto>: C++'s Codec<> */
  ncclzNumCodecs = 8
} ncclzCodec_t;

/** What ncclzCommCreate takes; start from NCCLZ_CONFIG_INITIALIZER (ncclz::communicator_config's
 *  defaults) and change what you need. */
typedef struct {
  ncclzCodec_t codec;
  /** Calls whose per-rank input is smaller go to NCCL's own collective, uncompressed; 0
   *  compresses every call; SIZE_MAX keeps the library's default. */
  size_t fallbackBelowBytes;
  /** 1: time ncclz against NCCL per collective and size class and keep the faster; 0: never. */
  int autotune;
  /** How long a host wait for a peer may last before the call fails and aborts the NCCL
   *  communicator, in milliseconds; 0 keeps the library's default (2 minutes). */
  int64_t timeoutMs;
} ncclzConfig;

#define NCCLZ_CONFIG_INITIALIZER {ncclzRelAuto, SIZE_MAX, 1, 0}

/** What the last collective on a communicator did (ncclz::call_info). */
typedef struct {
  const char* collective; /**< "allreduce", ...; "none" before the first call */
  const char* coder;      /**< the entropy coder that ran, "" if none */
  const char* schedule;   /**< "direct", "ring", "tree", or "nccl" (fallback) */
  uint64_t inputBytes;    /**< this rank's uncompressed payload */
  uint64_t bytesSent;     /**< bytes this rank handed to NCCL */
  uint64_t chunkBytes;    /**< compressed bytes of the chunk(s) this rank coded last */
  double ratio;           /**< their uncompressed bytes / chunkBytes */
  double errorBound;      /**< absolute bound every result element keeps */
  int sizeWaits;          /**< host waits for compressed sizes */
  int fallback;           /**< 1: the call went to NCCL's own collective, uncompressed */
} ncclzCallInfo;

typedef struct ncclzComm* ncclzComm_t;

/** Wraps the caller's NCCL communicator, which must outlive the result. Not collective. */
ncclResult_t ncclzCommCreate(ncclComm_t comm, const ncclzConfig* config, ncclzComm_t* out);
/** Frees what ncclzCommCreate made (device memory included); not the NCCL communicator. NULL is a no-op. */
ncclResult_t ncclzCommDestroy(ncclzComm_t comm);

ncclResult_t ncclzAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                            ncclRedOp_t op, double bound, ncclzComm_t comm, cudaStream_t stream);
ncclResult_t ncclzReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                                ncclRedOp_t op, double bound, ncclzComm_t comm, cudaStream_t stream);
ncclResult_t ncclzReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                         int root, double bound, ncclzComm_t comm, cudaStream_t stream);
ncclResult_t ncclzAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                            double bound, ncclzComm_t comm, cudaStream_t stream);
ncclResult_t ncclzBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                            double bound, ncclzComm_t comm, cudaStream_t stream);
ncclResult_t ncclzAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           double bound, ncclzComm_t comm, cudaStream_t stream);

/** Waits for `stream`; ncclInternalError if a chunk received since the last check was corrupted. */
ncclResult_t ncclzCheck(ncclzComm_t comm, cudaStream_t stream);
ncclResult_t ncclzGetLastCallInfo(ncclzComm_t comm, ncclzCallInfo* info);
/** The message of the calling thread's last failed call ("" if none); valid until its next call. */
const char* ncclzGetLastError(void);
/** NCCLZ_VERSION of the library (ncclz/version.hpp), to compare with the header's. */
int ncclzGetVersion(void);

#ifdef __cplusplus
}
#endif

#endif /* NCCLZ_NCCLZ_H */
