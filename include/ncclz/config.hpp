// Macros and the ABI namespace shared by every ncclz header.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#  define NCCLZ_HOST_DEVICE __host__ __device__
#  define NCCLZ_DEVICE __device__
#else
#  define NCCLZ_HOST_DEVICE
#  define NCCLZ_DEVICE
#endif

#define NCCLZ_PP_CAT_(a, b) a##b
#define NCCLZ_PP_CAT(a, b) NCCLZ_PP_CAT_(a, b)
#define NCCLZ_PP_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, N, ...) N
#define NCCLZ_PP_NARGS(...) NCCLZ_PP_NARGS_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define NCCLZ_ARCH_NS_1(a) NCCLZ_PP_CAT(sm, a)
#define NCCLZ_ARCH_NS_2(a, ...) NCCLZ_PP_CAT(NCCLZ_ARCH_NS_1(a), NCCLZ_PP_CAT(_, NCCLZ_ARCH_NS_1(__VA_ARGS__)))
#define NCCLZ_ARCH_NS_3(a, ...) NCCLZ_PP_CAT(NCCLZ_ARCH_NS_1(a), NCCLZ_PP_CAT(_, NCCLZ_ARCH_NS_2(__VA_ARGS__)))
#define NCCLZ_ARCH_NS_4(a, ...) NCCLZ_PP_CAT(NCCLZ_ARCH_NS_1(a), NCCLZ_PP_CAT(_, NCCLZ_ARCH_NS_3(__VA_ARGS__)))
#define NCCLZ_ARCH_NS_5(a, ...) NCCLZ_PP_CAT(NCCLZ_ARCH_NS_1(a), NCCLZ_PP_CAT(_, NCCLZ_ARCH_NS_4(__VA_ARGS__)))
#define NCCLZ_ARCH_NS_6(a, ...) NCCLZ_PP_CAT(NCCLZ_ARCH_NS_1(a), NCCLZ_PP_CAT(_, NCCLZ_ARCH_NS_5(__VA_ARGS__)))
#define NCCLZ_ARCH_NS_7(a, ...) NCCLZ_PP_CAT(NCCLZ_ARCH_NS_1(a), NCCLZ_PP_CAT(_, NCCLZ_ARCH_NS_6(__VA_ARGS__)))
#define NCCLZ_ARCH_NS_8(a, ...) NCCLZ_PP_CAT(NCCLZ_ARCH_NS_1(a), NCCLZ_PP_CAT(_, NCCLZ_ARCH_NS_7(__VA_ARGS__)))
#define NCCLZ_ARCH_NS(...) NCCLZ_PP_CAT(NCCLZ_ARCH_NS_, NCCLZ_PP_NARGS(__VA_ARGS__))(__VA_ARGS__)

// Kernels are instantiated in every translation unit that includes ncclz. Two units built for
// different -arch lists must not share a kernel symbol (the linker would keep one of them), so
// everything that holds device code lives in an inline namespace named after the architecture
// list, as CUB does (cub/util_namespace.cuh).
#if defined(__CUDA_ARCH_LIST__)
#  define NCCLZ_KERNEL_NAMESPACE NCCLZ_ARCH_NS(__CUDA_ARCH_LIST__)
#else
#  define NCCLZ_KERNEL_NAMESPACE host_only
#endif

#define NCCLZ_BEGIN_KERNEL_NAMESPACE namespace ncclz { inline namespace NCCLZ_KERNEL_NAMESPACE {
#define NCCLZ_END_KERNEL_NAMESPACE } }
