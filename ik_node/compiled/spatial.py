"""Compiled kinematics of a tree: forward kinematics, Jacobians built from trimmed adjoint blocks,
and the configuration manifold's operations (``q (+) dq`` and its inverse), over flat arrays.

The one implementation of FK and Jacobians in the package: :class:`ik_node.kinematics.KinematicTree`
calls these for users and the node, the solver's kernels inside its loop.

Array layout (built by :class:`~ik_node.kinematics.KinematicTree`):

* ``frames`` (K, ``FRAME_COLUMNS``) float, one row per frame after the base (pose index ``k + 1``):
  the constant transform ``C = (C_R, C_t)`` from the parent frame (columns ``ROTATION`` .. +9,
  row-major, and ``TRANSLATION`` .. +3), the joint's unit ``AXIS`` (3; revolute and prismatic
  joints), and the mimic ``MULTIPLIER`` and ``OFFSET`` (``theta = m q + o``).
* ``frame_links`` (K, ``LINK_COLUMNS``) int: ``PARENT`` pose index (0 = base), ``JOINT_TYPE``,
  the joint's first configuration coordinate ``Q_INDEX`` and first tangent coordinate
  ``V_INDEX`` (a mimic follower's: its leader's; -1 for fixed frames), ``REVERSED`` (1: the joint
  is crossed from child to parent, on a path that goes up the tree).
* ``spans`` (J, ``SPAN_COLUMNS``) int: per independent joint its type and first configuration and
  tangent coordinates: what :func:`integrate` and :func:`difference` walk.

Frame ``k`` sits at ``T_parent_k = C M(q)`` (``C M(q)^-1`` when reversed, with ``C = I``: the
tree puts a reversed joint's constant on the frames after it). Motions ``M`` and their tangent
coordinates (twists ``[v; w]`` in the joint's own frame, pinocchio's conventions):

* revolute: rotation by ``theta`` about ``AXIS`` (1 coordinate, rad); prismatic: translation
  ``theta AXIS`` (1, m);
* planar: ``(x, y, theta)`` [m, m, rad], translation in the joint frame's xy plane and rotation
  about its z; tangent ``[vx, vy, wz]``;
* ball: a unit quaternion ``(qx, qy, qz, qw)``; tangent ``[wx, wy, wz]``;
* floating: ``(x, y, z, qx, qy, qz, qw)`` (pinocchio's free-flyer order); tangent ``[v; w]``.

Updates are ``q (+) dq = q exp(dq)`` (the joint's motion followed by the exponential of the body
twist: Lynch & Park eq. 3.51 and 3.88), so quaternions stay unit. A joint crossed from child to
parent moves its frame by ``exp(-dq)`` applied before ``M^-1``: its Jacobian columns are the
negated unit twists, at the frame before the motion (the parent's pose, since ``C = I``).

Small-matrix algebra is written as loops (see :mod:`ik_node.solver.kernels`).
"""

from __future__ import annotations

import math

import numpy as np

from .jit import allocating_kernel, inline_kernel, kernel

# ------------------------------------------------------------------ named columns
ROTATION, TRANSLATION, AXIS, MULTIPLIER, OFFSET = 0, 9, 12, 15, 16
FRAME_COLUMNS = 17
PARENT, JOINT_TYPE, Q_INDEX, V_INDEX, REVERSED = 0, 1, 2, 3, 4
LINK_COLUMNS = 5
SPAN_TYPE, SPAN_Q, SPAN_V = 0, 1, 2
SPAN_COLUMNS = 3

#: Joint types (``JOINT_TYPE``), and their tangent sizes by type.
FIXED, REVOLUTE, PRISMATIC, PLANAR, BALL, FLOATING = 0, 1, 2, 3, 4, 5
TANGENT_SIZE = (0, 1, 1, 3, 3, 6)
#: Where each type's quaternion starts in its configuration (-1: none).
QUATERNION_AT = (-1, -1, -1, -1, 0, 3)
#: Configuration coordinates by type.
CONFIGURATION_SIZE = (0, 1, 1, 3, 4, 7)


# ------------------------------------------------------------------ rotations


