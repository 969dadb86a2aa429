// Host tests of what the ranks of a compressed call must agree on (detail/comm/call_agreement.hpp):
// header rows that differ in one field give one message, naming the field, rank 0's value and the
// ranks of every other value; rows that agree give none; sizes beyond a rank's chunk slots are
// refused.
#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "ncclz/detail/comm/call_agreement.hpp"

namespace {

namespace comm = ncclz::detail::comm;
using comm::call_field;
using Catch::Matchers::Contains;

/// n header rows of one allreduce of 1000 floats at REL 1e-3 with FixedLength, capacity 4096.
std::vector<std::uint64_t> agreeing_rows(int n) {
  comm::call_fingerprint f;
  f.set(call_field::count, 1000);
  f.set(call_field::collective, 0);
  f.set(call_field::op, 0);
  f.set(call_field::root, ~std::uint64_t{0});
  f.set(call_field::element, comm::element_word(7, 4));
  f.set(call_field::quantizer, comm::quantizer_word(ncclz::quantizer_id::rel, "rel"));
  f.set(call_field::coder, 1);
  f.set(call_field::bound, std::bit_cast<std::uint64_t>(1e-3));
  f.set(call_field::parts, 1);
  f.set(call_field::algorithm, 1);
  std::vector<std::uint64_t> rows(static_cast<std::size_t>(n) * comm::kHeaderWords);
  for (int r = 0; r < n; ++r) {
    std::uint64_t* row = rows.data() + static_cast<std::size_t>(r) * comm::kHeaderWords;
    row[0] = 100u + r;  // range keys differ between ranks: never a disagreement
    row[1] = 200u + r;
    for (unsigned i = 0; i < comm::kCallFields; ++i) row[comm::kRangeWords + i] = f.words[i];
    row[comm::kCapacityWord] = 4096;
  }
  return rows;
}

void set(std::vector<std::uint64_t>& rows, int rank, call_field f, std::uint64_t v) {
  rows[static_cast<std::size_t>(rank) * comm::kHeaderWords + comm::kRangeWords + static_cast<unsigned>(f)] = v;
}

}  // namespace

TEST_CASE("ranks that agree give no message, whatever their ranges", "[agreement]") {
  for (int n : {1, 2, 3, 8}) {
    const auto rows = agreeing_rows(n);
    CHECK_FALSE(comm::disagreement(rows.data(), n).has_value());
  }
}

TEST_CASE("a differing bound is named with rank 0's value and the other ranks'", "[agreement]") {
  auto rows = agreeing_rows(4);
  set(rows, 1, call_field::bound, std::bit_cast<std::uint64_t>(1e-4));
  set(rows, 3, call_field::bound, std::bit_cast<std::uint64_t>(1e-4));
  const auto m = comm::disagreement(rows.data(), 4);
  REQUIRE(m.has_value());
  CHECK(*m == "ranks passed different error bounds: rank 0 has 0.001; ranks 1, 3 have 0.0001");
}

TEST_CASE("each field is told apart and described", "[agreement]") {
  struct row_case {
    call_field field;
    std::uint64_t value;
    std::string text;
  };
  const std::vector<row_case> cases = {
      {call_field::count, 999, "ranks passed different counts: rank 0 has 1000; rank 2 has 999"},
      {call_field::collective, 2, "ranks passed different collectives: rank 0 has allreduce; rank 2 has allgather"},
      {call_field::op, 2, "ranks passed different reduction ops: rank 0 has ncclSum; rank 2 has ncclMax"},
      {call_field::root, 1, "ranks passed different roots: rank 0 has none; rank 2 has 1"},
      {call_field::element, comm::element_word(8, 8), "ranks passed different element types: rank 0 has float; rank 2 has double"},
      {call_field::quantizer, comm::quantizer_word(ncclz::quantizer_id::fixed_rate, "fixed8"),
       "ranks passed different quantizers: rank 0 has rel; rank 2 has fixed8"},
      {call_field::coder, 4, "ranks passed different entropy coders: rank 0 has fixed_length; rank 2 has adaptive"},
      {call_field::split, 1, "ranks passed different split_sum_bound settings: rank 0 has off; rank 2 has on"},
      {call_field::parts, 4, "ranks passed different pipeline parts: rank 0 has 1; rank 2 has 4"},
      {call_field::algorithm, 0, "ranks passed different schedules: rank 0 has direct; rank 2 has ring"},
  };
  for (const row_case& c : cases) {
    auto rows = agreeing_rows(3);
    set(rows, 2, c.field, c.value);
    const auto m = comm::disagreement(rows.data(), 3);
    REQUIRE(m.has_value());
    CHECK(*m == c.text);
  }
}

TEST_CASE("the first differing field is the one reported, and every value has its ranks", "[agreement]") {
  auto rows = agreeing_rows(5);
  set(rows, 4, call_field::coder, 4);
  set(rows, 1, call_field::count, 7);
  set(rows, 2, call_field::count, 8);
  set(rows, 3, call_field::count, 7);
  const auto m = comm::disagreement(rows.data(), 5);
  REQUIRE(m.has_value());
  CHECK(*m == "ranks passed different counts: rank 0 has 1000; ranks 1, 3 have 7; rank 2 has 8");
}

TEST_CASE("user quantizers are told apart by name", "[agreement]") {
  CHECK(comm::quantizer_word(ncclz::quantizer_id::user, "mine") != comm::quantizer_word(ncclz::quantizer_id::user, "theirs"));
  auto rows = agreeing_rows(2);
  set(rows, 1, call_field::quantizer, comm::quantizer_word(ncclz::quantizer_id::user, "mine"));
  const auto m = comm::disagreement(rows.data(), 2);
  REQUIRE(m.has_value());
  CHECK_THAT(*m, Contains("rank 1 has user quantizer #"));
}

TEST_CASE("sizes beyond the smallest chunk slots are refused before any receive", "[agreement]") {
  const int n = 3;
  auto header = agreeing_rows(n);
  header[1 * comm::kHeaderWords + comm::kCapacityWord] = 2048;  // rank 1's slots are the smallest
  std::vector<std::uint64_t> meta(static_cast<std::size_t>(n) * (n + 1), 0);
  for (int from = 0; from < n; ++from)
    for (int to = 0; to < n; ++to) meta[static_cast<std::size_t>(from) * (n + 1) + 1 + to] = 2048;
  CHECK_FALSE(comm::oversized_chunk(header.data(), meta.data(), n).has_value());
  meta[2 * (n + 1) + 1 + 0] = 2049;  // rank 2's chunk for rank 0
  const auto m = comm::oversized_chunk(header.data(), meta.data(), n);
  REQUIRE(m.has_value());
  CHECK(*m == "rank 2 reported a chunk of 2049 B for rank 0, more than the 2048 B chunk slots of rank 1 hold (a corrupted or "
              "inconsistent peer)");
  meta[2 * (n + 1) + 1 + 0] = ~std::uint64_t{0};  // a corrupted size: no wrap-around lets it through
  CHECK(comm::oversized_chunk(header.data(), meta.data(), n).has_value());
}
