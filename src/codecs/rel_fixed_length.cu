// libncclz's ncclzRelFixedLength: Codec<Quantizer<RelBound>, EntropyCoder<FixedLength>>.
#include "../comm_of.cuh"

namespace ncclz::c_api {
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzRelFixedLength>(ncclComm_t comm, const ncclz::communicator_config& config) {
  return std::make_unique<comm_of<Codec<Quantizer<RelBound>, EntropyCoder<FixedLength>>>>(comm, config);
}
}  // namespace ncclz::c_api
