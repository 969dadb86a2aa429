// ncclz::Communicator on real multi-rank NCCL (one process per rank, scripts/emulated_cluster.sh):
// allgather, broadcast (ring and tree), alltoall, and allreduce, reduce_scatter and reduce with
// sum, min and max (direct and ring) of fresh inputs, every element of every rank's result
// checked against the bound in float64, identical results on all ranks, in place, count 0,
// NaN/Inf, mismatched counts, an unsupported op and a bad root; pipelined allreduces back to back
// giving the same bits every call; then timings against NCCL's own.
//
// Every rank can compute every rank's input (a function of a seed rank 0 draws and broadcasts,
// NCCLZ_TEST_SEED reproduces it). Exit 0 when all checks pass on this rank, 1 otherwise, 77 without
// a GPU. Every rank runs every step, so ranks stay in step even after a failure.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ncclz/bootstrap.hpp"
#include "ncclz/ncclz.cuh"
#include "codec_kernels.cuh"  // the codecs' kernels, compiled once (src/kernels/)
#include "rank_main.hpp"

namespace {

using ncclz::test::device_array;
using ncclz::test::same_on_all_ranks;

using RelFL = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using AbsFL = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using RelAd = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Adaptive>>;
using Fixed8 = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<8>>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using Fixed4 = ncclz::Codec<ncclz::Quantizer<ncclz::FixedRate<4>>, ncclz::EntropyCoder<ncclz::FixedLength>>;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Rank r's input for one test: a smooth field with rank-dependent phase and scale, a little
/// hash noise, and a few NaN/Inf on rank 1.
template <class T>
std::vector<T> input_of(std::uint64_t seed, int rank, std::size_t count) {
  std::vector<T> v(count);
  const double phase = static_cast<double>(splitmix64(seed + rank) % 6283) / 1000.0;
  for (std::size_t i = 0; i < count; ++i) {
    const double noise = static_cast<double>(splitmix64(seed ^ (std::uint64_t(rank) << 40) ^ i) % 1000) * 1e-5;
    v[i] = static_cast<T>((rank + 1) * 10.0 * std::sin(static_cast<double>(i) * 1e-3 + phase) + noise);
  }
  if (rank == 1 && count > 100) {
    v[7] = std::numeric_limits<T>::quiet_NaN();
    v[count / 2] = std::numeric_limits<T>::infinity();
    v[count - 1] = -std::numeric_limits<T>::infinity();
  }
  return v;
}

/// The tests exercise the compressed path at every size; the fallback has its own check.
/// Small pipeline parts, so that the multi-part path runs at test sizes too.
ncclz::communicator_config compress_always() {
  ncclz::communicator_config c;
  c.fallback_below_bytes = 0;
  c.autotune = false;
  c.pipeline_part_bytes = 256 << 10;
  return c;
}

struct checker {
  int rank;
  int failures = 0;
  void fail(const std::string& what) {
    ++failures;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
  }
};

/// Elements of `got` against `want`: NaN stays NaN, Inf stays the same Inf, finite within eb.
template <class T>
std::size_t count_violations(const T* got, const T* want, std::size_t n, double eb, double& max_err) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    bool ok;
    if (std::isnan(want[i])) ok = std::isnan(got[i]);
    else if (std::isinf(want[i])) ok = got[i] == want[i];
    else {
      const double err = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
      ok = err <= eb;
      if (err > max_err) max_err = err;
    }
    bad += !ok;
  }
  return bad;
}

template <class T>
double range_bound(const std::vector<std::vector<T>>& inputs, double rel) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& v : inputs)
    for (const T x : v)
      if (std::isfinite(x)) {
        lo = std::min(lo, static_cast<double>(x));
        hi = std::max(hi, static_cast<double>(x));
      }
  return rel * (hi - lo);
}

template <class Codec, class T>
void check_allgather(ncclz::cluster_comm& cc, checker& c, cudaStream_t stream, std::uint64_t seed, std::size_t count,
                     double bound, bool in_place) {
  const int n = cc.nranks(), me = cc.rank();
  std::vector<std::vector<T>> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(input_of<T>(seed + count, r, count));
  const double eb = Codec::quantizer::needs_range ? range_bound(inputs, bound) : bound;

  ncclz::Communicator<Codec> comm(cc.comm(), compress_always());
  device_array<T> d_send(count), d_recv(count * n);
  NCCLZ_CUDA_TRY(cudaMemsetAsync(d_recv.ptr, 0xFF, std::max<std::size_t>(count * n, 1) * sizeof(T), stream));  // NaN poison
  T* send = in_place ? d_recv.ptr + static_cast<std::size_t>(me) * count : d_send.ptr;
  if (count) NCCLZ_CUDA_TRY(cudaMemcpyAsync(send, inputs[me].data(), count * sizeof(T), cudaMemcpyHostToDevice, stream));
  comm.allgather(send, d_recv.ptr, count, bound, stream);
  comm.check(stream);
  std::vector<T> got(count * n);
  if (count) NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), d_recv.ptr, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
  const std::string what = std::string("allgather ") + (sizeof(T) == 4 ? "f32 " : "f64 ") + Codec::quantizer::name +
                           " count " + std::to_string(count) + (in_place ? " in place" : "");
  double max_err = 0;
  std::size_t bad = 0;
  for (int r = 0; r < n; ++r) bad += count_violations(got.data() + r * count, inputs[r].data(), count, eb, max_err);
  if (bad) c.fail(what + ": " + std::to_string(bad) + " elements outside the bound " + std::to_string(eb));
  if (count && !(comm.last_call().error_bound <= eb * (1 + 1e-12)))
    c.fail(what + ": applied bound " + std::to_string(comm.last_call().error_bound) + " > " + std::to_string(eb));
  if (!same_on_all_ranks(cc, got.data(), got.size() * sizeof(T), stream)) c.fail(what + ": results differ across ranks");
  if (me == 0) {
    std::printf("%-44s ratio %7.2f  max_err %.3e <= eb %.3e  size wait %.2f ms\n", what.c_str(), comm.last_call().ratio,
                max_err, eb, comm.last_call().size_wait_ms);
  }
}

