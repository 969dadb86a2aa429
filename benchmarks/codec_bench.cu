// ncclz-codec-bench: ratio, throughput and error of the device codec on real and generated inputs,
// with a device-to-device copy as the memory roofline. It prints figures; it is not a test, but it
// exits 1 when a decoded value breaks its bound (or a decode fails), 77 without a GPU (as the tests
// and ncclz-perf do), 2 on any other error.
//
//   ncclz-codec-bench [--data DIR] [--bounds 1e-2,1e-3,1e-4] [--runs 20] [--size-mb 256]
//                     [--dtype f32,f16,bf16] [--coders fixed_length,huffman,zero_run,adaptive] [--seed S]
//                     [--checksums] [--json FILE] [--quick]
//   ncclz-codec-bench --lossless DIR [--runs 20]
//
// --coders runs every case with each listed EntropyCoder (default fixed_length); the `tiles`
// column says how many tiles of the chunk each mode took (raw/fixed_length/huffman/zero_run), so
// the Adaptive selector's choices are visible.
//
// --lossless DIR runs only the lossless codec (Quantizer<Lossless>, FixedLength) on every raw array
// DIR/*.f32, *.bf16, *.f16 (tools/make_gradients.py writes gradients so): ratio, throughput, and
// a bit-for-bit check of the round trip (exit 1 if a bit is lost).
//
// --checksums times every case's compress and decompress with tile checksums (the default
// Integrity) and without (Integrity<NoChecksums>), interleaved run by run (A B B A ...), and
// prints both and the checksums' cost in time (chk%: checked time / unchecked time - 1).
//
// --dtype runs every f32 input (fields, their concatenation, smooth, noise) as each listed element
// type, converted (rounded to nearest) on the host; rows of a 16-bit type are named input_f16 or
// input_bf16. smooth_f64 (generated in double) always runs.
//
// Sizes are MiB (2^20 B); throughput is GB/s (1e9 B/s) of input bytes, and its percent is of the
// copy roofline (bytes read + written per second), so 100% is out of reach for any codec.
#include <ncclz/ncclz.cuh>

#include "codec_kernels.cuh"  // the codecs' kernels, compiled once (src/kernels/)
#include "generated_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "json_text.hpp"

namespace {

using ncclz::bench::json_number;
using ncclz::bench::json_string;
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
  std::sort(ms.begin(), ms.end());
  const std::size_t m = ms.size();
  return {m % 2 ? ms[m / 2] : 0.5 * (ms[m / 2 - 1] + ms[m / 2]), ms.front()};
}

/// Times a() and b() on the stream, interleaved (A B, then B A, ...): kWarmups untimed rounds,
/// then c.runs timed ones; after() runs after each op, outside the timed region.
template <class OpA, class OpB, class After>
std::pair<Timing, Timing> time_ab(const Context& c, OpA&& a, OpB&& b, After&& after) {
  std::vector<double> ms[2];
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
  for (int i = 0; i < kWarmups + c.runs; ++i) {
    for (const int which : {i % 2, 1 - i % 2}) {
      const double t = once(which);
      if (i >= kWarmups) ms[which].push_back(t);
    }
  }
  Timing t[2];
  for (int k = 0; k < 2; ++k) {
    std::sort(ms[k].begin(), ms[k].end());
    const std::size_t m = ms[k].size();
    t[k] = {m % 2 ? ms[k][m / 2] : 0.5 * (ms[k][m / 2 - 1] + ms[k][m / 2]), ms[k].front()};
  }
  return {t[0], t[1]};
}

