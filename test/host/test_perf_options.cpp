// ncclz-perf's command line (nccl-tests' flags, ncclz's own, sizes, bus-bandwidth factors) and its
// host side: buffer shapes, inputs, the float64 reference and the tolerances of the check.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "../../benchmarks/json_text.hpp"
#include "../../benchmarks/perf/perf_check.hpp"
#include "../../benchmarks/perf/perf_options.hpp"
#include "../../benchmarks/perf/perf_report.hpp"
#include "test_support.hpp"

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
                      "allgather,broadcast", "--fallback-below", "0", "--gen", "gradient"});
  CHECK(o.iters == 7);
  CHECK(o.warmup == 2);
  CHECK_FALSE(o.check);
  CHECK(o.op == ncclz::perf::reduction::max);
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
  CHECK(o.fallback_below == std::uint64_t{0});
  CHECK_FALSE(o.phases);
  CHECK(run({"--phases"}).phases);
  CHECK(o.split_sum_bound);
  CHECK_FALSE(run({"--no-split"}).split_sum_bound);
  CHECK(o.priority_transfers);
  CHECK_FALSE(run({"--no-priority"}).priority_transfers);
  CHECK(o.gen == "gradient");
  CHECK(run({"-d", "bfloat16", "--schedule", "direct"}).dtype == "bfloat16");
  CHECK(run({"-d", "half"}).dtype == "half");
  CHECK(run({"--schedule", "direct"}).schedule == "direct");
  CHECK(run({"--schedule", "recursive_doubling"}).schedule == "recursive_doubling");
  const auto fixed = run({"--quantizer", "fixed4"});
  CHECK(fixed.mode == ncclz::perf::bound_mode::fixed4);
  CHECK(fixed.bound == 4);
  CHECK(std::string(ncclz::perf::name(run({"--quantizer", "fixed8"}).mode)) == "fixed8");
  CHECK(run({"--quantizer", "fixed8", "--quantizer", "abs"}).mode == ncclz::perf::bound_mode::abs);
  CHECK(run({"--quantizer", "fixed8", "--quantizer", "abs"}).bound == 1e-3);
  CHECK(run({"--rel", "1e-2", "--quantizer", "rel"}).bound == 1e-2);
}

TEST_CASE("perf: nccl-tests' run flags -m -a -z -g -t -G -F", "[perf]") {
  using across = ncclz::perf::options::across_ranks;
  const auto d = run({});
  CHECK(d.agg_iters == 1);
  CHECK(d.average == across::greatest);
  CHECK_FALSE(d.blocking);
  CHECK(d.ranks_per_process == 1);
  CHECK(d.csv.empty());
  const auto o = run({"-m", "4", "-a", "1", "-z", "1", "-g", "2", "-t", "3", "-G", "0", "-F", "rows.csv"});
  CHECK(o.agg_iters == 4);
  CHECK(o.average == across::mean);
  CHECK(o.blocking);
  CHECK(o.ranks_per_process == 6);
  CHECK(o.csv == "rows.csv");
  CHECK(run({"--average", "0"}).average == across::rank0);
  CHECK(run({"-a", "2"}).average == across::least);
  CHECK_THROWS_WITH(run({"-G", "10"}), Catch::Contains("cannot be captured in a CUDA graph"));
  CHECK_THROWS_WITH(run({"-a", "4"}), Catch::Contains("-a must be 0 (rank 0), 1 (mean), 2 (least) or 3 (greatest)"));
  CHECK_THROWS_WITH(run({"-z", "2"}), Catch::Contains("-z must be 0 or 1"));
  CHECK_THROWS_WITH(run({"-g", "0"}), Catch::Contains("-g 0 must be a whole number >= 1"));
  CHECK_THROWS_WITH(run({"-g", "2", "-g", "2"}), Catch::Contains("-g and -t may each be given once"));
  CHECK_THROWS_WITH(run({"-m", "0"}), Catch::Contains("-m 0 must be a whole number >= 1"));
}

TEST_CASE("perf: the defaults are a short sweep of allreduce with the library's fallback", "[perf]") {
  const auto o = run({});
  CHECK(ncclz::perf::sizes(o) == std::vector<std::uint64_t>{1u << 20, 4u << 20, 16u << 20, 64u << 20, 256u << 20});
  CHECK(o.collectives == std::vector<collective>{collective::allreduce});
  CHECK(o.op == ncclz::perf::reduction::sum);
  CHECK_FALSE(o.fallback_below.has_value());
  CHECK(o.gen == "smooth");
}

