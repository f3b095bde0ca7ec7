"""Straight-line goals through real topics (issue 49): with ``straight_line_goals`` a pose goal
comes back as one timed ``JointTrajectory`` whose points keep the tip on the line (the robot's
own FK) within the joint limits and ends at the goal; a goal the line cannot reach is refused with
its reason and fraction, nothing published."""

from __future__ import annotations

import numpy as np
import pytest
from ros_harness import CONFIG_DIR, running_node
from test_cartesian import _distance_to_line
from test_node import JOINTS, Q_START, parameter_limits
from trajectory_msgs.msg import JointTrajectory

from ik_node import load_robot
from ik_node.description.catalogue import URDF_DIR

pytestmark = [
    pytest.mark.usefixtures("ros_context"),
    pytest.mark.skipif(
        __import__("importlib").util.find_spec("toppra") is None, reason="straight-line goals need toppra"
    ),
]


def test_a_straight_line_goal_is_one_timed_trajectory_on_the_line():
    robot = load_robot(URDF_DIR / "arm7.urdf")
    start = robot.forward(dict(zip(JOINTS, Q_START)), "tool0", "base_link")
    goal = start.copy()
    goal[:3, 3] += [0.0, 0.15, -0.05]
    far = start.copy()
    far[:3, 3] += [3.0, 0.0, 0.0]
    limits = parameter_limits()
    arguments = ("--params-file", str(CONFIG_DIR / "arm7.yaml"), "-p", "straight_line_goals:=true")
    with running_node(*arguments) as (process, client):
        trajectories: list[JointTrajectory] = []
        client.node.create_subscription(JointTrajectory, "/ik_node/joint_trajectory", trajectories.append, 10)
        for _ in range(20):  # (fresh joint states with each try: the line starts there)
            client.send_joint_state(JOINTS, Q_START)
            client.spin_for(0.1)
            client.send_goal(goal)
            if client.spin_until(lambda: trajectories, 1.0):
                break
        assert trajectories, process.log()[-2000:]
        trajectory = trajectories[-1]
        names = list(trajectory.joint_names)
        times = [
            point.time_from_start.sec + 1e-9 * point.time_from_start.nanosec for point in trajectory.points
        ]
        assert len(trajectory.points) > 20 and np.all(np.diff(times) > 0) and times[0] == 0.0
        for point in trajectory.points:
            q = dict(zip(names, point.positions))
            tip = robot.forward(q, "tool0", "base_link")[:3, 3]
            assert _distance_to_line(tip, start[:3, 3], goal[:3, 3]) < 1e-5
            for name, position, velocity in zip(names, point.positions, point.velocities):
                low, high, max_velocity = limits[name]
                assert low - 1e-9 <= position <= high + 1e-9 and abs(velocity) <= max_velocity * (1 + 1e-9)
        end = robot.forward(dict(zip(names, trajectory.points[-1].positions)), "tool0", "base_link")
        assert np.allclose(end, goal, atol=1e-5)
        assert client.spin_until(lambda: client.statuses and client.statuses[-1]["reason"] == "success")
        assert float(client.statuses[-1]["fraction"]) == pytest.approx(1.0)
        client.spin_for(1.0)  # (a goal sent again meanwhile is answered from there: one more)
        count = len(trajectories)
        client.send_goal(far)
        assert client.spin_until(lambda: client.statuses[-1]["reason"] == "unreachable"), client.statuses
        assert 0.0 < float(client.statuses[-1]["fraction"]) < 0.5
        client.spin_for(0.2)
        assert len(trajectories) == count
