// ncclz-perf: ncclz's collectives next to NCCL's, in nccl-tests' format and with its flags. One
// process per rank, or per -g GPUs (a host thread a GPU):
//
//   mpirun -np 4 build/benchmarks/ncclz-perf -C allreduce,allgather --data data    (built with -Dmpi)
//   scripts/emulated_cluster.sh -n 4 -- build/benchmarks/ncclz-perf -C allreduce,allgather --data data
//
// One row per collective and size: nccl-tests' columns (size count type redop root, then time
// algbw busbw #wrong) for NCCL and for ncclz on the same input buffers, then ncclz's speedup,
// compression ratio, largest error, promised bound, coder and whether the call fell back to NCCL.
// size is nccl-tests' (the larger of the send and receive buffers). Time: CUDA events around each
// call, started after a one-float allreduce so that the ranks start together; per iteration the
// ranks' times combined as -a says (default: the slowest rank's); the median over -n iterations
// after -w warm-ups (min and max go to --json); NCCL's and ncclz's timed iterations alternate.
// #wrong: elements of the result outside the tolerance around a float64 reference, summed over
// the ranks (perf/perf_check.hpp says which tolerance). Out of place only.
//
// The parts: perf/perf_options.hpp (command line), perf/collectives/*.hpp (one file a collective:
// buffers, bus-bandwidth factor, reference, the two calls), perf/perf_driver.cuh (timing, check,
// gathering), perf/perf_report.hpp (text, JSON, CSV); this file starts the ranks.
//
// Exit status: 0; 1 when an element is wrong or a call fails; 2 on a bad command line; 77 without
// a CUDA device (meson's "skipped").
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ncclz/bootstrap.hpp"
#include "ncclz/ncclz.cuh"
#include "json_text.hpp"
#include "perf/perf_driver.cuh"

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
using ncclz::schedule::collective;
namespace perf = ncclz::perf;

ncclz::communicator_config config_of(const perf::options& o) {
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

const char* launcher_name() { return ncclz::detail::mpi_running() ? "mpi" : "environment"; }

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
      .add("ranks_per_process", static_cast<double>(o.ranks_per_process))
      .add("launcher", launcher_name())
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
      .add("agg_iters", static_cast<double>(o.agg_iters))
      .add("average", static_cast<double>(static_cast<int>(o.average)))
      .add("blocking", o.blocking)
      .add("check", o.check)
      .add("input", in.describe())
      .raw("collectives", json_array(o.collectives, [](collective c) { return json_string(ncclz::schedule::name(c)); }))
      .raw("sizes", json_array(sizes, [](std::uint64_t b) { return json_number(static_cast<double>(b)); }))
      .raw("env", environment_json())
      .str();
}

std::FILE* open_output(const std::string& path, const char* flag) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw ncclz::error(std::string("ncclz-perf: cannot write ") + flag + " " + path + ": " + std::strerror(errno));
  return f;
}

/// One rank's whole run; rank 0 prints and writes the files. Returns the exit status.
template <class Codec, class T>
int run_rank(const perf::options& o, ncclz::cluster_comm& cc, const perf::input_source& in, unsigned host_threads) {
  ncclz::detail::stream_handle stream;
  perf::sinks out;
  if (cc.rank() == 0) {
    out.text = stdout;
    std::printf("# ncclz-perf: %d ranks (%d a process, launcher: %s), %s, %s %g, coder %s, fallback below %s, %s\n",
                cc.nranks(), o.ranks_per_process, launcher_name(), perf::element<T>::name, perf::name(o.mode), o.bound,
                o.coder.c_str(),
                o.fallback_below ? (std::to_string(*o.fallback_below) + " B").c_str() : "the library's default",
                in.describe().c_str());
    static constexpr const char* kAcross[] = {"rank 0", "mean of the ranks", "fastest rank", "slowest rank"};
    std::printf("# NCCL %s; time: median of %d after %d warm-ups, %s, %d call(s) an iteration%s; out of place\n",
                nccl_version().c_str(), o.iters, o.warmup, kAcross[static_cast<int>(o.average)], o.agg_iters,
                o.blocking ? ", host waits after each" : "");
    if (!o.json.empty()) {
      out.json = open_output(o.json, "--json");
      std::fprintf(out.json, "%s\n", config_json(o, cc, in).c_str());
    }
    if (!o.csv.empty()) {
      out.csv = open_output(o.csv, "-F");
      perf::report::print_csv_header(out.csv);
    }
  }
  double wrong = 0;
  {
    // The library's default pipeline (Pipeline<Auto>, up to 8 parts); --chunk sets the part size.
    perf::driver<ncclz::Communicator<Codec, perf::schedule_flag>, T> d(o, cc, in, stream.get(), config_of(o), host_threads);
    const std::vector<perf::row> rows = d.run(out);
    if (cc.rank() == 0) wrong = perf::report(o).print_summary(stdout, rows, out.json);
  }
  for (std::FILE* f : {out.json, out.csv})
    if (f) std::fclose(f);
  cc.synchronize(stream.get());
  return wrong == 0 ? 0 : 1;
}

