"""The ROS 2 node as a separate process, driven through real topics on loopback.

Goals in, commands out (within the parameter limits, reaching the goal by an independent FK),
the seed following /joint_states, frames, refused goals, runtime parameters, track mode's
velocity limits, a late robot description, markers, clean shutdown, and the launch file.
"""

from __future__ import annotations

import math
import signal
import time

import numpy as np
import pytest
import yaml
from geometry_msgs.msg import PoseStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from ros_harness import CONFIG_DIR, PACKAGE_ROOT, NodeProcess, pose_message, running_node

from ik_node import load_robot

ARM7_URDF = PACKAGE_ROOT / "urdf" / "arm7.urdf"
ARM7_CONFIG = CONFIG_DIR / "arm7.yaml"
JOINTS = [f"joint{index}" for index in range(1, 8)]
Q_START = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])


pytestmark = pytest.mark.usefixtures("ros_context")  # (conftest.py)


def parameter_limits(config=ARM7_CONFIG):
    """``{joint: (min_position, max_position, max_velocity)}`` from a parameter file."""
    parameters = yaml.safe_load(config.read_text())["/**"]["ros__parameters"]
    return {
        joint: (limits["min_position"], limits["max_position"], limits["max_velocity"])
        for joint, limits in parameters["joint_limits"].items()
    }


def positions(command, names=JOINTS) -> np.ndarray:
    by_name = dict(zip(command.name, command.position))
    return np.array([by_name[name] for name in names])


def pose_error(robot, q, goal, tip="tool0", base="base_link"):
    """Position [m] and rotation angle [rad] between FK(q) (the model's own full-robot FK, not the
    solver's tree) and the goal."""
    reached = robot.forward(dict(zip(JOINTS, q)), tip, base)
    cosine = (np.trace(reached[:3, :3].T @ goal[:3, :3]) - 1) / 2
    return np.linalg.norm(reached[:3, 3] - goal[:3, 3]), math.acos(min(1.0, max(-1.0, cosine)))


@pytest.fixture
def arm7_node(request):
    with running_node("--params-file", str(ARM7_CONFIG), *getattr(request, "param", ())) as started:
        yield started


def test_goal_gives_a_command_within_the_parameter_limits_that_reaches_it(arm7, arm7_node):
    process, client = arm7_node
    limits = parameter_limits()
    rng = np.random.default_rng(4)
    for trial in range(5):
        target_q = [rng.uniform(limits[name][0], limits[name][1]) for name in JOINTS]
        goal = arm7.forward(dict(zip(JOINTS, target_q)), "tool0", "base_link")
        before = len(client.commands)
        client.send_goal(goal)
        command = client.wait_command(before)
        assert command is not None, f"no command for reachable goal {trial}:\n{process.log()}"
        q = positions(command)
        for name, value in zip(JOINTS, q):
            low, high, _ = limits[name]
            assert low <= value <= high, f"{name}={value} outside the parameter limits [{low}, {high}]"
        position_error, rotation_error = pose_error(arm7, q, goal)
        assert position_error < 1e-5 and rotation_error < 1e-5
    assert client.spin_until(lambda: len(client.statuses) >= 5)
    assert all(status["success"] == "true" for status in client.statuses)


def test_seed_follows_joint_states(arm7, arm7_node):
    """A goal at FK(joint states) is solved at the seed itself: the command equals the joint
    states, which only happens when the seed came from /joint_states."""
    _, client = arm7_node
    for q in (Q_START, Q_START + 0.15):
        client.send_joint_state(JOINTS, q)
        client.spin_for(0.3)
        before = len(client.commands)
        client.send_goal(arm7.forward(dict(zip(JOINTS, q)), "tool0", "base_link"))
        command = client.wait_command(before)
        assert command is not None
        np.testing.assert_allclose(positions(command), q, atol=1e-9)


