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
// gathering), perf/perf_report.hpp (text, JSON, CSV), perf/perf_rank.cuh and perf/codecs/*.cu (a
// rank's run, one translation unit a codec); this file starts the ranks.
//
// Exit status: 0; 1 when an element is wrong or a call fails; 2 on a bad command line; 77 without
// a CUDA device (meson's "skipped").
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "ncclz/bootstrap.hpp"
#include "perf/perf_rank.hpp"

namespace {

namespace perf = ncclz::perf;

int run_codec(const perf::rank_context& c) {
  for (const perf::codec_entry& e : perf::kCodecs)
    if (e.quantizer == perf::name(c.o.mode) && e.coder == c.o.coder) return e.run(c);
  ncclz::detail::throw_invalid("ncclz-perf", "no built-in codec has quantizer " + std::string(perf::name(c.o.mode)) +
                                                 " and coder " + c.o.coder);
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
  // The emulated cluster's ranks share one host: each gets its share of the threads.
  const unsigned host_threads = std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(std::max(1, local)) /
                                                 static_cast<unsigned>(process.nranks));
  if (local == 1) {
    ncclz::cluster_comm cc(process);
    return run_codec({o, cc, in, host_threads});
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
        rc[static_cast<std::size_t>(t)] = run_codec({o, cc, in, host_threads});
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
    const ncclz::mpi_environment mpi(&argc, &argv);  // under mpirun: ranks and the id come from MPI
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
