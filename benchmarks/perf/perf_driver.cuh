// ncclz-perf's driver, shared by every collective (nccl-tests' common.cu): one rank's side of a
// sweep. For each collective and size it runs the collective test's NCCL call and ncclz call on the
// same input buffers, times both, checks both results against the float64 reference, and gathers
// every rank's report to rank 0, which prints the row.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ncclz/bootstrap.hpp"
#include "ncclz/detail/cuda_resources.hpp"
#include "ncclz/ncclz.cuh"
#include "collectives.hpp"
#include "perf_check.hpp"
#include "perf_options.hpp"
#include "perf_report.hpp"

namespace ncclz::perf {

/// Where a rank's rows go: rank 0 prints them and writes --json and -F; other ranks pass nulls.
struct sinks {
  std::FILE* text = nullptr;
  std::FILE* json = nullptr;
  std::FILE* csv = nullptr;
};

inline ncclRedOp_t nccl_op(reduction r) {
  switch (r) {
    case reduction::sum: return ncclSum;
    case reduction::min: return ncclMin;
    case reduction::max: return ncclMax;
  }
  return ncclSum;
}

/// One rank of the benchmark over `Comm` (an ncclz::Communicator whose codec handles T).
template <class Comm, class T>
class driver {
 public:
  driver(const options& o, cluster_comm& cc, const input_source& in, cudaStream_t stream, communicator_config config,
         unsigned host_threads)
      : o_(o),
        cc_(cc),
        in_(in),
        stream_(stream),
        n_(cc.nranks()),
        me_(cc.rank()),
        host_threads_(std::max(1u, host_threads)),
        max_count_(o.max_bytes / sizeof(T)),
        config_(config),
        ncclz_(cc.comm(), config) {
    const std::size_t bytes = std::max<std::size_t>(max_count_, 1) * sizeof(T);
    send_.reserve(bytes);
    nccl_out_.reserve(bytes);
    ncclz_out_.reserve(bytes);
    if (o.route_check) {  // the compressed route for every call: what the autotuner weighs against NCCL
      communicator_config forced = config;
      forced.autotune = false;
      forced.fallback_below_bytes = 0;
      forced_.emplace(cc.comm(), forced);
      forced_out_.reserve(bytes);
    }
    scratch_.reserve(std::max<std::size_t>((o.route_check ? 3 : 2) * static_cast<std::size_t>(o.iters) + 1, sizeof(rank_report) / sizeof(double) * n_) *
                     sizeof(double));
    for (int i = 0; i < (o.route_check ? 3 : 2) * o.iters; ++i) {
      start_.emplace_back(true);
      stop_.emplace_back(true);
    }
    upload_input();
  }

  /// Every row of the sweep; rank 0 prints them to `out`.
  std::vector<row> run(const sinks& out) {
    connect_all_peers();
    const report rep(o_);
    std::vector<row> rows;
    for (const schedule::collective c : o_.collectives) {
      if (out.text) rep.print_header(out.text, c);
      for (const std::uint64_t bytes : sizes(o_)) {
        const row_shape s = shape_of(c, bytes, sizeof(T), n_);
        if (s.count() == 0) continue;  // fewer bytes than one element per rank
        rows.push_back(with_collective_test(c, [&]<class Test>() { return measure<Test>(s); }));
        if (out.text) rep.print_row(out.text, rows.back());
        if (out.json) {
          std::fprintf(out.json, "%s\n", rep.row_json(rows.back()).c_str());
          std::fflush(out.json);  // a run cut short keeps its rows
        }
        if (out.csv) rep.print_csv_row(out.csv, rows.back());
      }
    }
    return rows;
  }

 private:
  T* send() const { return send_.template as<T>(); }
  T* nccl_out() const { return nccl_out_.template as<T>(); }
  T* ncclz_out() const { return ncclz_out_.template as<T>(); }
  T* forced_out() const { return forced_out_.template as<T>(); }
  double* scratch() const { return scratch_.template as<double>(); }

