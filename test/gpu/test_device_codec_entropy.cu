// The device codec against the host reference codec, bit-exact both ways, with the huffman,
// zero_run and adaptive coders (test_device_codec.cu: the others).
#include "device_codec_support.hpp"

TEMPLATE_TEST_CASE("device codec is bit-exact with the host reference", "[gpu][codec]", (combo<RelHuf, float>),
                   (combo<RelHuf, double>), (combo<RelHuf, __half>), (combo<RelHuf, __nv_bfloat16>),
                   (combo<AbsHuf, float>), (combo<RelAd, float>), (combo<RelAd, double>), (combo<RelAd, __half>),
                   (combo<RelAd, __nv_bfloat16>), (combo<AbsAd, float>), (combo<AbsAd, __half>), (combo<RelZR, float>),
                   (combo<RelZR, double>), (combo<RelZR, __half>), (combo<RelZR, __nv_bfloat16>), (combo<AbsZR, float>),
                   (combo<RelAdNoCheck, float>), (combo<RelAdNoCheck, double>)) {
  require_bit_exact_with_host<typename TestType::codec, typename TestType::value>();
}
