"""The solver's compiled core: task errors and Jacobians, the damped step with joint-limit rows,
one iteration loop with a step function per method, posture refinement and the restart search,
as numba kernels over flat arrays (see :mod:`ik_node.jit`; without numba they run as plain
Python). The kinematics (FK, Jacobian columns, the configuration manifold) are
:mod:`ik_node.compiled.spatial`'s.

Named bundles (tuples of arrays, built by :class:`ik_node.solver.problem.Problem`,
:class:`~ik_node.solver.seed_table.SeedTable` and :class:`~ik_node.solver.IKSolver`):

* ``tree = (frames, frame_links, spans, coordinates)``: the tree's arrays (see ``spatial``) and,
  per tangent coordinate, the configuration index of a 1-DOF joint's value (-1: a coordinate of a
  multi-DOF joint, which has no limits).
* ``task = (tip_frames, tip_offsets, tip_axes, rows, row_weights, tolerances)``: per tip its pose
  index, the controlled point (3,) [m, tip axes], ``TIP_AXES`` or ``BASE_AXES``; per task row its
  tip and axis 0-5 of ``[v; w]``, its weight; per tip the position [m] and orientation [rad]
  tolerances.
* ``joints`` (nv, ``JOINT_COLUMNS``), per tangent coordinate: ``LOWER``, ``UPPER`` [rad or m;
  infinite for multi-DOF coordinates], ``WEIGHT`` (0 locks), ``REST``, ``SAMPLE_LOWER`` and
  ``SAMPLE_UPPER`` (restart sampling bounds; for multi-DOF coordinates a box around the seed),
  ``WRAPS`` (1.0 for a joint that turns freely: continuous, or revolute over more than a turn:
  sampled over a turn around the seed, returned as the equivalent angle nearest the seed),
  ``POSTURE_GAIN``.
* ``table = (feature_spec, feature_scale, q, features, spacing)``: the seed table.
* ``settings = (method, solve_type, min_damping, max_iterations, max_attempts, random_seed,
  max_joint_move)``.

Conventions: twists ``[v; w]``; per tip either the body Jacobian with body-frame errors (tip axes)
or the mixed Jacobian with base-frame errors (base axes) at the controlled point; poses are
``T_base_frame``. Configurations ``q`` (nq,) and steps ``dq`` (nv,) are apart: a step is applied
as ``q (+) dq`` (:func:`apply_step`). Small-matrix algebra is written as loops (numba's
``np.linalg`` and ``@`` need SciPy's BLAS, which we do not depend on; loops are faster at these
sizes anyway), and so are copies and clips: numba compiles an array-to-array slice assignment
with a shape-mismatch error message (its string formatting took ~3 s of the cold compile) and a
ufunc with its broadcasting (see benchmark/bench_compile.py).
"""

from __future__ import annotations

import math

import numpy as np

from ..compiled.spatial import (
    difference,
    forward_kinematics,
    integrate,
    point_jacobian,
    point_pose,
    so3_log,
)
from ..jit import batch_kernel, kernel, monotonic_ns

# ------------------------------------------------------------------ tuning constants
#: Levenberg-Marquardt trust region (dimensionless): damping factor at the start of an attempt,
#: its factor after a kept step, its floor, and the ceiling at which the attempt is stuck.
MU_INITIAL, MU_DOWN, MU_MIN, MU_MAX = 0.1, 1.0 / 3.0, 1e-4, 1e6
#: An attempt stalls when its cost has not halved within this many iterations.
STALL_ITERATIONS, STALL_DECREASE = 10, 0.5
#: Stationary (a local minimum within the limits) when the free descent direction is below
#: this fraction of ``|J| |e|``.
STATIONARY = 1e-3
#: Null-space posture, once the task has converged (:func:`posture_refinement`): posture steps
#: per attempt at most (within ``max_iterations``), halvings of a step whose task correction
#: fails, Gauss-Newton corrections that bring the task back within tolerance after a step, and
#: the relative decrease of the posture cost below which the posture is settled.
POSTURE_ITERATIONS, POSTURE_HALVINGS, POSTURE_CORRECTIONS, POSTURE_SETTLED = 20, 4, 3, 1e-3
#: Regularisation of the pseudo-inverse [m^2 or rad^2]: the null-space projector, and ``pinv``.
NULL_SPACE_REGULARISATION, PINV_DAMPING = 1e-10, 1e-12
#: Nearest seed-table entries tried as restarts before random configurations.
TABLE_RESTARTS = 64
#: Restarts around the seed when a solution moved a joint more than ``max_joint_move``.
NEAR_RESTARTS = 12
#: Solutions compared before the one with the smallest largest move is returned, when none moves
#: less than ``max_joint_move`` (the budget ends the comparison earlier).
NEAR_CANDIDATES = 16
#: Feature components per tip: position (3), rotation matrix (9, row-major).
TIP_FEATURES = 12

#: Methods, solve types and attempt outcomes (mirrored by the enums in ``options``/``search``).
DLS, PINV, TRANSPOSE, CCD = 0, 1, 2, 3
SPEED, DISTANCE, MANIPULABILITY = 0, 1, 2
CONVERGED, STUCK, STALLED, ITERATIONS, DEADLINE = 0, 1, 2, 3, 4
#: What :func:`search` returns for a seed with NaN, infinite values or a zero quaternion.
SEED_NOT_FINITE = -1
#: A deadline that never comes [ns].
NO_DEADLINE = np.iinfo(np.int64).max
#: Row 0 (a range's start) and no priority rows, as int64 constants: numba types a literal ``0``
#: argument as ``Literal[int](0)`` and compiles the callee once more for it, beside the ``int64``
#: its other callers pass (each kernel compiled once: see benchmark/bench_compile.py).
FIRST_ROW = NO_PRIORITY = np.int64(0)

#: Columns of ``joints``.
LOWER, UPPER, WEIGHT, REST, SAMPLE_LOWER, SAMPLE_UPPER, WRAPS, POSTURE_GAIN = 0, 1, 2, 3, 4, 5, 6, 7
JOINT_COLUMNS = 8
#: A tip's task rows in its own axes (the body Jacobian) or in the base's (the mixed Jacobian).
TIP_AXES, BASE_AXES = 0, 1


# ------------------------------------------------------------------ tasks


@kernel
def tip_points(poses, task, out):
    """Poses (T, 4, 4) of each tip's controlled point (its ``offset`` in the tip's frame, with
    the tip's axes), from :func:`forward_kinematics`."""
    tip_frames, tip_offsets = task[0], task[1]
    for tip in range(tip_frames.shape[0]):
        point_pose(poses, tip_frames[tip], tip_offsets[tip], out[tip])