  /// This rank's input: the whole send buffer, uploaded in slices to bound host memory, each
  /// generated on this rank's share of the host threads (--gen gradient costs two Gaussians a value).
  void upload_input() {
    constexpr std::size_t kSlice = std::size_t{1} << 22;
    std::vector<T> slice(std::min(kSlice, max_count_));
    for (std::size_t first = 0; first < max_count_; first += kSlice) {
      const std::size_t n = std::min(kSlice, max_count_ - first);
      for_each_part(n, parts_for(n, host_threads_), [&](unsigned, std::uint64_t begin, std::uint64_t end) {
        for (std::uint64_t i = begin; i < end; ++i) slice[i] = element<T>::from_double(in_.value(me_, first + i));
      });
      NCCLZ_CUDA_TRY(cudaMemcpy(send() + first, slice.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    }
  }

  /// One small send and receive with every peer, so that NCCL has connected every pair (it does
  /// so lazily, on first use) before anything is timed.
  void connect_all_peers() {
    cc_.check(ncclGroupStart(), "ncclGroupStart");
    for (int peer = 0; peer < n_; ++peer) {
      if (peer == me_) continue;
      cc_.check(ncclSend(scratch(), 1, ncclDouble, peer, cc_.comm(), stream_), "ncclSend");
      cc_.check(ncclRecv(scratch() + 1, 1, ncclDouble, peer, cc_.comm(), stream_), "ncclRecv");
    }
    cc_.check(ncclGroupEnd(), "ncclGroupEnd");
    cc_.synchronize(stream_);
  }

  call<T> call_of(const row_shape& s, T* out) const {
    return {send(), out, s.call_count(), nccl_type<T>(), nccl_op(o_.op), o_.root, o_.bound, stream_};
  }

  /// -m calls of the test's NCCL collective: one group, as nccl-tests aggregates them.
  template <class Test>
  void run_nccl(const row_shape& s) {
    const call<T> c = call_of(s, nccl_out());
    if (o_.agg_iters > 1) cc_.check(ncclGroupStart(), "ncclGroupStart");
    for (int k = 0; k < o_.agg_iters; ++k) Test::nccl(cc_, c);
    if (o_.agg_iters > 1) cc_.check(ncclGroupEnd(), "ncclGroupEnd");
  }

  /// -m calls of ncclz's, back to back: they wait on the host for sizes, so no group can hold them.
  template <class Test>
  void run_ncclz(const row_shape& s, Comm& comm, T* out) {
    const call<T> c = call_of(s, out);
    for (int k = 0; k < o_.agg_iters; ++k) Test::ncclz(comm, c);
  }

  /// Whether the library sends this row to NCCL without tuning (or compresses it without tuning).
  bool below_threshold(const row_shape& s) const {
    return !config_.autotune || s.send_count * sizeof(T) < config_.fallback_below_bytes;  // what the router weighs
  }

  /// This rank's time per call of each of the -n iterations of every route, in ms, after -w untimed
  /// ones of each. The routes take turns, iteration by iteration, so all see the same state of the
  /// machine (NCCL's own time over sockets drifts between calls by up to 1.8x), in an order that
  /// changes from iteration to iteration: rotated, and every other one reversed, so that each
  /// route follows each other one equally often (rotations alone keep the cyclic order, and with
  /// it the route that precedes each).
  std::vector<std::vector<double>> time_ms(const std::vector<std::function<void()>>& routes) {
    for (const auto& route : routes)
      for (int i = 0; i < o_.warmup; ++i) route();
    const std::size_t k = routes.size(), turns = k * static_cast<std::size_t>(o_.iters);
    const auto route_of = [k](std::size_t turn) {
      const std::size_t iteration = turn / k, place = turn % k, rotation = iteration / 2 % k;
      return iteration % 2 == 0 ? (rotation + place) % k : (rotation + k - 1 - place) % k;
    };
    for (std::size_t i = 0; i < turns; ++i) {
      cc_.check(ncclAllReduce(scratch(), scratch(), 1, ncclDouble, ncclMax, cc_.comm(), stream_), "ncclAllReduce(barrier)");
      NCCLZ_CUDA_TRY(cudaEventRecord(start_[i].get(), stream_));
      routes[route_of(i)]();
      NCCLZ_CUDA_TRY(cudaEventRecord(stop_[i].get(), stream_));
      if (o_.blocking) cc_.synchronize(stream_);
    }
    cc_.synchronize(stream_);
    std::vector<std::vector<double>> ms(k);
    for (std::size_t i = 0; i < turns; ++i) {
      float t = 0;
      NCCLZ_CUDA_TRY(cudaEventElapsedTime(&t, start_[i].get(), stop_[i].get()));
      ms[route_of(i)].push_back(static_cast<double>(t) / o_.agg_iters);
    }
    return ms;
  }

  /// Each value replaced by one over the ranks: rank 0's, the mean, the least or the greatest.
  void over_ranks(std::vector<double>& v, options::across_ranks how) {
    using how_t = options::across_ranks;
    if (how == how_t::rank0 && me_ != 0) std::fill(v.begin(), v.end(), 0.0);  // then summed: rank 0's
    const ncclRedOp_t op = how == how_t::least ? ncclMin : how == how_t::greatest ? ncclMax : ncclSum;
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(scratch(), v.data(), v.size() * sizeof(double), cudaMemcpyHostToDevice, stream_));
    cc_.check(ncclAllReduce(scratch(), scratch(), v.size(), ncclDouble, op, cc_.comm(), stream_), "ncclAllReduce(times)");
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(v.data(), scratch(), v.size() * sizeof(double), cudaMemcpyDeviceToHost, stream_));
    cc_.synchronize(stream_);
    if (how == how_t::mean)
      for (double& x : v) x /= n_;
  }

