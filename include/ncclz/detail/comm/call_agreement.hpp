// What the ranks of one compressed call must agree on, and the message when they do not.
//
// Every compressed call starts with one small ncclAllGather of a header row per rank: the rank's
// value-range keys (merged into the range RelBound needs, so RelBound pays nothing extra), the
// call's fingerprint and the rank's chunk slot capacity. Before any other NCCL call of the call is
// enqueued, every rank compares all rows, so ranks that passed different collectives, ops, roots,
// element types, quantizers, coders, bounds or counts all throw the same invalid_argument, naming
// the field and the ranks, and the communicator stays usable; and sizes a peer reports are
// checked against the receiver's capacity before any receive is posted. Plain C++: tested on the
// host.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "ncclz/format.hpp"
#include "ncclz/schedule/schedule.hpp"

namespace ncclz::detail::comm {

/// The fields of a call's fingerprint, in the order they travel.
enum class call_field : unsigned { count, collective, op, root, element, quantizer, coder, bound, split, parts, algorithm };
inline constexpr unsigned kCallFields = 11;

/// Words of one rank's header row: range keys, fingerprint, capacity.
inline constexpr unsigned kRangeWords = 2;
inline constexpr unsigned kCapacityWord = kRangeWords + kCallFields;
inline constexpr unsigned kHeaderWords = kCapacityWord + 1;

/// FNV-1a of a policy's name: user quantizers share one id, their names tell them apart.
[[nodiscard]] constexpr std::uint32_t name_hash(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

struct call_fingerprint {
  std::uint64_t words[kCallFields] = {};
  void set(call_field f, std::uint64_t v) { words[static_cast<unsigned>(f)] = v; }
  [[nodiscard]] std::uint64_t get(call_field f) const { return words[static_cast<unsigned>(f)]; }
};

/// The fingerprint's words for an element type: its size and whether it is floating (always),
/// told apart by the NCCL type code.
[[nodiscard]] constexpr std::uint64_t element_word(unsigned nccl_type_code, std::size_t size) {
  return (std::uint64_t{nccl_type_code} << 8) | size;
}
[[nodiscard]] constexpr std::uint64_t quantizer_word(quantizer_id id, std::string_view name) {
  return (std::uint64_t{static_cast<std::uint8_t>(id)} << 32) | name_hash(name);
}

namespace agreement_detail {
inline const char* field_name(call_field f) {
  switch (f) {
    case call_field::count: return "counts";
    case call_field::collective: return "collectives";
    case call_field::op: return "reduction ops";
    case call_field::root: return "roots";
    case call_field::element: return "element types";
    case call_field::quantizer: return "quantizers";
    case call_field::coder: return "entropy coders";
    case call_field::bound: return "error bounds";
    case call_field::split: return "split_sum_bound settings";
    case call_field::parts: return "pipeline parts";
    case call_field::algorithm: return "schedules";
  }
  return "call parameters";
}

inline std::string describe(call_field f, std::uint64_t v) {
  switch (f) {
    case call_field::collective: {
      constexpr const char* names[] = {"allreduce", "reduce_scatter", "allgather", "broadcast", "reduce", "alltoall"};
      return v < 6 ? names[v] : "collective " + std::to_string(v);
    }
    case call_field::op: {
      constexpr const char* names[] = {"ncclSum", "ncclProd", "ncclMax", "ncclMin", "ncclAvg"};
      if (v == ~std::uint64_t{0}) return "none";
      return v < 5 ? names[v] : "op " + std::to_string(v);
    }
    case call_field::root: return v == ~std::uint64_t{0} ? "none" : std::to_string(v);
    case call_field::element: {
      switch (v >> 8) {
        case 6: return "half";
        case 7: return "float";
        case 8: return "double";
        case 9: return "bfloat16";
        default: return std::to_string(v & 0xff) + "-byte type " + std::to_string(v >> 8);
      }
    }
    case call_field::quantizer: {
      const auto h = static_cast<std::uint32_t>(v);
      for (const char* n : {"abs", "rel", "lossless", "fixed8", "fixed4"}) {
        if (h == name_hash(n)) return n;
      }
      return "user quantizer #" + std::to_string(h);
    }
    case call_field::coder: {
      constexpr const char* names[] = {"raw", "fixed_length", "huffman", "zero_run", "adaptive"};
      return v < 5 ? names[v] : "coder " + std::to_string(v);
    }
    case call_field::bound: {
      char text[32];
      std::snprintf(text, sizeof text, "%.9g", std::bit_cast<double>(v));
      return text;
    }
    case call_field::split: return v ? "on" : "off";
    case call_field::algorithm: {
      constexpr schedule::algorithm known[] = {schedule::algorithm::ring, schedule::algorithm::direct, schedule::algorithm::tree,
                                               schedule::algorithm::recursive_doubling};
      for (const schedule::algorithm a : known) {
        if (v == static_cast<std::uint64_t>(a)) return schedule::name(a);
      }
      return "algorithm " + std::to_string(v);
    }
    default: return std::to_string(v);
  }
}
}  // namespace agreement_detail

/// The first field on which the ranks' header rows (n rows of kHeaderWords) differ, as the
/// message every rank throws: rank 0's value, then each other value with the ranks that passed
/// it. Empty when they agree. The same rows give the same message on every rank.
[[nodiscard]] inline std::optional<std::string> disagreement(const std::uint64_t* rows, int n) {
  using agreement_detail::describe;
  for (unsigned i = 0; i < kCallFields; ++i) {
    const auto f = static_cast<call_field>(i);
    const auto at = [&](int r) { return rows[static_cast<std::size_t>(r) * kHeaderWords + kRangeWords + i]; };
    bool differs = false;
    for (int r = 1; r < n && !differs; ++r) differs = at(r) != at(0);
    if (!differs) continue;
    std::string m = std::string("ranks passed different ") + agreement_detail::field_name(f) + ": rank 0 has " + describe(f, at(0));
    std::uint64_t done[64];
    int kinds = 0;
    for (int r = 1; r < n; ++r) {
      const std::uint64_t v = at(r);
      bool seen = v == at(0);
      for (int k = 0; k < kinds && !seen; ++k) seen = done[k] == v;
      if (seen) continue;
      if (kinds < 64) done[kinds++] = v;
      std::string who;
      int count = 0;
      for (int q = r; q < n; ++q) {
        if (at(q) != v) continue;
        who += (count++ ? ", " : "") + std::to_string(q);
      }
      m += std::string("; rank") + (count > 1 ? "s " : " ") + who + (count > 1 ? " have " : " has ") + describe(f, v);
    }
    return m;
  }
  return std::nullopt;
}

namespace agreement_detail {
inline const std::uint64_t* fields_of(const std::uint64_t* rows, int r) {
  return rows + static_cast<std::size_t>(r) * kHeaderWords + kRangeWords;
}
/// Whether some rank shares FixedRate block scales or runs pipeline parts (whose sizes go over
/// the split communicator) before its first exchange of sizes.
inline bool any_operation_before_sizes(const std::uint64_t* rows, int n) {
  for (int r = 0; r < n; ++r) {
    const std::uint64_t* fields = fields_of(rows, r);
    const auto quantizer = static_cast<quantizer_id>(fields[static_cast<unsigned>(call_field::quantizer)] >> 32);
    if (quantizer == quantizer_id::fixed_rate || fields[static_cast<unsigned>(call_field::parts)] > 1) return true;
  }
  return false;
}
inline bool runs_recursive_doubling(const std::uint64_t* rows, int r) {
  return fields_of(rows, r)[static_cast<unsigned>(call_field::algorithm)] ==
         static_cast<std::uint64_t>(schedule::algorithm::recursive_doubling);
}
}  // namespace agreement_detail

/// Whether every rank's next NCCL operation after the header is the meta exchange on the caller's
/// communicator, the same operation on every rank whatever the call: true unless a rank first
/// shares FixedRate block scales or runs pipeline parts (whose sizes go over the split
/// communicator), or runs recursive doubling (whose sizes go to one partner). Where it is, ranks
/// that disagree still complete that exchange together, and the communicator stays usable after
/// the error.
[[nodiscard]] inline bool meta_follows_header(const std::uint64_t* rows, int n) {
  if (agreement_detail::any_operation_before_sizes(rows, n)) return false;
  for (int r = 0; r < n; ++r) {
    if (agreement_detail::runs_recursive_doubling(rows, r)) return false;
  }
  return true;
}

/// The same for recursive doubling: whether every rank's next operation after the header is the
/// exchange of sizes with its first partner (every rank runs recursive doubling and shares no
/// block scales first). The partners depend on the rank count only, so ranks that disagree on
/// anything else still complete that exchange together.
[[nodiscard]] inline bool partner_sizes_follow_header(const std::uint64_t* rows, int n) {
  if (agreement_detail::any_operation_before_sizes(rows, n)) return false;
  for (int r = 0; r < n; ++r) {
    if (!agreement_detail::runs_recursive_doubling(rows, r)) return false;
  }
  return true;
}

/// The first size in the meta rows (n rows {count, bytes for rank 0, ..., rank n-1}) larger
/// than the chunk slots of a rank (the capacity word of each header row), as a message. A chunk
/// may land on any rank (gathers, broadcasts), so every size is held against the smallest slots.
[[nodiscard]] inline std::optional<std::string> oversized_chunk(const std::uint64_t* header_rows, const std::uint64_t* meta_rows,
                                                                 int n) {
  int smallest = 0;
  const auto capacity = [&](int r) { return header_rows[static_cast<std::size_t>(r) * kHeaderWords + kCapacityWord]; };
  for (int r = 1; r < n; ++r) smallest = capacity(r) < capacity(smallest) ? r : smallest;
  for (int from = 0; from < n; ++from) {
    for (int to = 0; to < n; ++to) {
      const std::uint64_t bytes = meta_rows[static_cast<std::size_t>(from) * (n + 1) + 1 + to];
      if (bytes > capacity(smallest)) {
        return "rank " + std::to_string(from) + " reported a chunk of " + std::to_string(bytes) + " B for rank " + std::to_string(to) +
               ", more than the " + std::to_string(capacity(smallest)) + " B chunk slots of rank " + std::to_string(smallest) +
               " hold (a corrupted or inconsistent peer)";
      }
    }
  }
  return std::nullopt;
}

}  // namespace ncclz::detail::comm
