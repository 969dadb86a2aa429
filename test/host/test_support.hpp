// Helpers the host tests share.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ncclz/error.hpp"
#include "ncclz/format.hpp"  // the element types and their conversions

namespace ncclz_test {

/// A fresh seed per run, or NCCLZ_TEST_SEED's to reproduce a failure (the tests print the seed).
inline std::uint64_t fresh_seed() {
  if (const char* s = std::getenv("NCCLZ_TEST_SEED")) return std::strtoull(s, nullptr, 0);
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

template <class T>
using bits_t = std::conditional_t<sizeof(T) == 2, std::uint16_t, std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;

/// The bits of an element, for bit-exact comparisons (NaN payloads included).
template <class T>
bits_t<T> bits_of(T x) {
  bits_t<T> b;
  std::memcpy(&b, &x, sizeof x);
  return b;
}

template <class T>
T from_bits(bits_t<T> b) {
  T x;
  std::memcpy(static_cast<void*>(&x), &b, sizeof x);  // void*: __half has no public members to copy
  return x;
}

/// An element widened to double (exact for every element type), and a double rounded to T
/// (through the compute type for the 16-bit types: any nearby value of T is what tests need).
template <class T>
double to_double(T x) {
  return static_cast<double>(ncclz::to_compute(x));
}
template <class T>
T from_double(double v) {
  return ncclz::from_compute<T>(static_cast<ncclz::compute_t<T>>(v));
}

/// std::numeric_limits for every element type: the standard one for float and double, the IEEE
/// binary16 and bfloat16 values (from their bits) for __half and __nv_bfloat16, which the
/// standard library does not know.
template <class T>
struct limits : std::numeric_limits<T> {};

template <class T, int Digits, std::uint16_t Inf, std::uint16_t Max, std::uint16_t MinNormal>
struct limits16 {
  static constexpr int digits = Digits;
  static T infinity() { return from_bits<T>(Inf); }
  static T quiet_NaN() { return from_bits<T>(Inf | (1u << (Digits - 2))); }
  static T signaling_NaN() { return from_bits<T>(Inf | (1u << (Digits - 3))); }
  static T max() { return from_bits<T>(Max); }
  static T lowest() { return from_bits<T>(Max | 0x8000u); }
  static T min() { return from_bits<T>(MinNormal); }
  static T denorm_min() { return from_bits<T>(1); }
};
template <>
struct limits<__half> : limits16<__half, 11, 0x7C00, 0x7BFF, 0x0400> {};
template <>
struct limits<__nv_bfloat16> : limits16<__nv_bfloat16, 8, 0x7F80, 0x7F7F, 0x0080> {};

/// A value of type V at byte `at` of `bytes`, and the same written back (for patching streams).
template <class V>
V load(const std::vector<std::byte>& bytes, std::uint64_t at) {
  V v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}
template <class V>
void store(std::vector<std::byte>& bytes, std::uint64_t at, V v) {
  std::memcpy(bytes.data() + at, &v, sizeof v);
}

/// Runs `decode` on a heap copy of exactly `bytes`'s size (so an over-read is reported under
/// -fsanitize=address). Returns "" on success, the message of a format_error otherwise; any other
/// exception escapes and fails the test.
template <class Decode>
std::string format_error_of(const std::vector<std::byte>& bytes, Decode&& decode) {
  const std::vector<std::byte> exact(bytes.begin(), bytes.end());
  try {
    decode(std::span<const std::byte>(exact.data(), exact.size()));
  } catch (const ncclz::format_error& e) {
    const std::string what = e.what();
    return what.empty() ? std::string("<format_error with an empty message>") : what;
  }
  return "";
}

}  // namespace ncclz_test