@kernel
def task_jacobian(tree, task, poses, points, blocks, jacobian):
    """Stacked task Jacobian (m, nv): row ``r`` is ``w_r`` times row ``axis_r`` of its tip's
    Jacobian at the controlled point ``points`` (T, 4, 4), body or mixed as the tip's axes say
    (:func:`point_jacobian`). ``blocks`` (T, 6, nv) is work space (left holding each tip's)."""
    frames, frame_links = tree[0], tree[1]
    tip_frames, tip_axes, rows, row_weights = task[0], task[2], task[3], task[4]
    for tip in range(tip_frames.shape[0]):
        point_jacobian(
            frames, frame_links, poses, tip_frames[tip], points[tip], tip_axes[tip] == BASE_AXES, blocks[tip]
        )
    for r in range(rows.shape[0]):
        block_row = blocks[rows[r, 0], rows[r, 1]]
        for j in range(jacobian.shape[1]):
            jacobian[r, j] = row_weights[r] * block_row[j]


@kernel
def task_error(points, targets, task, error, norms, full, relative):
    """Stacked weighted error (m,) and per-tip error norms (T, 2) (position [m], orientation
    [rad], over the controlled rows, unweighted) of the controlled points ``points`` (T, 4, 4).

    Per tip, in its axes: ``[R_e^T (p_d - p_e); log(R_e^T R_d)]``; in the base's:
    ``[p_d - p_e; R_e log(R_e^T R_d)]`` (the same displacement, base-aligned). ``full`` (T, 6) and
    ``relative`` (3, 3) are work space."""
    tip_axes, rows, row_weights = task[2], task[3], task[4]
    tips = points.shape[0]
    for tip in range(tips):
        pose = points[tip]
        target = targets[tip]
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
        error[r] = row_weights[r] * value
        norms[rows[r, 0], 1 if rows[r, 1] >= 3 else 0] += value * value
    for tip in range(tips):
        norms[tip, 0] = math.sqrt(norms[tip, 0])
        norms[tip, 1] = math.sqrt(norms[tip, 1])


@kernel
def evaluation_workspace(tree, task, dof):
    """Work arrays of :func:`evaluate` and :func:`task_jacobian`, made once per attempt: (poses
    (F, 4, 4), points (T, 4, 4), blocks (T, 6, nv), full (T, 6), relative (3, 3))."""
    tips = task[0].shape[0]
    return (
        np.empty((tree[0].shape[0] + 1, 4, 4)),
        np.empty((tips, 4, 4)),
        np.empty((tips, 6, dof)),
        np.empty((tips, 6)),
        np.empty((3, 3)),
    )


@kernel
def evaluate(tree, task, targets, q, space, error, norms):
    """FK at ``q``, the controlled points and :func:`task_error` (``space``:
    :func:`evaluation_workspace`, whose poses and points are left for :func:`task_jacobian`)."""
    poses, points, _, full, relative = space
    forward_kinematics(tree[0], tree[1], q, poses)
    tip_points(poses, task, points)
    task_error(points, targets, task, error, norms, full, relative)


@kernel
def jacobian_at(tree, task, space, jacobian):
    """:func:`task_jacobian` at the poses :func:`evaluate` left in ``space``."""
    poses, points, blocks, _, _ = space
    task_jacobian(tree, task, poses, points, blocks, jacobian)


# ------------------------------------------------------------------ input checks

POSE_OK, POSE_NOT_FINITE, POSE_TOO_FAR, POSE_NOT_RIGID = 0, 1, 2, 3


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


# ------------------------------------------------------------------ linear algebra


@kernel
def cholesky_solve(matrix, rhs, size):
    """Solve ``A x = b`` for the SPD ``A = matrix[:size, :size]`` in place: the lower Cholesky
    factor ``L`` (``A = L L^T``) overwrites ``matrix``, ``x`` overwrites ``rhs[:size]``. Returns
    False (and ``x = 0``) if ``A`` is not positive definite to working precision."""
    for j in range(size):
        diagonal = matrix[j, j]
        for k in range(j):
            diagonal -= matrix[j, k] * matrix[j, k]
        if not diagonal > 0.0:
            rhs[:size] = 0.0
            return False
        diagonal = math.sqrt(diagonal)
        matrix[j, j] = diagonal
        for i in range(j + 1, size):
            value = matrix[i, j]
            for k in range(j):
                value -= matrix[i, k] * matrix[j, k]
            matrix[i, j] = value / diagonal
    for i in range(size):  # L y = b
        value = rhs[i]
        for k in range(i):
            value -= matrix[i, k] * rhs[k]
        rhs[i] = value / matrix[i, i]
    for i in range(size - 1, -1, -1):  # L^T x = y
        value = rhs[i]
        for k in range(i + 1, size):
            value -= matrix[k, i] * rhs[k]
        rhs[i] = value / matrix[i, i]
    return True


@kernel
def damped_step(jacobian, error, weights, damping, row_start, row_end, gram, solution, step):
    """``dq = W J^T (J W J^T + lambda^2 I)^-1 e`` over the rows ``row_start:row_end`` (the
    singularity-robust inverse, Nakamura & Hanafusa 1986; a Cholesky solve, no inverse), into
    ``step`` (n,). ``damping`` is ``lambda^2``; ``gram`` (m, m) and ``solution`` (m,) are work
    space."""
    size = row_end - row_start
    dof = jacobian.shape[1]
    for a in range(size):
        row_a = jacobian[row_start + a]
        for b in range(a + 1):
            row_b = jacobian[row_start + b]
            value = 0.0
            for j in range(dof):
                value += row_a[j] * weights[j] * row_b[j]
            gram[a, b] = value
            gram[b, a] = value
        gram[a, a] += damping
        solution[a] = error[row_start + a]
    cholesky_solve(gram, solution, size)
    for j in range(dof):
        value = 0.0
        for a in range(size):
            value += jacobian[row_start + a, j] * solution[a]
        step[j] = weights[j] * value


@kernel
def null_space_motion(jacobian, motion, weights, row_start, row_end, gram, solution, image, out):
    """``(I - J^+ J) z`` with ``J^+ = W J^T (J W J^T)^-1`` over rows ``row_start:row_end`` (a
    regularisation of ``NULL_SPACE_REGULARISATION`` keeps it finite at singularities): the part of
    ``z`` that leaves those task rows unchanged to first order (Siciliano 1990). ``image`` (m,)
    is work space; ``out`` may not alias ``motion``."""
    for r in range(row_start, row_end):
        value = 0.0
        for j in range(jacobian.shape[1]):
            value += jacobian[r, j] * motion[j]
        image[r] = value
    damped_step(jacobian, image, weights, NULL_SPACE_REGULARISATION, row_start, row_end, gram, solution, out)
    for j in range(out.shape[0]):
        out[j] = motion[j] - out[j]


