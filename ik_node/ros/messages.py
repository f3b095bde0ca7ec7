"""The node's outgoing messages built from plain values (message packages only, no rclpy).

Quaternions: messages carry ``(x, y, z, w)``; poses arrive here as 4x4 matrices and go through
:func:`ik_node.decisions.conversions.pose_to_fields`. Units: m, rad, s.
"""

from __future__ import annotations

import math

from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Pose, PoseStamped, TransformStamped
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import InteractiveMarker, InteractiveMarkerControl, Marker, MarkerArray

from ..decisions.conversions import pose_to_fields

__all__ = [
    "diagnostic_array",
    "interactive_goal_marker",
    "joint_state",
    "joint_trajectory",
    "pose_message",
    "pose_stamped",
    "servo_status",
    "solution_markers",
    "timed_trajectory",
    "transform_stamped",
]

#: Arrow size of the goal and solution markers [m]: length, shaft and head diameters.
ARROW_SCALE = (0.1, 0.012, 0.012)
#: Size of an interactive goal marker [m] (the rings and arrows RViz draws around the tip).
INTERACTIVE_MARKER_SCALE = 0.2


def pose_message(matrix) -> Pose:
    """A ``geometry_msgs/Pose`` from a 4x4 transform."""
    position, quaternion = pose_to_fields(matrix)
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = position
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = quaternion
    return pose


def pose_stamped(frame_id: str, matrix, stamp) -> PoseStamped:
    """``geometry_msgs/PoseStamped`` of a 4x4 ``T_frame_x`` in ``frame_id`` (quaternion x y z w)."""
    message = PoseStamped()
    message.header.frame_id = frame_id
    message.header.stamp = stamp
    message.pose = pose_message(matrix)
    return message


def transform_stamped(parent: str, child: str, matrix, stamp) -> TransformStamped:
    """``geometry_msgs/TransformStamped`` (a TF) from ``parent`` to ``child``: ``matrix`` is
    ``T_parent_child`` (4x4; rotation as a quaternion x y z w)."""
    position, quaternion = pose_to_fields(matrix)
    message = TransformStamped()
    message.header.frame_id = parent
    message.header.stamp = stamp
    message.child_frame_id = child
    translation, rotation = message.transform.translation, message.transform.rotation
    translation.x, translation.y, translation.z = position
    rotation.x, rotation.y, rotation.z, rotation.w = quaternion
    return message


def joint_state(names, positions, stamp, velocities=None) -> JointState:
    """``sensor_msgs/JointState`` with ``names`` and ``positions`` [rad, m] (and velocities)."""
    message = JointState()
    message.header.stamp = stamp
    message.name = list(names)
    message.position = [float(value) for value in positions]
    if velocities is not None:
        message.velocity = [float(value) for value in velocities]
    return message


def joint_trajectory(names, positions, velocities, duration: float) -> JointTrajectory:
    """One point reached ``duration`` seconds from now (ros2_control's trajectory controller)."""
    return timed_trajectory(
        names, [positions], None if velocities is None else [velocities], None, [duration]
    )


def timed_trajectory(names, positions, velocities, accelerations, times) -> JointTrajectory:
    """Points (k, n) [rad, m] with velocities and accelerations (k, n, or None) reached ``times``
    (k,) [s] from now."""
    trajectory = JointTrajectory()
    trajectory.joint_names = list(names)
    for index, (position, time) in enumerate(zip(positions, times)):
        point = JointTrajectoryPoint()
        point.positions = [float(value) for value in position]
        if velocities is not None:
            point.velocities = [float(value) for value in velocities[index]]
        if accelerations is not None:
            point.accelerations = [float(value) for value in accelerations[index]]
        seconds = math.floor(time)
        point.time_from_start = Duration(sec=int(seconds), nanosec=int((time - seconds) * 1e9))
        trajectory.points.append(point)
    return trajectory


def diagnostic_array(name: str, hardware_id: str, status, stamp) -> DiagnosticArray:
    """One ``DiagnosticStatus`` for a :class:`ik_node.decisions.replies.Status`: OK on success, WARN
    otherwise; values: success, reason, the solve's figures, and the goal's frame and stamp."""
    message = DiagnosticStatus()
    message.level = DiagnosticStatus.OK if status.success else DiagnosticStatus.WARN
    message.name = name
    message.hardware_id = hardware_id
    message.message = status.message or status.reason
    values = {"success": str(status.success).lower(), "reason": status.reason, **status.details}
    goal = status.goal
    if goal is not None and goal.header is not None:
        values["goal_frame"] = goal.header.frame_id
        values["goal_stamp"] = f"{goal.header.stamp.sec}.{goal.header.stamp.nanosec:09d}"
    if goal is not None:
        values["tip"] = goal.tip
    message.values = [KeyValue(key=key, value=value) for key, value in values.items()]
    array = DiagnosticArray()
    array.header.stamp = stamp
    array.status = [message]
    return array


