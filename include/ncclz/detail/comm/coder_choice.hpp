// Which entropy coder a Communicator's compressed route runs. A Codec with a fixed coder runs that
// one. With EntropyCoder<Auto> the route autotuner times FixedLength and Adaptive and picks one
// per collective, element size and size class (router.cuh); every rank picks the same, so the
// schedules code and decode with the call's coder (context::coder). Plain C++: the compile-time
// answers are checked on the host.
#pragma once

#include <array>
#include <type_traits>

#include "ncclz/codec.hpp"
#include "ncclz/format.hpp"

namespace ncclz::detail::comm {

/// Whether the route autotuner chooses CodecT's coder (EntropyCoder<Auto>).
template <class CodecT>
inline constexpr bool chooses_coder_v = std::is_same_v<typename CodecT::coder::strategy, Auto>;

/// The coders of a Communicator's compressed routes: one, or FixedLength and Adaptive, the
/// faster-coding first (it wins a tie of the probes).
struct coder_set {
  std::array<coder_id, 2> ids;
  int count;
};
template <class CodecT>
constexpr coder_set coders_of() {
  if constexpr (chooses_coder_v<CodecT>) return {{coder_id::fixed_length, coder_id::adaptive}, 2};
  else return {{CodecT::coder::id, CodecT::coder::id}, 1};
}

/// f.template operator()<C>() with C the codec that codes with `coder`: CodecT itself, or for
/// EntropyCoder<Auto> the FixedLength or Adaptive codec of its quantizer and integrity policy. Spelled out rather than
/// through an alias template, which nvcc's host stubs keep as written in the kernels' template
/// arguments.
template <class CodecT, class F>
decltype(auto) with_coder(coder_id coder, F&& f) {
  if constexpr (chooses_coder_v<CodecT>) {
    using Q = typename CodecT::quantizer;
    using I = typename CodecT::integrity;
    if (coder == coder_id::fixed_length) return f.template operator()<Codec<Q, EntropyCoder<FixedLength>, I>>();
    return f.template operator()<Codec<Q, EntropyCoder<Adaptive>, I>>();
  } else {
    return f.template operator()<CodecT>();
  }
}

/// The name of coder `coder` of CodecT's routes (call_info::coder).
template <class CodecT>
constexpr const char* coder_name(coder_id coder) {
  if constexpr (chooses_coder_v<CodecT>) return coder == coder_id::fixed_length ? FixedLength::name : Adaptive::name;
  else return CodecT::coder::name;
}

}  // namespace ncclz::detail::comm
