"""Obstacles from MoveIt's planning scene (``moveit_msgs/PlanningScene``, what move_group publishes
on ``/monitored_planning_scene``), where moveit_msgs is importable: messages only, no rclpy.

:class:`SceneObstacles` keeps the world's collision objects as move_group keeps them, by ``id``:
a full scene (``is_diff`` false) replaces them all; a diff applies each object's ``operation``:
``ADD`` adds or replaces the object, ``REMOVE`` removes it (an empty ``id``: every object),
``APPEND`` adds its shapes to the object, ``MOVE`` moves the object to its new ``pose``. Shapes:

* ``SolidPrimitive`` ``BOX`` (``dimensions`` x, y, z: edge lengths), ``SPHERE`` (radius) and
  ``CYLINDER`` (height, radius; along the shape's z axis; the solver checks the capsule around
  it); a ``CONE`` as the cylinder around it (height, radius);
* meshes and planes are not obstacles here (the solver takes convex primitives): the object's
  other shapes are kept and a warning names what was left out.

Poses: each shape at ``pose @ primitive_poses[i]`` in ``header.frame_id`` (MoveIt's ROS 2 rule:
the shapes' poses are relative to the object's pose); an all-zero quaternion is the identity
(as MoveIt takes it). Obstacles are named ``planning_scene/<id>/<index>``. An object that cannot be read
(a NaN pose, a non-positive dimension, a frame that cannot be resolved) is refused with a warning
naming its ``id``; an object it would have replaced stays. Attached objects
(``robot_state.attached_collision_objects``) and the octomap are not read.

Units: m; quaternions in the message's order ``(x, y, z, w)``.
"""

from __future__ import annotations

import math

import numpy as np

from ..collision import Obstacle
from ..errors import IKNodeError
from ..lie import inverse, quaternion_to_matrix
from .obstacle_messages import FramePose

__all__ = ["SceneObstacles"]

# moveit_msgs/CollisionObject's operations and shape_msgs/SolidPrimitive's types (the messages'
# constants; test_node_collision.py checks them where moveit_msgs is importable). ``operation`` is a
# ``byte`` field: rclpy gives it as ``bytes``.
ADD, REMOVE, APPEND, MOVE = 0, 1, 2, 3
BOX, SPHERE, CYLINDER, CONE = 1, 2, 3, 4
PRIMITIVE_NAMES = {BOX: "BOX", SPHERE: "SPHERE", CYLINDER: "CYLINDER", CONE: "CONE"}


def _byte(value) -> int:
    """A ``byte`` field's value (rclpy gives ``bytes`` of length 1) as an int."""
    return value[0] if isinstance(value, (bytes, bytearray)) else int(value)


def _pose(message, what: str) -> np.ndarray:
    """``T`` (4x4) of a ``geometry_msgs/Pose``; NaN refused naming ``what``."""
    position, orientation = message.position, message.orientation
    xyz = [float(position.x), float(position.y), float(position.z)]
    quaternion = [float(orientation.x), float(orientation.y), float(orientation.z), float(orientation.w)]
    if not all(math.isfinite(value) for value in xyz + quaternion):
        raise IKNodeError(f"{what}: a pose has NaN or infinite values")
    norm = math.sqrt(sum(value * value for value in quaternion))
    matrix = np.eye(4)
    if norm > 0.0:
        matrix[:3, :3] = quaternion_to_matrix(*(value / norm for value in quaternion))
    matrix[:3, 3] = xyz
    return matrix


