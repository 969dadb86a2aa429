// What ncclz_perf.cu's main() needs of a codec: one function a built-in codec that runs this
// rank's whole sweep with it, each defined in a translation unit of its own (codecs/*.cu, see
// perf_rank.cuh), so the codecs compile in parallel. Plain C++.
#pragma once

#include <string_view>

#include "ncclz/bootstrap.hpp"
#include "perf_check.hpp"
#include "perf_options.hpp"

namespace ncclz::perf {

/// One rank's run, as main() sets it up.
struct rank_context {
  const options& o;
  cluster_comm& cc;
  const input_source& in;
  unsigned host_threads;  ///< this rank's share of the host's threads
};

/// Runs the sweep with one codec in o.dtype; returns the exit status (rank 0 prints and writes).
using codec_run = int (*)(const rank_context&);

struct codec_entry {
  std::string_view quantizer;  ///< Quantizer<...>::name, as --quantizer / --rel / --abs name it
  std::string_view coder;      ///< EntropyCoder<...>::name, as --coder names it
  codec_run run;
};

int run_abs_auto(const rank_context&);
int run_rel_auto(const rank_context&);
int run_abs_fixed_length(const rank_context&);
int run_rel_fixed_length(const rank_context&);
int run_abs_raw(const rank_context&);
int run_rel_raw(const rank_context&);
int run_abs_adaptive(const rank_context&);
int run_rel_adaptive(const rank_context&);
int run_fixed8(const rank_context&);
int run_fixed4(const rank_context&);
int run_fixed8_auto(const rank_context&);
int run_fixed4_auto(const rank_context&);

/// The codecs ncclz-perf runs: ncclz::for_each_builtin_codec's, in its order.
inline constexpr codec_entry kCodecs[] = {
    {"abs", "auto", run_abs_auto},                 {"rel", "auto", run_rel_auto},
    {"abs", "fixed_length", run_abs_fixed_length}, {"rel", "fixed_length", run_rel_fixed_length},
    {"abs", "raw", run_abs_raw},                   {"rel", "raw", run_rel_raw},
    {"abs", "adaptive", run_abs_adaptive},         {"rel", "adaptive", run_rel_adaptive},
    {"fixed8", "fixed_length", run_fixed8},        {"fixed4", "fixed_length", run_fixed4},
    {"fixed8", "auto", run_fixed8_auto},           {"fixed4", "auto", run_fixed4_auto},
};

}  // namespace ncclz::perf
