// ncclz-perf's inputs, buffer shapes and result check. Plain C++ so they are tested without a GPU.
//
// Every rank can compute every rank's input element by element (input_source::value), so each
// rank checks its own result against a float64 reference of what the collective must give, with
// no extra communication. The tolerances are the ones test/cluster/test_collectives.cu uses:
// ncclz's promised bound (call_info::error_bound), plus one ulp of the result for reductions,
// whose result is decoded from summed codes; NCCL's own float reductions get the rounding error of
// a sum of n values, everything else must be exact.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "ncclz/error.hpp"
#include "ncclz/schedule/schedule.hpp"
#include "collectives.hpp"
#include "perf_options.hpp"

namespace ncclz::perf {

/// The element types ncclz-perf runs, as seen from the float64 reference: how a double rounds to
/// T, T's unit in the last place at a value, and T's machine epsilon. ncclz_perf.cu specializes it
/// for __half and __nv_bfloat16 (detail::narrow_element), whose headers need CUDA.
template <class T>
struct element;

namespace detail {
template <class T>
struct ieee_element {
  static double round(double x) { return static_cast<double>(static_cast<T>(x)); }
  static double to_double(T x) { return static_cast<double>(x); }
  static T from_double(double x) { return static_cast<T>(x); }
  /// The spacing above T(x), as test_collectives measures it.
  static double ulp(double x) {
    const T rounded = static_cast<T>(x);
    return std::fabs(static_cast<double>(std::nextafter(rounded, std::numeric_limits<T>::infinity())) -
                     static_cast<double>(rounded));
  }
  static constexpr double epsilon = std::numeric_limits<T>::epsilon();
};

/// element<T> of a 16-bit float type (__half: 10 mantissa bits, __nv_bfloat16: 7), from its
/// conversions to and from float (`Convert::from_float`, `Convert::to_float`); the spacing above a
/// value comes from its bits, as std::nextafter gives it for float.
template <class T, class Convert, int mantissa_bits>
struct narrow_element {
  static_assert(sizeof(T) == 2, "narrow_element: a 16-bit type");
  static double to_double(T x) { return Convert::to_float(x); }
  static T from_double(double x) { return Convert::from_float(static_cast<float>(x)); }
  static double round(double x) { return to_double(from_double(x)); }
  static double ulp(double x) {
    const T rounded = from_double(x);
    std::uint16_t bits;
    std::memcpy(&bits, static_cast<const void*>(&rounded), sizeof bits);  // void*: T may have private members
    // Toward +inf: the next magnitude up for positives, down for negatives; from +-0 the
    // smallest subnormal.
    const std::uint16_t up = (bits & 0x7fff) == 0 ? 1 : (bits & 0x8000) ? bits - 1 : bits + 1;
    T next;
    std::memcpy(static_cast<void*>(&next), &up, sizeof next);
    return std::fabs(to_double(next) - to_double(rounded));
  }
  static constexpr double epsilon = 1.0 / (1 << mantissa_bits);
};
}  // namespace detail

template <>
struct element<float> : detail::ieee_element<float> {
  static constexpr const char* name = "float";
};
template <>
struct element<double> : detail::ieee_element<double> {
  static constexpr const char* name = "double";
};

/// The real fields of `path` (a .f32 or .f64 file, or a folder of them, in name order), as one
/// vector. Throws invalid_argument when there is nothing to read.
inline std::vector<double> load_fields(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  const auto is_field = [](const fs::path& p) { return p.extension() == ".f32" || p.extension() == ".f64"; };
  if (fs::is_directory(path)) {
    for (const auto& e : fs::directory_iterator(path))
      if (e.is_regular_file() && is_field(e.path())) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) ncclz::detail::throw_invalid("ncclz-perf", "--data " + path + ": no .f32 or .f64 files there");
  } else if (fs::is_regular_file(path) && is_field(path)) {
    files.push_back(path);
  } else {
    ncclz::detail::throw_invalid("ncclz-perf", "--data " + path + ": not a folder or a .f32/.f64 file");
  }
  std::vector<double> all;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (f.extension() == ".f32") {
      float x;
      while (in.read(reinterpret_cast<char*>(&x), sizeof x)) all.push_back(x);
    } else {
      double x;
      while (in.read(reinterpret_cast<char*>(&x), sizeof x)) all.push_back(x);
    }
  }
  if (all.empty()) ncclz::detail::throw_invalid("ncclz-perf", "--data " + path + ": the files are empty");
  return all;
}

