// libncclz's ncclzFixedRate8: Codec<Quantizer<FixedRate<8>>, EntropyCoder<FixedLength>>.
#include "../comm_of.cuh"

namespace ncclz::c_api {
template <>
std::unique_ptr<ncclzComm> make_comm<ncclzFixedRate8>(ncclComm_t comm, const ncclz::communicator_config& config) {
  return std::make_unique<comm_of<Codec<Quantizer<FixedRate<8>>, EntropyCoder<FixedLength>>>>(comm, config);
}
}  // namespace ncclz::c_api