template <class Codec, class T, class Schedule = ncclz::schedule::Auto>
void check_broadcast(ncclz::cluster_comm& cc, checker& c, cudaStream_t stream, std::uint64_t seed, std::size_t count,
                     int root, double bound) {
  const int me = cc.rank();
  const std::vector<T> input = input_of<T>(seed + 7 * count, root, count);
  const double eb = Codec::quantizer::needs_range ? range_bound(std::vector<std::vector<T>>{input}, bound) : bound;
  ncclz::Communicator<Codec, Schedule> comm(cc.comm(), compress_always());
  device_array<T> d_buf(count);
  NCCLZ_CUDA_TRY(cudaMemsetAsync(d_buf.ptr, 0xFF, std::max<std::size_t>(count, 1) * sizeof(T), stream));
  if (me == root && count) NCCLZ_CUDA_TRY(cudaMemcpyAsync(d_buf.ptr, input.data(), count * sizeof(T), cudaMemcpyHostToDevice, stream));
  comm.broadcast(d_buf.ptr, d_buf.ptr, count, root, bound, stream);  // in place, as NCCL allows
  comm.check(stream);
  std::vector<T> got(count);
  if (count) NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), d_buf.ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
  const std::string what = std::string("broadcast ") + Schedule::name + " root " + std::to_string(root) + " count " +
                           std::to_string(count);
  double max_err = 0;
  const std::size_t bad = count_violations(got.data(), input.data(), count, eb, max_err);
  if (bad) c.fail(what + ": " + std::to_string(bad) + " elements outside the bound");
  if (!same_on_all_ranks(cc, got.data(), got.size() * sizeof(T), stream)) c.fail(what + ": results differ across ranks");
  if (me == 0) std::printf("%-44s ratio %7.2f  max_err %.3e <= eb %.3e\n", what.c_str(), comm.last_call().ratio, max_err, eb);
}

/// The reduction of all ranks' inputs in float64: the reference of allreduce, reduce_scatter and
/// reduce. NaN wins min and max, as it does in ncclz (never dropped).
template <class T>
std::vector<double> exact_reduce(const std::vector<std::vector<T>>& inputs, ncclRedOp_t op) {
  std::vector<double> out(inputs[0].begin(), inputs[0].end());
  for (std::size_t r = 1; r < inputs.size(); ++r) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double a = out[i], b = static_cast<double>(inputs[r][i]);
      if (op == ncclSum) out[i] = a + b;
      else if (std::isnan(a) || std::isnan(b)) out[i] = std::numeric_limits<double>::quiet_NaN();
      else out[i] = op == ncclMin ? std::min(a, b) : std::max(a, b);
    }
  }
  return out;
}

const char* op_name(ncclRedOp_t op) { return op == ncclSum ? "sum" : op == ncclMin ? "min" : "max"; }

/// |got - want| <= eb plus one ulp of the result (T(code) and the product with the step each
/// round once); NaN and Inf as IEEE arithmetic gives them.
template <class T>
std::size_t count_sum_violations(const T* got, const double* want, std::size_t n, double eb, double& max_err) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    bool ok;
    if (std::isnan(want[i])) ok = std::isnan(got[i]);
    else if (std::isinf(want[i])) ok = static_cast<double>(got[i]) == want[i];
    else {
      const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
      const T rounded = static_cast<T>(want[i]);
      const double ulp = std::fabs(static_cast<double>(std::nextafter(rounded, std::numeric_limits<T>::infinity())) -
                                   static_cast<double>(rounded));
      ok = err <= eb + ulp;
      if (err > max_err) max_err = err;
    }
    bad += !ok;
  }
  return bad;
}

/// allreduce (root < 0) or reduce to `root`, with `op`, checked on every rank that gets a result.
template <class Codec, class T, class Schedule = ncclz::schedule::Auto, class Pipe = ncclz::Pipeline<ncclz::Overlap<4>>>
void check_allreduce(ncclz::cluster_comm& cc, checker& c, cudaStream_t stream, std::uint64_t seed, std::size_t count,
                     double bound, bool in_place, ncclRedOp_t op = ncclSum, int root = -1) {
  const int n = cc.nranks(), me = cc.rank();
  std::vector<std::vector<T>> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(input_of<T>(seed + 3 * count, r, count));
  const std::vector<double> want = exact_reduce(inputs, op);
  const double eb = Codec::quantizer::needs_range ? range_bound(inputs, bound) : bound;
  ncclz::Communicator<Codec, Schedule, Pipe> comm(cc.comm(), compress_always());
  device_array<T> d_send(count), d_recv(count);
  NCCLZ_CUDA_TRY(cudaMemsetAsync(d_recv.ptr, 0xFF, std::max<std::size_t>(count, 1) * sizeof(T), stream));
  T* send = in_place ? d_recv.ptr : d_send.ptr;
  if (count) NCCLZ_CUDA_TRY(cudaMemcpyAsync(send, inputs[me].data(), count * sizeof(T), cudaMemcpyHostToDevice, stream));
  if (root < 0) comm.allreduce(send, d_recv.ptr, count, op, bound, stream);
  else comm.reduce(send, d_recv.ptr, count, op, root, bound, stream);
  comm.check(stream);
  std::vector<T> got(count);
  if (count) NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), d_recv.ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
  const std::string what = std::string(root < 0 ? "allreduce " : "reduce ") + op_name(op) + " " + comm.last_call().schedule +
                           " x" + std::to_string(comm.last_call().parts) +
                           (sizeof(T) == 4 ? " f32 " : " f64 ") + Codec::quantizer::name + " count " + std::to_string(count) +
                           (in_place ? " in place" : "") + (root >= 0 ? " root " + std::to_string(root) : "");
  double max_err = 0;
  if (root < 0 || me == root) {
    const std::size_t bad = count_sum_violations(got.data(), want.data(), count, eb, max_err);
    if (bad) c.fail(what + ": " + std::to_string(bad) + " elements outside the bound " + std::to_string(eb));
    if (count && n > 1 && !(comm.last_call().error_bound <= eb * (1 + 1e-9)))
      c.fail(what + ": applied bound " + std::to_string(comm.last_call().error_bound) + " > " + std::to_string(eb));
  }
  if (root < 0 && !same_on_all_ranks(cc, got.data(), got.size() * sizeof(T), stream)) c.fail(what + ": results differ across ranks");
  if (me == std::max(root, 0)) {
    std::printf("%-58s ratio %7.2f  max_err %.3e <= eb %.3e  %d host waits %.2f ms\n", what.c_str(), comm.last_call().ratio,
                max_err, eb, comm.last_call().size_waits, comm.last_call().size_wait_ms);
  }
}

