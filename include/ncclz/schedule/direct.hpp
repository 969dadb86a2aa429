// Direct (all-pairs) schedules built from ncclSend/ncclRecv: every rank exchanges with every
// other rank in one ncclGroupStart/End.
//
// Reduce-scatter: rank r codes segment p of its own input for each peer p and sends it there in
// one group; it receives segment r from every peer, adds the codes to its own exactly, and owns
// the full reduction of segment r, as the ring leaves it. Each rank moves the same (n - 1)/n of
// the buffer as in the ring, but every chunk is coded once from one rank's codes (smaller than
// the ring's partial sums) and all sizes travel in one exchange: one host wait instead of the
// ring's n - 1. The price is n - 1 connections per rank, so Auto takes it up to
// kDirectMaxRanks ranks.
//
// Allgather (and the second half of allreduce): every rank sends its one chunk to every peer,
// compressed once and forwarded unchanged. Reduce: the owners' chunks go to the root only.
// Alltoall: block p of rank r goes to rank p, each block compressed once.
#pragma once

namespace ncclz::schedule {

/// Schedule policy tag: all-pairs exchanges in one group per phase (one size exchange each).
struct Direct {
  static constexpr const char* name = "direct";
};

/// Up to this many ranks Auto runs reductions with Direct rather than Ring.
inline constexpr int kDirectMaxRanks = 8;

}  // namespace ncclz::schedule
