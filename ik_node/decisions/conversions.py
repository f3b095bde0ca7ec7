"""Poses between ROS message fields and 4x4 matrices, validated. No rclpy import.

Messages carry quaternions in ROS order ``(x, y, z, w)``, as does :mod:`ik_node.lie`.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import TargetError
from ..lie import matrix_to_quaternion, quaternion_to_matrix

__all__ = ["pose_from_fields", "pose_from_message", "pose_to_fields"]

#: A quaternion shorter than this is refused rather than normalised (it has no direction).
MIN_QUATERNION_NORM = 1e-6


def pose_from_message(pose) -> np.ndarray:
    """``geometry_msgs/Pose`` (any object with ``position.{x,y,z}`` [m] and
    ``orientation.{x,y,z,w}``) as a 4x4 homogeneous transform; see :func:`pose_from_fields`."""
    position, orientation = pose.position, pose.orientation
    return pose_from_fields(
        [position.x, position.y, position.z], [orientation.x, orientation.y, orientation.z, orientation.w]
    )


def pose_from_fields(position, quaternion) -> np.ndarray:
    """``[x, y, z]`` [m] and a quaternion in ROS order ``[qx, qy, qz, qw]`` as a 4x4 transform.

    Raises :class:`~ik_node.errors.TargetError` for NaN/inf fields and for a zero or NaN
    quaternion; a non-unit quaternion is normalised (``q / |q|``).
    """
    position, quaternion = [float(value) for value in position], [float(value) for value in quaternion]
    if not all(math.isfinite(value) for value in position):
        raise TargetError(f"goal position must be finite, got {position}")
    if not all(math.isfinite(value) for value in quaternion):
        raise TargetError(f"goal orientation must be finite, got quaternion (x y z w) {quaternion}")
    largest = max(abs(value) for value in quaternion)  # scaled first: hypot overflows near 1.8e308
    scaled = [value / largest for value in quaternion] if largest > 0.0 else quaternion
    norm = largest * math.hypot(*scaled)
    if norm < MIN_QUATERNION_NORM:
        raise TargetError(
            f"goal orientation is a zero quaternion (x y z w) {quaternion}; identity is (0 0 0 1)"
        )
    unit = math.hypot(*scaled)
    x, y, z, w = (value / unit for value in scaled)
    matrix = np.eye(4)
    matrix[:3, :3] = quaternion_to_matrix(x, y, z, w)
    matrix[:3, 3] = position
    return matrix


def pose_to_fields(matrix: np.ndarray) -> tuple[list[float], list[float]]:
    """A 4x4 transform as ``([x, y, z], [qx, qy, qz, qw])`` (m; ROS quaternion order, w >= 0)."""
    x, y, z, w = matrix_to_quaternion(np.asarray(matrix)[:3, :3])  # (w >= 0)
    return [float(value) for value in matrix[:3, 3]], [float(x), float(y), float(z), float(w)]