int run_codec(const perf::options& o, ncclz::cluster_comm& cc, const perf::input_source& in, unsigned host_threads) {
  const char* quantizer = perf::name(o.mode);
  int rc = -1;
  ncclz::for_each_builtin_codec([&]<class Codec>() {
    if (std::string_view(Codec::quantizer::name) != quantizer || Codec::coder::name != o.coder) return;
    if (o.dtype == "double") rc = run_rank<Codec, double>(o, cc, in, host_threads);
    else if (o.dtype == "half") rc = run_rank<Codec, __half>(o, cc, in, host_threads);
    else if (o.dtype == "bfloat16") rc = run_rank<Codec, __nv_bfloat16>(o, cc, in, host_threads);
    else rc = run_rank<Codec, float>(o, cc, in, host_threads);
  });
  return rc;
}

/// Refusals that need no GPU work, the same on every rank.
void validate(const perf::options& o, int nranks, int devices) {
  if (o.root >= nranks) {
    ncclz::detail::throw_invalid("ncclz-perf", "-r " + std::to_string(o.root) + " but there are " + std::to_string(nranks) + " ranks");
  }
  if (o.ranks_per_process > devices) {
    ncclz::detail::throw_invalid("ncclz-perf", "-g x -t = " + std::to_string(o.ranks_per_process) +
                                                   " GPUs for this process, but it sees " + std::to_string(devices) +
                                                   " (NCCL refuses two ranks of a communicator on one GPU in one process)");
  }
}

void report_failure(const std::exception& e, const std::string& rank) {
  std::fprintf(stderr, "ncclz-perf: rank %s: %s\n", rank.c_str(), e.what());
}

/// Every rank of this process: one, or -g x -t of them, a thread and a GPU each.
int run(const perf::options& o, int devices) {
  const ncclz::rank_info process = ncclz::rank_from_environment();
  const int local = o.ranks_per_process;
  const ncclz::rank_info job{process.rank * local, process.nranks * local};
  validate(o, job.nranks, devices);
  const perf::input_source in = o.data.empty() ? perf::input_source::generated(o.gen)
                                               : perf::input_source::from_fields(perf::load_fields(o.data));
  perf::schedule_flag::chosen = o.schedule;
  // The emulated cluster's ranks share one host: each gets its share of the threads.
  const unsigned host_threads = std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(std::max(1, local)) /
                                                 static_cast<unsigned>(process.nranks));
  if (local == 1) {
    ncclz::cluster_comm cc(process);
    return run_codec(o, cc, in, host_threads);
  }
  const auto timeout = ncclz::cluster_comm::default_timeout;
  const ncclUniqueId id = ncclz::exchange_unique_id_from_launcher(process, timeout);
  std::vector<int> rc(static_cast<std::size_t>(local), 1);
  std::vector<std::thread> ranks;
  std::atomic<int> joined{0};
  for (int t = 0; t < local; ++t) {
    ranks.emplace_back([&, t] {
      const ncclz::rank_info who{job.rank + t, job.nranks};
      try {
        ncclz::cluster_comm cc(who, id, timeout, t);
        if (++joined == local && process.rank == 0 && process.nranks > 1 && !ncclz::detail::mpi_running()) {
          static_cast<void>(::unlink(ncclz::default_bootstrap_path(process).c_str()));  // spent, as cluster_comm does
        }
        rc[static_cast<std::size_t>(t)] = run_codec(o, cc, in, host_threads);
      } catch (const std::exception& e) {
        report_failure(e, std::to_string(who.rank));
      }
    });
  }
  for (auto& th : ranks) th.join();
  return *std::max_element(rc.begin(), rc.end());
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
  std::string rank = "?";
  try {
#if defined(NCCLZ_WITH_MPI)
    const ncclz::mpi_session mpi(&argc, &argv);  // under mpirun: ranks and the id come from MPI
#endif
    rank = std::to_string(ncclz::rank_from_environment().rank);
    return run(o, devices);
  } catch (const ncclz::invalid_argument& e) {
    report_failure(e, rank);
    return 2;
  } catch (const std::exception& e) {
    report_failure(e, rank);
    return 1;
  }
}
