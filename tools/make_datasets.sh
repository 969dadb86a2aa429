#!/usr/bin/env bash
# make_datasets.sh OUTDIR
#
# Builds tools/nc2raw.cpp (into OUTDIR/.build, never into the source tree) and
# converts a fixed set of real climate fields shipped by Debian's
# libncarg-data package into raw little-endian float32 files (SDRBench
# convention, no header):  OUTDIR/<name>.f32  plus  OUTDIR/MANIFEST.tsv.
#
# The fields are split once and for all (docs/data.md): OUTDIR/tune/ holds the
# fields tuning decisions may look at, OUTDIR/heldout/ the ones reported
# figures come from and no tuning decision sees; each holds its fields (hard
# links to OUTDIR/<name>.f32, copies where links fail) and its own
# MANIFEST.tsv, so `--data OUTDIR/heldout` selects a part in ncclz-perf and
# ncclz-codec-bench. OUTDIR itself keeps every field.
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

# name  source-file  variable  split (whole source files go to one part)
FIELDS=(
  "trinidad     trinidad.nc        data  tune"
  "pop_t        pop.nc             t     tune"
  "fice         fice.nc            fice  heldout"
  "hgt          hgt.nc             HGT   heldout"
  "uv300_U      uv300.nc           U     heldout"
  "uv300_V      uv300.nc           V     heldout"
  "nc4uvt_T     nc4uvt.nc          T     tune"
  "nc4uvt_U     nc4uvt.nc          U     tune"
  "nc4uvt_V     nc4uvt.nc          V     tune"
  "vinth2p_T    vinth2p.nc         T     tune"
  "sst          sstdata_netcdf.nc  sst   tune"
  "sstanom_SST  sstanom.robinsonproj.nc SST heldout"
  "seam_ps      seam.nc            ps    heldout"
)
SPLITS=(tune heldout)
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
# Each field also goes into OUTDIR/<split>/ (stale fields there removed first),
# with that part's own manifest.
MANIFEST_TMP="$OUTDIR/MANIFEST.tsv.tmp"
HEADER='file\tsource\tvariable\tdims\tcount\tfills_replaced\tmin\tmax\tsplit\n'
printf "$HEADER" >"$MANIFEST_TMP"
for part in "${SPLITS[@]}"; do
  mkdir -p "$OUTDIR/$part"
  rm -f "$OUTDIR/$part"/*.f32
  printf "$HEADER" >"$OUTDIR/$part/MANIFEST.tsv.tmp"
done
total=0
for f in "${FIELDS[@]}"; do
  read -r name file var split <<<"$f"
  out="$OUTDIR/$name.f32"
  line=$("$NC2RAW" "$CDF/$file" "$var" "$out" --fill=min) || die "nc2raw failed on $file:$var"
  read -r _ dims count fills vmin vmax <<<"$line"
  size=$(stat -c %s "$out")
  [[ "$size" -eq $((count * 4)) ]] || die "$out: size $size != 4*$count"
  total=$((total + size))
  row=$(printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s' "$name.f32" "$file" "$var" "$dims" "$count" "$fills" "$vmin" "$vmax" "$split")
  echo "$row" >>"$MANIFEST_TMP"
  echo "$row" >>"$OUTDIR/$split/MANIFEST.tsv.tmp"
  ln -f "$out" "$OUTDIR/$split/$name.f32" 2>/dev/null || cp -f "$out" "$OUTDIR/$split/$name.f32"
  printf '%-16s %-24s %-5s %-14s %9s values %7s fills  [%s, %s]  %s\n' "$name.f32" "$file" "$var" "$dims" "$count" "$fills" "$vmin" "$vmax" "$split" >&2
done
mv -f "$MANIFEST_TMP" "$OUTDIR/MANIFEST.tsv"
for part in "${SPLITS[@]}"; do
  mv -f "$OUTDIR/$part/MANIFEST.tsv.tmp" "$OUTDIR/$part/MANIFEST.tsv"
  echo "$part: $(($(wc -l <"$OUTDIR/$part/MANIFEST.tsv") - 1)) fields in $OUTDIR/$part" >&2
done

((total <= MAX_TOTAL_BYTES)) || die "total output $total bytes exceeds the $MAX_TOTAL_BYTES byte budget"
echo "wrote ${#FIELDS[@]} fields, $total bytes, to $OUTDIR (manifest: $OUTDIR/MANIFEST.tsv)" >&2