@kernel
def step_workspace(rows, dof):
    """Work arrays of :func:`limited_step` for ``rows`` task rows and ``dof`` joints, made once
    per attempt: (gram (m, m), solution (m,), image (m,), remaining (m,), projected (n,),
    secondary (n,), weights (n,), pinned_motion (n,), pinned (n,) bool)."""
    return (
        np.empty((rows, rows)),
        np.empty(rows),
        np.empty(rows),
        np.empty(rows),
        np.empty(dof),
        np.empty(dof),
        np.empty(dof),
        np.empty(dof),
        np.empty(dof, dtype=np.bool_),
    )


@kernel
def _free_step(jacobian, error, weights, damping, min_damping2, primary_rows, work, step):
    """The step before limits, for the joint ``weights`` given (``work``: :func:`step_workspace`).

    Without priority (``primary_rows == 0``): :func:`damped_step` over every row. With priority
    (rows ``:primary_rows`` first; Siciliano & Slotine 1991):
    ``dq = J1^+ e1 + (I - J1^+ J1) J2^+ (e2 - J2 J1^+ e1)`` (damped inverses, ``damping`` on
    the secondary rows' inverse, ``min_damping2`` on the primary's)."""
    gram, solution, image, _, projected, secondary, _, _, _ = work
    rows = jacobian.shape[0]
    if primary_rows == 0:
        damped_step(jacobian, error, weights, damping, FIRST_ROW, rows, gram, solution, step)
        return
    # J1^+ e1
    damped_step(jacobian, error, weights, min_damping2, FIRST_ROW, primary_rows, gram, solution, step)
    for r in range(primary_rows, rows):
        value = error[r]
        for j in range(jacobian.shape[1]):
            value -= jacobian[r, j] * step[j]
        image[r] = value
    damped_step(jacobian, image, weights, damping, primary_rows, rows, gram, solution, secondary)
    null_space_motion(jacobian, secondary, weights, FIRST_ROW, primary_rows, gram, solution, image, projected)
    for j in range(step.shape[0]):
        step[j] += projected[j]


# ------------------------------------------------------------------ one iteration: the step of each method


@kernel
def joint_value(q, coordinates, j):
    """The value of tangent coordinate ``j``'s 1-DOF joint in ``q`` [rad or m] (0.0 for a
    multi-DOF coordinate, whose limits are infinite)."""
    return q[coordinates[j]] if coordinates[j] >= 0 else 0.0


@kernel
def apply_step(tree, joints, q, step, out):
    """``out = q (+) step`` (:func:`integrate`), 1-DOF joints clipped to their limits."""
    coordinates = tree[3]
    integrate(tree[2], q, step, out)
    for j in range(coordinates.shape[0]):
        c = coordinates[j]
        if c >= 0:
            out[c] = min(max(out[c], joints[j, LOWER]), joints[j, UPPER])


@kernel
def limited_step(jacobian, error, joints, coordinates, q, damping, min_damping2, primary_rows, work, step):
    """The damped step with the joint limits inside the solve (into ``step``; ``work``:
    :func:`step_workspace`).

    Joints the free step pushes past a limit get a selection row (a one in the joint's column,
    the distance to that limit as its error) stacked under the task and solved exactly: the joint
    is pinned at its limit and the task error its motion leaves is handed to the other joints
    (``e' = e - J dq_pinned``, the pinned joints' weights set to 0); twice at most. (The posture
    term is not part of the step: :func:`posture_refinement` runs once the task has converged.)"""
    _, _, _, remaining, _, _, weights, pinned_motion, pinned = work
    rows, dof = jacobian.shape
    for j in range(dof):
        weights[j] = joints[j, WEIGHT]
        pinned_motion[j] = 0.0
        pinned[j] = False
    _free_step(jacobian, error, weights, damping, min_damping2, primary_rows, work, step)
    for _ in range(2):
        violating = False
        for j in range(dof):
            if pinned[j] or coordinates[j] < 0:
                continue
            value = q[coordinates[j]]
            candidate = value + step[j]
            if candidate < joints[j, LOWER] or candidate > joints[j, UPPER]:
                bound = joints[j, LOWER] if candidate < joints[j, LOWER] else joints[j, UPPER]
                pinned[j], violating = True, True
                pinned_motion[j] = bound - value
                weights[j] = 0.0
        if not violating:
            break
        for r in range(rows):
            value = error[r]
            for j in range(dof):
                value -= jacobian[r, j] * pinned_motion[j]
            remaining[r] = value
        _free_step(jacobian, remaining, weights, damping, min_damping2, primary_rows, work, step)
        for j in range(dof):
            step[j] += pinned_motion[j]


@kernel
def _pushes_against_limit(q, coordinates, joints, j, direction):
    """Whether joint ``j`` sits at a limit that motion in ``direction``'s sign would pass."""
    if coordinates[j] < 0:
        return False
    value = q[coordinates[j]]
    return (value <= joints[j, LOWER] and direction < 0.0) or (value >= joints[j, UPPER] and direction > 0.0)


@kernel
def transpose_step(jacobian, error, joints, coordinates, q, step):
    """Jacobian transpose with Buss's step length (seed 002; Buss 2004): ``dq = alpha W J^T e``,
    ``alpha = <e, J dq'> / <J dq', J dq'>`` for ``dq' = W J^T e``, the step that best reduces
    ``|e - J dq|`` along that direction. Joints pinned at a limit that the direction pushes
    against are left out of it (the others keep their full share); the rest is clipped to the
    limits when applied."""
    rows, dof = jacobian.shape
    for j in range(dof):
        value = 0.0
        for r in range(rows):
            value += jacobian[r, j] * error[r]
        step[j] = joints[j, WEIGHT] * value
        if _pushes_against_limit(q, coordinates, joints, j, step[j]):
            step[j] = 0.0
    numerator, denominator = 0.0, 0.0
    for r in range(rows):
        predicted = 0.0
        for j in range(dof):
            predicted += jacobian[r, j] * step[j]
        numerator += error[r] * predicted
        denominator += predicted * predicted
    scale = numerator / denominator if denominator > 0.0 else 0.0
    for j in range(dof):
        step[j] *= scale


@kernel
def _best_rotation_angle(axis, sum_cross, sum_dot, x, y, weight):
    """Accumulate one pair (``x`` rotated toward ``y``) of the CCD angle about unit ``axis``:
    ``theta = atan2(sum a.(x x y), sum (x.y - (a.x)(a.y)))`` minimises ``sum |R(theta) x - y|^2``."""
    ax = axis[0] * x[0] + axis[1] * x[1] + axis[2] * x[2]
    ay = axis[0] * y[0] + axis[1] * y[1] + axis[2] * y[2]
    cross = (
        axis[0] * (x[1] * y[2] - x[2] * y[1])
        + axis[1] * (x[2] * y[0] - x[0] * y[2])
        + axis[2] * (x[0] * y[1] - x[1] * y[0])
    )
    dot = x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
    return sum_cross + weight * cross, sum_dot + weight * (dot - ax * ay)


