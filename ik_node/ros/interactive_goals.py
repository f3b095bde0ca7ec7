"""A 6-DOF goal marker per tip in RViz, through the ``interactive_markers`` Python server where
it is importable (ROS installs ship it; it is not on PyPI).

Each tip gets the marker of :func:`ik_node.ros.messages.interactive_goal_marker` in the base frame,
on the namespace ``~/goal_markers`` (RViz: InteractiveMarkers display, "Interactive Markers
Namespace" ``/ik_node/goal_markers``). Dragging it sends goals: every pose update in ``track``
mode, the pose on release in ``solve`` mode — the same path as a goal on ``~/target_pose``.
"""

from __future__ import annotations

from collections.abc import Callable

from visualization_msgs.msg import InteractiveMarkerFeedback

from .messages import interactive_goal_marker, pose_message

__all__ = ["InteractiveGoals", "interactive_goals"]

#: Namespace of the marker server's topics and service (under the node's name).
NAMESPACE = "~/goal_markers"


def interactive_goals(node, on_goal: Callable, mode: Callable[[], str]):
    """``(InteractiveGoals, None)``, or ``(None, reason)`` where the server is not importable.
    ``on_goal(tip, pose, header)`` receives each goal (``geometry_msgs/Pose`` in
    ``header.frame_id``, as the feedback gives it); ``mode()`` is 'solve' or 'track'."""
    try:
        from interactive_markers.interactive_marker_server import InteractiveMarkerServer
    except ImportError as error:
        return None, (
            f"interactive_markers is not importable ({error}): no goal markers in RViz; goals come "
            "from ~/target_pose (install ros-$ROS_DISTRO-interactive-markers for them)"
        )
    return InteractiveGoals(InteractiveMarkerServer(node, NAMESPACE), on_goal, mode), None


class InteractiveGoals:
    """The markers of one model: :meth:`show` places them, feedback becomes goals."""

    def __init__(self, server, on_goal: Callable, mode: Callable[[], str]):
        self._server = server
        self._on_goal = on_goal
        self._mode = mode

    def show(self, base: str, tip_poses: dict) -> None:
        """One marker per tip at ``tip_poses[tip]`` (``T_base_point`` in ``base``: the pose a goal
        for the tip sets, its ``tip_offsets`` point), replacing any shown."""
        self._server.clear()
        for tip, pose in tip_poses.items():
            self._server.insert(interactive_goal_marker(base, tip, pose), feedback_callback=self._feedback)
        self._server.applyChanges()

    def move(self, tip_poses: dict) -> None:
        """Move the markers to ``tip_poses`` (``T_base_point``, as in :meth:`show`; e.g. to a goal
        that came on a topic)."""
        for tip, pose in tip_poses.items():
            self._server.setPose(tip, pose_message(pose))
        self._server.applyChanges()

    def _feedback(self, feedback: InteractiveMarkerFeedback) -> None:
        final = feedback.event_type == InteractiveMarkerFeedback.MOUSE_UP
        moving = feedback.event_type == InteractiveMarkerFeedback.POSE_UPDATE
        if final or (moving and self._mode() == "track"):
            self._on_goal(feedback.marker_name, feedback.pose, feedback.header)
