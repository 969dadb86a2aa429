/* The C interface (ncclz/ncclz.h) from C.
 *   c_api_test arguments   refusals that need no GPU: each call returns ncclInvalidArgument and
 *                          ncclzGetLastError() names what was wrong
 *   c_api_test gpu         every collective and codec on a one-rank NCCL communicator, each
 *                          element checked against its bound; exits 77 without a GPU
 *   c_api_test cluster     one rank of N (scripts/emulated_cluster.sh -n N): every collective and
 *                          codec with a different input on each rank, each element checked
 *                          against a float64 reference and the bound (Lossless: equal to the sum
 *                          in rank order); then ranks that disagree on the bound must all fail */
#define _POSIX_C_SOURCE 200809L /* nanosleep, getpid, unlink */
#include <ncclz/ncclz.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* An ncclz communicator of `codec` that compresses every call (no fallback, no autotuning). */
static ncclResult_t create_compressing(ncclComm_t nccl, int codec, ncclzComm_t* out) {
  ncclzConfig config = NCCLZ_CONFIG_INITIALIZER;
  config.codec = (ncclzCodec_t)codec;
  config.fallbackBelowBytes = 0;
  config.autotune = 0;
  return ncclzCommCreate(nccl, &config, out);
}

/* The bound argument of `codec`: FixedRate takes its bits (or 0), Lossless 0, the others `lossy`. */
static double bound_of(int codec, double lossy) {
  return codec == ncclzFixedRate8 ? 8.0 : codec == ncclzFixedRate4 ? 4.0 : codec == ncclzLossless ? 0.0 : lossy;
}

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
    ncclzComm_t comm = NULL;
    CHECK(create_compressing(nccl, codec, &comm));
    const double bound = bound_of(codec, rel_bound);
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

/* ---- cluster: the C API on N ranks, joined through the launcher's bootstrap file ---------------- */

static int env_int(const char* name) {
  const char* v = getenv(name);
  return v != NULL ? atoi(v) : -1;
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* Rank 0 makes the id and writes it atomically (a temporary file, then rename); the others poll
 * for it, as ncclz/bootstrap.hpp does for the C++ programs. */
static int exchange_id(int rank, const char* path, ncclUniqueId* id) {
  if (rank == 0) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    if (ncclGetUniqueId(id) != ncclSuccess) return 1;
    FILE* f = fopen(tmp, "wb");
    if (f == NULL || fwrite(id, sizeof *id, 1, f) != 1 || fclose(f) != 0) return 1;
    return rename(tmp, path) == 0 ? 0 : 1;
  }
  for (int waited = 0; waited < 60000; waited += 10) {
    FILE* f = fopen(path, "rb");
    if (f != NULL) {
      const size_t got = fread(id, sizeof *id, 1, f);
      fclose(f);
      if (got == 1) return 0;
    }
    sleep_ms(10);
  }
  printf("FAIL: rank %d found no id in %s within 60 s\n", rank, path);
  return 1;
}

static float input_value(int rank, size_t i) { return (float)(10.0 * sin(1e-3 * (double)i + 0.7 * rank)); }

/* What element i of `which`'s result must be, and for a Lossless sum the float sum in rank order. */
static double expected(int which, int nranks, size_t count, size_t i, int* exact_sum, float* rank_order) {
  double r = 0;
  float in_order = 0;
  *exact_sum = 0;
  switch (which) {
    case 0: /* allreduce, sum */
      for (int k = 0; k < nranks; ++k) r += input_value(k, i), in_order += input_value(k, i);
      *exact_sum = 1;
      *rank_order = in_order;
      return r;
    case 1: { /* reduce_scatter, max: this element is at offset rank*count + i (caller adds) */
      r = -INFINITY;
      for (int k = 0; k < nranks; ++k) r = fmax(r, input_value(k, i));
      return r;
    }
    case 2: /* reduce to root 0, min */
      r = INFINITY;
      for (int k = 0; k < nranks; ++k) r = fmin(r, input_value(k, i));
      return r;
    case 3: return input_value((int)(i / count), i % count);            /* allgather */
    case 4: return input_value(nranks - 1, i);                          /* broadcast from the last rank */
    default: return NAN;                                                 /* alltoall: the caller computes it */
  }
}

