"""The configuration manifold of a tree's joints, compiled: ``q (+) dq`` (:func:`integrate`) and
the displacement from one configuration to another (:func:`difference`), joint by joint over the
tree's ``spans``.

* ``spans`` (J, ``SPAN_COLUMNS``) int (built by :class:`~ik_node.kinematics.KinematicTree`): per
  independent joint its type (``SPAN_TYPE``, :mod:`.spatial`'s joint types) and first
  configuration and tangent coordinates (``SPAN_Q``, ``SPAN_V``).

Configurations and tangent coordinates per joint type are :mod:`.spatial`'s (1-DOF joints: one
each; planar ``(x, y, theta)`` and ``[vx, vy, wz]``; ball a unit quaternion and ``[wx, wy, wz]``;
floating ``(x, y, z, qx, qy, qz, qw)`` and ``[v; w]``, twists in the joint's own frame).
Updates are ``q (+) dq = q exp(dq)`` (the joint's motion followed by the exponential of the body
twist: Lynch & Park eq. 3.51 and 3.88), so quaternions stay unit.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import allocating_kernel, inner_kernel, kernel
from .rotations import quaternion_matrix, so3_log
from .spatial import BALL, FLOATING, PLANAR, PRISMATIC, QUATERNION_AT, REVOLUTE

#: Columns of ``spans``.
SPAN_TYPE, SPAN_Q, SPAN_V = 0, 1, 2
SPAN_COLUMNS = 3


@inner_kernel
def _store_matrix(values, out):
    """Write 9 row-major values into ``out`` (3, 3)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = values[3 * i + j]


@inner_kernel
def _multiply_quaternion_by_exp(q, at, wx, wy, wz, out):
    """``out[at:at+4] = q[at:at+4] * exp(w / 2)``: the quaternion of ``R exp(hat(w))`` (rotation
    by the body angular displacement ``w`` [rad]), renormalised."""
    angle = math.sqrt(wx * wx + wy * wy + wz * wz)
    half = 0.5 * angle
    scale = 0.5 - angle * angle / 48.0 if angle < 1e-6 else math.sin(half) / angle  # sin(a/2)/a
    ex, ey, ez, ew = scale * wx, scale * wy, scale * wz, math.cos(half)
    x, y, z, w = q[at], q[at + 1], q[at + 2], q[at + 3]
    rx = w * ex + x * ew + y * ez - z * ey
    ry = w * ey - x * ez + y * ew + z * ex
    rz = w * ez + x * ey - y * ex + z * ew
    rw = w * ew - x * ex - y * ey - z * ez
    norm = math.sqrt(rx * rx + ry * ry + rz * rz + rw * rw)
    out[at], out[at + 1], out[at + 2], out[at + 3] = rx / norm, ry / norm, rz / norm, rw / norm


@inner_kernel
def _left_jacobian_times(wx, wy, wz, vx, vy, vz):
    """``V(w) v`` with ``V = I + (1 - cos t)/t^2 hat(w) + (t - sin t)/t^3 hat(w)^2`` (``t = |w|``):
    the translation of ``exp([v; w])`` (Lynch & Park eq. 3.88)."""
    t2 = wx * wx + wy * wy + wz * wz
    t = math.sqrt(t2)
    if t < 1e-6:
        a, b = 0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0
    else:
        a, b = (1.0 - math.cos(t)) / t2, (t - math.sin(t)) / (t2 * t)
    cx, cy, cz = wy * vz - wz * vy, wz * vx - wx * vz, wx * vy - wy * vx  # w x v
    dx, dy, dz = wy * cz - wz * cy, wz * cx - wx * cz, wx * cy - wy * cx  # w x (w x v)
    return vx + a * cx + b * dx, vy + a * cy + b * dy, vz + a * cz + b * dz


