// Host tests of the CUDA-free half of the bootstrap (ncclz/detail/comm/bootstrap_file.hpp): which rank
// am I, from the environment a launcher leaves; and the file through which rank 0 hands the
// 128-byte ncclUniqueId to the others (atomic write, polling read, timeout). The NCCL half
// (ncclGetUniqueId, ncclCommInitRankConfig) runs in test/cluster/nccl_smoke.cu on a GPU.
//
// The tests change environment variables; each restores them. The id blobs are random on every
// run; rerun a failure with NCCLZ_TEST_SEED=<seed> (printed on failure) to get the same ones.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ncclz/detail/comm/bootstrap_file.hpp"
#include "ncclz/error.hpp"

namespace {

using Catch::Matchers::Contains;
using ncclz::detail::comm::unique_id_blob;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Unsets every variable rank_from_environment and default_bootstrap_path read, and puts them back
// as they were when the test ends.
class clean_environment {
 public:
  clean_environment() {
    for (const char* name : names_) {
      const char* v = std::getenv(name);
      saved_.emplace_back(name, v != nullptr ? std::optional<std::string>(v) : std::nullopt);
      ::unsetenv(name);
    }
  }
  ~clean_environment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name, value->c_str(), 1);
      } else {
        ::unsetenv(name);
      }
    }
  }
  clean_environment(const clean_environment&) = delete;
  clean_environment& operator=(const clean_environment&) = delete;

  static void set(const char* name, const char* value) { REQUIRE(::setenv(name, value, 1) == 0); }
  static void unset(const char* name) { REQUIRE(::unsetenv(name) == 0); }

 private:
  static constexpr const char* names_[] = {"NCCLZ_RANK",           "NCCLZ_NRANKS",         "OMPI_COMM_WORLD_RANK",
                                           "OMPI_COMM_WORLD_SIZE", "PMI_RANK",             "PMI_SIZE",
                                           "SLURM_PROCID",         "SLURM_NTASKS",         "NCCLZ_BOOTSTRAP_FILE"};
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

// A fresh empty folder, removed with everything in it when the test ends.
class temp_folder {
 public:
  temp_folder() {
    std::string pattern = (fs::temp_directory_path() / "ncclz-test-bootstrap.XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~temp_folder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  temp_folder(const temp_folder&) = delete;
  temp_folder& operator=(const temp_folder&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }
  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    return names;
  }

 private:
  fs::path path_;
};

using ncclz_test::fresh_seed;

unique_id_blob random_blob(std::mt19937_64& rng) {
  unique_id_blob b{};
  for (auto& byte : b) byte = static_cast<unsigned char>(rng());
  return b;
}

// Checks that f() throws E (or a class derived from it) whose message contains `part`.
template <class E, class F>
void check_throws(F&& f, const std::string& part) {
  try {
    f();
    FAIL("no exception; expected one whose message contains: " << part);
  } catch (const E& e) {
    CHECK_THAT(std::string(e.what()), Contains(part));
  }
}

ncclz::rank_info expect_ranks(int rank, int nranks) {
  const ncclz::rank_info who = ncclz::rank_from_environment();
  CHECK(who.rank == rank);
  CHECK(who.nranks == nranks);
  return who;
}

}  // namespace

TEST_CASE("rank_from_environment: rank 0 of 1 when no launcher left a trace", "[bootstrap]") {
  const clean_environment env;
  expect_ranks(0, 1);
}

