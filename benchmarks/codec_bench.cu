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
// Integrity) and without (Integrity<NoChecksums>), interleaved run by run (A B B A ...), each
// with its own chunk buffer and half the runs with the buffers swapped, and prints both and the
// checksums' cost in time (chk%: checked time / unchecked time - 1).
//
// --dtype runs every f32 input (fields, their concatenation, smooth, noise) as each listed element
// type, converted (rounded to nearest) on the host; rows of a 16-bit type are named input_f16 or
// input_bf16. smooth_f64 (generated in double) always runs.
//
// Sizes are MiB (2^20 B); throughput is GB/s (1e9 B/s) of input bytes, and its percent is of the
// copy roofline (bytes read + written per second), so 100% is out of reach for any codec.
#include <ncclz/ncclz.cuh>

#include "codec_bench/cases.cuh"
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

using namespace ncclz_bench::codec_bench;
using ncclz::bench::json_number;
using ncclz::bench::json_string;

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

/// f32 values rounded to T (to nearest, once).
template <class T>
std::vector<T> converted(const std::vector<float>& v) {
  std::vector<T> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = ncclz::from_compute<T>(v[i]);
  return out;
}

/// Runs an f32 input as each element type of --dtype.
void bench_dtypes(const Context& c, const Options& o, const std::string& name, bool small, const std::vector<float>& host,
                  const Emit& emit, bool with_raw = false) {
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