@pytest.mark.parametrize(
    ("reliability", "durability"),
    [("RELIABLE", "VOLATILE"), ("BEST_EFFORT", "VOLATILE"), ("RELIABLE", "TRANSIENT_LOCAL")],
)
def test_goals_arrive_from_reliable_and_best_effort_publishers(arm7, arm7_node, reliability, durability):
    """The goal subscription is best effort and volatile, which every publisher's QoS matches: a
    best-effort publisher (teleop, high-rate streams) is connected and its goals are answered, as
    a reliable one's (RViz's goal tool, ``ros2 topic pub``) and a transient-local one's are."""
    _, client = arm7_node
    topic = "/ik_node/target_pose"

    def node_subscriptions():
        return [
            info for info in client.node.get_subscriptions_info_by_topic(topic) if info.node_name == "ik_node"
        ]

    assert client.spin_until(node_subscriptions), "the node's goal subscription was never discovered"
    (subscription,) = node_subscriptions()
    assert subscription.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT
    assert subscription.qos_profile.durability == DurabilityPolicy.VOLATILE
    qos = QoSProfile(
        depth=10, reliability=ReliabilityPolicy[reliability], durability=DurabilityPolicy[durability]
    )
    publisher = client.node.create_publisher(PoseStamped, topic, qos)
    try:
        assert client.spin_until(lambda: publisher.get_subscription_count() > 0), (
            f"a {reliability} {durability} goal publisher is not matched with the node's subscription"
        )
        goal = arm7.forward(dict(zip(JOINTS, Q_START)), "tool0", "base_link")
        before = len(client.commands)
        message = pose_message(goal, "base_link", client.node.get_clock().now().to_msg())
        for _ in range(3):  # (a best-effort goal may be dropped before both ends have matched)
            publisher.publish(message)
            if client.spin_until(lambda: len(client.commands) > before, 3.0):
                break
        assert len(client.commands) > before, f"no command for a goal from a {reliability} publisher"
        command = client.commands[before]
        position_error, rotation_error = pose_error(arm7, positions(command), goal)
        assert position_error < 1e-5 and rotation_error < 1e-5
    finally:
        client.node.destroy_publisher(publisher)


def test_goal_in_another_frame_of_the_model(arm7, arm7_node):
    _, client = arm7_node
    client.send_joint_state(JOINTS, Q_START)
    client.spin_for(0.3)
    goal_in_base = arm7.forward(dict(zip(JOINTS, Q_START + 0.1)), "tool0", "base_link")
    link3 = arm7.forward(dict(zip(JOINTS, Q_START)), "link3", "base_link")  # at the seed
    before = len(client.commands)
    client.send_goal(np.linalg.inv(link3) @ goal_in_base, frame_id="link3")
    command = client.wait_command(before)
    assert command is not None
    position_error, rotation_error = pose_error(arm7, positions(command), goal_in_base)
    assert position_error < 1e-5 and rotation_error < 1e-5


@pytest.mark.parametrize(
    "case",
    ["unknown frame", "NaN position", "zero quaternion", "infinite orientation"],
)
def test_bad_goal_gives_no_command_a_warning_and_a_status(arm7, arm7_node, case):
    process, client = arm7_node
    good = arm7.forward(dict(zip(JOINTS, Q_START)), "tool0", "base_link")
    client.send_goal(good)
    assert client.wait_command(0) is not None
    client.spin_until(lambda: len(client.statuses) >= 1)
    from ros_harness import pose_message

    message = pose_message(good, frame_id="camera_optical_frame" if case == "unknown frame" else "")
    if case == "NaN position":
        message.pose.position.y = math.nan
    elif case == "zero quaternion":
        message.pose.orientation.x = message.pose.orientation.y = 0.0
        message.pose.orientation.z = message.pose.orientation.w = 0.0
    elif case == "infinite orientation":
        message.pose.orientation.z = math.inf
    statuses, commands = len(client.statuses), len(client.commands)
    client.goal_publishers["tool0"].publish(message)
    assert client.spin_until(lambda: len(client.statuses) > statuses)
    status = client.statuses[statuses]
    assert status["success"] == "false" and status["reason"] == "invalid_goal"
    expected = {
        "unknown frame": "camera_optical_frame",
        "NaN position": "position must be finite",
        "zero quaternion": "zero quaternion",
        "infinite orientation": "orientation must be finite",
    }[case]
    assert expected in status["message"]
    assert process.wait_for_log(expected), process.log()
    client.spin_for(0.3)
    assert len(client.commands) == commands, "a bad goal produced a command"
    # The node keeps serving.
    client.send_goal(arm7.forward(dict(zip(JOINTS, Q_START + 0.05)), "tool0", "base_link"))
    assert client.wait_command(commands) is not None