@kernel
def ccd_sweep(tree, task, joints, targets, q, candidate):
    """Cyclic coordinate descent, seed 004's geometric form: one tangent coordinate at a time, last
    to first, each moved to its own optimum with the others held, into ``candidate``.

    A revolute joint turns by the angle that best aligns, in the plane normal to its axis ``a``,
    the vectors from the joint to each tip's controlled point with those to its target
    (``theta = atan2(sum a.(x x y), sum (x.y - (a.x)(a.y)))``, :func:`_best_rotation_angle`), and
    for tips whose task has angular rows each tip axis with the target's (scaled by the
    joint-to-tip distance, so both terms are in metres). A prismatic joint slides by the mean of the
    tips' position errors along its axis; a multi-DOF coordinate takes the 1-D least-squares step
    along its Jacobian column. Tips count with the full position (orientation) when their task
    controls any linear (angular) row. Limits clip every move."""
    frames, frame_links = tree[0], tree[1]
    rows = task[3]
    tips, dof = task[0].shape[0], joints.shape[0]
    poses = np.empty((frames.shape[0] + 1, 4, 4))
    points = np.empty((tips, 4, 4))
    blocks = np.empty((tips, 6, dof))
    controls = np.zeros((tips, 2), dtype=np.bool_)
    for r in range(rows.shape[0]):
        controls[rows[r, 0], 1 if rows[r, 1] >= 3 else 0] = True
    axis, x, y, move = np.empty(3), np.empty(3), np.empty(3), np.zeros(dof)
    for j in range(q.shape[0]):
        candidate[j] = q[j]
    for j in range(dof - 1, -1, -1):
        if joints[j, WEIGHT] <= 0.0:
            continue
        forward_kinematics(frames, frame_links, candidate, poses)
        tip_points(poses, task, points)
        linear_sum, weight_sum, rate = 0.0, 0.0, 0.0
        sum_cross, sum_dot = 0.0, 0.0
        for tip in range(tips):
            point_jacobian(frames, frame_links, poses, task[0][tip], points[tip], True, blocks[tip])
            v, w = blocks[tip, :3, j], blocks[tip, 3:, j]
            w_norm = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
            v_norm = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
            point, target = points[tip], targets[tip]
            if w_norm > 1e-12:  # turns the tip: w = rate a, r_perp = (v x w) / |w|^2
                rate = w_norm
                for i in range(3):
                    axis[i] = w[i] / w_norm
                x[0] = (v[1] * w[2] - v[2] * w[1]) / (w_norm * w_norm)
                x[1] = (v[2] * w[0] - v[0] * w[2]) / (w_norm * w_norm)
                x[2] = (v[0] * w[1] - v[1] * w[0]) / (w_norm * w_norm)
                if controls[tip, 0]:
                    for i in range(3):
                        y[i] = x[i] + target[i, 3] - point[i, 3]
                    sum_cross, sum_dot = _best_rotation_angle(axis, sum_cross, sum_dot, x, y, 1.0)
                if controls[tip, 1]:
                    length = max(math.sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]), 1e-3)
                    for column in range(3):
                        for i in range(3):
                            x[i], y[i] = point[i, column], target[i, column]
                        sum_cross, sum_dot = _best_rotation_angle(
                            axis, sum_cross, sum_dot, x, y, length * length
                        )
            elif v_norm > 1e-12 and controls[tip, 0]:  # slides the tip along v
                along = 0.0
                for i in range(3):
                    along += v[i] * (target[i, 3] - point[i, 3])
                linear_sum += along / (v_norm * v_norm)
                weight_sum += 1.0
        move[j] = 0.0
        if rate > 0.0 and (sum_cross != 0.0 or sum_dot != 0.0):
            move[j] = math.atan2(sum_cross, sum_dot) / rate  # (rate: a mimic multiplier's size)
        elif weight_sum > 0.0:
            move[j] = linear_sum / weight_sum
        if move[j] != 0.0:
            apply_step(tree, joints, candidate, move, candidate)
            move[j] = 0.0


@kernel
def method_step(
    method,
    tree,
    task,
    joints,
    targets,
    q,
    jacobian,
    error,
    cost,
    mu,
    min_damping2,
    primary_rows,
    work,
    step,
    candidate,
):
    """The candidate of one iteration of ``method`` from ``q`` (into ``candidate``), given the
    task Jacobian and error at ``q``, the cost ``E = e^T e / 2`` and the trust-region factor ``mu``:

    * ``dls``: :func:`limited_step` with ``lambda^2 = lambda_min^2 + mu E`` (Sugihara 2011: large
      far from the goal or near a singularity, vanishing as the error does);
    * ``pinv``: the undamped pseudo-inverse ``J^+ e`` (``lambda^2 = PINV_DAMPING``, limit rows as
      ``dls``), scaled by ``min(1, MU_INITIAL / mu)`` (the trust region as a step length);
    * ``transpose``: :func:`transpose_step`, scaled the same way;
    * ``ccd``: one :func:`ccd_sweep`.

    Every step is applied on the manifold with the 1-DOF joints clipped (:func:`apply_step`)."""
    if method == CCD:
        ccd_sweep(tree, task, joints, targets, q, candidate)
        return
    coordinates = tree[3]
    if method == TRANSPOSE:
        transpose_step(jacobian, error, joints, coordinates, q, step)
    elif method == PINV:
        limited_step(
            jacobian, error, joints, coordinates, q, PINV_DAMPING, PINV_DAMPING, primary_rows, work, step
        )
    else:
        limited_step(
            jacobian,
            error,
            joints,
            coordinates,
            q,
            min_damping2 + mu * cost,
            min_damping2,
            primary_rows,
            work,
            step,
        )
    if method != DLS and mu > MU_INITIAL:
        for j in range(step.shape[0]):
            step[j] *= MU_INITIAL / mu
    apply_step(tree, joints, q, step, candidate)


@kernel
def _stationary(jacobian, error, joints, coordinates, q):
    """A local minimum of the error within the limits: the descent direction ``W J^T e`` vanishes
    (relative to ``|J| |e|``) once the joints held at a limit it pushes against are left out
    (the KKT condition of the bound-constrained least squares)."""
    rows, dof = jacobian.shape
    free, jacobian_norm, error_norm = 0.0, 0.0, 0.0
    for r in range(rows):
        error_norm += error[r] * error[r]
        for j in range(dof):
            jacobian_norm += jacobian[r, j] * jacobian[r, j]
    for j in range(dof):
        value = 0.0
        for r in range(rows):
            value += jacobian[r, j] * error[r]
        descent = joints[j, WEIGHT] * value
        if not _pushes_against_limit(q, coordinates, joints, j, descent):
            free += descent * descent
    return math.sqrt(free) <= STATIONARY * math.sqrt(jacobian_norm * error_norm)