#: Servo status codes that are a warning on ``~/status`` (the others are OK).
SERVO_WARNINGS = frozenset(
    {"singularity", "joint_limit", "collision", "stream_timeout", "late", "waiting_for_kernels", "refused"}
)


def servo_status(name: str, hardware_id: str, status) -> DiagnosticStatus:
    """``~/status``: an :class:`ik_node.servo.ServoStatus` as a ``DiagnosticStatus``, its text
    the message and its code the value ``code``; WARN for the codes of :data:`SERVO_WARNINGS`."""
    message = DiagnosticStatus()
    message.level = DiagnosticStatus.WARN if status.code in SERVO_WARNINGS else DiagnosticStatus.OK
    message.name, message.hardware_id = name, hardware_id
    message.message = status.text or status.code
    message.values = [KeyValue(key="code", value=status.code)]
    return message


def solution_markers(base: str, tips, goals: dict, reached: dict, success: bool) -> MarkerArray:
    """Arrows along each tip's x axis in the ``base`` frame, at its controlled point
    (``T_base_point``): the goal (green) and the pose reached (blue, or red when the solve
    failed)."""
    markers = MarkerArray()
    for index, tip in enumerate(tips):
        for namespace, pose, color in (
            ("goal", goals.get(tip), (0.1, 0.8, 0.1)),
            ("reached", reached.get(tip), (0.1, 0.3, 0.9) if success else (0.9, 0.1, 0.1)),
        ):
            if pose is None:
                continue
            marker = Marker()
            marker.header.frame_id = base
            marker.ns, marker.id = namespace, index
            marker.type, marker.action = Marker.ARROW, Marker.ADD
            marker.pose = pose_message(pose)
            marker.scale.x, marker.scale.y, marker.scale.z = ARROW_SCALE
            marker.color.r, marker.color.g, marker.color.b = color
            marker.color.a = 0.9
            markers.markers.append(marker)
    return markers


def interactive_goal_marker(base: str, tip: str, pose) -> InteractiveMarker:
    """A 6-DOF interactive marker named ``tip`` at ``pose`` (``T_base_point``: the tip's
    controlled point, which its goals set) in the ``base`` frame: a move and a rotate control
    about each of the marker's x, y and z axes (the rings and arrows of RViz's interactive-marker
    display), and a small box on the point to grab."""
    marker = InteractiveMarker()
    marker.header.frame_id = base
    marker.name = tip
    marker.description = f"{tip} goal"
    marker.scale = INTERACTIVE_MARKER_SCALE
    marker.pose = pose_message(pose)
    box = Marker()
    box.type = Marker.CUBE
    box.scale.x = box.scale.y = box.scale.z = 0.04
    box.color.r, box.color.g, box.color.b, box.color.a = 0.1, 0.8, 0.1, 0.6
    grab = InteractiveMarkerControl()
    grab.always_visible = True
    grab.interaction_mode = InteractiveMarkerControl.MOVE_ROTATE_3D
    grab.markers = [box]
    marker.controls.append(grab)
    half = math.sqrt(0.5)
    for axis, (x, y, z) in (("x", (1.0, 0.0, 0.0)), ("y", (0.0, 0.0, 1.0)), ("z", (0.0, 1.0, 0.0))):
        # A control acts along the x axis of its orientation: (w, x, y, z) = sqrt(1/2) (1, axis)
        # is a quarter turn about the axis: about x it keeps x, about z it turns x onto y, about
        # y onto -z (RViz's convention for the x, y and z controls).
        for mode, verb in (
            (InteractiveMarkerControl.MOVE_AXIS, "move"),
            (InteractiveMarkerControl.ROTATE_AXIS, "rotate"),
        ):
            control = InteractiveMarkerControl()
            control.name = f"{verb}_{axis}"
            control.orientation.w, control.orientation.x = half, half * x
            control.orientation.y, control.orientation.z = half * y, half * z
            control.orientation_mode = InteractiveMarkerControl.INHERIT
            control.interaction_mode = mode
            marker.controls.append(control)
    return marker
