// libncclz's ncclzFixedRate4: Codec<Quantizer<FixedRate<4>>, EntropyCoder<FixedLength>>.
#include "../comm_of.cuh"

namespace ncclz::c_api {
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzFixedRate4>(ncclComm_t comm, const ncclz::communicator_config& config) {
  return std::make_unique<comm_of<Codec<Quantizer<FixedRate<4>>, EntropyCoder<FixedLength>>>>(comm, config);
}
}  // namespace ncclz::c_api