template <class Codec, class T, class Schedule = ncclz::schedule::Auto, class Pipe = ncclz::Pipeline<ncclz::Overlap<4>>>
void check_reduce_scatter(ncclz::cluster_comm& cc, checker& c, cudaStream_t stream, std::uint64_t seed,
                          std::size_t recvcount, double bound, ncclRedOp_t op = ncclSum) {
  const int n = cc.nranks(), me = cc.rank();
  const std::size_t count = recvcount * n;
  std::vector<std::vector<T>> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(input_of<T>(seed + 5 * count, r, count));
  const std::vector<double> want = exact_reduce(inputs, op);
  const double eb = Codec::quantizer::needs_range ? range_bound(inputs, bound) : bound;
  ncclz::Communicator<Codec, Schedule, Pipe> comm(cc.comm(), compress_always());
  device_array<T> d_send(count), d_recv(recvcount);
  NCCLZ_CUDA_TRY(cudaMemsetAsync(d_recv.ptr, 0xFF, std::max<std::size_t>(recvcount, 1) * sizeof(T), stream));
  if (count) NCCLZ_CUDA_TRY(cudaMemcpyAsync(d_send.ptr, inputs[me].data(), count * sizeof(T), cudaMemcpyHostToDevice, stream));
  comm.reduce_scatter(d_send.ptr, d_recv.ptr, recvcount, op, bound, stream);
  comm.check(stream);
  std::vector<T> got(recvcount);
  if (recvcount) NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), d_recv.ptr, recvcount * sizeof(T), cudaMemcpyDeviceToHost));
  const std::string what = std::string("reduce_scatter ") + op_name(op) + " " + comm.last_call().schedule + " x" +
                           std::to_string(comm.last_call().parts) +
                           (sizeof(T) == 4 ? " f32 " : " f64 ") + Codec::quantizer::name + " recvcount " + std::to_string(recvcount);
  double max_err = 0;
  const std::size_t bad = count_sum_violations(got.data(), want.data() + static_cast<std::size_t>(me) * recvcount, recvcount, eb, max_err);
  if (bad) c.fail(what + ": " + std::to_string(bad) + " elements outside the bound " + std::to_string(eb));
  if (me == 0) std::printf("%-58s ratio %7.2f  max_err %.3e <= eb %.3e\n", what.c_str(), comm.last_call().ratio, max_err, eb);
}

/// Block p of rank r's input goes to rank p; each rank checks every block it received.
template <class Codec, class T>
void check_alltoall(ncclz::cluster_comm& cc, checker& c, cudaStream_t stream, std::uint64_t seed, std::size_t count,
                    double bound) {
  const int n = cc.nranks(), me = cc.rank();
  const std::size_t total = count * n;
  std::vector<std::vector<T>> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(input_of<T>(seed + 13 * count, r, total));
  const double eb = Codec::quantizer::needs_range ? range_bound(inputs, bound) : bound;
  ncclz::Communicator<Codec> comm(cc.comm(), compress_always());
  device_array<T> d_send(total), d_recv(total);
  NCCLZ_CUDA_TRY(cudaMemsetAsync(d_recv.ptr, 0xFF, std::max<std::size_t>(total, 1) * sizeof(T), stream));
  if (total) NCCLZ_CUDA_TRY(cudaMemcpyAsync(d_send.ptr, inputs[me].data(), total * sizeof(T), cudaMemcpyHostToDevice, stream));
  comm.alltoall(d_send.ptr, d_recv.ptr, count, bound, stream);
  comm.check(stream);
  std::vector<T> got(total);
  if (total) NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), d_recv.ptr, total * sizeof(T), cudaMemcpyDeviceToHost));
  const std::string what = std::string("alltoall ") + (sizeof(T) == 4 ? "f32 " : "f64 ") + Codec::quantizer::name +
                           " count " + std::to_string(count);
  double max_err = 0;
  std::size_t bad = 0;
  for (int p = 0; p < n; ++p) {
    bad += count_violations(got.data() + p * count, inputs[p].data() + static_cast<std::size_t>(me) * count, count, eb, max_err);
  }
  if (bad) c.fail(what + ": " + std::to_string(bad) + " elements outside the bound " + std::to_string(eb));
  if (me == 0) std::printf("%-58s ratio %7.2f  max_err %.3e <= eb %.3e\n", what.c_str(), comm.last_call().ratio, max_err, eb);
}

