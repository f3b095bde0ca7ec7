"""Rotations inside compiled code: the matrix of a quaternion, SO(3)'s exponential and logarithm
(rotation vectors [rad]), and the geodesic between two poses. Matrices come as 9 row-major
values where a function returns them (a tuple, no array made); Lynch & Park's equations.
"""

from __future__ import annotations

import math

from .elementary import atan2, sin_cos
from .jit import inline_kernel, kernel


@inline_kernel
def quaternion_matrix(x, y, z, w):
    """The rotation matrix (9 values, row-major) of the quaternion ``(x, y, z, w)`` (scalar last,
    as ROS and pinocchio store it), normalised first."""
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    return (
        1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w),
        2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w),
        2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y),
    )  # fmt: skip


@kernel
def so3_log(rotation, out):
    """Rotation vector ``theta u`` [rad] of a 3x3 rotation (into ``out``): ``theta = atan2(|s|,
    (tr R - 1)/2)``, ``s = vee(R - R^T)/2`` (Lynch & Park eq. 3.58-3.60); near ``pi``, where ``s``
    vanishes, the axis comes from ``(R + R^T)/2 = cos I + (1 - cos) u u^T`` (its best-conditioned
    column), with the sign that agrees with ``s``."""
    x = rotation[2, 1] - rotation[1, 2]
    y = rotation[0, 2] - rotation[2, 0]
    z = rotation[1, 0] - rotation[0, 1]
    cosine = 0.5 * (rotation[0, 0] + rotation[1, 1] + rotation[2, 2] - 1.0)
    double_sine = math.sqrt(x * x + y * y + z * z)
    theta = atan2(0.5 * double_sine, cosine)
    if cosine > -0.9:
        scale = theta / max(double_sine, 1e-300)  # -> 1/2 as theta -> 0
        out[0], out[1], out[2] = scale * x, scale * y, scale * z
        return
    column, largest = 0, -1.0
    for i in range(3):
        value = (rotation[i, i] - cosine) / (1.0 - cosine)
        if value > largest:
            column, largest = i, value
    norm = math.sqrt(max(largest, 1e-300))
    dot = 0.0
    skew = (x, y, z)
    for i in range(3):
        out[i] = (0.5 * (rotation[i, column] + rotation[column, i]) - (cosine if i == column else 0.0)) / (
            (1.0 - cosine) * norm
        )
        dot += out[i] * skew[i]
    sign = -theta if dot < 0.0 else theta
    for i in range(3):
        out[i] *= sign


@inline_kernel
def so3_exp(wx, wy, wz):
    """The rotation matrix (9 values, row-major) ``exp(hat(w))`` of a rotation vector ``w``
    [rad]: Rodrigues' formula ``I + sin t hat(u) + (1 - cos t) hat(u)^2``, ``t = |w|``,
    ``u = w / t`` (Lynch & Park eq. 3.51); the identity for ``t`` below 1e-12."""
    angle = math.sqrt(wx * wx + wy * wy + wz * wz)
    if angle < 1e-12:
        return 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    x, y, z = wx / angle, wy / angle, wz / angle
    sine, cosine = sin_cos(angle)
    versine = 1.0 - cosine
    return (
        1.0 - versine * (y * y + z * z), versine * x * y - sine * z, versine * x * z + sine * y,
        versine * x * y + sine * z, 1.0 - versine * (x * x + z * z), versine * y * z - sine * x,
        versine * x * z - sine * y, versine * y * z + sine * x, 1.0 - versine * (x * x + y * y),
    )  # fmt: skip


@kernel
def interpolate_pose(start, end, fraction, relative, rotation_vector, out):
    """The pose (4, 4) the ``fraction`` ``s`` in [0, 1] of the way from ``start`` to ``end``
    (both ``T_base_*``; into ``out``, which may not be either) along the geodesic of SO(3) x R^3:
    position ``(1 - s) p_a + s p_b`` [m], rotation ``R_a exp(s log(R_a^T R_b))`` (:func:`so3_log`,
    :func:`so3_exp`; the shorter turn, at a constant rate). ``relative`` (3, 3) and
    ``rotation_vector`` (3,): work space (C arrays, as every caller of :func:`so3_log` passes)."""
    for i in range(3):
        for j in range(3):
            relative[i, j] = start[0, i] * end[0, j] + start[1, i] * end[1, j] + start[2, i] * end[2, j]
    so3_log(relative, rotation_vector)
    e00, e01, e02, e10, e11, e12, e20, e21, e22 = so3_exp(
        fraction * rotation_vector[0], fraction * rotation_vector[1], fraction * rotation_vector[2]
    )
    for i in range(3):
        a0, a1, a2 = start[i, 0], start[i, 1], start[i, 2]
        out[i, 0] = a0 * e00 + a1 * e10 + a2 * e20
        out[i, 1] = a0 * e01 + a1 * e11 + a2 * e21
        out[i, 2] = a0 * e02 + a1 * e12 + a2 * e22
        out[i, 3] = (1.0 - fraction) * start[i, 3] + fraction * end[i, 3]
        out[3, i] = 0.0
    out[3, 3] = 1.0
