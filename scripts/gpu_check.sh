#!/usr/bin/env bash
# GPU validation in one go (for the device machine): the test suite on the cupy backend, the
# differential test (numpy vs cupy), and the benchmark. Logs go to ${OUT:-/tmp/gpu_check}.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/gpu_check}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD:$PWD/backends${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export TILE_LANG_CACHE_DIR="${TILE_LANG_CACHE_DIR:-$OUT/cache}"
python3 -c 'import tile_lang as tl; print(tl.backends())' 2>&1 | tee "$OUT/backends.log"
# one process per test file: a kernel that faults the GPU context cannot fail the files after it
: > "$OUT/tests.log"
for f in tests/test_*.py tests/numpy_backend/test_*.py tests/compiler/test_*.py; do
  case "$f" in tests/compiler/test_differential.py|tests/test_typing.py|tests/test_docs.py) continue;; esac
  echo "=== $f" >> "$OUT/tests.log"
  python3 -m pytest -q -p no:cacheprovider -p tile_lang.pytest_plugin --tile-backend=cupy "$f" --tb=line 2>&1 \
    | tail -25 >> "$OUT/tests.log"
done
grep -E "^=== |passed|failed|error" "$OUT/tests.log" | tail -80
python3 -m pytest -q -p tile_lang.pytest_plugin tests/compiler/test_differential.py 2>&1 | tee "$OUT/differential.log" | tail -40
# launch checks and the launch fast path on the GPU (the out-of-bounds check is the reference's alone)
TILE_LANG_BACKEND=cupy python3 -m pytest -q tests/test_launch.py tests/test_fast_launch.py -k "not out_of_bounds" 2>&1 \
  | tee "$OUT/launch.log" | tail -20
python3 -m benchmarks.gpu_bench 2>&1 | tee "$OUT/bench.log"
