"""Compiled kinematics of a tree: forward kinematics and Jacobians built from trimmed adjoint
blocks, over flat arrays. (The configuration manifold, ``q (+) dq``, is :mod:`.manifold`'s; the
rotations and elementary functions FK takes, :mod:`.rotations`' and :mod:`.elementary`'s.)

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

Frame ``k`` sits at ``T_parent_k = C M(q)`` (``C M(q)^-1`` when reversed, with ``C = I``: the
tree puts a reversed joint's constant on the frames after it). Motions ``M`` and their tangent
coordinates (twists ``[v; w]`` in the joint's own frame, pinocchio's conventions):

* revolute: rotation by ``theta`` about ``AXIS`` (1 coordinate, rad); prismatic: translation
  ``theta AXIS`` (1, m);
* planar: ``(x, y, theta)`` [m, m, rad], translation in the joint frame's xy plane and rotation
  about its z; tangent ``[vx, vy, wz]``;
* ball: a unit quaternion ``(qx, qy, qz, qw)``; tangent ``[wx, wy, wz]``;
* floating: ``(x, y, z, qx, qy, qz, qw)`` (pinocchio's free-flyer order); tangent ``[v; w]``.

Updates are ``q (+) dq = q exp(dq)`` (:func:`~.manifold.integrate`). A joint crossed from child
to parent moves its frame by ``exp(-dq)`` applied before ``M^-1``: its Jacobian columns are the
negated unit twists, at the frame before the motion (the parent's pose, since ``C = I``).

Small-matrix algebra is written as loops (see :mod:`ik_node.solver.kernels`).
"""

from __future__ import annotations

import numpy as np

from .elementary import sin_cos
from .jit import allocating_kernel, inline_kernel, inner_kernel, kernel
from .rotations import quaternion_matrix

# ------------------------------------------------------------------ named columns
ROTATION, TRANSLATION, AXIS, MULTIPLIER, OFFSET = 0, 9, 12, 15, 16
FRAME_COLUMNS = 17
PARENT, JOINT_TYPE, Q_INDEX, V_INDEX, REVERSED = 0, 1, 2, 3, 4
LINK_COLUMNS = 5

#: Joint types (``JOINT_TYPE``), and their tangent sizes by type.
FIXED, REVOLUTE, PRISMATIC, PLANAR, BALL, FLOATING = 0, 1, 2, 3, 4, 5
TANGENT_SIZE = (0, 1, 1, 3, 3, 6)
#: Where each type's quaternion starts in its configuration (-1: none).
QUATERNION_AT = (-1, -1, -1, -1, 0, 3)
#: Configuration coordinates by type.
CONFIGURATION_SIZE = (0, 1, 1, 3, 4, 7)


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


@inner_kernel
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


@inner_kernel
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


@inner_kernel
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


@inner_kernel
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