@kernel
def _within_tolerance(norms, tolerances, rows, row_end):
    """Every tip with a row among ``rows[:row_end]`` is within its position and orientation
    tolerance."""
    for r in range(row_end):
        tip = rows[r, 0]
        if norms[tip, 0] > tolerances[tip, 0] or norms[tip, 1] > tolerances[tip, 1]:
            return False
    return True


@kernel
def _cost(error, row_start):
    """``E = e^T e / 2`` over rows ``row_start:`` (the secondary rows under priority)."""
    value = 0.0
    for r in range(row_start, error.shape[0]):
        value += error[r] * error[r]
    return 0.5 * value


@kernel
def posture_cost(q, joints, coordinates):
    """``P = sum_j k_j (q_j - q_rest_j)^2`` over the 1-DOF joints (seed 004's control term
    ``z = alpha_i (theta_i - theta_ci)^2`` summed; ``k_j`` the per-joint posture gains) [rad^2 or
    m^2]."""
    value = 0.0
    for j in range(coordinates.shape[0]):
        if coordinates[j] >= 0:
            difference_ = q[coordinates[j]] - joints[j, REST]
            value += joints[j, POSTURE_GAIN] * difference_ * difference_
    return value


@kernel
def _task_restored(
    tree, task, joints, targets, min_damping2, candidate, space, jacobian, error, norms, work, step
):
    """Whether ``candidate`` (corrected in place) has every tip within tolerance, after at most
    ``POSTURE_CORRECTIONS`` Gauss-Newton steps (:func:`limited_step` with ``lambda^2 =
    lambda_min^2``, applied with :func:`apply_step`); ``norms`` receives its errors."""
    rows, tolerances, coordinates = task[3], task[5], tree[3]
    for correction in range(POSTURE_CORRECTIONS + 1):
        evaluate(tree, task, targets, candidate, space, error, norms)
        if _within_tolerance(norms, tolerances, rows, rows.shape[0]):
            return True
        if correction == POSTURE_CORRECTIONS:
            break
        jacobian_at(tree, task, space, jacobian)
        limited_step(
            jacobian,
            error,
            joints,
            coordinates,
            candidate,
            min_damping2,
            min_damping2,
            NO_PRIORITY,
            work,
            step,
        )
        apply_step(tree, joints, candidate, step, candidate)
    return False


@kernel
def posture_refinement(
    tree, task, joints, targets, min_damping2, seed, max_joint_move, budget, deadline, q, norms
):
    """Null-space motion toward the rest posture from a converged ``q`` (updated in place, with
    its per-tip errors in ``norms``); returns the posture iterations used (``budget`` at most).

    Each iteration: the pull ``z_j = k_j w_j (q_rest_j - q_j)`` over the 1-DOF joints (``k_j``
    the posture gains, ``w_j`` the joint weights: minus half the gradient of
    :func:`posture_cost`) projected into the task's null space, ``dq = (I - J^+ J) z`` (seed
    004's "J with control term", :func:`null_space_motion`), applied with the limits; that leaves
    the task unchanged to first order only, so the candidate is corrected back within tolerance
    (:func:`_task_restored`) and kept only if it is and its posture cost fell; else the step is
    halved (``POSTURE_HALVINGS`` times). Stops when no step is kept, the cost falls by less than
    ``POSTURE_SETTLED`` of itself, the budget is used or the clock passes ``deadline`` [ns].
    Every ``q`` it keeps solves the task: turning the posture on never costs a solution the task
    found. With ``max_joint_move`` > 0 [rad or m] a step is kept only if no joint ends farther
    than that from ``seed`` (or than the converged ``q`` already was): the posture never turns a
    solution into a branch flip (see :func:`search`).
    """
    coordinates = tree[3]
    cost = posture_cost(q, joints, coordinates)
    if budget <= 0 or not cost > 0.0:
        return 0
    rows = task[3]
    tips, rows_count, dof = task[0].shape[0], rows.shape[0], joints.shape[0]
    space = evaluation_workspace(tree, task, dof)
    jacobian = np.empty((rows_count, dof))
    error = np.empty(rows_count)
    candidate_norms = np.empty((tips, 2))
    candidate = np.empty(q.shape[0])
    pull, motion, weights, step = np.empty(dof), np.empty(dof), np.empty(dof), np.empty(dof)
    displacement = np.empty(dof)
    work = step_workspace(rows_count, dof)
    gram, solution, image = work[0], work[1], work[2]
    for j in range(dof):
        weights[j] = joints[j, WEIGHT]
    move_bound = 0.0
    if max_joint_move > 0.0:
        move_bound = max(max_joint_move, _largest_move(tree, joints, q, seed, displacement))
    used = 0
    while used < budget:
        if deadline != NO_DEADLINE and monotonic_ns() >= deadline:
            break
        used += 1
        evaluate(tree, task, targets, q, space, error, candidate_norms)
        jacobian_at(tree, task, space, jacobian)
        for j in range(dof):
            pull[j] = 0.0
            if coordinates[j] >= 0:
                pull[j] = joints[j, POSTURE_GAIN] * weights[j] * (joints[j, REST] - q[coordinates[j]])
        null_space_motion(jacobian, pull, weights, FIRST_ROW, rows_count, gram, solution, image, motion)
        scale, kept, candidate_cost = 1.0, False, cost
        for _ in range(POSTURE_HALVINGS + 1):
            for j in range(dof):
                step[j] = scale * motion[j]
            apply_step(tree, joints, q, step, candidate)
            if _task_restored(
                tree,
                task,
                joints,
                targets,
                min_damping2,
                candidate,
                space,
                jacobian,
                error,
                candidate_norms,
                work,
                step,
            ):
                candidate_cost = posture_cost(candidate, joints, coordinates)
                if candidate_cost < cost and (
                    move_bound <= 0.0
                    or _largest_move(tree, joints, candidate, seed, displacement) <= move_bound
                ):
                    kept = True
                    break
            scale *= 0.5
        if not kept:
            break
        for i in range(q.shape[0]):
            q[i] = candidate[i]
        for tip in range(tips):
            norms[tip, 0], norms[tip, 1] = candidate_norms[tip, 0], candidate_norms[tip, 1]
        settled = cost - candidate_cost <= POSTURE_SETTLED * cost
        cost = candidate_cost
        if settled:
            break
    return used