double gbps(std::size_t bytes, double ms) { return ms > 0 ? double(bytes) / (ms * 1e6) : 0.0; }

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
  if (c.checksums) {  // with and without tile checksums, interleaved; each its own chunk
    using RelU = Unchecked<RelC>;
    std::uint64_t sizes[2] = {0, 0};
    int which = 0;
    auto track_both = [&] {
      std::uint64_t v = 0;
      NCCLZ_CUDA_TRY(cudaMemcpy(&v, d.size, sizeof v, cudaMemcpyDeviceToHost));
      if (sizes[which] != 0 && v != sizes[which]) r.failure = "chunk size changed between runs (race?)";
      sizes[which] = v;
    };
    std::tie(r.comp, r.comp_unchecked) = time_ab(
        c, [&] { which = 0, ncclz::device::compress<RelC>(d.ws, d.ws_bytes, d.in, d.n, d.chunk, d.cap, d.size, rel, s); },
        [&] { which = 1, ncclz::device::compress<RelU>(d.ws, d.ws_bytes, d.in, d.n, d.chunk2, d.cap, d.size, rel, s); },
        track_both);
    r.chunk_bytes = sizes[0], r.unchecked_chunk_bytes = sizes[1];
    std::tie(r.decomp, r.decomp_unchecked) = time_ab(
        c, [&] { ncclz::device::decompress<RelC>(d.ws, d.ws_bytes, d.chunk, r.chunk_bytes, d.out, d.n, s); },
        [&] { ncclz::device::decompress<RelU>(d.ws, d.ws_bytes, d.chunk2, r.unchecked_chunk_bytes, d.out, d.n, s); }, [] {});
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

// --- output -------------------------------------------------------------------------------------

std::string cell(const Context& c, std::size_t bytes, Timing t) {
  if (t.med_ms <= 0) return "-";
  const double g = gbps(bytes, t.med_ms);
  char b[40];
  std::snprintf(b, sizeof b, "%.1f %3.0f%%", g, 100.0 * g / c.roof_gbps);
  return b;
}

void print_row(const Context& c, const Row& r) {
  const std::string name = r.input + (r.small ? "*" : "");
  const double ratio = r.chunk_bytes ? double(r.bytes) / double(r.chunk_bytes) : 0.0;
  char tiles[48];
  std::snprintf(tiles, sizeof tiles, "%llu/%llu/%llu/%llu", static_cast<unsigned long long>(r.modes[0]),
                static_cast<unsigned long long>(r.modes[1]), static_cast<unsigned long long>(r.modes[2]),
                static_cast<unsigned long long>(r.modes[3]));
  std::string checks;  // --checksums: the unchecked codec's throughput and the checksums' cost in time
  if (c.checksums) {
    const auto cost = [](Timing with, Timing without) {
      char b[16];
      std::snprintf(b, sizeof b, "%+.1f%%", without.med_ms > 0 ? 100.0 * (with.med_ms / without.med_ms - 1) : 0.0);
      return std::string(b);
    };
    for (const std::string& part : {cell(c, r.bytes, r.comp_unchecked), cell(c, r.bytes, r.decomp_unchecked), std::string("chk%"),
                                    cost(r.comp, r.comp_unchecked), cost(r.decomp, r.decomp_unchecked)}) {
      checks += ' ';
      checks += part;
    }
  }
  std::printf("%-34s %-12s %8.2f %7.0e %8.2f %13s %13s %13s %10.3e %10.3e %5llu %s%s\n", name.c_str(), r.coder.c_str(),
              r.bytes / kMiB, r.bound, ratio, cell(c, r.bytes, r.comp).c_str(), cell(c, r.bytes, r.decomp).c_str(),
              cell(c, r.bytes, r.comp_abs).c_str(), r.max_err, r.eb, static_cast<unsigned long long>(r.violations), tiles,
              checks.c_str());
  if (!r.failure.empty()) std::printf("  !! %s: %s\n", r.input.c_str(), r.failure.c_str());
  std::fflush(stdout);
}

std::string jtiming(const Context& c, const char* key, std::size_t bytes, Timing t) {
  const std::string k = std::string(", \"") + key;
  if (t.med_ms <= 0) return k + "_ms_median\": null";
  const double g = gbps(bytes, t.med_ms);
  return k + "_ms_median\": " + json_number(t.med_ms) + k + "_ms_min\": " + json_number(t.min_ms) + k +
         "_gbps_median\": " + json_number(g) + k + "_gbps_best\": " + json_number(gbps(bytes, t.min_ms)) + k +
         "_pct_roofline\": " + json_number(100.0 * g / c.roof_gbps);
}

void write_json(const std::string& path, const Context& c, const std::vector<std::string>& head, const std::vector<Row>& rows) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << "[\n";
  for (const std::string& h : head) f << "  " << h << ",\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    f << "  {\"kind\": \"codec\", \"input\": " << json_string(r.input) << ", \"small_input\": " << (r.small ? "true" : "false")
      << ", \"dtype\": " << json_string(r.dtype) << ", \"coder\": " << json_string(r.coder) << ", \"count\": " << r.count
      << ", \"bytes\": " << r.bytes << ", \"bound\": " << json_number(r.bound) << ", \"chunk_bytes\": " << r.chunk_bytes
      << ", \"abs_chunk_bytes\": " << r.abs_chunk_bytes
      << ", \"ratio\": " << json_number(r.chunk_bytes ? double(r.bytes) / double(r.chunk_bytes) : 0.0)
      << jtiming(c, "comp", r.bytes, r.comp) << jtiming(c, "decomp", r.bytes, r.decomp)
      << jtiming(c, "comp_abs", r.bytes, r.comp_abs) << jtiming(c, "comp_unchecked", r.bytes, r.comp_unchecked)
      << jtiming(c, "decomp_unchecked", r.bytes, r.decomp_unchecked) << ", \"unchecked_chunk_bytes\": " << r.unchecked_chunk_bytes
      << ", \"max_err\": " << json_number(r.max_err)
      << ", \"eb\": " << json_number(r.eb) << ", \"eb_host\": " << json_number(r.eb_host) << ", \"violations\": " << r.violations
      << ", \"tiles\": {\"raw\": " << r.modes[0] << ", \"fixed_length\": " << r.modes[1] << ", \"huffman\": " << r.modes[2]
      << ", \"zero_run\": " << r.modes[3] << "}"
      << ", \"failure\": " << (r.failure.empty() ? "null" : json_string(r.failure)) << "}" << (i + 1 < rows.size() ? ",\n" : "\n");
  }
  f << "]\n";
  if (!f) throw std::runtime_error("error writing " + path);
}