TEST_CASE("perf: bad command lines name the flag", "[perf]") {
  CHECK_THROWS_WITH(run({"-n"}), Catch::Contains("-n needs a value"));
  CHECK_THROWS_WITH(run({"-n", "0"}), Catch::Contains("-n 0 must be a whole number >= 1"));
  CHECK_THROWS_WITH(run({"-f", "1"}), Catch::Contains("-f must be > 1"));
  CHECK_THROWS_WITH(run({"-b", "1M", "-e", "1K"}), Catch::Contains("larger than -e"));
  CHECK_THROWS_WITH(run({"-d", "int8"}), Catch::Contains("-d must be float, double, half or bfloat16"));
  CHECK_THROWS_WITH(run({"--schedule", "star"}), Catch::Contains("--schedule must be auto, ring, direct, tree or recursive_doubling"));
  CHECK_THROWS_WITH(run({"--rel", "0"}), Catch::Contains("--rel must be > 0"));
  CHECK_THROWS_WITH(run({"-C", "allreduce,gather"}), Catch::Contains("unknown collective 'gather'"));
  CHECK_THROWS_WITH(run({"--frobnicate"}), Catch::Contains("unknown flag --frobnicate"));
  CHECK_THROWS_WITH(run({"-o", "prod"}), Catch::Contains("ncclz has no prod"));
  CHECK_THROWS_WITH(run({"--gen", "zeros"}), Catch::Contains("--gen must be smooth, noise or gradient"));
  CHECK_THROWS_WITH(run({"--fallback-below", "-1"}), Catch::Contains("--fallback-below -1 is not a size"));
  CHECK_THROWS_WITH(run({"--quantizer", "fixed6"}), Catch::Contains("--quantizer must be rel, abs, fixed8 or fixed4"));
  CHECK_THROWS_WITH(run({"--quantizer", "fixed8", "--coder", "raw"}), Catch::Contains("fixed8/fixed4 runs with --coder auto or fixed_length"));
  CHECK_THROWS_WITH(run({"--coder", "huffman"}), Catch::Contains("--coder must be auto, fixed_length, adaptive or raw"));
  CHECK(run({}).coder == "auto");  // the library's default coder
  CHECK(run({"--quantizer", "fixed8"}).coder == "auto");
  CHECK(run({"--quantizer", "fixed4", "--coder", "fixed_length"}).coder == "fixed_length");
  CHECK(run({"--coder", "adaptive"}).coder == "adaptive");
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

TEST_CASE("perf: buffer shapes split evenly where the collective splits", "[perf]") {
  using ncclz::perf::shape_of;
  const auto ar = shape_of(collective::allreduce, 4000, 4, 3);
  CHECK((ar.send_count == 1000 && ar.recv_count == 1000 && ar.call_count() == 1000));
  const auto ag = shape_of(collective::allgather, 4000, 4, 3);  // 333 per rank, 999 received
  CHECK((ag.send_count == 333 && ag.recv_count == 999 && ag.call_count() == 333 && ag.count() == 999));
  const auto rs = shape_of(collective::reduce_scatter, 4000, 4, 3);
  CHECK((rs.send_count == 999 && rs.recv_count == 333 && rs.call_count() == 333));
  const auto a2a = shape_of(collective::alltoall, 8000, 8, 4);
  CHECK((a2a.send_count == 1000 && a2a.recv_count == 1000 && a2a.call_count() == 250));
}

TEST_CASE("perf: generated inputs are deterministic, differ per rank and are never all zero", "[perf]") {
  for (const char* kind : {"smooth", "noise", "gradient"}) {
    CAPTURE(kind);
    const auto in = ncclz::perf::input_source::generated(kind);
    int nonzero = 0, differs = 0;
    for (std::uint64_t i = 0; i < 1000; ++i) {
      CHECK(std::isfinite(in.value(1, i)));
      CHECK(in.value(1, i) == ncclz::perf::input_source::generated(kind).value(1, i));
      nonzero += in.value(1, i) != 0;
      differs += in.value(0, i) != in.value(1, i);
    }
    CHECK(nonzero > 990);
    CHECK(differs > 990);
  }
  const auto g = ncclz::perf::input_source::generated("gradient");
  double largest = 0, below_1e2 = 0;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    largest = std::max(largest, std::fabs(g.value(0, i)));
    below_1e2 += std::fabs(g.value(0, i)) < 1e-2;
  }
  CHECK(below_1e2 > 90000);  // mostly small values ...
  CHECK(largest > 5e-2);     // ... with a heavy tail
  CHECK_THROWS_AS(ncclz::perf::input_source::generated("zeros"), ncclz::invalid_argument);
}