def test_runtime_parameters_bad_rejected_good_applied(arm7, arm7_node):
    _, client = arm7_node
    for values, reason in (
        ({"method": "newton"}, "method must be one of"),
        ({"timeout": -1.0}, "timeout"),
        ({"mode": "teleport"}, "mode must be one of"),
        (
            {"joint_limits.joint1.min_position": 1.0, "joint_limits.joint1.max_position": 0.5},
            "above max_position",
        ),
        ({"joint_limits.joint1.max_velocity": -2.0}, "max_velocity must be a positive number"),
        ({"joint_limits.joint1.max_position": 5.0}, "above the URDF's upper limit 2.8973"),
        ({"tip_tasks.tool0": "everything"}, "tip_tasks.tool0 must be one of"),
        ({"base_link": "link2"}, "read-only"),
    ):
        result = client.set_parameters(**values)
        assert not result.successful, values
        assert reason in result.reason, (values, result.reason)
    # The old model still serves: a goal beyond the refused 0.5 upper limit of joint1 is met.
    before = len(client.commands)
    wide = Q_START.copy()
    wide[0] = 0.7
    client.send_goal(arm7.forward(dict(zip(JOINTS, wide)), "tool0", "base_link"))
    command = client.wait_command(before)
    assert command is not None
    assert (
        max(pose_error(arm7, positions(command), arm7.forward(dict(zip(JOINTS, wide)), "tool0", "base_link")))
        < 1e-5
    )
    # A tighter limit on joint1 takes effect at the next solve.
    result = client.set_parameters(**{"joint_limits.joint1.max_position": 0.25})
    assert result.successful, result.reason
    q = Q_START.copy()
    q[0] = 0.1
    before = len(client.commands)
    client.send_goal(arm7.forward(dict(zip(JOINTS, q)), "tool0", "base_link"))
    command = client.wait_command(before)
    assert command is not None
    assert positions(command)[0] <= 0.25


@pytest.mark.parametrize(
    "arm7_node",
    [("-p", "mode:=track", "-p", "publish_rate:=50.0", "-p", "joint_limits.joint4.max_velocity:=0.8")],
    indirect=True,
)
def test_track_mode_keeps_every_joint_within_max_velocity_over_a_goal_jump(arm7, arm7_node):
    process, client = arm7_node
    limits = parameter_limits()
    max_velocity = np.array([limits[name][2] for name in JOINTS])
    max_velocity[3] = 0.8  # from the command line, tighter than the file
    period = 1.0 / 50.0
    client.send_joint_state(JOINTS, Q_START)
    client.spin_for(0.3)
    jump = Q_START + np.array([0.8, 0.5, -0.6, 0.9, 0.7, -0.5, 1.0])
    goal = arm7.forward(dict(zip(JOINTS, jump)), "tool0", "base_link")
    client.send_goal(goal)

    def settled():  # the last command stops (zero velocity) once the goal is reached
        return client.commands and client.commands[-1].velocity and not any(client.commands[-1].velocity)

    assert client.spin_until(settled, timeout=30.0), process.log()[-2000:]
    trajectory = np.array([positions(command) for command in client.commands])
    velocities = np.array([positions_velocity(command) for command in client.commands])
    assert len(trajectory) > 10  # the jump took many steps
    steps = np.abs(np.diff(np.vstack([Q_START, trajectory]), axis=0))
    assert np.all(steps <= max_velocity * period * (1 + 1e-9) + 1e-12), steps.max(axis=0)
    assert np.all(np.abs(velocities) <= max_velocity * (1 + 1e-9))
    # Uniform scaling: all moving joints arrive together (the slowest sets the pace).
    position_error, rotation_error = pose_error(arm7, trajectory[-1], goal)
    assert position_error < 1e-5 and rotation_error < 1e-5


def positions_velocity(command) -> np.ndarray:
    by_name = dict(zip(command.name, command.velocity))
    return np.array([by_name[name] for name in JOINTS])


def test_robot_description_arriving_late_on_the_topic(arm7):
    with running_node("-p", "tip_links:=[tool0]", "-p", "base_link:=base_link", wait_ready=False) as (
        process,
        client,
    ):
        assert process.wait_for_log("waiting for the robot description on /robot_description")
        goal = arm7.forward(dict(zip(JOINTS, Q_START)), "tool0", "base_link")
        # before the description: refused with a status, no command
        assert client.send_goal_until(goal, lambda: client.statuses)
        assert client.statuses[0]["reason"] == "no_robot_description"
        from std_msgs.msg import String

        client.description_publisher.publish(String(data=ARM7_URDF.read_text()))
        assert process.wait_for_log("robot 'arm7' loaded from /robot_description"), process.log()
        client.send_goal(goal)
        command = client.wait_command(0)
        assert command is not None
        position_error, rotation_error = pose_error(arm7, positions(command), goal)
        assert position_error < 1e-5 and rotation_error < 1e-5


