"""Obstacles from ``visualization_msgs/MarkerArray`` messages, and the collision model drawn as
markers (message packages only, no rclpy).

Why markers: MoveIt's ``moveit_msgs/CollisionObject`` is the usual way to tell a planner about
obstacles, but moveit_msgs is not installable without a ROS install (neither PyPI nor Debian
has it for ROS 2); ``visualization_msgs/MarkerArray`` is everywhere RViz is, every tool can
publish it, and RViz shows the same message.

:class:`MarkerObstacles` keeps the obstacles a topic of marker arrays describes, as RViz keeps
markers: by ``(ns, id)``; ``ADD``/``MODIFY`` adds or replaces, ``DELETE`` removes, ``DELETEALL``
clears. Shapes (scale in metres, the marker's pose in ``header.frame_id``):

* ``SPHERE``: a sphere of radius ``max(scale) / 2`` (an ellipsoid's enclosing sphere);
* ``CUBE``: a box of edge lengths ``scale.x, scale.y, scale.z``;
* ``CYLINDER``: a cylinder of radius ``max(scale.x, scale.y) / 2`` and length ``scale.z``
  along the pose's z axis (the solver checks the capsule around it).

Poses: quaternions in the message's order ``(x, y, z, w)``, normalised; an all-zero quaternion
is the identity (RViz's rule for markers published without an orientation). ``lifetime`` and
``frame_locked`` are ignored: an obstacle stays where it was put, in the base frame, until it is
replaced or deleted. A marker that cannot be an obstacle (another type or action, a NaN or
infinite pose, a scale that is not positive and finite, a frame that cannot be resolved) is
refused with a warning naming its ``ns`` and ``id``; the others of the array are kept.

:func:`collision_markers`: the solver's collision shapes (:meth:`ik_node.IKSolver.collision_shapes`)
as markers for RViz, which has no capsule marker: a capsule is a CYLINDER between its end
centres and a SPHERE at each end (one SPHERE when the ends coincide), a box a CUBE.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np
from visualization_msgs.msg import Marker, MarkerArray

from ..collision import Obstacle
from ..decisions.conversions import pose_to_fields
from ..errors import IKNodeError
from ..lie import quaternion_to_matrix

__all__ = ["MarkerObstacles", "collision_markers", "marker_obstacle", "marker_name"]

#: The marker types that describe obstacles, and the name a refusal gives the others.
OBSTACLE_TYPES = {Marker.SPHERE: "SPHERE", Marker.CUBE: "CUBE", Marker.CYLINDER: "CYLINDER"}
TYPE_NAMES = {
    getattr(Marker, name): name
    for name in ("ARROW", "CUBE", "SPHERE", "CYLINDER", "LINE_STRIP", "LINE_LIST", "CUBE_LIST", "SPHERE_LIST",
                 "POINTS", "TEXT_VIEW_FACING", "MESH_RESOURCE", "TRIANGLE_LIST")
}  # fmt: skip
#: Colours (r, g, b, a) of the collision markers: the robot's shapes and the obstacles.
ROBOT_COLOR = (0.2, 0.6, 1.0, 0.35)
OBSTACLE_COLOR = (1.0, 0.35, 0.1, 0.6)
#: End centres closer than this [m] draw a capsule as one sphere.
SAME_POINT = 1e-9

#: ``frame_pose(frame_id, stamp) -> T_base_frame`` (4x4), raising :class:`IKNodeError` saying why
#: a frame cannot be resolved.
FramePose = Callable[[str, object], np.ndarray]


def marker_name(marker) -> str:
    """The name an obstacle from ``marker`` gets (``ns/id``), in warnings and collision markers."""
    return f"{marker.ns}/{marker.id}"


def _marker_pose(marker, what: str) -> np.ndarray:
    """``T_frame_marker`` (4x4) from the marker's pose; see the module's docstring."""
    position, orientation = marker.pose.position, marker.pose.orientation
    xyz = [float(position.x), float(position.y), float(position.z)]
    quaternion = [float(orientation.x), float(orientation.y), float(orientation.z), float(orientation.w)]
    if not all(math.isfinite(value) for value in xyz + quaternion):
        raise IKNodeError(f"{what}: the pose has NaN or infinite values (position {xyz}, quaternion x y z w "
                          f"{quaternion})")  # fmt: skip
    norm = math.sqrt(sum(value * value for value in quaternion))
    matrix = np.eye(4)
    if norm > 0.0:  # (all zero: the identity, as RViz takes it)
        matrix[:3, :3] = quaternion_to_matrix(*(value / norm for value in quaternion))
    matrix[:3, 3] = xyz
    return matrix


def marker_obstacle(marker, frame_pose: np.ndarray) -> Obstacle:
    """The obstacle an ``ADD``/``MODIFY`` marker describes, in the base frame (``frame_pose``:
    ``T_base_frame`` of its ``header.frame_id``); raises :class:`IKNodeError` naming the marker."""
    name = marker_name(marker)
    what = f"marker ns '{marker.ns}' id {marker.id}"
    if marker.type not in OBSTACLE_TYPES:
        shown = TYPE_NAMES.get(marker.type, str(marker.type))
        raise IKNodeError(f"{what}: type {shown} is not an obstacle (SPHERE, CUBE or CYLINDER)")
    pose = np.asarray(frame_pose, dtype=float) @ _marker_pose(marker, what)
    scale = [float(marker.scale.x), float(marker.scale.y), float(marker.scale.z)]
    if not all(math.isfinite(value) and value > 0.0 for value in scale):
        raise IKNodeError(f"{what}: scale must be positive and finite [m], got x y z {scale}")
    try:
        if marker.type == Marker.SPHERE:
            return Obstacle.sphere(max(scale) / 2.0, pose[:3, 3], name)
        if marker.type == Marker.CUBE:
            return Obstacle.box(scale, pose, name)
        return Obstacle.cylinder(max(scale[0], scale[1]) / 2.0, scale[2], pose, name)
    except IKNodeError as error:
        raise IKNodeError(f"{what}: {error}") from None


class MarkerObstacles:
    """The obstacles of a topic of marker arrays, by ``(ns, id)`` (see the module's docstring)."""

    def __init__(self):
        self.obstacles: dict[tuple[str, int], Obstacle] = {}

    def by_name(self) -> dict[str, Obstacle]:
        """``{'ns/id': obstacle}``, in the order they were added."""
        return {obstacle.name: obstacle for obstacle in self.obstacles.values()}

    def apply(self, markers: Iterable, frame_pose: FramePose) -> tuple[bool, list[str]]:
        """Apply a marker array's markers in order; returns whether the obstacles changed and a
        warning per refused marker (a refused marker changes nothing: an obstacle it would
        have replaced stays)."""
        before = dict(self.obstacles)
        warnings = []
        for marker in markers:
            key = (marker.ns, int(marker.id))
            if marker.action == Marker.DELETEALL:
                self.obstacles.clear()
            elif marker.action == Marker.DELETE:
                self.obstacles.pop(key, None)
            elif marker.action == Marker.ADD:  # (MODIFY is the same value)
                try:
                    base_frame = frame_pose(marker.header.frame_id, marker.header.stamp)
                    obstacle = marker_obstacle(marker, base_frame)
                except IKNodeError as error:
                    warnings.append(f"obstacle refused: {error}")
                    continue
                self.obstacles.pop(key, None)  # (a replaced one moves to the end)
                self.obstacles[key] = obstacle
            else:
                warnings.append(
                    f"obstacle refused: marker ns '{marker.ns}' id {marker.id}: unknown action "
                    f"{marker.action} (ADD/MODIFY 0, DELETE 2, DELETEALL 3)"
                )
        changed = list(before) != list(self.obstacles) or any(
            before[key] is not self.obstacles[key] for key in before
        )
        return changed, warnings


def _axis_quaternion(direction: np.ndarray) -> tuple[float, float, float, float]:
    """The quaternion ``(x, y, z, w)`` turning the z axis onto the unit vector ``direction``."""
    x, y, z = direction
    if z < -1.0 + 1e-12:  # (opposite: half a turn about x)
        return (1.0, 0.0, 0.0, 0.0)
    # q = (z_axis x d, 1 + z_axis . d), normalised: half the angle between them
    quaternion = np.array([-y, x, 0.0, 1.0 + z])
    quaternion /= np.linalg.norm(quaternion)
    return tuple(float(value) for value in quaternion)


def _place(marker: Marker, position) -> None:
    marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = (float(v) for v in position)


def _marker(base: str, namespace: str, index: int, kind: int, color, stamp) -> Marker:
    marker = Marker()
    marker.header.frame_id = base
    if stamp is not None:
        marker.header.stamp = stamp
    marker.ns, marker.id = namespace, index
    marker.type, marker.action = kind, Marker.ADD
    marker.pose.orientation.w = 1.0
    marker.color.r, marker.color.g, marker.color.b, marker.color.a = color
    return marker


def collision_markers(
    base: str, shapes: Iterable, obstacle_names: Iterable[str] = (), stamp=None
) -> MarkerArray:
    """Markers of ``shapes`` (``(owner, kind, radius, a, b)`` in the ``base`` frame, as
    :meth:`ik_node.IKSolver.collision_shapes` returns them: ``'capsule'``: end centres ``a``,
    ``b`` (3,) [m]; ``'box'``: ``a`` its 4x4 pose ``T_base_box``, ``b`` its edge lengths (3,)
    [m]) after a ``DELETEALL`` (shapes gone since the last array vanish). Namespaces ``robot``
    and ``obstacles`` (the owners in ``obstacle_names``); ``text`` of each marker: its owner."""
    obstacle_names = set(obstacle_names)
    array = MarkerArray()
    clear = Marker()
    clear.header.frame_id = base
    clear.action = Marker.DELETEALL
    array.markers.append(clear)
    counters = {"robot": 0, "obstacles": 0}

    def add(namespace: str, kind: int, owner: str, color) -> Marker:
        marker = _marker(base, namespace, counters[namespace], kind, color, stamp)
        marker.text = owner
        counters[namespace] += 1
        array.markers.append(marker)
        return marker

    for owner, kind, radius, a, b in shapes:
        namespace = "obstacles" if owner in obstacle_names else "robot"
        color = OBSTACLE_COLOR if namespace == "obstacles" else ROBOT_COLOR
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        if kind == "box":
            marker = add(namespace, Marker.CUBE, owner, color)
            position, quaternion = pose_to_fields(a)
            _place(marker, position)
            orientation = marker.pose.orientation
            orientation.x, orientation.y, orientation.z, orientation.w = quaternion
            marker.scale.x, marker.scale.y, marker.scale.z = (float(value) for value in b)
            continue
        diameter = 2.0 * float(radius)
        length = float(np.linalg.norm(b - a))
        ends = [a] if length < SAME_POINT else [a, b]
        for end in ends:
            marker = add(namespace, Marker.SPHERE, owner, color)
            _place(marker, end)
            marker.scale.x = marker.scale.y = marker.scale.z = diameter
        if len(ends) == 2:
            marker = add(namespace, Marker.CYLINDER, owner, color)
            middle = 0.5 * (a + b)
            _place(marker, middle)
            orientation = marker.pose.orientation
            orientation.x, orientation.y, orientation.z, orientation.w = _axis_quaternion((b - a) / length)
            marker.scale.x = marker.scale.y = diameter
            marker.scale.z = length
    return array
