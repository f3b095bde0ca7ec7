"""The node's handlers fuzzed through real topics: random PoseStamped goals (unknown or empty
frames, NaN, huge values, zero quaternions) and JointState messages (unknown or missing names,
mismatched lengths, NaN, huge values). The node must keep serving, publish no command outside
the parameter limits, and throttle its warnings."""

from __future__ import annotations

import math

import numpy as np
import pytest
import rclpy
from geometry_msgs.msg import PoseStamped
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ros_harness import CONFIG_DIR, PACKAGE_ROOT, running_node
from sensor_msgs.msg import JointState
from test_node import JOINTS, parameter_limits, pose_error, positions

from ik_node import load_robot

NODE_CASES = 5000
ARM7 = load_robot(PACKAGE_ROOT / "urdf" / "arm7.urdf")

values = st.one_of(
    st.floats(-2, 2),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.0, 1e300, -1e300, 1e-300]),
    st.floats(allow_nan=True, allow_infinity=True),
)
frames = st.one_of(
    st.sampled_from(["", "base_link", "/base_link", "link3", "tool0", "world", "left_finger", "map"]),
    st.text(max_size=12),
)
names = st.one_of(st.sampled_from([*JOINTS, "finger_joint1", "finger_joint2", ""]), st.text(max_size=8))


@st.composite
def pose_messages(draw):
    message = PoseStamped()
    message.header.frame_id = draw(frames)
    position = message.pose.position
    position.x, position.y, position.z = (draw(values) for _ in range(3))
    orientation = message.pose.orientation
    orientation.x, orientation.y, orientation.z, orientation.w = (draw(values) for _ in range(4))
    return message


@st.composite
def joint_state_messages(draw):
    message = JointState()
    message.name = draw(st.lists(names, max_size=10))
    length = draw(st.sampled_from([len(message.name), len(message.name), 0, len(message.name) + 1]))
    message.position = [draw(values) for _ in range(length)]
    message.velocity = [draw(values) for _ in range(draw(st.integers(0, 3)))]
    return message


@pytest.fixture
def arm7_node():
    rclpy.init()
    try:
        with running_node("--params-file", str(CONFIG_DIR / "arm7.yaml")) as started:
            yield started
    finally:
        rclpy.try_shutdown()


def test_fuzzed_messages_through_real_topics_leave_the_node_serving_within_limits(arm7_node):
    process, client = arm7_node

    @settings(
        max_examples=NODE_CASES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
    )
    @given(message=st.one_of(pose_messages(), joint_state_messages()))
    def publish(message):
        if isinstance(message, PoseStamped):
            client.goal_publishers["tool0"].publish(message)
        else:
            client.joint_state_publisher.publish(message)
        rclpy.spin_once(client.node, timeout_sec=0)

    publish()
    assert process.process.poll() is None, "the node died:\n" + process.log()[-3000:]
    client.spin_for(1.0)
    limits = parameter_limits()
    for command in client.commands:
        for name, value in zip(command.name, command.position):
            low, high, _ = limits[name]
            assert low <= value <= high, f"command {name}={value} outside [{low}, {high}]"
    q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
    client.send_joint_state(JOINTS, q)
    client.spin_for(0.3)
    goal = ARM7.forward(dict(zip(JOINTS, q + 0.05)), "tool0", "base_link")
    before = len(client.commands)
    client.send_goal(goal)
    command = client.wait_command(before)
    assert command is not None
    position_error, rotation_error = pose_error(ARM7, positions(command), goal)
    assert position_error < 1e-5 and rotation_error < 1e-5
    log = process.log()
    assert "Traceback" not in log
    warnings = log.count("[WARN]")
    assert 0 < warnings < NODE_CASES / 10, f"{warnings} warnings for {NODE_CASES} cases: not throttled"
    print(
        f"{NODE_CASES} fuzzed messages: {len(client.statuses)} goals handled, "
        f"{len(client.commands)} commands, {warnings} warnings"
    )
