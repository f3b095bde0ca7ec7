"""A stand-in for ``tf2_ros`` in the node tests where the real one is not importable (PyPI has
neither tf2_ros nor tf2_msgs): put this directory first on the node process's ``PYTHONPATH``.

Its :class:`TransformBroadcaster` publishes every ``geometry_msgs/TransformStamped`` it is given on
:data:`TOPIC` (the real one publishes ``tf2_msgs/TFMessage`` on ``/tf``), so a test sees what the
node broadcasts and when; its :class:`Buffer` knows no transform (every lookup raises
:class:`TransformException`), which is all ``ik_node.ros.frames.transform_lookup`` needs to start.
"""

from __future__ import annotations

from geometry_msgs.msg import TransformStamped

#: Where the stand-in broadcaster publishes.
TOPIC = "/tf_stand_in"


class TransformException(Exception):  # noqa: N818 (tf2_ros's name)
    pass


class Buffer:
    def lookup_transform(self, target_frame, source_frame, time, timeout=None):
        raise TransformException(f"the tf2_ros stand-in knows no transform {source_frame} -> {target_frame}")


class TransformListener:
    def __init__(self, buffer, node, spin_thread=False, **options):
        self.buffer = buffer


class TransformBroadcaster:
    def __init__(self, node, qos=100):
        self._publisher = node.create_publisher(TransformStamped, TOPIC, qos)

    def sendTransform(self, transform):  # noqa: N802 (tf2_ros's name)
        for message in transform if isinstance(transform, (list, tuple)) else [transform]:
            self._publisher.publish(message)
