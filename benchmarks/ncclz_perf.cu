// ncclz-perf: ncclz's collectives next to NCCL's, in nccl-tests' format. One process per rank:
//
//   scripts/emulated_cluster.sh -n 4 -- build/benchmarks/ncclz-perf -C allreduce,allgather --data data
//
// One row per collective and size: nccl-tests' columns (size count type redop root, then time
// algbw busbw #wrong) for NCCL and for ncclz on the same input buffers, then ncclz's speedup,
// compression ratio, largest error, promised bound, coder and whether the call fell back to NCCL.
// size is nccl-tests' (the larger of the send and receive buffers). Time: CUDA events around each
// call, started after a one-float allreduce so that the ranks start together; per iteration the
// slowest rank's; the median over -n iterations after -w warm-ups (min and max go to --json); NCCL's
// and ncclz's timed iterations alternate.
// #wrong: elements of the result outside the tolerance around a float64 reference, summed over
// the ranks (benchmarks/perf/perf_check.hpp says which tolerance). Out of place only.
//
// Exit status: 0; 1 when an element is wrong or a call fails; 2 on a bad command line; 77 without
// a CUDA device (meson's "skipped").
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ncclz/bootstrap.hpp"
#include "ncclz/ncclz.cuh"
#include "json_text.hpp"
#include "perf/perf_check.hpp"
#include "perf/perf_options.hpp"

extern char** environ;

namespace ncclz::perf {
// The 16-bit element types, seen from the float64 reference (perf/perf_check.hpp).
struct half_conversions {
  static __half from_float(float x) { return __float2half(x); }
  static float to_float(__half x) { return __half2float(x); }
};
struct bfloat16_conversions {
  static __nv_bfloat16 from_float(float x) { return __float2bfloat16(x); }
  static float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
};
template <>
struct element<__half> : detail::narrow_element<__half, half_conversions, 10> {
  static constexpr const char* name = "half";
};
template <>
struct element<__nv_bfloat16> : detail::narrow_element<__nv_bfloat16, bfloat16_conversions, 7> {
  static constexpr const char* name = "bfloat16";
};

/// --schedule as a schedule policy (the extension point of ncclz/schedule/schedule.hpp), so that
/// one Communicator type serves every choice: it answers as the tag it names would, refusals
/// included. Set once from the command line, before any collective runs.
struct schedule_flag {
  static constexpr const char* name = "--schedule";
  static inline std::string chosen = "auto";
};

schedule::algorithm algorithm_for(schedule_flag, schedule::collective c, std::uint64_t bytes, int nranks) {
  namespace s = ncclz::schedule;
  if (schedule_flag::chosen == "ring") return algorithm_for(s::Ring{}, c, bytes, nranks);
  if (schedule_flag::chosen == "direct") return algorithm_for(s::Direct{}, c, bytes, nranks);
  if (schedule_flag::chosen == "tree") return algorithm_for(s::Tree{}, c, bytes, nranks);
  return algorithm_for(s::Auto{}, c, bytes, nranks);
}
}  // namespace ncclz::perf

namespace {

using ncclz::bench::json_array;
using ncclz::bench::json_number;
using ncclz::bench::json_object;
using ncclz::bench::json_string;
using ncclz::nccl_type;
using ncclz::perf::schedule_flag;
using ncclz::schedule::collective;
namespace perf = ncclz::perf;

ncclRedOp_t nccl_op(perf::reduction r) {
  switch (r) {
    case perf::reduction::sum: return ncclSum;
    case perf::reduction::min: return ncclMin;
    case perf::reduction::max: return ncclMax;
  }
  return ncclSum;
}

template <class T>
struct device_array {
  T* ptr = nullptr;
  explicit device_array(std::size_t n) { NCCLZ_CUDA_TRY(cudaMalloc(&ptr, std::max<std::size_t>(n, 1) * sizeof(T))); }
  ~device_array() { NCCLZ_CUDA_TRY_NO_THROW(cudaFree(ptr)); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
};

struct timing {
  double median_us = 0, min_us = 0, max_us = 0;
};

timing summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {1e3 * ms[ms.size() / 2], 1e3 * ms.front(), 1e3 * ms.back()};
}

/// The phases Communicator::phase_times reports (with --phases), in rank_report's order.
constexpr const char* kPhases[] = {"codec", "size exchange", "host gap", "transfer"};

/// One rank's side of a row, gathered to rank 0 as doubles.
struct rank_report {
  double parts, size_waits, size_wait_ms, bytes_sent, chunk_bytes, ratio, error_bound, fallback;
  double autotune_ncclz_ms, autotune_nccl_ms;  ///< the library's probes of this size class (0: not tuned)
  double wrong_nccl, wrong_ncclz, max_err_nccl, max_err_ncclz;
  double phase_ms[std::size(kPhases)];  ///< of the last timed call, with --phases
};

struct row {
  perf::row_shape shape;
  std::size_t element_bytes;
  timing nccl, ncclz;
  std::vector<rank_report> ranks;
  const char* coder;
  const char* schedule;

