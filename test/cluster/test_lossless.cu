// ncclz::Communicator with Codec<Quantizer<Lossless>, ...> on real multi-rank NCCL (one process per
// rank, scripts/emulated_cluster.sh): allgather, broadcast and alltoall return every rank's values
// bit for bit; allreduce, reduce and reduce_scatter (sum, min, max) return the bits of an
// uncompressed reduction in rank order 0..n-1 in compute_t<T>, rounded to T once, computed here
// by this test's own kernel from every rank's input. fp32, bf16, fp16 (and fp64, stored raw);
// counts 0, 1, odd and large; NaN payloads, +-Inf, -0.0, subnormals and overflowing sums; in place;
// the default config (whose fallback would send small calls to NCCL: lossless reductions must not
// go there); a ring schedule and a nonzero bound refused.
//
// Every rank computes every rank's input from a seed rank 0 draws and broadcasts
// (NCCLZ_TEST_SEED reproduces it). Exit 0 when all checks pass on this rank, 1 otherwise, 77
// without a GPU. Every rank runs every step, so ranks stay in step even after a failure.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ncclz/bootstrap.hpp"
#include "ncclz/ncclz.cuh"
#include "codec_kernels.cuh"  // the codecs' kernels, compiled once (src/kernels/)
#include "rank_main.hpp"

namespace {

using ncclz::test::device_array;

using Lossless = ncclz::Codec<ncclz::Quantizer<ncclz::Lossless>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using LosslessRaw = ncclz::Codec<ncclz::Quantizer<ncclz::Lossless>, ncclz::EntropyCoder<ncclz::Raw>>;

template <class T>
using bits_t = std::conditional_t<sizeof(T) == 2, std::uint16_t, std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;

template <class T>
T from_bits(std::uint64_t b) {
  const auto v = static_cast<bits_t<T>>(b);
  T x;
  std::memcpy(static_cast<void*>(&x), &v, sizeof x);
  return x;
}

template <class T>
std::uint64_t bits_of(T x) {
  bits_t<T> b;
  std::memcpy(&b, &x, sizeof x);
  return b;
}

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "f32";
  else if constexpr (std::is_same_v<T, double>) return "f64";
  else if constexpr (std::is_same_v<T, __half>) return "f16";
  else return "bf16";
}

const char* op_name(ncclRedOp_t op) { return op == ncclSum ? "sum" : op == ncclMin ? "min" : "max"; }

/// Rank r's input: gradient-like (Gaussian of a per-1024-block scale, a twentieth exactly 0), and
/// special values at fixed places, different per rank, so that sums meet NaN + x, Inf - Inf,
/// -0 + -0, -0 + 0, overflow to Inf and subnormals.
template <class T>
std::vector<T> input_of(std::uint64_t seed, int rank, std::size_t count) {
  std::mt19937_64 g(seed * 1000003u + static_cast<std::uint64_t>(rank));
  std::normal_distribution<double> normal;
  std::vector<T> v(count);
  double scale = 1e-3;
  for (std::size_t i = 0; i < count; ++i) {
    if (i % 1024 == 0) scale = std::pow(10.0, -5.0 + 3.0 * static_cast<double>(g() % 1000) / 1000.0);
    const double x = g() % 20 == 0 ? 0.0 : scale * normal(g);
    v[i] = ncclz::from_compute<T>(static_cast<ncclz::compute_t<T>>(x));
  }
  const std::uint64_t nan_payload = sizeof(T) == 8 ? 0x7FF8000000000123ull : sizeof(T) == 4 ? 0x7FC00123u
                                    : std::is_same_v<T, __half> ? 0x7E12u : 0x7FA1u;
  const std::uint64_t sign = std::uint64_t{1} << (8 * sizeof(T) - 1);
  const auto put = [&](std::size_t i, T x) {
    if (i < count) v[i] = x;
  };
  const auto at = [&](std::size_t i) { return i < count ? v[i] : T{}; };
  const T inf = from_bits<T>(sizeof(T) == 8 ? 0x7FF0000000000000ull : sizeof(T) == 4 ? 0x7F800000u
                             : std::is_same_v<T, __half> ? 0x7C00u : 0x7F80u);
  const T big = from_bits<T>(sizeof(T) == 8 ? 0x7FEFFFFFFFFFFFFFull : sizeof(T) == 4 ? 0x7F7FFFFFu
                             : std::is_same_v<T, __half> ? 0x7BFFu : 0x7F7Fu);  // the largest finite
  put(1, rank == 0 ? from_bits<T>(nan_payload) : at(1));
  put(2, rank == 1 ? from_bits<T>(nan_payload | sign) : at(2));
  put(3, rank % 2 ? inf : from_bits<T>(bits_of(inf) | sign));  // Inf - Inf = NaN
  put(4, rank == 0 ? inf : at(4));
  put(5, from_bits<T>(sign));                                       // -0 on every rank: -0
  put(6, rank == 0 ? from_bits<T>(sign) : from_bits<T>(0));         // -0 + 0
  put(7, from_bits<T>(1u + static_cast<unsigned>(rank)));           // subnormals
  put(8, big);                                                      // the sum overflows to Inf
  put(9, rank == 0 ? big : from_bits<T>(bits_of(big) | sign));   // big - big = 0
  if constexpr (std::is_same_v<T, float>) put(10, from_bits<T>(ncclz::Quantizer<ncclz::Lossless>::kOutlierBits));
  return v;
}