@kernel
def integrate(spans, q, dq, out):
    """``out = q (+) dq``: each joint's configuration moved by its tangent coordinates of ``dq``
    (nv,), ``q exp(dq)`` (see the module docstring; 1-DOF joints ``q + dq``, no clipping here).
    ``out`` may be ``q``."""
    for index in range(spans.shape[0]):
        kind, at, v = spans[index, SPAN_TYPE], spans[index, SPAN_Q], spans[index, SPAN_V]
        if kind == REVOLUTE or kind == PRISMATIC:
            out[at] = q[at] + dq[v]
        elif kind == PLANAR:
            # exp of the body twist [vx, vy, wz] in SE(2): (x, y) += R(theta) V(wz) (vx, vy)
            w, theta = dq[v + 2], q[at + 2]
            if abs(w) < 1e-6:
                sine_term, versine_term = 1.0 - w * w / 6.0, 0.5 * w
            else:
                sine_term, versine_term = math.sin(w) / w, (1.0 - math.cos(w)) / w
            local_x = sine_term * dq[v] - versine_term * dq[v + 1]
            local_y = versine_term * dq[v] + sine_term * dq[v + 1]
            cosine, sine = math.cos(theta), math.sin(theta)
            out[at] = q[at] + cosine * local_x - sine * local_y
            out[at + 1] = q[at + 1] + sine * local_x + cosine * local_y
            out[at + 2] = theta + w
        elif kind == BALL:
            _multiply_quaternion_by_exp(q, at, dq[v], dq[v + 1], dq[v + 2], out)
        elif kind == FLOATING:
            r00, r01, r02, r10, r11, r12, r20, r21, r22 = quaternion_matrix(
                q[at + 3], q[at + 4], q[at + 5], q[at + 6]
            )
            lx, ly, lz = _left_jacobian_times(dq[v + 3], dq[v + 4], dq[v + 5], dq[v], dq[v + 1], dq[v + 2])
            out[at] = q[at] + r00 * lx + r01 * ly + r02 * lz
            out[at + 1] = q[at + 1] + r10 * lx + r11 * ly + r12 * lz
            out[at + 2] = q[at + 2] + r20 * lx + r21 * ly + r22 * lz
            _multiply_quaternion_by_exp(q, at + 3, dq[v + 3], dq[v + 4], dq[v + 5], out)


@allocating_kernel
def difference(spans, q0, q1, out):
    """The displacement (nv,) from ``q0`` to ``q1``, per joint in its tangent coordinates: 1-DOF
    ``q1 - q0``; planar the translation in ``q0``'s axes and the angle wrapped to (-pi, pi];
    ball ``log(R0^T R1)``; floating ``[R0^T (p1 - p0); log(R0^T R1)]`` (equal to ``log`` for
    rotations; for translations the straight displacement, a metric rather than the exact
    inverse of :func:`integrate`)."""
    rotation0, rotation1, relative = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    for index in range(spans.shape[0]):
        kind, at, v = spans[index, SPAN_TYPE], spans[index, SPAN_Q], spans[index, SPAN_V]
        if kind == REVOLUTE or kind == PRISMATIC:
            out[v] = q1[at] - q0[at]
        elif kind == PLANAR:
            dx, dy = q1[at] - q0[at], q1[at + 1] - q0[at + 1]
            cosine, sine = math.cos(q0[at + 2]), math.sin(q0[at + 2])
            out[v], out[v + 1] = cosine * dx + sine * dy, -sine * dx + cosine * dy
            out[v + 2] = (q1[at + 2] - q0[at + 2] + math.pi) % (2.0 * math.pi) - math.pi
        elif kind == BALL or kind == FLOATING:
            quaternion = at + QUATERNION_AT[kind]
            _store_matrix(
                quaternion_matrix(q0[quaternion], q0[quaternion + 1], q0[quaternion + 2], q0[quaternion + 3]),
                rotation0,
            )
            _store_matrix(
                quaternion_matrix(q1[quaternion], q1[quaternion + 1], q1[quaternion + 2], q1[quaternion + 3]),
                rotation1,
            )
            for i in range(3):
                for j in range(3):
                    relative[i, j] = (
                        rotation0[0, i] * rotation1[0, j]
                        + rotation0[1, i] * rotation1[1, j]
                        + rotation0[2, i] * rotation1[2, j]
                    )
            angular = v + (3 if kind == FLOATING else 0)
            so3_log(relative, out[angular : angular + 3])
            if kind == FLOATING:
                dx, dy, dz = q1[at] - q0[at], q1[at + 1] - q0[at + 1], q1[at + 2] - q0[at + 2]
                for i in range(3):
                    out[v + i] = rotation0[0, i] * dx + rotation0[1, i] * dy + rotation0[2, i] * dz
