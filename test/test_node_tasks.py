"""Tasks beyond a pose in the node, through real topics (issue 50, part 6 for gaze and relative
tasks), checked on the published joints by an independent FK.

A gaze: the bundled mobile manipulator's pan/tilt camera (``tip_tasks.camera_link: gaze``,
``tip_gaze_axes.camera_link: [1, 0, 0]``) beside its arm's tool. Points on
``~/camera_link/target_point`` (``PointStamped``, in the base frame or in a link's) and a pose's
position on ``~/camera_link/target_pose`` are looked at (the camera's x axis within 1e-4 rad of the
point); a point for the tool, whose task is a pose, is refused with a status naming the
parameter, and the node keeps serving.

A relative task: the bundled dual arm's right tool relative to its left
(``tip_relative_to.right_tool0: left_tool0``): a goal for the right tool in the left tool's frame
is kept as that relative pose, so that when the left tool moves to a new goal the right follows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import PointStamped
from ros_harness import CONFIG_DIR, running_node
from test_compute_ik import IndependentFK

from ik_node import load_robot
from ik_node.description.catalogue import URDF_DIR
from ik_node.lie import inverse

TIPS = ("camera_link", "tool0")
ARGUMENTS = (
    "--params-file", str(CONFIG_DIR / "mobile_manipulator.yaml"), "-p", "base_link:=base_link",
    "-p", f"tip_links:=[{', '.join(TIPS)}]", "-p", "tip_tasks.camera_link:=gaze",
    "-p", "tip_gaze_axes.camera_link:=[1.0, 0.0, 0.0]",
)  # fmt: skip

pytestmark = pytest.mark.usefixtures("ros_context")  # (conftest.py)


def look_angle(pose: np.ndarray, point) -> float:
    """The angle [rad] between the frame's x axis and the line from its origin to ``point``."""
    direction = np.asarray(point, dtype=float) - pose[:3, 3]
    return math.atan2(np.linalg.norm(np.cross(pose[:3, 0], direction)), float(pose[:3, 0] @ direction))


def test_points_and_poses_sent_to_a_gaze_tip_are_looked_at_and_a_point_for_a_pose_tip_refused():
    robot = load_robot(URDF_DIR / "mobile_manipulator.urdf")
    fk = IndependentFK(URDF_DIR / "mobile_manipulator.urdf", robot)
    with running_node(*ARGUMENTS, tips=TIPS) as (process, client):
        publish = client.node.create_publisher
        publishers = {tip: publish(PointStamped, f"/ik_node/{tip}/target_point", 10) for tip in TIPS}
        assert client.spin_until(lambda: all(p.get_subscription_count() > 0 for p in publishers.values()))

        def send_point(tip: str, point, frame: str = "") -> None:
            message = PointStamped()
            message.header.frame_id = frame
            message.header.stamp = client.node.get_clock().now().to_msg()
            message.point.x, message.point.y, message.point.z = (float(value) for value in point)
            publishers[tip].publish(message)

        def looked_at(command, point) -> float:
            values = dict(zip(command.name, command.position))
            return look_angle(fk(values, "camera_link"), point)

        for point in ([2.0, 0.5, 1.0], [1.0, -1.5, 0.4], [-0.5, 2.0, 2.0]):
            count = len(client.commands)
            send_point("camera_link", point)
            command = client.wait_command(count)
            assert command is not None, process.log()[-2000:]
            assert looked_at(command, point) <= 1e-4
        # a point in the camera's own frame (the model's FK at the current state): 1 m ahead and
        # 0.5 m to its left, which the camera then turns to
        count = len(client.commands)
        camera_pose = fk(dict(zip(client.commands[-1].name, client.commands[-1].position)), "camera_link")
        send_point("camera_link", [1.0, 0.5, 0.0], frame="camera_link")
        command = client.wait_command(count)
        assert command is not None, process.log()[-2000:]
        assert looked_at(command, camera_pose[:3, :3] @ [1.0, 0.5, 0.0] + camera_pose[:3, 3]) <= 1e-4
        # a pose on target_pose: its position is the point
        goal = np.eye(4)
        goal[:3, 3] = [1.5, 1.0, 0.2]
        count = len(client.commands)
        client.send_goal(goal, tip="camera_link")
        command = client.wait_command(count)
        assert command is not None, process.log()[-2000:]
        assert looked_at(command, goal[:3, 3]) <= 1e-4
        # a point for the pose tip: refused, nothing published, still serving
        client.spin_for(0.5)  # (the statuses of the goals before)
        statuses, count = len(client.statuses), len(client.commands)
        send_point("tool0", [0.5, 0.0, 1.0])
        assert client.spin_until(lambda: len(client.statuses) > statuses), process.log()[-2000:]
        status = client.statuses[statuses]
        assert status["reason"] == "invalid_goal", status
        refused = "a point goal (target_point) is for a gaze task, and tip_tasks.tool0 is 'pose'"
        assert refused in status["message"]
        assert len(client.commands) == count
        send_point("camera_link", [2.0, 0.0, 1.2])
        command = client.wait_command(count)
        assert command is not None and looked_at(command, [2.0, 0.0, 1.2]) <= 1e-4


def test_a_relative_tip_keeps_its_pose_in_its_reference_s_frame_as_the_reference_moves():
    """The right tool's goal in the left tool's frame (``header.frame_id: left_tool0``), the left
    at rest: the right reaches that relative pose and the left holds; a goal for the left tool
    then moves it (its arm's joints 0.1 rad on) and the right follows, keeping the relative pose."""
    robot = load_robot(URDF_DIR / "dual_arm.urdf")
    fk = IndependentFK(URDF_DIR / "dual_arm.urdf", robot)
    tips = ("left_tool0", "right_tool0")
    arguments = ("--params-file", str(CONFIG_DIR / "dual_arm.yaml"))
    arguments += ("-p", "tip_relative_to.right_tool0:=left_tool0")
    names = robot.tree("base_link", list(tips)).joint_names
    # the torso and the left arm at rest (the node's rest posture: every joint 0), the right arm not
    drawn = dict(zip(names, [0.0] * 7 + [-0.3, -0.5, 0.8, -0.2, 0.6, 0.3]))
    relative = inverse(fk(drawn, "left_tool0")) @ fk(drawn, "right_tool0")

    def reached(command) -> tuple[np.ndarray, np.ndarray]:
        values = dict(zip(command.name, command.position))
        return fk(values, "left_tool0"), fk(values, "right_tool0")

    with running_node(*arguments, tips=tips) as (process, client):
        count = len(client.commands)
        client.send_goal(relative, tip="right_tool0", frame_id="left_tool0")
        command = client.wait_command(count)
        assert command is not None, process.log()[-2000:]
        now_left, now_right = reached(command)
        np.testing.assert_allclose(now_left, fk(drawn, "left_tool0"), atol=2e-5)
        np.testing.assert_allclose(inverse(now_left) @ now_right, relative, atol=2e-5)
        moved = {name: value + (0.1 if name.startswith("left_") else 0.0) for name, value in drawn.items()}
        count = len(client.commands)
        client.send_goal(fk(moved, "left_tool0"), tip="left_tool0")
        command = client.wait_command(count)
        assert command is not None, process.log()[-2000:]
        now_left, now_right = reached(command)
        np.testing.assert_allclose(now_left, fk(moved, "left_tool0"), atol=2e-5)
        np.testing.assert_allclose(inverse(now_left) @ now_right, relative, atol=2e-5)
