"""The shipped launch file, run the way ``ros2 launch`` runs it (launch's ``LaunchService``) with
``use_rviz:=false`` and ``command_topic`` set: robot_state_publisher and ik_node start, the steady
joint state reaches ``/joint_states`` (the rest posture before any goal), a goal gets a command
that reaches it, and the forward position controller's topic gets the same positions.

It needs a ROS 2 install: ``launch`` and ``launch_ros`` importable, ik_node and
robot_state_publisher in the ament index (``colcon build`` of this package). Elsewhere it skips
and says what is missing: neither launch package is installable from PyPI.
"""

from __future__ import annotations

import importlib.util
import threading

import numpy as np
import pytest
from ros_harness import PACKAGE_ROOT, Client

from ik_node import load_robot

JOINTS = [f"joint{index}" for index in range(1, 8)]
Q_GOAL = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
STARTUP = 30.0  # s: the processes start, load the kernels' cache and discover each other
COMMAND_TOPIC = "/forward_position_controller/commands"


def missing_requirements() -> str | None:
    missing = [name for name in ("launch", "launch_ros") if importlib.util.find_spec(name) is None]
    if missing:
        return f"{missing} cannot be imported here (not on PyPI); the launch file needs a ROS 2 install"
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    for package in ("ik_node", "robot_state_publisher"):
        try:
            get_package_prefix(package)
        except PackageNotFoundError:
            return f"package '{package}' is not in the ament index (AMENT_PREFIX_PATH): build and source it"
    return None


pytestmark = pytest.mark.skipif(missing_requirements() is not None, reason=str(missing_requirements()))


def exercise(service, outcome: dict) -> None:
    """In a thread beside the launch service: the checks, then the service's shutdown."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    client = Client()
    states, arrays = [], []
    client.node.create_subscription(JointState, "/joint_states", states.append, 10)
    client.node.create_subscription(Float64MultiArray, COMMAND_TOPIC, arrays.append, 10)
    try:
        client.wait_connected(timeout=STARTUP)
        assert client.spin_until(lambda: states, timeout=STARTUP), "no steady joint state on /joint_states"
        assert list(states[0].name) == JOINTS
        arm7 = load_robot(PACKAGE_ROOT / "urdf" / "arm7.urdf")
        goal = arm7.forward(dict(zip(JOINTS, Q_GOAL)), "tool0", "base_link")
        before = len(client.commands)
        client.send_goal(goal)
        command = client.wait_command(before)
        assert command is not None, "no command for the goal"
        reached = arm7.forward(dict(zip(command.name, command.position)), "tool0", "base_link")
        assert np.linalg.norm(reached[:3, 3] - goal[:3, 3]) <= 1e-5
        # the steady joint state follows the command; the controller's topic gets it too
        assert client.spin_until(lambda: np.allclose(states[-1].position, command.position))
        assert client.spin_until(lambda: arrays), f"nothing on {COMMAND_TOPIC}"
        np.testing.assert_array_equal(arrays[-1].data, command.position)
        outcome["passed"] = True
    except BaseException as error:  # re-raised in the test's thread
        outcome["error"] = error
    finally:
        client.close()
        service.shutdown()


def test_launch_file_starts_a_node_that_feeds_joint_states_and_answers_goals(ros_context):
    """LaunchService runs in the main thread (it must); the checks run beside it."""
    from launch import LaunchDescription, LaunchService
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource

    service = LaunchService(noninteractive=True)
    source = PythonLaunchDescriptionSource(str(PACKAGE_ROOT / "launch" / "ik_node.launch.py"))
    service.include_launch_description(
        LaunchDescription(
            [
                IncludeLaunchDescription(
                    source, launch_arguments=[("use_rviz", "false"), ("command_topic", COMMAND_TOPIC)]
                )
            ]
        )
    )
    outcome: dict = {}
    checks = threading.Thread(target=exercise, args=(service, outcome), daemon=True)
    checks.start()
    status = service.run()
    checks.join(timeout=20.0)
    if "error" in outcome:
        raise outcome["error"]
    assert outcome.get("passed"), f"the checks did not finish (launch service status {status})"