@kernel
def lm_attempt(tree, task, joints, targets, settings, seed, primary_rows, deadline, q, norms):
    """One attempt of the iteration loop from ``q`` (updated in place; ``norms`` (T, 2) receives
    its per-tip errors). Returns (outcome, iterations).

    Each iteration: the candidate of the method's step (:func:`method_step`) is kept only if
    ``E = e^T e / 2`` decreases (trust region: ``mu`` falls by ``MU_DOWN``, else grows by a factor
    that doubles while refusals repeat; a refused CCD sweep ends the attempt). Outcomes:
    ``CONVERGED``; ``STUCK`` (``mu`` past ``MU_MAX``, or stationary: a local minimum);
    ``STALLED`` (``E`` not halved in ``STALL_ITERATIONS``); ``ITERATIONS``; ``DEADLINE`` (the
    clock passed ``deadline`` [ns]).

    With ``primary_rows > 0`` (task priority, rows of the reachable tips first) ``E`` is the
    secondary rows' error, and a step is kept only if the primary tips stay within tolerance.

    Once converged (``dls`` and ``pinv``, without priority), :func:`posture_refinement` moves
    ``q`` toward the rest posture in the task's null space within the iterations left (counted),
    no joint past ``max_joint_move`` (> 0) from ``seed`` (the search's seed, not the attempt's
    start). ``settings``: see the module docstring (``max_joint_move`` as the search passes it).
    """
    method, min_damping, max_iterations, max_joint_move = settings[0], settings[2], settings[3], settings[6]
    rows, tolerances, coordinates = task[3], task[5], tree[3]
    tips, rows_count, dof = task[0].shape[0], rows.shape[0], joints.shape[0]
    space = evaluation_workspace(tree, task, dof)
    candidate_space = evaluation_workspace(tree, task, dof)
    jacobian = np.empty((rows_count, dof))
    error = np.empty(rows_count)
    candidate_error = np.empty(rows_count)
    candidate_norms = np.empty((tips, 2))
    candidate = np.empty(q.shape[0])
    step = np.empty(dof)
    work = step_workspace(rows_count, dof)
    min_damping2 = min_damping * min_damping

    evaluate(tree, task, targets, q, space, error, norms)
    posture_budget = 0
    if (method == DLS or method == PINV) and primary_rows == 0:
        posture_budget = min(POSTURE_ITERATIONS, max_iterations)
    if _within_tolerance(norms, tolerances, rows, rows_count):
        return CONVERGED, posture_refinement(
            tree,
            task,
            joints,
            targets,
            min_damping2,
            seed,
            max_joint_move,
            posture_budget,
            deadline,
            q,
            norms,
        )
    cost = _cost(error, primary_rows)
    jacobian_at(tree, task, space, jacobian)
    mu, growth = MU_INITIAL, 2.0
    checkpoint_cost, since_checkpoint = cost, 0
    for iteration in range(1, max_iterations + 1):
        if mu > MU_MAX:
            return STUCK, iteration - 1
        if (
            method != CCD
            and primary_rows == 0
            and mu > MU_INITIAL
            and _stationary(jacobian, error, joints, coordinates, q)
        ):
            return STUCK, iteration - 1  # (checked once steps are being refused)
        if since_checkpoint > STALL_ITERATIONS:
            return STALLED, iteration - 1
        if deadline != NO_DEADLINE and monotonic_ns() >= deadline:
            return DEADLINE, iteration - 1
        method_step(
            method,
            tree,
            task,
            joints,
            targets,
            q,
            jacobian,
            error,
            cost,
            mu,
            min_damping2,
            primary_rows,
            work,
            step,
            candidate,
        )
        evaluate(tree, task, targets, candidate, candidate_space, candidate_error, candidate_norms)
        candidate_cost = _cost(candidate_error, primary_rows)
        since_checkpoint += 1
        accepted = candidate_cost < cost and (
            primary_rows == 0 or _within_tolerance(candidate_norms, tolerances, rows, primary_rows)
        )
        if not accepted:
            if method == CCD:  # a whole sweep found nothing better
                return STUCK, iteration
            mu, growth = mu * growth, 2.0 * growth
            continue
        for i in range(q.shape[0]):
            q[i] = candidate[i]
        for r in range(rows_count):
            error[r] = candidate_error[r]
        for tip in range(tips):
            norms[tip, 0], norms[tip, 1] = candidate_norms[tip, 0], candidate_norms[tip, 1]
        cost = candidate_cost
        if _within_tolerance(norms, tolerances, rows, rows_count):
            posture_budget = min(posture_budget, max_iterations - iteration)
            return CONVERGED, iteration + posture_refinement(
                tree,
                task,
                joints,
                targets,
                min_damping2,
                seed,
                max_joint_move,
                posture_budget,
                deadline,
                q,
                norms,
            )
        space, candidate_space = candidate_space, space
        jacobian_at(tree, task, space, jacobian)
        mu, growth = max(mu * MU_DOWN, MU_MIN), 2.0
        if cost < STALL_DECREASE * checkpoint_cost:
            checkpoint_cost, since_checkpoint = cost, 0
    return ITERATIONS, max_iterations


