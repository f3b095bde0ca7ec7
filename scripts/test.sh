#!/usr/bin/env bash
# Set up a virtual environment in .venv (if needed), install ik_node with its ROS 2 wheels and
# test tools, lint, and run the whole test suite. Usage: bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[ros,test]'
.venv/bin/ruff check ik_node test benchmark scripts urdf launch
# DDS stays on this machine (Iron and later read the first switch, Humble the second); each
# pytest worker holds a ROS_DOMAIN_ID of its own (test/conftest.py, domain_coordinator).
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_LOCALHOST_ONLY=1
if [ -z "${ROS_LOG_DIR:-}" ]; then
  ROS_LOG_DIR=$(mktemp -d -t ik_node_test_logs.XXXXXX)
  trap 'rm -rf "$ROS_LOG_DIR"' EXIT
fi
export ROS_LOG_DIR
# Compile the IK kernels into numba's cache once (~30 s cold, 0.2 s warm), before the workers
# and the node processes they start would each compile them.
.venv/bin/python -m ik_node.solver
status=0
.venv/bin/python -m pytest -n 2 "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing on purpose" >&2
fi
if [ "$#" -eq 0 ] && [ "$status" -eq 0 ]; then
  # The core solver tests once more with the kernels as plain Python (numba's own switch), as
  # they run where numba is missing.
  NUMBA_DISABLE_JIT=1 .venv/bin/python -m pytest -n 2 -q -m plain_python || status=$?
fi
exit "$status"
