/* The C interface (ncclz/ncclz.h) from C.
 *   c_api_test arguments   refusals that need no GPU: each call returns ncclInvalidArgument and
 *                          ncclzGetLastError() names what was wrong
 *   c_api_test gpu         every collective and dtype on a one-rank NCCL communicator, each
 *                          element checked against its bound; exits 77 without a GPU */
#include <ncclz/ncclz.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void expect_invalid(const char* what, ncclResult_t got, const char* message_part) {
  const char* message = ncclzGetLastError();
  if (got != ncclInvalidArgument || strstr(message, message_part) == NULL) {
    printf("FAIL: %s returned %d with \"%s\"; expected ncclInvalidArgument (%d) with \"%s\"\n", what, (int)got, message,
           (int)ncclInvalidArgument, message_part);
    ++failures;
  } else {
    printf("ok: %s -> ncclInvalidArgument: %s\n", what, message);
  }
}

static int arguments(void) {
  ncclzConfig config = NCCLZ_CONFIG_INITIALIZER;
  ncclzComm_t comm = NULL;
  float buffer[4] = {0};
  if (ncclzGetVersion() != NCCLZ_VERSION) {
    printf("FAIL: the library is version %d, the header %d\n", ncclzGetVersion(), NCCLZ_VERSION);
    ++failures;
  }
  expect_invalid("ncclzCommCreate(out NULL)", ncclzCommCreate(NULL, &config, NULL), "out is NULL");
  expect_invalid("ncclzCommCreate(config NULL)", ncclzCommCreate(NULL, NULL, &comm), "config is NULL");
  config.codec = ncclzNumCodecs;
  expect_invalid("ncclzCommCreate(codec out of range)", ncclzCommCreate(NULL, &config, &comm), "config->codec");
  config.codec = ncclzAbsAdaptive;
  config.autotune = 2;
  expect_invalid("ncclzCommCreate(autotune 2)", ncclzCommCreate(NULL, &config, &comm), "config->autotune");
  config.autotune = 0;
  expect_invalid("ncclzCommCreate(NCCL communicator NULL)", ncclzCommCreate(NULL, &config, &comm),
                 "the NCCL communicator is null");
  if (comm != NULL) {
    printf("FAIL: a failed ncclzCommCreate left *out set\n");
    ++failures;
  }
  expect_invalid("ncclzAllReduce(comm NULL)", ncclzAllReduce(buffer, buffer, 4, ncclFloat32, ncclSum, 1e-3, NULL, NULL),
                 "comm is NULL");
  expect_invalid("ncclzGetLastCallInfo(comm NULL)", ncclzGetLastCallInfo(NULL, NULL), "comm is NULL");
  if (ncclzCommDestroy(NULL) != ncclSuccess) {
    printf("FAIL: ncclzCommDestroy(NULL) is not a no-op\n");
    ++failures;
  }
  return failures == 0 ? 0 : 1;
}

#define CHECK(call)                                                                 \
  do {                                                                              \
    if ((call) != 0) {                                                              \
      printf("FAIL: %s (line %d): %s\n", #call, __LINE__, ncclzGetLastError());     \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

/* One rank: every collective gives back the input within the bound (a sum of one value, its min
 * and max are the value). Each element is checked. */
static int gpu(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("SKIP: no CUDA device\n");
    return 77;
  }
  enum { n = 1 << 20 };
  const double rel_bound = 1e-3;
  float* host = malloc(n * sizeof(float));
  float* back = malloc(n * sizeof(float));
  for (int i = 0; i < n; ++i) host[i] = (float)sin(i * 1e-3) * 10.0f;
  float *d_in = NULL, *d_out = NULL;
  CHECK(cudaMalloc((void**)&d_in, n * sizeof(float)));
  CHECK(cudaMalloc((void**)&d_out, n * sizeof(float)));
  CHECK(cudaMemcpy(d_in, host, n * sizeof(float), cudaMemcpyHostToDevice));
  int device = 0;
  ncclComm_t nccl = NULL;
  CHECK(ncclCommInitAll(&nccl, 1, &device));
  for (int codec = 0; codec < ncclzNumCodecs; ++codec) {
    ncclzConfig config = NCCLZ_CONFIG_INITIALIZER;
    config.codec = (ncclzCodec_t)codec;
    config.fallbackBelowBytes = 0; /* compress every call */
    config.autotune = 0;
    ncclzComm_t comm = NULL;
    CHECK(ncclzCommCreate(nccl, &config, &comm));
    /* FixedRate takes its bits (or 0) as the bound, Lossless 0. */
    const double bound = codec == ncclzFixedRate8 ? 8.0 : codec == ncclzFixedRate4 ? 4.0 : codec == ncclzLossless ? 0.0 : rel_bound;
    for (int which = 0; which < 6; ++which) {
      CHECK(cudaMemset(d_out, 0, n * sizeof(float)));
      switch (which) {
        case 0: CHECK(ncclzAllReduce(d_in, d_out, n, ncclFloat32, ncclSum, bound, comm, NULL)); break;
        case 1: CHECK(ncclzReduceScatter(d_in, d_out, n, ncclFloat32, ncclMax, bound, comm, NULL)); break;
        case 2: CHECK(ncclzReduce(d_in, d_out, n, ncclFloat32, ncclMin, 0, bound, comm, NULL)); break;
        case 3: CHECK(ncclzAllGather(d_in, d_out, n, ncclFloat32, bound, comm, NULL)); break;
        case 4: CHECK(ncclzBroadcast(d_in, d_out, n, ncclFloat32, 0, bound, comm, NULL)); break;
        default: CHECK(ncclzAlltoAll(d_in, d_out, n, ncclFloat32, bound, comm, NULL)); break;
      }
      CHECK(ncclzCheck(comm, NULL));
      ncclzCallInfo info;
      CHECK(ncclzGetLastCallInfo(comm, &info));
      CHECK(cudaMemcpy(back, d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
      long misses = 0;
      for (int i = 0; i < n; ++i) {
        /* A sum also rounds to float once: half an ulp more (docs/collectives.md). */
        const double slack = which == 0 ? fabs((double)host[i]) * FLT_EPSILON / 2 : 0.0;
        misses += !(fabs((double)host[i] - back[i]) <= info.errorBound + slack);
      }
      printf("%s codec %d: %s, ratio %.2f, bound %.3g: %ld outside\n", misses ? "FAIL" : "ok", codec, info.collective,
             info.ratio, info.errorBound, misses);
      failures += misses != 0;
    }
    CHECK(ncclzCommDestroy(comm));
  }
  CHECK(ncclCommDestroy(nccl));
  cudaFree(d_in);
  cudaFree(d_out);
  free(host);
  free(back);
  return failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "arguments") == 0) return arguments();
  if (argc == 2 && strcmp(argv[1], "gpu") == 0) return gpu();
  printf("usage: c_api_test arguments|gpu\n");
  return 2;
}
