"""The node on whole-body trees through real topics (issue 17): the bundled humanoid with a
free-floating base (``root_joint: floating``, ``base_link: world``, tips both feet and the left
hand), and a rover whose URDF has a planar joint of its own (its parameter file from ``ik_node
config``).

Goals are the library's FK of random configurations, the base's pose included; the node's answer
must reproduce them: the library's FK of the configuration made of the published JointState (the
1-DOF joints, by name) and the published ``~/base_pose`` (position, quaternion x y z w, in the
base link's frame) puts every tip on its goal. Also: the base's TF (through tf2_ros, or a stand-in
where it is not importable: ``test/stand_ins``), the base seeded from the last command (never from
``/joint_states``), the ros2_control outputs carrying the 1-DOF joints only, track mode on the
configuration manifold, and bad ``root_joint`` values refused naming the parameter.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from geometry_msgs.msg import PoseStamped, TransformStamped
from ros_harness import PACKAGE_ROOT, Client, NodeProcess, ros_environment
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from ik_node import load_robot
from ik_node.decisions.control import JointLayout

HUMANOID_URDF = PACKAGE_ROOT / "urdf" / "humanoid.urdf"
TIPS = ("left_foot", "right_foot", "left_hand")
HAS_TF2 = importlib.util.find_spec("tf2_ros") is not None
STAND_INS = Path(__file__).resolve().parent / "stand_ins"
#: Per-tip tolerance of the check [m, rad]: the node's position/orientation_tolerance (1e-5) plus
#: the rounding of the messages.
TOLERANCE = 2e-5
#: A rover: a planar joint from 'map' (x, y, theta) and a slewing, extending boom.
ROVER = """<robot name="rover">
  <link name="map"/><link name="chassis"/><link name="boom"/><link name="tool"/>
  <joint name="drive" type="planar"><parent link="map"/><child link="chassis"/><axis xyz="0 0 1"/></joint>
  <joint name="slew" type="revolute"><parent link="chassis"/><child link="boom"/><axis xyz="0 1 0"/>
    <origin xyz="0.2 0 0.3"/><limit lower="-1.2" upper="1.2" velocity="1" effort="1"/></joint>
  <joint name="reach" type="prismatic"><parent link="boom"/><child link="tool"/><axis xyz="1 0 0"/>
    <limit lower="0.1" upper="0.8" velocity="0.5" effort="1"/></joint>
