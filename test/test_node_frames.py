"""Goals in TF frames outside the robot model, through real topics.

Where ``tf2_ros`` is importable (a ROS install; it is not on PyPI) a static transform
``map -> base_link`` is broadcast and a goal given in ``map`` must be reached; a goal in a frame no
one publishes is refused with a status naming it. Where it is not, the node must refuse a goal in
``map`` with a reason saying tf2 is not available, and keep serving.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from ros_harness import CONFIG_DIR, running_node

JOINTS = [f"joint{i}" for i in range(1, 8)]
HAS_TF2 = importlib.util.find_spec("tf2_ros") is not None
#: ``T_map_base`` of the test's static transform: 1 m along x, a quarter turn about z.
MAP_TO_BASE = np.array([[0.0, -1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0, 0, 0, 1.0]])


pytestmark = pytest.mark.usefixtures("ros_context")  # (conftest.py)


@pytest.mark.skipif(HAS_TF2, reason="tf2_ros is importable: the TF path is tested instead")
def test_without_tf2_a_goal_in_a_frame_outside_the_model_is_refused_saying_why(arm7):
    with running_node("--params-file", str(CONFIG_DIR / "arm7.yaml")) as (process, client):
        client.send_goal(np.eye(4), frame_id="map")
        assert client.spin_until(lambda: client.statuses)
        status = client.statuses[0]
        assert status["reason"] == "invalid_goal" and "'map'" in status["message"]
        assert "tf2_ros is not available" in status["message"]
        goal = arm7.forward(dict(zip(JOINTS, [0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])), "tool0", "base_link")
        client.send_goal(goal)  # still serving
        assert client.wait_command(0) is not None, process.log()


@pytest.mark.skipif(
    not HAS_TF2, reason="tf2_ros is not importable here (a ROS install ships it; not on PyPI)"
)
def test_a_goal_in_a_tf_frame_is_transformed_and_an_unknown_frame_refused_naming_it(arm7):
    import tf2_ros
    from geometry_msgs.msg import TransformStamped

    from ik_node.decisions.conversions import pose_to_fields

    with running_node("--params-file", str(CONFIG_DIR / "arm7.yaml")) as (process, client):
        broadcaster = tf2_ros.StaticTransformBroadcaster(client.node)
        transform = TransformStamped()
        transform.header.stamp = client.node.get_clock().now().to_msg()
        transform.header.frame_id, transform.child_frame_id = "map", "base_link"
        (x, y, z), (qx, qy, qz, qw) = pose_to_fields(MAP_TO_BASE)
        transform.transform.translation.x, transform.transform.translation.y = x, y
        transform.transform.translation.z = z
        rotation = transform.transform.rotation
        rotation.x, rotation.y, rotation.z, rotation.w = qx, qy, qz, qw
        broadcaster.sendTransform(transform)
        client.spin_for(1.0)
        in_base = arm7.forward(dict(zip(JOINTS, [0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])), "tool0", "base_link")
        client.send_goal(MAP_TO_BASE @ in_base, frame_id="map")
        command = client.wait_command(0)
        assert command is not None, process.log()
        reached = arm7.forward(dict(zip(command.name, command.position)), "tool0", "base_link")
        assert np.linalg.norm(reached[:3, 3] - in_base[:3, 3]) < 1e-5
        client.send_goal(np.eye(4), frame_id="nowhere")
        assert client.spin_until(lambda: any(s["reason"] == "invalid_goal" for s in client.statuses))
        refused = next(s for s in client.statuses if s["reason"] == "invalid_goal")
        assert "'nowhere'" in refused["message"]
