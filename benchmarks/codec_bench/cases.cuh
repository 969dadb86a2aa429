// ncclz-codec-bench's cases (codec_bench.cu is the driver and says what the tool does): timing,
// device buffers, one (input, bound, codec) case, and an input through every coder. Each element
// type's cases are a translation unit of their own (f32.cu, f64.cu, f16.cu, bf16.cu), and so is
// --lossless (lossless.cu), so that they compile in parallel.
#pragma once

#include <ncclz/ncclz.cuh>

#include "codec_kernels.cuh"  // the codecs' kernels, compiled once (src/kernels/)

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ncclz_bench::codec_bench {

using RelFL = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using AbsFL = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::FixedLength>>;
using RelRaw = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<ncclz::Raw>>;
using AbsRaw = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<ncclz::Raw>>;
template <class Strategy>
using RelC = ncclz::Codec<ncclz::Quantizer<ncclz::RelBound>, ncclz::EntropyCoder<Strategy>>;
template <class Strategy>
using AbsC = ncclz::Codec<ncclz::Quantizer<ncclz::AbsBound>, ncclz::EntropyCoder<Strategy>>;
/// The same codec without tile checksums (--checksums).
template <class Codec>
using Unchecked = ncclz::Codec<typename Codec::quantizer, typename Codec::coder, ncclz::Integrity<ncclz::NoChecksums>>;

// The absolute bound every decoded value keeps sits at bytes 40..48 of the chunk header.
static_assert(offsetof(ncclz::format::chunk_header, error_bound) == 40);

constexpr int kWarmups = 3;
constexpr double kMiB = 1024.0 * 1024.0;

struct Options {
  std::string data, json, lossless;  // lossless: a folder of raw arrays for the lossless codec only
  std::string only;                  // --only: run the inputs whose name contains this
  std::vector<double> bounds{1e-2, 1e-3, 1e-4};
  std::vector<std::string> dtypes{"f32"};  // f32, f16, bf16
  std::vector<std::string> coders{"fixed_length"};  // fixed_length, huffman, zero_run, adaptive
  int runs = 20;
  std::size_t size_mb = 256;
  std::uint64_t seed = 0;
  bool seed_given = false;
  bool checksums = false;  // time each case with and without tile checksums, interleaved
};

struct Timing {  // milliseconds; 0: not measured
  double med_ms = 0, min_ms = 0;
};

struct Row {
  std::string input, dtype, coder, failure;  // failure: decode error, eb mismatch, unstable size
  bool small = false;
  std::size_t count = 0, bytes = 0;
  std::uint64_t chunk_bytes = 0, abs_chunk_bytes = 0, violations = 0;
  double bound = 0, eb = 0, eb_host = 0, max_err = 0;
  Timing comp, decomp, comp_abs;
  Timing comp_unchecked, decomp_unchecked;  ///< --checksums: the same without tile checksums
  std::uint64_t unchecked_chunk_bytes = 0;
  std::uint64_t modes[4] = {0, 0, 0, 0};  ///< tiles per tile_mode
};

struct Context {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  int runs = 0;
  double roof_gbps = 0;  // bytes read + written per ns
  bool checksums = false;
};

// --- timing -------------------------------------------------------------------------------------

/// The median and the least of `ms`.
inline Timing timing_of(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const std::size_t m = ms.size();
  if (m == 0) return {};
  return {m % 2 ? ms[m / 2] : 0.5 * (ms[m / 2 - 1] + ms[m / 2]), ms.front()};
}

/// Times op() with events on the stream: kWarmups untimed runs, then c.runs timed ones; after()
/// runs after each, outside the timed region.
template <class Op, class After>
Timing time_op(const Context& c, Op&& op, After&& after) {
  std::vector<double> ms;
  for (int i = 0; i < kWarmups + c.runs; ++i) {
    NCCLZ_CUDA_TRY(cudaEventRecord(c.start, c.stream));
    op();
    NCCLZ_CUDA_TRY(cudaEventRecord(c.stop, c.stream));
    NCCLZ_CUDA_TRY(cudaEventSynchronize(c.stop));
    float t = 0;
    NCCLZ_CUDA_TRY(cudaEventElapsedTime(&t, c.start, c.stop));
    if (i >= kWarmups) ms.push_back(t);
    after();
  }
  return timing_of(std::move(ms));
}

/// Times a() and b() on the stream, interleaved (A B, then B A, ...): kWarmups untimed rounds,
/// then `rounds` timed ones, whose times go to ms[0] and ms[1]; after() runs after each op,
/// outside the timed region.
template <class OpA, class OpB, class After>
void time_ab(const Context& c, int rounds, OpA&& a, OpB&& b, After&& after, std::vector<double> (&ms)[2]) {
  const auto once = [&](int which) {
    NCCLZ_CUDA_TRY(cudaEventRecord(c.start, c.stream));
    if (which == 0) a();
    else b();
    NCCLZ_CUDA_TRY(cudaEventRecord(c.stop, c.stream));
    NCCLZ_CUDA_TRY(cudaEventSynchronize(c.stop));
    float t = 0;
    NCCLZ_CUDA_TRY(cudaEventElapsedTime(&t, c.start, c.stop));
    after();
    return static_cast<double>(t);
  };
  for (int i = 0; i < kWarmups + rounds; ++i) {
    for (const int which : {i % 2, 1 - i % 2}) {
      const double t = once(which);
      if (i >= kWarmups) ms[which].push_back(t);
    }
  }
}

inline double gbps(std::size_t bytes, double ms) { return ms > 0 ? double(bytes) / (ms * 1e6) : 0.0; }

// --- buffers ------------------------------------------------------------------------------------

/// Every device buffer one input needs, allocated once and reused by every bound, codec and run.
template <class T>
struct DeviceBuffers {
  std::size_t n, cap, ws_bytes;
  T* in = nullptr;
  T* out = nullptr;
  void* chunk = nullptr;
  void* chunk2 = nullptr;  // the unchecked codec's chunk (--checksums)
  void* ws = nullptr;
  std::uint64_t* size = nullptr;
  explicit DeviceBuffers(const std::vector<T>& host)
      : n(host.size()), cap(ncclz::max_compressed_bytes<T>(n)), ws_bytes(ncclz::device::workspace_bytes<T>(n)) {
    NCCLZ_CUDA_TRY(cudaMalloc(&in, n * sizeof(T)));
    NCCLZ_CUDA_TRY(cudaMalloc(&out, n * sizeof(T)));
    NCCLZ_CUDA_TRY(cudaMalloc(&chunk, cap));
    NCCLZ_CUDA_TRY(cudaMalloc(&chunk2, cap));
    NCCLZ_CUDA_TRY(cudaMalloc(&ws, ws_bytes));
    NCCLZ_CUDA_TRY(cudaMalloc(&size, sizeof(std::uint64_t)));
    NCCLZ_CUDA_TRY(cudaMemcpy(in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    NCCLZ_CUDA_TRY(cudaDeviceSynchronize());  // a pageable copy may return before its DMA ends
  }
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  ~DeviceBuffers() {
    for (void* p : {static_cast<void*>(in), static_cast<void*>(out), chunk, chunk2, ws, static_cast<void*>(size)})
      NCCLZ_CUDA_TRY_NO_THROW(cudaFree(p));
  }
};

/// An element of any supported type, widened to double (exactly).
template <class T>
double to_double(T x) {
  return static_cast<double>(ncclz::to_compute(x));
}

/// max - min of the finite values, in double (what RelBound multiplies the bound by).
template <class T>
double finite_range(const std::vector<T>& v) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const T x : v)
    if (const double d = to_double(x); std::isfinite(d)) lo = std::min(lo, d), hi = std::max(hi, d);
  return hi >= lo ? hi - lo : 0.0;
}

// --- one (input, bound, codec) case -------------------------------------------------------------

template <class RelC, class AbsC, class T>
Row run_case(const Context& c, const std::string& name, bool small, const std::vector<T>& host, std::vector<T>& back,
             DeviceBuffers<T>& d, double rel, double range) {
  Row r;
  r.input = name, r.dtype = ncclz::detail::dtype_name(static_cast<std::uint8_t>(ncclz::dtype_of<T>()));
  r.coder = RelC::coder::name, r.small = small;
  r.count = d.n, r.bytes = d.n * sizeof(T), r.bound = rel, r.eb_host = rel * range;
  const cudaStream_t s = c.stream;

  // Chunk sizes must not change between runs on the same input: a change means a race.
  std::uint64_t seen = 0;
  auto track_size = [&] {
    std::uint64_t v = 0;
    NCCLZ_CUDA_TRY(cudaMemcpy(&v, d.size, sizeof v, cudaMemcpyDeviceToHost));
    if (seen != 0 && v != seen) r.failure = "chunk size changed between runs (race?)";
    seen = v;
  };
  if (r.eb_host > 0) {  // the same absolute bound without the range pass
    r.comp_abs = time_op(c, [&] {
      ncclz::device::compress<AbsC>(d.ws, d.ws_bytes, d.in, d.n, d.chunk, d.cap, d.size, r.eb_host, s);
    }, track_size);
    r.abs_chunk_bytes = seen;
    seen = 0;
  }
  if (c.checksums) {
    // With and without tile checksums, interleaved, each with its own chunk buffer. Which codec
    // has which buffer moved their difference by several points (docs/collectives.md, "What
    // checksums cost"), so half the rounds run in each placement; the checked chunk ends in
    // d.chunk, where the checks below read it.
    using RelU = Unchecked<RelC>;
    std::uint64_t sizes[2] = {0, 0};
    int which = 0;
    auto track_both = [&] {
      std::uint64_t v = 0;
      NCCLZ_CUDA_TRY(cudaMemcpy(&v, d.size, sizeof v, cudaMemcpyDeviceToHost));
      if (sizes[which] != 0 && v != sizes[which]) r.failure = "chunk size changed between runs (race?)";
      sizes[which] = v;
    };
    std::vector<double> comp_ms[2], decomp_ms[2];
    for (const int placement : {1, 0}) {
      void* const checked = placement == 0 ? d.chunk : d.chunk2;
      void* const unchecked = placement == 0 ? d.chunk2 : d.chunk;
      const int rounds = placement == 0 ? c.runs / 2 : c.runs - c.runs / 2;
      time_ab(
          c, rounds, [&] { which = 0, ncclz::device::compress<RelC>(d.ws, d.ws_bytes, d.in, d.n, checked, d.cap, d.size, rel, s); },
          [&] { which = 1, ncclz::device::compress<RelU>(d.ws, d.ws_bytes, d.in, d.n, unchecked, d.cap, d.size, rel, s); },
          track_both, comp_ms);
      time_ab(
          c, rounds, [&] { ncclz::device::decompress<RelC>(d.ws, d.ws_bytes, checked, sizes[0], d.out, d.n, s); },
          [&] { ncclz::device::decompress<RelU>(d.ws, d.ws_bytes, unchecked, sizes[1], d.out, d.n, s); }, [] {}, decomp_ms);
    }
    r.chunk_bytes = sizes[0], r.unchecked_chunk_bytes = sizes[1];
    r.comp = timing_of(comp_ms[0]), r.comp_unchecked = timing_of(comp_ms[1]);
    r.decomp = timing_of(decomp_ms[0]), r.decomp_unchecked = timing_of(decomp_ms[1]);
    NCCLZ_CUDA_TRY(cudaMemsetAsync(d.out, 0xFF, r.bytes, s));  // the unchecked chunk decodes as the checked one
    ncclz::device::decompress<RelU>(d.ws, d.ws_bytes, d.chunk2, r.unchecked_chunk_bytes, d.out, d.n, s);
    try {
      ncclz::device::throw_if_decode_failed(d.ws, s);
    } catch (const ncclz::format_error& e) {
      r.failure = std::string("without checksums: ") + e.what();
    }
    NCCLZ_CUDA_TRY(cudaMemcpy(back.data(), d.out, r.bytes, cudaMemcpyDeviceToHost));
    std::vector<T> unchecked_back = back;
    NCCLZ_CUDA_TRY(cudaMemsetAsync(d.out, 0xFF, r.bytes, s));
    ncclz::device::decompress<RelC>(d.ws, d.ws_bytes, d.chunk, r.chunk_bytes, d.out, d.n, s);
    NCCLZ_CUDA_TRY(cudaMemcpy(back.data(), d.out, r.bytes, cudaMemcpyDeviceToHost));
    if (std::memcmp(back.data(), unchecked_back.data(), r.bytes) != 0) r.failure = "checked and unchecked chunks decode differently";
  } else {
    r.comp = time_op(c, [&] {
      ncclz::device::compress<RelC>(d.ws, d.ws_bytes, d.in, d.n, d.chunk, d.cap, d.size, rel, s);
    }, track_size);
    r.chunk_bytes = seen;
    r.decomp = time_op(c, [&] {
      ncclz::device::decompress<RelC>(d.ws, d.ws_bytes, d.chunk, r.chunk_bytes, d.out, d.n, s);
    }, [] {});
  }

  // Correctness: decode into a poisoned output (0xFF.. is NaN), check every element in double.
  NCCLZ_CUDA_TRY(cudaMemsetAsync(d.out, 0xFF, r.bytes, s));
  ncclz::device::decompress<RelC>(d.ws, d.ws_bytes, d.chunk, r.chunk_bytes, d.out, d.n, s);
  try {
    ncclz::device::throw_if_decode_failed(d.ws, s);
  } catch (const ncclz::format_error& e) {
    r.failure = e.what();
  }
  ncclz::format::chunk_header h{};
  NCCLZ_CUDA_TRY(cudaMemcpy(&h, d.chunk, sizeof h, cudaMemcpyDeviceToHost));
  NCCLZ_CUDA_TRY(cudaMemcpy(back.data(), d.out, r.bytes, cudaMemcpyDeviceToHost));
  r.eb = h.error_bound;
  {  // the tiles' modes: the first byte of each tile
    std::vector<std::uint32_t> table(h.tile_count);
    std::vector<std::byte> chunk(r.chunk_bytes);
    NCCLZ_CUDA_TRY(cudaMemcpy(chunk.data(), d.chunk, r.chunk_bytes, cudaMemcpyDeviceToHost));
    std::memcpy(table.data(), chunk.data() + sizeof h, table.size() * 4);
    for (const std::uint32_t t : table) {
      const auto mode = static_cast<std::uint8_t>(chunk[sizeof h + std::size_t{t} * 8]);
      if (mode < 4) ++r.modes[mode];
    }
  }
  if (r.failure.empty() && r.eb != r.eb_host) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "header error_bound %.17g != bound * host range %.17g", r.eb, r.eb_host);
    r.failure = msg;
  }
  for (std::size_t i = 0; i < d.n; ++i) {
    const double x = to_double(host[i]), y = to_double(back[i]);
    if (std::isnan(x)) {
      r.violations += !std::isnan(y);
      continue;
    }
    const double e = x == y ? 0.0 : std::fabs(x - y);
    if (e <= r.eb) r.max_err = std::max(r.max_err, e);
    else ++r.violations;  // also y NaN (unwritten) where x is not
  }
  return r;
}