// --- inputs -------------------------------------------------------------------------------------

struct Field {
  std::string name;
  std::vector<float> values;
};

/// Every DIR/*.f32 named in DIR/MANIFEST.tsv (first column), or every DIR/*.f32 without one.
std::vector<Field> load_fields(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  if (std::ifstream m(fs::path(dir) / "MANIFEST.tsv"); m) {
    for (std::string line; std::getline(m, line);) {
      const std::string file = line.substr(0, line.find('\t'));
      if (!file.empty() && file != "file") files.push_back(file);
    }
  } else {
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".f32") files.push_back(e.path().filename().string());
    std::sort(files.begin(), files.end());
  }
  if (files.empty()) throw std::runtime_error("no .f32 fields in " + dir);
  std::vector<Field> out;
  for (const std::string& file : files) {
    const fs::path p = fs::path(dir) / file;
    const auto bytes = fs::file_size(p);
    if (bytes == 0 || bytes % sizeof(float) != 0) throw std::runtime_error(p.string() + ": size is not a positive multiple of 4");
    Field f{p.stem().string(), std::vector<float>(bytes / sizeof(float))};
    std::ifstream in(p, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(f.values.data()), static_cast<std::streamsize>(bytes)))
      throw std::runtime_error("cannot read " + p.string());
    out.push_back(std::move(f));
  }
  return out;
}

using ncclz_bench::make_noise;
using ncclz_bench::make_smooth;

// --- driver -------------------------------------------------------------------------------------

