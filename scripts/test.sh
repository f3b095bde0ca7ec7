#!/usr/bin/env bash
# Set up a virtual environment in .venv (if needed), install ik_node with its ROS 2 wheels (Kilted)
# and test tools, lint, and run the whole test suite; then the node-level tests once more on
# Jazzy's ROS 2 wheels, in a second environment (.venv-jazzy).
#
# Usage: bash scripts/test.sh [pytest args...]   (with arguments: only that run, in .venv)
# IK_NODE_TEST_RUNS picks the runs without arguments: "kilted jazzy" (the default), or one of them.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
RUNS=" ${IK_NODE_TEST_RUNS:-kilted jazzy} "
# The tests that touch rclpy, which is what differs between ROS 2 distributions: every node test
# (test_node*.py: topics, start-up, frames, markers) and the others that start nodes or scan rclpy.
NODE_TESTS=(test/test_node*.py test/test_demo.py test/test_launch.py test/test_cli_config.py
  test/test_ros_compat.py)

# make_venv DIR EXTRAS: DIR holds a virtual environment with ik_node installed (editable) with EXTRAS.
make_venv() {
  if [ ! -x "$1/bin/python" ]; then
    "$PYTHON" -m venv "$1"
  fi
  "$1/bin/python" -m pip install --quiet --upgrade pip
  "$1/bin/python" -m pip install --quiet -e ".[$2]"
}

# ros_distribution DIR: the ROS 2 distribution of the rclpy wheel in DIR's environment (by rclpy's
# major version: Humble 3, Iron 4, Jazzy 7, Kilted 9) and that version, e.g. "Kilted 9.1.2".
ros_distribution() {
  "$1/bin/python" -c '
import importlib.metadata
version = importlib.metadata.version("ros-rclpy")
names = {"3": "Humble", "4": "Iron", "7": "Jazzy", "9": "Kilted"}
print(names.get(version.split(".")[0], "Rolling"), version)'
}

# run_pytest LABEL DIR ARGS...: pytest in DIR's environment; the exit code goes to $run_status.
run_pytest() {
  local label=$1 dir=$2
  shift 2
  echo "===== ROS 2 $label ($dir): pytest $* ====="
  run_status=0
  "$dir/bin/python" -m pytest "$@" || run_status=$?
  if [ "$run_status" -eq 5 ]; then
    echo "pytest collected no tests: failing on purpose" >&2
  fi
}

# DDS stays on this machine: Iron and later read ROS_AUTOMATIC_DISCOVERY_RANGE; Humble reads
# ROS_LOCALHOST_ONLY, which Jazzy's rcl warns about (set where ROS_DISTRO says humble). Each
# pytest worker holds a ROS_DOMAIN_ID of its own (test/conftest.py, domain_coordinator).
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
if [ "${ROS_DISTRO:-}" = humble ]; then export ROS_LOCALHOST_ONLY=1; else unset ROS_LOCALHOST_ONLY; fi
made_log_dir=
if [ -z "${ROS_LOG_DIR:-}" ]; then
  ROS_LOG_DIR=$(mktemp -d -t ik_node_test_logs.XXXXXX)
  made_log_dir=$ROS_LOG_DIR
fi
export ROS_LOG_DIR
status=0
summary=()
beside= # the PID of the plain-Python run while it runs beside the others (below)
beside_log=

# on_exit: stop the plain-Python run if the script ends before it (a failed lint or warm-up), and
# remove the log directory this script made and the run's output.
on_exit() {
  if [ -n "$beside" ]; then
    kill "$beside" 2>/dev/null || true
  fi
  rm -rf "$made_log_dir" "$beside_log"
}
trap on_exit EXIT

if [ "$#" -gt 0 ] || [[ "$RUNS" == *" kilted "* ]]; then
  make_venv .venv ros,test
  .venv/bin/ruff check ik_node test benchmark scripts urdf launch
  distribution=$(ros_distribution .venv)
  if [ "$#" -eq 0 ]; then
    # The core solver tests once more with the kernels as plain Python (numba's own switch), as
    # they run where numba is missing. They need no compiled kernel: one process beside the
    # warm-up (one process too, on the other core), its output shown after the suite's.
    beside_log=$(mktemp -t ik_node_plain_python.XXXXXX)
    NUMBA_DISABLE_JIT=1 .venv/bin/python -m pytest -q -m plain_python >"$beside_log" 2>&1 &
    beside=$!
  fi
  # Compile the IK kernels into numba's cache once, the default problem's and each feature's (the
  # warm-up of docs/install.md), before the workers and the node processes they start would each
  # compile them; the Jazzy run below loads the same cache (__pycache__ beside the sources) where
  # its numba is the same. Then a combination of features the warm-up leaves out that the suite
  # uses (test_solver.py's limits and joint weights: a method with a posture pull), which each
  # worker would compile at its first such solve.
  .venv/bin/python -m ik_node.solver
  .venv/bin/python -m ik_node.solver --features method posture
  # (--durations: the slowest tests, where the suite's time goes, in every CI log; --dist loadgroup:
  # the tests of one xdist_group, which share one cold process, on one worker)
  run_pytest "$distribution" .venv -n 2 --dist loadgroup --durations=25 "$@"
  status=$run_status
  if [ -n "$beside" ]; then
    beside_status=0
    wait "$beside" || beside_status=$?
    beside=
    echo "===== ROS 2 $distribution (.venv), the kernels as plain Python: NUMBA_DISABLE_JIT=1 pytest -q -m plain_python ====="
    cat "$beside_log"
    if [ "$status" -eq 0 ]; then
      status=$beside_status
    fi
  fi
  summary+=("ROS 2 $distribution (.venv), the whole suite: exit $status")
fi

if [ "$#" -eq 0 ] && [[ "$RUNS" == *" jazzy "* ]]; then
  start=$SECONDS
  # Jazzy's wheels install the same modules as Kilted's (rclpy, std_msgs, ...): an environment of
  # their own, with ik_node's non-ROS requirements and the test tools (the ros-jazzy extra, not ros).
  make_venv .venv-jazzy ros-jazzy,test
  printf '*\n' >.venv-jazzy/.gitignore # neither git nor colcon looks inside
  touch .venv-jazzy/COLCON_IGNORE
  distribution=$(ros_distribution .venv-jazzy)
  if [[ "$distribution" != Jazzy* ]]; then
    echo ".venv-jazzy holds rclpy $distribution, not Jazzy's: remove .venv-jazzy and run again" >&2
    exit 1
  fi
  .venv-jazzy/bin/python -m ik_node.solver
  tests=()
  for path in "${NODE_TESTS[@]}"; do
    if [ -e "$path" ]; then
      tests+=("$path")
    fi
  done
  run_pytest "$distribution" .venv-jazzy -n 2 --dist loadgroup "${tests[@]}"
  if [ "$status" -eq 0 ]; then
    status=$run_status
  fi
  summary+=("ROS 2 $distribution (.venv-jazzy), the node tests: exit $run_status, $((SECONDS - start)) s")
fi

for line in "${summary[@]}"; do
  echo "$line"
done
exit "$status"