/// The reference: out[i] = in_0[i] op ... op in_{n-1}[i] (rank r's input at all + r * count),
/// left to right in compute_t<T>, rounded to T once; NaN wins in min and max (as a + b); ties of
/// min and max take the later rank's value (a < b ? a : b). Written apart from ncclz's kernel.
template <class T>
__global__ void reference_reduce(const T* all, std::size_t count, int nranks, int op, T* out) {
  using C = ncclz::compute_t<T>;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count; i += std::size_t{gridDim.x} * blockDim.x) {
    C acc = ncclz::to_compute(all[i]);
    for (int r = 1; r < nranks; ++r) {
      const C v = ncclz::to_compute(all[r * count + i]);
      if (op == 0 || acc != acc || v != v) acc = acc + v;
      else if (op == 1) acc = acc < v ? acc : v;
      else acc = acc > v ? acc : v;
    }
    out[i] = ncclz::from_compute<T>(acc);
  }
}

/// The tests exercise the compressed path at every size (the reductions also run with the default
/// config, below).
ncclz::communicator_config compress_always() {
  ncclz::communicator_config c;
  c.fallback_below_bytes = 0;
  c.autotune = false;
  return c;
}

struct context {
  ncclz::cluster_comm& cc;
  cudaStream_t stream;
  std::uint64_t seed;
  int failures = 0, checks = 0;

  void fail(const std::string& what) {
    ++failures;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", cc.rank(), what.c_str());
  }

