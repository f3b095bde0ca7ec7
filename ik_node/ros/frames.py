"""TF through tf2 where ``tf2_ros`` is importable: goals in TF frames outside the robot model,
and the floating base's transform broadcast.

:func:`transform_lookup` returns a callable ``(frame, base, stamp) -> T_base_frame`` (4x4) for
:meth:`ik_node.decisions.policy.IKPolicy.goal_in_base`, or None with the reason tf2 is unavailable. The
transform is looked up at the goal's stamp; when tf2 has none there (a stamp from a clock that
is not the node's, or too old), the latest transform is taken, waiting at most
``transform_timeout`` seconds. Quaternions from tf2 are ``(x, y, z, w)``.
:func:`transform_broadcaster` returns a ``tf2_ros.TransformBroadcaster`` (``/tf``), or None with
the reason.
"""

from __future__ import annotations

from ..decisions.conversions import pose_from_fields
from ..errors import IKNodeError

__all__ = ["transform_broadcaster", "transform_lookup"]


def transform_lookup(node, timeout: float):
    """``(lookup, None)`` with a tf2 listener, or ``(None, reason)`` where tf2_ros cannot be
    imported. The listener runs on a node of its own (``<node>_transform_listener``) spun by its
    own thread: the waiting lookup happens on ``node``'s executor, which therefore cannot be the
    one that receives the transforms."""
    try:
        import rclpy
        import tf2_ros
        from rclpy.duration import Duration
        from rclpy.time import Time
    except ImportError as error:
        return None, (
            f"tf2_ros is not importable ({error}): goals are accepted in the robot's own frames only "
            "(install ros-$ROS_DISTRO-tf2-ros-py for goals in TF frames such as 'world' or 'map')"
        )
    listener_node = rclpy.create_node(f"{node.get_name()}_transform_listener", namespace=node.get_namespace())
    buffer = tf2_ros.Buffer()
    listener = tf2_ros.TransformListener(buffer, listener_node, spin_thread=True)

    def lookup(frame: str, base: str, stamp):
        """``T_base_frame`` at ``stamp`` (a ``builtin_interfaces/Time``), else the latest."""
        try:
            found = buffer.lookup_transform(base, frame, Time.from_msg(stamp))
        except (tf2_ros.TransformException, ValueError):  # (ValueError: a negative stamp)
            try:
                found = buffer.lookup_transform(base, frame, Time(), Duration(seconds=timeout))
            except tf2_ros.TransformException as error:
                raise IKNodeError(
                    f"no transform from frame '{frame}' to the base '{base}' at the goal's stamp or within "
                    f"{timeout} s (tf2: {error}); is a TF publisher for '{frame}' running?"
                ) from None
        translation, rotation = found.transform.translation, found.transform.rotation
        return pose_from_fields(
            [translation.x, translation.y, translation.z], [rotation.x, rotation.y, rotation.z, rotation.w]
        )

    lookup.listener = (listener_node, listener)  # kept alive with the lookup
    return lookup, None


def transform_broadcaster(node):
    """``(broadcaster, None)``: a ``tf2_ros.TransformBroadcaster`` of ``node`` (``sendTransform``
    takes ``geometry_msgs/TransformStamped`` messages), or ``(None, reason)`` where tf2_ros cannot
    be imported."""
    try:
        import tf2_ros
    except ImportError as error:
        return None, (
            f"tf2_ros is not importable ({error}): the floating base's pose is published on ~/base_pose "
            "only, not as a TF (install ros-$ROS_DISTRO-tf2-ros-py for it)"
        )
    return tf2_ros.TransformBroadcaster(node), None
