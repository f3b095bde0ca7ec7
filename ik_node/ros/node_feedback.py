"""What the node reports and draws besides its commands: one status per goal on
``/diagnostics``, the servo's state on ``~/status`` (``DiagnosticStatus``: its text, and its code
as the value ``code``; also on ``/diagnostics``) when it changes, readiness on ``~/ready``
(``std_msgs/Bool``, transient local), the latest solution on ``~/markers`` (``MarkerArray``, at
most :data:`MARKER_RATE`), and the collision model on ``~/collision_markers`` (``MarkerArray``,
transient local: the solver's shapes at the state shown and the obstacles, while collisions are
checked). Poses in the model's base frame [m].
"""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import Bool
from visualization_msgs.msg import MarkerArray

from ..decisions.replies import Status
from . import messages
from .obstacle_messages import collision_markers

__all__ = ["LATCHED_QOS", "MARKER_RATE", "WARNING_PERIOD", "NodeFeedback"]

#: Seconds between repeats of the same warning in the node's log.
WARNING_PERIOD = 2.0
#: Largest rate of the marker array [Hz]: the latest solve is drawn, older ones are skipped.
MARKER_RATE = 20.0
#: The latest message stays for subscribers that come later (``~/ready``, the descriptions).
LATCHED_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


class NodeFeedback:
    """The status, readiness and marker publishers of ``node``, drawing ``policy``'s model:
    readiness false at first; :meth:`show_solution` draws at the next marker tick; set
    ``collision_markers_due`` when what ``~/collision_markers`` shows may have changed (a model, a
    command, obstacles), redrawn at the next tick."""

    def __init__(self, node, policy):
        self._node = node
        self._policy = policy
        self._diagnostics_publisher = node.create_publisher(messages.DiagnosticArray, "/diagnostics", 10)
        self._marker_publisher = node.create_publisher(MarkerArray, "~/markers", 10)
        self._ready_publisher = node.create_publisher(Bool, "~/ready", LATCHED_QOS)
        self._collision_marker_publisher = node.create_publisher(
            MarkerArray, "~/collision_markers", LATCHED_QOS
        )
        self._status_publisher = node.create_publisher(messages.DiagnosticStatus, "~/status", 10)
        self._servo_status = None  # the last one published
        self._solution = None  # (q, success) of the latest solve, not drawn yet
        self.collision_markers_due = False
        self._collision_markers_shown = False
        self.publish_ready(False)
        node.create_timer(1.0 / MARKER_RATE, self._on_marker_timer)

    def publish_ready(self, ready: bool) -> None:
        """``~/ready``: whether goals are solved now."""
        self._ready_publisher.publish(Bool(data=ready))

    def publish_status(self, status: Status) -> None:
        """One status on ``/diagnostics``, named after the node, the robot as its hardware id."""
        model = self._policy.model_state.model
        self._diagnostics_publisher.publish(
            messages.diagnostic_array(
                f"{self._node.get_name()}: ik",
                "" if model is None else model.robot.name,
                status,
                self._node.get_clock().now().to_msg(),
            )
        )

    def publish_servo_status(self, status) -> None:
        """The servo's state (:class:`ik_node.servo.ServoStatus`) on ``~/status`` and
        ``/diagnostics`` when it differs from the last one published."""
        if status == self._servo_status:
            return
        self._servo_status = status
        model = self._policy.model_state.model
        message = messages.servo_status(
            f"{self._node.get_name()}: servo", "" if model is None else model.robot.name, status
        )
        self._status_publisher.publish(message)
        array = messages.DiagnosticArray()
        array.header.stamp = self._node.get_clock().now().to_msg()
        array.status = [message]
        self._diagnostics_publisher.publish(array)

    def show_solution(self, solution: tuple | None) -> None:
        """Draw ``solution`` (``(q, success)``) at the next tick; None: nothing (a new model's
        joints are not the old solution's)."""
        self._solution = solution

    def _on_marker_timer(self) -> None:
        self._publish_collision_markers()
        if self._solution is None or not self._policy.model_state.ready:
            return
        q, success = self._solution
        self._solution = None
        policy = self._policy
        model = policy.model_state.model
        goals, reached = policy.goals_in_base(q), policy.tip_poses(q)
        self._marker_publisher.publish(
            messages.solution_markers(model.base_link, policy.tips, goals, reached, success)
        )

    def _publish_collision_markers(self) -> None:
        """``~/collision_markers`` when something it shows changed (at most at the marker rate):
        the solver's shapes at the state shown and the obstacles while collisions are checked;
        one clearing array when checking stops."""
        policy, model_state = self._policy, self._policy.model_state
        if not self.collision_markers_due or not model_state.ready:
            return
        self.collision_markers_due = False
        base = model_state.model.base_link
        stamp = self._node.get_clock().now().to_msg()
        if model_state.checks_collisions:
            obstacles = model_state.obstacles
            self._collision_marker_publisher.publish(
                collision_markers(
                    base,
                    policy.collision_shapes(),
                    [obstacle.name for obstacle in obstacles],
                    stamp,
                )
            )
            self._collision_markers_shown = True
        elif self._collision_markers_shown:
            self._collision_marker_publisher.publish(collision_markers(base, [], stamp=stamp))
            self._collision_markers_shown = False