template <class T, class Emit>
void bench_input(const Context& c, const Options& o, const std::string& name, bool small, const std::vector<T>& host,
                 Emit&& emit, bool with_raw = false) {
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

/// f32 values rounded to T (to nearest, once).
template <class T>
std::vector<T> converted(const std::vector<float>& v) {
  std::vector<T> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = ncclz::from_compute<T>(v[i]);
  return out;
}

/// Runs an f32 input as each element type of --dtype.
template <class Emit>
void bench_dtypes(const Context& c, const Options& o, const std::string& name, bool small, const std::vector<float>& host,
                  Emit&& emit, bool with_raw = false) {
  for (const std::string& t : o.dtypes) {
    if (t == "f32") bench_input(c, o, name, small, host, emit, with_raw);
    else if (t == "f16") bench_input(c, o, name + "_f16", small, converted<__half>(host), emit, with_raw);
    else bench_input(c, o, name + "_bf16", small, converted<__nv_bfloat16>(host), emit, with_raw);
  }
}

[[noreturn]] void usage(int rc) {
  std::fprintf(rc ? stderr : stdout,
               "usage: ncclz-codec-bench [--data DIR] [--bounds 1e-2,1e-3,1e-4] [--runs 20] [--size-mb 256] [--seed S]\n"
               "                         [--dtype f32,f16,bf16] [--coders fixed_length,huffman,zero_run,adaptive] [--only NAME] [--json FILE]\n"
               "                         [--checksums] [--quick]\n"
               "       ncclz-codec-bench --lossless DIR [--runs N]   (lossless codec on DIR/*.f32, *.bf16, *.f16)\n"
               "  (--quick: --runs 5 --size-mb 64 --bounds 1e-3, explicit flags win; --data DIR: DIR/*.f32 named in\n"
               "  DIR/MANIFEST.tsv, or every DIR/*.f32; --dtype: element types the f32 inputs run as, default f32;\n"
               "  --coders: EntropyCoder of each case, default fixed_length; --only: the inputs whose name contains NAME;\n"
               "  --checksums: each case with and without tile checksums, interleaved, and their cost)\n");
  std::exit(rc);
}

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> parts;
  for (std::size_t p = 0; p <= list.size();) {
    const std::size_t q = std::min(list.find(',', p), list.size());
    parts.push_back(list.substr(p, q - p));
    p = q + 1;
  }
  return parts;
}

Options parse(int argc, char** argv) {
  Options o;
  bool runs = false, size = false, bounds = false, quick = false;
  for (int i = 1; i < argc; ++i) try {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(2);
      return argv[++i];
    };
    if (a == "--data") o.data = value();
    else if (a == "--lossless") o.lossless = value();
    else if (a == "--json") o.json = value();
    else if (a == "--only") o.only = value();
    else if (a == "--runs") o.runs = std::stoi(value()), runs = true;
    else if (a == "--size-mb") o.size_mb = std::stoul(value()), size = true;
    else if (a == "--seed") o.seed = std::stoull(value(), nullptr, 0), o.seed_given = true;
    else if (a == "--quick") quick = true;
    else if (a == "--checksums") o.checksums = true;
    else if (a == "--bounds") {
      o.bounds.clear();
      for (const std::string& b : split_commas(value())) o.bounds.push_back(std::stod(b));
      bounds = true;
    } else if (a == "--coders") {
      o.coders = split_commas(value());
      for (const std::string& t : o.coders)
        if (t != "fixed_length" && t != "huffman" && t != "zero_run" && t != "adaptive") usage(2);
    } else if (a == "--dtype") {
      o.dtypes = split_commas(value());
      for (const std::string& t : o.dtypes)
        if (t != "f32" && t != "f16" && t != "bf16") usage(2);
    } else if (a == "-h" || a == "--help") usage(0);
    else usage(2);
  } catch (const std::logic_error&) {  // std::stod & co. on a malformed number
    usage(2);
  }
  if (quick) {
    if (!runs) o.runs = 5;
    if (!size) o.size_mb = 64;
    if (!bounds) o.bounds = {1e-3};
  }
  if (o.runs < 1 || o.size_mb < 1 || o.bounds.empty()) usage(2);
  for (const double b : o.bounds)
    if (!(b > 0.0) || !std::isfinite(b)) throw std::runtime_error("bounds must be finite and > 0");
  return o;
}

