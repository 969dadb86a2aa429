// ncclz-codec-bench's cases in f64 (cases.cuh).
#include "cases.cuh"

namespace ncclz_bench::codec_bench {
void bench_input(const Context& c, const Options& o, const std::string& name, bool small, const std::vector<double>& host,
                 const Emit& emit, bool with_raw) {
  bench_input_of(c, o, name, small, host, emit, with_raw);
}
}  // namespace ncclz_bench::codec_bench