def test_markers_are_valid_for_rviz(arm7, arm7_node):
    _, client = arm7_node
    client.send_goal(arm7.forward(dict(zip(JOINTS, Q_START)), "tool0", "base_link"))
    assert client.spin_until(lambda: client.markers)
    keys = set()
    for marker in client.markers[-1].markers:
        assert marker.header.frame_id == "base_link"
        orientation = marker.pose.orientation
        norm = math.sqrt(orientation.x**2 + orientation.y**2 + orientation.z**2 + orientation.w**2)
        assert abs(norm - 1) < 1e-9
        assert min(marker.scale.x, marker.scale.y, marker.scale.z) > 0 and marker.color.a > 0
        keys.add((marker.ns, marker.id))
    assert keys == {("goal", 0), ("reached", 0)}


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_clean_shutdown_on_signals(signal_number):
    process = NodeProcess("--params-file", str(ARM7_CONFIG))
    assert process.wait_for_log("robot 'arm7' loaded")
    assert process.stop(signal_number) == 0
    assert "Traceback" not in process.log()


def test_sigint_shuts_down_without_a_keyboard_interrupt_at_any_line():
    """What keeps a SIGINT from landing inside rclpy's own objects (a half-made Task's finaliser
    printed a traceback once): while the node runs, Python's SIGINT handler raises nothing (rclpy's
    handler, chained before it, shuts the context down); afterwards the previous one is back."""
    import os

    from ik_node.ros.node import _stop_without_keyboard_interrupt

    previous = _stop_without_keyboard_interrupt()
    try:
        assert previous is signal.default_int_handler
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # (Python runs its handler between bytecodes: a KeyboardInterrupt here)
    finally:
        signal.signal(signal.SIGINT, previous)
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)


def test_unusable_configuration_exits_with_a_clear_error():
    process = NodeProcess("-p", "robot_description_file:=package://ik_node/urdf/arm7.urdf")
    assert process.process.wait(30) == 2
    assert "parameter tip_links is required" in process.log()


def test_parameter_file_naming_unknown_joints_warns(tmp_path):
    config = yaml.safe_load(ARM7_CONFIG.read_text())
    config["/**"]["ros__parameters"]["joint_limits"]["elbow_of_another_robot"] = {"max_velocity": 1.0}
    path = tmp_path / "arm7_unknown.yaml"
    path.write_text(yaml.safe_dump(config))
    process = NodeProcess("--params-file", str(path))
    try:
        assert process.wait_for_log("joint_limits.elbow_of_another_robot.max_velocity' names no joint"), (
            process.log()
        )
    finally:
        assert process.stop() == 0


def test_new_description_at_run_time_reloads_or_is_refused_whole(arm7):
    with running_node("-p", "tip_links:=[tool0]", "-p", "base_link:=base_link", wait_ready=False) as (
        process,
        client,
    ):
        from std_msgs.msg import String

        client.description_publisher.publish(String(data=ARM7_URDF.read_text()))
        assert process.wait_for_log("robot 'arm7' loaded from /robot_description")
        for broken, reason in (
            ("<robot name='broken'><link name='a'/>", "malformed URDF XML"),
            (
                (PACKAGE_ROOT / "urdf" / "arm6.urdf").read_text().replace("tool0", "tcp"),
                "unknown link 'tool0'",
            ),
        ):
            client.description_publisher.publish(String(data=broken))
            assert process.wait_for_log(reason), process.log()
            goal = arm7.forward(dict(zip(JOINTS, Q_START)), "tool0", "base_link")
            before = len(client.commands)
            client.send_goal(goal)  # still the arm7 model: its seven joints, its goal met
            command = client.wait_command(before)
            assert command is not None and list(command.name) == JOINTS
            assert max(pose_error(arm7, positions(command), goal)) < 1e-5
        client.description_publisher.publish(String(data=(PACKAGE_ROOT / "urdf" / "arm6.urdf").read_text()))
        assert process.wait_for_log("robot 'arm6' loaded from /robot_description")
        assert "refused" in process.log()


@pytest.mark.parametrize(
    "arm7_node",
    [("-p", "joint_state_timeout:=0.3")],
    indirect=True,
)
def test_stale_joint_states_fall_back_to_the_last_command_with_one_warning(arm7, arm7_node):
    process, client = arm7_node
    client.send_joint_state(JOINTS, Q_START)
    # A goal answered now proves the joint state was handled (the node handles /joint_states
    # before goals): fresh then, no warning. (The node times a state by its arrival; on a loaded
    # machine a sleep alone may end before the node even reads it.)
    before = len(client.commands)
    client.send_goal(arm7.forward(dict(zip(JOINTS, Q_START)), "tool0", "base_link"))
    assert client.wait_command(before) is not None
    client.spin_for(0.6)  # older than joint_state_timeout by now
    for offset in (0.05, 0.1):
        before = len(client.commands)
        client.send_goal(arm7.forward(dict(zip(JOINTS, Q_START + offset)), "tool0", "base_link"))
        assert client.wait_command(before) is not None
    client.spin_for(0.2)
    assert process.log().count("older than joint_state_timeout") == 1, process.log()


