"""Rigid-body helpers on SO(3) and SE(3).

Conventions (used everywhere in ik_node):

* A pose is a 4x4 homogeneous matrix ``T = [[R, t], [0, 1]]``; ``T_a_b`` maps coordinates in
  frame ``b`` to frame ``a`` (``p_a = R_a_b p_b + t_a_b``). Units: metres and radians.
* A twist is ordered ``[v; w]`` (linear velocity first, then angular velocity), shape (6,).
* The adjoint of ``T = (R, t)`` is ``Ad(T) = [[R, hat(t) R], [0, R]]``: it maps a twist expressed
  in frame ``b`` to the same motion expressed in frame ``a`` (Murray, Li & Sastry 1994, eq. 2.58,
  rewritten for the ``[v; w]`` order).
* Quaternions in this module follow transforms3d: ``(w, x, y, z)``. ROS messages are
  ``(x, y, z, w)``; the conversion lives only at the message boundary.
"""

from __future__ import annotations

import numpy as np
from transforms3d.euler import euler2mat

__all__ = [
    "hat",
    "adjoint",
    "inverse",
    "pose_from_xyz_rpy",
]


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
    pose[:3, :3] = euler2mat(*rpy, axes="sxyz")
    pose[:3, 3] = xyz
    return pose