  [[nodiscard]] std::uint64_t bytes() const { return shape.count() * element_bytes; }
  [[nodiscard]] double algbw(const timing& t) const { return static_cast<double>(bytes()) / (t.median_us * 1e3); }
  [[nodiscard]] double busbw(const timing& t) const { return algbw(t) * perf::bus_factor(shape.collective, shape.nranks); }
  [[nodiscard]] double speedup() const { return nccl.median_us / ncclz.median_us; }
  [[nodiscard]] bool fallback() const {
    return std::any_of(ranks.begin(), ranks.end(), [](const rank_report& r) { return r.fallback != 0; });
  }
  template <class F>
  [[nodiscard]] double sum(F field) const {
    double s = 0;
    for (const auto& r : ranks) s += r.*field;
    return s;
  }
  template <class F>
  [[nodiscard]] double largest(F field) const {
    double m = 0;
    for (const auto& r : ranks) m = std::max(m, r.*field);
    return m;
  }
  /// Mean compression ratio over the ranks that compressed.
  [[nodiscard]] double ratio() const {
    double s = 0;
    int k = 0;
    for (const auto& r : ranks)
      if (r.ratio > 0) s += r.ratio, ++k;
    return k ? s / k : 0;
  }
};

/// NCCL_*, NCCLZ_* and CUDA_* variables of this process: what shaped the transport and the run.
std::string environment_json() {
  json_object env;
  std::vector<std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view v(*e);
    if (v.starts_with("NCCL_") || v.starts_with("NCCLZ_") || v.starts_with("CUDA_")) vars.emplace_back(v);
  }
  std::sort(vars.begin(), vars.end());
  for (const auto& v : vars) {
    const std::size_t eq = v.find('=');
    env.add(v.substr(0, eq), std::string_view(v).substr(eq + 1));
  }
  return env.str();
}

