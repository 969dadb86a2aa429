// ncclz-perf's command line: nccl-tests' flags, ncclz's own, sizes and bus-bandwidth factors.
#include <catch2/catch.hpp>

#include "../../benchmarks/perf/perf_options.hpp"

using ncclz::perf::parse;
using ncclz::schedule::collective;

namespace {
ncclz::perf::options run(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"ncclz-perf"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse(static_cast<int>(argv.size()), argv.data());
}
}  // namespace

TEST_CASE("perf: sizes are read as nccl-tests reads them", "[perf]") {
  CHECK(ncclz::perf::parse_size("4096", "-b") == 4096);
  CHECK(ncclz::perf::parse_size("64K", "-b") == 65536);
  CHECK(ncclz::perf::parse_size("32M", "-b") == (32ull << 20));
  CHECK(ncclz::perf::parse_size("1G", "-b") == (1ull << 30));
  for (const char* bad : {"", "M", "4X", "4MM", "-1", "1.5M", "99999999999999999999G"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(ncclz::perf::parse_size(bad, "-b"), ncclz::invalid_argument);
  }
}

TEST_CASE("perf: the size sweep follows -b -e -f and -i", "[perf]") {
  const auto o = run({"-b", "1K", "-e", "16K", "-f", "2"});
  CHECK(ncclz::perf::sizes(o) == std::vector<std::uint64_t>{1024, 2048, 4096, 8192, 16384});
  const auto s = run({"-b", "1000", "-e", "4000", "-i", "1000"});
  CHECK(ncclz::perf::sizes(s) == std::vector<std::uint64_t>{1000, 2000, 3000, 4000});
  const auto one = run({"-b", "32M", "-e", "32M"});
  CHECK(ncclz::perf::sizes(one) == std::vector<std::uint64_t>{32ull << 20});
}

TEST_CASE("perf: flags set what they name", "[perf]") {
  const auto o = run({"-n", "7", "-w", "2", "-c", "0", "-o", "max", "-d", "double", "-r", "3", "--abs", "1e-4", "--coder",
                      "raw", "--schedule", "ring", "--chunk", "4M", "--data", "x.f32", "--json", "out.json", "-C",
                      "allgather,broadcast"});
  CHECK(o.iters == 7);
  CHECK(o.warmup == 2);
  CHECK_FALSE(o.check);
  CHECK(o.op == "max");
  CHECK(o.dtype == "double");
  CHECK(o.root == 3);
  CHECK(o.mode == ncclz::perf::bound_mode::abs);
  CHECK(o.bound == 1e-4);
  CHECK(o.coder == "raw");
  CHECK(o.schedule == "ring");
  CHECK(o.chunk_bytes == (4ull << 20));
  CHECK(o.data == "x.f32");
  CHECK(o.json == "out.json");
  CHECK(o.collectives == std::vector<collective>{collective::allgather, collective::broadcast});
}

TEST_CASE("perf: bad command lines name the flag", "[perf]") {
  CHECK_THROWS_WITH(run({"-n"}), Catch::Contains("-n needs a value"));
  CHECK_THROWS_WITH(run({"-n", "0"}), Catch::Contains("-n 0 must be a whole number >= 1"));
  CHECK_THROWS_WITH(run({"-f", "1"}), Catch::Contains("-f must be > 1"));
  CHECK_THROWS_WITH(run({"-b", "1M", "-e", "1K"}), Catch::Contains("larger than -e"));
  CHECK_THROWS_WITH(run({"-d", "half"}), Catch::Contains("-d must be float or double"));
  CHECK_THROWS_WITH(run({"--rel", "0"}), Catch::Contains("--rel must be > 0"));
  CHECK_THROWS_WITH(run({"-C", "allreduce,gather"}), Catch::Contains("unknown collective 'gather'"));
  CHECK_THROWS_WITH(run({"--frobnicate"}), Catch::Contains("unknown flag --frobnicate"));
}

TEST_CASE("perf: bus bandwidth factors are nccl-tests'", "[perf]") {
  using ncclz::perf::bus_factor;
  CHECK(bus_factor(collective::allreduce, 4) == Approx(1.5));
  CHECK(bus_factor(collective::reduce_scatter, 4) == Approx(0.75));
  CHECK(bus_factor(collective::allgather, 8) == Approx(0.875));
  CHECK(bus_factor(collective::alltoall, 2) == Approx(0.5));
  CHECK(bus_factor(collective::broadcast, 4) == 1);
  CHECK(bus_factor(collective::reduce, 4) == 1);
  CHECK(bus_factor(collective::allreduce, 1) == 0);
}
