"""Static obstacles in the solver's base frame: spheres, boxes, capsules and cylinders.

``Obstacle.sphere(radius, position)``, ``Obstacle.box(size, pose)``, ``Obstacle.capsule(radius,
length, pose)`` and ``Obstacle.cylinder(radius, length, pose)``: sizes [m], ``position`` (3,)
[m], ``pose`` a 4x4 ``T_base_obstacle`` or ``(x, y, z)`` or ``((x, y, z), (qx, qy, qz, qw))``
(quaternion order x, y, z, w, normalised). A capsule's and a cylinder's axis is the z axis of
its pose, ``length`` between its end centres (a cylinder's height, as URDF's ``<cylinder>`` and
RViz's CYLINDER marker), centred at the pose. The solver checks a cylinder as the capsule of
the same radius and length around it (it contains the cylinder: a conservative stand-in).

Bad values (a non-positive or non-finite size, NaN in a pose, a rotation that is not one) raise
:class:`~ik_node.errors.IKNodeError` naming the obstacle.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import IKNodeError
from ..lie import quaternion_to_matrix

__all__ = ["OBSTACLE_KINDS", "Obstacle", "obstacle_pose"]

#: Largest deviation of ``R^T R`` from the identity accepted in an obstacle's pose.
ROTATION_TOLERANCE = 1e-6
OBSTACLE_KINDS = ("sphere", "box", "capsule", "cylinder")


def obstacle_pose(pose, what: str = "obstacle") -> np.ndarray:
    """A 4x4 ``T_base_obstacle`` from a 4x4, ``(x, y, z)`` or ``((x, y, z), (qx, qy, qz, qw))``
    (quaternion x, y, z, w, normalised); :class:`IKNodeError` naming ``what`` otherwise."""
    if pose is None:
        return np.eye(4)
    try:
        array = np.asarray(pose, dtype=float)
    except (TypeError, ValueError):
        array = None
    if array is not None and array.shape == (4, 4):
        matrix = array.copy()
    elif array is not None and array.shape == (3,):
        matrix = np.eye(4)
        matrix[:3, 3] = array
    else:
        try:
            position, quaternion = pose
            position = np.asarray(position, dtype=float).reshape(3)
            x, y, z, w = np.asarray(quaternion, dtype=float).reshape(4)
        except (TypeError, ValueError):
            raise IKNodeError(
                f"{what}: pose must be a 4x4 matrix, (x, y, z) or ((x, y, z), (qx, qy, qz, qw)), got {pose!r}"
            ) from None
        norm = math.sqrt(x * x + y * y + z * z + w * w)
        if not (math.isfinite(norm) and norm > 0.0):
            raise IKNodeError(f"{what}: the orientation quaternion (x, y, z, w) must be finite and non-zero")
        matrix = np.eye(4)
        matrix[:3, :3] = quaternion_to_matrix(x / norm, y / norm, z / norm, w / norm)
        matrix[:3, 3] = position
    if not np.all(np.isfinite(matrix)):
        raise IKNodeError(f"{what}: the pose has NaN or infinite values")
    rotation = matrix[:3, :3]
    if (
        np.abs(rotation.T @ rotation - np.eye(3)).max() > ROTATION_TOLERANCE
        or np.linalg.det(rotation) < 0.0
        or not np.array_equal(matrix[3], [0.0, 0.0, 0.0, 1.0])
    ):
        raise IKNodeError(f"{what}: the pose's rotation is not a rotation (or its last row is not 0 0 0 1)")
    return matrix


@dataclass(frozen=True, eq=False)
class Obstacle:
    """A static obstacle in the base frame: ``kind`` (``'sphere'``, ``'box'``, ``'capsule'``,
    ``'cylinder'``), ``size`` [m] (sphere: (radius,); box: (x, y, z) edge lengths; capsule and
    cylinder: (radius, length)), ``pose`` 4x4 ``T_base_obstacle`` and a ``name`` for messages
    and markers. Build with the class methods."""

    kind: str
    size: tuple[float, ...]
    pose: np.ndarray = field(repr=False)
    name: str = ""

    def __post_init__(self):
        what = f"obstacle '{self.name}'" if self.name else f"{self.kind} obstacle"
        if self.kind not in OBSTACLE_KINDS:
            raise IKNodeError(f"{what}: unknown kind {self.kind!r}; choose one of {list(OBSTACLE_KINDS)}")
        counts = {"sphere": 1, "box": 3, "capsule": 2, "cylinder": 2}
        try:
            size = tuple(float(value) for value in np.asarray(self.size, dtype=float).reshape(-1))
        except (TypeError, ValueError):
            raise IKNodeError(f"{what}: size must be numbers [m], got {self.size!r}") from None
        if len(size) != counts[self.kind]:
            raise IKNodeError(f"{what}: a {self.kind} takes {counts[self.kind]} size values [m], got {size}")
        names = {"sphere": ("radius",), "box": ("x", "y", "z"), "capsule": ("radius", "length"),
                 "cylinder": ("radius", "length")}[self.kind]  # fmt: skip
        for name, value in zip(names, size):
            positive = value > 0.0 or (name == "length" and value == 0.0)
            if not (math.isfinite(value) and positive):
                bound = ">= 0" if name == "length" else "> 0"
                raise IKNodeError(f"{what}: {name} must be finite and {bound} [m], got {value}")
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "pose", obstacle_pose(self.pose, what))

    @classmethod
    def sphere(cls, radius: float, position=(0.0, 0.0, 0.0), name: str = "") -> Obstacle:
        return cls("sphere", (radius,), position, name)

    @classmethod
    def box(cls, size: Sequence[float], pose=None, name: str = "") -> Obstacle:
        return cls("box", tuple(size), pose, name)

    @classmethod
    def capsule(cls, radius: float, length: float, pose=None, name: str = "") -> Obstacle:
        return cls("capsule", (radius, length), pose, name)

    @classmethod
    def cylinder(cls, radius: float, length: float, pose=None, name: str = "") -> Obstacle:
        return cls("cylinder", (radius, length), pose, name)

    @property
    def position(self) -> np.ndarray:
        return self.pose[:3, 3].copy()
