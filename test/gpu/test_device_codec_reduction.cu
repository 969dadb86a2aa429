// A reduction's chunk, encoded from quantize_kernel's codes and from values, is the same chunk.
#include "device_codec_support.hpp"


/// The chunk a collective sends a peer, made two ways: quantize_kernel's codes (and outliers'
/// values) encoded from memory (code_source), and the values quantized by the encoder as it reads
/// them (value_source<T, false>); both with the code limit of `ranks` ranks. Returns them.
template <class Codec, class T>
std::pair<std::vector<std::byte>, std::vector<std::byte>> reduction_chunks(const T* d_in, std::size_t n, double bound,
                                                                           std::uint32_t ranks) {
  namespace k = ncclz::device::detail;
  namespace dd = ncclz::device::detail;
  using Q = typename Codec::quantizer;
  // As the collectives size a reduction's chunk: no raw fallback bounds it.
  const std::size_t capacity = ncclz::format::max_fixed_chunk_bytes(n, sizeof(T)) + k::step_table_bytes<Q, T>(n);
  const dd::workspace_layout l = dd::layout_for(n);
  device_buffer<std::byte> ws(ncclz::device::workspace_bytes<T>(n)), chunk(capacity);
  device_buffer<std::int32_t> codes(n);
  device_buffer<T> outliers(n);
  device_buffer<double> block_max(ncclz::format::scale_count(n) + 1), step(1);
  device_buffer<std::uint64_t> size(1);
  dd::range_keys* range = dd::reset_compress_state(ws.ptr, n, nullptr);
  if constexpr (Q::needs_range) dd::launch_range(d_in, n, range, nullptr);
  k::block_scales scales{};
  if constexpr (ncclz::is_blockwise_v<Q>) scales = dd::launch_block_max(d_in, n, block_max.ptr, nullptr);
  auto* tile_words = reinterpret_cast<std::uint64_t*>(ws.ptr + l.tile_words);
  const unsigned tiles = std::max<unsigned>(static_cast<unsigned>(ncclz::format::tile_count(n)), 1u);
  const auto encoded = [&](auto kernel, auto source) {
    dd::reset_tile_words(ws.ptr, n, nullptr);
    NCCLZ_CUDA_TRY(cudaMemset(chunk.ptr, 0xA5, capacity));  // poison: every byte must be written
    dd::prefer_shared_memory(kernel);
    kernel<<<tiles, k::kTileThreads>>>(source, n, chunk.ptr, size.ptr, range, bound, ranks, tile_words, scales);
    NCCLZ_CUDA_TRY(cudaGetLastError());
    std::uint64_t bytes = 0;
    NCCLZ_CUDA_TRY(cudaMemcpy(&bytes, size.ptr, sizeof bytes, cudaMemcpyDeviceToHost));
    REQUIRE(bytes <= capacity);
    return download(chunk.ptr, bytes);
  };
  if (n) {
    k::quantize_kernel<Q, T><<<static_cast<unsigned>((n + 255) / 256), 256>>>(d_in, n, codes.ptr, outliers.ptr, range, bound,
                                                                               ranks, step.ptr, scales);
    NCCLZ_CUDA_TRY(cudaGetLastError());
  }
  auto from_codes = encoded(k::encode_kernel<Codec, T, k::code_source<T>>, k::code_source<T>{codes.ptr, outliers.ptr});
  auto from_values = encoded(k::encode_kernel<Codec, T, k::value_source<T, false>>, k::value_source<T, false>{d_in});
  return {std::move(from_codes), std::move(from_values)};
}

TEMPLATE_TEST_CASE("a reduction's chunk quantized by its encoder is the chunk of quantize_kernel's codes, byte for byte",
                   "[gpu][codec][reduction]", (combo<RelFL, float>), (combo<RelFL, __half>), (combo<AbsFL, double>),
                   (combo<RelHuf, float>), (combo<RelHuf, __nv_bfloat16>), (combo<RelZR, float>), (combo<RelAd, float>),
                   (combo<RelAd, double>), (combo<RelAd, __half>), (combo<RelAd, __nv_bfloat16>), (combo<AbsAd, float>),
                   (combo<Fixed8, float>), (combo<Fixed4, __nv_bfloat16>), (combo<Fixed8Ad, float>)) {
  using Codec = typename TestType::codec;
  using T = typename TestType::value;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const double bound = [] {
    if constexpr (ncclz::is_blockwise_v<typename Codec::quantizer>) return static_cast<double>(Codec::quantizer::bits);
    else return Codec::quantizer::needs_range ? 1e-3 : 1e-2;
  }();
  // 4 ranks: codes limited to 2^30 / 4, so the overflow shape has outliers a single codec would not.
  for (const std::size_t n : {std::size_t{0}, std::size_t{33}, std::size_t{8193}, std::size_t{3} * 8192 + 777}) {
    for (const shape s : {shape::smooth, shape::noisy, shape::special, shape::overflow, shape::sparse, shape::blocky}) {
      CAPTURE(n, name_of(s));
      const std::vector<T> in = make_input<T>(s, n + 1, rng);
      device_buffer<T> d_in(n + 1);
      upload(d_in.ptr, in);
      for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {  // 1: an element-aligned, not 16-byte-aligned start
        CAPTURE(offset);
        const auto [from_codes, from_values] = reduction_chunks<Codec>(d_in.ptr + offset, n, bound, 4);
        REQUIRE(from_values.size() == from_codes.size());
        const auto mismatch = std::mismatch(from_values.begin(), from_values.end(), from_codes.begin());
        INFO("first differing byte at " << (mismatch.first - from_values.begin()) << " of " << from_values.size());
        REQUIRE(mismatch.first == from_values.end());
      }
    }
  }
}
