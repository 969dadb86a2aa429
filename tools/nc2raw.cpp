// nc2raw: convert one netCDF variable into a raw little-endian binary file
// (SDRBench convention: .f32 = float32, .f64 = float64, no header).
//
//   nc2raw IN.nc VAR OUT.{f32,f64} [--fill=min|keep|nan]
//
// VAR may name a variable inside a netCDF-4 group as "grp/sub/var".
//
// Supported source types: float, double, and the integer types
// byte/ubyte/short/ushort/int/uint (with scale_factor/add_offset applied and
// _Unsigned="true" honoured).  char, string, int64/uint64 and user-defined
// types are rejected.
//
// Fill handling.  A value is a "fill" if any of the following holds:
//   * it equals the variable's _FillValue or missing_value attribute
//     (compared in the variable's own type, before scaling; for attributes
//     with |a| >= 1e30 a relative tolerance of 1e-6 is also accepted, so a
//     double 1e36 attribute on a float variable still matches);
//   * the variable has no _FillValue attribute, is float/double, and the value
//     equals netCDF's default fill for that type (9.96921e36);
//   * it is NaN or +-Inf (a relative error bound is meaningless on those).
// --fill=min  (default) replaces fills with the minimum non-fill value,
// --fill=nan  writes NaN,
// --fill=keep writes the raw fill value unchanged (converted to the output type).
//
// Output: one line on stdout,
//   name dims count fills min max
// where "fills" is the number of fill values detected (replaced unless
// --fill=keep) and min/max describe the written file, ignoring NaN.
//
// Build: g++ -std=c++20 -O2 -Wall -Wextra -Wpedantic -o nc2raw nc2raw.cpp -lnetcdf

#include <netcdf.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& msg, int code = 1) {
    std::fprintf(stderr, "nc2raw: %s\n", msg.c_str());
    std::exit(code);
}

void check(int status, const std::string& what) {
    if (status != NC_NOERR) die(what + ": " + nc_strerror(status));
}

void usage(int code) {
    std::fprintf(code == 0 ? stdout : stderr,
                 "usage: nc2raw IN.nc VAR OUT.{f32,f64} [--fill=min|keep|nan]\n"
                 "  Writes variable VAR (any rank; float/double/integer with\n"
                 "  scale_factor/add_offset) as raw little-endian float32 (.f32)\n"
                 "  or float64 (.f64).  Fill values (_FillValue, missing_value,\n"
                 "  default netCDF fill, NaN/Inf) are replaced by the minimum of\n"
                 "  the non-fill values (min, default), written as NaN (nan), or\n"
                 "  left as they are (keep).\n"
                 "  Prints: name dims count fills min max\n");
    std::exit(code);
}

enum class FillMode { Min, Keep, NaN };

const char* type_name(nc_type t) {
    switch (t) {
        case NC_BYTE: return "byte";
        case NC_CHAR: return "char";
        case NC_SHORT: return "short";
        case NC_INT: return "int";
        case NC_FLOAT: return "float";
        case NC_DOUBLE: return "double";
        case NC_UBYTE: return "ubyte";
        case NC_USHORT: return "ushort";
        case NC_UINT: return "uint";
        case NC_INT64: return "int64";
        case NC_UINT64: return "uint64";
        case NC_STRING: return "string";
        default: return "user-defined";
    }
}

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Reads the native values and converts them to double.  The result is the
// *raw* (packed) value: scaling is applied later so fill comparison happens in
// the stored domain, as the CF conventions require.
template <typename T, typename GetFn>
std::vector<double> read_as(int ncid, int varid, std::size_t n, GetFn get, bool as_unsigned,
                            const std::string& what) {
    std::vector<T> buf(n);
    check(get(ncid, varid, buf.data()), what);
    std::vector<double> out(n);
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        for (std::size_t i = 0; i < n; ++i)
            out[i] = as_unsigned ? static_cast<double>(static_cast<U>(buf[i]))
                                 : static_cast<double>(buf[i]);
    } else {
        (void)as_unsigned;
        for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<double>(buf[i]);
    }
    return out;
}

