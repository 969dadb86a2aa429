// One codec's side of ncclz-perf: this rank's sweep in each element type (run_types), with the
// configuration record, header lines and output files rank 0 writes. Included by one
// translation unit a codec (codecs/*.cu), which defines that codec's perf_rank.hpp function.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ncclz/bootstrap.hpp"
#include "ncclz/ncclz.cuh"
#include "codec_kernels.cuh"  // the codecs' kernels, compiled once (src/kernels/)
#include "../json_text.hpp"
#include "perf_driver.cuh"
#include "perf_rank.hpp"

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
/// included. Set from the command line before any collective runs (by every rank thread of a
/// process, to the same value).
struct schedule_flag {
  static constexpr const char* name = "--schedule";
  enum choice : int { automatic, ring, direct, tree, recursive_doubling };
  static inline std::atomic<int> chosen{automatic};
  static void set(const std::string& flag) {
    chosen = flag == "ring"                 ? ring
             : flag == "direct"             ? direct
             : flag == "tree"               ? tree
             : flag == "recursive_doubling" ? recursive_doubling
                                            : automatic;
  }
};

inline schedule::algorithm algorithm_for(schedule_flag, schedule::collective c, std::uint64_t bytes, int nranks) {
  namespace s = ncclz::schedule;
  switch (schedule_flag::chosen.load()) {
    case schedule_flag::ring: return algorithm_for(s::Ring{}, c, bytes, nranks);
    case schedule_flag::direct: return algorithm_for(s::Direct{}, c, bytes, nranks);
    case schedule_flag::tree: return algorithm_for(s::Tree{}, c, bytes, nranks);
    case schedule_flag::recursive_doubling: return algorithm_for(s::RecursiveDoubling{}, c, bytes, nranks);
    default: return algorithm_for(s::Auto{}, c, bytes, nranks);
  }
}
}  // namespace ncclz::perf

namespace ncclz::perf::detail {

using bench::json_array;
using bench::json_number;
using bench::json_object;
using bench::json_string;
using schedule::collective;
namespace perf = ncclz::perf;

inline ncclz::communicator_config config_of(const perf::options& o) {
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
inline std::string environment_json() {
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

inline std::string nccl_version() {
  int v = 0;
  NCCLZ_NCCL_TRY(ncclGetVersion(&v));
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

inline const char* launcher_name() { return ncclz::detail::mpi_running() ? "mpi" : "environment"; }

inline std::string config_json(const perf::options& o, const ncclz::cluster_comm& cc, const perf::input_source& in) {
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
      .add("route_check", o.route_check)
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

inline std::FILE* open_output(const std::string& path, const char* flag) {
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

}  // namespace ncclz::perf::detail

namespace ncclz::perf {

/// This rank's sweep with `Codec` in the element type o.dtype names.
template <class Codec>
int run_types(const rank_context& c) {
  schedule_flag::set(c.o.schedule);
  if (c.o.dtype == "double") return detail::run_rank<Codec, double>(c.o, c.cc, c.in, c.host_threads);
  if (c.o.dtype == "half") return detail::run_rank<Codec, __half>(c.o, c.cc, c.in, c.host_threads);
  if (c.o.dtype == "bfloat16") return detail::run_rank<Codec, __nv_bfloat16>(c.o, c.cc, c.in, c.host_threads);
  return detail::run_rank<Codec, float>(c.o, c.cc, c.in, c.host_threads);
}

}  // namespace ncclz::perf