TEST_CASE("rank_from_environment: each launcher's variables", "[bootstrap]") {
  const clean_environment env;
  SECTION("ncclz launcher") {
    env.set("NCCLZ_RANK", "3");
    env.set("NCCLZ_NRANKS", "4");
    expect_ranks(3, 4);
  }
  SECTION("Open MPI") {
    env.set("OMPI_COMM_WORLD_RANK", "0");
    env.set("OMPI_COMM_WORLD_SIZE", "2");
    expect_ranks(0, 2);
  }
  SECTION("PMI") {
    env.set("PMI_RANK", "7");
    env.set("PMI_SIZE", "8");
    expect_ranks(7, 8);
  }
  SECTION("Slurm") {
    env.set("SLURM_PROCID", "1");
    env.set("SLURM_NTASKS", "16");
    expect_ranks(1, 16);
  }
  SECTION("a single rank") {
    env.set("NCCLZ_RANK", "0");
    env.set("NCCLZ_NRANKS", "1");
    expect_ranks(0, 1);
  }
}

TEST_CASE("rank_from_environment: NCCLZ, then Open MPI, then PMI, then Slurm", "[bootstrap]") {
  const clean_environment env;
  env.set("SLURM_PROCID", "4");
  env.set("SLURM_NTASKS", "5");
  expect_ranks(4, 5);
  env.set("PMI_RANK", "3");
  env.set("PMI_SIZE", "5");
  expect_ranks(3, 5);
  env.set("OMPI_COMM_WORLD_RANK", "2");
  env.set("OMPI_COMM_WORLD_SIZE", "5");
  expect_ranks(2, 5);
  env.set("NCCLZ_RANK", "1");
  env.set("NCCLZ_NRANKS", "5");
  expect_ranks(1, 5);
  // A malformed lower-priority pair does not matter once a higher one is set.
  env.set("PMI_RANK", "garbage");
  expect_ranks(1, 5);
}

TEST_CASE("rank_from_environment: malformed values are invalid_argument naming the variable", "[bootstrap]") {
  const clean_environment env;
  SECTION("not a non-negative decimal integer") {
    for (const char* bad : {"", "abc", "1x", "-1", "+1", " 1", "1 ", "0x1", "1.0", "99999999999"}) {
      INFO("NCCLZ_RANK='" << bad << "'");
      env.set("NCCLZ_RANK", bad);
      env.set("NCCLZ_NRANKS", "4");
      CHECK_THROWS_MATCHES(ncclz::rank_from_environment(), ncclz::invalid_argument,
                           Catch::Matchers::Message(std::string("ncclz::rank_from_environment: NCCLZ_RANK='") + bad +
                                                    "' is not a non-negative decimal integer"));
    }
    env.set("NCCLZ_RANK", "0");
    env.set("NCCLZ_NRANKS", "four");
    CHECK_THROWS_WITH(ncclz::rank_from_environment(), Contains("NCCLZ_NRANKS='four'"));
    env.unset("NCCLZ_RANK");
    env.unset("NCCLZ_NRANKS");
    env.set("OMPI_COMM_WORLD_RANK", "1");
    env.set("OMPI_COMM_WORLD_SIZE", "-2");
    CHECK_THROWS_WITH(ncclz::rank_from_environment(), Contains("OMPI_COMM_WORLD_SIZE='-2'"));
  }
  SECTION("rank not below the count") {
    env.set("NCCLZ_RANK", "4");
    env.set("NCCLZ_NRANKS", "4");
    CHECK_THROWS_MATCHES(ncclz::rank_from_environment(), ncclz::invalid_argument,
                         Catch::Matchers::Message("ncclz::rank_from_environment: NCCLZ_RANK=4 is not below NCCLZ_NRANKS=4"));
    env.unset("NCCLZ_RANK");
    env.unset("NCCLZ_NRANKS");
    env.set("SLURM_PROCID", "9");
    env.set("SLURM_NTASKS", "2");
    CHECK_THROWS_WITH(ncclz::rank_from_environment(), Contains("SLURM_PROCID=9 is not below SLURM_NTASKS=2"));
  }
  SECTION("no ranks") {
    env.set("PMI_RANK", "0");
    env.set("PMI_SIZE", "0");
    CHECK_THROWS_AS(ncclz::rank_from_environment(), ncclz::invalid_argument);
    CHECK_THROWS_WITH(ncclz::rank_from_environment(), Contains("PMI_SIZE=0"));
  }
  SECTION("half of the ncclz pair") {
    env.set("NCCLZ_RANK", "0");
    CHECK_THROWS_MATCHES(ncclz::rank_from_environment(), ncclz::invalid_argument,
                         Catch::Matchers::Message("ncclz::rank_from_environment: NCCLZ_RANK is set but NCCLZ_NRANKS is not"));
    env.unset("NCCLZ_RANK");
    env.set("NCCLZ_NRANKS", "2");
    CHECK_THROWS_WITH(ncclz::rank_from_environment(), Contains("NCCLZ_NRANKS is set but NCCLZ_RANK is not"));
  }
}

