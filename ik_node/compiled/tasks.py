"""Task rows of the tips: the controlled points, the stacked error and Jacobian (body or mixed, per
tip), and the check of target poses."""

from __future__ import annotations

import math

import numpy as np

from .bundles import (
    BASE_AXES,
    BLOCKS,
    CONTACT,
    FRAME_LINKS,
    FRAMES,
    FULL_ERRORS,
    GAZE,
    GAZE_AXES,
    GAZE_BASES,
    MARGIN,
    PAIRS,
    POINTS,
    POSES,
    RELATIVE,
    RELATIVE_POINTS,
    RELATIVE_TO,
    ROW_BANDS,
    ROW_WEIGHTS,
    ROWS,
    TIP_AXIS_KINDS,
    TIP_FRAMES,
    TIP_OFFSETS,
)
from .contacts import contact_workspace, contacts
from .jit import allocating_kernel, batch_kernel, inline_kernel, inner_kernel, kernel
from .linalg import manipulability
from .rotations import so3_log
from .spatial import forward_kinematics, point_jacobian, point_pose

#: What :func:`check_poses` finds first.
POSE_OK, POSE_NOT_FINITE, POSE_TOO_FAR, POSE_NOT_RIGID = 0, 1, 2, 3
#: [m]: a gaze target nearer its tip's controlled point than this has no direction (never met: see
#: :func:`gaze_error`; ``IKSolver.solve`` says so when it fails from a seed where the tip is there).
GAZE_MIN_DISTANCE = 1e-9


@inner_kernel
def tip_points(poses, task, out):
    """Poses (T, 4, 4) of each tip's controlled point (its ``offset`` in the tip's frame, with
    the tip's axes), from :func:`forward_kinematics`."""
    tip_frames, tip_offsets = task[TIP_FRAMES], task[TIP_OFFSETS]
    for tip in range(tip_frames.shape[0]):
        point_pose(poses, tip_frames[tip], tip_offsets[tip], out[tip])


@inner_kernel
def gaze_error(point, target, axis, full, basis):
    """A gaze tip's error (into ``full`` (6,)): the rotation, in the tip's axes, that turns its
    unit ``axis`` ``u`` onto the direction ``v = d / |d|`` of the target point, ``d = R^T (p_t -
    p)`` (``point``: the controlled point's pose (4, 4); ``target``: the point's, its rotation
    unused): ``angle * b1`` with ``angle = atan2(|u x v|, u . v)`` and ``b1 = (u x v) / |u x v|``
    (any unit vector normal to ``v`` where they are parallel), held as the components
    ``(angle, 0)`` on the bases ``b1``, ``b2 = v x b1`` of the plane normal to ``v`` (axes 3 and
    4; the others 0). Into ``basis`` (7,): ``b1``, ``b2`` and ``1 / |d|``, which :func:`gaze_rows`
    reads. A target nearer than ``GAZE_MIN_DISTANCE`` has no line of sight: ``v = -u`` (an angle
    of pi, never met) and ``1 / |d| = 0``. The error's norm is the angle between
    the axis and the line of sight [rad]."""
    d0, d1, d2 = 0.0, 0.0, 0.0
    for k in range(3):
        offset = target[k, 3] - point[k, 3]
        d0 += point[k, 0] * offset
        d1 += point[k, 1] * offset
        d2 += point[k, 2] * offset
    distance = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    u0, u1, u2 = axis[0], axis[1], axis[2]
    if distance < GAZE_MIN_DISTANCE:  # (no line of sight: never met, its rows turn the axis only)
        v0, v1, v2, inverse = -u0, -u1, -u2, 0.0
    else:
        v0, v1, v2, inverse = d0 / distance, d1 / distance, d2 / distance, 1.0 / distance
    c0, c1, c2 = u1 * v2 - u2 * v1, u2 * v0 - u0 * v2, u0 * v1 - u1 * v0
    sine = math.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
    if sine > 1e-12:
        b0, b1, b2 = c0 / sine, c1 / sine, c2 / sine
    else:  # (parallel: v x e along v's smallest component, normal to v)
        if abs(v0) <= abs(v1) and abs(v0) <= abs(v2):
            b0, b1, b2 = 0.0, v2, -v1
        elif abs(v1) <= abs(v2):
            b0, b1, b2 = -v2, 0.0, v0
        else:
            b0, b1, b2 = v1, -v0, 0.0
        norm = math.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
        b0, b1, b2 = b0 / norm, b1 / norm, b2 / norm
    for i in range(6):
        full[i] = 0.0
    full[3] = math.atan2(sine, u0 * v0 + u1 * v1 + u2 * v2)
    basis[0], basis[1], basis[2] = b0, b1, b2
    basis[3], basis[4], basis[5] = v1 * b2 - v2 * b1, v2 * b0 - v0 * b2, v0 * b1 - v1 * b0
    basis[6] = inverse


