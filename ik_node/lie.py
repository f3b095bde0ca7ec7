"""Rigid-body helpers on SO(3) and SE(3).

Conventions (used everywhere in ik_node):

* A pose is a 4x4 homogeneous matrix ``T = [[R, t], [0, 1]]``; ``T_a_b`` maps coordinates in
  frame ``b`` to frame ``a`` (``p_a = R_a_b p_b + t_a_b``). Units: metres and radians.
* A twist is ordered ``[v; w]`` (linear velocity first, then angular velocity), shape (6,).
* The adjoint of ``T = (R, t)`` is ``Ad(T) = [[R, hat(t) R], [0, R]]``: it maps a twist expressed
  in frame ``b`` to the same motion expressed in frame ``a`` (Murray, Li & Sastry 1994, eq. 2.58,
  rewritten for the ``[v; w]`` order).
* Quaternions are in ROS order ``(x, y, z, w)`` (as ``geometry_msgs/Quaternion``), unit length,
  ``q`` and ``-q`` being the same rotation. Roll, pitch, yaw are URDF's: fixed axes x, y, z,
  ``R = Rz(yaw) Ry(pitch) Rx(roll)``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "hat",
    "adjoint",
    "inverse",
    "pose_from_xyz_rpy",
    "quaternion_to_matrix",
    "matrix_to_quaternion",
    "rpy_to_matrix",
    "matrix_to_rpy",
]

#: Below this ``cos(pitch)`` [-] a rotation is taken as gimbal-locked (pitch = +-pi/2, where only
#: roll - yaw or roll + yaw is defined): ``R00`` and ``R10`` are round-off, whose ``atan2`` would
#: be an arbitrary yaw, so yaw is set to 0 and roll carries the whole turn about the vertical.
#: Setting it costs at most ``2 * GIMBAL_LOCK_COSINE`` in the rebuilt matrix: a few ulps.
GIMBAL_LOCK_COSINE = 4 * np.finfo(float).eps
#: A quaternion shorter than this [-] has no direction and is refused.
MIN_QUATERNION_NORM = 1e-12


def hat(vector: np.ndarray) -> np.ndarray:
    """Skew-symmetric matrix with ``hat(a) @ b == cross(a, b)``; works on (..., 3) arrays."""
    vector = np.asarray(vector, dtype=float)
    out = np.zeros(vector.shape[:-1] + (3, 3))
    x, y, z = vector[..., 0], vector[..., 1], vector[..., 2]
    out[..., 0, 1], out[..., 0, 2] = -z, y
    out[..., 1, 0], out[..., 1, 2] = z, -x
    out[..., 2, 0], out[..., 2, 1] = -y, x
    return out


def adjoint(pose: np.ndarray) -> np.ndarray:
    """6x6 adjoint ``Ad(T) = [[R, hat(t) R], [0, R]]`` of a pose (or a stack of poses (..., 4, 4))."""
    rotation = pose[..., :3, :3]
    translation = pose[..., :3, 3]
    out = np.zeros(pose.shape[:-2] + (6, 6))
    out[..., :3, :3] = rotation
    out[..., 3:, 3:] = rotation
    out[..., :3, 3:] = hat(translation) @ rotation
    return out


def inverse(pose: np.ndarray) -> np.ndarray:
    """Inverse of a rigid transform (or a stack): ``[[R^T, -R^T t], [0, 1]]``."""
    rotation_t = np.swapaxes(pose[..., :3, :3], -1, -2)
    out = np.zeros_like(pose)
    out[..., :3, :3] = rotation_t
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", rotation_t, pose[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def pose_from_xyz_rpy(xyz, rpy) -> np.ndarray:
    """4x4 pose from a URDF ``<origin xyz rpy>`` (metres; fixed-axis roll, pitch, yaw in radians,
    i.e. ``R = Rz(yaw) Ry(pitch) Rx(roll)``)."""
    pose = np.eye(4)
    pose[:3, :3] = rpy_to_matrix(*rpy)
    pose[:3, 3] = xyz
    return pose


def quaternion_to_matrix(x: float, y: float, z: float, w: float) -> np.ndarray:
    """3x3 rotation matrix of the quaternion ``(x, y, z, w)`` (ROS order, scalar last).

    A non-unit quaternion is normalised first (``q / |q|``); one shorter than
    :data:`MIN_QUATERNION_NORM` raises ``ValueError``. Then, with ``s = 2`` (Siciliano et al.
    2009, Sec. 2.7; ``s = 2 / |q|^2`` for a quaternion of any length)::

        R = [[1 - s(y² + z²),   s(xy - zw),       s(xz + yw)    ],
             [s(xy + zw),       1 - s(x² + z²),   s(yz - xw)    ],
             [s(xz - yw),       s(yz + xw),       1 - s(x² + y²)]]

    Example: ``quaternion_to_matrix(0, 0, sin(pi/4), cos(pi/4))`` is a quarter turn about z,
    ``[[0, -1, 0], [1, 0, 0], [0, 0, 1]]``.
    """
    norm = math.hypot(x, y, z, w)  # (no overflow for huge components)
    if not norm >= MIN_QUATERNION_NORM:  # (also refuses NaN)
        raise ValueError(f"quaternion (x y z w) ({x}, {y}, {z}, {w}) has no direction; identity is (0 0 0 1)")
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    s = 2.0
    return np.array(
        [
            [1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)],
            [s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w)],
            [s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y)],
        ]
    )


def matrix_to_quaternion(rotation: np.ndarray) -> tuple[float, float, float, float]:
    """The unit quaternion ``(x, y, z, w)`` (ROS order) of a 3x3 rotation matrix, with ``w >= 0``.

    Shepperd's method (Shepperd 1978, "Quaternion from rotation matrix", J. Guidance and
    Control 1(3)): of ``4w² = 1 + tr R``, ``4x² = 1 + 2 R00 - tr R``, ``4y² = 1 + 2 R11 - tr R``
    and ``4z² = 1 + 2 R22 - tr R``, the largest is taken from the diagonal (so the square root is
    of a number >= 1) and the three other components from off-diagonal sums and differences,
    e.g. ``4wx = R21 - R12``, ``4xy = R01 + R10``. Accurate to round-off for every rotation,
    including half turns (``w = 0``). A matrix slightly off SO(3) (round-off) gives a nearby
    quaternion, normalised.
    """
    R = np.asarray(rotation, dtype=float)
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    largest = int(np.argmax([trace, R[0, 0], R[1, 1], R[2, 2]]))
    if largest == 0:  # |w| largest
        w = 0.5 * math.sqrt(max(1.0 + trace, 0.0))
        x, y, z = (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w)
    elif largest == 1:  # |x| largest
        x = 0.5 * math.sqrt(max(1.0 + 2 * R[0, 0] - trace, 0.0))
        w, y, z = (R[2, 1] - R[1, 2]) / (4 * x), (R[0, 1] + R[1, 0]) / (4 * x), (R[0, 2] + R[2, 0]) / (4 * x)
    elif largest == 2:  # |y| largest
        y = 0.5 * math.sqrt(max(1.0 + 2 * R[1, 1] - trace, 0.0))
        w, x, z = (R[0, 2] - R[2, 0]) / (4 * y), (R[0, 1] + R[1, 0]) / (4 * y), (R[1, 2] + R[2, 1]) / (4 * y)
    else:  # |z| largest
        z = 0.5 * math.sqrt(max(1.0 + 2 * R[2, 2] - trace, 0.0))
        w, x, y = (R[1, 0] - R[0, 1]) / (4 * z), (R[0, 2] + R[2, 0]) / (4 * z), (R[1, 2] + R[2, 1]) / (4 * z)
    sign = -1.0 if w < 0 else 1.0
    norm = sign * math.sqrt(x * x + y * y + z * z + w * w)
    return float(x / norm), float(y / norm), float(z / norm), float(w / norm)


def rpy_to_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """3x3 rotation ``R = Rz(yaw) Ry(pitch) Rx(roll)`` [rad]: URDF's ``rpy``, i.e. roll about the
    fixed x axis, then pitch about the fixed y axis, then yaw about the fixed z axis.

    Example: ``rpy_to_matrix(0, 0, pi/2)`` is ``[[0, -1, 0], [1, 0, 0], [0, 0, 1]]``.
    """
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def matrix_to_rpy(rotation: np.ndarray) -> tuple[float, float, float]:
    """``(roll, pitch, yaw)`` [rad] with ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (the inverse of
    :func:`rpy_to_matrix`); roll and yaw in [-pi, pi], pitch in [-pi/2, pi/2].

    ``pitch = atan2(-R20, sqrt(R00² + R10²))`` and ``yaw = atan2(R10, R00)``; the roll is read
    from ``Rz(yaw)^T R = Ry(pitch) Rx(roll)``, whose middle row is ``(0, cos roll, -sin roll)``:
    so an error in the yaw (large near gimbal lock, where ``R00`` and ``R10`` are tiny) is
    absorbed by the roll and the angles rebuild ``R`` to round-off. At gimbal lock
    (``cos(pitch)`` below :data:`GIMBAL_LOCK_COSINE`) the yaw is 0 and the roll carries the turn.
    """
    R = np.asarray(rotation, dtype=float)
    cos_pitch = math.hypot(R[0, 0], R[1, 0])
    pitch = math.atan2(-R[2, 0], cos_pitch)
    yaw = math.atan2(R[1, 0], R[0, 0]) if cos_pitch >= GIMBAL_LOCK_COSINE else 0.0
    cy, sy = math.cos(yaw), math.sin(yaw)
    # Middle row of Rz(yaw)^T R: -sin(yaw) R[0] + cos(yaw) R[1] = (0, cos roll, -sin roll).
    roll = math.atan2(sy * R[0, 2] - cy * R[1, 2], cy * R[1, 1] - sy * R[0, 1])
    return roll, pitch, yaw
