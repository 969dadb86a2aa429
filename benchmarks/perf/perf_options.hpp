// Command line of ncclz-perf, in nccl-tests' words (-b -e -f -i -n -w -m -a -c -z -G -g -t -o -d
// -r -F), plus ncclz's own (-C, --rel/--abs, --coder, --schedule, --chunk, --phases,
// --fallback-below, --data/--gen, --json).
// Plain C++ so the parsing, the size sweep and the bus-bandwidth factors are tested on machines
// without a GPU.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ncclz/error.hpp"
#include "ncclz/schedule/schedule.hpp"

namespace ncclz::perf {

/// The quantizer: a relative or absolute bound, or FixedRate<8> / FixedRate<4> (--quantizer).
enum class bound_mode { rel, abs, fixed8, fixed4 };

/// Also Quantizer<...>::name of the quantizer run.
[[nodiscard]] constexpr const char* name(bound_mode m) {
  switch (m) {
    case bound_mode::rel: return "rel";
    case bound_mode::abs: return "abs";
    case bound_mode::fixed8: return "fixed8";
    case bound_mode::fixed4: return "fixed4";
  }
  return "unknown";
}

/// The reductions ncclz offers (nccl-tests' prod and avg are not among them).
enum class reduction { sum, min, max };

[[nodiscard]] constexpr const char* name(reduction r) {
  switch (r) {
    case reduction::sum: return "sum";
    case reduction::min: return "min";
    case reduction::max: return "max";
  }
  return "unknown";
}

struct options {
  std::vector<schedule::collective> collectives{schedule::collective::allreduce};
  // The default sweep (1 MiB .. 256 MiB, x4) takes about a minute per collective on the 4-rank
  // emulated cluster; -b 4K -e 1G gives the whole range.
  std::uint64_t min_bytes = 1u << 20;      ///< -b
  std::uint64_t max_bytes = 256u << 20;    ///< -e
  double step_factor = 4;                  ///< -f (0 when -i is given)
  std::uint64_t step_bytes = 0;            ///< -i
  int iters = 20;                          ///< -n
  int warmup = 5;                          ///< -w
  int agg_iters = 1;                       ///< -m: calls per timed iteration
  /// -a: how the ranks' times of an iteration become one: rank 0's, their mean, least or
  /// greatest. The greatest by default (nccl-tests: the mean): a collective is done when its
  /// slowest rank is.
  enum class across_ranks { rank0 = 0, mean = 1, least = 2, greatest = 3 } average = across_ranks::greatest;
  bool blocking = false;                   ///< -z 1: the host waits for every call
  int ranks_per_process = 1;               ///< -g x -t: GPUs (ranks) one process drives, a thread each
  bool check = true;                       ///< -c 0|1
  reduction op = reduction::sum;           ///< -o
  std::string dtype = "float";             ///< -d float|double|half|bfloat16
  int root = 0;                            ///< -r
  bound_mode mode = bound_mode::rel;       ///< --rel X | --abs X | --quantizer NAME
  double bound = 1e-3;
  std::string coder = "auto";              ///< --coder auto|fixed_length|adaptive|raw
  std::string schedule = "auto";           ///< --schedule auto|ring|direct|tree|recursive_doubling
  std::uint64_t chunk_bytes = 0;           ///< --chunk: pipeline part size (0: the library's default)
  bool phases = false;                     ///< --phases: time the phases of ncclz's calls (in --json)
  bool split_sum_bound = true;             ///< --no-split: communicator_config::split_sum_bound = false
  bool priority_transfers = true;          ///< --no-priority: communicator_config::priority_transfers = false
  std::optional<std::uint64_t> fallback_below;  ///< --fallback-below BYTES (0: always compress; unset: the library's default)
  bool route_check = false;                ///< --route-check: also time the compressed route forced, interleaved
  std::string data;                        ///< --data FILE.f32|FILE.f64, or a folder of them
  std::string gen = "smooth";              ///< --gen smooth|noise|gradient (without --data)
  std::string json;                        ///< --json FILE
  std::string csv;                         ///< -F FILE
  bool help = false;
};

inline constexpr const char* usage = R"(usage: ncclz-perf [flags]   (one process per rank or per -g GPUs: mpirun -np N ncclz-perf ...,
                            or scripts/emulated_cluster.sh -n N [--mpi] -- ncclz-perf ...)
  -C, --collective LIST    allreduce,reduce_scatter,allgather,broadcast,reduce,alltoall (default allreduce)
  -b, --minbytes SIZE      smallest size (default 1M); sizes take K, M, G suffixes
  -e, --maxbytes SIZE      largest size (default 256M)
  -f, --stepfactor X       multiply the size by X each step (default 4)
  -i, --stepbytes SIZE     or add SIZE each step
  -n, --iters N            timed iterations per size (default 20)
  -w, --warmup_iters N     untimed iterations first (default 5)
  -m, --agg_iters N        calls per timed iteration, the time being per call (default 1); NCCL's
                           in one group, ncclz's back to back (they wait on the host, no group)
  -a, --average 0|1|2|3    the ranks' times of an iteration as rank 0's, their mean, least or
                           greatest (default 3: a collective is done when its last rank is)
  -z, --blocking 0|1       1: the host waits for each call to finish before the next (default 0)
  -g, --ngpus N            GPUs this process drives, one rank each (default 1); ranks = processes
                           x N x threads, rank 0 prints. Each rank gets a host thread of its own:
                           ncclz's calls wait on the host for the peers' sizes
  -t, --nthreads N         multiplies -g (nccl-tests' threads; each rank has its thread anyway)
  -G, --cudagraph N        refused unless 0: ncclz's calls wait on the host for the peers'
                           compressed sizes, so they cannot be captured in a CUDA graph
  -c, --check 0|1          count elements outside the bound against a float64 reference (default 1)
  -o, --op OP              reduction: sum (default), min or max
  -d, --datatype TYPE      float (default), double, half or bfloat16
  -r, --root R             root of broadcast and reduce (default 0)
  --rel X | --abs X        ncclz's error bound: X times the value range, or X (default --rel 1e-3)
  --quantizer NAME         rel, abs (with the bound of --rel/--abs), fixed8 or fixed4 (8- or 4-bit codes,
                           a step per 1024 values shared by all ranks)
  --coder NAME             auto (default: the library's, FixedLength or Adaptive by timed probes),
                           fixed_length, adaptive or raw (fixed8/fixed4: auto or fixed_length)
  --schedule NAME          auto (default), ring, direct, tree or recursive_doubling (allreduce
                           only); refused where it has no schedule
  --chunk SIZE             cut the direct reductions into parts of at least SIZE bytes a rank (at
                           most 8) so coding overlaps transfers; default: the library's 64M
                           (Pipeline<Auto>); a SIZE above the message means one part
  --phases                 time the phases of each ncclz call (codec, size exchange, host gap,
                           transfer) into --json; adds CUDA events to the timed calls
  --no-split               sums: every rank quantizes with bound / nranks and the owners send the
                           sums unchanged (communicator_config::split_sum_bound = false)
  --no-priority            direct reductions move payloads on a stream of the least priority, not
                           the greatest (communicator_config::priority_transfers = false)
  --fallback-below SIZE    calls smaller than this go to NCCL uncompressed; 0 compresses all
                           (default: the library's threshold)
  --route-check            also time the compressed route forced (autotune off), interleaved with NCCL's
                           and the library's own choice, and report the choice against the better of the
                           two (median over iterations of the ratio within one iteration): a row over 5%
                           slower is flagged, and the summary counts them
  --data DIR|FILE          real data: *.f32/*.f64 of DIR (or FILE), tiled from another offset on each rank
  --gen smooth|noise|gradient   generated input without --data (default smooth)
  --json FILE              one JSON object per size, and the run's configuration (rank 0 writes it)
  -F, --output_file FILE   the rows as CSV, a header line first (rank 0 writes it)
  -h, --help               this text
)";

/// "4096", "4K", "32M", "1G" (binary multiples) -> bytes. Throws invalid_argument naming `flag`.
inline std::uint64_t parse_size(std::string_view text, const char* flag) {
  const std::string s(text);
  if (s.empty()) detail::throw_invalid("ncclz-perf", std::string(flag) + " needs a size such as 4096, 64K, 32M or 1G");
  std::size_t used = 0;
  unsigned long long v = 0;
  if (s[0] < '0' || s[0] > '9') {  // stoull would take "-1" as 2^64 - 1
    detail::throw_invalid("ncclz-perf", std::string(flag) + " " + s + " is not a size (4096, 64K, 32M, 1G)");
  }
  try {
    v = std::stoull(s, &used);
  } catch (...) {
    detail::throw_invalid("ncclz-perf", std::string(flag) + " " + s + " is not a size (4096, 64K, 32M, 1G)");
  }
  std::uint64_t unit = 1;
  if (used < s.size()) {
    const char c = s[used];
    unit = c == 'K' || c == 'k' ? 1ull << 10 : c == 'M' || c == 'm' ? 1ull << 20 : c == 'G' || c == 'g' ? 1ull << 30 : 0;
    if (unit == 0 || used + 1 != s.size()) {
      detail::throw_invalid("ncclz-perf", std::string(flag) + " " + s + " is not a size (4096, 64K, 32M, 1G)");
    }
  }
  if (v > (~0ull) / unit) detail::throw_invalid("ncclz-perf", std::string(flag) + " " + s + " is too large");
  return v * unit;
}

inline schedule::collective parse_collective(std::string_view s) {
  using schedule::collective;
  for (collective c : {collective::allreduce, collective::reduce_scatter, collective::allgather, collective::broadcast,
                       collective::reduce, collective::alltoall}) {
    if (s == schedule::name(c)) return c;
  }
  detail::throw_invalid("ncclz-perf", "unknown collective '" + std::string(s) +
                                          "' (allreduce, reduce_scatter, allgather, broadcast, reduce, alltoall)");
}

/// The sizes to run, from min to max: multiplied by the factor, or stepped by step_bytes.
inline std::vector<std::uint64_t> sizes(const options& o) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t b = o.min_bytes; b <= o.max_bytes;) {
    out.push_back(b);
    const std::uint64_t next = o.step_bytes ? b + o.step_bytes : static_cast<std::uint64_t>(static_cast<double>(b) * o.step_factor);
    if (next <= b) break;
    b = next;
  }
  return out;
}

inline options parse(int argc, const char* const* argv) {
  options o;
  int gpu_flags = 0, thread_flags = 0;
  auto fail = [](const std::string& m) { detail::throw_invalid("ncclz-perf", m); };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(a + " needs a value");
      return argv[++i];
    };
    auto number = [&](const std::string& v) {
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0') fail(a + " " + v + " is not a number");
      return d;
    };
    auto count = [&](const std::string& v, int least) {
      const double d = number(v);
      if (d != static_cast<int>(d) || d < least) fail(a + " " + v + " must be a whole number >= " + std::to_string(least));
      return static_cast<int>(d);
    };
    if (a == "-h" || a == "--help") o.help = true;
    else if (a == "-b" || a == "--minbytes") o.min_bytes = parse_size(value(), "-b");
    else if (a == "-e" || a == "--maxbytes") o.max_bytes = parse_size(value(), "-e");
    else if (a == "-f" || a == "--stepfactor") {
      o.step_factor = number(value());
      o.step_bytes = 0;
      if (!(o.step_factor > 1)) fail("-f must be > 1");
    } else if (a == "-i" || a == "--stepbytes") {
      o.step_bytes = parse_size(value(), "-i");
      if (o.step_bytes == 0) fail("-i must be > 0");
    } else if (a == "-n" || a == "--iters") o.iters = count(value(), 1);
    else if (a == "-w" || a == "--warmup_iters") o.warmup = count(value(), 0);
    else if (a == "-c" || a == "--check") o.check = count(value(), 0) != 0;
    else if (a == "-m" || a == "--agg_iters") o.agg_iters = count(value(), 1);
    else if (a == "-a" || a == "--average") {
      const int v = count(value(), 0);
      if (v > 3) fail("-a must be 0 (rank 0), 1 (mean), 2 (least) or 3 (greatest)");
      o.average = static_cast<options::across_ranks>(v);
    } else if (a == "-z" || a == "--blocking") {
      const int v = count(value(), 0);
      if (v > 1) fail("-z must be 0 or 1");
      o.blocking = v == 1;
    } else if (a == "-g" || a == "--ngpus") o.ranks_per_process *= count(value(), 1), ++gpu_flags;
    else if (a == "-t" || a == "--nthreads") o.ranks_per_process *= count(value(), 1), ++thread_flags;
    else if (a == "-G" || a == "--cudagraph") {
      if (count(value(), 0) != 0) {
        fail("-G: ncclz's calls wait on the host for the peers' compressed sizes, so they cannot be captured in "
             "a CUDA graph; run without -G (or -G 0)");
      }
    } else if (a == "-F" || a == "--output_file") o.csv = value();
    else if (a == "-o" || a == "--op") {
      const std::string op = value();
      if (op == "sum") o.op = reduction::sum;
      else if (op == "min") o.op = reduction::min;
      else if (op == "max") o.op = reduction::max;
      else fail("-o must be sum, min or max (ncclz has no " + op + ")");
    } else if (a == "-d" || a == "--datatype") {
      o.dtype = value();
      if (o.dtype != "float" && o.dtype != "double" && o.dtype != "half" && o.dtype != "bfloat16") {
        fail("-d must be float, double, half or bfloat16");
      }
    } else if (a == "-r" || a == "--root") o.root = count(value(), 0);
    else if (a == "--rel" || a == "--abs") {
      o.mode = a == "--rel" ? bound_mode::rel : bound_mode::abs;
      o.bound = number(value());
      if (!(o.bound > 0)) fail(a + " must be > 0");
    } else if (a == "--quantizer") {
      const std::string q = value();
      if (q == "rel" || q == "abs") {
        if (o.mode == bound_mode::fixed8 || o.mode == bound_mode::fixed4) o.bound = 1e-3;
        o.mode = q == "rel" ? bound_mode::rel : bound_mode::abs;
      } else if (q == "fixed8" || q == "fixed4") {
        o.mode = q == "fixed8" ? bound_mode::fixed8 : bound_mode::fixed4;
        o.bound = q == "fixed8" ? 8 : 4;
      } else {
        fail("--quantizer must be rel, abs, fixed8 or fixed4");
      }
    } else if (a == "--coder") {
      o.coder = value();
      if (o.coder != "auto" && o.coder != "fixed_length" && o.coder != "raw" && o.coder != "adaptive") {
        fail("--coder must be auto, fixed_length, adaptive or raw");
      }
    } else if (a == "--schedule") {
      o.schedule = value();
      if (o.schedule != "auto" && o.schedule != "ring" && o.schedule != "direct" && o.schedule != "tree" &&
          o.schedule != "recursive_doubling") {
        fail("--schedule must be auto, ring, direct, tree or recursive_doubling");
      }
    } else if (a == "--chunk") o.chunk_bytes = parse_size(value(), "--chunk");
    else if (a == "--phases") o.phases = true;
    else if (a == "--no-split") o.split_sum_bound = false;
    else if (a == "--no-priority") o.priority_transfers = false;
    else if (a == "--fallback-below") o.fallback_below = parse_size(value(), "--fallback-below");
    else if (a == "--route-check") o.route_check = true;
    else if (a == "--data") o.data = value();
    else if (a == "--gen") {
      o.gen = value();
      if (o.gen != "smooth" && o.gen != "noise" && o.gen != "gradient") fail("--gen must be smooth, noise or gradient");
    } else if (a == "--json") o.json = value();
    else if (a == "-C" || a == "--collective") {
      o.collectives.clear();
      std::string list = value();
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        o.collectives.push_back(parse_collective(std::string_view(list).substr(at, comma - at)));
        at = comma + 1;
      }
    } else fail("unknown flag " + a + " (see --help)");
  }
  if ((o.mode == bound_mode::fixed8 || o.mode == bound_mode::fixed4) && o.coder != "auto" && o.coder != "fixed_length") {
    fail("--quantizer fixed8/fixed4 runs with --coder auto or fixed_length");
  }
  if (o.route_check && o.fallback_below == std::uint64_t{0}) {
    fail("--route-check weighs the autotuner's choice against the forced route: not with --fallback-below 0");
  }
  if (gpu_flags > 1 || thread_flags > 1) fail("-g and -t may each be given once");
  if (o.min_bytes == 0) fail("-b must be > 0");
  if (o.min_bytes > o.max_bytes) fail("-b " + std::to_string(o.min_bytes) + " is larger than -e " + std::to_string(o.max_bytes));
  return o;
}

}  // namespace ncclz::perf