@inner_kernel
def gaze_rows(basis, block):
    """A gaze tip's two rows into rows 3 and 4 of its body Jacobian ``block`` (6, nv) at the
    controlled point, on the bases :func:`gaze_error` left in ``basis``: the line of sight ``v``
    turns, seen from the tip, as the tip turns by ``w + (v x v_p) / |d|`` (its angular velocity
    ``w`` and point velocity ``v_p``, tip axes), so row ``k`` is ``b_k . (J_w + v x J_v / |d|)``:
    ``b1 . J_w - b2 . J_v / |d|`` and ``b2 . J_w + b1 . J_v / |d|`` (``b1 x v = -b2``, ``b2 x v =
    b1``)."""
    inverse = basis[6]
    for j in range(block.shape[1]):
        v0, v1, v2 = block[0, j], block[1, j], block[2, j]
        w0, w1, w2 = block[3, j], block[4, j], block[5, j]
        along_b1 = basis[0] * v0 + basis[1] * v1 + basis[2] * v2
        along_b2 = basis[3] * v0 + basis[4] * v1 + basis[5] * v2
        block[3, j] = basis[0] * w0 + basis[1] * w1 + basis[2] * w2 - inverse * along_b2
        block[4, j] = basis[3] * w0 + basis[4] * w1 + basis[5] * w2 + inverse * along_b1


@inner_kernel
def seen_from(frame, pose, out):
    """``frame^-1 pose`` (4, 4 each; rigid) into ``out``: ``[R_f^T R, R_f^T (p - p_f)]``."""
    for i in range(3):
        for j in range(3):
            out[i, j] = frame[0, i] * pose[0, j] + frame[1, i] * pose[1, j] + frame[2, i] * pose[2, j]
        out[i, 3] = (
            frame[0, i] * (pose[0, 3] - frame[0, 3])
            + frame[1, i] * (pose[1, 3] - frame[1, 3])
            + frame[2, i] * (pose[2, 3] - frame[2, 3])
        )
        out[3, i] = 0.0
    out[3, 3] = 1.0


@inner_kernel
def relative_block(point, reference_point, reference_block, reference_mixed, block):
    """A relative tip's Jacobian (6, nv) into ``block``, which holds its mixed one at its controlled
    point ``point`` (``T_base_a``): the body twist of ``T_b^-1 T_a`` in ``a``'s axes, ``[R_a^T (v_a
    - v_b - w_b x (p_a - p_b)); R_a^T (w_a - w_b)]`` (``v``: points' velocities, ``w``: angular
    velocities, base axes), its reference ``b`` at ``reference_point`` with ``reference_block``:
    mixed where ``reference_mixed``, else body (rotated here by ``R_b``)."""
    rx = point[0, 3] - reference_point[0, 3]
    ry = point[1, 3] - reference_point[1, 3]
    rz = point[2, 3] - reference_point[2, 3]
    for j in range(block.shape[1]):
        b0, b1, b2 = reference_block[0, j], reference_block[1, j], reference_block[2, j]
        b3, b4, b5 = reference_block[3, j], reference_block[4, j], reference_block[5, j]
        if not reference_mixed:
            b0, b1, b2, b3, b4, b5 = (
                reference_point[0, 0] * b0 + reference_point[0, 1] * b1 + reference_point[0, 2] * b2,
                reference_point[1, 0] * b0 + reference_point[1, 1] * b1 + reference_point[1, 2] * b2,
                reference_point[2, 0] * b0 + reference_point[2, 1] * b1 + reference_point[2, 2] * b2,
                reference_point[0, 0] * b3 + reference_point[0, 1] * b4 + reference_point[0, 2] * b5,
                reference_point[1, 0] * b3 + reference_point[1, 1] * b4 + reference_point[1, 2] * b5,
                reference_point[2, 0] * b3 + reference_point[2, 1] * b4 + reference_point[2, 2] * b5,
            )
        v0 = block[0, j] - b0 - (b4 * rz - b5 * ry)
        v1 = block[1, j] - b1 - (b5 * rx - b3 * rz)
        v2 = block[2, j] - b2 - (b3 * ry - b4 * rx)
        w0, w1, w2 = block[3, j] - b3, block[4, j] - b4, block[5, j] - b5
        for i in range(3):
            block[i, j] = point[0, i] * v0 + point[1, i] * v1 + point[2, i] * v2
            block[3 + i, j] = point[0, i] * w0 + point[1, i] * w1 + point[2, i] * w2


