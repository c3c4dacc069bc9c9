#!/usr/bin/env bash
# Triton's own environment: the tritonserver binary that the nvidia-pytriton wheel ships, plus what
# the python-backend model imports. It needs numpy<2 (its stub crashed on numpy 2), so it is kept
# apart from the services' .venv. Idempotent: a no-op once the stamp exists.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${TRITON_VENV:-.venv-triton}
PYTHON=${PYTHON:-python3.11}
STAMP="$VENV/.installed-$(sha256sum deploy/triton/requirements.txt | cut -c1-12)"
[ -f "$STAMP" ] && exit 0
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip
"$VENV/bin/pip" install --quiet -r deploy/triton/requirements.txt
"$VENV/bin/python" -c "import pytriton, numpy, onnxruntime, tokenizers; assert numpy.__version__ < '2'"
# The python backend looks for its stub next to itself; the wheel keeps one per Python version.
TS="$("$VENV/bin/python" -c 'import pytriton, os; print(os.path.dirname(pytriton.__file__))')/tritonserver"
PYVER="$("$VENV/bin/python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
cp "$TS/python_backend_stubs/$PYVER/triton_python_backend_stub" "$TS/backends/python/"
rm -f "$VENV"/.installed-*
touch "$STAMP"