@pytest.mark.parametrize("arm7_node", [("-p", "mode:=track", "-p", "publish_rate:=50.0")], indirect=True)
def test_limit_guard_refuses_commands_outside_tightened_limits(arm7, arm7_node):
    """Track mode steps from its last command; after joint1's upper limit is tightened below it,
    the next steps would start outside the limits: the guard refuses them, nothing is published,
    and the node says why."""
    process, client = arm7_node
    client.send_joint_state(JOINTS, Q_START)
    client.spin_for(0.3)
    client.send_goal(arm7.forward(dict(zip(JOINTS, Q_START + 0.1)), "tool0", "base_link"))
    assert client.spin_until(lambda: client.commands and not any(client.commands[-1].velocity), 10.0)
    assert positions(client.commands[-1])[0] > 0.2
    assert client.set_parameters(**{"joint_limits.joint1.max_position": 0.2}).successful
    target = Q_START.copy()
    target[0] = 0.1
    before = len(client.commands)
    client.send_goal(arm7.forward(dict(zip(JOINTS, target)), "tool0", "base_link"))
    assert process.wait_for_log("command refused by the limit guard: joint 'joint1' position"), process.log()
    client.spin_for(0.3)
    assert len(client.commands) == before, "a command outside the limits was published"
    assert any(status["reason"] == "limit_guard" for status in client.statuses)


def test_two_tips_each_with_its_goal_topic_are_met_together():
    robot = load_robot(PACKAGE_ROOT / "urdf" / "dual_arm.urdf")
    tips = ("left_tool0", "right_tool0")
    with running_node(
        "--params-file", str(CONFIG_DIR / "dual_arm.yaml"), "-p", "timeout:=0.2", tips=tips
    ) as (process, client):
        tree = robot.tree("base_link", list(tips))
        q = np.clip(np.linspace(-0.4, 0.5, len(tree.joint_names)), tree.lower, tree.upper)
        goals = {tip: tree.forward(q, tip) for tip in tips}
        client.send_goal(goals["left_tool0"], tip="left_tool0")
        assert client.wait_command(0) is not None
        client.send_goal(goals["right_tool0"], tip="right_tool0")  # the left goal is kept
        command = client.wait_command(1)
        assert command is not None
        reached = dict(zip(command.name, command.position))
        for tip in tips:
            pose = tree.forward(reached, tip)
            assert np.linalg.norm(pose[:3, 3] - goals[tip][:3, 3]) < 1e-5, tip


@pytest.mark.parametrize(
    "arm7_node",
    [("-p", "publish_trajectory:=true")],
    indirect=True,
)
def test_joint_trajectory_for_ros2_control(arm7, arm7_node):
    from trajectory_msgs.msg import JointTrajectory

    _, client = arm7_node
    trajectories = []
    client.node.create_subscription(JointTrajectory, "/ik_node/joint_trajectory", trajectories.append, 10)
    client.spin_for(0.5)
    client.send_goal(arm7.forward(dict(zip(JOINTS, Q_START)), "tool0", "base_link"))
    assert client.spin_until(lambda: trajectories and client.commands)
    trajectory = trajectories[0]
    assert list(trajectory.joint_names) == JOINTS and len(trajectory.points) == 1
    point = trajectory.points[0]
    np.testing.assert_allclose(point.positions, client.commands[0].position)
    duration = point.time_from_start.sec + point.time_from_start.nanosec * 1e-9
    assert duration >= 0.1  # min_trajectory_duration, or the slowest joint at its velocity limit


@pytest.mark.parametrize("config", sorted(path.name for path in CONFIG_DIR.glob("*.yaml")))
def test_every_shipped_parameter_file_starts_the_node_without_warnings(config):
    process = NodeProcess("--params-file", str(CONFIG_DIR / config))
    try:
        assert process.wait_for_log("loaded from robot_description_file"), process.log()
    finally:
        assert process.stop() == 0
    log = process.log()
    assert "[WARN]" not in log and "[ERROR]" not in log, log


