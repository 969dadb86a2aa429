// Helpers the host tests share.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <type_traits>

namespace ncclz_test {

/// A fresh seed per run, or NCCLZ_TEST_SEED's to reproduce a failure (the tests print the seed).
inline std::uint64_t fresh_seed() {
  if (const char* s = std::getenv("NCCLZ_TEST_SEED")) return std::strtoull(s, nullptr, 0);
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

template <class T>
using bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

/// The bits of a float or double, for bit-exact comparisons (NaN payloads included).
template <class T>
bits_t<T> bits_of(T x) {
  bits_t<T> b;
  std::memcpy(&b, &x, sizeof x);
  return b;
}

}  // namespace ncclz_test