// Attribute as a single double, if present and numeric.
bool get_num_att(int ncid, int varid, const char* name, double& value, const std::string& what) {
    nc_type t;
    std::size_t len;
    int st = nc_inq_att(ncid, varid, name, &t, &len);
    if (st == NC_ENOTATT) return false;
    check(st, what + ": attribute " + name);
    if (t == NC_CHAR || t == NC_STRING || t > NC_STRING || len < 1) {
        std::fprintf(stderr, "nc2raw: warning: %s: attribute %s is not numeric, ignored\n",
                     what.c_str(), name);
        return false;
    }
    std::vector<double> v(len);
    check(nc_get_att_double(ncid, varid, name, v.data()), what + ": attribute " + name);
    if (len > 1)
        std::fprintf(stderr, "nc2raw: warning: %s: attribute %s has %zu values, using the first\n",
                     what.c_str(), name, len);
    value = v[0];
    return true;
}

bool get_text_att(int ncid, int varid, const char* name, std::string& value) {
    nc_type t;
    std::size_t len;
    if (nc_inq_att(ncid, varid, name, &t, &len) != NC_NOERR || t != NC_CHAR) return false;
    value.assign(len, '\0');
    if (nc_get_att_text(ncid, varid, name, value.data()) != NC_NOERR) return false;
    while (!value.empty() && value.back() == '\0') value.pop_back();
    return true;
}

// Rounds an attribute value into the variable's own type, so that e.g. a
// double missing_value 1e36 on a float variable becomes float(1e36).
double to_var_type(double a, nc_type t, bool as_unsigned) {
    switch (t) {
        case NC_FLOAT: return static_cast<double>(static_cast<float>(a));
        case NC_DOUBLE: return a;
        case NC_BYTE:
            return as_unsigned ? static_cast<double>(static_cast<std::uint8_t>(static_cast<std::int8_t>(a)))
                               : static_cast<double>(static_cast<std::int8_t>(a));
        case NC_SHORT:
            return as_unsigned ? static_cast<double>(static_cast<std::uint16_t>(static_cast<std::int16_t>(a)))
                               : static_cast<double>(static_cast<std::int16_t>(a));
        case NC_INT:
            return as_unsigned ? static_cast<double>(static_cast<std::uint32_t>(static_cast<std::int32_t>(a)))
                               : static_cast<double>(static_cast<std::int32_t>(a));
        default: return a;  // ubyte/ushort/uint: nc_get_att_double is already exact
    }
}

std::string fmt(double v, bool f32) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g", v);
    return buf;
}