// --- an input through every coder ---------------------------------------------------------------

using Emit = std::function<void(Row)>;

/// Runs `host` through every bound and coder of --coders, and the raw coders where `with_raw`;
/// emits a row a case. The element types' units (f32.cu, f64.cu, f16.cu, bf16.cu) instantiate it.
template <class T>
void bench_input_of(const Context& c, const Options& o, const std::string& name, bool small, const std::vector<T>& host,
                    const Emit& emit, bool with_raw) {
  if (name.find(o.only) == std::string::npos) return;
  DeviceBuffers<T> d(host);
  std::vector<T> back(host.size());
  const double range = finite_range(host);
  for (const double b : o.bounds) {
    for (const std::string& coder : o.coders) {
      if (coder == "huffman") emit(run_case<RelC<ncclz::Huffman>, AbsC<ncclz::Huffman>>(c, name, small, host, back, d, b, range));
      else if (coder == "adaptive") emit(run_case<RelC<ncclz::Adaptive>, AbsC<ncclz::Adaptive>>(c, name, small, host, back, d, b, range));
      else if (coder == "zero_run") emit(run_case<RelC<ncclz::ZeroRun>, AbsC<ncclz::ZeroRun>>(c, name, small, host, back, d, b, range));
      else emit(run_case<RelFL, AbsFL>(c, name, small, host, back, d, b, range));
    }
  }
  if (with_raw) emit(run_case<RelRaw, AbsRaw>(c, name + "[raw]", small, host, back, d, o.bounds.front(), range));
}

/// bench_input_of in each element type (a translation unit each).
void bench_input(const Context& c, const Options& o, const std::string& name, bool small, const std::vector<float>& host,
                 const Emit& emit, bool with_raw = false);
void bench_input(const Context& c, const Options& o, const std::string& name, bool small, const std::vector<double>& host,
                 const Emit& emit, bool with_raw = false);
void bench_input(const Context& c, const Options& o, const std::string& name, bool small, const std::vector<__half>& host,
                 const Emit& emit, bool with_raw = false);
void bench_input(const Context& c, const Options& o, const std::string& name, bool small,
                 const std::vector<__nv_bfloat16>& host, const Emit& emit, bool with_raw = false);

/// --lossless DIR (lossless.cu).
int bench_lossless(const Context& c, const std::string& dir, const std::vector<std::string>& coders);

}  // namespace ncclz_bench::codec_bench