/// FixedRate collectives (every rank codes with the steps of the block maxima of all ranks'
/// inputs): allreduce / reduce / reduce_scatter (`recvcount` > 0) with `op`, or allgather
/// (`gather`). Each element is checked against its own block's bound, step_b / 2 (x nranks for a
/// sum, plus the ulp the result rounds by), from the float64 reference; the reported bound must be
/// nranks x (largest step) / 2 for a sum; all ranks must hold the same result.
template <class Codec, class T, class Schedule = ncclz::schedule::Auto>
void check_fixed_rate(ncclz::cluster_comm& cc, checker& c, cudaStream_t stream, std::uint64_t seed, std::size_t count,
                      ncclRedOp_t op, bool scatter, bool gather = false) {
  using Q = typename Codec::quantizer;
  const int n = cc.nranks(), me = cc.rank();
  const std::size_t total = scatter ? count * n : count;  // count = recvcount for reduce_scatter
  std::vector<std::vector<T>> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(input_of<T>(seed + 19 * total + Q::bits, r, total));
  // Scale blocks start afresh at every segment: rank r's recvcount values for reduce_scatter,
  // 1024-aligned ones otherwise (the partitions are tile-aligned).
  const std::size_t seg = scatter ? std::max<std::size_t>(count, 1) : std::max<std::size_t>(total, 1);
  const std::size_t per_seg = ncclz::format::scale_count(seg);
  const auto block_of = [&](std::size_t i) { return (i / seg) * per_seg + (i % seg) / ncclz::format::kScaleBlockElements; };
  const std::size_t blocks = total ? block_of(total - 1) + 1 : 0;
  // Steps: of all ranks' maxima (reductions), of each rank's own (allgather).
  std::vector<std::vector<double>> steps(static_cast<std::size_t>(n), std::vector<double>(blocks, 0.0));
  std::vector<double> shared(blocks, 0.0);
  double largest = 0;
  for (int r = 0; r < n; ++r) {
    std::vector<double> m(blocks, 0.0);
    for (std::size_t i = 0; i < total; ++i)
      if (std::isfinite(inputs[r][i])) m[block_of(i)] = std::max(m[block_of(i)], std::fabs(static_cast<double>(inputs[r][i])));
    for (std::size_t b = 0; b < blocks; ++b) {
      steps[r][b] = static_cast<double>(Q::template block_step<T>(m[b]));
      shared[b] = std::max(shared[b], m[b]);
    }
  }
  for (double& m : shared) {
    m = static_cast<double>(Q::template block_step<T>(m));
    largest = std::max(largest, m);
  }
  const int scale = op == ncclSum && !gather ? n : 1;

  ncclz::Communicator<Codec, Schedule, ncclz::Pipeline<ncclz::Overlap<4>>> comm(cc.comm(), compress_always());
  const std::size_t out_count = gather ? total * n : (scatter ? count : total);
  device_array<T> d_send(total), d_recv(out_count);
  NCCLZ_CUDA_TRY(cudaMemsetAsync(d_recv.ptr, 0xFF, std::max<std::size_t>(out_count, 1) * sizeof(T), stream));
  if (total) NCCLZ_CUDA_TRY(cudaMemcpyAsync(d_send.ptr, inputs[me].data(), total * sizeof(T), cudaMemcpyHostToDevice, stream));
  if (gather) comm.allgather(d_send.ptr, d_recv.ptr, total, Q::bits, stream);
  else if (scatter) comm.reduce_scatter(d_send.ptr, d_recv.ptr, count, op, Q::bits, stream);
  else comm.allreduce(d_send.ptr, d_recv.ptr, total, op, 0.0, stream);  // 0: the quantizer's own bit count
  comm.check(stream);
  std::vector<T> got(out_count);
  if (out_count) NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), d_recv.ptr, out_count * sizeof(T), cudaMemcpyDeviceToHost));
  const std::string what = std::string(gather ? "allgather " : scatter ? "reduce_scatter " : "allreduce ") +
                           (gather ? "" : std::string(op_name(op)) + " ") + comm.last_call().schedule + " " +
                           (sizeof(T) == 4 ? "f32 " : "f64 ") + Q::name + " count " + std::to_string(count);
  std::size_t bad = 0;
  double max_err = 0, max_ratio = 0;  // error / its element's bound
  const std::vector<double> want = exact_reduce(inputs, op);
  const auto check = [&](T y, double x, double eb) {
    if (std::isnan(x)) {
      bad += !std::isnan(y);
      return;
    }
    if (std::isinf(x)) {
      bad += static_cast<double>(y) != x;
      return;
    }
    const double err = std::fabs(static_cast<double>(y) - x);
    const T rounded = static_cast<T>(x);
    const double ulp = std::fabs(static_cast<double>(std::nextafter(rounded, std::numeric_limits<T>::infinity())) -
                                 static_cast<double>(rounded));
    bad += !(err <= eb + ulp);
    max_err = std::max(max_err, err);
    if (eb > 0) max_ratio = std::max(max_ratio, err / eb);
  };
  if (gather) {
    for (int r = 0; r < n; ++r)
      for (std::size_t i = 0; i < total; ++i) check(got[r * total + i], static_cast<double>(inputs[r][i]), steps[r][block_of(i)] / 2);
  } else {
    const std::size_t first = scatter ? static_cast<std::size_t>(me) * count : 0;
    for (std::size_t i = 0; i < out_count; ++i) check(got[i], want[first + i], scale * shared[block_of(first + i)] / 2);
  }
  if (bad) c.fail(what + ": " + std::to_string(bad) + " elements outside their block's bound");
  if (!gather && total && !(comm.last_call().error_bound == scale * largest / 2)) {
    c.fail(what + ": reported bound " + std::to_string(comm.last_call().error_bound) + " != nranks x largest step / 2 = " +
           std::to_string(scale * largest / 2));
  }
  if (!scatter && !same_on_all_ranks(cc, got.data(), got.size() * sizeof(T), stream)) c.fail(what + ": results differ across ranks");
  if (me == 0) {
    std::printf("%-58s ratio %7.2f  max_err %.3e (%.2f of its block bound), reported bound %.3e\n", what.c_str(),
                comm.last_call().ratio, max_err, max_ratio, comm.last_call().error_bound);
  }
}

__global__ void count_differing_words(const std::uint32_t* a, const std::uint32_t* b, std::size_t n,
                                      unsigned long long* differing) {
  unsigned long long mine = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    mine += a[i] != b[i];
  if (mine) atomicAdd(differing, mine);
}