@kernel
def task_jacobian(tree, task, poses, points, gaze_bases, blocks, jacobian):
    """Stacked task Jacobian (m, nv): row ``r`` is ``w_r`` times row ``axis_r`` of its tip's
    Jacobian at the controlled point ``points`` (T, 4, 4), body or mixed as the tip's axes say
    (:func:`point_jacobian`); a gaze tip's rows 3 and 4 are its :func:`gaze_rows` on the bases
    ``gaze_bases`` (T, 7) :func:`gaze_error` left; a relative tip's, :func:`relative_block`.
    ``blocks`` (T, 6, nv) is work space (left holding each tip's)."""
    frames, frame_links = tree[FRAMES], tree[FRAME_LINKS]
    tip_frames, tip_axes, rows, row_weights, relative_to = (
        task[TIP_FRAMES], task[TIP_AXIS_KINDS], task[ROWS], task[ROW_WEIGHTS], task[RELATIVE_TO]
    )  # fmt: skip
    tips = tip_frames.shape[0]
    for tip in range(tips):
        mixed = tip_axes[tip] == BASE_AXES or relative_to[tip] >= 0
        point_jacobian(frames, frame_links, poses, tip_frames[tip], points[tip], mixed, blocks[tip])
        if tip_axes[tip] == GAZE:
            gaze_rows(gaze_bases[tip], blocks[tip])
    for tip in range(tips):  # (after every block: a reference's is its own, never relative)
        if relative_to[tip] >= 0:
            at = relative_to[tip]
            relative_block(points[tip], points[at], blocks[at], tip_axes[at] == BASE_AXES, blocks[tip])
    for r in range(rows.shape[0]):
        block_row = blocks[rows[r, 0], rows[r, 1]]
        for j in range(jacobian.shape[1]):
            jacobian[r, j] = row_weights[r] * block_row[j]