#: :func:`sin_cos`'s constants: 2/π, π/2 in two parts (the first exact in 33 bits: ``n π/2``
#: is exact for ``|n| < 2²⁰``), and the minimax polynomials of ``sin`` and ``cos`` on [−π/4, π/4]
#: (fdlibm's ``k_sin.c`` and ``k_cos.c``, error below 1 ulp there).
TWO_OVER_PI = 6.36619772367581382433e-01
HALF_PI_HEAD, HALF_PI_TAIL = 1.57079632673412561417e00, 6.07710050650619224932e-11
SINE_TERMS = (
    -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
    2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10,
)  # fmt: skip
COSINE_TERMS = (
    4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
    -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11,
)  # fmt: skip
#: Beyond this |angle| [rad] :func:`sin_cos` calls the C library (and for NaN and infinities).
SIN_COS_REDUCED_BELOW = 1.0e5


@kernel
def sin_cos(angle):
    """``(sin θ, cos θ)`` of ``angle`` [rad] within 1 ulp of the C library's, about twice as fast
    and without a call into it (a joint's rotation takes both, at every frame of every FK): the
    angle reduced by the nearest multiple ``n`` of π/2 (Cody–Waite, two parts: ``r = θ − n π/2``,
    exact to ~1e-21 rad for ``|θ| < 1e5``), fdlibm's polynomials of ``r`` (``sin r = r + r³ S(r²)``,
    ``cos r = 1 − r²/2 + r⁴ C(r²)``), and the quadrant ``n mod 4`` by selects, not branches (the
    quadrants of a solve's angles are unpredictable). Larger angles, NaN and infinities go to
    ``math.sin``/``math.cos``."""
    if not abs(angle) < SIN_COS_REDUCED_BELOW:
        return math.sin(angle), math.cos(angle)
    quadrant = round(angle * TWO_OVER_PI)
    r = (angle - quadrant * HALF_PI_HEAD) - quadrant * HALF_PI_TAIL
    z = r * r
    s1, s2, s3, s4, s5, s6 = SINE_TERMS
    c1, c2, c3, c4, c5, c6 = COSINE_TERMS
    sine = r + r * z * (s1 + z * (s2 + z * (s3 + z * (s4 + z * (s5 + z * s6)))))
    half_z = 0.5 * z
    w = 1.0 - half_z  # (fdlibm's compensated 1 − z/2: the rounding of w added back)
    cosine = w + (((1.0 - w) - half_z) + z * z * (c1 + z * (c2 + z * (c3 + z * (c4 + z * (c5 + z * c6))))))
    odd = (quadrant & 1) != 0
    sine, cosine = (cosine if odd else sine), (sine if odd else cosine)
    return (-sine if quadrant & 2 else sine), (-cosine if (quadrant + 1) & 2 else cosine)


#: :func:`atan2`'s constants: ``atan(1/2)``, π/4, π/2 and π, each in two parts (head and the rest),
#: and the odd minimax polynomial of ``atan`` on [−7/16, 7/16] (fdlibm's ``s_atan.c``).
ATAN_HALF_PARTS = (4.63647609000806093515e-01, 2.26987774529616870924e-17)
QUARTER_PI_PARTS = (7.85398163397448278999e-01, 3.06161699786838301793e-17)
HALF_PI_PARTS = (1.57079632679489655800e00, 6.12323399573676603587e-17)
PI_PARTS = (3.14159265358979311600e00, 1.22464679914735320717e-16)
ARC_TANGENT_TERMS = (
    3.33333333333329318027e-01, -1.99999999998764832476e-01, 1.42857142725034663711e-01,
    -1.11111104054623557880e-01, 9.09088713343650656196e-02, -7.69187620504482999495e-02,
    6.66107313738753120669e-02, -5.83357013379057348645e-02, 4.97687799461593236017e-02,
    -3.65315727442169155270e-02, 1.62858201153657823623e-02,
)  # fmt: skip


