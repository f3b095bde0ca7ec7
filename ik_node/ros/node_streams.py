"""The servo's streaming inputs on rclpy: ``~/delta_twist_cmds`` (``geometry_msgs/TwistStamped``)
and, where control_msgs is importable, ``~/delta_joint_cmds`` (``control_msgs/JointJog``: joint
velocities by name). Each message becomes a request of :mod:`ik_node.decisions.streams` for the
policy (:meth:`~ik_node.decisions.policy.IKPolicy.receive_stream`); the commands follow at
``publish_rate`` in track mode.

Both subscriptions are best effort with depth 1 (they match reliable and best-effort publishers,
and a flood keeps no queue: the latest message wins). Units: m/s, rad/s.
"""

from __future__ import annotations

import time

from geometry_msgs.msg import TwistStamped

from ..decisions.streams import JogRequest, TwistRequest

__all__ = ["StreamInputs", "jog_message_type"]


def jog_message_type():
    """``(control_msgs.msg.JointJog, None)``, or ``(None, why)`` where control_msgs cannot be
    imported."""
    try:
        from control_msgs.msg import JointJog
    except ImportError as error:
        return None, (
            f"control_msgs is not importable ({error}): no ~/delta_joint_cmds (control_msgs/JointJog); "
            "twists on ~/delta_twist_cmds and pose goals work. control_msgs comes with ros2_control: "
            "apt install ros-$ROS_DISTRO-control-msgs"
        )
    return JointJog, None


class StreamInputs:
    """The twist and jog subscriptions of ``node``: each message to ``policy``, its reply carried
    out by ``handle`` (a refusal's status and warning); ``transform``: the tf2 lookup for twists
    in TF frames (None without tf2_ros). Says once why jogs are off where control_msgs is missing."""

    def __init__(self, node, policy, handle, transform, qos):
        self._policy, self._handle, self._transform = policy, handle, transform
        node.create_subscription(TwistStamped, "~/delta_twist_cmds", self._on_twist, qos)
        jog, why = jog_message_type()
        if jog is None:
            node.get_logger().info(why)
        else:
            node.create_subscription(jog, "~/delta_joint_cmds", self._on_jog, qos)

    def _on_twist(self, message: TwistStamped) -> None:
        linear, angular = message.twist.linear, message.twist.angular
        twist = (linear.x, linear.y, linear.z, angular.x, angular.y, angular.z)
        request = TwistRequest(twist, message.header.frame_id, message.header.stamp)
        self._handle(self._policy.receive_stream(request, time.monotonic(), self._transform))

    def _on_jog(self, message) -> None:
        request = JogRequest(
            tuple(message.joint_names), tuple(message.velocities), tuple(message.displacements)
        )
        self._handle(self._policy.receive_stream(request, time.monotonic(), self._transform))