@inner_kernel
def task_error(points, targets, task, error, norms, full, relative, gaze_bases, relative_poses):
    """Stacked weighted error (m,) and per-tip error norms (T, 2) (position [m], orientation
    [rad], over the controlled rows, unweighted) of the controlled points ``points`` (T, 4, 4).

    Per tip, in its axes: ``[R_e^T (p_d - p_e); log(R_e^T R_d)]``; in the base's:
    ``[p_d - p_e; R_e log(R_e^T R_d)]`` (the same displacement, base-aligned). A row with a
    tolerance band ``b`` (``ROW_BANDS``) counts only what lies beyond it: ``e - clip(e, -b, b)``
    (zero inside the band, as a limit row that is not active). ``full`` (T, 6: the errors before
    the bands, for :func:`jacobian_at`) and ``relative`` (3, 3) are work space. A gaze tip's
    error is :func:`gaze_error`'s, its row bases into ``gaze_bases`` (T, 7); a relative tip's
    (``RELATIVE_TO``) is its controlled point's in its reference's frame, ``T_ref^-1 T_tip``
    (into ``relative_poses`` (T, 4, 4)), toward its target in that frame."""
    tip_axes, rows, row_weights, row_bands, gaze_axes, relative_to = (
        task[TIP_AXIS_KINDS],
        task[ROWS],
        task[ROW_WEIGHTS],
        task[ROW_BANDS],
        task[GAZE_AXES],
        task[RELATIVE_TO],
    )
    tips = points.shape[0]
    for tip in range(tips):
        pose = points[tip]
        target = targets[tip]
        if relative_to[tip] >= 0:
            pose = relative_poses[tip]
            seen_from(points[relative_to[tip]], points[tip], pose)
        if tip_axes[tip] == GAZE:
            gaze_error(pose, target, gaze_axes[tip], full[tip], gaze_bases[tip])
            continue
        for i in range(3):
            full[tip, i] = (
                pose[0, i] * (target[0, 3] - pose[0, 3])
                + pose[1, i] * (target[1, 3] - pose[1, 3])
                + pose[2, i] * (target[2, 3] - pose[2, 3])
            )
            for j in range(3):
                relative[i, j] = (
                    pose[0, i] * target[0, j] + pose[1, i] * target[1, j] + pose[2, i] * target[2, j]
                )
        so3_log(relative, full[tip, 3:])
        if tip_axes[tip] == BASE_AXES:
            for block in range(0, 6, 3):
                x, y, z = full[tip, block], full[tip, block + 1], full[tip, block + 2]
                for i in range(3):
                    full[tip, block + i] = pose[i, 0] * x + pose[i, 1] * y + pose[i, 2] * z
    norms[:, :] = 0.0
    for r in range(rows.shape[0]):
        value = full[rows[r, 0], rows[r, 1]]
        band = row_bands[r]
        if value > band:
            value -= band
        elif value < -band:
            value += band
        else:
            value = 0.0
        error[r] = row_weights[r] * value
        norms[rows[r, 0], 1 if rows[r, 1] >= 3 else 0] += value * value
    for tip in range(tips):
        norms[tip, 0] = math.sqrt(norms[tip, 0])
        norms[tip, 1] = math.sqrt(norms[tip, 1])


@allocating_kernel
def evaluation_workspace(tree, task, dof, collision):
    """Work arrays of :func:`evaluate` and :func:`task_jacobian`, made once per attempt: (poses
    (F, 4, 4), points (T, 4, 4), blocks (T, 6, nv), full (T, 6), relative (3, 3), the collision
    pairs' :func:`~ik_node.compiled.contacts.contact_workspace`, gaze bases (T, 7), relative poses
    (T, 4, 4)): slots ``POSES`` ... ``RELATIVE_POINTS`` of :mod:`.bundles`."""
    tips = task[TIP_FRAMES].shape[0]
    return (
        np.empty((tree[FRAMES].shape[0] + 1, 4, 4)),  # POSES
        np.empty((tips, 4, 4)),  # POINTS
        np.empty((tips, 6, dof)),  # BLOCKS
        np.empty((tips, 6)),  # FULL_ERRORS
        np.empty((3, 3)),  # RELATIVE
        contact_workspace(collision),  # CONTACT
        np.zeros((tips, 7)),  # GAZE_BASES
        np.zeros((tips, 4, 4)),  # RELATIVE_POINTS
    )


@inline_kernel
def evaluate_task(tree, task, targets, q, space, error, norms):
    """FK at ``q``, the controlled points and :func:`task_error` (``space``:
    :func:`evaluation_workspace`, whose poses and points are left for :func:`task_jacobian`)."""
    poses, points, full, relative = space[POSES], space[POINTS], space[FULL_ERRORS], space[RELATIVE]
    forward_kinematics(tree[FRAMES], tree[FRAME_LINKS], q, poses)
    tip_points(poses, task, points)
    task_error(points, targets, task, error, norms, full, relative, space[GAZE_BASES], space[RELATIVE_POINTS])


@inline_kernel
def evaluated_contacts(collision, space):
    """The collision pairs' :func:`~ik_node.compiled.contacts.contacts` at the poses
    :func:`evaluate_task` left in ``space`` (its near pairs left for the step). Returns the
    penetration [m] (0: collision-free; without pairs, at no cost; ``collision=None``: nothing
    of the contacts compiled)."""
    if collision is None:
        return 0.0
    if collision[PAIRS].shape[0] == 0:  # (no pairs: not even the call)
        return 0.0
    return contacts(collision, collision[MARGIN], space[POSES], space[CONTACT])