/// Every rank's input, computable on every rank: the real fields tiled from another offset on
/// each rank, or a generated field (smooth: a wave per rank; noise: uniform in [-1, 1);
/// gradient: small heavy-tailed values, a Gaussian times a log-normal scale).
class input_source {
 public:
  static input_source from_fields(std::vector<double> fields) {
    input_source s;
    s.fields_ = std::move(fields);
    return s;
  }
  static input_source generated(const std::string& kind) {
    input_source s;
    if (kind == "noise") s.kind_ = generator::noise;
    else if (kind == "gradient") s.kind_ = generator::gradient;
    else if (kind != "smooth") ncclz::detail::throw_invalid("ncclz-perf", "--gen " + kind + ": smooth, noise or gradient");
    return s;
  }

  [[nodiscard]] double value(int rank, std::uint64_t i) const {
    if (!fields_.empty()) return fields_[(static_cast<std::uint64_t>(rank) * kRankOffset + i) % fields_.size()];
    const double x = static_cast<double>(i);
    switch (kind_) {
      case generator::smooth: return 20.0 * std::sin(x * 7e-4 + rank) * std::cos(x * 3e-6) + 0.5 * rank;
      case generator::noise: return 2.0 * uniform(rank, i, 0) - 1.0;
      case generator::gradient: return 1e-3 * gaussian(rank, i, 0) * std::exp(1.5 * gaussian(rank, i, 2));
    }
    return 0;
  }

  [[nodiscard]] std::string describe() const {
    if (!fields_.empty()) {
      return "real fields (" + std::to_string(fields_.size()) + " values, tiled from rank * " + std::to_string(kRankOffset) + ")";
    }
    return std::string("generated ") + (kind_ == generator::smooth ? "smooth" : kind_ == generator::noise ? "noise" : "gradient");
  }

 private:
  enum class generator { smooth, noise, gradient };
  static constexpr std::uint64_t kRankOffset = 104729;  // a prime: ranks start in different fields

  static std::uint64_t mix(std::uint64_t x) {  // splitmix64
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
  /// Uniform in (0, 1], a function of (rank, i, stream).
  static double uniform(int rank, std::uint64_t i, unsigned stream) {
    const std::uint64_t h = mix(i * 4 + stream + (static_cast<std::uint64_t>(rank) << 56));
    return static_cast<double>((h >> 11) + 1) * 0x1.0p-53;
  }
  static double gaussian(int rank, std::uint64_t i, unsigned stream) {  // Box-Muller
    return std::sqrt(-2.0 * std::log(uniform(rank, i, stream))) * std::cos(2 * std::numbers::pi * uniform(rank, i, stream + 1));
  }

  std::vector<double> fields_;
  generator kind_ = generator::smooth;
};

/// Elements outside their tolerance and the largest finite error seen. NaN must stay NaN and an
/// infinity the same infinity, as IEEE arithmetic gives them.
struct tally {
  std::uint64_t wrong = 0;
  double max_err = 0;

