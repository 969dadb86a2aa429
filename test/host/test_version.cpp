// NCCLZ_VERSION_{MAJOR,MINOR,PATCH} (ncclz/version.hpp) equal project(version:) in meson.build,
// which the build passes in as NCCLZ_PROJECT_VERSION; a release bumps both or this fails.
#include <ncclz/version.hpp>

#include <cstdio>
#include <string>

int main() {
  const std::string header = std::to_string(NCCLZ_VERSION_MAJOR) + "." + std::to_string(NCCLZ_VERSION_MINOR) + "." +
                             std::to_string(NCCLZ_VERSION_PATCH);
  const std::string project = NCCLZ_PROJECT_VERSION;
  const bool combined = NCCLZ_VERSION == NCCLZ_VERSION_MAJOR * 10000 + NCCLZ_VERSION_MINOR * 100 + NCCLZ_VERSION_PATCH;
  std::printf("ncclz/version.hpp says %s, meson.build says %s\n", header.c_str(), project.c_str());
  if (header != project || !combined) {
    std::printf("FAIL: ncclz/version.hpp and meson.build's project version differ\n");
    return 1;
  }
  return 0;
}
