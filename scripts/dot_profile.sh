#!/usr/bin/env bash
# Profile the tensor-core benchmark kernels with Nsight Compute, tile_lang's next to Triton's, and
# keep both sides' code: Triton's ttgir/ptx/SASS, tile_lang's CUDA and SASS. Run on the device.
# usage: scripts/dot_profile.sh OUT_DIR [KERNEL...]   (kernels: matmul attention64 attention128)
set -uo pipefail
cd "$(dirname "$0")/.."
for tool in ncu cuobjdump nvcc; do
  command -v "$tool" > /dev/null || { echo "dot_profile.sh: $tool not found: run on a machine with the CUDA toolkit and Nsight Compute on PATH" >&2; exit 1; }
done
[ $# -ge 1 ] || { echo "usage: scripts/dot_profile.sh OUT_DIR [KERNEL...]" >&2; exit 2; }
out="$1"; shift
kernels=("${@:-matmul attention64 attention128}")
mkdir -p "$out"
export PYTHONPATH="$PWD:$PWD/backends${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export TILE_LANG_CACHE_DIR="$out/tlc"
sections=(--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats
          --section Occupancy --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis
          --section InstructionStats --section SourceCounters)
for k in ${kernels[*]}; do
  for side in tile_lang triton; do
    ncu --clock-control none --launch-skip 2 --launch-count 1 -k 'regex:^(?!.*(distribution|elementwise|fill)).*' \
      "${sections[@]}" python3 -m benchmarks.dot_profile "$k" "$side" --dump "$out" > "$out/ncu_${k}_${side}.txt" 2>&1
    grep -E "Duration|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible" \
      "$out/ncu_${k}_${side}.txt" | sed "s/^/$k $side: /"
  done
  cuobjdump --dump-sass "$out/triton_$k.cubin" > "$out/triton_$k.sass" 2>&1
done
for cu in "$out"/tlc/*.cu; do
  [ -e "$cu" ] || continue
  nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Ibackends/tile_lang_cupy -Xptxas -v "$cu" \
    -o "${cu%.cu}.cubin" > "${cu%.cu}.ptxas.txt" 2>&1
  cuobjdump --dump-sass "${cu%.cu}.cubin" > "${cu%.cu}.sass" 2>&1
done
ls "$out" "$out/tlc" | head -40
