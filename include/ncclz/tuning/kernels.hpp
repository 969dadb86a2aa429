// The codec kernels' launch policy per coder, as CUB's tuning policies: what each kernel asks of
// an SM. What was measured to choose each value is in docs/design.md, "Tuning constants".
#pragma once

namespace ncclz::tuning {

/// The encode kernel's launch bounds for coder `Coder` and element type T: the blocks an SM must
/// hold at once, which caps the registers a thread may use (256 threads a block).
template <class Coder, class T>
struct encode_kernel_policy {
  /// Entropy coders take fixed_length's 64 registers (4 blocks, some spills): the fourth block
  /// hides more of the codebook's one-thread steps than the spills cost; doubles need 3.
  static constexpr int min_blocks = Coder::tries_huffman    ? (sizeof(T) <= 4 ? 4 : 3)
                                    : Coder::tries_zero_run ? 3
                                                            : (sizeof(T) <= 4 ? 4 : 3);
};

}  // namespace ncclz::tuning