  template <class T>
  std::vector<T> download(const T* d, std::size_t n) {
    std::vector<T> h(n);
    if (n > 0) NCCLZ_CUDA_TRY(cudaMemcpyAsync(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
    cc.synchronize(stream);
    return h;
  }

  template <class T>
  void upload(T* d, const std::vector<T>& h) {
    if (!h.empty()) NCCLZ_CUDA_TRY(cudaMemcpyAsync(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
  }

  /// got == want bit for bit; names the first difference.
  template <class T>
  void expect_bits(const std::string& what, const std::vector<T>& got, const T* want, std::size_t n) {
    ++checks;
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (bits_of(got[i]) != bits_of(want[i]) && bad++ == 0) first = i;
    if (bad > 0) {
      char m[160];
      std::snprintf(m, sizeof m, ": %zu of %zu elements differ, first [%zu]: 0x%llx, want 0x%llx", bad, n, first,
                    static_cast<unsigned long long>(bits_of(got[first])), static_cast<unsigned long long>(bits_of(want[first])));
      fail(what + m);
    }
  }

  template <class T>
  std::vector<std::vector<T>> inputs(std::size_t count) {
    std::vector<std::vector<T>> in;
    for (int r = 0; r < cc.nranks(); ++r) in.push_back(input_of<T>(seed + count, r, count));
    return in;
  }

  /// The reduction of every rank's input, by reference_reduce.
  template <class T>
  std::vector<T> reference(const std::vector<std::vector<T>>& in, std::size_t count, ncclRedOp_t op) {
    const int n = cc.nranks();
    device_array<T> all(count * n), out(count);
    for (int r = 0; r < n; ++r)
      if (count > 0) NCCLZ_CUDA_TRY(cudaMemcpyAsync(all.ptr + r * count, in[r].data(), count * sizeof(T), cudaMemcpyHostToDevice, stream));
    reference_reduce<T><<<256, 256, 0, stream>>>(all.ptr, count, n, op == ncclSum ? 0 : op == ncclMin ? 1 : 2, out.ptr);
    NCCLZ_CUDA_TRY(cudaGetLastError());
    return download(out.ptr, count);
  }

  template <class Comm>
  void expect_info(const std::string& what, const Comm& comm) {
    const ncclz::call_info& i = comm.last_call();
    if (i.fallback || i.error_bound != 0.0) fail(what + ": call_info says fallback or a nonzero error bound");
    if (std::string(i.collective).find("reduce") != std::string::npos && std::string(i.schedule) != "direct") {
      fail(what + ": a lossless reduction ran the " + i.schedule + " schedule");
    }
  }
};

template <class T, class Codec = Lossless>
void check_reductions(context& x, std::size_t count, ncclRedOp_t op, bool in_place, const ncclz::communicator_config& config) {
  const int n = x.cc.nranks(), me = x.cc.rank();
  const auto in = x.inputs<T>(count);
  const std::vector<T> want = x.reference(in, count, op);
  ncclz::Communicator<Codec> comm(x.cc.comm(), config);
  const std::string tag = std::string(type_name<T>()) + " " + op_name(op) + " count " + std::to_string(count) +
                          (in_place ? " in place" : "") + (config.fallback_below_bytes ? " (default config)" : "");
  device_array<T> send(count), recv(count);
  // allreduce
  x.upload(send.ptr, in[me]);
  NCCLZ_CUDA_TRY(cudaMemsetAsync(recv.ptr, 0xFF, std::max<std::size_t>(count, 1) * sizeof(T), x.stream));
  comm.allreduce(send.ptr, in_place ? send.ptr : recv.ptr, count, op, 0.0, x.stream);
  comm.check(x.stream);
  x.expect_bits("allreduce " + tag, x.download(in_place ? send.ptr : recv.ptr, count), want.data(), count);
  x.expect_info("allreduce " + tag, comm);
  // reduce, to the first and the last rank
  for (const int root : {0, n - 1}) {
    x.upload(send.ptr, in[me]);
    NCCLZ_CUDA_TRY(cudaMemsetAsync(recv.ptr, 0xFF, std::max<std::size_t>(count, 1) * sizeof(T), x.stream));
    comm.reduce(send.ptr, in_place ? send.ptr : recv.ptr, count, op, root, 0.0, x.stream);
    comm.check(x.stream);
    if (me == root) x.expect_bits("reduce to " + std::to_string(root) + " " + tag, x.download(in_place ? send.ptr : recv.ptr, count), want.data(), count);
    x.expect_info("reduce " + tag, comm);
  }
  // reduce_scatter of count / n per rank (the input's first recvcount * n values)
  const std::size_t rc = count / n;
  std::vector<std::vector<T>> cut;
  for (int r = 0; r < n; ++r) cut.emplace_back(in[r].begin(), in[r].begin() + rc * n);
  const std::vector<T> want_rs = x.reference(cut, rc * n, op);
  x.upload(send.ptr, cut[me]);
  T* out = in_place ? send.ptr + static_cast<std::size_t>(me) * rc : recv.ptr;
  comm.reduce_scatter(send.ptr, out, rc, op, 0.0, x.stream);
  comm.check(x.stream);
  x.expect_bits("reduce_scatter " + tag, x.download(out, rc), want_rs.data() + static_cast<std::size_t>(me) * rc, rc);
  x.expect_info("reduce_scatter " + tag, comm);
}

template <class T, class Codec = Lossless>
void check_moves(context& x, std::size_t count) {
  const int n = x.cc.nranks(), me = x.cc.rank();
  const auto in = x.inputs<T>(count);
  ncclz::Communicator<Codec> comm(x.cc.comm(), compress_always());
  const std::string tag = std::string(type_name<T>()) + " count " + std::to_string(count);
  device_array<T> send(count * n), recv(count * n);
  // allgather
  x.upload(send.ptr, in[me]);
  comm.allgather(send.ptr, recv.ptr, count, 0.0, x.stream);
  comm.check(x.stream);
  const std::vector<T> got = x.download(recv.ptr, count * n);
  for (int r = 0; r < n; ++r) x.expect_bits("allgather from " + std::to_string(r) + " " + tag, std::vector<T>(got.begin() + r * count, got.begin() + (r + 1) * count), in[r].data(), count);
  x.expect_info("allgather " + tag, comm);
  // broadcast from the last rank
  const int root = n - 1;
  x.upload(send.ptr, in[me]);
  comm.broadcast(send.ptr, recv.ptr, count, root, 0.0, x.stream);
  comm.check(x.stream);
  x.expect_bits("broadcast " + tag, x.download(recv.ptr, count), in[root].data(), count);
  // alltoall: block p of rank r's send is in_r shifted by p (so blocks differ)
  std::vector<T> mine;
  for (int p = 0; p < n; ++p) mine.insert(mine.end(), in[(me + p) % n].begin(), in[(me + p) % n].end());
  x.upload(send.ptr, mine);
  comm.alltoall(send.ptr, recv.ptr, count, 0.0, x.stream);
  comm.check(x.stream);
  const std::vector<T> all = x.download(recv.ptr, count * n);
  for (int r = 0; r < n; ++r) {
    // rank r's block for me is in[(r + me) % n]
    x.expect_bits("alltoall from " + std::to_string(r) + " " + tag, std::vector<T>(all.begin() + r * count, all.begin() + (r + 1) * count),
                  in[(r + me) % n].data(), count);
  }
}

/// A ring schedule and a nonzero bound are refused on every rank before anything moves.
void check_refusals(context& x) {
  device_array<float> buf(64);
  ncclz::Communicator<Lossless, ncclz::schedule::Ring> ring(x.cc.comm(), compress_always());
  ++x.checks;
  try {
    ring.allreduce(buf.ptr, buf.ptr, 64, ncclSum, 0.0, x.stream);
    x.fail("a lossless allreduce on the ring schedule was not refused");
  } catch (const ncclz::invalid_argument& e) {
    if (std::string(e.what()).find("direct") == std::string::npos) x.fail(std::string("ring refusal does not say why: ") + e.what());
  }
  ncclz::Communicator<Lossless> comm(x.cc.comm(), compress_always());
  ++x.checks;
  try {
    comm.allreduce(buf.ptr, buf.ptr, 64, ncclSum, 1e-3, x.stream);
    x.fail("a lossless allreduce with bound 1e-3 was not refused");
  } catch (const ncclz::invalid_argument& e) {
    if (std::string(e.what()).find("bound 0") == std::string::npos) x.fail(std::string("bound refusal does not say why: ") + e.what());
  }
}

int run() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress reaches the log even if a rank dies
  ncclz::cluster_comm cc(ncclz::rank_from_environment());
  cudaStream_t stream;
  NCCLZ_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::uint64_t seed = ncclz::test::shared_seed(cc, stream, "test_lossless");
  context x{cc, stream, seed};
  const ncclz::communicator_config defaults;
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{8193}, std::size_t{1000003}}) {
    if (cc.rank() == 0) std::printf("test_lossless: count %zu\n", count);
    check_moves<float>(x, count);
    check_moves<__nv_bfloat16>(x, count);
    check_moves<__half>(x, count);
    for (const ncclRedOp_t op : {ncclSum, ncclMin, ncclMax}) {
      check_reductions<float>(x, count, op, false, compress_always());
      check_reductions<__nv_bfloat16>(x, count, op, false, compress_always());
      check_reductions<__half>(x, count, op, false, compress_always());
    }
  }
  check_moves<double>(x, 8193);
  check_reductions<double>(x, 8193, ncclSum, false, compress_always());
  check_reductions<float, LosslessRaw>(x, 8193, ncclSum, false, compress_always());
  for (const ncclRedOp_t op : {ncclSum, ncclMax}) {
    check_reductions<float>(x, 300007, op, true, compress_always());
    check_reductions<__nv_bfloat16>(x, 300007, op, true, compress_always());
  }
  check_reductions<float>(x, 4099, ncclSum, false, defaults);  // small: the default config would fall back
  check_reductions<__half>(x, 1000003, ncclSum, false, defaults);
  check_refusals(x);

  // How much the lossless chunks saved on this gradient-like input (this rank's view).
  {
    const std::size_t count = 1 << 22;
    const auto in = x.inputs<float>(count);
    ncclz::Communicator<Lossless> comm(cc.comm(), compress_always());
    device_array<float> buf(count);
    x.upload(buf.ptr, in[cc.rank()]);
    comm.allreduce(buf.ptr, buf.ptr, count, ncclSum, 0.0, stream);
    comm.check(stream);
    if (cc.rank() == 0) {
      const ncclz::call_info& i = comm.last_call();
      std::printf("test_lossless: 16 MiB f32 allreduce: ratio %.3f of the owner's chunk, %.1f MB sent by rank 0\n", i.ratio,
                  i.bytes_sent / 1e6);
    }
  }
  NCCLZ_CUDA_TRY(cudaStreamDestroy(stream));
  std::printf("test_lossless: rank %d: %d checks, %d failed\n", cc.rank(), x.checks, x.failures);
  return x.failures == 0 ? 0 : 1;
}

}  // namespace

int main() { return ncclz::test::rank_main("test_lossless", run); }
