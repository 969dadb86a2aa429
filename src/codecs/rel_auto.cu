// libncclz's ncclzRelAuto: Codec<Quantizer<RelBound>, EntropyCoder<Auto>> (the C++ default Codec<>).
#include "../comm_of.cuh"

namespace ncclz::c_api {
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzRelAuto>(ncclComm_t comm, const ncclz::communicator_config& config) {
  return std::make_unique<comm_of<Codec<Quantizer<RelBound>, EntropyCoder<Auto>>>>(comm, config);
}
}  // namespace ncclz::c_api