@kernel
def atan2(y, x):
    """``atan2(y, x)`` [rad] within 1 ulp of the C library's, ~1.6× as fast and without a call
    into it (a closed-form set takes ~40: every subproblem's angle and every pose error). With
    ``s ≤ l`` the smaller and larger of ``|x|``, ``|y|``, ``atan(s / l)`` is reduced to ``|u| ≤
    7/16`` as fdlibm's ``atan`` does, but in one division of exact differences (Sterbenz): ``u =
    s / l``, ``(2s − l) / (2l + s)`` (plus ``atan ½``) or ``(s − l) / (s + l)`` (plus π/4), then
    ``atan u = u − u z P(z)``, ``z = u²``; then ``π/2 − ·`` where ``|y| > |x|``, ``π − ·`` where
    ``x < 0``, and ``y``'s sign, by selects (the quadrants of a solve's angles are unpredictable).
    Zeros, infinities and NaN go to ``math.atan2``."""
    ax, ay = abs(x), abs(y)
    if not 0.0 < ax + ay < math.inf:
        return math.atan2(y, x)
    steep = ay > ax
    small, large = (ax, ay) if steep else (ay, ax)
    middle, upper = small >= 0.4375 * large, small >= 0.6875 * large
    numerator = (small - large) if upper else ((2.0 * small - large) if middle else small)
    denominator = (small + large) if upper else ((2.0 * large + small) if middle else large)
    head = QUARTER_PI_PARTS[0] if upper else (ATAN_HALF_PARTS[0] if middle else 0.0)
    tail = QUARTER_PI_PARTS[1] if upper else (ATAN_HALF_PARTS[1] if middle else 0.0)
    u = numerator / denominator
    z = u * u
    w = z * z
    t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10 = ARC_TANGENT_TERMS
    odd = z * (t0 + w * (t2 + w * (t4 + w * (t6 + w * (t8 + w * t10)))))
    even = w * (t1 + w * (t3 + w * (t5 + w * (t7 + w * t9))))
    angle = head - ((u * (odd + even) - tail) - u)
    angle = ((HALF_PI_PARTS[0] - angle) + HALF_PI_PARTS[1]) if steep else angle
    angle = ((PI_PARTS[0] - angle) + PI_PARTS[1]) if x < 0.0 else angle
    return math.copysign(angle, y)


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
def _store_matrix(values, out):
    """Write 9 row-major values into ``out`` (3, 3)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = values[3 * i + j]


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


@kernel
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


@kernel
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


# ------------------------------------------------------------------ joint motion


@inline_kernel
def joint_motion(frames, frame_links, k, q):
    """The joint's motion ``M(q)`` of frame row ``k``, as 12 values: its rotation (row-major) and
    translation in the joint frame (see the module's table), inverted for a joint crossed from
    child to parent. (Rows are indexed, not sliced: a slice is a reference-counted view.)"""
    kind, at = frame_links[k, JOINT_TYPE], frame_links[k, Q_INDEX]
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    t0, t1, t2 = 0.0, 0.0, 0.0
    if kind == REVOLUTE or kind == PRISMATIC:
        theta = frames[k, MULTIPLIER] * q[at] + frames[k, OFFSET]
        x, y, z = frames[k, AXIS], frames[k, AXIS + 1], frames[k, AXIS + 2]
        if kind == PRISMATIC:
            t0, t1, t2 = theta * x, theta * y, theta * z
        else:  # Rodrigues: I + sin hat(a) + (1 - cos) hat(a)^2
            sine, cosine = sin_cos(theta)
            versine = 1.0 - cosine
            m00 = 1.0 - versine * (y * y + z * z)
            m11 = 1.0 - versine * (x * x + z * z)
            m22 = 1.0 - versine * (x * x + y * y)
            m01, m10 = versine * x * y - sine * z, versine * x * y + sine * z
            m02, m20 = versine * x * z + sine * y, versine * x * z - sine * y
            m12, m21 = versine * y * z - sine * x, versine * y * z + sine * x
    elif kind == PLANAR:
        sine, cosine = sin_cos(q[at + 2])
        m00, m01, m10, m11 = cosine, -sine, sine, cosine
        t0, t1 = q[at], q[at + 1]
    elif kind == BALL:
        m00, m01, m02, m10, m11, m12, m20, m21, m22 = quaternion_matrix(
            q[at], q[at + 1], q[at + 2], q[at + 3]
        )
    elif kind == FLOATING:
        m00, m01, m02, m10, m11, m12, m20, m21, m22 = quaternion_matrix(
            q[at + 3], q[at + 4], q[at + 5], q[at + 6]
        )
        t0, t1, t2 = q[at], q[at + 1], q[at + 2]
    if frame_links[k, REVERSED] != 0 and kind != FIXED:  # M^-1 = (R^T, -R^T t)
        m01, m10, m02, m20, m12, m21 = m10, m01, m20, m02, m21, m12
        t0, t1, t2 = (
            -(m00 * t0 + m01 * t1 + m02 * t2),
            -(m10 * t0 + m11 * t1 + m12 * t2),
            -(m20 * t0 + m21 * t1 + m22 * t2),
        )
    return m00, m01, m02, m10, m11, m12, m20, m21, m22, t0, t1, t2


@kernel
def forward_kinematics(frames, frame_links, q, poses):
    """Poses ``T_base_frame`` (F, 4, 4) of every frame, parents first (``poses[0]`` = base):
    ``T_base_k = T_base_parent C M(q)`` (see the module docstring). ``q``: configuration [rad, m,
    quaternions]."""
    poses[0, :, :] = 0.0
    for i in range(4):
        poses[0, i, i] = 1.0
    forward_kinematics_from(frames, frame_links, q, poses, 0)


@inline_kernel
def forward_kinematics_from(frames, frame_links, q, poses, first):
    """:func:`forward_kinematics` of the frame rows from ``first`` on, the poses before them (and
    the base's) as they are in ``poses``: where only joints from row ``first`` on moved since they
    were computed (:func:`first_moved_frame`). Two common motions take fewer products than the
    general ``(T_base_parent C) M``: a fixed frame's (``M = I``) and a revolute joint's about the
    joint frame's z axis (``M = Rot(z, ±theta)``: only the first two columns mix), as most URDFs
    put their axes."""
    for k in range(first, frames.shape[0]):
        kind, parent = frame_links[k, JOINT_TYPE], frame_links[k, PARENT]
        about_z = (
            kind == REVOLUTE
            and frames[k, AXIS] == 0.0
            and frames[k, AXIS + 1] == 0.0
            and frames[k, AXIS + 2] == 1.0
        )
        if about_z:
            sine, cosine = sin_cos(frames[k, MULTIPLIER] * q[frame_links[k, Q_INDEX]] + frames[k, OFFSET])
            if frame_links[k, REVERSED] != 0:
                sine = -sine
        elif kind != FIXED:
            m00, m01, m02, m10, m11, m12, m20, m21, m22, t0, t1, t2 = joint_motion(frames, frame_links, k, q)
        for i in range(3):  # row i of T_base_parent C = (a, b), times M
            p0, p1, p2 = poses[parent, i, 0], poses[parent, i, 1], poses[parent, i, 2]
            a0 = p0 * frames[k, ROTATION] + p1 * frames[k, ROTATION + 3] + p2 * frames[k, ROTATION + 6]
            a1 = p0 * frames[k, ROTATION + 1] + p1 * frames[k, ROTATION + 4] + p2 * frames[k, ROTATION + 7]
            a2 = p0 * frames[k, ROTATION + 2] + p1 * frames[k, ROTATION + 5] + p2 * frames[k, ROTATION + 8]
            b = (
                p0 * frames[k, TRANSLATION]
                + p1 * frames[k, TRANSLATION + 1]
                + p2 * frames[k, TRANSLATION + 2]
                + poses[parent, i, 3]
            )
            if about_z:
                poses[k + 1, i, 0] = a0 * cosine + a1 * sine
                poses[k + 1, i, 1] = a1 * cosine - a0 * sine
                poses[k + 1, i, 2] = a2
                poses[k + 1, i, 3] = b
            elif kind == FIXED:
                poses[k + 1, i, 0], poses[k + 1, i, 1], poses[k + 1, i, 2], poses[k + 1, i, 3] = a0, a1, a2, b
            else:
                poses[k + 1, i, 0] = a0 * m00 + a1 * m10 + a2 * m20
                poses[k + 1, i, 1] = a0 * m01 + a1 * m11 + a2 * m21
                poses[k + 1, i, 2] = a0 * m02 + a1 * m12 + a2 * m22
                poses[k + 1, i, 3] = a0 * t0 + a1 * t1 + a2 * t2 + b
            poses[k + 1, 3, i] = 0.0
        poses[k + 1, 3, 3] = 1.0


@kernel
def first_moved_frame(frame_links, a, b):
    """The first frame row whose joint's coordinates differ between configurations ``a`` and
    ``b`` (the number of rows where none does): the frames before it have the same poses at both
    (parents come first)."""
    for k in range(frame_links.shape[0]):
        kind, at = frame_links[k, JOINT_TYPE], frame_links[k, Q_INDEX]
        for c in range(CONFIGURATION_SIZE[kind]):
            if a[at + c] != b[at + c]:
                return k
    return frame_links.shape[0]


@kernel
def point_pose(poses, frame, offset, out):
    """Pose (4, 4) of the frame at point ``offset`` (3,) [m, frame axes] of pose index ``frame``,
    with that frame's axes: ``(R, p + R offset)``."""
    pose = poses[frame]
    for i in range(3):
        for j in range(3):
            out[i, j] = pose[i, j]
        out[i, 3] = pose[i, 3] + pose[i, 0] * offset[0] + pose[i, 1] * offset[1] + pose[i, 2] * offset[2]
        out[3, i] = 0.0
    out[3, 3] = 1.0


# ------------------------------------------------------------------ Jacobians


@inline_kernel
def _unit_twist(frames, k, kind, column):
    """Unit twist ``[v; w]`` (6 values) of tangent column ``column`` of a joint of type ``kind``,
    in the joint's frame: revolute ``[0; a]``, prismatic ``[a; 0]``, planar ``[e_x; 0], [e_y; 0],
    [0; e_z]``, ball ``[0; e_i]``, floating ``e_i``."""
    if kind == REVOLUTE:
        return 0.0, 0.0, 0.0, frames[k, AXIS], frames[k, AXIS + 1], frames[k, AXIS + 2]
    if kind == PRISMATIC:
        return frames[k, AXIS], frames[k, AXIS + 1], frames[k, AXIS + 2], 0.0, 0.0, 0.0
    if kind == PLANAR and column == 2:
        column = 5
    elif kind == BALL:
        column += 3
    return (
        1.0 if column == 0 else 0.0,
        1.0 if column == 1 else 0.0,
        1.0 if column == 2 else 0.0,
        1.0 if column == 3 else 0.0,
        1.0 if column == 4 else 0.0,
        1.0 if column == 5 else 0.0,
    )


@kernel
def point_jacobian(frames, frame_links, poses, tip_frame, point, base_axes, jacobian):
    """Jacobian (6, nv) of the frame ``point`` (4, 4, ``T_base_point``) rigidly attached to pose
    index ``tip_frame``, into ``jacobian`` (overwritten), from :func:`forward_kinematics`.

    Column of tangent coordinate ``c`` of a joint on the path, with unit twist ``S_c`` at the
    joint's frame ``J`` (``(R_J, p_J)``): the adjoint block ``Ad(T_point_J)`` trimmed to ``S_c``
    (Lynch & Park eq. 5.18; seed 000, Figure 5), evaluated as ``w = R_J S_w``, ``v = R_J S_v +
    (p_J - p_point) x w``: with ``base_axes`` the velocity of the point and the angular velocity
    in base axes (the mixed, world-aligned Jacobian), otherwise rotated into the point's axes
    (``R_point^T``: the body Jacobian). A mimic follower adds its column times its multiplier to
    its leader's; a joint crossed from child to parent contributes its negated twist, at the frame
    before its motion. Joints off the path: zero columns. ``nv`` tangent coordinates.
    """
    jacobian[:, :] = 0.0
    frame_index = tip_frame
    while frame_index != 0:
        k = frame_index - 1
        kind = frame_links[k, JOINT_TYPE]
        if kind != FIXED:
            reversed_ = frame_links[k, REVERSED] != 0
            joint = frame_links[k, PARENT] if reversed_ else frame_index  # pose index of its frame
            scale = frames[k, MULTIPLIER] if kind == REVOLUTE or kind == PRISMATIC else 1.0
            if reversed_:
                scale = -scale
            dx = poses[joint, 0, 3] - point[0, 3]
            dy = poses[joint, 1, 3] - point[1, 3]
            dz = poses[joint, 2, 3] - point[2, 3]
            columns = 1 if kind == REVOLUTE or kind == PRISMATIC else (6 if kind == FLOATING else 3)
            for column in range(columns):
                sv0, sv1, sv2, sw0, sw1, sw2 = _unit_twist(frames, k, kind, column)
                wx = poses[joint, 0, 0] * sw0 + poses[joint, 0, 1] * sw1 + poses[joint, 0, 2] * sw2
                wy = poses[joint, 1, 0] * sw0 + poses[joint, 1, 1] * sw1 + poses[joint, 1, 2] * sw2
                wz = poses[joint, 2, 0] * sw0 + poses[joint, 2, 1] * sw1 + poses[joint, 2, 2] * sw2
                vx = (
                    poses[joint, 0, 0] * sv0
                    + poses[joint, 0, 1] * sv1
                    + poses[joint, 0, 2] * sv2
                    + dy * wz
                    - dz * wy
                )
                vy = (
                    poses[joint, 1, 0] * sv0
                    + poses[joint, 1, 1] * sv1
                    + poses[joint, 1, 2] * sv2
                    + dz * wx
                    - dx * wz
                )
                vz = (
                    poses[joint, 2, 0] * sv0
                    + poses[joint, 2, 1] * sv1
                    + poses[joint, 2, 2] * sv2
                    + dx * wy
                    - dy * wx
                )
                target = frame_links[k, V_INDEX] + column
                if base_axes:
                    jacobian[0, target] += scale * vx
                    jacobian[1, target] += scale * vy
                    jacobian[2, target] += scale * vz
                    jacobian[3, target] += scale * wx
                    jacobian[4, target] += scale * wy
                    jacobian[5, target] += scale * wz
                else:
                    for i in range(3):  # R_point^T
                        jacobian[i, target] += scale * (
                            point[0, i] * vx + point[1, i] * vy + point[2, i] * vz
                        )
                        jacobian[3 + i, target] += scale * (
                            point[0, i] * wx + point[1, i] * wy + point[2, i] * wz
                        )
        frame_index = frame_links[k, PARENT]


# ------------------------------------------------------------------ the configuration manifold


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


# ------------------------------------------------------------------ entries for the Python side


@kernel
def forward_kinematics_many(frames, frame_links, configurations, poses):
    """:func:`forward_kinematics` of each configuration (B, nq) into ``poses`` (B, F, 4, 4)."""
    for index in range(configurations.shape[0]):
        forward_kinematics(frames, frame_links, configurations[index], poses[index])


@allocating_kernel
def frame_jacobian(frames, frame_links, q, tip_frame, offset, base_axes, jacobian):
    """FK at ``q`` and :func:`point_jacobian` (6, nv) of pose index ``tip_frame`` at the point
    ``offset`` (4, 4, ``T_frame_point``): the entry for :class:`~ik_node.kinematics.KinematicTree`,
    tests and the kinematics benchmark."""
    poses = np.empty((frames.shape[0] + 1, 4, 4))
    forward_kinematics(frames, frame_links, q, poses)
    point = np.empty((4, 4))
    tip = poses[tip_frame]
    for i in range(4):
        for j in range(4):
            point[i, j] = (
                tip[i, 0] * offset[0, j]
                + tip[i, 1] * offset[1, j]
                + tip[i, 2] * offset[2, j]
                + tip[i, 3] * offset[3, j]
            )
    point_jacobian(frames, frame_links, poses, tip_frame, point, base_axes, jacobian)
