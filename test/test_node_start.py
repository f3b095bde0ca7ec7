"""What a newcomer meets first: the node's start with an empty kernel cache (numba's
``NUMBA_CACHE_DIR`` pointed at an empty directory, as on the first start after an install).

The robot's state must come at once, whatever the compile costs; goals sent meanwhile are kept
and answered when the solver is ready; readiness is announced on ``~/ready``."""

from __future__ import annotations

import shutil
import tempfile
import time

import numpy as np
import pytest
from ros_harness import CONFIG_DIR, Client
from sensor_msgs.msg import JointState

from ik_node.ros.process import NodeProcess, ros_environment

#: The node must publish its state this soon after its process starts [s] (the stamp of the first
#: state received; the node's clock is wall time): about 1 s of its own start (Python imports,
#: parameters, the description) on an idle 2-core machine, 3-4 s when both cores are busy (as in
#: CI's parallel run); far below the ~20 s compile it must not wait for.
FIRST_STATE_WITHIN = 6.0

JOINTS = [f"joint{i}" for i in range(1, 8)]


pytestmark = pytest.mark.usefixtures("ros_context")  # (conftest.py)


def position_error(robot, command, goal) -> float:
    """|p(FK(command)) - p(goal)| [m] by the model's full-robot FK (not the solver's tree); the
    rotation error [rad] too."""
    reached = robot.forward(dict(zip(command.name, command.position)), "tool0", "base_link")
    cosine = (np.trace(reached[:3, :3].T @ goal[:3, :3]) - 1) / 2
    return float(np.linalg.norm(reached[:3, 3] - goal[:3, 3])), float(np.arccos(np.clip(cosine, -1.0, 1.0)))


@pytest.fixture
def empty_kernel_cache():
    directory = tempfile.mkdtemp(prefix="ik_node_cold_cache_")
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def test_cold_start_shows_the_robot_at_once_and_answers_a_goal_sent_before_it_was_ready(
    arm7, empty_kernel_cache
):
    environment = ros_environment()
    environment["NUMBA_CACHE_DIR"] = empty_kernel_cache
    began, began_wall = time.monotonic(), time.time()
    process = NodeProcess("--params-file", str(CONFIG_DIR / "arm7.yaml"), environment=environment)
    client = Client()
    states: list[float] = []
    client.node.create_subscription(
        JointState,
        "/ik_node/joint_states",
        lambda message: states.append(message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec),
        10,
    )
    try:
        assert client.spin_until(lambda: states, 30.0), process.log()
        first_state = states[0] - began_wall  # when the node stamped it (its clock is wall time)
        assert first_state < FIRST_STATE_WITHIN, (
            f"first joint state after {first_state:.1f} s\n{process.log()}"
        )
        client.wait_connected()
        assert not (client.ready and client.ready[-1]), "ready before the kernels could have compiled"
        assert "IK kernels compiled" not in process.log(), "the state waited for the compile"
        q = np.array([0.3, -0.4, 0.5, -1.9, 0.2, 1.6, -0.3])
        goal = arm7.forward(dict(zip(JOINTS, q)), "tool0", "base_link")
        client.send_goal(goal)
        assert client.spin_until(lambda: client.statuses), process.log()
        assert client.statuses[0]["reason"] == "queued", client.statuses
        command = client.wait_command(0, timeout=240.0)
        assert command is not None, process.log()
        assert client.spin_until(lambda: client.ready[-1]), "answered, but ~/ready never said true"
        assert max(position_error(arm7, command, goal)) < 1e-5
        assert client.spin_until(lambda: any(status["reason"] != "queued" for status in client.statuses))
        answered = [status for status in client.statuses if status["reason"] != "queued"]
        assert answered[0]["reason"] == "success", answered
        answer = time.monotonic() - began
        print(f"cold start: first joint state {first_state:.2f} s, first answer {answer:.1f} s")
        log = process.log()
        assert log.count("compiling the IK kernels") == 1, log  # the notice, before the compile
        assert "compiled (cached for later starts)" in log and "ready: goals" in log, log
        assert "[ERROR]" not in log, log
    finally:
        client.close()
        assert process.stop() == 0, process.log()[-2000:]
