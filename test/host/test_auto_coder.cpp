// Host tests of the default coder, EntropyCoder<Auto>: Codec<> is RelBound + Auto; what a
// Communicator may run with it (coder_choice.hpp) is FixedLength and Adaptive, dispatched by the
// call's coder; where nothing is timed it codes as Adaptive, byte for byte, with every quantizer
// (FixedRate too), and its chunks say so.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ncclz/codec.hpp"
#include "ncclz/detail/comm/coder_choice.hpp"
#include "ncclz/host/reference_codec.hpp"
#include "test_support.hpp"

namespace {
using ncclz::Auto;
using ncclz::Codec;
using ncclz::EntropyCoder;
using ncclz::Quantizer;
using ncclz::detail::comm::chooses_coder_v;
using ncclz::detail::comm::coders_of;
using ncclz::detail::comm::with_coder;

using AutoCoder = EntropyCoder<Auto>;
using AdaptiveCoder = EntropyCoder<ncclz::Adaptive>;

// The default, and the policy checks, at compile time.
static_assert(std::is_same_v<Codec<>::coder, AutoCoder>);
static_assert(std::is_same_v<Codec<>::quantizer, Quantizer<ncclz::RelBound>>);
static_assert(std::is_same_v<Codec<Quantizer<ncclz::FixedRate<8>>>::coder, AutoCoder>);
static_assert(ncclz::EntropyCoderPolicy<AutoCoder>);
static_assert(std::is_same_v<AutoCoder::strategy, Auto>);
static_assert(AutoCoder::id == ncclz::coder_id::adaptive, "an untimed Auto chunk is an Adaptive chunk");
static_assert(AutoCoder::codes_tiles && AutoCoder::tries_fixed_length == AdaptiveCoder::tries_fixed_length &&
              AutoCoder::tries_huffman == AdaptiveCoder::tries_huffman && AutoCoder::tries_zero_run == AdaptiveCoder::tries_zero_run);
static_assert(chooses_coder_v<Codec<>>);
static_assert(!chooses_coder_v<Codec<Quantizer<ncclz::RelBound>, EntropyCoder<ncclz::FixedLength>>>);
static_assert(!chooses_coder_v<Codec<Quantizer<ncclz::RelBound>, AdaptiveCoder>>);
// The routes: FixedLength first (it wins a tie), then Adaptive; a fixed coder has one.
static_assert(coders_of<Codec<>>().count == 2 && coders_of<Codec<>>().ids[0] == ncclz::coder_id::fixed_length &&
              coders_of<Codec<>>().ids[1] == ncclz::coder_id::adaptive);
static_assert(coders_of<Codec<Quantizer<ncclz::AbsBound>, EntropyCoder<ncclz::Raw>>>().count == 1 &&
              coders_of<Codec<Quantizer<ncclz::AbsBound>, EntropyCoder<ncclz::Raw>>>().ids[0] == ncclz::coder_id::raw);

template <class C>
std::string coder_of(ncclz::coder_id id) {
  return with_coder<C>(id, []<class Concrete>() {
    static_assert(!chooses_coder_v<Concrete>, "dispatch ends at a coder that codes");
    static_assert(std::is_same_v<Concrete, Codec<typename C::quantizer, typename Concrete::coder>>);
    return std::string(Concrete::coder::name);
  });
}
}  // namespace

TEST_CASE("EntropyCoder<Auto>: a call runs the coder its route chose; a fixed coder always its own", "[auto_coder]") {
  CHECK(coder_of<Codec<>>(ncclz::coder_id::fixed_length) == "fixed_length");
  CHECK(coder_of<Codec<>>(ncclz::coder_id::adaptive) == "adaptive");
  CHECK(coder_of<Codec<Quantizer<ncclz::FixedRate<4>>>>(ncclz::coder_id::fixed_length) == "fixed_length");
  using FL = Codec<Quantizer<ncclz::RelBound>, EntropyCoder<ncclz::FixedLength>>;
  CHECK(coder_of<FL>(ncclz::coder_id::fixed_length) == "fixed_length");
  CHECK(coder_of<FL>(ncclz::coder_id::adaptive) == "fixed_length");
  CHECK(std::string(AutoCoder::name) == "auto");
  CHECK(std::string(ncclz::detail::comm::coder_name<Codec<>>(ncclz::coder_id::adaptive)) == "adaptive");
  CHECK(std::string(ncclz::detail::comm::coder_name<Codec<>>(ncclz::coder_id::fixed_length)) == "fixed_length");
  CHECK(std::string(ncclz::detail::comm::coder_name<FL>(ncclz::coder_id::adaptive)) == "fixed_length");
}

TEMPLATE_TEST_CASE("EntropyCoder<Auto> without timing codes as Adaptive, byte for byte", "[auto_coder]", float, double) {
  using T = TestType;
  const std::uint64_t seed = ncclz_test::fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 g(seed);
  const auto same_bytes = [&]<class Q>(const std::vector<T>& in, double bound) {
    using AutoCodec = Codec<Q, AutoCoder>;
    using AdaptiveCodec = Codec<Q, AdaptiveCoder>;
    const std::vector<std::byte> a = ncclz::host::compress<AutoCodec>(std::span<const T>(in), bound);
    const std::vector<std::byte> b = ncclz::host::compress<AdaptiveCodec>(std::span<const T>(in), bound);
    CHECK(a == b);
    REQUIRE(a.size() >= sizeof(ncclz::format::chunk_header));
    ncclz::format::chunk_header h;
    std::memcpy(&h, a.data(), sizeof h);
    CHECK(h.coder == static_cast<std::uint8_t>(ncclz::coder_id::adaptive));
    std::vector<T> out(in.size()), out_adaptive(in.size());
    ncclz::host::decompress<AutoCodec>(std::span<const std::byte>(a), std::span<T>(out));
    ncclz::host::decompress<AdaptiveCodec>(std::span<const std::byte>(a), std::span<T>(out_adaptive));
    for (std::size_t i = 0; i < in.size(); ++i) REQUIRE(ncclz_test::bits_of(out[i]) == ncclz_test::bits_of(out_adaptive[i]));
  };
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{8193}, std::size_t{40000}}) {
    CAPTURE(n);
    std::vector<T> smooth = ncclz_test::wavy_field<T>(n, 50.0, g);
    ncclz_test::add_outliers(smooth, 0.01, g);
    same_bytes.template operator()<Quantizer<ncclz::RelBound>>(smooth, 1e-3);
    same_bytes.template operator()<Quantizer<ncclz::AbsBound>>(smooth, 1e-2);
    same_bytes.template operator()<Quantizer<ncclz::FixedRate<8>>>(smooth, 8);
    same_bytes.template operator()<Quantizer<ncclz::FixedRate<4>>>(smooth, 4);
  }
}
