#!/usr/bin/env bash
# For each generated kernel in a tile_lang cache directory: registers, spills and shared memory
# from ptxas, and the count of tensor-core (HMMA/HGMMA) and FMA instructions in its SASS.
# usage: scripts/sass_report.sh CACHE_DIR [ARCH]   (run where nvcc and cuobjdump are)
set -uo pipefail
cache="$1"; arch="${2:-sm_90}"
inc="$(dirname "$0")/../backends/tile_lang_cupy"
work=$(mktemp -d)
for cu in "$cache"/*.cu; do
  [ -e "$cu" ] || continue
  name=$(grep -o 'void __launch_bounds__([0-9, ]*) [A-Za-z_0-9]*' "$cu" | awk '{print $NF}')
  out="$work/$(basename "$cu" .cu).cubin"
  info=$(nvcc -cubin -arch="$arch" -std=c++17 -I"$inc" -Xptxas -v "$cu" -o "$out" 2>&1 | grep -E "registers|spill" | tr '\n' ' ')
  sass=$(cuobjdump --dump-sass "$out" 2>/dev/null)
  printf '%s: %s | HMMA %s HGMMA %s FFMA %s LDSM %s\n' "$name" "$info" \
    "$(grep -c HMMA <<<"$sass")" "$(grep -c HGMMA <<<"$sass")" "$(grep -c FFMA <<<"$sass")" "$(grep -c LDSM <<<"$sass")"
done
