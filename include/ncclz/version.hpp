// ncclz's version, for code that must tell releases apart at compile time:
//
//   #if NCCLZ_VERSION >= 100  // 0.1.0 and later
//
// Kept equal to project(version:) in meson.build (a host test checks it); CMakeLists.txt reads its
// version from meson.build.
#pragma once

#define NCCLZ_VERSION_MAJOR 0
#define NCCLZ_VERSION_MINOR 1
#define NCCLZ_VERSION_PATCH 0
/// MAJOR * 10000 + MINOR * 100 + PATCH, for one comparison.
#define NCCLZ_VERSION (NCCLZ_VERSION_MAJOR * 10000 + NCCLZ_VERSION_MINOR * 100 + NCCLZ_VERSION_PATCH)