def test_goals_refused_with_the_reason_the_description_was_refused(arm7):
    with running_node(
        "--params-file",
        str(ARM7_CONFIG),
        "-p",
        "tip_links:=[gripper_tip]",
        tips=("gripper_tip",),
        wait_ready=False,
    ) as (process, client):
        assert process.wait_for_log("refused: unknown link 'gripper_tip'"), process.log()
        assert client.send_goal_until(np.eye(4), lambda: client.statuses)  # (best effort, just started)
        status = client.statuses[0]
        assert (
            status["reason"] == "no_robot_description" and "unknown link 'gripper_tip'" in status["message"]
        )
        assert "tool0" in status["message"]  # the known links are listed


def test_limits_refused_at_start_up_fall_back_to_the_urdf_and_do_not_block_later_changes(arm7, tmp_path):
    config = yaml.safe_load(ARM7_CONFIG.read_text())
    joint_limits = config["/**"]["ros__parameters"]["joint_limits"]
    joint_limits["joint2"]["max_position"] = 3.5  # wider than the URDF's 1.7628
    joint_limits["joint3"]["min_position"], joint_limits["joint3"]["max_position"] = 1.0, -1.0
    path = tmp_path / "arm7_wide.yaml"
    path.write_text(yaml.safe_dump(config))
    with running_node("--params-file", str(path)) as (process, client):
        # (the description loads after the node's topics are up: wait for its log)
        assert process.wait_for_log("loaded from robot_description_file"), process.log()
        log = process.log()
        assert "joint_limits.joint2.max_position 3.5 is above the URDF's upper limit 1.7628" in log, log
        assert "joint_limits.joint3: min_position 1.0 is above max_position -1.0" in log, log
        assert client.set_parameters(timeout=0.1).successful  # unrelated changes still go through
        q = Q_START.copy()
        q[2] = 2.0  # inside the URDF's range for joint3 (its refused override would have excluded it)
        before = len(client.commands)
        client.send_goal(arm7.forward(dict(zip(JOINTS, q)), "tool0", "base_link"))
        command = client.wait_command(before)
        assert command is not None
        assert positions(command)[1] <= 1.7628


# ---------------------------------------------------------------- steady state, ros2_control, services


def test_a_subscriber_that_starts_late_receives_the_joint_state_within_a_second(arm7):
    """~/joint_states repeats the latest command at joint_state_rate (10 Hz by default): a
    robot_state_publisher started 3 s after the node still shows the robot, at once."""
    from sensor_msgs.msg import JointState

    with running_node("--params-file", str(ARM7_CONFIG), "-p", "publish_rest_posture_at_start:=true") as (
        _,
        client,
    ):
        client.spin_for(3.0)
        received = []
        client.node.create_subscription(JointState, "/ik_node/joint_states", received.append, 10)
        began = time.monotonic()
        assert client.spin_until(lambda: received, timeout=5.0)
        assert time.monotonic() - began < 1.0 + 0.5  # (+ discovery of the new reader)
        state = received[0]
        assert list(state.name) == JOINTS
        rest = np.array([0.5 * (low + high) for low, high, _ in parameter_limits().values()])
        np.testing.assert_allclose(positions(state), rest, atol=1e-9)
        goal = arm7.forward(dict(zip(JOINTS, Q_START)), "tool0", "base_link")
        before = len(client.commands)
        client.send_goal(goal)
        command = client.wait_command(before)
        assert client.spin_until(lambda: np.allclose(positions(received[-1]), positions(command)))


@pytest.mark.parametrize(
    "arm7_node",
    [
        (
            "-p",
            "publish_position_commands:=true",
            "-p",
            "command_joints:=[joint7,joint1,joint3,joint2,joint4,joint6,joint5]",
        )
    ],
    indirect=True,
)
def test_position_commands_equal_the_joint_state_command_in_command_joints_order(arm7, arm7_node):
    from std_msgs.msg import Float64MultiArray

    _, client = arm7_node
    arrays = []
    client.node.create_subscription(Float64MultiArray, "/ik_node/position_commands", arrays.append, 10)
    order = ["joint7", "joint1", "joint3", "joint2", "joint4", "joint6", "joint5"]
    assert client.spin_until(lambda: client.node.count_subscribers("/ik_node/position_commands") > 0)
    client.spin_for(0.5)
    for offset in (0.0, 0.1):
        before, arrays_before = len(client.commands), len(arrays)
        client.send_goal(arm7.forward(dict(zip(JOINTS, Q_START + offset)), "tool0", "base_link"))
        command = client.wait_command(before)
        assert command is not None
        assert client.spin_until(lambda count=arrays_before: len(arrays) > count)
        np.testing.assert_array_equal(arrays[-1].data, positions(command, order))


def test_command_joints_naming_an_unknown_joint_refuses_the_description_clearly():
    with running_node(
        "--params-file", str(ARM7_CONFIG), "-p", "command_joints:=[joint1,gripper]", wait_ready=False
    ) as (
        process,
        _,
    ):
        assert process.wait_for_log("command_joints must name each joint of the chain"), process.log()


