// libncclz's ncclzRelAdaptive: Codec<Quantizer<RelBound>, EntropyCoder<Adaptive>>.
#include "../comm_of.cuh"

namespace ncclz::c_api {
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzRelAdaptive>(ncclComm_t comm, const ncclz::communicator_config& config) {
  return std::make_unique<comm_of<Codec<Quantizer<RelBound>, EntropyCoder<Adaptive>>>>(comm, config);
}
}  // namespace ncclz::c_api