std::string nccl_version() {
  int v = 0;
  NCCLZ_NCCL_TRY(ncclGetVersion(&v));
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

std::string timing_json(const row& r, const timing& t, double wrong, double max_err, bool checked) {
  return json_object()
      .add("time_us", t.median_us)
      .add("min_us", t.min_us)
      .add("max_us", t.max_us)
      .add("algbw", r.algbw(t))
      .add("busbw", r.busbw(t))
      .raw("wrong", checked ? json_number(wrong) : "null")
      .raw("max_err", checked ? json_number(max_err) : "null")
      .str();
}

// ---- the benchmark ------------------------------------------------------------------------------
template <class Codec, class T>
class bench {
 public:
  bench(const perf::options& o, ncclz::cluster_comm& cc, const perf::input_source& in, cudaStream_t stream)
      : o_(o),
        cc_(cc),
        in_(in),
        stream_(stream),
        n_(cc.nranks()),
        me_(cc.rank()),
        max_count_(o.max_bytes / sizeof(T)),
        d_send_(max_count_),
        d_nccl_out_(max_count_),
        d_ncclz_out_(max_count_),
        d_scratch_(std::max<std::size_t>(2 * static_cast<std::size_t>(o.iters) + 1, sizeof(rank_report) / sizeof(double) * n_)),
        ncclz_(cc.comm(), config_of(o)),
        start_(2 * static_cast<std::size_t>(o.iters)),
        stop_(2 * static_cast<std::size_t>(o.iters)) {
    for (std::size_t i = 0; i < start_.size(); ++i) {
      NCCLZ_CUDA_TRY(cudaEventCreate(&start_[i]));
      NCCLZ_CUDA_TRY(cudaEventCreate(&stop_[i]));
    }
    upload_input();
  }
  ~bench() {
    for (std::size_t i = 0; i < start_.size(); ++i) {
      NCCLZ_CUDA_TRY_NO_THROW(cudaEventDestroy(start_[i]));
      NCCLZ_CUDA_TRY_NO_THROW(cudaEventDestroy(stop_[i]));
    }
  }
  bench(const bench&) = delete;
  bench& operator=(const bench&) = delete;

  /// Every row of the sweep; rank 0 prints them and writes them to `json` (may be null).
  std::vector<row> run(std::FILE* json) {
    connect_all_peers();
    std::vector<row> rows;
    for (const collective c : o_.collectives) {
      if (me_ == 0) print_header(c);
      for (const std::uint64_t bytes : perf::sizes(o_)) {
        const perf::row_shape s = perf::shape_of(c, bytes, sizeof(T), n_);
        if (s.count() == 0) continue;  // fewer bytes than one element per rank
        rows.push_back(measure(s));
        if (me_ == 0) {
          print_row(rows.back());
          if (json) {
            std::fprintf(json, "%s\n", row_json(rows.back()).c_str());
            std::fflush(json);  // a run cut short keeps its rows
          }
        }
      }
    }
    return rows;
  }

 private:
  static ncclz::communicator_config config_of(const perf::options& o) {
    ncclz::communicator_config config;
    if (o.fallback_below) config.fallback_below_bytes = *o.fallback_below;
    if (o.fallback_below == std::uint64_t{0}) config.autotune = false;  // 0: compress every call
    // Without --chunk, the library's default part size (Pipeline<Auto>: one part per 64 MiB).
    if (o.chunk_bytes) config.pipeline_part_bytes = o.chunk_bytes;
    config.profile_phases = o.phases;
    config.split_sum_bound = o.split_sum_bound;
    config.priority_transfers = o.priority_transfers;
    return config;
  }

  static std::string phases_json(const rank_report& k) {
    json_object phases;
    for (std::size_t i = 0; i < std::size(kPhases); ++i) phases.add(kPhases[i], k.phase_ms[i]);
    return phases.str();
  }

  /// This rank's input: the whole send buffer, uploaded in slices to bound host memory, each
  /// generated on this rank's share of the host threads (--gen gradient costs two Gaussians a value).
  void upload_input() {
    constexpr std::size_t kSlice = std::size_t{1} << 22;
    std::vector<T> slice(std::min(kSlice, max_count_));
    for (std::size_t first = 0; first < max_count_; first += kSlice) {
      const std::size_t n = std::min(kSlice, max_count_ - first);
      perf::for_each_part(n, perf::parts_for(n, host_threads()), [&](unsigned, std::uint64_t begin, std::uint64_t end) {
        for (std::uint64_t i = begin; i < end; ++i) slice[i] = perf::element<T>::from_double(in_.value(me_, first + i));
      });
      NCCLZ_CUDA_TRY(cudaMemcpy(d_send_.ptr + first, slice.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    }
  }

  /// The ranks of the emulated cluster share one host: each gets its share of the threads.
  unsigned host_threads() const { return std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(n_)); }

  /// One small send and receive with every peer, so that NCCL has connected every pair (it does
  /// so lazily, on first use) before anything is timed.
  void connect_all_peers() {
    cc_.check(ncclGroupStart(), "ncclGroupStart");
    for (int peer = 0; peer < n_; ++peer) {
      if (peer == me_) continue;
      cc_.check(ncclSend(d_scratch_.ptr, 1, ncclDouble, peer, cc_.comm(), stream_), "ncclSend");
      cc_.check(ncclRecv(d_scratch_.ptr + 1, 1, ncclDouble, peer, cc_.comm(), stream_), "ncclRecv");
    }
    cc_.check(ncclGroupEnd(), "ncclGroupEnd");
    cc_.synchronize(stream_);
  }

  void enqueue_nccl(const perf::row_shape& s, T* out) {
    const T* in = d_send_.ptr;
    const ncclComm_t comm = cc_.comm();
    const std::size_t count = s.call_count();
    switch (s.collective) {
      case collective::allreduce:
        cc_.check(ncclAllReduce(in, out, count, nccl_type<T>(), nccl_op(o_.op), comm, stream_), "ncclAllReduce");
        break;
      case collective::reduce_scatter:
        cc_.check(ncclReduceScatter(in, out, count, nccl_type<T>(), nccl_op(o_.op), comm, stream_), "ncclReduceScatter");
        break;
      case collective::allgather: cc_.check(ncclAllGather(in, out, count, nccl_type<T>(), comm, stream_), "ncclAllGather"); break;
      case collective::broadcast:
        cc_.check(ncclBroadcast(in, out, count, nccl_type<T>(), o_.root, comm, stream_), "ncclBroadcast");
        break;
      case collective::reduce:
        cc_.check(ncclReduce(in, out, count, nccl_type<T>(), nccl_op(o_.op), o_.root, comm, stream_), "ncclReduce");
        break;
      case collective::alltoall:  // as nccl-tests does it: a group of sends and receives
        cc_.check(ncclGroupStart(), "ncclGroupStart");
        for (int peer = 0; peer < n_; ++peer) {
          cc_.check(ncclSend(in + peer * count, count, nccl_type<T>(), peer, comm, stream_), "ncclSend");
          cc_.check(ncclRecv(out + peer * count, count, nccl_type<T>(), peer, comm, stream_), "ncclRecv");
        }
        cc_.check(ncclGroupEnd(), "ncclGroupEnd");
        break;
    }
  }

  /// Whether the library sends this row to NCCL without tuning (or compresses it without tuning).
  bool ncclz_below_threshold(const perf::row_shape& s) const {
    const ncclz::communicator_config c = config_of(o_);
    return !c.autotune || s.send_count * sizeof(T) < c.fallback_below_bytes;  // what the router weighs
  }

  void enqueue_ncclz(const perf::row_shape& s, T* out) {
    const T* in = d_send_.ptr;
    const std::size_t count = s.call_count();
    switch (s.collective) {
      case collective::allreduce: ncclz_.allreduce(in, out, count, nccl_op(o_.op), o_.bound, stream_); break;
      case collective::reduce_scatter: ncclz_.reduce_scatter(in, out, count, nccl_op(o_.op), o_.bound, stream_); break;
      case collective::allgather: ncclz_.allgather(in, out, count, o_.bound, stream_); break;
      case collective::broadcast: ncclz_.broadcast(in, out, count, o_.root, o_.bound, stream_); break;
      case collective::reduce: ncclz_.reduce(in, out, count, nccl_op(o_.op), o_.root, o_.bound, stream_); break;
      case collective::alltoall: ncclz_.alltoall(in, out, count, o_.bound, stream_); break;
    }
  }

  /// This rank's time of each of the -n iterations of `first` and of `second`, in ms, after -w
  /// untimed ones of each. The two alternate, iteration by iteration, so both see the same state
  /// of the machine (NCCL's own time over sockets drifts between calls by up to 1.8x here).
  template <class First, class Second>
  std::pair<std::vector<float>, std::vector<float>> time_ms(First&& first, Second&& second) {
    for (int i = 0; i < o_.warmup; ++i) first();
    for (int i = 0; i < o_.warmup; ++i) second();
    const std::size_t iters = start_.size() / 2;
    for (std::size_t i = 0; i < 2 * iters; ++i) {
      cc_.check(ncclAllReduce(d_scratch_.ptr, d_scratch_.ptr, 1, ncclDouble, ncclMax, cc_.comm(), stream_),
                "ncclAllReduce(barrier)");
      NCCLZ_CUDA_TRY(cudaEventRecord(start_[i], stream_));
      if (i % 2 == 0) first();
      else second();
      NCCLZ_CUDA_TRY(cudaEventRecord(stop_[i], stream_));
    }
    cc_.synchronize(stream_);
    std::pair<std::vector<float>, std::vector<float>> ms;
    for (std::size_t i = 0; i < 2 * iters; ++i) {
      float t = 0;
      NCCLZ_CUDA_TRY(cudaEventElapsedTime(&t, start_[i], stop_[i]));
      (i % 2 == 0 ? ms.first : ms.second).push_back(t);
    }
    return ms;
  }

  /// Each value replaced by its largest over the ranks.
  void max_over_ranks(std::vector<double>& v) {
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(d_scratch_.ptr, v.data(), v.size() * sizeof(double), cudaMemcpyHostToDevice, stream_));
    cc_.check(ncclAllReduce(d_scratch_.ptr, d_scratch_.ptr, v.size(), ncclDouble, ncclMax, cc_.comm(), stream_),
              "ncclAllReduce(max)");
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(v.data(), d_scratch_.ptr, v.size() * sizeof(double), cudaMemcpyDeviceToHost, stream_));
    cc_.synchronize(stream_);
  }

  std::vector<rank_report> gather(const rank_report& mine) {
    constexpr std::size_t k = sizeof(rank_report) / sizeof(double);
    std::vector<rank_report> all(static_cast<std::size_t>(n_));
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(d_scratch_.ptr + k * me_, &mine, sizeof mine, cudaMemcpyHostToDevice, stream_));
    cc_.check(ncclAllGather(d_scratch_.ptr + k * me_, d_scratch_.ptr, k, ncclDouble, cc_.comm(), stream_), "ncclAllGather(report)");
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(all.data(), d_scratch_.ptr, all.size() * sizeof mine, cudaMemcpyDeviceToHost, stream_));
    cc_.synchronize(stream_);
    return all;
  }

  row measure(const perf::row_shape& s) {
    // The library's autotuner probes both routes on a size class's first calls: those calls are
    // warm-ups here, so that the timed ones take the route it chose (every rank calls equally
    // often; last_call() speaks of this row's size class once a call of it has run).
    for (int i = 0; i < 16 && !ncclz_below_threshold(s); ++i) {
      enqueue_ncclz(s, d_ncclz_out_.ptr);
      if (ncclz_.last_call().autotune_decisions > 0) break;
    }
    const auto [nccl_ms, ncclz_ms] =
        time_ms([&] { enqueue_nccl(s, d_nccl_out_.ptr); }, [&] { enqueue_ncclz(s, d_ncclz_out_.ptr); });
    ncclz_.check(stream_);  // throws if a received chunk was corrupted
    const ncclz::call_info info = ncclz_.last_call();

    std::vector<double> slowest(nccl_ms.begin(), nccl_ms.end());
    slowest.insert(slowest.end(), ncclz_ms.begin(), ncclz_ms.end());
    slowest.push_back(info.error_bound);  // the bound is promised on the ranks that compressed
    max_over_ranks(slowest);
    const double bound = slowest.back();
    const auto iters = static_cast<std::ptrdiff_t>(nccl_ms.size());

    rank_report mine{};
    mine.parts = info.parts;
    mine.size_waits = info.size_waits;
    mine.size_wait_ms = info.size_wait_ms;
    mine.bytes_sent = static_cast<double>(info.bytes_sent);
    mine.chunk_bytes = static_cast<double>(info.chunk_bytes);
    mine.ratio = info.ratio;
    mine.error_bound = info.error_bound;
    mine.fallback = info.fallback ? 1.0 : 0.0;
    mine.autotune_ncclz_ms = info.autotune_ncclz_ms;
    mine.autotune_nccl_ms = info.autotune_nccl_ms;
    for (const ncclz::phase_time& p : ncclz_.phase_times()) {
      for (std::size_t k = 0; k < std::size(kPhases); ++k)
        if (std::strcmp(p.phase, kPhases[k]) == 0) mine.phase_ms[k] = p.ms;
    }
    if (o_.check) {
      const perf::check_result c = check(s, info.fallback ? -1.0 : bound);
      mine.wrong_nccl = static_cast<double>(c.nccl.wrong);
      mine.wrong_ncclz = static_cast<double>(c.ncclz.wrong);
      mine.max_err_nccl = c.nccl.max_err;
      mine.max_err_ncclz = c.ncclz.max_err;
    }
    return row{s,
               sizeof(T),
               summarize({slowest.begin(), slowest.begin() + iters}),
               summarize({slowest.begin() + iters, slowest.begin() + 2 * iters}),
               gather(mine),
               info.coder,
               info.schedule};
  }

  perf::check_result check(const perf::row_shape& s, double ncclz_bound) {
    host_nccl_.resize(s.recv_count);
    host_ncclz_.resize(s.recv_count);
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(host_nccl_.data(), d_nccl_out_.ptr, s.recv_count * sizeof(T), cudaMemcpyDeviceToHost, stream_));
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(host_ncclz_.data(), d_ncclz_out_.ptr, s.recv_count * sizeof(T), cudaMemcpyDeviceToHost, stream_));
    cc_.synchronize(stream_);
    return perf::check_results<T>(s, in_, o_.op, me_, o_.root, host_nccl_.data(), host_ncclz_.data(), ncclz_bound,
                                  host_threads());
  }

  // ---- output (rank 0) ---------------------------------------------------------------------------
  void print_header(collective c) const {
    std::printf("#\n# %s\n", ncclz::schedule::name(c));
    std::printf("# %12s %12s %7s %6s %5s | %-34s | %-34s |\n", "", "", "", "", "", "               NCCL", "               ncclz");
    std::printf("# %12s %12s %7s %6s %5s | %10s %7s %7s %7s | %10s %7s %7s %7s | %7s %7s %9s %9s %-12s %s\n", "size",
                "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong",
                "speedup", "ratio", "max_err", "bound", "coder", "fallback");
    std::printf("# %12s %12s %7s %6s %5s | %10s %7s %7s %7s | %10s %7s %7s %7s |\n", "(B)", "(elements)", "", "", "", "(us)",
                "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  }

  void print_row(const row& r) const {
    const collective c = r.shape.collective;
    const auto wrong = [&](double w) { return o_.check ? std::to_string(static_cast<std::uint64_t>(w)) : std::string("N/A"); };
    char ratio[16] = "-", bound[16] = "-", max_err[16] = "-";
    if (o_.check) std::snprintf(max_err, sizeof max_err, "%.2e", r.largest(&rank_report::max_err_ncclz));
    if (!r.fallback()) {
      std::snprintf(ratio, sizeof ratio, "%.2f", r.ratio());
      std::snprintf(bound, sizeof bound, "%.2e", r.largest(&rank_report::error_bound));
    }
    std::printf("  %12llu %12llu %7s %6s %5d | %10.1f %7.2f %7.2f %7s | %10.1f %7.2f %7.2f %7s | %7.2f %7s %9s %9s %-12s %s\n",
                static_cast<unsigned long long>(r.bytes()), static_cast<unsigned long long>(r.shape.count()),
                perf::element<T>::name, perf::reduces(c) ? perf::name(o_.op) : "none", perf::has_root(c) ? o_.root : -1,
                r.nccl.median_us, r.algbw(r.nccl), r.busbw(r.nccl), wrong(r.sum(&rank_report::wrong_nccl)).c_str(),
                r.ncclz.median_us, r.algbw(r.ncclz), r.busbw(r.ncclz), wrong(r.sum(&rank_report::wrong_ncclz)).c_str(),
                r.speedup(), ratio, max_err, bound, r.coder, r.fallback() ? "yes" : "no");
    std::fflush(stdout);
  }

  std::string row_json(const row& r) const {
    const collective c = r.shape.collective;
    const std::string ranks = json_array(r.ranks, [&](const rank_report& k) {
      return json_object()
          .add("rank", static_cast<double>(&k - r.ranks.data()))
          .add("parts", k.parts)
          .add("size_waits", k.size_waits)
          .add("size_wait_ms", k.size_wait_ms)
          .add("bytes_sent", k.bytes_sent)
          .add("chunk_bytes", k.chunk_bytes)
          .add("ratio", k.ratio)
          .add("error_bound", k.error_bound)
          .add("fallback", k.fallback != 0)
          .add("autotune_ncclz_ms", k.autotune_ncclz_ms)
          .add("autotune_nccl_ms", k.autotune_nccl_ms)
          .raw("wrong_nccl", o_.check ? json_number(k.wrong_nccl) : "null")
          .raw("wrong_ncclz", o_.check ? json_number(k.wrong_ncclz) : "null")
          .raw("phase_ms", o_.phases ? phases_json(k) : "null")
          .str();
    });
    return json_object()
        .add("record", "row")
        .add("collective", ncclz::schedule::name(c))
        .add("size", static_cast<double>(r.bytes()))
        .add("count", static_cast<double>(r.shape.count()))
        .add("type", perf::element<T>::name)
        .add("redop", perf::reduces(c) ? perf::name(o_.op) : "none")
        .add("root", static_cast<double>(perf::has_root(c) ? o_.root : -1))
        .raw("nccl", timing_json(r, r.nccl, r.sum(&rank_report::wrong_nccl), r.largest(&rank_report::max_err_nccl), o_.check))
        .raw("ncclz", timing_json(r, r.ncclz, r.sum(&rank_report::wrong_ncclz), r.largest(&rank_report::max_err_ncclz), o_.check))
        .add("speedup", r.speedup())
        .add("ratio", r.ratio())
        .add("bound", r.largest(&rank_report::error_bound))
        .add("bound_mode", perf::name(o_.mode))
        .add("requested_bound", o_.bound)
        .add("coder", r.coder)
        .add("schedule", r.schedule)
        .add("fallback", r.fallback())
        .raw("ranks", ranks)
        .str();
  }

  const perf::options& o_;
  ncclz::cluster_comm& cc_;
  const perf::input_source& in_;
  cudaStream_t stream_;
  int n_, me_;
  std::size_t max_count_;
  device_array<T> d_send_, d_nccl_out_, d_ncclz_out_;
  device_array<double> d_scratch_;
  // The library's default pipeline (Pipeline<Auto>, up to 8 parts); --chunk sets the part size.
  ncclz::Communicator<Codec, schedule_flag> ncclz_;
  std::vector<cudaEvent_t> start_, stop_;
  std::vector<T> host_nccl_, host_ncclz_;
};

std::string config_json(const perf::options& o, const ncclz::cluster_comm& cc, const perf::input_source& in) {
  cudaDeviceProp prop{};
  NCCLZ_CUDA_TRY(cudaGetDeviceProperties(&prop, cc.device()));
  int devices = 0;
  NCCLZ_CUDA_TRY(cudaGetDeviceCount(&devices));
  const auto sizes = perf::sizes(o);
  return json_object()
      .add("record", "config")
      .add("tool", "ncclz-perf")
      .add("ranks", static_cast<double>(cc.nranks()))
      .add("gpu", prop.name)
      .add("gpus_visible", static_cast<double>(devices))
      .add("nccl_version", nccl_version())
      .add("type", o.dtype)
      .add("redop", perf::name(o.op))
      .add("root", static_cast<double>(o.root))
      .add("bound_mode", perf::name(o.mode))
      .add("bound", o.bound)
      .add("coder", o.coder)
      .add("schedule", o.schedule)
      .raw("fallback_below", o.fallback_below ? json_number(static_cast<double>(*o.fallback_below)) : "null")
      .raw("chunk", o.chunk_bytes ? json_number(static_cast<double>(o.chunk_bytes)) : "null")
      .add("phases", o.phases)
      .add("split_sum_bound", o.split_sum_bound)
      .add("priority_transfers", o.priority_transfers)
      .add("iters", static_cast<double>(o.iters))
      .add("warmup", static_cast<double>(o.warmup))
      .add("check", o.check)
      .add("input", in.describe())
      .raw("collectives", json_array(o.collectives, [](collective c) { return json_string(ncclz::schedule::name(c)); }))
      .raw("sizes", json_array(sizes, [](std::uint64_t b) { return json_number(static_cast<double>(b)); }))
      .raw("env", environment_json())
      .str();
}

/// nccl-tests' closing lines, with ncclz's next to NCCL's. Returns the number of wrong elements.
double print_summary(const std::vector<row>& rows, std::FILE* json, bool checked) {
  if (rows.empty()) {
    std::printf("# No rows: every size is below one element per rank (raise -b and -e)\n");
    return 0;
  }
  double nccl_busbw = 0, ncclz_busbw = 0, log_speedup = 0, wrong_nccl = 0, wrong_ncclz = 0;
  for (const row& r : rows) {
    nccl_busbw += r.busbw(r.nccl) / static_cast<double>(rows.size());
    ncclz_busbw += r.busbw(r.ncclz) / static_cast<double>(rows.size());
    log_speedup += std::log(r.speedup()) / static_cast<double>(rows.size());
    wrong_nccl += r.sum(&rank_report::wrong_nccl);
    wrong_ncclz += r.sum(&rank_report::wrong_ncclz);
  }
  const double geomean = std::exp(log_speedup);
  std::printf("#\n");
  if (checked) {
    std::printf("# Out of bounds values : NCCL %.0f, ncclz %.0f %s\n", wrong_nccl, wrong_ncclz,
                wrong_nccl + wrong_ncclz == 0 ? "OK" : "FAILED");
  }
  std::printf("# Avg bus bandwidth    : NCCL %.3f GB/s, ncclz %.3f GB/s\n", nccl_busbw, ncclz_busbw);
  std::printf("# Geomean speedup      : %.2fx over %zu rows\n#\n", geomean, rows.size());
  if (json) {
    std::fprintf(json, "%s\n",
                 json_object()
                     .add("record", "summary")
                     .add("rows", static_cast<double>(rows.size()))
                     .add("nccl_avg_busbw", nccl_busbw)
                     .add("ncclz_avg_busbw", ncclz_busbw)
                     .add("geomean_speedup", geomean)
                     .raw("wrong_nccl", checked ? json_number(wrong_nccl) : "null")
                     .raw("wrong_ncclz", checked ? json_number(wrong_ncclz) : "null")
                     .str()
                     .c_str());
  }
  return wrong_nccl + wrong_ncclz;
}

/// Refusals that need no GPU work, the same on every rank.
void validate(const perf::options& o, int nranks) {
  if (o.root >= nranks) {
    ncclz::detail::throw_invalid("ncclz-perf",
                                 "-r " + std::to_string(o.root) + " but there are " + std::to_string(nranks) + " ranks");
  }
}

template <class Codec, class T>
int run_with(const perf::options& o, ncclz::cluster_comm& cc, const perf::input_source& in, cudaStream_t stream) {
  std::FILE* json = nullptr;
  if (cc.rank() == 0) {
    std::printf("# ncclz-perf: %d ranks, %s, %s %g, coder %s, fallback below %s, %s\n", cc.nranks(), perf::element<T>::name,
                perf::name(o.mode), o.bound, o.coder.c_str(),
                o.fallback_below ? (std::to_string(*o.fallback_below) + " B").c_str() : "the library's default",
                in.describe().c_str());
    std::printf("# NCCL %s; time: median of %d after %d warm-ups, slowest rank; out of place\n", nccl_version().c_str(), o.iters,
                o.warmup);
    if (!o.json.empty()) {
      json = std::fopen(o.json.c_str(), "w");
      if (!json) throw ncclz::error("ncclz-perf: cannot write --json " + o.json + ": " + std::strerror(errno));
      std::fprintf(json, "%s\n", config_json(o, cc, in).c_str());
    }
  }
  double wrong = 0;
  {
    bench<Codec, T> b(o, cc, in, stream);
    const std::vector<row> rows = b.run(json);
    if (cc.rank() == 0) wrong = print_summary(rows, json, o.check);
  }
  if (json) std::fclose(json);
  return wrong == 0 ? 0 : 1;
}

int run(const perf::options& o) {
  ncclz::cluster_comm cc(ncclz::rank_from_environment());
  validate(o, cc.nranks());
  const perf::input_source in = o.data.empty() ? perf::input_source::generated(o.gen)
                                               : perf::input_source::from_fields(perf::load_fields(o.data));
  cudaStream_t stream;
  NCCLZ_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const char* quantizer = perf::name(o.mode);
  schedule_flag::chosen = o.schedule;
  int rc = -1;
  ncclz::for_each_builtin_codec([&]<class Codec>() {
    if (std::string_view(Codec::quantizer::name) != quantizer || Codec::coder::name != o.coder) return;
    if (o.dtype == "double") rc = run_with<Codec, double>(o, cc, in, stream);
    else if (o.dtype == "half") rc = run_with<Codec, __half>(o, cc, in, stream);
    else if (o.dtype == "bfloat16") rc = run_with<Codec, __nv_bfloat16>(o, cc, in, stream);
    else rc = run_with<Codec, float>(o, cc, in, stream);
  });
  cc.synchronize(stream);
  NCCLZ_CUDA_TRY(cudaStreamDestroy(stream));
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  perf::options o;
  try {
    o = perf::parse(argc, argv);
  } catch (const ncclz::invalid_argument& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  if (o.help) {
    std::fputs(perf::usage, stdout);
    return 0;
  }
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "ncclz-perf: no CUDA device (%s): nothing to measure\n",
                 status != cudaSuccess ? cudaGetErrorString(status) : "none visible");
    return 77;
  }
  const char* rank = std::getenv("NCCLZ_RANK");
  try {
    return run(o);
  } catch (const ncclz::invalid_argument& e) {
    std::fprintf(stderr, "ncclz-perf: rank %s: %s\n", rank ? rank : "?", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ncclz-perf: rank %s: %s\n", rank ? rank : "?", e.what());
    return 1;
  }
}