// --- lossless (--lossless DIR) ------------------------------------------------------------------
template <class Strategy>
using LosslessC = ncclz::Codec<ncclz::Quantizer<ncclz::Lossless>, ncclz::EntropyCoder<Strategy>>;

struct LosslessTotal {
  std::uint64_t in = 0, out = 0;
};

/// One array: the lossless chunk's ratio, compress and decompress throughput, and whether the
/// decoded bits are the input's. Returns false when they are not.
template <class LosslessFL, class T>
bool lossless_row(const Context& c, const std::string& name, const std::vector<T>& host, LosslessTotal& total) {
  DeviceBuffers<T> b(host);
  const Timing comp = time_op(c, [&] {
    ncclz::device::compress<LosslessFL>(b.ws, b.ws_bytes, b.in, b.n, b.chunk, b.cap, b.size, 0.0, c.stream);
  }, [] {});
  std::uint64_t size = 0;
  NCCLZ_CUDA_TRY(cudaMemcpy(&size, b.size, sizeof size, cudaMemcpyDeviceToHost));
  NCCLZ_CUDA_TRY(cudaMemset(b.out, 0xFF, b.n * sizeof(T)));
  const Timing decomp = time_op(c, [&] {
    ncclz::device::decompress<LosslessFL>(b.ws, b.ws_bytes, b.chunk, size, b.out, b.n, c.stream);
  }, [] {});
  ncclz::device::throw_if_decode_failed(b.ws, c.stream);
  std::vector<T> out(b.n);
  NCCLZ_CUDA_TRY(cudaMemcpy(out.data(), b.out, b.n * sizeof(T), cudaMemcpyDeviceToHost));
  const bool same = std::memcmp(out.data(), host.data(), b.n * sizeof(T)) == 0;
  const std::size_t bytes = b.n * sizeof(T);
  std::printf("%-44s %-12s %-5s %10zu %8.3f %8.4f %12.1f %12.1f %s\n", name.c_str(), LosslessFL::coder::name,
              sizeof(T) == 4 ? "f32" : std::is_same_v<T, __half> ? "f16" : "bf16", b.n, bytes / kMiB,
              size ? double(bytes) / double(size) : 0.0, gbps(bytes, comp.med_ms), gbps(bytes, decomp.med_ms),
              same ? "yes" : "NO");
  total.in += bytes;
  total.out += size;
  return same;
}

