#!/usr/bin/env bash
# The default suite on the oldest NumPy and ml_dtypes pyproject.toml allows (numpy 1.26, ml_dtypes 0.4):
# the reference must not depend on what newer versions fixed (ml_dtypes 0.4 rounds f64 to bf16 and fp8
# twice and misplaces bf16 NaNs in a sort; NumPy 1.26 has no bitwise_count). About 20 minutes on 2 cores.
#   scripts/min_versions.sh [pytest arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${MIN_VENV:-.venv-min}
[ -d "$venv" ] || python3 -m venv "$venv"
. "$venv/bin/activate"
python -m pip install -q 'numpy==1.26.4' 'ml_dtypes==0.4.0' pytest pytest-xdist hypothesis typing-extensions
export PYTHONPATH="$PWD:$PWD/backends"
python -m pytest -q -p no:cacheprovider -p tile_lang.pytest_plugin -n "${JOBS:-2}" tests --ignore=tests/test_typing.py \
  --ignore=tests/test_docs.py --ignore=tests/test_packaging.py --ignore=tests/test_layering.py "$@"
