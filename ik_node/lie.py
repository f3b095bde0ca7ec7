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

import math

import numpy as np
from transforms3d.euler import euler2mat

__all__ = [
    "hat",
    "adjoint",
    "inverse",
    "so3_log",
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


def so3_log(rotation: np.ndarray) -> np.ndarray:
    """Rotation vector ``theta * u`` (rad) of a rotation matrix (3, 3) or a stack (..., 3, 3);
    the inverse of Rodrigues' formula.

    ``theta = atan2(|s|, (tr R - 1) / 2)`` with ``s = vee(R - R^T) / 2 = sin(theta) u``. Accurate
    over the whole range ``[0, pi]``: near ``pi``, where ``s`` vanishes, the axis is read from the
    symmetric part ``(R + R^T)/2 = cos(theta) I + (1 - cos(theta)) u u^T``.
    """
    if rotation.size == 9:  # one matrix: the same formulas on floats, several times faster
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = rotation.ravel().tolist()
        cosine = 0.5 * (r00 + r11 + r22 - 1.0)
        if cosine > -0.9:
            x, y, z = r21 - r12, r02 - r20, r10 - r01
            double_sine = math.sqrt(x * x + y * y + z * z)
            scale = math.atan2(0.5 * double_sine, cosine) / max(double_sine, 1e-300)
            return np.array((scale * x, scale * y, scale * z)).reshape(rotation.shape[:-1])
    flat = rotation.reshape(rotation.shape[:-2] + (9,))
    skew = flat[..., (7, 2, 3)] - flat[..., (5, 6, 1)]  # 2 sin(theta) u
    cosine = 0.5 * (flat[..., 0] + flat[..., 4] + flat[..., 8] - 1.0)
    double_sine = np.sqrt((skew * skew).sum(axis=-1))
    theta = np.arctan2(0.5 * double_sine, cosine)
    # theta / (2 sin theta): atan2 keeps theta accurate, so the ratio tends to 1/2 as theta -> 0
    # (and is 0 * skew = 0 at exactly 0).
    vector = (theta / np.maximum(double_sine, 1e-300))[..., None] * skew
    if cosine.min() < -0.9:
        # Near pi the skew part vanishes: read the axis from the symmetric part,
        # u u^T = ((R + R^T)/2 - cos I) / (1 - cos), using its best-conditioned column and the
        # sign that agrees with the (small) skew part.
        vector = np.array(vector)  # writable, also for a single matrix
        near = cosine < -0.9
        near_rotations, near_cosine = rotation[near], cosine[near]
        outer = (
            0.5 * (near_rotations + np.swapaxes(near_rotations, -1, -2))
            - near_cosine[:, None, None] * np.eye(3)
        ) / (1.0 - near_cosine)[:, None, None]
        column = np.argmax(np.diagonal(outer, axis1=-2, axis2=-1), axis=-1)
        rows = np.arange(len(column))
        axis = outer[rows, :, column] / np.sqrt(outer[rows, column, column])[:, None]
        sign = np.where((axis * skew[near]).sum(axis=-1) < 0.0, -1.0, 1.0)
        vector[near] = (sign * theta[near])[:, None] * axis
    return vector


def pose_from_xyz_rpy(xyz, rpy) -> np.ndarray:
    """4x4 pose from a URDF ``<origin xyz rpy>`` (metres; fixed-axis roll, pitch, yaw in radians,
    i.e. ``R = Rz(yaw) Ry(pitch) Rx(roll)``)."""
    pose = np.eye(4)
    pose[:3, :3] = euler2mat(*rpy, axes="sxyz")
    pose[:3, 3] = xyz
    return pose