TEST_CASE("rank_from_environment: another launcher's count alone is no launch by it", "[bootstrap]") {
  // salloc shells carry SLURM_NTASKS without SLURM_PROCID; a single process there is rank 0 of 1.
  const clean_environment env;
  env.set("SLURM_NTASKS", "8");
  expect_ranks(0, 1);
  env.set("OMPI_COMM_WORLD_SIZE", "4");
  expect_ranks(0, 1);
  env.set("SLURM_PROCID", "5");
  expect_ranks(5, 8);
}

TEST_CASE("rank_from_environment: another launcher's rank without its count is refused", "[bootstrap]") {
  // A rank that would silently run as a one-rank job would wait forever for, or ignore, its peers.
  for (const auto& [rank, count] : {std::pair{"SLURM_PROCID", "SLURM_NTASKS"}, std::pair{"PMI_RANK", "PMI_SIZE"},
                                     std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}}) {
    const clean_environment env;
    env.set(rank, "2");
    CHECK_THROWS_MATCHES(ncclz::rank_from_environment(), ncclz::invalid_argument,
                         Catch::Matchers::Message(std::string("ncclz::rank_from_environment: ") + rank + " is set but " + count +
                                                  " is not"));
  }
}

TEST_CASE("default_bootstrap_path", "[bootstrap]") {
  const clean_environment env;
  CHECK(ncclz::default_bootstrap_path({0, 1}).empty());
  check_throws<ncclz::invalid_argument>([] { static_cast<void>(ncclz::default_bootstrap_path({1, 2})); },
                                        "NCCLZ_BOOTSTRAP_FILE is not set, and rank 1 of 2 needs it");
  env.set("NCCLZ_BOOTSTRAP_FILE", "");
  CHECK_THROWS_AS(ncclz::default_bootstrap_path({0, 2}), ncclz::invalid_argument);
  env.set("NCCLZ_BOOTSTRAP_FILE", "/shared/job42.id");
  CHECK(ncclz::default_bootstrap_path({0, 2}) == "/shared/job42.id");
  CHECK(ncclz::default_bootstrap_path({0, 1}) == "/shared/job42.id");
}

TEST_CASE("bootstrap file: ranks waiting before rank 0 writes all get its id", "[bootstrap]") {
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed << " (rerun with NCCLZ_TEST_SEED=" << seed << ")");
  std::mt19937_64 rng(seed);
  const temp_folder dir;
  const std::string path = (dir.path() / "bootstrap.id").string();
  constexpr int nranks = 4;
  const unique_id_blob id = random_blob(rng);

  std::array<std::optional<unique_id_blob>, nranks - 1> got;
  std::array<std::string, nranks - 1> failure;
  std::vector<std::thread> readers;
  for (int r = 1; r < nranks; ++r) {
    readers.emplace_back([&, r] {
      try {
        got[r - 1] = ncclz::detail::comm::wait_for_id_file(path, nranks, 20s);
      } catch (const std::exception& e) {
        failure[r - 1] = e.what();
      }
    });
  }
  std::this_thread::sleep_for(50ms);  // the readers are polling a path that is not there yet
  CHECK_FALSE(fs::exists(path));
  ncclz::detail::comm::write_id_file(path, id, nranks);
  for (auto& t : readers) t.join();

  for (int r = 1; r < nranks; ++r) {
    INFO("rank " << r);
    CHECK(failure[r - 1].empty());
    REQUIRE(got[r - 1].has_value());
    CHECK(*got[r - 1] == id);
  }
  // Only the file itself is left: the temporary was renamed, and it is private to the user.
  CHECK(dir.entries() == std::vector<std::string>{"bootstrap.id"});
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(static_cast<std::size_t>(st.st_size) == ncclz::detail::comm::id_file_bytes);
  // A reader that comes late finds the file at once.
  CHECK(ncclz::detail::comm::wait_for_id_file(path, nranks, 0ms) == id);
}

