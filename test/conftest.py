"""Shared test setup: DDS on loopback with one ROS domain per pytest worker, and robot fixtures."""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

# Set before anything imports rclpy: discovery stays on this machine, each xdist worker gets
# its own domain so parallel node tests never see each other.
_worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
_worker_index = int(_worker[2:]) if _worker.startswith("gw") and _worker[2:].isdigit() else 0
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
# Assigned, not defaulted: xdist workers inherit the controller's environment, so a default
# would put every worker in the controller's domain. Workers differ by one, pids by fives.
os.environ["ROS_DOMAIN_ID"] = str(40 + (os.getpid() % 10) * 5 + _worker_index % 5)
if "ROS_LOG_DIR" not in os.environ:  # (scripts/test.sh sets one for the run and removes it)
    os.environ["ROS_LOG_DIR"] = tempfile.mkdtemp(prefix="ik_node_ros_log_")
    atexit.register(shutil.rmtree, os.environ["ROS_LOG_DIR"], ignore_errors=True)

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
URDF_DIR = PACKAGE_ROOT / "urdf"