@kernel
def pose_features(tip_poses, feature_spec, feature_scale, out):
    """Seed-table features of tip poses (T, 4, 4) (into ``out``): feature ``f`` is
    ``feature_scale[f]`` times component ``feature_spec[f, 1]`` (0-2 position [m], 3-11 rotation
    matrix, row-major) of tip ``feature_spec[f, 0]``. Squared distances between features rank
    poses by closeness."""
    for f in range(feature_spec.shape[0]):
        pose = tip_poses[feature_spec[f, 0]]
        component = feature_spec[f, 1]
        value = pose[component, 3] if component < 3 else pose[(component - 3) // 3, (component - 3) % 3]
        out[f] = feature_scale[f] * value


# ------------------------------------------------------------------ restarts and the search


@kernel
def _fk_features(tree, task, feature_spec, feature_scale, q, space, out):
    """:func:`pose_features` of the tips' controlled points at ``q`` (``space``:
    :func:`evaluation_workspace`)."""
    poses, points = space[0], space[1]
    forward_kinematics(tree[0], tree[1], q, poses)
    tip_points(poses, task, points)
    pose_features(points, feature_spec, feature_scale, out)


@kernel
def table_features(tree, task, feature_spec, feature_scale, table_q):
    """Features (S, F) of the configurations ``table_q`` (S, nq)."""
    space = evaluation_workspace(tree, task, np.int64(0))
    features = np.empty((table_q.shape[0], feature_spec.shape[0]))
    for s in range(table_q.shape[0]):
        _fk_features(tree, task, feature_spec, feature_scale, table_q[s], space, features[s])
    return features


@kernel
def configuration_from_draws(tree, joints, center, draws, box, out):
    """A restart configuration (into ``out``) from uniform draws in [0, 1) per tangent coordinate
    (nv,): with ``box < 0``, each 1-DOF joint uniform within its sampling bounds (a joint that
    turns freely: a turn around ``center``), each multi-DOF coordinate ``center (+)`` a uniform
    displacement within its sampling bounds; with ``box >= 0``, every coordinate displaced from
    ``center`` by up to ``box`` [rad or m] either way. Locked joints stay at ``center``; 1-DOF
    joints are clipped to their limits."""
    coordinates = tree[3]
    dof = joints.shape[0]
    displacement = np.zeros(dof)
    for j in range(dof):
        if joints[j, WEIGHT] <= 0.0:
            continue
        if box >= 0.0:
            displacement[j] = box * (2.0 * draws[j] - 1.0)
            continue
        low, high = joints[j, SAMPLE_LOWER], joints[j, SAMPLE_UPPER]
        value = low + (high - low) * draws[j]
        c = coordinates[j]
        if c < 0 or joints[j, WRAPS] > 0.0:
            displacement[j] = value  # around the center
        else:
            displacement[j] = value - center[c]
    apply_step(tree, joints, center, displacement, out)


@kernel
def _squared_distance(a, b):
    value = 0.0
    for i in range(a.shape[0]):
        value += (a[i] - b[i]) * (a[i] - b[i])
    return value


@kernel
def _displacement(tree, joints, seed, q, out):
    """The tangent displacement (nv,) from ``seed`` to ``q`` (:func:`difference`), joints that turn
    freely compared at the turn nearest the seed."""
    coordinates = tree[3]
    difference(tree[2], seed, q, out)
    for j in range(coordinates.shape[0]):
        c = coordinates[j]
        if c >= 0 and joints[j, WRAPS] > 0.0:
            out[j] = _near(q[c], seed[c], joints[j]) - seed[c]


@kernel
def _score(tree, task, joints, q, seed, norms, converged, solve_type, displacement):
    """Rank of an attempt's end (lower is better): converged ones first (``(0, x)``), by solve
    type (``speed``: 0; ``distance``: the weighted norm of the move, see below;
    ``manipulability``: ``-sqrt(det(J J^T))``, Yoshikawa 1985); unconverged ones by their summed
    error norms ``(1, x)``.

    ``distance`` is ``sum_j d_j^2 / w_j`` over the tangent coordinates with ``w_j > 0``
    (:func:`_displacement` ``d`` from the seed): the norm ``dq^T W^-1 dq`` that the damped step
    ``dq = W J^T (J W J^T + lambda^2 I)^-1 e`` minimises among the moves with ``J dq = e`` (as
    ``lambda -> 0``; the weighted least-norm solution), so a stronger joint (larger ``w``, which
    the step moves more) costs less to move. A locked joint (``w = 0``) stays at the seed: no
    term."""
    if not converged:
        return 1.0, norms.sum()
    if solve_type == DISTANCE:
        _displacement(tree, joints, seed, q, displacement)
        value = 0.0
        for j in range(joints.shape[0]):
            weight = joints[j, WEIGHT]
            if weight > 0.0:
                value += displacement[j] * displacement[j] / weight
        return 0.0, value
    if solve_type == MANIPULABILITY:
        rows_count, dof = task[3].shape[0], joints.shape[0]
        space = evaluation_workspace(tree, task, dof)
        jacobian = np.empty((rows_count, dof))
        forward_kinematics(tree[0], tree[1], q, space[0])
        tip_points(space[0], task, space[1])
        jacobian_at(tree, task, space, jacobian)
        gram = np.empty((rows_count, rows_count))
        for a in range(rows_count):
            for b in range(rows_count):
                value = 0.0
                for j in range(dof):
                    value += jacobian[a, j] * jacobian[b, j]
                gram[a, b] = value
        if not cholesky_solve(gram, np.zeros(rows_count), rows_count):
            return 0.0, 0.0  # singular: no manipulability
        volume = 1.0  # sqrt(det(J J^T)) = prod diag(L)
        for a in range(rows_count):
            volume *= gram[a, a]
        return 0.0, -volume
    return 0.0, 0.0


@kernel
def _largest_move(tree, joints, q, seed, displacement):
    """``max_j |d_j|`` [rad or m] of the :func:`_displacement` from ``seed`` to ``q``."""
    _displacement(tree, joints, seed, q, displacement)
    largest = 0.0
    for j in range(joints.shape[0]):
        largest = max(largest, abs(displacement[j]))
    return largest


@kernel
def _near(value, reference, joint):
    """For a joint that turns freely (``WRAPS``: continuous, or revolute over more than a turn),
    the 2 pi-equivalent of ``value`` (same pose) within the joint's limits nearest
    ``reference``; other joints' values as they are. ``joint`` is the joint's row of ``joints``."""
    if joint[WRAPS] <= 0.0:
        return value
    wrapped = reference + (value - reference + math.pi) % (2.0 * math.pi) - math.pi
    if wrapped < joint[LOWER]:  # (a range over 2 pi holds the next turn)
        wrapped += 2.0 * math.pi
    elif wrapped > joint[UPPER]:
        wrapped -= 2.0 * math.pi
    return wrapped


@kernel
def _usable_seed(tree, joints, seed, out):
    """The seed with its quaternions normalised and 1-DOF joints clipped into the limits (into
    ``out``); False for NaN or infinite values or a zero quaternion."""
    for i in range(seed.shape[0]):
        if not math.isfinite(seed[i]):
            return False
    apply_step(tree, joints, seed, np.zeros(joints.shape[0]), out)
    for i in range(out.shape[0]):
        if not math.isfinite(out[i]):
            return False
    return True


@kernel
def search(targets, seed, deadline, q_out, norms_out, tree, task, joints, table, settings):
    """Attempts (:func:`lm_attempt`) from restarts until one converges (``speed``), or the
    deadline [ns] or ``max_attempts`` (< 0: unbounded) ends the search; the best end by
    :func:`_score` goes to ``q_out`` (joints that turn freely: the turn nearest the seed) and
    ``norms_out``. Returns (best outcome, iterations, attempts, deadline reached); the outcome is
    ``SEED_NOT_FINITE`` for a seed with NaN, infinity or a zero quaternion. The seed is clipped
    into the limits, its quaternions normalised.

    Starts: the seed; with one tip, when the seed's tip pose lies farther from the target than
    the table's typical spacing and a table entry lies nearer, that entry first and the seed next.
    Then the ``TABLE_RESTARTS`` table entries nearest the targets (by :func:`pose_features`), then
    random configurations (:func:`configuration_from_draws` around the seed; numba's generator
    seeded with ``random_seed``).

    No branch flips (``speed`` with ``max_joint_move`` > 0 [rad or m]): a solution whose largest
    joint move from the seed (:func:`_largest_move`) exceeds ``max_joint_move`` does not end the
    search; the restarts then begin around the seed (``NEAR_RESTARTS`` of them, within a box
    that doubles from ``max_joint_move``) and the solution with the smallest largest move among
    the first ``NEAR_CANDIDATES`` found within the budget is returned (ssik's criterion).
    """
    method, solve_type, min_damping, max_iterations, max_attempts, random_seed, max_joint_move = settings
    feature_spec, feature_scale, table_q, table_features_, table_spacing = table
    coordinates = tree[3]
    nq, dof, tips = seed.shape[0], joints.shape[0], task[0].shape[0]
    clipped = np.empty(nq)
    if not _usable_seed(tree, joints, seed, clipped):
        return SEED_NOT_FINITE, 0, 0, False
    seed = clipped
    attempt_settings = (
        method, solve_type, min_damping, max_iterations, max_attempts, random_seed,
        max_joint_move if solve_type == SPEED else 0.0,
    )  # fmt: skip
    np.random.seed(random_seed)
    table_size = table_q.shape[0]
    target_features = np.empty(feature_spec.shape[0])
    seed_features = np.empty(feature_spec.shape[0])
    draws, displacement = np.empty(dof), np.empty(dof)
    nearest = np.empty(0, dtype=np.int64)
    next_nearest, pending_seed = 0, False
    start = seed.copy()
    if table_size > 1:
        pose_features(targets, feature_spec, feature_scale, target_features)
    if tips == 1 and table_size > 1:
        _fk_features(
            tree,
            task,
            feature_spec,
            feature_scale,
            seed,
            evaluation_workspace(tree, task, dof),
            seed_features,
        )
        seed_distance = _squared_distance(seed_features, target_features)
        if seed_distance > table_spacing * table_spacing:
            nearest = _nearest_entries(table_features_, target_features)
            if _squared_distance(table_features_[nearest[0]], target_features) < seed_distance:
                for i in range(nq):
                    start[i] = table_q[nearest[0], i]
                next_nearest, pending_seed = 1, True

    norms = np.empty((tips, 2))
    best_rank, best_value, best_outcome = 2.0, 0.0, ITERATIONS
    iterations, attempts, deadline_reached, near_restarts, candidates = 0, 0, False, 0, 0
    while True:
        q = start.copy()
        outcome, used = lm_attempt(
            tree, task, joints, targets, attempt_settings, seed, NO_PRIORITY, deadline, q, norms
        )
        iterations += used
        attempts += 1
        converged = outcome == CONVERGED
        rank, value = _score(tree, task, joints, q, seed, norms, converged, solve_type, displacement)
        avoid_flips = converged and solve_type == SPEED and max_joint_move > 0.0
        if avoid_flips:
            value = _largest_move(tree, joints, q, seed, displacement)
            candidates += 1
        if rank < best_rank or (rank == best_rank and value < best_value):
            best_rank, best_value, best_outcome = rank, value, outcome
            for i in range(nq):
                q_out[i] = q[i]
            for tip in range(tips):
                norms_out[tip, 0], norms_out[tip, 1] = norms[tip, 0], norms[tip, 1]
        if outcome == DEADLINE:
            deadline_reached = True
            break
        if converged and solve_type == SPEED and (not avoid_flips or value <= max_joint_move):
            break
        if avoid_flips and candidates >= NEAR_CANDIDATES:
            break
        if max_attempts >= 0 and attempts >= max_attempts:
            break
        if deadline != NO_DEADLINE and monotonic_ns() >= deadline:
            deadline_reached = True
            break
        # the next start
        if pending_seed:
            for i in range(nq):
                start[i] = seed[i]
            pending_seed = False
            continue
        for j in range(dof):
            draws[j] = np.random.random()
        if solve_type == SPEED and max_joint_move > 0.0 and near_restarts < NEAR_RESTARTS:
            box = min(max_joint_move * 2.0 ** (near_restarts // 2), math.pi)
            configuration_from_draws(tree, joints, seed, draws, box, start)
            near_restarts += 1
            continue
        if table_size > 1 and nearest.shape[0] == 0:
            nearest = _nearest_entries(table_features_, target_features)
        if next_nearest < nearest.shape[0]:
            for i in range(nq):
                start[i] = table_q[nearest[next_nearest], i]
            next_nearest += 1
            continue
        configuration_from_draws(tree, joints, seed, draws, -1.0, start)
    for j in range(dof):
        c = coordinates[j]
        if c >= 0:
            q_out[c] = _near(q_out[c], seed[c], joints[j])
    return best_outcome, iterations, attempts, deadline_reached


@kernel
def _nearest_entries(table_features_, target_features):
    """Indices of the ``TABLE_RESTARTS`` table entries nearest ``target_features``, nearest first
    (equal distances: the lower index first). One pass, each entry nearer than the farthest kept
    so far inserted in order (loops: ``np.partition`` and ``np.argsort`` would compile numba's
    selection and sorting code, ~4 s)."""
    size = table_features_.shape[0]
    count = min(TABLE_RESTARTS, size)
    chosen = np.empty(count, dtype=np.int64)
    chosen_distance = np.empty(count)
    found = 0
    for s in range(size):
        distance = _squared_distance(table_features_[s], target_features)
        if found == count and distance >= chosen_distance[count - 1]:
            continue
        slot = min(found, count - 1)  # the next free slot, or the farthest kept (dropped)
        while slot > 0 and chosen_distance[slot - 1] > distance:
            chosen_distance[slot], chosen[slot] = chosen_distance[slot - 1], chosen[slot - 1]
            slot -= 1
        chosen_distance[slot], chosen[slot] = distance, s
        found = min(found + 1, count)
    return chosen


@batch_kernel
def search_many(targets, seeds, timeout_ns, q_out, norms_out, outcomes, tree, task, joints, table, settings):
    """:func:`search` for each of N targets (N, T, 4, 4) from its seed (N, nq), in turn, without
    the GIL (:meth:`IKSolver.solve_many` runs slices of a batch on several threads); each
    target's deadline is ``timeout_ns`` after its own start (< 0: none). ``outcomes`` (N,)
    receives each best outcome; the arguments after it are :func:`search`'s."""
    for index in range(targets.shape[0]):
        deadline = NO_DEADLINE if timeout_ns < 0 else monotonic_ns() + timeout_ns
        outcome, _, _, _ = search(
            targets[index],
            seeds[index],
            deadline,
            q_out[index],
            norms_out[index],
            tree,
            task,
            joints,
            table,
            settings,
        )
        outcomes[index] = outcome
