// The sub-block layout of the entropy tile modes' host references: the shared definitions
// (ncclz/detail/subblocks.hpp, which the device coders include too) under the host's names.
#pragma once

#include "ncclz/detail/subblocks.hpp"

namespace ncclz::host::detail {

using ncclz::detail::kSubblockElements;
using ncclz::detail::subblock_count;

}  // namespace ncclz::host::detail
