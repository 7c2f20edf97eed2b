#!/usr/bin/env bash
# The GPU check in one device call: the tensor-core benchmark, the differential tests, the test
# suite on the cupy backend in one process (files that need mypy, the docs or a second GPU left
# out), then the memory-bound benchmark (MEMORY_BENCH=0 skips it), each under its own time limit
# so a short lease still returns what finished. Works installed or from an uninstalled tree;
# the exit status is non-zero if any step failed or ran out of time.
# Logs under ${OUT:-/tmp/gpu_final}; the summary is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/gpu_final}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD:$PWD/backends${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export TILE_LANG_CACHE_DIR="${TILE_LANG_CACHE_DIR:-/tmp/gpu_final_cache}"
# installed, pytest loads the plugin by its entry point, and naming it again with -p is an error
plugin=(-p tile_lang.pytest_plugin)
python3 -c "import importlib.metadata as m, sys; sys.exit(not m.entry_points(group='pytest11', name='tile_lang'))" \
  && plugin=()
failed=()
step() {  # step NAME LOG COMMAND...: run COMMAND into LOG, noting NAME if it fails
  local name="$1" log="$2"; shift 2
  "$@" > "$log" 2>&1 || failed+=("$name (exit $?, $log)")
}
step dot_bench "$OUT/dot_bench.log" timeout "${BENCH_S:-130}" python3 -m benchmarks.dot_bench
step differential "$OUT/differential.log" timeout "${DIFF_S:-90}" python3 -m pytest -q -p no:cacheprovider \
  "${plugin[@]}" tests/compiler/test_differential.py
step tests "$OUT/tests.log" timeout "${TESTS_S:-240}" python3 -m pytest -q -p no:cacheprovider "${plugin[@]}" \
  --tile-backend=cupy tests \
  --ignore=tests/test_typing.py --ignore=tests/test_docs.py --ignore=tests/fuzz --ignore=tests/test_packaging.py \
  --ignore=tests/test_multi_gpu.py --ignore=tests/test_layering.py --ignore=tests/compiler/test_differential.py \
  --tb=short
if [ "${MEMORY_BENCH:-1}" = 1 ]; then
  step gpu_bench "$OUT/gpu_bench.log" timeout "${MEMORY_S:-150}" python3 -m benchmarks.gpu_bench
fi
tail -16 "$OUT/dot_bench.log"
tail -3 "$OUT/differential.log"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests.log" | tail -30
tail -c 400 "$OUT/tests.log"
[ -e "$OUT/gpu_bench.log" ] && tail -14 "$OUT/gpu_bench.log"
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'gpu_final: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