@inline_kernel
def evaluate(tree, task, collision, targets, q, space, error, norms):
    """:func:`evaluate_task` and :func:`evaluated_contacts`: returns the penetration [m]."""
    evaluate_task(tree, task, targets, q, space, error, norms)
    return evaluated_contacts(collision, space)


@kernel
def jacobian_at(tree, task, space, jacobian):
    """:func:`task_jacobian` at the poses :func:`evaluate` left in ``space``, without the rows
    strictly inside their tolerance band at the errors it left there (zero rows: no constraint
    there, as an inactive limit row; at the band's edge and beyond, the row holds the task)."""
    poses, points, blocks, full = space[POSES], space[POINTS], space[BLOCKS], space[FULL_ERRORS]
    task_jacobian(tree, task, poses, points, space[GAZE_BASES], blocks, jacobian)
    rows, row_bands = task[ROWS], task[ROW_BANDS]
    for r in range(rows.shape[0]):
        band = row_bands[r]
        if band > 0.0 and abs(full[rows[r, 0], rows[r, 1]]) < band:
            for j in range(jacobian.shape[1]):
                jacobian[r, j] = 0.0


@kernel
def check_poses(poses, max_distance, orthonormal_tolerance):
    """The first problem of a stack of 4x4 poses (P, 4, 4): ``POSE_NOT_FINITE``, ``POSE_TOO_FAR``
    (a coordinate beyond ``max_distance`` [m]), ``POSE_NOT_RIGID`` (``max |R^T R - I|`` above
    the tolerance, ``det R < 0``, or a last row other than ``0 0 0 1``), else ``POSE_OK``."""
    for p in range(poses.shape[0]):
        pose = poses[p]
        for i in range(4):
            for j in range(4):
                if not math.isfinite(pose[i, j]):
                    return POSE_NOT_FINITE
        for i in range(3):
            if abs(pose[i, 3]) > max_distance:
                return POSE_TOO_FAR
        if pose[3, 0] != 0.0 or pose[3, 1] != 0.0 or pose[3, 2] != 0.0 or pose[3, 3] != 1.0:
            return POSE_NOT_RIGID
        for i in range(3):
            for j in range(3):
                value = pose[0, i] * pose[0, j] + pose[1, i] * pose[1, j] + pose[2, i] * pose[2, j]
                if abs(value - (1.0 if i == j else 0.0)) > orthonormal_tolerance:
                    return POSE_NOT_RIGID
        determinant = (
            pose[0, 0] * (pose[1, 1] * pose[2, 2] - pose[1, 2] * pose[2, 1])
            - pose[0, 1] * (pose[1, 0] * pose[2, 2] - pose[1, 2] * pose[2, 0])
            + pose[0, 2] * (pose[1, 0] * pose[2, 1] - pose[1, 1] * pose[2, 0])
        )
        if determinant < 0.0:
            return POSE_NOT_RIGID
    return POSE_OK


@batch_kernel
def solution_figures(tree, task, dof, q, points_out, manipulability_out):
    """For each configuration ``q[k]`` (K, nq): the pose (4, 4) of the first tip's controlled
    point in the base frame into ``points_out[k]``, and the manipulability of the task Jacobian
    (:func:`~ik_node.compiled.linalg.manipulability`; the rows the task controls, weighted) into
    ``manipulability_out[k]``: a reachability map's figures of its solutions in one call (without
    the GIL: :meth:`IKSolver.solution_figures` runs slices on the batch threads)."""
    space = evaluation_workspace(tree, task, dof, None)
    rows, tips = task[ROWS].shape[0], task[TIP_FRAMES].shape[0]
    targets = np.zeros((tips, 4, 4))
    for tip in range(tips):
        for i in range(4):
            targets[tip, i, i] = 1.0
    error, norms = np.empty(rows), np.empty((tips, 2))
    jacobian, gram, rhs = np.empty((rows, dof)), np.empty((rows, rows)), np.empty(rows)
    for k in range(q.shape[0]):
        evaluate(tree, task, None, targets, q[k], space, error, norms)
        jacobian_at(tree, task, space, jacobian)
        for i in range(4):
            for j in range(4):
                points_out[k, i, j] = space[POINTS][0, i, j]
        manipulability_out[k] = manipulability(jacobian, gram, rhs)
