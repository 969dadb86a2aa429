// A pipeline policy without max_parts: the message says which policies to use.
#include "ncclz/pipeline.hpp"

struct Deep {};

static_assert(ncclz::pipeline_check<Deep>::value);
