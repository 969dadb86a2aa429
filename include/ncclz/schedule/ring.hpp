// Ring schedules built from ncclSend/ncclRecv: which segment goes to which peer at which step.
//
// The buffer is cut into `nranks` segments, segment j = segment_of(count, nranks, j)
// (partition.hpp). Every rank sends to its right neighbour (r + 1) % n and receives from its left
// neighbour (r - 1 + n) % n; a step is one ncclGroupStart/End holding one send and one recv, and
// the send of rank r matches the recv of rank r + 1 (same step, same segment), as NCCL requires.
//
// Reduce-scatter (n - 1 steps). At step s rank r sends segment (r - s - 1) mod n and receives
// segment (r - s - 2) mod n, which it adds to its own contribution. The segment sent at step s is
// the one received (and reduced) at step s - 1, so every hop re-encodes a partial sum, its size
// sent ahead of the payload (docs/design.md, "Variable sizes over NCCL"). After the last step
// rank r holds the full reduction of segment r: ring_owned_segment(r, n) == r, as for
// ncclReduceScatter.
//
// Allgather (n - 1 steps). Rank r starts with segment r. At step s it sends segment (r - s) mod n
// and receives segment (r - s - 1) mod n. The segment sent at step s > 0 is the one received at
// step s - 1 and is forwarded unchanged: compressed bytes are never re-encoded, so all sizes can
// be exchanged once up front (docs/design.md, "Variable sizes over NCCL").
//
// Allreduce = reduce-scatter, then allgather: the reduce-scatter leaves rank r owning segment r,
// which is exactly where the allgather starts. 2(n - 1) steps; each element crosses 2(n-1)/n links.
//
// Alltoall is not a ring but a pairwise exchange; it lives here because it is also built from
// one send and one recv per step (alltoall_step).
#pragma once

#include <cstdint>

#include "ncclz/schedule/partition.hpp"

namespace ncclz::schedule {

/// Schedule policy tag: ring reduce-scatter (of allreduce, reduce_scatter and reduce) and NCCL's
/// ring broadcast. Bandwidth-optimal; latency grows with n - 1 steps, each with a size exchange.
struct Ring {
  static constexpr const char* name = "ring";
};

/// One step of a ring: whom to send which segment to, whom to receive which segment from.
struct ring_step {
  int send_peer;
  int recv_peer;
  int send_segment;
  int recv_segment;
  friend constexpr bool operator==(const ring_step&, const ring_step&) = default;
};

/// Steps of a ring reduce-scatter or allgather over `nranks` ranks: nranks - 1.
[[nodiscard]] constexpr int ring_step_count(int nranks) {
  detail::check_nranks("schedule::ring_step_count", nranks);
  return nranks - 1;
}

/// The segment rank `rank` holds fully reduced after a ring reduce-scatter (and starts an
/// allgather with): its own index, as NCCL's ncclReduceScatter.
[[nodiscard]] constexpr int ring_owned_segment(int rank, int nranks) {
  detail::check_nranks("schedule::ring_owned_segment", nranks);
  detail::check_index("schedule::ring_owned_segment", "rank", rank, nranks, "nranks");
  return rank;
}

namespace detail {
/// a mod n in [0, n), computed wide so rank + step cannot overflow.
constexpr int mod(std::int64_t a, int n) { return static_cast<int>(((a % n) + n) % n); }

constexpr void check_ring_step(const char* fn, int rank, int nranks, int step) {
  check_nranks(fn, nranks);
  check_index(fn, "rank", rank, nranks, "nranks");
  check_index(fn, "step", step, nranks - 1, "nranks - 1");
}

/// A ring step whose send segment is (rank - shift - step) mod n.
constexpr ring_step ring_step_at(int rank, int nranks, int step, int shift) {
  const std::int64_t r = rank;
  const int send = mod(r - shift - step, nranks);
  return {mod(r + 1, nranks), mod(r - 1, nranks), send, mod(std::int64_t{send} - 1, nranks)};
}
}  // namespace detail

/// Step `step` (0 .. nranks - 2) of a ring reduce-scatter for `rank`: send segment
/// (rank - step - 1) mod n right, receive segment (rank - step - 2) mod n from the left and reduce it.
[[nodiscard]] constexpr ring_step ring_reduce_scatter_step(int rank, int nranks, int step) {
  detail::check_ring_step("schedule::ring_reduce_scatter_step", rank, nranks, step);
  return detail::ring_step_at(rank, nranks, step, 1);
}

/// Step `step` (0 .. nranks - 2) of a ring allgather for `rank`: send segment (rank - step) mod n
/// right (its own at step 0, else the one received at step - 1, unchanged), receive segment
/// (rank - step - 1) mod n from the left.
[[nodiscard]] constexpr ring_step ring_allgather_step(int rank, int nranks, int step) {
  detail::check_ring_step("schedule::ring_allgather_step", rank, nranks, step);
  return detail::ring_step_at(rank, nranks, step, 0);
}

/// One step of a pairwise exchange: send my block for `send_peer`, receive `recv_peer`'s block for me.
struct peer_step {
  int send_peer;
  int recv_peer;
  friend constexpr bool operator==(const peer_step&, const peer_step&) = default;
};

/// Step `step` (0 .. nranks - 1) of an alltoall for `rank`: send to (rank + step) % n, receive
/// from (rank - step) mod n. Step 0 is the rank's own block (a local copy, no NCCL call); over
/// the n steps every (source, destination) pair occurs exactly once, and in each step the
/// ranks form matched pairs (r sends to d exactly when d receives from r).
[[nodiscard]] constexpr peer_step alltoall_step(int rank, int nranks, int step) {
  constexpr const char* fn = "schedule::alltoall_step";
  detail::check_nranks(fn, nranks);
  detail::check_index(fn, "rank", rank, nranks, "nranks");
  detail::check_index(fn, "step", step, nranks, "nranks");
  return {detail::mod(std::int64_t{rank} + step, nranks), detail::mod(std::int64_t{rank} - step, nranks)};
}

}  // namespace ncclz::schedule