def call(client, service_type, name: str, **fields):
    """Call a service of the node under test; the response."""
    service = client.node.create_client(service_type, f"/ik_node/{name}")
    assert service.wait_for_service(timeout_sec=10.0), f"no ~/{name} service"
    future = service.call_async(service_type.Request(**fields))
    assert client.spin_until(future.done), f"~/{name} did not answer"
    return future.result()


def test_enable_pauses_and_resumes_and_reset_reseeds_from_joint_states(arm7, arm7_node):
    from sensor_msgs.msg import JointState
    from std_srvs.srv import SetBool, Trigger

    _, client = arm7_node
    states = []
    client.node.create_subscription(JointState, "/ik_node/joint_states", states.append, 10)
    goal = arm7.forward(dict(zip(JOINTS, Q_START)), "tool0", "base_link")
    before = len(client.commands)
    client.send_goal(goal)
    assert client.wait_command(before) is not None
    paused = call(client, SetBool, "enable", data=False)
    assert paused.success and "paused" in paused.message
    again = call(client, SetBool, "enable", data=False)
    assert again.success and again.message == "already paused"
    statuses, commands, seen = len(client.statuses), len(client.commands), len(states)
    client.send_goal(arm7.forward(dict(zip(JOINTS, Q_START + 0.05)), "tool0", "base_link"))
    assert client.spin_until(lambda: len(client.statuses) > statuses)
    assert client.statuses[-1]["reason"] == "paused" and client.statuses[-1]["success"] == "false"
    assert client.spin_until(lambda: len(states) >= seen + 3), "~/joint_states stopped while paused"
    assert len(client.commands) == commands, "a paused node published a command"
    resumed = call(client, SetBool, "enable", data=True)
    assert resumed.success and "enabled" in resumed.message
    # reset: the next goal is seeded from /joint_states (a state next to the goal's solution)
    target = Q_START + np.array([0.2, -0.1, 0.1, 0.1, -0.1, 0.1, 0.1])
    client.send_joint_state(JOINTS, target + 1e-4)
    client.spin_for(0.2)
    reset = call(client, Trigger, "reset")
    assert reset.success and "seeded from /joint_states" in reset.message
    before = len(client.commands)
    client.send_joint_state(JOINTS, target + 1e-4)
    client.send_goal(arm7.forward(dict(zip(JOINTS, target)), "tool0", "base_link"))
    command = client.wait_command(before)
    assert command is not None
    np.testing.assert_allclose(positions(command), target, atol=1e-3)


def invalid_value(spec):
    """A value of the right kind outside the spec's range or choices (None: nothing to break)."""
    if spec.choices:
        return "bogus"
    if spec.high is not None:
        return spec.high + (1 if spec.kind == "integer" else 1.0)
    return None


def test_every_schema_parameter_is_declared_and_refuses_invalid_values_naming_the_valid_ones(arm7_node):
    """Each parameter of the schema exists on the node; an out-of-range or unknown value is
    refused with the range or the choices in the reason; read-only ones refuse any change."""
    from rcl_interfaces.srv import ListParameters

    from ik_node.decisions.parameters import JOINT_PARAMETERS, NODE_PARAMETERS, TIP_PARAMETERS

    _, client = arm7_node
    service = client.node.create_client(ListParameters, "/ik_node/list_parameters")
    assert service.wait_for_service(timeout_sec=10.0)
    future = service.call_async(ListParameters.Request())
    assert client.spin_until(future.done)
    declared = set(future.result().result.names)
    instances = [(spec, spec.name) for spec in NODE_PARAMETERS]
    instances += [(spec, spec.name.format("joint4")) for spec in JOINT_PARAMETERS]
    instances += [(spec, spec.name.format("tool0")) for spec in TIP_PARAMETERS]
    for spec, name in instances:
        assert name in declared, name
        if spec.read_only:
            value = "x" if spec.kind == "string" else (["x"] if spec.kind == "string_array" else True)
            result = client.set_parameters(**{name: value})
            assert not result.successful and "read-only" in result.reason, (name, result.reason)
            continue
        value = invalid_value(spec)
        if value is None:
            continue
        result = client.set_parameters(**{name: value})
        assert not result.successful, name
        if spec.choices:
            assert str(list(spec.choices)) in result.reason, (name, result.reason)
        else:  # (rclpy's own range check, or ours: the bounds either way)
            bounds = {f"{spec.high:g}", str(spec.high), str(int(spec.high))}
            assert any(bound in result.reason for bound in bounds), (name, result.reason)