template <typename T>
void write_le(std::FILE* f, const std::vector<T>& v, const std::string& path) {
    if constexpr (std::endian::native == std::endian::big) {
        using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
        std::vector<U> tmp(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            U u = std::bit_cast<U>(v[i]);
            U r = 0;
            for (std::size_t b = 0; b < sizeof(U); ++b) r = (r << 8) | ((u >> (8 * b)) & 0xff);
            tmp[i] = r;
        }
        if (std::fwrite(tmp.data(), sizeof(U), tmp.size(), f) != tmp.size())
            die(path + ": write failed: " + std::strerror(errno));
    } else {
        if (std::fwrite(v.data(), sizeof(T), v.size(), f) != v.size())
            die(path + ": write failed: " + std::strerror(errno));
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> pos;
    FillMode mode = FillMode::Min;
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        if (a == "-h" || a == "--help") usage(0);
        if (a.starts_with("--fill=")) {
            std::string_view m = a.substr(7);
            if (m == "min") mode = FillMode::Min;
            else if (m == "keep") mode = FillMode::Keep;
            else if (m == "nan") mode = FillMode::NaN;
            else die("unknown fill mode '" + std::string(m) + "' (expected min, keep or nan)", 2);
        } else if (a.starts_with("-") && a.size() > 1) {
            die("unknown option '" + std::string(a) + "'", 2);
        } else {
            pos.emplace_back(a);
        }
    }
    if (pos.size() != 3) usage(2);
    const std::string& in_path = pos[0];
    const std::string& var_path = pos[1];
    const std::string& out_path = pos[2];

    bool out_f32;
    if (ends_with(out_path, ".f32")) out_f32 = true;
    else if (ends_with(out_path, ".f64")) out_f32 = false;
    else die("output file '" + out_path + "' must end in .f32 or .f64", 2);

    int ncid;
    check(nc_open(in_path.c_str(), NC_NOWRITE, &ncid), in_path);

    // Resolve "grp/sub/var".
    int gid = ncid;
    std::string var_name = var_path;
    for (std::size_t slash; (slash = var_name.find('/')) != std::string::npos;) {
        std::string grp = var_name.substr(0, slash);
        var_name = var_name.substr(slash + 1);
        if (grp.empty()) continue;
        int sub;
        check(nc_inq_grp_ncid(gid, grp.c_str(), &sub), in_path + ": group '" + grp + "'");
        gid = sub;
    }
    const std::string what = in_path + ": variable '" + var_path + "'";

    int varid;
    int st = nc_inq_varid(gid, var_name.c_str(), &varid);
    if (st == NC_ENOTVAR) {
        int nvars = 0;
        nc_inq_nvars(gid, &nvars);
        std::string names;
        for (int v = 0; v < nvars; ++v) {
            char nm[NC_MAX_NAME + 1];
            if (nc_inq_varname(gid, v, nm) == NC_NOERR) names += std::string(v ? ", " : "") + nm;
        }
        die(what + ": " + nc_strerror(st) + " (available: " + names + ")");
    }
    check(st, what);

    nc_type vtype;
    int ndims;
    check(nc_inq_var(gid, varid, nullptr, &vtype, &ndims, nullptr, nullptr), what);
    std::vector<int> dimids(static_cast<std::size_t>(ndims));
    check(nc_inq_vardimid(gid, varid, dimids.data()), what);
    std::size_t count = 1;
    std::string dims_str;
    for (int d = 0; d < ndims; ++d) {
        std::size_t len;
        check(nc_inq_dimlen(gid, dimids[static_cast<std::size_t>(d)], &len), what + ": dimension");
        if (len != 0 && count > std::numeric_limits<std::size_t>::max() / len)
            die(what + ": too many values");
        count *= len;
        dims_str += (d ? "x" : "") + std::to_string(len);
    }
    if (ndims == 0) dims_str = "1";
    if (count == 0) die(what + ": variable has no values (dims " + dims_str + ")");

    std::string unsigned_att;
    const bool as_unsigned = get_text_att(gid, varid, "_Unsigned", unsigned_att) &&
                             (unsigned_att == "true" || unsigned_att == "TRUE" || unsigned_att == "True");

    std::vector<double> raw;
    switch (vtype) {
        case NC_FLOAT: raw = read_as<float>(gid, varid, count, nc_get_var_float, false, what); break;
        case NC_DOUBLE: raw = read_as<double>(gid, varid, count, nc_get_var_double, false, what); break;
        case NC_BYTE: raw = read_as<signed char>(gid, varid, count, nc_get_var_schar, as_unsigned, what); break;
        case NC_UBYTE: raw = read_as<unsigned char>(gid, varid, count, nc_get_var_uchar, false, what); break;
        case NC_SHORT: raw = read_as<short>(gid, varid, count, nc_get_var_short, as_unsigned, what); break;
        case NC_USHORT: raw = read_as<unsigned short>(gid, varid, count, nc_get_var_ushort, false, what); break;
        case NC_INT: raw = read_as<int>(gid, varid, count, nc_get_var_int, as_unsigned, what); break;
        case NC_UINT: raw = read_as<unsigned int>(gid, varid, count, nc_get_var_uint, false, what); break;
        default:
            die(what + ": unsupported type " + type_name(vtype) +
                " (supported: float, double, byte, ubyte, short, ushort, int, uint)");
    }

    // Fill candidates, in the variable's own (packed) domain.
    std::vector<double> fills;
    double a;
    const bool has_fillvalue = get_num_att(gid, varid, "_FillValue", a, what);
    if (has_fillvalue) fills.push_back(to_var_type(a, vtype, as_unsigned));
    if (get_num_att(gid, varid, "missing_value", a, what)) fills.push_back(to_var_type(a, vtype, as_unsigned));
    if (!has_fillvalue && vtype == NC_FLOAT) fills.push_back(static_cast<double>(NC_FILL_FLOAT));
    if (!has_fillvalue && vtype == NC_DOUBLE) fills.push_back(NC_FILL_DOUBLE);

    double scale = 1.0, offset = 0.0;
    const bool has_scale = get_num_att(gid, varid, "scale_factor", scale, what);
    const bool has_offset = get_num_att(gid, varid, "add_offset", offset, what);
    check(nc_close(ncid), in_path);

    auto is_fill = [&](double x) {
        if (!std::isfinite(x)) return true;
        for (double f : fills) {
            if (x == f) return true;
            if (std::fabs(f) >= 1e30 && std::fabs(x - f) <= 1e-6 * std::fabs(f)) return true;
        }
        return false;
    };

    // Classify, unpack, and find the non-fill range.
    std::vector<std::uint8_t> fill_mask(count, 0);
    std::size_t nfill = 0;
    double vmin = std::numeric_limits<double>::infinity();
    double vmax = -vmin;
    for (std::size_t i = 0; i < count; ++i) {
        if (is_fill(raw[i])) {
            fill_mask[i] = 1;
            ++nfill;
            continue;
        }
        if (has_scale || has_offset) raw[i] = raw[i] * scale + offset;
        vmin = std::min(vmin, raw[i]);
        vmax = std::max(vmax, raw[i]);
    }
    if (nfill == count && mode == FillMode::Min)
        die(what + ": all " + std::to_string(count) + " values are fill values; use --fill=keep or --fill=nan");

    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t i = 0; i < count; ++i) {
        if (!fill_mask[i]) continue;
        if (mode == FillMode::Min) raw[i] = vmin;
        else if (mode == FillMode::NaN) raw[i] = nan;
        // Keep: raw value stays (not unpacked: fill values are not scaled).
    }

    // Convert to the output type; min/max are computed on what is written.
    const std::string tmp_path = out_path + ".tmp";
    std::FILE* f = std::fopen(tmp_path.c_str(), "wb");
    if (!f) die(tmp_path + ": cannot open for writing: " + std::strerror(errno));
    double omin = std::numeric_limits<double>::infinity(), omax = -omin;
    std::size_t overflow = 0;
    if (out_f32) {
        std::vector<float> out(count);
        for (std::size_t i = 0; i < count; ++i) {
            out[i] = static_cast<float>(raw[i]);
            if (std::isinf(out[i]) && std::isfinite(raw[i])) ++overflow;
            if (!std::isnan(out[i])) {
                omin = std::min(omin, static_cast<double>(out[i]));
                omax = std::max(omax, static_cast<double>(out[i]));
            }
        }
        write_le(f, out, tmp_path);
    } else {
        for (std::size_t i = 0; i < count; ++i) {
            if (!std::isnan(raw[i])) {
                omin = std::min(omin, raw[i]);
                omax = std::max(omax, raw[i]);
            }
        }
        write_le(f, raw, tmp_path);
    }
    if (std::fclose(f) != 0) die(tmp_path + ": close failed: " + std::strerror(errno));
    if (std::rename(tmp_path.c_str(), out_path.c_str()) != 0) {
        std::remove(tmp_path.c_str());
        die(out_path + ": rename failed: " + std::strerror(errno));
    }
    if (overflow)
        std::fprintf(stderr, "nc2raw: warning: %s: %zu values overflowed float32 and became Inf\n",
                     what.c_str(), overflow);

    std::printf("%s %s %zu %zu %s %s\n", var_path.c_str(), dims_str.c_str(), count, nfill,
                fmt(omin, out_f32).c_str(), fmt(omax, out_f32).c_str());
    return 0;
}