TEST_CASE("perf: real fields are read from a file or a folder and tiled per rank", "[perf]") {
  const auto dir = std::filesystem::temp_directory_path() / ("ncclz-perf-test-" + std::to_string(ncclz_test::fresh_seed()));
  std::filesystem::create_directories(dir);
  {
    const float f[3] = {1.5f, 2.5f, 3.5f};
    const double d[2] = {-1.0, 1e300};
    std::FILE* a = std::fopen((dir / "a.f32").c_str(), "wb");
    std::fwrite(f, sizeof f[0], 3, a);
    std::fclose(a);
    std::FILE* b = std::fopen((dir / "b.f64").c_str(), "wb");
    std::fwrite(d, sizeof d[0], 2, b);
    std::fclose(b);
    std::FILE* c = std::fopen((dir / "notes.txt").c_str(), "wb");
    std::fclose(c);
  }
  CHECK(ncclz::perf::load_fields(dir.string()) == std::vector<double>{1.5, 2.5, 3.5, -1.0, 1e300});
  CHECK(ncclz::perf::load_fields((dir / "b.f64").string()) == std::vector<double>{-1.0, 1e300});
  CHECK_THROWS_WITH(ncclz::perf::load_fields((dir / "notes.txt").string()), Catch::Contains("not a folder or a .f32/.f64 file"));
  CHECK_THROWS_WITH(ncclz::perf::load_fields((dir / "missing").string()), Catch::Contains("not a folder"));
  const auto in = ncclz::perf::input_source::from_fields({1, 2, 3, 4, 5, 6, 7});
  CHECK(in.value(0, 0) == 1);
  CHECK(in.value(0, 8) == 2);
  CHECK(in.value(1, 0) == in.value(0, 104729 % 7));
  std::filesystem::remove_all(dir);
}

TEST_CASE("perf: the reference is what each collective must leave on each rank", "[perf]") {
  using ncclz::perf::expected;
  using ncclz::perf::reduction;
  const auto in = ncclz::perf::input_source::generated("noise");
  const auto x = [&](int r, std::uint64_t i) { return static_cast<double>(static_cast<float>(in.value(r, i))); };
  const int n = 3, me = 1, root = 2;
  const auto ar = ncclz::perf::shape_of(collective::allreduce, 1200, 4, n);
  CHECK(expected<float>(ar, in, reduction::sum, me, root, 5).value == x(0, 5) + x(1, 5) + x(2, 5));
  CHECK(expected<float>(ar, in, reduction::sum, me, root, 5).magnitude ==
        std::fabs(x(0, 5)) + std::fabs(x(1, 5)) + std::fabs(x(2, 5)));
  CHECK(expected<float>(ar, in, reduction::max, me, root, 5).value == std::max({x(0, 5), x(1, 5), x(2, 5)}));
  CHECK(expected<float>(ar, in, reduction::min, me, root, 5).value == std::min({x(0, 5), x(1, 5), x(2, 5)}));
  const auto rs = ncclz::perf::shape_of(collective::reduce_scatter, 1200, 4, n);  // 100 per rank
  CHECK(expected<float>(rs, in, reduction::sum, me, root, 7).value == x(0, 107) + x(1, 107) + x(2, 107));
  const auto ag = ncclz::perf::shape_of(collective::allgather, 1200, 4, n);
  CHECK(expected<float>(ag, in, reduction::sum, me, root, 207).value == x(2, 7));
  const auto bc = ncclz::perf::shape_of(collective::broadcast, 1200, 4, n);
  CHECK(expected<float>(bc, in, reduction::sum, me, root, 9).value == x(root, 9));
  const auto a2a = ncclz::perf::shape_of(collective::alltoall, 1200, 4, n);  // 100 per peer
  CHECK(expected<float>(a2a, in, reduction::sum, me, root, 205).value == x(2, 105));
  const auto rd = ncclz::perf::shape_of(collective::reduce, 1200, 4, n);
  CHECK(ncclz::perf::checked_count(rd, me, root) == 0);
  CHECK(ncclz::perf::checked_count(rd, root, root) == 300);
}

TEST_CASE("perf: the check counts elements outside the bound, NaN and Inf as IEEE gives them", "[perf]") {
  ncclz::perf::tally t;
  t.add(1.0, 1.0, 0);
  t.add(1.5, 1.0, 0.5);
  t.add(1.6, 1.0, 0.5);
  t.add(NAN, NAN, 0);
  t.add(1.0, NAN, 1e9);
  t.add(INFINITY, INFINITY, 0);
  t.add(-INFINITY, INFINITY, 1e9);
  CHECK(t.wrong == 3);
  CHECK(t.max_err == Approx(0.6));
}

