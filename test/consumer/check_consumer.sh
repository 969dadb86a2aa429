#!/usr/bin/env bash
# check_consumer.sh ROUTE SOURCE_ROOT BUILD_ROOT PREFIX LIBDIR VERSION NVCC
# Builds consumer.cu in a project of its own, in a scratch folder, that uses ncclz by ROUTE and adds
# no flag that ncclz needs (it chooses only the GPU: compute capability 9.0):
#   meson_subproject    Meson; ncclz is subprojects/ncclz, a link to SOURCE_ROOT
#   pkg_config          nvcc with `pkg-config --cflags --libs ncclz`, after `meson install` of
#                       BUILD_ROOT (configured with PREFIX and LIBDIR) into the scratch folder
#   cmake_find_package  CMake find_package(ncclz VERSION) after `cmake --install` of SOURCE_ROOT
#                       (and, configure only, after `meson install` of BUILD_ROOT)
#   cmake_fetchcontent  CMake FetchContent from SOURCE_ROOT
# Then runs it: without a GPU it exits 77 (skipped), and building was the check.
set -eu
route=$1 src=$2 build=$3 prefix=$4 libdir=$5 version=$6 nvcc=$7
# The nvcc the build uses, for Meson (PATH) and CMake (CUDACXX) alike.
export PATH="$(dirname "$nvcc"):$PATH" CUDACXX="$nvcc"
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
log=$scratch/log
run() {  # a step's output only when it fails
  if ! "$@" > "$log" 2>&1; then
    echo "FAIL: $*"
    tail -n 60 "$log"
    exit 1
  fi
}
tool=$(case $route in cmake_*) echo cmake ;; pkg_config) echo pkg-config ;; *) echo meson ;; esac)
if ! command -v "$tool" > /dev/null; then
  # CI installs every tool (.ci/run): there a missing one is a failure, elsewhere a skip.
  echo "${CI:+FAIL: }$tool is not installed: the $route check cannot run"
  [ -n "${CI:-}" ] && exit 1
  exit 77
fi
proj=$scratch/project
mkdir -p "$proj"
cp "$here/consumer.cu" "$proj/"

case $route in
  meson_subproject)
    cp "$here/meson/meson.build" "$proj/"
    mkdir "$proj/subprojects"
    ln -s "$src" "$proj/subprojects/ncclz"
    run meson setup "$scratch/build" "$proj"
    run ninja -C "$scratch/build"
    exe=$scratch/build/consumer
    ;;
  pkg_config)
    run meson install -C "$build" --no-rebuild --destdir "$scratch/root"
    export PKG_CONFIG_PATH="$scratch/root$prefix/$libdir/pkgconfig"
    relocate=(--define-variable=prefix="$scratch/root$prefix")
    cflags=$(pkg-config "${relocate[@]}" --cflags ncclz)
    libs=$(pkg-config "${relocate[@]}" --libs ncclz)
    got=$(pkg-config --modversion ncclz)
    if [ "$got" != "$version" ]; then
      echo "FAIL: ncclz.pc says version $got, the project $version"
      exit 1
    fi
    # shellcheck disable=SC2086 # pkg-config's output is a list of flags
    run "$nvcc" $cflags -gencode=arch=compute_90,code=sm_90 "$proj/consumer.cu" -o "$scratch/consumer" $libs
    exe=$scratch/consumer
    ;;
  cmake_find_package)
    run cmake -G Ninja -S "$src" -B "$scratch/ncclz-build" -DCMAKE_INSTALL_PREFIX="$scratch/prefix"
    run cmake --install "$scratch/ncclz-build"
    cp "$here/cmake/CMakeLists.txt" "$proj/"
    run cmake -G Ninja -S "$proj" -B "$scratch/build" -DNCCLZ_ROUTE=find_package -DCMAKE_PREFIX_PATH="$scratch/prefix" \
      -DNCCLZ_EXPECTED_VERSION="$version" -DCMAKE_CUDA_ARCHITECTURES=90
    run cmake --build "$scratch/build"
    exe=$scratch/build/consumer
    # `meson install` writes the same package: find_package must take it as well (configuring is
    # the check; the program is the one just built).
    run meson install -C "$build" --no-rebuild --destdir "$scratch/meson-root"
    run cmake -G Ninja -S "$proj" -B "$scratch/meson-installed" -DNCCLZ_ROUTE=find_package \
      -DCMAKE_PREFIX_PATH="$scratch/meson-root$prefix" -DNCCLZ_EXPECTED_VERSION="$version" -DCMAKE_CUDA_ARCHITECTURES=90
    ;;
  cmake_fetchcontent)
    cp "$here/cmake/CMakeLists.txt" "$proj/"
    run cmake -G Ninja -S "$proj" -B "$scratch/build" -DNCCLZ_ROUTE=fetchcontent -DNCCLZ_SOURCE_DIR="$src" \
      -DCMAKE_CUDA_ARCHITECTURES=90
    run cmake --build "$scratch/build"
    exe=$scratch/build/consumer
    ;;
  *)
    echo "usage: check_consumer.sh meson_subproject|pkg_config|cmake_find_package|cmake_fetchcontent SOURCE_ROOT BUILD_ROOT PREFIX LIBDIR VERSION NVCC"
    exit 2
    ;;
esac
echo "built by $route: $exe"
set +e
"$exe"
exit $?