</robot>"""

pytestmark = pytest.mark.usefixtures("ros_context")  # (conftest.py)


@pytest.fixture(scope="module")
def humanoid():
    robot = load_robot(HUMANOID_URDF, root_joint="floating")
    return robot, robot.tree("world", TIPS)


def node_environment() -> dict:
    """DDS on loopback (ros_environment), and the tf2_ros stand-in where tf2_ros is missing."""
    environment = ros_environment()
    if not HAS_TF2:
        environment["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(STAND_INS), environment.get("PYTHONPATH")])
        )
    return environment


class WholeBodyClient(Client):
    """The harness's client, also recording ``~/base_pose``, ``~/joint_states``, the ros2_control
    outputs and the base's TF (the stand-in's topic where tf2_ros is missing)."""

    def __init__(self, tips, node_name: str = "ik_node"):
        super().__init__(node_name=node_name, tips=tips)
        self.base_poses: list[PoseStamped] = []
        self.states: list[JointState] = []
        self.trajectories: list[JointTrajectory] = []
        self.position_commands: list[Float64MultiArray] = []
        self.transforms: list[TransformStamped] = []
        node = self.node
        node.create_subscription(PoseStamped, f"/{node_name}/base_pose", self.base_poses.append, 100)
        node.create_subscription(JointState, f"/{node_name}/joint_states", self.states.append, 100)
        node.create_subscription(
            JointTrajectory, f"/{node_name}/joint_trajectory", self.trajectories.append, 100
        )
        node.create_subscription(
            Float64MultiArray, f"/{node_name}/position_commands", self.position_commands.append, 100
        )
        self.tf_buffer = None
        if HAS_TF2:
            import tf2_ros

            self.tf_buffer = tf2_ros.Buffer()
            self.tf_listener = tf2_ros.TransformListener(self.tf_buffer, node)
        else:
            node.create_subscription(TransformStamped, "/tf_stand_in", self.transforms.append, 100)

    def latest_transform(self, parent: str, child: str) -> TransformStamped | None:
        if self.tf_buffer is not None:
            from rclpy.time import Time

            return self.tf_buffer.lookup_transform(parent, child, Time())
        found = [t for t in self.transforms if (t.header.frame_id, t.child_frame_id) == (parent, child)]
        return found[-1] if found else None


def start(*ros_arguments: str, tips=TIPS, name: str = "ik_node", wait_ready: bool = True):
    """The node (named ``name``: the module's humanoid node runs meanwhile as ``ik_node``, so the
    others have names of their own, not starting with it) and a client discovered with it."""
    process = NodeProcess(*ros_arguments, name=name, environment=node_environment())
    client = WholeBodyClient(tips, name)
    try:
        client.wait_connected()
        if wait_ready:
            client.wait_ready()
    except BaseException:
        client.close()
        process.stop()
        raise
    return process, client


def stop(process, client) -> None:
    client.close()
    assert process.stop() == 0, process.log()[-2000:]


@pytest.fixture(scope="module")
def humanoid_node(ros_context, tmp_path_factory):
    params = tmp_path_factory.mktemp("whole_body") / "humanoid_floating.yaml"
    params.write_text(
        yaml.safe_dump(
            {
                "ik_node": {
                    "ros__parameters": {
                        "robot_description_file": str(HUMANOID_URDF),
                        "root_joint": "floating",
                        "base_link": "world",
                        "tip_links": list(TIPS),
                        "publish_trajectory": True,
                        "publish_position_commands": True,
                    }
                }
            }
        )
    )
    process, client = start("--params-file", str(params))
    yield process, client
    stop(process, client)


# ------------------------------------------------------------------ helpers


def random_configuration(tree, rng) -> np.ndarray:
    """Every 1-DOF joint uniform within its limits (the middle 80%), the base 0.3 m around
    (0, 0, 0.8) and turned up to ~1 rad about a random axis."""
    q = tree.neutral.copy()
    bounded = np.isfinite(tree.lower)
    lower, upper = tree.lower[bounded], tree.upper[bounded]
    q[bounded] = 0.5 * (lower + upper) + 0.4 * (upper - lower) * rng.uniform(-1, 1, bounded.sum())
    q[:3] = rng.uniform((-0.3, -0.3, 0.5), (0.3, 0.3, 1.1))
    axis = rng.normal(size=3)
    angle = rng.uniform(0.4, 1.0)
    q[3:7] = [*(math.sin(angle / 2) * axis / np.linalg.norm(axis)), math.cos(angle / 2)]  # x y z w
    return q


def published_configuration(tree, command: JointState, base_pose: PoseStamped) -> np.ndarray:
    """The configuration the node published: 1-DOF joints by name, the floating base's
    coordinates (pinocchio's x y z qx qy qz qw) from the PoseStamped (ROS's x y z w order)."""
    position, orientation = base_pose.pose.position, base_pose.pose.orientation
    values = dict(zip(command.name, command.position))
    values["root_joint"] = [position.x, position.y, position.z, orientation.x, orientation.y, orientation.z,
                            orientation.w]  # fmt: skip
    return tree.joint_vector(values)


def pose_error(reached: np.ndarray, goal: np.ndarray) -> tuple[float, float]:
    cosine = (np.trace(reached[:3, :3].T @ goal[:3, :3]) - 1) / 2
    return float(np.linalg.norm(reached[:3, 3] - goal[:3, 3])), math.acos(min(1.0, max(-1.0, cosine)))


def send_goals_and_wait(client, goals: dict, timeout: float = 20.0) -> dict:
    """Send every tip's goal; once the node has answered each (a status per goal), the last
    status, and the latest command, base pose and joint state (all published by then)."""
    statuses = len(client.statuses)
    for tip, goal in goals.items():
        client.send_goal(goal, tip)
    assert client.spin_until(lambda: len(client.statuses) >= statuses + len(goals), timeout)
    client.spin_for(0.5)  # the command, base pose and joint state of the last answer
    return {
        "status": client.statuses[-1],
        "command": client.commands[-1] if client.commands else None,
        "base_pose": client.base_poses[-1] if client.base_poses else None,
        "state": client.states[-1] if client.states else None,
    }


# ------------------------------------------------------------------ floating base


def test_goals_are_reached_by_the_published_joints_at_the_published_base_pose(humanoid, humanoid_node):
    robot, tree = humanoid
    process, client = humanoid_node
    layout = JointLayout.of(tree)
    rng = np.random.default_rng(17)
    for trial in range(3):
        target = random_configuration(tree, rng)
        goals = {tip: tree.forward(target, tip) for tip in TIPS}
        answer = send_goals_and_wait(client, goals)
        assert answer["status"]["success"] == "true", (trial, answer["status"], process.log()[-3000:])
        command, base_pose = answer["command"], answer["base_pose"]
        assert list(command.name) == list(layout.names)  # the 1-DOF joints only, in the tree's order
        assert not any("/" in name for name in command.name)
        assert base_pose.header.frame_id == "world"
        orientation = base_pose.pose.orientation
        assert abs(math.hypot(orientation.x, orientation.y, orientation.z, orientation.w) - 1) < 1e-9
        q = published_configuration(tree, command, base_pose)
        for tip in TIPS:
            position_error, rotation_error = pose_error(tree.forward(q, tip), goals[tip])
            assert position_error < TOLERANCE and rotation_error < TOLERANCE, (trial, tip)
        # the same pose through the model's own full-robot FK (world -> tip)
        full_robot = robot.forward(dict(zip(tree.joint_names, q)), "left_hand")
        assert pose_error(full_robot, goals["left_hand"])[0] < TOLERANCE
        # ~/joint_states repeats the command; the base's TF is its pose (world -> pelvis)
        state = answer["state"]
        assert list(state.name) == list(command.name)
        np.testing.assert_allclose(state.position, command.position, atol=1e-12)
        transform = client.latest_transform("world", "pelvis")
        assert transform is not None, "no TF world -> pelvis"
        translation, rotation = transform.transform.translation, transform.transform.rotation
        np.testing.assert_allclose(
            [translation.x, translation.y, translation.z, rotation.x, rotation.y, rotation.z, rotation.w],
            q[:7],
            atol=1e-9,
        )
    # ros2_control's outputs: the 1-DOF joints only
    assert list(client.trajectories[-1].joint_names) == list(layout.names)
    np.testing.assert_allclose(client.trajectories[-1].points[0].positions, command.position, atol=1e-12)
    np.testing.assert_allclose(client.position_commands[-1].data, command.position, atol=1e-12)
    if not HAS_TF2:
        assert "tf2_ros is not importable" not in process.log()  # (the stand-in was used)


def test_the_base_is_seeded_from_the_last_command_never_from_joint_states(humanoid, humanoid_node):
    """A goal at the current pose of the hand is met at the seed itself: the command repeats the
    last one, base included, although /joint_states names base coordinates far away (which the
    node must ignore: a floating base's pose never comes from /joint_states)."""
    _, tree = humanoid
    _, client = humanoid_node
    target = random_configuration(tree, np.random.default_rng(3))
    goals = {tip: tree.forward(target, tip) for tip in TIPS}
    first = send_goals_and_wait(client, goals)
    assert first["status"]["success"] == "true"
    q = published_configuration(tree, first["command"], first["base_pose"])
    names = [*first["command"].name, "root_joint/x", "root_joint/z", "root_joint/qw"]
    client.send_joint_state(names, [*first["command"].position, 5.0, -3.0, 0.2])
    client.spin_for(0.3)
    again = send_goals_and_wait(client, {"left_hand": tree.forward(q, "left_hand")})
    assert again["status"]["success"] == "true"
    np.testing.assert_allclose(
        published_configuration(tree, again["command"], again["base_pose"]), q, atol=1e-9
    )


def test_track_mode_steps_on_the_manifold_within_the_joints_velocity_limits(humanoid, tmp_path):
    """Track mode: every step's 1-DOF velocities within the URDF's limits, the base's quaternion
    unit and its motion within base_max_linear_velocity at every step, and the last (stop) command
    reproducing the goals."""
    _, tree = humanoid
    layout = JointLayout.of(tree)
    limits = dict(zip(layout.names, tree.max_velocity[layout.configuration]))
    process, client = start(
        "-p", f"robot_description_file:={HUMANOID_URDF}", "-p", "root_joint:=floating",
        "-p", "base_link:=world", "-p", f"tip_links:=[{', '.join(TIPS)}]", "-p", "mode:=track",
        "-p", "publish_rate:=50.0", name="whole_body_track",
    )  # fmt: skip
    try:
        target = tree.neutral.copy()
        at = layout.configuration
        target[at] = 0.5 * (tree.lower[at] + tree.upper[at])
        target[:7] = [0.1, -0.05, 0.2, 0.0, 0.0, math.sin(0.2), math.cos(0.2)]  # 0.4 rad about z
        goals = {tip: tree.forward(target, tip) for tip in TIPS}
        for tip, goal in goals.items():
            client.send_goal(goal, tip)

        def settled():
            return (
                len(client.statuses) >= 3
                and client.commands
                and client.commands[-1].velocity
                and not any(client.commands[-1].velocity)
            )

        assert client.spin_until(settled, timeout=60.0), process.log()[-3000:]
        client.spin_for(0.3)
        assert len(client.commands) > 5  # several steps
        for command in client.commands:
            assert list(command.name) == list(layout.names)
            for name, velocity in zip(command.name, command.velocity):
                assert abs(velocity) <= limits[name] * (1 + 1e-9), (name, velocity)
        for base_pose in client.base_poses:
            o = base_pose.pose.orientation
            assert abs(math.hypot(o.x, o.y, o.z, o.w) - 1) < 1e-9
        q = published_configuration(tree, client.commands[-1], client.base_poses[-1])
        # the base within base_max_linear/angular_velocity (1 m/s, 1 rad/s) per twist component: from
        # the rest posture (the base at the origin) it takes at least max |d_i| / (v T) steps (each
        # step's own bound is checked by test_policy; a message lost under load makes one fewer here)
        rest = tree.neutral.copy()
        rest[at] = target[at]
        displacement = tree.difference(rest, q)[:6]
        assert np.abs(displacement).max() > 0.1  # (the base did move)
        moving = sum(1 for command in client.commands if any(command.velocity))
        assert moving >= 0.9 * np.abs(displacement).max() / (1.0 / 50.0), (moving, displacement)
        for tip in TIPS:
            position_error, rotation_error = pose_error(tree.forward(q, tip), goals[tip])
            assert position_error < TOLERANCE and rotation_error < TOLERANCE, tip
    finally:
        stop(process, client)


# ------------------------------------------------------------------ a planar joint of the URDF's own


def test_a_planar_robot_from_its_config_file_reaches_goals_and_publishes_its_base_pose(tmp_path):
    urdf = tmp_path / "rover.urdf"
    urdf.write_text(ROVER)
    params = tmp_path / "rover.yaml"
    subprocess.run(
        [sys.executable, "-m", "ik_node.cli", "config", "--urdf", str(urdf), "--base", "map", "--tip", "tool",
         "--name", "rover_node", "--output", str(params)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    robot = load_robot(urdf)
    tree = robot.tree("map", "tool")
    process, client = start("--params-file", str(params), tips=("tool",), name="rover_node")
    try:
        rng = np.random.default_rng(5)
        for trial in range(3):
            q = tree.joint_vector(
                {"drive/x": rng.uniform(-2, 2), "drive/y": rng.uniform(-2, 2),
                 "drive/theta": rng.uniform(-3, 3), "slew": rng.uniform(-1, 1),
                 "reach": rng.uniform(0.2, 0.7)}
            )  # fmt: skip
            goal = tree.forward(q, "tool")
            answer = send_goals_and_wait(client, {"tool": goal})
            assert answer["status"]["success"] == "true", (trial, answer["status"])
            command, base_pose = answer["command"], answer["base_pose"]
            assert list(command.name) == ["slew", "reach"] and base_pose.header.frame_id == "map"
            # the base pose is the chassis in map: planar, so z = 0 and a rotation about z only
            position, orientation = base_pose.pose.position, base_pose.pose.orientation
            assert abs(position.z) < 1e-12 and abs(orientation.x) < 1e-12 and abs(orientation.y) < 1e-12
            theta = 2 * math.atan2(orientation.z, orientation.w)
            reached = tree.forward(
                {**dict(zip(command.name, command.position)), "drive/x": position.x, "drive/y": position.y,
                 "drive/theta": theta},
                "tool",
            )  # fmt: skip
            position_error, rotation_error = pose_error(reached, goal)
            assert position_error < TOLERANCE and rotation_error < TOLERANCE, trial
            transform = client.latest_transform("map", "chassis")
            assert transform is not None and abs(transform.transform.translation.x - position.x) < 1e-12
    finally:
        stop(process, client)


# ------------------------------------------------------------------ refusals


def test_a_bad_root_joint_is_refused_naming_the_parameter():
    process = NodeProcess(
        "-p", f"robot_description_file:={HUMANOID_URDF}", "-p", "root_joint:=flying",
        "-p", "tip_links:=[left_hand]",
        environment=node_environment(),
    )  # fmt: skip
    assert process.process.wait(timeout=60) == 2, process.log()
    assert "parameter root_joint must be one of ['', 'floating', 'planar'], got 'flying'" in process.log()
    process.stop()


def test_root_joint_on_a_urdf_with_a_world_link_is_refused_and_is_read_only():
    process, client = start(
        "-p", f"robot_description_file:={PACKAGE_ROOT / 'urdf' / 'arm7.urdf'}", "-p", "root_joint:=floating",
        "-p", "tip_links:=[tool0]", tips=("tool0",), name="refusal_node", wait_ready=False,
    )  # fmt: skip
    try:
        assert process.wait_for_log("cannot add root_joint='floating'"), process.log()
        assert re.search(
            r"robot description from .* refused: cannot add root_joint='floating'", process.log()
        )
        result = client.set_parameters(root_joint="planar")
        assert not result.successful and "read-only" in result.reason
    finally:
        stop(process, client)
