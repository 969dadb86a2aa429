// libncclz's ncclzAbsFixedLength: Codec<Quantizer<AbsBound>, EntropyCoder<FixedLength>>.
#include "../comm_of.cuh"

namespace ncclz::c_api {
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzAbsFixedLength>(ncclComm_t comm, const ncclz::communicator_config& config) {
  return std::make_unique<comm_of<Codec<Quantizer<AbsBound>, EntropyCoder<FixedLength>>>>(comm, config);
}
}  // namespace ncclz::c_api
