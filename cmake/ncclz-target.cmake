# Defines the target ncclz::ncclz and what it carries. Included by CMakeLists.txt (ncclz in the
# source tree: add_subdirectory, FetchContent) and by the installed ncclzConfig.cmake (find_package),
# with NCCLZ_INCLUDE_DIR set to the folder that holds ncclz/ncclz.cuh.
#
# ncclz is header-only: linking ncclz::ncclz adds the include path, the CUDA runtime and NCCL, and
# for CUDA sources the flags ncclz needs: C++20 (passed as -std=c++20: CMake 3.25 rejects
# cuda_std_20 with nvcc 13) and --expt-relaxed-constexpr. Host-only C++ sources get the include
# path (the toolkit's too, for cuda_fp16.h) and C++20. Kernels need compute capability 8.0+.
include_guard(GLOBAL)

find_package(CUDAToolkit 12.0 REQUIRED)
find_library(NCCLZ_NCCL_LIBRARY NAMES nccl
  HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}
  PATH_SUFFIXES lib lib64
  DOC "NCCL's library, for ncclz::ncclz")
find_path(NCCLZ_NCCL_INCLUDE_DIR NAMES nccl.h
  HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include
  DOC "The folder that holds nccl.h, for ncclz::ncclz")
if(NOT NCCLZ_NCCL_LIBRARY OR NOT NCCLZ_NCCL_INCLUDE_DIR)
  message(FATAL_ERROR "ncclz needs NCCL (libnccl and nccl.h): found library '${NCCLZ_NCCL_LIBRARY}', "
                      "header folder '${NCCLZ_NCCL_INCLUDE_DIR}'. Set NCCL_ROOT to NCCL's install prefix.")
endif()

# The architectures the project builds for, where it says them: each must be 8.0 or newer.
# (ncclz/ncclz.cuh checks each target's architectures again at compile time.)
if(DEFINED CMAKE_CUDA_ARCHITECTURES)
  foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if(arch MATCHES "^all")
      message(FATAL_ERROR "ncclz: CMAKE_CUDA_ARCHITECTURES=${arch} includes GPUs older than compute capability 8.0, "
                          "which ncclz's kernels do not support: list 80 or newer (e.g. 90).")
    elseif(arch MATCHES "^([0-9]+)" AND CMAKE_MATCH_1 LESS 80)
      message(FATAL_ERROR "ncclz: CMAKE_CUDA_ARCHITECTURES contains ${arch} (CMake's default is nvcc's oldest); "
                          "ncclz's kernels need compute capability 8.0 or newer: set it to 80 or newer (e.g. 90).")
    endif()
  endforeach()
endif()

if(NCCLZ_IMPORTED)
  add_library(ncclz::ncclz INTERFACE IMPORTED)
  set(_ncclz_target ncclz::ncclz)
else()
  add_library(ncclz INTERFACE)
  add_library(ncclz::ncclz ALIAS ncclz)
  set(_ncclz_target ncclz)
endif()
target_include_directories(${_ncclz_target} INTERFACE "${NCCLZ_INCLUDE_DIR}" "${NCCLZ_NCCL_INCLUDE_DIR}")
target_compile_features(${_ncclz_target} INTERFACE cxx_std_20)
target_compile_options(${_ncclz_target} INTERFACE
  "$<$<COMPILE_LANGUAGE:CUDA>:-std=c++20;--expt-relaxed-constexpr>")
target_link_libraries(${_ncclz_target} INTERFACE CUDA::cudart "${NCCLZ_NCCL_LIBRARY}")
unset(_ncclz_target)
