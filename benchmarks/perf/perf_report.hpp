// ncclz-perf's output, made on rank 0 from what every rank reported: nccl-tests' text table,
// one JSON object per row (--json) and CSV (-F). Plain C++ so the host tests check it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "../json_text.hpp"
#include "collectives.hpp"
#include "perf_options.hpp"

namespace ncclz::perf {

struct timing {
  double median_us = 0, min_us = 0, max_us = 0;
};

/// Median, least and greatest of per-iteration times given in ms.
inline timing summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {1e3 * ms[ms.size() / 2], 1e3 * ms.front(), 1e3 * ms.back()};
}

/// The phases Communicator::phase_times reports (with --phases), in rank_report's order.
inline constexpr const char* kPhases[] = {"codec", "size exchange", "host gap", "transfer"};

/// --route-check: the library's route may be this much slower than the better one before a row
/// is flagged (run-to-run noise of a median over interleaved iterations is a few percent).
inline constexpr double kRouteCheckMargin = 1.05;

/// --route-check: in each iteration the library's time over the better of NCCL's and the forced
/// compressed route's in the same iteration (the three ran back to back), and the median of
/// these ratios. Paired by iteration, a slow stretch of the machine, which on the emulated
/// cluster can triple one call's time, weighs on all three alike.
inline double paired_of_best(const std::vector<double>& nccl_ms, const std::vector<double>& ncclz_ms,
                             const std::vector<double>& forced_ms) {
  std::vector<double> ratios(ncclz_ms.size());
  for (std::size_t i = 0; i < ratios.size(); ++i) ratios[i] = ncclz_ms[i] / std::min(nccl_ms[i], forced_ms[i]);
  std::sort(ratios.begin(), ratios.end());
  return ratios.empty() ? 1.0 : ratios[ratios.size() / 2];
}

/// One rank's side of a row, gathered to rank 0 as doubles.
struct rank_report {
  double parts, size_waits, size_wait_ms, bytes_sent, chunk_bytes, ratio, error_bound, fallback;
  double autotune_ncclz_ms, autotune_nccl_ms;  ///< the library's probes of this size class (0: not tuned)
  double wrong_nccl, wrong_ncclz, max_err_nccl, max_err_ncclz;
  double phase_ms[std::size(kPhases)];  ///< of the last timed call, with --phases
};

/// One collective and size: both libraries' times and every rank's report.
struct row {
  row_shape shape;
  std::size_t element_bytes;
  const char* type;  ///< element<T>::name
  timing nccl, ncclz;
  std::vector<rank_report> ranks;
  std::string coder;
  std::string schedule;
  std::optional<timing> forced;  ///< --route-check: the compressed route with the autotuner off
  double paired_of_best = 1.0;   ///< --route-check: paired_of_best of the iterations' times

  [[nodiscard]] std::uint64_t bytes() const { return shape.count() * element_bytes; }
  [[nodiscard]] double algbw(const timing& t) const { return static_cast<double>(bytes()) / (t.median_us * 1e3); }
  [[nodiscard]] double busbw(const timing& t) const { return algbw(t) * bus_factor(shape.collective, shape.nranks); }
  [[nodiscard]] double speedup() const { return nccl.median_us / ncclz.median_us; }
  /// --route-check: the library's time over the better of NCCL's and the forced compressed
  /// route's (paired_of_best).
  [[nodiscard]] double of_best() const { return forced ? paired_of_best : 1.0; }
  [[nodiscard]] bool slower_than_best() const { return of_best() > kRouteCheckMargin; }
  [[nodiscard]] bool fallback() const {
    return std::any_of(ranks.begin(), ranks.end(), [](const rank_report& r) { return r.fallback != 0; });
  }
  template <class F>
  [[nodiscard]] double sum(F field) const {
    double s = 0;
    for (const auto& r : ranks) s += r.*field;
    return s;
  }
  template <class F>
  [[nodiscard]] double largest(F field) const {
    double m = 0;
    for (const auto& r : ranks) m = std::max(m, r.*field);
    return m;
  }
  /// Mean compression ratio over the ranks that compressed.
  [[nodiscard]] double ratio() const {
    double s = 0;
    int k = 0;
    for (const auto& r : ranks)
      if (r.ratio > 0) s += r.ratio, ++k;
    return k ? s / k : 0;
  }
};