TEST_CASE("perf: tolerances are test_collectives' for ncclz and a float sum's rounding for NCCL", "[perf]") {
  using ncclz::perf::reduction;
  const auto ar = ncclz::perf::shape_of(collective::allreduce, 4096, 4, 4);
  const auto ag = ncclz::perf::shape_of(collective::allgather, 4096, 4, 4);
  const ncclz::perf::expected_value e{3.0, 10.0};
  CHECK(ncclz::perf::ncclz_tolerance<float>(ar, 1e-3, e) == 1e-3 + 0x1.0p-22);  // one ulp of 3.0f
  CHECK(ncclz::perf::ncclz_tolerance<float>(ag, 1e-3, e) == 1e-3);
  CHECK(ncclz::perf::nccl_tolerance<float>(ar, reduction::sum, e) == 4 * 0x1.0p-23 * 10.0);
  CHECK(ncclz::perf::nccl_tolerance<float>(ar, reduction::max, e) == 0);
  CHECK(ncclz::perf::nccl_tolerance<double>(ag, reduction::sum, e) == 0);
}

TEST_CASE("perf: the check of a whole result finds a planted error on any thread count", "[perf]") {
  const int n = 3, me = 0;
  const auto in = ncclz::perf::input_source::generated("smooth");
  const auto s = ncclz::perf::shape_of(collective::allreduce, 4 * 300000, 4, n);
  std::vector<float> exact(s.recv_count), lossy(s.recv_count);
  for (std::uint64_t j = 0; j < s.recv_count; ++j) {
    exact[j] = static_cast<float>(ncclz::perf::expected<float>(s, in, ncclz::perf::reduction::sum, me, 0, j).value);
    lossy[j] = exact[j] + 0.004f;
  }
  lossy[123457] += 1.0f;
  const auto sum = ncclz::perf::reduction::sum;
  for (unsigned threads : {1u, 4u}) {
    const auto r = ncclz::perf::check_results<float>(s, in, sum, me, 0, exact.data(), lossy.data(), 0.01, threads);
    CHECK(r.nccl.wrong == 0);
    CHECK(r.ncclz.wrong == 1);
    CHECK(r.ncclz.max_err == Approx(1.004).epsilon(1e-3));
    const auto fell_back = ncclz::perf::check_results<float>(s, in, sum, me, 0, exact.data(), exact.data(), -1, threads);
    CHECK(fell_back.ncclz.wrong == 0);
  }
}

namespace {
// bfloat16 as the top half of a float, rounded toward zero: enough to test narrow_element's bits.
struct fake_bf16 {
  std::uint16_t bits;
};
struct fake_bf16_conversions {
  static fake_bf16 from_float(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return {static_cast<std::uint16_t>(u >> 16)};
  }
  static float to_float(fake_bf16 b) {
    const std::uint32_t u = std::uint32_t{b.bits} << 16;
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
  }
};
}  // namespace

TEST_CASE("perf: 16-bit element types round, and measure their ulp, from their bits", "[perf]") {
  using E = ncclz::perf::detail::narrow_element<fake_bf16, fake_bf16_conversions, 7>;
  CHECK(E::round(1.0 + 1.0 / 512) == 1.0);
  CHECK(E::round(-3.0) == -3.0);
  CHECK(E::ulp(1.0) == 1.0 / 128);
  CHECK(E::ulp(1.5) == 1.0 / 128);
  CHECK(E::ulp(-1.0) == 1.0 / 256);  // toward +inf, as std::nextafter: the spacing below 1
  CHECK(E::ulp(-1.5) == 1.0 / 128);
  CHECK(E::ulp(0.0) == std::ldexp(1.0, -133));  // the smallest subnormal
  CHECK(E::epsilon == 1.0 / 128);
  // The same rule as float's, where std::nextafter exists to compare with.
  CHECK(ncclz::perf::element<float>::ulp(-1.0) == std::ldexp(1.0, -24));
}

TEST_CASE("perf: --json lines are JSON: strings escaped, non-finite numbers null", "[perf]") {
  using namespace ncclz::bench;
  CHECK(json_string("a\"b\\c\n") == R"("a\"b\\c\u000a")");
  CHECK(json_number(1.5) == "1.5");
  CHECK(json_number(NAN) == "null");
  CHECK(json_number(-INFINITY) == "null");
  CHECK(json_object().str() == "{}");
  CHECK(json_object().add("x", 2.0).add("s", "t").add("b", false).raw("a", json_array(std::vector<int>{1, 2}, [](int i) {
    return json_number(i);
  })).str() == R"({"x":2,"s":"t","b":false,"a":[1,2]})");
}