static int cluster(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("SKIP: no CUDA device\n");
    return 77;
  }
  const int rank = env_int("NCCLZ_RANK"), nranks = env_int("NCCLZ_NRANKS");
  const char* path = getenv("NCCLZ_BOOTSTRAP_FILE");
  if (rank < 0 || nranks < 1 || rank >= nranks || path == NULL) {
    printf("FAIL: run me as c_api_test cluster under scripts/emulated_cluster.sh (NCCLZ_RANK, NCCLZ_NRANKS, "
           "NCCLZ_BOOTSTRAP_FILE)\n");
    return 1;
  }
  CHECK(cudaSetDevice(rank % devices));
  ncclUniqueId id;
  if (exchange_id(rank, path, &id) != 0) return 1;
  ncclComm_t nccl = NULL;
  CHECK(ncclCommInitRank(&nccl, nranks, id, rank));
  if (rank == 0) unlink(path);

  /* count elements a rank: the reductions' vector, allgather's send, alltoall's block per peer */
  const size_t count = (size_t)1 << 18, total = count * (size_t)nranks;
  float* host_in = malloc(total * sizeof(float));
  float* back = malloc(total * sizeof(float));
  for (size_t i = 0; i < total; ++i) host_in[i] = input_value(rank, i);
  float *d_in = NULL, *d_out = NULL;
  double* d_bound = NULL;
  CHECK(cudaMalloc((void**)&d_bound, sizeof(double)));
  CHECK(cudaMalloc((void**)&d_in, total * sizeof(float)));
  CHECK(cudaMalloc((void**)&d_out, total * sizeof(float)));
  CHECK(cudaMemcpy(d_in, host_in, total * sizeof(float), cudaMemcpyHostToDevice));
  static const char* const names[] = {"allreduce(sum)", "reduce_scatter(max)", "reduce(min)", "allgather", "broadcast",
                                      "alltoall"};
  for (int codec = 0; codec < ncclzNumCodecs; ++codec) {
    ncclzComm_t comm = NULL;
    CHECK(create_compressing(nccl, codec, &comm));
    const int lossless = codec == ncclzLossless;
    const double bound = bound_of(codec, 1e-3);
    for (int which = 0; which < 6; ++which) {
      size_t out_count = count;
      CHECK(cudaMemset(d_out, 0, total * sizeof(float)));
      switch (which) {
        case 0: CHECK(ncclzAllReduce(d_in, d_out, count, ncclFloat32, ncclSum, bound, comm, NULL)); break;
        case 1: CHECK(ncclzReduceScatter(d_in, d_out, count / (size_t)nranks, ncclFloat32, ncclMax, bound, comm, NULL));
                out_count = count / (size_t)nranks; break;
        case 2: CHECK(ncclzReduce(d_in, d_out, count, ncclFloat32, ncclMin, 0, bound, comm, NULL)); break;
        case 3: CHECK(ncclzAllGather(d_in, d_out, count, ncclFloat32, bound, comm, NULL)); out_count = total; break;
        case 4: CHECK(ncclzBroadcast(d_in, d_out, count, ncclFloat32, nranks - 1, bound, comm, NULL)); break;
        default: CHECK(ncclzAlltoAll(d_in, d_out, count, ncclFloat32, bound, comm, NULL)); out_count = total; break;
      }
      CHECK(ncclzCheck(comm, NULL));
      ncclzCallInfo info;
      CHECK(ncclzGetLastCallInfo(comm, &info));
      /* The bound is promised by the ranks that coded (a broadcast's root): the largest of the ranks'. */
      double bound_all = info.errorBound;
      CHECK(cudaMemcpy(d_bound, &bound_all, sizeof bound_all, cudaMemcpyHostToDevice));
      CHECK(ncclAllReduce(d_bound, d_bound, 1, ncclFloat64, ncclMax, nccl, NULL));
      CHECK(cudaMemcpy(&bound_all, d_bound, sizeof bound_all, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(back, d_out, out_count * sizeof(float), cudaMemcpyDeviceToHost));
      long misses = 0;
      double worst = 0;
      if (!(which == 2 && rank != 0)) { /* reduce: only the root's buffer is defined */
        for (size_t j = 0; j < out_count; ++j) {
          int exact_sum = 0;
          float rank_order = 0;
          double want;
          if (which == 1) want = expected(1, nranks, count, (size_t)rank * out_count + j, &exact_sum, &rank_order);
          else if (which == 5) want = input_value((int)(j / count), (size_t)rank * count + j % count); /* block `rank` of peer j/count */
          else want = expected(which, nranks, count, j, &exact_sum, &rank_order);
          int ok;
          if (lossless) {
            ok = exact_sum ? back[j] == rank_order : back[j] == (float)want;
          } else {
            /* a sum also rounds to float: the sum of |values| times half an ulp */
            const double slack = exact_sum ? 10.0 * nranks * FLT_EPSILON : 0.0;
            ok = fabs(want - (double)back[j]) <= bound_all + slack;
          }
          const double err = fabs(want - (double)back[j]);
          if (err > worst) worst = err;
          misses += !ok;
        }
      }
      printf("%s rank %d codec %d %s: %s, ratio %.2f, bound %.3g, largest error %.3g: %ld wrong\n", misses ? "FAIL" : "ok",
             rank, codec, names[which], info.schedule, info.ratio, bound_all, worst, misses);
      failures += misses != 0;
    }
    CHECK(ncclzCommDestroy(comm));
  }

  /* Ranks that disagree on the bound: every rank's call fails, and says so. */
  {
    ncclzComm_t comm = NULL;
    CHECK(create_compressing(nccl, ncclzRelFixedLength, &comm));
    ncclResult_t r = ncclzAllReduce(d_in, d_out, count, ncclFloat32, ncclSum, rank == 0 ? 1e-2 : 1e-3, comm, NULL);
    if (r == ncclSuccess) r = ncclzCheck(comm, NULL);
    const char* message = ncclzGetLastError();
    if (r != ncclInvalidArgument || strstr(message, "bound") == NULL) {
      printf("FAIL: rank %d: disagreeing bounds gave %d (\"%s\"), not ncclInvalidArgument naming the bound\n", rank, (int)r,
             message);
      ++failures;
    } else {
      printf("ok rank %d: disagreeing bounds -> ncclInvalidArgument: %s\n", rank, message);
    }
    ncclzCommDestroy(comm);
  }
  ncclCommDestroy(nccl);
  cudaFree(d_bound);
  cudaFree(d_in);
  cudaFree(d_out);
  free(host_in);
  free(back);
  return failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "arguments") == 0) return arguments();
  if (argc == 2 && strcmp(argv[1], "gpu") == 0) return gpu();
  if (argc == 2 && strcmp(argv[1], "cluster") == 0) return cluster();
  printf("usage: c_api_test arguments|gpu|cluster\n");
  return 2;
}