def _shape(primitive, pose: np.ndarray, name: str, what: str) -> Obstacle:
    """The obstacle of a ``shape_msgs/SolidPrimitive`` at ``pose`` (base frame)."""
    kind = int(primitive.type)
    dimensions = [float(value) for value in primitive.dimensions]
    needed = {BOX: 3, SPHERE: 1, CYLINDER: 2, CONE: 2}.get(kind)
    if needed is None:
        raise IKNodeError(f"{what}: primitive type {kind} is not one of BOX 1, SPHERE 2, CYLINDER 3, CONE 4")
    if len(dimensions) < needed or not all(math.isfinite(v) and v > 0.0 for v in dimensions[:needed]):
        raise IKNodeError(
            f"{what}: a {PRIMITIVE_NAMES[kind]} needs {needed} positive dimensions [m], got {dimensions}"
        )
    if kind == BOX:
        return Obstacle.box(dimensions[:3], pose, name)
    if kind == SPHERE:
        return Obstacle.sphere(dimensions[0], pose[:3, 3], name)
    height, radius = dimensions[:2]  # (CYLINDER_HEIGHT, CYLINDER_RADIUS; a CONE's are the same)
    return Obstacle.cylinder(radius, height, pose, name)


class SceneObstacles:
    """The world's collision objects of a planning scene topic, by ``id`` (see the module's
    docstring): each object's ``T_base_object`` and its shapes (primitive, ``T_object_shape``)."""

    def __init__(self):
        self._objects: dict[str, tuple[np.ndarray, list]] = {}
        self._obstacles: dict[str, Obstacle] = {}

    def by_name(self) -> dict[str, Obstacle]:
        """``{'planning_scene/<id>/<index>': obstacle}``."""
        return dict(self._obstacles)

    def apply(self, scene, frame_pose: FramePose) -> tuple[bool, list[str]]:
        """Apply a ``PlanningScene`` (a full scene or a diff); returns whether the obstacles
        changed and a warning per object refused or shape left out."""
        before = self._obstacles
        objects = dict(self._objects) if scene.is_diff else {}
        warnings: list[str] = []
        for message in scene.world.collision_objects:
            try:
                self._apply_object(objects, message, frame_pose, warnings)
            except IKNodeError as error:
                warnings.append(f"planning scene object refused: {error}")
        self._objects = objects
        self._obstacles = {
            name: _shape(primitive, base_object @ object_shape, name, object_id)
            for object_id, (base_object, shapes) in objects.items()
            for index, (primitive, object_shape) in enumerate(shapes)
            for name in (f"planning_scene/{object_id}/{index}",)
        }
        changed = list(before) != list(self._obstacles) or any(
            not np.array_equal(before[name].pose, self._obstacles[name].pose)
            or before[name].size != self._obstacles[name].size
            for name in before
        )
        return changed, warnings

    @staticmethod
    def _apply_object(objects: dict, message, frame_pose: FramePose, warnings: list[str]) -> None:
        object_id, operation = message.id, _byte(message.operation)
        what = f"object '{object_id}'"
        if operation == REMOVE:
            if object_id == "":
                objects.clear()
            else:
                objects.pop(object_id, None)
            return
        if operation not in (ADD, APPEND, MOVE):
            raise IKNodeError(f"{what}: unknown operation {operation} (ADD 0, REMOVE 1, APPEND 2, MOVE 3)")
        base_object = frame_pose(message.header.frame_id, message.header.stamp) @ _pose(message.pose, what)
        if operation == MOVE:
            if object_id not in objects:
                raise IKNodeError(f"{what}: MOVE of an object the scene does not have")
            objects[object_id] = (base_object, objects[object_id][1])
            return
        shapes = []
        for index, (primitive, pose) in enumerate(zip(message.primitives, message.primitive_poses)):
            object_shape = _pose(pose, what)
            _shape(primitive, base_object @ object_shape, "", f"{what} primitive {index}")  # (checked now)
            shapes.append((primitive, object_shape))
        left_out = [kind for kind, items in (("meshes", message.meshes), ("planes", message.planes)) if items]
        if left_out:
            warnings.append(
                f"planning scene {what}: its {' and '.join(left_out)} are not obstacles for ik_node (boxes, "
                "spheres, cylinders and cones are); its primitives are kept"
            )
        if operation == APPEND and object_id in objects:  # (the new shapes relative to the object's pose)
            kept_pose, kept = objects[object_id]
            relative = inverse(kept_pose) @ base_object
            base_object, shapes = (
                kept_pose,
                kept + [(primitive, relative @ pose) for primitive, pose in shapes],
            )
        objects[object_id] = (base_object, shapes)