/// The text table of nccl-tests, NCCL's columns then ncclz's, on rank 0.
class report {
 public:
  explicit report(const options& o) : o_(o) {}

  void print_header(std::FILE* out, schedule::collective c) const {
    std::fprintf(out, "#\n# %s\n", schedule::name(c));
    std::fprintf(out, "# %12s %12s %8s %6s %5s | %-34s | %-34s |\n", "", "", "", "", "", "               NCCL",
                 "               ncclz");
    std::fprintf(out, "# %12s %12s %8s %6s %5s | %10s %7s %7s %7s | %10s %7s %7s %7s | %7s %7s %9s %9s %-12s %s%s\n", "size",
                 "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong",
                 "speedup", "ratio", "max_err", "bound", "coder", "fallback",
                 o_.route_check ? " | forced(us) of_best" : "");
    std::fprintf(out, "# %12s %12s %8s %6s %5s | %10s %7s %7s %7s | %10s %7s %7s %7s |\n", "(B)", "(elements)", "", "", "",
                 "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  }

  void print_row(std::FILE* out, const row& r) const {
    const auto wrong = [&](double w) { return o_.check ? std::to_string(static_cast<std::uint64_t>(w)) : std::string("N/A"); };
    char ratio[16] = "-", bound[16] = "-", max_err[16] = "-";
    if (o_.check) std::snprintf(max_err, sizeof max_err, "%.2e", r.largest(&rank_report::max_err_ncclz));
    if (!r.fallback()) {
      std::snprintf(ratio, sizeof ratio, "%.2f", r.ratio());
      std::snprintf(bound, sizeof bound, "%.2e", r.largest(&rank_report::error_bound));
    }
    std::fprintf(out,
                 "  %12llu %12llu %8s %6s %5d | %10.1f %7.2f %7.2f %7s | %10.1f %7.2f %7.2f %7s | %7.2f %7s %9s %9s %-12s %s",
                 static_cast<unsigned long long>(r.bytes()), static_cast<unsigned long long>(r.shape.count()), r.type,
                 redop(r), root(r), r.nccl.median_us, r.algbw(r.nccl), r.busbw(r.nccl),
                 wrong(r.sum(&rank_report::wrong_nccl)).c_str(), r.ncclz.median_us, r.algbw(r.ncclz), r.busbw(r.ncclz),
                 wrong(r.sum(&rank_report::wrong_ncclz)).c_str(), r.speedup(), ratio, max_err, bound, r.coder.c_str(),
                 r.fallback() ? "yes" : "no");
    if (r.forced) {
      std::fprintf(out, "       | %10.1f %7.3f%s", r.forced->median_us, r.of_best(), r.slower_than_best() ? " SLOWER" : "");
    }
    std::fprintf(out, "\n");
    std::fflush(out);
  }

  /// -F: one line naming the columns, then print_csv_row's lines.
  static void print_csv_header(std::FILE* out) {
    std::fprintf(out,
                 "collective,size_B,count,type,redop,root,nccl_time_us,nccl_algbw_GBps,nccl_busbw_GBps,nccl_wrong,"
                 "ncclz_time_us,ncclz_algbw_GBps,ncclz_busbw_GBps,ncclz_wrong,speedup,ratio,max_err,bound,coder,"
                 "schedule,fallback\n");
  }

  void print_csv_row(std::FILE* out, const row& r) const {
    const auto wrong = [&](double w) { return o_.check ? std::to_string(static_cast<std::uint64_t>(w)) : std::string(); };
    std::fprintf(out, "%s,%llu,%llu,%s,%s,%d,%.3f,%.4f,%.4f,%s,%.3f,%.4f,%.4f,%s,%.4f,%.4f,%s,%s,%s,%s,%d\n",
                 schedule::name(r.shape.collective), static_cast<unsigned long long>(r.bytes()),
                 static_cast<unsigned long long>(r.shape.count()), r.type, redop(r), root(r), r.nccl.median_us,
                 r.algbw(r.nccl), r.busbw(r.nccl), wrong(r.sum(&rank_report::wrong_nccl)).c_str(), r.ncclz.median_us,
                 r.algbw(r.ncclz), r.busbw(r.ncclz), wrong(r.sum(&rank_report::wrong_ncclz)).c_str(), r.speedup(),
                 r.fallback() ? 0.0 : r.ratio(), o_.check ? number(r.largest(&rank_report::max_err_ncclz)).c_str() : "",
                 r.fallback() ? "" : number(r.largest(&rank_report::error_bound)).c_str(), r.coder.c_str(),
                 r.schedule.c_str(), r.fallback() ? 1 : 0);
    std::fflush(out);
  }

  [[nodiscard]] std::string row_json(const row& r) const {
    using bench::json_array;
    using bench::json_number;
    using bench::json_object;
    const std::string ranks = json_array(r.ranks, [&](const rank_report& k) {
      return json_object()
          .add("rank", static_cast<double>(&k - r.ranks.data()))
          .add("parts", k.parts)
          .add("size_waits", k.size_waits)
          .add("size_wait_ms", k.size_wait_ms)
          .add("bytes_sent", k.bytes_sent)
          .add("chunk_bytes", k.chunk_bytes)
          .add("ratio", k.ratio)
          .add("error_bound", k.error_bound)
          .add("fallback", k.fallback != 0)
          .add("autotune_ncclz_ms", k.autotune_ncclz_ms)
          .add("autotune_nccl_ms", k.autotune_nccl_ms)
          .raw("wrong_nccl", o_.check ? json_number(k.wrong_nccl) : "null")
          .raw("wrong_ncclz", o_.check ? json_number(k.wrong_ncclz) : "null")
          .raw("phase_ms", o_.phases ? phases_json(k) : "null")
          .str();
    });
    return json_object()
        .add("record", "row")
        .add("collective", schedule::name(r.shape.collective))
        .add("size", static_cast<double>(r.bytes()))
        .add("count", static_cast<double>(r.shape.count()))
        .add("type", r.type)
        .add("redop", redop(r))
        .add("root", static_cast<double>(root(r)))
        .raw("nccl", timing_json(r, r.nccl, r.sum(&rank_report::wrong_nccl), r.largest(&rank_report::max_err_nccl)))
        .raw("ncclz", timing_json(r, r.ncclz, r.sum(&rank_report::wrong_ncclz), r.largest(&rank_report::max_err_ncclz)))
        .add("speedup", r.speedup())
        .add("ratio", r.ratio())
        .add("bound", r.largest(&rank_report::error_bound))
        .add("bound_mode", name(o_.mode))
        .add("requested_bound", o_.bound)
        .add("coder", r.coder)
        .add("schedule", r.schedule)
        .add("fallback", r.fallback())
        .raw("forced", r.forced ? timing_json(r, *r.forced, std::nan(""), std::nan("")) : "null")  // not checked
        .raw("of_best", r.forced ? json_number(r.of_best()) : "null")
        .raw("ranks", ranks)
        .str();
  }

  /// nccl-tests' closing lines, ncclz's next to NCCL's, and the summary record of --json.
  /// Returns the number of wrong elements.
  double print_summary(std::FILE* out, const std::vector<row>& rows, std::FILE* json) const {
    using bench::json_number;
    using bench::json_object;
    if (rows.empty()) {
      std::fprintf(out, "# No rows: every size is below one element per rank (raise -b and -e)\n");
      return 0;
    }
    double nccl_busbw = 0, ncclz_busbw = 0, log_speedup = 0, wrong_nccl = 0, wrong_ncclz = 0;
    for (const row& r : rows) {
      nccl_busbw += r.busbw(r.nccl) / static_cast<double>(rows.size());
      ncclz_busbw += r.busbw(r.ncclz) / static_cast<double>(rows.size());
      log_speedup += std::log(r.speedup()) / static_cast<double>(rows.size());
      wrong_nccl += r.sum(&rank_report::wrong_nccl);
      wrong_ncclz += r.sum(&rank_report::wrong_ncclz);
    }
    const double geomean = std::exp(log_speedup);
    std::fprintf(out, "#\n");
    if (o_.check) {
      std::fprintf(out, "# Out of bounds values : NCCL %.0f, ncclz %.0f %s\n", wrong_nccl, wrong_ncclz,
                   wrong_nccl + wrong_ncclz == 0 ? "OK" : "FAILED");
    }
    std::fprintf(out, "# Avg bus bandwidth    : NCCL %.3f GB/s, ncclz %.3f GB/s\n", nccl_busbw, ncclz_busbw);
    std::fprintf(out, "# Geomean speedup      : %.2fx over %zu rows\n", geomean, rows.size());
    const auto checked = std::count_if(rows.begin(), rows.end(), [](const row& r) { return r.forced.has_value(); });
    const auto slower = std::count_if(rows.begin(), rows.end(), [](const row& r) { return r.slower_than_best(); });
    double worst = 0;
    for (const row& r : rows) worst = std::max(worst, r.of_best());
    if (checked > 0) {
      std::fprintf(out, "# Route check          : %td of %td rows more than %.0f%% slower than the better route (worst %.3f) %s\n",
                   slower, checked, 100 * (kRouteCheckMargin - 1), worst, slower == 0 ? "OK" : "SLOWER");
    }
    std::fprintf(out, "#\n");
    if (json) {
      std::fprintf(json, "%s\n",
                   json_object()
                       .add("record", "summary")
                       .add("rows", static_cast<double>(rows.size()))
                       .add("nccl_avg_busbw", nccl_busbw)
                       .add("ncclz_avg_busbw", ncclz_busbw)
                       .add("geomean_speedup", geomean)
                       .raw("route_check_slower", checked > 0 ? json_number(static_cast<double>(slower)) : "null")
                       .raw("route_check_worst", checked > 0 ? json_number(worst) : "null")
                       .raw("wrong_nccl", o_.check ? json_number(wrong_nccl) : "null")
                       .raw("wrong_ncclz", o_.check ? json_number(wrong_ncclz) : "null")
                       .str()
                       .c_str());
    }
    return wrong_nccl + wrong_ncclz;
  }

 private:
  const char* redop(const row& r) const { return reduces(r.shape.collective) ? name(o_.op) : "none"; }
  int root(const row& r) const { return has_root(r.shape.collective) ? o_.root : -1; }
  static std::string number(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", x);
    return b;
  }
  static std::string phases_json(const rank_report& k) {
    bench::json_object phases;
    for (std::size_t i = 0; i < std::size(kPhases); ++i) phases.add(kPhases[i], k.phase_ms[i]);
    return phases.str();
  }
  std::string timing_json(const row& r, const timing& t, double wrong, double max_err) const {
    return bench::json_object()
        .add("time_us", t.median_us)
        .add("min_us", t.min_us)
        .add("max_us", t.max_us)
        .add("algbw", r.algbw(t))
        .add("busbw", r.busbw(t))
        .raw("wrong", o_.check ? bench::json_number(wrong) : "null")
        .raw("max_err", o_.check ? bench::json_number(max_err) : "null")
        .str();
  }

  const options& o_;
};

}  // namespace ncclz::perf
