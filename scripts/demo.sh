#!/usr/bin/env bash
# Set up a virtual environment in .venv (if needed), install ik_node with the ROS 2 wheels and
# matplotlib, and run the demo: the node on the bundled 7-DOF arm, goals through real topics on
# loopback, a table of outcomes and a picture (ik_node_demo.png). Usage: bash scripts/demo.sh [args]
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[ros,plot]'
# DDS on loopback: Iron and later read ROS_AUTOMATIC_DISCOVERY_RANGE; Humble reads
# ROS_LOCALHOST_ONLY, which Jazzy's rcl warns about (set where ROS_DISTRO says humble).
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
if [ "${ROS_DISTRO:-}" = humble ]; then export ROS_LOCALHOST_ONLY=1; else unset ROS_LOCALHOST_ONLY; fi
exec .venv/bin/ik_node_demo --plot ik_node_demo.png "$@"
