#!/usr/bin/env bash
# make_datasets.sh OUTDIR
#
# Builds tools/nc2raw.cpp (into OUTDIR/.build, never into the source tree) and
# converts a fixed set of real climate fields shipped by Debian's
# libncarg-data package into raw little-endian float32 files (SDRBench
# convention, no header):  OUTDIR/<name>.f32  plus  OUTDIR/MANIFEST.tsv.
#
# Fill values are replaced by the minimum of the valid values (nc2raw
# --fill=min); see docs/data.md for why.  Idempotent: re-running rewrites the
# same bytes.  Environment overrides: NCARG_CDF (source folder), CXX.
set -euo pipefail

die() { echo "make_datasets.sh: error: $*" >&2; exit 1; }

[[ $# -eq 1 && -n "$1" && "$1" != -* ]] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
OUTDIR=$1

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC="$SCRIPT_DIR/nc2raw.cpp"
CDF=${NCARG_CDF:-/usr/share/ncarg/data/cdf}
CXX=${CXX:-g++}
INSTALL_HINT="install them with: apt-get install libncarg-data libnetcdf-dev"

# name  source-file  variable
FIELDS=(
  "trinidad     trinidad.nc        data"
  "pop_t        pop.nc             t"
  "fice         fice.nc            fice"
  "hgt          hgt.nc             HGT"
  "uv300_U      uv300.nc           U"
  "uv300_V      uv300.nc           V"
  "nc4uvt_T     nc4uvt.nc          T"
  "nc4uvt_U     nc4uvt.nc          U"
  "nc4uvt_V     nc4uvt.nc          V"
  "vinth2p_T    vinth2p.nc         T"
  "sst          sstdata_netcdf.nc  sst"
  "sstanom_SST  sstanom.robinsonproj.nc SST"
  "seam_ps      seam.nc            ps"
)
MAX_TOTAL_BYTES=$((40 * 1000 * 1000))

# --- prerequisites --------------------------------------------------------
[[ -f "$SRC" ]] || die "cannot find $SRC"
[[ -d "$CDF" ]] || die "netCDF sample data folder $CDF not found (package libncarg-data missing?); $INSTALL_HINT"
for f in "${FIELDS[@]}"; do
  read -r _ file _ <<<"$f"
  [[ -r "$CDF/$file" ]] || die "$CDF/$file not found (package libncarg-data missing or incomplete?); $INSTALL_HINT"
done
command -v "$CXX" >/dev/null || die "C++ compiler '$CXX' not found (apt-get install g++)"

# netCDF compile/link flags: nc-config when present, plain -lnetcdf otherwise.
if command -v nc-config >/dev/null; then
  read -r -a NC_CFLAGS <<<"$(nc-config --cflags)"
  read -r -a NC_LIBS <<<"$(nc-config --libs)"
else
  NC_CFLAGS=()
  NC_LIBS=(-lnetcdf)
fi
echo '#include <netcdf.h>' | "$CXX" -E -x c++ "${NC_CFLAGS[@]}" - >/dev/null 2>&1 \
  || die "netcdf.h not found; $INSTALL_HINT"

# --- build nc2raw ---------------------------------------------------------
mkdir -p "$OUTDIR/.build"
NC2RAW="$OUTDIR/.build/nc2raw"
BUILD_CMD=("$CXX" -std=c++20 -O2 -Wall -Wextra -Wpedantic "${NC_CFLAGS[@]}" -o "$NC2RAW" "$SRC" "${NC_LIBS[@]}")
STAMP="$OUTDIR/.build/nc2raw.cmd"
if [[ ! -x "$NC2RAW" || "$SRC" -nt "$NC2RAW" || ! -f "$STAMP" || "$(cat "$STAMP")" != "${BUILD_CMD[*]}" ]]; then
  echo "building: ${BUILD_CMD[*]}" >&2
  "${BUILD_CMD[@]}" || die "building nc2raw failed"
  printf '%s' "${BUILD_CMD[*]}" >"$STAMP"
fi

# --- convert --------------------------------------------------------------
MANIFEST_TMP="$OUTDIR/MANIFEST.tsv.tmp"
printf 'file\tsource\tvariable\tdims\tcount\tfills_replaced\tmin\tmax\n' >"$MANIFEST_TMP"
total=0
for f in "${FIELDS[@]}"; do
  read -r name file var <<<"$f"
  out="$OUTDIR/$name.f32"
  line=$("$NC2RAW" "$CDF/$file" "$var" "$out" --fill=min) || die "nc2raw failed on $file:$var"
  read -r _ dims count fills vmin vmax <<<"$line"
  size=$(stat -c %s "$out")
  [[ "$size" -eq $((count * 4)) ]] || die "$out: size $size != 4*$count"
  total=$((total + size))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name.f32" "$file" "$var" "$dims" "$count" "$fills" "$vmin" "$vmax" >>"$MANIFEST_TMP"
  printf '%-16s %-24s %-5s %-14s %9s values %7s fills  [%s, %s]\n' "$name.f32" "$file" "$var" "$dims" "$count" "$fills" "$vmin" "$vmax" >&2
done
mv -f "$MANIFEST_TMP" "$OUTDIR/MANIFEST.tsv"

((total <= MAX_TOTAL_BYTES)) || die "total output $total bytes exceeds the $MAX_TOTAL_BYTES byte budget"
echo "wrote ${#FIELDS[@]} fields, $total bytes, to $OUTDIR (manifest: $OUTDIR/MANIFEST.tsv)" >&2