  std::vector<rank_report> gather(const rank_report& mine) {
    constexpr std::size_t k = sizeof(rank_report) / sizeof(double);
    std::vector<rank_report> all(static_cast<std::size_t>(n_));
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(scratch() + k * me_, &mine, sizeof mine, cudaMemcpyHostToDevice, stream_));
    cc_.check(ncclAllGather(scratch() + k * me_, scratch(), k, ncclDouble, cc_.comm(), stream_), "ncclAllGather(report)");
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(all.data(), scratch(), all.size() * sizeof mine, cudaMemcpyDeviceToHost, stream_));
    cc_.synchronize(stream_);
    return all;
  }

  template <class Test>
  row measure(const row_shape& s) {
    // The library's autotuner probes both routes on a size class's first calls: those calls are
    // warm-ups here, so that the timed ones take the route it chose (every rank calls equally
    // often; last_call() speaks of this row's size class once a call of it has run).
    for (int i = 0; i < 16 && !below_threshold(s); ++i) {
      run_ncclz<Test>(s, ncclz_, ncclz_out());
      if (ncclz_.last_call().autotune_decisions > 0) break;
    }
    std::vector<std::function<void()>> routes{[&] { run_nccl<Test>(s); }, [&] { run_ncclz<Test>(s, ncclz_, ncclz_out()); }};
    if (forced_) routes.emplace_back([&] { run_ncclz<Test>(s, *forced_, forced_out()); });
    const std::vector<std::vector<double>> ms = time_ms(routes);
    ncclz_.check(stream_);  // throws if a received chunk was corrupted
    if (forced_) forced_->check(stream_);
    const call_info info = ncclz_.last_call();

    std::vector<double> times;
    for (const auto& route_ms : ms) times.insert(times.end(), route_ms.begin(), route_ms.end());
    over_ranks(times, o_.average);
    std::vector<double> bound{info.error_bound};  // promised on the ranks that compressed
    over_ranks(bound, options::across_ranks::greatest);
    const auto iters = static_cast<std::ptrdiff_t>(o_.iters);

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
    for (const phase_time& p : ncclz_.phase_times()) {
      for (std::size_t k = 0; k < std::size(kPhases); ++k)
        if (std::strcmp(p.phase, kPhases[k]) == 0) mine.phase_ms[k] = p.ms;
    }
    if (o_.check) {
      const check_result c = check(s, info.fallback ? -1.0 : bound[0]);
      mine.wrong_nccl = static_cast<double>(c.nccl.wrong);
      mine.wrong_ncclz = static_cast<double>(c.ncclz.wrong);
      mine.max_err_nccl = c.nccl.max_err;
      mine.max_err_ncclz = c.ncclz.max_err;
    }
    const std::vector<double> nccl_ms(times.begin(), times.begin() + iters);
    const std::vector<double> ncclz_ms(times.begin() + iters, times.begin() + 2 * iters);
    const std::vector<double> forced_ms(forced_ ? times.begin() + 2 * iters : times.end(), times.end());
    return row{s,
               sizeof(T),
               element<T>::name,
               summarize(nccl_ms),
               summarize(ncclz_ms),
               gather(mine),
               info.coder,
               info.schedule,
               forced_ ? std::optional(summarize(forced_ms)) : std::nullopt,
               forced_ ? paired_of_best(nccl_ms, ncclz_ms, forced_ms) : 1.0};
  }

  check_result check(const row_shape& s, double ncclz_bound) {
    host_nccl_.resize(s.recv_count);
    host_ncclz_.resize(s.recv_count);
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(host_nccl_.data(), nccl_out(), s.recv_count * sizeof(T), cudaMemcpyDeviceToHost, stream_));
    NCCLZ_CUDA_TRY(cudaMemcpyAsync(host_ncclz_.data(), ncclz_out(), s.recv_count * sizeof(T), cudaMemcpyDeviceToHost, stream_));
    cc_.synchronize(stream_);
    return check_results<T>(s, in_, o_.op, me_, o_.root, host_nccl_.data(), host_ncclz_.data(), ncclz_bound, host_threads_);
  }

  const options& o_;
  cluster_comm& cc_;
  const input_source& in_;
  cudaStream_t stream_;
  int n_, me_;
  unsigned host_threads_;
  std::size_t max_count_;
  communicator_config config_;
  ncclz::detail::device_buffer send_, nccl_out_, ncclz_out_, forced_out_, scratch_;
  Comm ncclz_;
  std::optional<Comm> forced_;  // --route-check
  std::vector<ncclz::detail::event_handle> start_, stop_;
  std::vector<T> host_nccl_, host_ncclz_;
};

}  // namespace ncclz::perf
