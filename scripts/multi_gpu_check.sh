#!/usr/bin/env bash
# Several-GPU validation (for a machine with 2 or more GPUs, CuPy and torch with NCCL): the
# tests of tests/test_multi_gpu.py on the cupy backend (kernels on each device, torch tensors on
# cuda:1, mixed devices refused, a 2-process torch.distributed all-reduce), then a summary.
# Under 3 minutes; logs go to ${OUT:-/tmp/multi_gpu_check}.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/multi_gpu_check}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD:$PWD/backends${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export TILE_LANG_CACHE_DIR="${TILE_LANG_CACHE_DIR:-$OUT/cache}"
{ command -v nvidia-smi >/dev/null && nvidia-smi -L; } 2>&1 | tee "$OUT/devices.log"
python3 - <<'PY' 2>&1 | tee -a "$OUT/devices.log"
import tile_lang as tl
print(tl.backends())
try:
    import torch
    print("torch", torch.__version__, "cuda devices:", torch.cuda.device_count(),
          "nccl:", torch.distributed.is_available() and torch.distributed.is_nccl_available())
except ImportError as exc:
    print("torch not importable:", exc, "(the torch tests will be skipped)")
PY
# the pytest plugin (for --tile-backend) is loaded by its entry point when tile_lang is installed, else named here
plugin=$(python3 -c 'from importlib.metadata import entry_points as eps
print("" if any(e.value == "tile_lang.pytest_plugin" for e in eps(group="pytest11")) else "-p tile_lang.pytest_plugin")')
start=$(date +%s)
# shellcheck disable=SC2086
timeout 170 python3 -m pytest -v -rfEs -p no:cacheprovider $plugin --tile-backend=cupy tests/test_multi_gpu.py --tb=short 2>&1 | tee "$OUT/tests.log" | tail -40
status=${PIPESTATUS[0]}
echo "=== summary: exit $status after $(( $(date +%s) - start )) s (124: stopped at 170 s)"
for outcome in PASSED FAILED ERROR SKIPPED; do
  printf '  %-8s %s\n' "$outcome" "$(grep -cE "^tests/test_multi_gpu.py::.* $outcome" "$OUT/tests.log")"
done
sed -n '/short test summary info\|skipped, by reason/,$p' "$OUT/tests.log"
exit "$status"
