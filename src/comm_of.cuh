// The codec-erased communicator behind ncclzComm_t, and comm_of<Codec>, which instantiates the six
// collectives for the four element types of one codec. Each codec of the menu (ncclzCodec_t) is
// instantiated in a translation unit of its own (codecs/*.cu), so they compile in parallel.
#pragma once

#include <ncclz/ncclz.cuh>
#include <ncclz/ncclz.h>

#include "codec_kernels.cuh"  // the codecs' kernels, compiled once (src/kernels/)

#include <cstddef>
#include <memory>
#include <string>

struct ncclzComm {
  virtual ~ncclzComm() = default;
  virtual void allreduce(const void* s, void* r, std::size_t n, ncclDataType_t t, ncclRedOp_t op, double b, cudaStream_t st) = 0;
  virtual void reduce_scatter(const void* s, void* r, std::size_t n, ncclDataType_t t, ncclRedOp_t op, double b,
                              cudaStream_t st) = 0;
  virtual void reduce(const void* s, void* r, std::size_t n, ncclDataType_t t, ncclRedOp_t op, int root, double b,
                      cudaStream_t st) = 0;
  virtual void allgather(const void* s, void* r, std::size_t n, ncclDataType_t t, double b, cudaStream_t st) = 0;
  virtual void broadcast(const void* s, void* r, std::size_t n, ncclDataType_t t, int root, double b, cudaStream_t st) = 0;
  virtual void alltoall(const void* s, void* r, std::size_t n, ncclDataType_t t, double b, cudaStream_t st) = 0;
  virtual void check(cudaStream_t st) = 0;
  [[nodiscard]] virtual const ncclz::call_info& last_call() const = 0;
};

namespace ncclz::c_api {

/// Calls f with the C++ element type of `t`.
template <class F>
void with_type(const char* fn, ncclDataType_t t, F&& f) {
  switch (t) {
    case ncclFloat32: f.template operator()<float>(); return;
    case ncclFloat64: f.template operator()<double>(); return;
    case ncclFloat16: f.template operator()<__half>(); return;
    case ncclBfloat16: f.template operator()<__nv_bfloat16>(); return;
    default:
      ncclz::detail::throw_invalid(fn, "datatype " + std::to_string(static_cast<int>(t)) +
                                           " is not one ncclz codes: ncclFloat32, ncclFloat64, ncclFloat16 or ncclBfloat16");
  }
}

template <class Codec>
class comm_of final : public ncclzComm {
 public:
  comm_of(ncclComm_t comm, const ncclz::communicator_config& config) : c_(comm, config) {}

  void allreduce(const void* s, void* r, std::size_t n, ncclDataType_t t, ncclRedOp_t op, double b, cudaStream_t st) override {
    with_type("ncclzAllReduce", t, [&]<class T>() { c_.allreduce(static_cast<const T*>(s), static_cast<T*>(r), n, op, b, st); });
  }
  void reduce_scatter(const void* s, void* r, std::size_t n, ncclDataType_t t, ncclRedOp_t op, double b,
                      cudaStream_t st) override {
    with_type("ncclzReduceScatter", t,
              [&]<class T>() { c_.reduce_scatter(static_cast<const T*>(s), static_cast<T*>(r), n, op, b, st); });
  }
  void reduce(const void* s, void* r, std::size_t n, ncclDataType_t t, ncclRedOp_t op, int root, double b,
              cudaStream_t st) override {
    with_type("ncclzReduce", t,
              [&]<class T>() { c_.reduce(static_cast<const T*>(s), static_cast<T*>(r), n, op, root, b, st); });
  }
  void allgather(const void* s, void* r, std::size_t n, ncclDataType_t t, double b, cudaStream_t st) override {
    with_type("ncclzAllGather", t, [&]<class T>() { c_.allgather(static_cast<const T*>(s), static_cast<T*>(r), n, b, st); });
  }
  void broadcast(const void* s, void* r, std::size_t n, ncclDataType_t t, int root, double b, cudaStream_t st) override {
    with_type("ncclzBroadcast", t,
              [&]<class T>() { c_.broadcast(static_cast<const T*>(s), static_cast<T*>(r), n, root, b, st); });
  }
  void alltoall(const void* s, void* r, std::size_t n, ncclDataType_t t, double b, cudaStream_t st) override {
    with_type("ncclzAlltoAll", t, [&]<class T>() { c_.alltoall(static_cast<const T*>(s), static_cast<T*>(r), n, b, st); });
  }
  void check(cudaStream_t st) override { c_.check(st); }
  [[nodiscard]] const ncclz::call_info& last_call() const override { return c_.last_call(); }

 private:
  ncclz::Communicator<Codec> c_;
};


/// The communicator of one codec of the menu; each is defined in codecs/<codec>.cu.
template <ncclzCodec_t C>
std::unique_ptr<ncclzComm> make_comm(ncclComm_t comm, const ncclz::communicator_config& config);
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzRelFixedLength>(ncclComm_t comm, const ncclz::communicator_config& config);
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzAbsFixedLength>(ncclComm_t comm, const ncclz::communicator_config& config);
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzRelAdaptive>(ncclComm_t comm, const ncclz::communicator_config& config);
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzAbsAdaptive>(ncclComm_t comm, const ncclz::communicator_config& config);
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzFixedRate8>(ncclComm_t comm, const ncclz::communicator_config& config);
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzFixedRate4>(ncclComm_t comm, const ncclz::communicator_config& config);
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzLossless>(ncclComm_t comm, const ncclz::communicator_config& config);
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzRelAuto>(ncclComm_t comm, const ncclz::communicator_config& config);

}  // namespace ncclz::c_api