/// Pipelined allreduces enqueued back to back, as a training loop does (no host wait between
/// calls), each into its own output, with a one-element ncclAllReduce on the same communicator
/// between them (what ncclz-perf's timing loop does). The first call is checked against the
/// bound; every later call must give the same bits, and the last call of each round decodes with
/// no problem reported. Nondeterminism shows here: a missing dependency between the pipeline's
/// streams, or a race inside a kernel (it has caught one in the huffman encoder).
/// NCCLZ_BACK_TO_BACK_MIB / _ROUNDS make it a soak test (scripts/run_gpu.sh --collectives), _PARTS (1-4)
/// and _CODER=fixed_length vary it; NCCLZ_BACK_TO_BACK_ONLY=1 runs it alone.
template <class Codec>
void check_back_to_back(ncclz::cluster_comm& cc, checker& c, cudaStream_t stream, std::uint64_t seed, std::size_t count,
                        int calls, int rounds, int parts, double bound) {
  constexpr int kParts = 4;
  const int n = cc.nranks(), me = cc.rank();
  std::vector<std::vector<float>> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(input_of<float>(seed + 17 * count, r, count));
  const std::vector<double> want = exact_reduce(inputs, ncclSum);
  const double eb = range_bound(inputs, bound);
  ncclz::communicator_config config = compress_always();
  config.pipeline_part_bytes = std::max<std::size_t>(count * sizeof(float) / std::clamp(parts, 1, kParts), 1);
  ncclz::Communicator<Codec, ncclz::schedule::Direct, ncclz::Pipeline<ncclz::Overlap<kParts>>> comm(cc.comm(), config);
  device_array<float> d_send(count);
  std::deque<device_array<float>> d_out;  // device_array does not move
  for (int k = 0; k < calls; ++k) d_out.emplace_back(count);
  device_array<double> d_tick(1);
  device_array<unsigned long long> d_differing(1);
  NCCLZ_CUDA_TRY(cudaMemcpyAsync(d_send.ptr, inputs[me].data(), count * sizeof(float), cudaMemcpyHostToDevice, stream));
  NCCLZ_CUDA_TRY(cudaMemsetAsync(d_tick.ptr, 0, sizeof(double), stream));
  const std::string what = "allreduce back to back " + std::to_string(calls) + " x " + std::to_string(rounds) + " " +
                           Codec::quantizer::name + " " + Codec::coder::name + " count " + std::to_string(count);
  std::size_t bad_rounds = 0, differing = 0;
  for (int round = 0; round < rounds; ++round) {
    for (int k = round == 0 ? 0 : 1; k < calls; ++k)  // NaN poison: a chunk that fails to decode leaves it
      NCCLZ_CUDA_TRY(cudaMemsetAsync(d_out[k].ptr, 0xFF, count * sizeof(float), stream));
    for (int k = round == 0 ? 0 : 1; k < calls; ++k) {
      comm.allreduce(d_send.ptr, d_out[k].ptr, count, ncclSum, bound, stream);
      cc.check(ncclAllReduce(d_tick.ptr, d_tick.ptr, 1, ncclDouble, ncclSum, cc.comm(), stream), "ncclAllReduce(tick)");
    }
    try {
      comm.check(stream);
    } catch (const std::exception& e) {
      ++bad_rounds;
      c.fail(what + ": round " + std::to_string(round) + ": " + e.what());
    }
    if (round == 0) {
      std::vector<float> got(count);
      NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), d_out[0].ptr, count * sizeof(float), cudaMemcpyDeviceToHost));
      double max_err = 0;
      const std::size_t bad = count_sum_violations(got.data(), want.data(), count, eb, max_err);
      if (bad) c.fail(what + ": " + std::to_string(bad) + " elements of the first call outside the bound");
      if (!same_on_all_ranks(cc, got.data(), got.size() * sizeof(float), stream)) c.fail(what + ": results differ across ranks");
    }
    NCCLZ_CUDA_TRY(cudaMemsetAsync(d_differing.ptr, 0, sizeof(unsigned long long), stream));
    for (int k = 1; k < calls; ++k) {
      count_differing_words<<<264, 256, 0, stream>>>(reinterpret_cast<const std::uint32_t*>(d_out[k].ptr),
                                                     reinterpret_cast<const std::uint32_t*>(d_out[0].ptr), count, d_differing.ptr);
    }
    unsigned long long round_differing = 0;
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(&round_differing, d_differing.ptr, sizeof round_differing, cudaMemcpyDeviceToHost, stream));
    cc.synchronize(stream);
    if (round_differing) {
      differing += round_differing;
      c.fail(what + ": round " + std::to_string(round) + ": " + std::to_string(round_differing) +
             " elements differ from the first call's");
    }
  }
  if (me == 0) {
    std::printf("%-58s ratio %7.2f  x%d  %zu bad rounds, %zu elements differing\n", what.c_str(), comm.last_call().ratio,
                comm.last_call().parts, bad_rounds, differing);
  }
}

