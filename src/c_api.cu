// libncclz: the C interface of ncclz/ncclz.h over ncclz::Communicator. The codecs of the menu
// (ncclzCodec_t) are instantiated one per translation unit (comm_of.cuh, codecs/*.cu); this one
// checks arguments and turns exceptions into ncclResult_t and the thread's last error.
#include "comm_of.cuh"

#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

namespace {

using namespace ncclz::c_api;

thread_local std::string last_error;

/// Runs f; turns what it throws into an ncclResult_t and the thread's last error.
template <class F>
ncclResult_t guarded(F&& f) noexcept {
  try {
    f();
    return ncclSuccess;
  } catch (const ncclz::invalid_argument& e) {
    last_error = e.what();
    return ncclInvalidArgument;
  } catch (const ncclz::nccl_error& e) {
    last_error = e.what();
    return e.status() == ncclSuccess ? ncclInternalError : static_cast<ncclResult_t>(e.status());
  } catch (const ncclz::cuda_error& e) {
    last_error = e.what();
    return ncclUnhandledCudaError;
  } catch (const std::bad_alloc&) {
    last_error = "out of host memory";
    return ncclSystemError;
  } catch (const std::exception& e) {
    last_error = e.what();
    return ncclInternalError;
  } catch (...) {
    last_error = "an exception that is not a std::exception";
    return ncclInternalError;
  }
}

ncclzComm& comm_or_throw(const char* fn, ncclzComm_t comm) {
  if (comm == nullptr) ncclz::detail::throw_invalid(fn, "comm is NULL (ncclzCommCreate makes one)");
  return *comm;
}

}  // namespace

extern "C" {

ncclResult_t ncclzCommCreate(ncclComm_t comm, const ncclzConfig* config, ncclzComm_t* out) {
  return guarded([&] {
    constexpr const char* fn = "ncclzCommCreate";
    if (out == nullptr) ncclz::detail::throw_invalid(fn, "out is NULL");
    *out = nullptr;
    if (config == nullptr) ncclz::detail::throw_invalid(fn, "config is NULL (start from NCCLZ_CONFIG_INITIALIZER)");
    if (config->autotune != 0 && config->autotune != 1) {
      ncclz::detail::throw_invalid(fn, "config->autotune is " + std::to_string(config->autotune) + ": 0 or 1");
    }
    if (config->timeoutMs < 0) {
      ncclz::detail::throw_invalid(fn, "config->timeoutMs is " + std::to_string(config->timeoutMs) + ": 0 (default) or more");
    }
    ncclz::communicator_config c;
    if (config->fallbackBelowBytes != SIZE_MAX) c.fallback_below_bytes = config->fallbackBelowBytes;
    c.autotune = config->autotune == 1;
    if (config->timeoutMs > 0) c.timeout = std::chrono::milliseconds(config->timeoutMs);
    std::unique_ptr<ncclzComm> made;
    switch (config->codec) {
      case ncclzRelFixedLength: made = make_comm<ncclzRelFixedLength>(comm, c); break;
      case ncclzAbsFixedLength: made = make_comm<ncclzAbsFixedLength>(comm, c); break;
      case ncclzRelAdaptive: made = make_comm<ncclzRelAdaptive>(comm, c); break;
      case ncclzAbsAdaptive: made = make_comm<ncclzAbsAdaptive>(comm, c); break;
      case ncclzFixedRate8: made = make_comm<ncclzFixedRate8>(comm, c); break;
      case ncclzFixedRate4: made = make_comm<ncclzFixedRate4>(comm, c); break;
      case ncclzLossless: made = make_comm<ncclzLossless>(comm, c); break;
      case ncclzRelAuto: made = make_comm<ncclzRelAuto>(comm, c); break;
      default:
        ncclz::detail::throw_invalid(fn, "config->codec is " + std::to_string(static_cast<int>(config->codec)) +
                                             ": one of ncclzCodec_t (0 to " + std::to_string(ncclzNumCodecs - 1) + ")");
    }
    *out = made.release();
  });
}

ncclResult_t ncclzCommDestroy(ncclzComm_t comm) {
  return guarded([&] { delete comm; });
}

ncclResult_t ncclzAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                            double bound, ncclzComm_t comm, cudaStream_t stream) {
  return guarded([&] { comm_or_throw("ncclzAllReduce", comm).allreduce(sendbuff, recvbuff, count, datatype, op, bound, stream); });
}

ncclResult_t ncclzReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                                ncclRedOp_t op, double bound, ncclzComm_t comm, cudaStream_t stream) {
  return guarded([&] {
    comm_or_throw("ncclzReduceScatter", comm).reduce_scatter(sendbuff, recvbuff, recvcount, datatype, op, bound, stream);
  });
}

ncclResult_t ncclzReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                         int root, double bound, ncclzComm_t comm, cudaStream_t stream) {
  return guarded(
      [&] { comm_or_throw("ncclzReduce", comm).reduce(sendbuff, recvbuff, count, datatype, op, root, bound, stream); });
}

ncclResult_t ncclzAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype, double bound,
                            ncclzComm_t comm, cudaStream_t stream) {
  return guarded(
      [&] { comm_or_throw("ncclzAllGather", comm).allgather(sendbuff, recvbuff, sendcount, datatype, bound, stream); });
}

ncclResult_t ncclzBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                            double bound, ncclzComm_t comm, cudaStream_t stream) {
  return guarded(
      [&] { comm_or_throw("ncclzBroadcast", comm).broadcast(sendbuff, recvbuff, count, datatype, root, bound, stream); });
}

ncclResult_t ncclzAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, double bound,
                           ncclzComm_t comm, cudaStream_t stream) {
  return guarded([&] { comm_or_throw("ncclzAlltoAll", comm).alltoall(sendbuff, recvbuff, count, datatype, bound, stream); });
}

ncclResult_t ncclzCheck(ncclzComm_t comm, cudaStream_t stream) {
  return guarded([&] { comm_or_throw("ncclzCheck", comm).check(stream); });
}

ncclResult_t ncclzGetLastCallInfo(ncclzComm_t comm, ncclzCallInfo* info) {
  return guarded([&] {
    const ncclz::call_info& i = comm_or_throw("ncclzGetLastCallInfo", comm).last_call();
    if (info == nullptr) ncclz::detail::throw_invalid("ncclzGetLastCallInfo", "info is NULL");
    *info = ncclzCallInfo{i.collective, i.coder,       i.schedule,  i.input_bytes, i.bytes_sent, i.chunk_bytes,
                          i.ratio,      i.error_bound, i.size_waits, i.fallback ? 1 : 0};
  });
}

const char* ncclzGetLastError(void) { return last_error.c_str(); }

int ncclzGetVersion(void) { return NCCLZ_VERSION; }

}  // extern "C"