/// --lossless DIR: every DIR/*.f32, *.bf16 and *.f16 (raw little-endian, tools/make_gradients.py),
/// through Codec<Quantizer<Lossless>, EntropyCoder<coder>> for each of --coders. Returns 1 if a round
/// trip lost a bit.
int bench_lossless(const Context& c, const std::string& dir, const std::vector<std::string>& coders) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext == ".f32" || ext == ".bf16" || ext == ".f16") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error("--lossless " + dir + ": no .f32, .bf16 or .f16 files");
  std::printf("# lossless: Quantizer<lossless>+EntropyCoder<coder>, median of %d runs; bit_exact: decoded bits == input\n",
              c.runs);
  std::printf("%-44s %-12s %-5s %10s %8s %8s %12s %12s %s\n", "input", "coder", "type", "values", "MiB", "ratio", "comp_GB/s",
              "decomp_GB/s", "bit_exact");
  bool ok = true;
  std::vector<std::vector<char>> contents;  // read once, coded by each coder
  for (const auto& path : files) {
    std::ifstream f(path, std::ios::binary);
    contents.emplace_back((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }
  for (const std::string& coder : coders) {
    LosslessTotal f32, b16, f16;
    for (std::size_t k = 0; k < files.size(); ++k) {
      const std::vector<char>& raw = contents[k];
      const auto load = [&]<class T>(T) {
        std::vector<T> v(raw.size() / sizeof(T));
        std::memcpy(static_cast<void*>(v.data()), raw.data(), v.size() * sizeof(T));
        return v;
      };
      const std::string ext = files[k].extension().string(), name = files[k].filename().string();
      const auto rows = [&]<class Codec>() {
        if (ext == ".f32") ok &= lossless_row<Codec>(c, name, load(0.0f), f32);
        else if (ext == ".bf16") ok &= lossless_row<Codec>(c, name, load(__nv_bfloat16{}), b16);
        else ok &= lossless_row<Codec>(c, name, load(__half{}), f16);
      };
      if (coder == "huffman") rows.template operator()<LosslessC<ncclz::Huffman>>();
      else if (coder == "adaptive") rows.template operator()<LosslessC<ncclz::Adaptive>>();
      else rows.template operator()<LosslessC<ncclz::FixedLength>>();
    }
    for (const auto& [label, t] : {std::pair{"all f32", f32}, std::pair{"all bf16", b16}, std::pair{"all f16", f16}}) {
      if (t.in) std::printf("%-44s %-12s ratio %.4f (%.3f MiB -> %.3f MiB)\n", label, coder.c_str(), double(t.in) / double(t.out),
                            t.in / kMiB, t.out / kMiB);
    }
  }
  std::printf("%s: lossless round trips %s\n", ok ? "OK" : "FAILED", ok ? "bit-exact" : "LOST BITS");
  return ok ? 0 : 1;
}

int run(int argc, char** argv) {
  Options o = parse(argc, argv);
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "ncclz-codec-bench: no CUDA device (%s): nothing to measure\n",
                 status != cudaSuccess ? cudaGetErrorString(status) : "none visible");
    return 77;
  }
  std::random_device rd;
  if (!o.seed_given) o.seed = (std::uint64_t{rd()} << 32) ^ rd();
  int dev = 0, rt = 0, drv = 0;
  cudaDeviceProp prop{};
  NCCLZ_CUDA_TRY(cudaGetDevice(&dev));
  NCCLZ_CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
  NCCLZ_CUDA_TRY(cudaRuntimeGetVersion(&rt));
  NCCLZ_CUDA_TRY(cudaDriverGetVersion(&drv));
  std::printf("# GPU %d: %s, %d SMs, cc %d.%d, %.1f GiB, L2 %.0f MiB | CUDA runtime %d.%d, driver %d.%d\n", dev, prop.name,
              prop.multiProcessorCount, prop.major, prop.minor, prop.totalGlobalMem / (kMiB * 1024), prop.l2CacheSize / kMiB,
              rt / 1000, rt % 1000 / 10, drv / 1000, drv % 1000 / 10);
  std::printf("# codec Quantizer<rel>+EntropyCoder<coder>; median of %d runs after %d warm-ups; large inputs %zu MiB; "
              "seed 0x%016llx\n", o.runs, kWarmups, o.size_mb, static_cast<unsigned long long>(o.seed));
  if (o.data.empty()) std::printf("# no --data: main job on the embedded default, generated inputs only (smooth, noise, smooth_f64)\n");

  Context c{nullptr, nullptr, nullptr, o.runs, 0.0, o.checksums};
  NCCLZ_CUDA_TRY(cudaStreamCreate(&c.stream));  // blocking: ordered with the plain cudaMemcpy/cudaMemset calls
  NCCLZ_CUDA_TRY(cudaEventCreate(&c.start));
  NCCLZ_CUDA_TRY(cudaEventCreate(&c.stop));

  // Roofline: a device-to-device copy of the large-input size, bytes read + written.
  const std::size_t big = o.size_mb * std::size_t(kMiB);
  void *src = nullptr, *dst = nullptr;
  NCCLZ_CUDA_TRY(cudaMalloc(&src, big));
  NCCLZ_CUDA_TRY(cudaMalloc(&dst, big));
  NCCLZ_CUDA_TRY(cudaMemset(src, 0x5A, big));
  NCCLZ_CUDA_TRY(cudaDeviceSynchronize());
  const Timing roof = time_op(c, [&] { NCCLZ_CUDA_TRY(cudaMemcpyAsync(dst, src, big, cudaMemcpyDeviceToDevice, c.stream)); }, [] {});
  NCCLZ_CUDA_TRY(cudaFree(src));
  NCCLZ_CUDA_TRY(cudaFree(dst));
  c.roof_gbps = gbps(2 * big, roof.med_ms);
  if (!o.lossless.empty()) return bench_lossless(c, o.lossless, o.coders);

  std::vector<Row> rows;
  auto emit = [&](Row r) { print_row(c, r), rows.push_back(std::move(r)); };
  std::printf("%-34s %-12s %8s %7s %8s %13s %13s %13s %10s %10s %5s %s%s\n", "input", "coder", "MiB", "bound", "ratio",
              "comp_GB/s", "decomp_GB/s", "comp_abs_GB/s", "max_err", "eb", "viol", "tiles(r/f/h/z)",
              o.checksums ? " comp_nochk decomp_nochk chk%(comp decomp)" : "");
  if (!o.data.empty()) {
    const std::vector<Field> fields = load_fields(o.data);
    std::size_t total = 0;
    for (const Field& f : fields) {
      bench_dtypes(c, o, f.name, true, f.values, emit);
      total += f.values.size();
    }
    std::vector<float> cat(big / sizeof(float));
    for (std::size_t i = 0; i < cat.size();)
      for (const Field& f : fields)
        for (std::size_t k = 0; k < f.values.size() && i < cat.size(); ++k) cat[i++] = f.values[k];
    char label[64];
    std::snprintf(label, sizeof label, "concat(%zu fields, tiled)x%.1f", fields.size(), double(cat.size()) / double(total));
    bench_dtypes(c, o, label, false, cat, emit);
  }
  bench_dtypes(c, o, "smooth", false, make_smooth<float>(big / sizeof(float), o.seed), emit);
  bench_dtypes(c, o, "noise", false, make_noise(big / sizeof(float), o.seed), emit, true);
  bench_input(c, o, "smooth_f64", false, make_smooth<double>(big / sizeof(double), o.seed), emit);

  std::printf("roofline: cudaMemcpy D2D %zu MiB: %.2f TB/s median, %.2f TB/s best (bytes read + written)\n", o.size_mb,
              c.roof_gbps / 1e3, gbps(2 * big, roof.min_ms) / 1e3);
  std::printf("# GB/s = input bytes / median time, %% of the roofline; comp_abs = AbsBound at eb = bound * host range "
              "(no range pass);\n# * = small input (L2-resident, launch-bound): read its ratio and error, not its throughput\n");
  std::uint64_t viol = 0;
  std::size_t failed = 0;
  for (const Row& r : rows) viol += r.violations, failed += !r.failure.empty();
  std::printf("%s: %llu bound violations, %zu failed cases in %zu rows\n", viol || failed ? "FAILED" : "OK",
              static_cast<unsigned long long>(viol), failed, rows.size());
  if (!o.json.empty()) {
    char dev_row[512], roof_row[256];
    std::snprintf(dev_row, sizeof dev_row,
                  "{\"kind\": \"device\", \"gpu\": %s, \"sms\": %d, \"cuda_runtime\": %d, \"driver\": %d, \"runs\": %d, "
                  "\"warmups\": %d, \"size_mib\": %zu, \"seed\": %llu}",
                  json_string(prop.name).c_str(), prop.multiProcessorCount, rt, drv, o.runs, kWarmups, o.size_mb,
                  static_cast<unsigned long long>(o.seed));
    std::snprintf(roof_row, sizeof roof_row,
                  "{\"kind\": \"roofline\", \"op\": \"cudaMemcpy D2D\", \"bytes\": %zu, \"ms_median\": %s, \"ms_min\": %s, "
                  "\"tbps_median\": %s}",
                  big, json_number(roof.med_ms).c_str(), json_number(roof.min_ms).c_str(), json_number(c.roof_gbps / 1e3).c_str());
    write_json(o.json, c, {dev_row, roof_row}, rows);
  }
  NCCLZ_CUDA_TRY(cudaEventDestroy(c.start));
  NCCLZ_CUDA_TRY(cudaEventDestroy(c.stop));
  NCCLZ_CUDA_TRY(cudaStreamDestroy(c.stream));
  return viol || failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ncclz-codec-bench: error: %s\n", e.what());
    return 2;
  }
}
