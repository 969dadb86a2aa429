// The argument checks of each collective, before any work is queued: null or misaligned
// buffers, bounds the quantizer cannot use, counts too large to code, roots outside the
// communicator, and buffers that overlap other than in NCCL's in-place forms.
#pragma once

#include <cstddef>
#include <string>

#include "ncclz/detail/validate.hpp"
#include "ncclz/device/device_codec.cuh"
#include "ncclz/error.hpp"
#include "ncclz/format.hpp"

namespace ncclz::detail::comm {

template <class Quantizer>
struct arguments {
  template <class T>
  static void check_buffers(const char* fn, const T* send, const T* recv, std::size_t send_count, std::size_t recv_count,
                            double bound) {
    static_assert(is_supported_value_type_v<T>, "ncclz::Communicator: T must be float, double, __half or __nv_bfloat16");
    device::detail::check_values(fn, "send", send, send_count);
    device::detail::check_values(fn, "recv", recv, recv_count);
    validate_bound<Quantizer>(fn, bound);
    validate_count<T>(fn, send_count);
  }

  static void check_root(const char* fn, int root, int nranks) {
    if (root < 0 || root >= nranks) {
      throw_invalid(fn, "root " + std::to_string(root) + " is outside [0, " + std::to_string(nranks) + ")");
    }
  }

  template <class T>
  static bool overlaps(const T* a, std::size_t na, const T* b, std::size_t nb) {
    return na > 0 && nb > 0 && a < b + nb && b < a + na;
  }

  /// allreduce and reduce: `count` values each way, in place when send == recv.
  template <class T>
  static void check_in_place_or_apart(const char* fn, const T* send, const T* recv, std::size_t count, double bound) {
    check_buffers(fn, send, recv, count, count, bound);
    if (send != recv && overlaps(send, count, recv, count)) throw_invalid(fn, "send and recv overlap without being the same buffer");
  }

  template <class T>
  static void check_allgather(const char* fn, const T* send, const T* recv, std::size_t count, double bound, int rank, int nranks) {
    check_buffers(fn, send, recv, count, static_cast<std::size_t>(nranks) * count, bound);
    if (!(send == recv + static_cast<std::size_t>(rank) * count) && overlaps(send, count, recv, count * nranks)) {
      throw_invalid(fn, "send overlaps recv other than in place (send == recv + rank * count)");
    }
  }

  /// send is read on the root only.
  template <class T>
  static void check_broadcast(const char* fn, const T* send, const T* recv, std::size_t count, int root, double bound, int rank,
                              int nranks) {
    check_root(fn, root, nranks);
    check_buffers(fn, rank == root ? send : recv, recv, count, count, bound);
    if (rank == root && send != recv && overlaps(send, count, recv, count)) {
      throw_invalid(fn, "send and recv overlap without being the same buffer");
    }
  }

  template <class T>
  static void check_alltoall(const char* fn, const T* send, const T* recv, std::size_t total, double bound) {
    check_buffers(fn, send, recv, total, total, bound);
    if (overlaps(send, total, recv, total)) throw_invalid(fn, "send and recv overlap");
  }

  template <class T>
  static void check_reduce_scatter(const char* fn, const T* send, const T* recv, std::size_t recvcount, double bound, int rank,
                                   int nranks) {
    const std::size_t count = recvcount * static_cast<std::size_t>(nranks);
    check_buffers(fn, send, recv, count, recvcount, bound);
    if (recv != send + static_cast<std::size_t>(rank) * recvcount && overlaps(send, count, recv, recvcount)) {
      throw_invalid(fn, "recv overlaps send other than in place (recv == send + rank * recvcount)");
    }
  }
};

}  // namespace ncclz::detail::comm