TEST_CASE("perf: each collective test answers for its own collective", "[perf]") {
  for (const collective c : {collective::allreduce, collective::reduce_scatter, collective::allgather,
                             collective::broadcast, collective::reduce, collective::alltoall}) {
    CAPTURE(ncclz::schedule::name(c));
    ncclz::perf::with_collective_test(c, [&]<class Test>() { CHECK(Test::kind == c); });
    CHECK(ncclz::perf::shape_of(c, 4096, 4, 4).collective == c);
  }
}

TEST_CASE("perf: -F writes a header and rows of the same columns", "[perf]") {
  ncclz::perf::options o;
  const ncclz::perf::report rep(o);
  ncclz::perf::row r{ncclz::perf::shape_of(collective::allreduce, 1 << 20, 4, 2), 4, "float", {200, 190, 210},
                     {50, 45, 60}, {}, "fixed_length", "direct", {}};
  ncclz::perf::rank_report k{};
  k.ratio = 8;
  k.error_bound = 1e-3;
  r.ranks = {k, k};
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  ncclz::perf::report::print_csv_header(f);
  rep.print_csv_row(f, r);
  std::rewind(f);
  char header[1024] = {}, line[1024] = {};
  REQUIRE(std::fgets(header, sizeof header, f) != nullptr);
  REQUIRE(std::fgets(line, sizeof line, f) != nullptr);
  std::fclose(f);
  const auto commas = [](const char* s) { return std::count(s, s + std::strlen(s), ','); };
  CHECK(commas(header) == commas(line));
  CHECK(std::string(line).starts_with("allreduce,1048576,262144,float,sum,-1,200.000,"));
  CHECK(std::string(line).find(",4.0000,8.0000,") != std::string::npos);  // speedup 200/50, ratio 8
  CHECK(std::string(line).find("fixed_length,direct,0") != std::string::npos);
}

TEST_CASE("perf: --route-check weighs the library's route against the better one", "[perf]") {
  CHECK(run({"--route-check"}).route_check);
  CHECK_FALSE(run({}).route_check);
  CHECK_THROWS_WITH(run({"--route-check", "--fallback-below", "0"}), Catch::Contains("--route-check"));

  ncclz::perf::options o;
  o.route_check = true;
  const ncclz::perf::report rep(o);
  const auto row_of = [](double nccl_us, double ncclz_us, double forced_us) {
    return ncclz::perf::row{ncclz::perf::shape_of(collective::allreduce, 1 << 20, 4, 2), 4, "float", {nccl_us, nccl_us, nccl_us},
                            {ncclz_us, ncclz_us, ncclz_us}, {ncclz::perf::rank_report{}, ncclz::perf::rank_report{}},
                            "adaptive", "direct", ncclz::perf::timing{forced_us, forced_us, forced_us},
                            ncclz::perf::paired_of_best({nccl_us}, {ncclz_us}, {forced_us})};
  };
  const auto kept_nccl = row_of(100, 102, 300);    // within the margin of NCCL, the better
  const auto lost = row_of(200, 150, 120);          // 1.25x the forced route's time
  CHECK(kept_nccl.of_best() == Approx(1.02));
  CHECK_FALSE(kept_nccl.slower_than_best());
  CHECK(lost.of_best() == Approx(1.25));
  CHECK(lost.slower_than_best());
  auto unchecked = lost;
  unchecked.forced.reset();
  CHECK_FALSE(unchecked.slower_than_best());

  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  rep.print_row(f, lost);
  rep.print_summary(f, {kept_nccl, lost}, nullptr);
  std::rewind(f);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), f));
  std::fclose(f);
  CHECK(text.find("SLOWER") != std::string::npos);
  CHECK(text.find("1 of 2 rows more than 5% slower than the better route (worst 1.250)") != std::string::npos);
  CHECK(rep.row_json(lost).find("\"of_best\":1.25") != std::string::npos);

  // Paired by iteration: a stretch that slows all three routes (iterations 2 and 3) does not
  // count against the library's route; its own slow iteration alone does not decide either.
  const std::vector<double> nccl{10, 30, 30, 10, 10}, forced{5, 15, 15, 5, 5};
  CHECK(ncclz::perf::paired_of_best(nccl, {5, 15, 15, 5, 5}, forced) == Approx(1.0));
  CHECK(ncclz::perf::paired_of_best(nccl, {5, 15, 15, 20, 5}, forced) == Approx(1.0));
  CHECK(ncclz::perf::paired_of_best(nccl, {6, 18, 18, 6, 5}, forced) == Approx(1.2));
}