TEST_CASE("bootstrap file: rewriting replaces the id whole", "[bootstrap]") {
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed << " (rerun with NCCLZ_TEST_SEED=" << seed << ")");
  std::mt19937_64 rng(seed);
  const temp_folder dir;
  const std::string path = (dir.path() / "id").string();
  for (int i = 0; i < 20; ++i) {
    const unique_id_blob id = random_blob(rng);
    ncclz::detail::comm::write_id_file(path, id, 2);
    REQUIRE(ncclz::detail::comm::try_read_id_file(path, 2) == std::optional<unique_id_blob>(id));
  }
  CHECK(dir.entries().size() == 1);
}

TEST_CASE("bootstrap file: timeout is an error naming the path and the time", "[bootstrap]") {
  const temp_folder dir;
  const std::string path = (dir.path() / "never-written.id").string();
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_MATCHES(
      ncclz::detail::comm::wait_for_id_file(path, 2, 100ms), ncclz::error,
      Catch::Matchers::Message("ncclz::exchange_unique_id: timed out after 100 ms waiting for rank 0 to write the NCCL "
                               "unique id to '" + path +
                               "' (is rank 0 running, and do all ranks see the same NCCLZ_BOOTSTRAP_FILE?)"));
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(waited >= 100ms);
  CHECK(waited < 5s);
  CHECK_FALSE(ncclz::detail::comm::try_read_id_file(path, 2).has_value());
}

TEST_CASE("bootstrap file: a file that is not ours, or not for this job, is an error", "[bootstrap]") {
  const temp_folder dir;
  const std::string path = (dir.path() / "id").string();
  unique_id_blob id{};
  id.fill(0x5a);

  SECTION("written for another rank count (left by an earlier launch)") {
    ncclz::detail::comm::write_id_file(path, id, 3);
    check_throws<ncclz::error>([&] { static_cast<void>(ncclz::detail::comm::wait_for_id_file(path, 4, 1s)); },
                               "was written for 3 ranks but this job has 4");
  }
  SECTION("some other file") {
    std::ofstream(path) << "hello\n";
    CHECK_THROWS_WITH(ncclz::detail::comm::wait_for_id_file(path, 2, 1s),
                      Contains("is not an ncclz bootstrap file (6 bytes)"));
  }
  SECTION("right size, wrong magic") {
    std::ofstream(path, std::ios::binary) << std::string(ncclz::detail::comm::id_file_bytes, 'x');
    CHECK_THROWS_WITH(ncclz::detail::comm::try_read_id_file(path, 2), Contains("is not an ncclz bootstrap file"));
  }
  SECTION("too long") {
    ncclz::detail::comm::write_id_file(path, id, 2);
    std::ofstream(path, std::ios::binary | std::ios::app) << 'x';
    CHECK_THROWS_WITH(ncclz::detail::comm::try_read_id_file(path, 2), Contains("145+ bytes"));
  }
  SECTION("a folder that is not there") {
    const std::string nowhere = (dir.path() / "missing" / "id").string();
    check_throws<ncclz::error>([&] { ncclz::detail::comm::write_id_file(nowhere, id, 2); },
                               "cannot create '" + nowhere + ".tmp.");
  }
}
