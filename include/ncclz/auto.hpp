// The `Auto` tag: a policy argument that leaves the choice to ncclz (Pipeline<Auto>: parts by
// message size; EntropyCoder<Auto>: the coder by measured time). Its own header because the
// policies that take it are plain C++ headers that do not include each other.
#pragma once

namespace ncclz {

/// Let ncclz choose.
struct Auto {};

}  // namespace ncclz
