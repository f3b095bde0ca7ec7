#!/usr/bin/env bash
# Set up a virtual environment in .venv (if needed), install ik_node and run the demo on a
# bundled robot. Usage: bash scripts/demo.sh [demo args...]
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e .
exec .venv/bin/ik_node_demo "$@"
