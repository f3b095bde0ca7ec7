"""Shared test setup: DDS on loopback with one ROS domain per pytest worker, and robot fixtures."""

import atexit
import contextlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from domain_coordinator import domain_id

# Set before anything imports rclpy: discovery stays on this machine (Iron and later read
# ROS_AUTOMATIC_DISCOVERY_RANGE; Humble reads ROS_LOCALHOST_ONLY, which Jazzy's rcl warns about:
# the same rule as ik_node.ros.process.ros_environment), and each pytest process (every xdist worker,
# and the controller) holds a ROS domain of its own for its lifetime, so parallel node tests, and
# other test runs on this machine that use domain_coordinator (ROS's own test practice: it
# reserves a port per domain), never see each other. Assigned, not defaulted: xdist workers
# inherit the controller's environment.
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
if os.environ.get("ROS_DISTRO") == "humble":
    os.environ["ROS_LOCALHOST_ONLY"] = "1"
else:
    os.environ.pop("ROS_LOCALHOST_ONLY", None)
_domain = contextlib.ExitStack()
os.environ["ROS_DOMAIN_ID"] = str(_domain.enter_context(domain_id()))
atexit.register(_domain.close)
# A solver whose kernels are not in the cache compiles them when built, as before the helper
# process (ik_node.solver.IKSolver): the tests see compiled solves and their budgets as given;
# test_first_start.py turns the helper back on in its own processes.
os.environ.setdefault("IK_NODE_COMPILE_HELPER", "0")
if "ROS_LOG_DIR" not in os.environ:  # (scripts/test.sh sets one for the run and removes it)
    os.environ["ROS_LOG_DIR"] = tempfile.mkdtemp(prefix="ik_node_ros_log_")
    atexit.register(shutil.rmtree, os.environ["ROS_LOG_DIR"], ignore_errors=True)

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
URDF_DIR = PACKAGE_ROOT / "urdf"


@pytest.fixture(scope="module")
def ros_context():
    """rclpy initialised for a test module's client nodes (rclpy is imported only here, when a node
    test asks: the core's tests run without it)."""
    import rclpy

    rclpy.init()
    yield
    rclpy.try_shutdown()


@pytest.fixture(scope="module")
def arm7():
    """The bundled 7-DOF arm (base_link -> tool0, joint1..joint7)."""
    from ik_node import load_robot

    return load_robot(URDF_DIR / "arm7.urdf")