def test_a_xacro_that_fails_to_expand_is_refused_naming_the_file_and_goals_get_the_reason(tmp_path):
    broken = tmp_path / "broken.urdf.xacro"
    broken.write_text(
        '<robot name="broken" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
        '  <xacro:include filename="$(find no_such_description)/urdf/arm.xacro"/>\n</robot>\n'
    )
    with running_node(
        "--params-file", str(ARM7_CONFIG), "-p", f"robot_description_file:={broken}", wait_ready=False
    ) as (process, client):
        assert process.wait_for_log("robot description from robot_description_file"), process.log()
        assert client.send_goal_until(np.eye(4), lambda: client.statuses)
        status = client.statuses[0]
        assert status["reason"] == "no_robot_description"
        assert "no_such_description" in status["message"] and "package_paths" in status["message"], status
        assert client.commands == []


def test_python_warnings_reach_the_ros_log(tmp_path):
    """A URDF problem off the chain (a joint of an unknown type: loaded, refused only when used) is a
    Python warning in the library; in the node it reaches the ROS logger (and so /rosout, launch
    logs)."""
    urdf = tmp_path / "arm7_with_camera.urdf"
    urdf.write_text(
        ARM7_URDF.read_text().replace(
            "</robot>",
            '<link name="camera"/><joint name="camera_joint" type="screw">'
            '<parent link="base_link"/><child link="camera"/></joint></robot>',
        )
    )
    with running_node("--params-file", str(ARM7_CONFIG), "-p", f"robot_description_file:={urdf}") as (
        process,
        _,
    ):
        assert process.wait_for_log("[WARN]"), process.log()
        warning = next(line for line in process.log().splitlines() if "[WARN]" in line)
        assert "[ik_node]: UserWarning: URDF: joint 'camera_joint' cannot be used" in warning, warning


def test_a_fixed_branch_answers_goals_on_it_and_a_bad_value_is_refused_at_run_time():
    """arm6 (a closed form) with ``branch`` set to another branch than the current joints': a goal
    they already meet is answered on the parameter's branch, by the solution nearest them (read
    from the complete set of a solver with the node's limits); a value that is no label is refused
    naming the valid ones, the branch in use staying; a new label takes effect at the next goal."""
    from ik_node import IKSolver

    config = CONFIG_DIR / "arm6.yaml"
    limits = parameter_limits(config)
    arm6 = load_robot(PACKAGE_ROOT / "urdf" / "arm6.urdf")
    solver = IKSolver(
        arm6,
        "base_link",
        "tool0",
        lower={joint: low for joint, (low, _, _) in limits.items()},
        upper={joint: high for joint, (_, high, _) in limits.items()},
        compile_helper=False,
    )
    names = list(solver.joint_names)
    q = np.array([0.3, -1.0, 1.2, -0.4, 0.8, 0.1])
    goal = arm6.forward(dict(zip(names, q)), "tool0", "base_link")
    every = solver.solve_all(goal, seed=q)
    own = set(every.labels[0])  # (q itself: the nearest solution to q)
    other = next(set(labels) for labels in every.labels if set(labels) != own)

    def answer(branch: set) -> np.ndarray:
        """The command for the goal from q, on ``branch`` and the nearest of it to q."""
        before = len(client.commands)
        client.send_goal(goal)
        command = client.wait_command(before)
        assert command is not None, process.log()[-2000:]
        reached = positions(command, names)
        rows = [row for row, labels in enumerate(every.labels) if set(labels) == branch]
        nearest = min(rows, key=lambda row: np.sum((every.q[row] - q) ** 2))
        np.testing.assert_allclose(reached, every.q[nearest], atol=1e-6)
        return reached

    with running_node("--params-file", str(config), "-p", f"branch:={' '.join(sorted(other))}") as (
        process,
        client,
    ):
        client.send_joint_state(names, q)
        client.spin_for(0.3)
        assert np.abs(answer(other) - q).max() > 0.1  # (not the current joints' own branch)
        result = client.set_parameters(branch="elbow_up")
        assert not result.successful
        assert "parameter branch must be 'nearest' or a branch label" in result.reason, result.reason
        assert "'shoulder+ elbow+ wrist+'" in result.reason and "got 'elbow_up'" in result.reason
        answer(other)
        result = client.set_parameters(branch=" ".join(reversed(sorted(own))))
        assert result.successful, result.reason
        np.testing.assert_allclose(answer(own), q, atol=1e-6)
    assert all(status["success"] == "true" for status in client.statuses), client.statuses