  void add(double got, double want, double tolerance) {
    bool ok;
    if (std::isnan(want)) ok = std::isnan(got);
    else if (std::isinf(want)) ok = got == want;
    else {
      const double err = std::fabs(got - want);
      ok = err <= tolerance;
      max_err = std::max(max_err, err);
    }
    wrong += !ok;
  }
  void merge(const tally& o) {
    wrong += o.wrong;
    max_err = std::max(max_err, o.max_err);
  }
};

/// What element j of rank `me`'s result must be, from the T-rounded inputs (collectives/*.hpp).
template <class T>
expected_value expected(const row_shape& s, const input_source& in, reduction op, int me, int root, std::uint64_t j) {
  const auto x = [&](int r, std::uint64_t i) { return element<T>::round(in.value(r, i)); };
  return with_collective_test(s.collective, [&]<class Test>() { return Test::expected(s, x, op, me, root, j); });
}

/// Elements of this rank's result that the check covers: all of it, except off the root of reduce.
inline std::uint64_t checked_count(const row_shape& s, int me, int root) {
  return s.collective == schedule::collective::reduce && me != root ? 0 : s.recv_count;
}

/// Tolerance of NCCL's own result (and of ncclz's fallback, which is NCCL): a float reduction of
/// n values rounds n - 1 times, each by at most half an ulp of the partial sum, so n epsilon times
/// the sum of magnitudes bounds it (min and max do not round); a copy must be exact.
template <class T>
double nccl_tolerance(const row_shape& s, reduction op, const expected_value& e) {
  return reduces(s.collective) && op == reduction::sum ? s.nranks * element<T>::epsilon * e.magnitude : 0.0;
}

/// Tolerance of ncclz's compressed result: the promised bound, plus one ulp of the result for a
/// reduction (T(code) and its product with the step each round once), as test_collectives checks.
template <class T>
double ncclz_tolerance(const row_shape& s, double bound, const expected_value& e) {
  return reduces(s.collective) ? bound + element<T>::ulp(e.value) : bound;
}

struct check_result {
  tally nccl, ncclz;
};

/// At most this many threads' parts, of at least 65536 of the n values each.
inline unsigned parts_for(std::uint64_t n, unsigned threads) {
  return static_cast<unsigned>(std::clamp<std::uint64_t>(n / 65536, 1, std::max(threads, 1u)));
}

/// Runs work(t, begin, end) for the parts [begin, end) of [0, n), t = 0..parts-1, on `parts`
/// host threads (the calling one included).
template <class Work>
void for_each_part(std::uint64_t n, unsigned parts, Work&& work) {
  const auto part = [&](unsigned t) { work(t, n * t / parts, n * (t + 1) / parts); };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < parts; ++t) pool.emplace_back(part, t);
  part(0);
  for (auto& th : pool) th.join();
}

/// Checks this rank's NCCL and ncclz results in one pass over the reference, on `threads` host
/// threads. `ncclz_bound` is the promised bound, or negative when ncclz fell back to NCCL.
template <class T>
check_result check_results(const row_shape& s, const input_source& in, reduction op, int me, int root,
                           const T* got_nccl, const T* got_ncclz, double ncclz_bound, unsigned threads) {
  const std::uint64_t n = checked_count(s, me, root);
  threads = parts_for(n, threads);
  std::vector<check_result> part(threads);
  const auto x = [&](int r, std::uint64_t i) { return element<T>::round(in.value(r, i)); };
  with_collective_test(s.collective, [&]<class Test>() {
    for_each_part(n, threads, [&](unsigned t, std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t j = begin; j < end; ++j) {
        const expected_value e = Test::expected(s, x, op, me, root, j);
        const double nccl_tol = nccl_tolerance<T>(s, op, e);
        part[t].nccl.add(element<T>::to_double(got_nccl[j]), e.value, nccl_tol);
        part[t].ncclz.add(element<T>::to_double(got_ncclz[j]), e.value,
                          ncclz_bound < 0 ? nccl_tol : ncclz_tolerance<T>(s, ncclz_bound, e));
      }
    });
  });
  check_result all;
  for (const auto& p : part) {
    all.nccl.merge(p.nccl);
    all.ncclz.merge(p.ncclz);
  }
  return all;
}

}  // namespace ncclz::perf