/// Median ms of `op` over 5 runs after 2 warm-ups (NCCL connects lazily), on this rank.
template <class Op>
float median_time_ms(ncclz::cluster_comm& cc, cudaStream_t stream, Op&& op) {
  cudaEvent_t a, b;
  NCCLZ_CUDA_TRY(cudaEventCreate(&a));
  NCCLZ_CUDA_TRY(cudaEventCreate(&b));
  std::vector<float> t;
  for (int i = 0; i < 7; ++i) {
    NCCLZ_CUDA_TRY(cudaEventRecord(a, stream));
    op();
    NCCLZ_CUDA_TRY(cudaEventRecord(b, stream));
    cc.synchronize(stream);
    float ms = 0;
    NCCLZ_CUDA_TRY(cudaEventElapsedTime(&ms, a, b));
    if (i >= 2) t.push_back(ms);
  }
  NCCLZ_CUDA_TRY(cudaEventDestroy(a));
  NCCLZ_CUDA_TRY(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// ncclz allreduce vs ncclAllReduce of the same floats (median of 5 after 2 warm-ups).
template <class Pipe = ncclz::Pipeline<ncclz::Overlap<4>>, class Codec = RelFL>
void time_allreduce(ncclz::cluster_comm& cc, cudaStream_t stream, std::uint64_t seed, std::size_t count, double rel) {
  const int me = cc.rank();
  const std::vector<float> input = input_of<float>(seed, me, count);
  device_array<float> d_send(count), d_recv(count);
  NCCLZ_CUDA_TRY(cudaMemcpy(d_send.ptr, input.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  ncclz::communicator_config config;  // the default pipeline parts
  config.fallback_below_bytes = 0;
  config.autotune = false;
  config.profile_phases = true;
  ncclz::Communicator<Codec, ncclz::schedule::Auto, Pipe> comm(cc.comm(), config);
  auto median_ms = [&](auto&& op) { return median_time_ms(cc, stream, op); };
  const float nccl_ms = median_ms([&] {
    cc.check(ncclAllReduce(d_send.ptr, d_recv.ptr, count, ncclFloat, ncclSum, cc.comm(), stream), "ncclAllReduce");
  });
  const float ncclz_ms = median_ms([&] { comm.allreduce(d_send.ptr, d_recv.ptr, count, ncclSum, rel, stream); });
  if (me == 0) {
    std::printf("TIMING allreduce %zu MiB, %d ranks, %s %.0e, %s x%d: NCCL %.2f ms, ncclz %.2f ms, speedup %.2fx, ratio %.2f, "
                "%d host waits %.2f ms\n",
                count * sizeof(float) >> 20, cc.nranks(), Codec::quantizer::name, rel, comm.last_call().schedule, comm.last_call().parts, nccl_ms, ncclz_ms,
                nccl_ms / ncclz_ms, comm.last_call().ratio, comm.last_call().size_waits, comm.last_call().size_wait_ms);
    std::printf("  phases of the last call on rank 0:");
    for (const ncclz::phase_time& p : comm.phase_times()) std::printf("  %s %.2f ms", p.phase, p.ms);
    std::printf("\n");
  }
}

/// Time of ncclz allgather vs ncclAllGather of the same `count` floats per rank (median of 5).
void time_allgather(ncclz::cluster_comm& cc, cudaStream_t stream, std::uint64_t seed, std::size_t count, double rel) {
  const int n = cc.nranks(), me = cc.rank();
  const std::vector<float> input = input_of<float>(seed, me, count);
  device_array<float> d_send(count), d_recv(count * n);
  NCCLZ_CUDA_TRY(cudaMemcpy(d_send.ptr, input.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  ncclz::Communicator<RelFL> comm(cc.comm(), compress_always());
  auto median_ms = [&](auto&& op) { return median_time_ms(cc, stream, op); };
  const float nccl_ms = median_ms([&] {
    cc.check(ncclAllGather(d_send.ptr, d_recv.ptr, count, ncclFloat, cc.comm(), stream), "ncclAllGather");
  });
  const float ncclz_ms = median_ms([&] { comm.allgather(d_send.ptr, d_recv.ptr, count, rel, stream); });
  if (me == 0) {
    std::printf("TIMING allgather %zu MiB/rank, %d ranks, REL %.0e: NCCL %.2f ms, ncclz %.2f ms, speedup %.2fx, ratio %.2f\n",
                count * sizeof(float) >> 20, n, rel, nccl_ms, ncclz_ms, nccl_ms / ncclz_ms, comm.last_call().ratio);
  }
}

int run() {
  ncclz::cluster_comm cc(ncclz::rank_from_environment());
  cudaStream_t stream;
  NCCLZ_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::uint64_t seed = ncclz::test::shared_seed(cc, stream, "test_collectives");
  checker c{cc.rank()};
  // Every way out of run(): the verdict of this rank (the NCCLZ_*_ONLY modes stop early).
  const auto finish = [&] {
    cc.synchronize(stream);
    NCCLZ_CUDA_TRY(cudaStreamDestroy(stream));
    std::printf("rank %d/%d: %s\n", cc.rank(), cc.nranks(), c.failures == 0 ? "ok" : "FAILED");
    return c.failures == 0 ? 0 : 1;
  };
  {
    const char* mib = std::getenv("NCCLZ_BACK_TO_BACK_MIB");
    const char* rounds = std::getenv("NCCLZ_BACK_TO_BACK_ROUNDS");
    // 64 MiB x 3 rounds caught the encoder race fixed with this test (16 MiB x 6 did not).
    const std::size_t count = (mib ? std::strtoull(mib, nullptr, 10) : 64) << 20 >> 2;
    const char* parts = std::getenv("NCCLZ_BACK_TO_BACK_PARTS");
    const char* coder = std::getenv("NCCLZ_BACK_TO_BACK_CODER");
    const int r = rounds ? std::atoi(rounds) : 3, k = parts ? std::atoi(parts) : 4;
    if (coder && std::strcmp(coder, "fixed_length") == 0) check_back_to_back<RelFL>(cc, c, stream, seed, count, 8, r, k, 1e-3);
    else check_back_to_back<RelAd>(cc, c, stream, seed, count, 8, r, k, 1e-3);
    if (std::getenv("NCCLZ_BACK_TO_BACK_ONLY")) return finish();
  }
  // Recursive doubling allreduce, every op, both element types and bounds, in place and apart
  // (NCCLZ_DOUBLING_ONLY=1 stops after these).
  for (const ncclRedOp_t op : {ncclSum, ncclMin, ncclMax}) {
    for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{8193}, std::size_t{300007}}) {
      check_allreduce<RelFL, float, ncclz::schedule::RecursiveDoubling>(cc, c, stream, seed, count, 1e-3, false, op);
      check_allreduce<AbsFL, double, ncclz::schedule::RecursiveDoubling>(cc, c, stream, seed, count, 1e-4, true, op);
    }
  }
  check_allreduce<RelAd, float, ncclz::schedule::RecursiveDoubling>(cc, c, stream, seed, 1000003, 1e-3, false);
  check_fixed_rate<Fixed8, float, ncclz::schedule::RecursiveDoubling>(cc, c, stream, seed, 100003, ncclSum, false);
  if (std::getenv("NCCLZ_DOUBLING_ONLY")) return finish();
  // FixedRate first (NCCLZ_FIXED_RATE_ONLY=1 stops after these and one timing).
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{8193}, std::size_t{1000003}}) {
    check_fixed_rate<Fixed8, float>(cc, c, stream, seed, count, ncclSum, false);
    check_fixed_rate<Fixed8, float, ncclz::schedule::Ring>(cc, c, stream, seed, count, ncclSum, false);
  }
  check_fixed_rate<Fixed8, float>(cc, c, stream, seed, 1000003, ncclMax, false);
  check_fixed_rate<Fixed8, double, ncclz::schedule::Ring>(cc, c, stream, seed, 100003, ncclMin, false);
  check_fixed_rate<Fixed4, float>(cc, c, stream, seed, 1000003, ncclSum, false);
  for (const std::size_t recvcount : {std::size_t{4096}, std::size_t{250007}}) {
    check_fixed_rate<Fixed8, float>(cc, c, stream, seed, recvcount, ncclSum, true);
    check_fixed_rate<Fixed8, float, ncclz::schedule::Ring>(cc, c, stream, seed, recvcount, ncclSum, true);
  }
  check_fixed_rate<Fixed4, double>(cc, c, stream, seed, 30011, ncclMax, true);
  check_fixed_rate<Fixed8, float>(cc, c, stream, seed, 1000003, ncclSum, false, /*gather=*/true);
  check_fixed_rate<Fixed4, double>(cc, c, stream, seed, 8193, ncclSum, false, /*gather=*/true);
  check_alltoall<Fixed8, float>(cc, c, stream, seed, 250007, 8);  // per-rank steps; the bound 8 is only a loose check
  if (std::getenv("NCCLZ_FIXED_RATE_ONLY")) {
    time_allreduce<ncclz::Pipeline<ncclz::Overlap<4>>, Fixed8>(cc, stream, seed, std::size_t{64} << 20, 8);
    return finish();
  }
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{8193}, std::size_t{1000003}}) {
    check_allgather<RelFL, float>(cc, c, stream, seed, count, 1e-3, false);
    check_allgather<AbsFL, double>(cc, c, stream, seed, count, 1e-4, false);
  }
  check_allgather<RelFL, float>(cc, c, stream, seed, 300001, 1e-2, true);
  for (const int root : {0, cc.nranks() - 1}) {
    check_broadcast<RelFL, float>(cc, c, stream, seed, 1000003, root, 1e-3);
    check_broadcast<AbsFL, double>(cc, c, stream, seed, 4099, root, 1e-5);
    check_broadcast<RelFL, float, ncclz::schedule::Tree>(cc, c, stream, seed, 300007, root, 1e-3);
  }
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{8193}, std::size_t{1000003}}) {
    check_allreduce<RelFL, float>(cc, c, stream, seed, count, 1e-3, false);
    check_allreduce<AbsFL, double>(cc, c, stream, seed, count, 1e-4, false);
    check_allreduce<RelFL, float, ncclz::schedule::Ring>(cc, c, stream, seed, count, 1e-3, false);
  }
  check_allreduce<RelFL, float>(cc, c, stream, seed, 300001, 1e-2, true);
  check_allreduce<RelFL, float, ncclz::schedule::Auto, ncclz::Pipeline<ncclz::NoOverlap>>(cc, c, stream, seed, 1000003, 1e-3, true);
  check_allreduce<AbsFL, double, ncclz::schedule::Direct, ncclz::Pipeline<ncclz::Overlap<3>>>(cc, c, stream, seed, 1000003, 1e-4,
                                                                                            false, ncclSum, cc.nranks() - 1);
  check_allreduce<RelFL, float, ncclz::schedule::Ring>(cc, c, stream, seed, 300001, 1e-2, true);
  for (const ncclRedOp_t op : {ncclMin, ncclMax}) {
    check_allreduce<RelFL, float>(cc, c, stream, seed, 500009, 1e-3, false, op);
    check_allreduce<AbsFL, double, ncclz::schedule::Ring>(cc, c, stream, seed, 8193, 1e-4, true, op);
    check_reduce_scatter<RelFL, float>(cc, c, stream, seed, 100003, 1e-3, op);
  }
  for (const int root : {0, cc.nranks() - 1}) {
    check_allreduce<RelFL, float>(cc, c, stream, seed, 700001, 1e-3, false, ncclSum, root);
    check_allreduce<AbsFL, double, ncclz::schedule::Ring>(cc, c, stream, seed, 4099, 1e-5, true, ncclMax, root);
  }
  check_reduce_scatter<RelFL, float>(cc, c, stream, seed, 250007, 1e-3);
  // The Adaptive coder: partial sums travel as huffman / zero_run / fixed_length tiles of codes.
  check_allreduce<RelAd, float>(cc, c, stream, seed, 1000003, 1e-3, false);
  check_allreduce<RelAd, float, ncclz::schedule::Ring>(cc, c, stream, seed, 300001, 1e-2, false);
  check_reduce_scatter<RelAd, float>(cc, c, stream, seed, 250007, 1e-3);
  check_allgather<RelAd, float>(cc, c, stream, seed, 300001, 1e-3, false);
  check_alltoall<RelAd, float>(cc, c, stream, seed, 100003, 1e-3);
  check_reduce_scatter<RelFL, float, ncclz::schedule::Ring>(cc, c, stream, seed, 250007, 1e-3);
  check_reduce_scatter<AbsFL, double>(cc, c, stream, seed, 4099, 1e-5);
  check_reduce_scatter<RelFL, float>(cc, c, stream, seed, 0, 1e-3);
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{8193}, std::size_t{250007}}) {
    check_alltoall<RelFL, float>(cc, c, stream, seed, count, 1e-3);
    check_alltoall<AbsFL, double>(cc, c, stream, seed, count, 1e-5);
  }
  {  // mismatched counts: every rank must get the error, none may hang
    ncclz::Communicator<RelFL> comm(cc.comm(), compress_always());
    device_array<float> d(2 * 1001 * cc.nranks());
    NCCLZ_CUDA_TRY(cudaMemset(d.ptr, 0, 2 * 1001 * cc.nranks() * sizeof(float)));
    const std::size_t count = cc.rank() == 1 ? 1001 : 1000;
    try {
      comm.allgather(d.ptr, d.ptr + 1001, count, 1e-3, stream);
      c.fail("allgather with mismatched counts did not throw");
    } catch (const ncclz::invalid_argument& e) {
      if (cc.rank() == 0) std::printf("mismatched counts rejected on every rank: %s\n", e.what());
    }
    try {
      comm.allreduce(d.ptr, d.ptr + 1001, count, ncclSum, 1e-3, stream);
      c.fail("allreduce with mismatched counts did not throw");
    } catch (const ncclz::invalid_argument&) {
    }
    try {
      comm.allreduce(d.ptr, d.ptr, 10, ncclProd, 1e-3, stream);
      c.fail("allreduce with ncclProd did not throw");
    } catch (const ncclz::invalid_argument&) {
    }
    try {
      comm.alltoall(d.ptr, d.ptr + 1001 * cc.nranks(), count, 1e-3, stream);
      c.fail("alltoall with mismatched counts did not throw");
    } catch (const ncclz::invalid_argument&) {
    }
    try {
      comm.broadcast(d.ptr, d.ptr, 10, cc.nranks(), 1e-3, stream);
      c.fail("broadcast with root == nranks did not throw");
    } catch (const ncclz::invalid_argument&) {
    }
  }
  {  // below the default threshold the call is NCCL's own: exact, and flagged
    ncclz::Communicator<RelFL> comm(cc.comm());
    const std::size_t count = 1000;
    std::vector<std::vector<float>> inputs;
    for (int r = 0; r < cc.nranks(); ++r) inputs.push_back(input_of<float>(seed + 11, r, count));
    device_array<float> d(count);
    NCCLZ_CUDA_TRY(cudaMemcpy(d.ptr, inputs[cc.rank()].data(), count * sizeof(float), cudaMemcpyHostToDevice));
    comm.allreduce(d.ptr, d.ptr, count, ncclSum, 1e-3, stream);
    cc.synchronize(stream);
    std::vector<float> got(count);
    NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), d.ptr, count * sizeof(float), cudaMemcpyDeviceToHost));
    const std::vector<double> want = exact_reduce(inputs, ncclSum);
    double max_err = 0;
    if (!comm.last_call().fallback) c.fail("a 4 KB allreduce did not fall back to NCCL");
    if (count_sum_violations(got.data(), want.data(), count, 1e-4 * cc.nranks(), max_err) != 0) c.fail("fallback allreduce is wrong");
  }
  {  // the autotuner: probes, then one route for all ranks, probed again after 4 calls; every
     // result within the bound
    ncclz::communicator_config config;
    config.fallback_below_bytes = 0;
    config.autotune_recheck_calls = 4;
    ncclz::Communicator<RelFL> comm(cc.comm(), config);
    const std::size_t count = 1 << 20;
    std::vector<std::vector<float>> inputs;
    for (int r = 0; r < cc.nranks(); ++r) inputs.push_back(input_of<float>(seed + 17, r, count));
    const std::vector<double> want = exact_reduce(inputs, ncclSum);
    const double eb = range_bound(inputs, 1e-3);
    device_array<float> d_send(count), d_recv(count);
    NCCLZ_CUDA_TRY(cudaMemcpy(d_send.ptr, inputs[cc.rank()].data(), count * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> got(count);
    // 2 warm calls, 6 probes and the deciding call; 3 calls on the decision; 6 probes and the
    // second decision.
    for (int call = 0; call < 9 + 3 + 7; ++call) {
      comm.allreduce(d_send.ptr, d_recv.ptr, count, ncclSum, 1e-3, stream);
      comm.check(stream);
      NCCLZ_CUDA_TRY(cudaMemcpy(got.data(), d_recv.ptr, count * sizeof(float), cudaMemcpyDeviceToHost));
      double max_err = 0;
      if (count_sum_violations(got.data(), want.data(), count, eb, max_err) != 0) c.fail("autotuned allreduce outside the bound");
    }
    const ncclz::call_info& info = comm.last_call();
    if (!(info.autotune_ncclz_ms > 0 && info.autotune_nccl_ms > 0)) c.fail("the autotuner did not decide");
    if (info.autotune_decisions != 2) {
      c.fail("the autotuner made " + std::to_string(info.autotune_decisions) + " decisions, not 2 (a re-check after 4 calls)");
    }
    const int route = info.fallback ? 1 : 0;
    if (!same_on_all_ranks(cc, &route, sizeof route, stream)) c.fail("ranks took different routes after autotuning");
    if (cc.rank() == 0) {
      std::printf("autotune allreduce 4 MiB: compressed %.3f ms, NCCL %.3f ms (medians, slowest rank): %s\n",
                  info.autotune_ncclz_ms, info.autotune_nccl_ms, info.fallback ? "NCCL" : "compressed");
    }
  }
  time_allgather(cc, stream, seed, std::size_t{16} << 20, 1e-3);
  time_allreduce(cc, stream, seed, std::size_t{64} << 20, 1e-3);
  time_allreduce(cc, stream, seed, std::size_t{64} << 20, 1e-2);
  time_allreduce<ncclz::Pipeline<ncclz::NoOverlap>>(cc, stream, seed, std::size_t{64} << 20, 1e-2);
  time_allreduce<ncclz::Pipeline<ncclz::Overlap<8>>>(cc, stream, seed, std::size_t{64} << 20, 1e-2);
  time_allreduce<ncclz::Pipeline<ncclz::Overlap<4>>, Fixed8>(cc, stream, seed, std::size_t{64} << 20, 8);
  return finish();
}

}  // namespace

int main() { return ncclz::test::rank_main("test_collectives", run); }
