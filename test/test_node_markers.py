"""A goal you drag in RViz: the node's 6-DOF interactive marker per tip, through real topics.

The node's side needs the ``interactive_markers`` Python server, which ROS installs ship and PyPI
does not: these tests skip where it is not importable (checked for real with the server from
ros-visualization/interactive_markers' rolling branch on ``PYTHONPATH``). The client plays
RViz: it asks the server for its markers and sends ``InteractiveMarkerFeedback`` as a drag does.
The message construction itself is tested everywhere.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from ros_harness import CONFIG_DIR, running_node
from sensor_msgs.msg import JointState
from visualization_msgs.msg import InteractiveMarkerControl, InteractiveMarkerFeedback
from visualization_msgs.srv import GetInteractiveMarkers

from ik_node.decisions.conversions import pose_from_message
from ik_node.ros.messages import interactive_goal_marker, pose_message

JOINTS = [f"joint{i}" for i in range(1, 8)]
#: The marker server ignores a new client's feedback within 1 s of the marker's last change
#: (two clients must not drag one marker): the test's "RViz" starts dragging after it [s].
SERVER_CLIENT_GUARD = 1.2
needs_server = pytest.mark.skipif(
    importlib.util.find_spec("interactive_markers") is None,
    reason="the interactive_markers Python server is not importable here (ROS installs ship it; not on PyPI)",
)


pytestmark = pytest.mark.usefixtures("ros_context")  # (conftest.py)


def test_the_goal_marker_has_a_move_and_a_rotate_control_about_each_axis_at_the_tip_pose(arm7):
    pose = arm7.forward(dict(zip(JOINTS, [0.1, 0.2, 0.3, -1.5, 0.2, 1.5, 0.1])), "tool0", "base_link")
    marker = interactive_goal_marker("base_link", "tool0", pose)
    assert marker.header.frame_id == "base_link" and marker.name == "tool0"
    np.testing.assert_allclose(pose_from_message(marker.pose), pose, atol=1e-12)
    axes = {}
    for control in marker.controls:
        if control.interaction_mode in (
            InteractiveMarkerControl.MOVE_AXIS,
            InteractiveMarkerControl.ROTATE_AXIS,
        ):
            o = control.orientation
            # the control's axis: its orientation's x axis, R(q) e_x
            axis = np.array(
                [1 - 2 * (o.y**2 + o.z**2), 2 * (o.x * o.y + o.z * o.w), 2 * (o.x * o.z - o.y * o.w)]
            )
            axes.setdefault(control.interaction_mode, []).append(np.round(np.abs(axis), 12))
    for found in axes.values():  # x, y and z, each once, for moving and for rotating
        assert sorted(map(tuple, found)) == [(0.0, 0.0, 1.0), (0.0, 1.0, 0.0), (1.0, 0.0, 0.0)]


def markers_of(client):
    service = client.node.create_client(
        GetInteractiveMarkers, "/ik_node/goal_markers/get_interactive_markers"
    )
    assert service.wait_for_service(timeout_sec=10.0), "no interactive marker server"
    future = service.call_async(GetInteractiveMarkers.Request())
    assert client.spin_until(future.done)
    return {marker.name: marker for marker in future.result().markers}


def drag(client, publisher, pose, event, quaternion=None) -> None:
    """One feedback message as RViz sends it while (or after) dragging the marker to ``pose``;
    ``quaternion`` (x, y, z, w) overrides the orientation (to send a broken one)."""
    feedback = InteractiveMarkerFeedback()
    feedback.header.frame_id = "base_link"
    feedback.header.stamp = client.node.get_clock().now().to_msg()
    feedback.client_id = "/rviz/InteractiveMarkers"
    feedback.marker_name = "tool0"
    feedback.control_name = "move_x"
    feedback.event_type = event
    feedback.pose = pose_message(pose)
    if quaternion is not None:
        orientation = feedback.pose.orientation
        orientation.x, orientation.y, orientation.z, orientation.w = quaternion
    publisher.publish(feedback)


@needs_server
def test_dragging_the_marker_sends_goals_on_release_in_solve_mode(arm7):
    with running_node("--params-file", str(CONFIG_DIR / "arm7.yaml")) as (process, client):
        markers = markers_of(client)
        assert set(markers) == {"tool0"}
        states = []
        client.node.create_subscription(JointState, "/ik_node/joint_states", states.append, 10)
        assert client.spin_until(lambda: states)  # the state shown: the marker sits on its tip
        shown = arm7.forward(dict(zip(states[-1].name, states[-1].position)), "tool0", "base_link")
        np.testing.assert_allclose(pose_from_message(markers["tool0"].pose), shown, atol=1e-9)
        publisher = client.node.create_publisher(
            InteractiveMarkerFeedback, "/ik_node/goal_markers/feedback", 10
        )
        assert client.spin_until(lambda: publisher.get_subscription_count() > 0)
        client.spin_for(SERVER_CLIENT_GUARD)
        q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
        goal = arm7.forward(dict(zip(JOINTS, q)), "tool0", "base_link")
        drag(client, publisher, goal, InteractiveMarkerFeedback.POSE_UPDATE)  # solve mode: not yet
        client.spin_for(0.5)
        assert client.commands == []
        drag(client, publisher, goal, InteractiveMarkerFeedback.MOUSE_UP)
        command = client.wait_command(0)
        assert command is not None, process.log()
        reached = arm7.forward(dict(zip(command.name, command.position)), "tool0", "base_link")
        assert np.linalg.norm(reached[:3, 3] - goal[:3, 3]) < 1e-5
        far = goal.copy()
        far[:3, 3] += [3.0, 0.0, 0.0]
        assert client.spin_until(lambda: client.statuses)  # the first goal's
        drag(client, publisher, far, InteractiveMarkerFeedback.MOUSE_UP)  # out of reach: said, not sent
        assert client.spin_until(lambda: len(client.statuses) > 1)
        assert [status["reason"] for status in client.statuses] == ["success", "unreachable"]
        assert len(client.commands) == 1
        assert process.wait_for_log("no solution for the goal (unreachable)")
        drag(client, publisher, goal, InteractiveMarkerFeedback.MOUSE_UP, quaternion=(0.0, 0.0, 0.0, 0.0))
        assert client.spin_until(lambda: len(client.statuses) > 2)
        refused = client.statuses[-1]
        assert refused["reason"] == "invalid_goal" and "zero quaternion" in refused["message"], refused
        assert process.process.poll() is None  # still serving


@needs_server
def test_dragging_the_marker_in_track_mode_steps_toward_each_pose_update(arm7):
    with running_node("--params-file", str(CONFIG_DIR / "arm7.yaml"), "-p", "mode:=track") as (
        process,
        client,
    ):
        markers_of(client)
        publisher = client.node.create_publisher(
            InteractiveMarkerFeedback, "/ik_node/goal_markers/feedback", 10
        )
        assert client.spin_until(lambda: publisher.get_subscription_count() > 0)
        client.spin_for(SERVER_CLIENT_GUARD)
        goal = arm7.forward(dict(zip(JOINTS, [0.2, -0.3, 0.2, -1.9, 0.1, 1.8, 0.4])), "tool0", "base_link")
        drag(client, publisher, goal, InteractiveMarkerFeedback.POSE_UPDATE)
        assert client.spin_until(lambda: len(client.commands) > 3), process.log()
        assert all(len(command.velocity) == 7 for command in client.commands)
