// JSON text for the benchmarks' --json output, without a JSON library: strings, numbers
// (non-finite ones as null), objects built key by key, arrays.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace ncclz::bench {

inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char u[8];
      std::snprintf(u, sizeof u, "\\u%04x", c);
      out += u;
    } else out += c;
  }
  return out + '"';
}

inline std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char b[40];
  std::snprintf(b, sizeof b, "%.10g", x);
  return b;
}

class json_object {
 public:
  json_object& add(std::string_view key, std::string_view value) { return raw(key, json_string(value)); }
  json_object& add(std::string_view key, const char* value) { return raw(key, json_string(value)); }
  json_object& add(std::string_view key, double value) { return raw(key, json_number(value)); }
  json_object& add(std::string_view key, bool value) { return raw(key, value ? "true" : "false"); }
  json_object& raw(std::string_view key, std::string_view json) {
    text_ += text_.empty() ? '{' : ',';
    text_ += json_string(key);
    text_ += ':';
    text_ += json;
    return *this;
  }
  [[nodiscard]] std::string str() const { return text_.empty() ? "{}" : text_ + "}"; }

 private:
  std::string text_;
};

template <class Range, class F>
std::string json_array(const Range& items, F to_json) {
  std::string out = "[";
  for (const auto& x : items) {
    if (out.size() > 1) out += ',';
    out += to_json(x);
  }
  return out + ']';
}

}  // namespace ncclz::bench
