"""The solver's compiled core: forward kinematics, body Jacobians, task errors, the damped step
with joint-limit rows, the Levenberg-Marquardt loop and the restart search, as numba kernels over
flat arrays (see :mod:`ik_node.solver.jit`; without numba they run as plain Python).

Array layout (built by :class:`ik_node.solver.problem.Problem` from a
:class:`~ik_node.kinematics.KinematicTree`):

* ``frames`` (K, 20): per frame other than the base (pose index ``k + 1``): the constant
  rotation ``C_R`` (row-major, 9) and translation ``C_t`` (3) from the parent frame, the joint's
  unit twist ``S = [a_lin; a_rot]`` (6) in its own frame, the mimic multiplier and offset
  (``theta = m q[dof] + o``).
* ``frame_links`` (K, 2) int: parent pose index (0 = base), degree of freedom (-1: fixed).
* ``tip_frames`` (T,) int: pose index of each tip. ``rows`` (m, 2) int: per task row its tip
  and its axis 0-5 of ``[v; w]``; ``row_weights`` (m,); ``tolerances`` (T, 2): position [m],
  orientation [rad].
* ``joints`` (n, 7): lower, upper [rad or m], weight (0 locks), rest posture, sampling lower and
  upper bounds for restarts, 1.0 for a joint that turns freely (continuous, or revolute with a
  range over 2 pi, as SDF-derived URDFs write "unlimited": sampled over a turn around the seed,
  returned as the equivalent angle nearest the seed).

Conventions: twists ``[v; w]``; the body Jacobian with body-frame errors (tip axes); poses are
``T_base_frame``. Small-matrix algebra is written as loops (numba's ``np.linalg`` and ``@`` need
SciPy's BLAS, which we do not depend on; loops are faster at these sizes anyway), and so are
copies and clips: numba compiles an array-to-array slice assignment with a shape-mismatch error
message (its string formatting took ~3 s of the cold compile) and a ufunc with its broadcasting
(see benchmark/bench_compile.py).
"""

from __future__ import annotations

import math

import numpy as np

from .jit import batch_kernel, kernel, monotonic_ns

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
#: What :func:`search` returns for a seed with NaN or infinite values (nothing is searched).
SEED_NOT_FINITE = -1
#: A deadline that never comes [ns].
NO_DEADLINE = np.iinfo(np.int64).max
#: Row 0 (a range's start) and no priority rows, as int64 constants: numba types a literal ``0``
#: argument as ``Literal[int](0)`` and compiles the callee once more for it, beside the ``int64``
#: its other callers pass (each kernel compiled once: see benchmark/bench_compile.py).
FIRST_ROW = NO_PRIORITY = np.int64(0)

LOWER, UPPER, WEIGHT, REST, SAMPLE_LOWER, SAMPLE_UPPER, WRAPS = 0, 1, 2, 3, 4, 5, 6


# ------------------------------------------------------------------ kinematics


@kernel
def forward_kinematics(frames, frame_links, q, poses):
    """Poses ``T_base_frame`` (F, 4, 4) of every frame, parents first (``poses[0]`` = base).

    ``T_parent_k = (C_R M(theta), C_t + theta C_R a_lin)`` with Rodrigues' formula
    ``M = I + sin(theta) hat(a) + (1 - cos(theta)) hat(a)^2`` about ``a = a_rot`` (Lynch & Park
    eq. 3.51; ``M = I`` for prismatic joints, whose ``a_rot`` is zero). ``q`` [rad, m].
    """
    poses[0, :, :] = 0.0
    for i in range(4):
        poses[0, i, i] = 1.0
    for k in range(frames.shape[0]):
        frame = frames[k]
        dof = frame_links[k, 1]
        theta = 0.0
        if dof >= 0:
            theta = frame[18] * q[dof] + frame[19]
        x, y, z = frame[15], frame[16], frame[17]
        sine, versine = math.sin(theta), 1.0 - math.cos(theta)
        m00 = 1.0 - versine * (y * y + z * z)
        m11 = 1.0 - versine * (x * x + z * z)
        m22 = 1.0 - versine * (x * x + y * y)
        m01, m10 = versine * x * y - sine * z, versine * x * y + sine * z
        m02, m20 = versine * x * z + sine * y, versine * x * z - sine * y
        m12, m21 = versine * y * z - sine * x, versine * y * z + sine * x
        # local translation C_t + theta C_R a_lin
        t0 = frame[9] + theta * (frame[0] * frame[12] + frame[1] * frame[13] + frame[2] * frame[14])
        t1 = frame[10] + theta * (frame[3] * frame[12] + frame[4] * frame[13] + frame[5] * frame[14])
        t2 = frame[11] + theta * (frame[6] * frame[12] + frame[7] * frame[13] + frame[8] * frame[14])
        parent = poses[frame_links[k, 0]]
        pose = poses[k + 1]
        for i in range(3):  # row i of T_base_parent (C_R M, t)
            p0, p1, p2 = parent[i, 0], parent[i, 1], parent[i, 2]
            a0 = p0 * frame[0] + p1 * frame[3] + p2 * frame[6]
            a1 = p0 * frame[1] + p1 * frame[4] + p2 * frame[7]
            a2 = p0 * frame[2] + p1 * frame[5] + p2 * frame[8]
            pose[i, 0] = a0 * m00 + a1 * m10 + a2 * m20
            pose[i, 1] = a0 * m01 + a1 * m11 + a2 * m21
            pose[i, 2] = a0 * m02 + a1 * m12 + a2 * m22
            pose[i, 3] = p0 * t0 + p1 * t1 + p2 * t2 + parent[i, 3]
            pose[3, i] = 0.0
        pose[3, 3] = 1.0


@kernel
def tip_body_jacobian(frames, frame_links, poses, tip_frame, jacobian):
    """Body Jacobian (6, n) of pose index ``tip_frame`` (overwritten), from :func:`forward_kinematics`.

    Column of joint ``j`` on the path: ``Ad(T_e_j) S_j`` with ``T_e_j = T_base_e^-1 T_base_j``
    (Lynch & Park eq. 5.18, the adjoint block trimmed to the joint's twist), evaluated as
    ``[R_e^T (R_j a_lin + (p_j - p_e) x R_j a_rot); R_e^T R_j a_rot]``; a mimic follower adds its
    column times its multiplier to its leader's. Joints off the path: zero columns.
    """
    jacobian[:, :] = 0.0
    tip = poses[tip_frame]
    frame_index = tip_frame
    while frame_index != 0:
        k = frame_index - 1
        dof = frame_links[k, 1]
        if dof >= 0:
            frame = frames[k]
            pose = poses[frame_index]
            multiplier = frame[18]
            # world-aligned axis of rotation and linear direction of the joint
            wx = pose[0, 0] * frame[15] + pose[0, 1] * frame[16] + pose[0, 2] * frame[17]
            wy = pose[1, 0] * frame[15] + pose[1, 1] * frame[16] + pose[1, 2] * frame[17]
            wz = pose[2, 0] * frame[15] + pose[2, 1] * frame[16] + pose[2, 2] * frame[17]
            dx = pose[0, 3] - tip[0, 3]
            dy = pose[1, 3] - tip[1, 3]
            dz = pose[2, 3] - tip[2, 3]
            vx = pose[0, 0] * frame[12] + pose[0, 1] * frame[13] + pose[0, 2] * frame[14] + dy * wz - dz * wy
            vy = pose[1, 0] * frame[12] + pose[1, 1] * frame[13] + pose[1, 2] * frame[14] + dz * wx - dx * wz
            vz = pose[2, 0] * frame[12] + pose[2, 1] * frame[13] + pose[2, 2] * frame[14] + dx * wy - dy * wx
            for i in range(3):  # rotate into tip axes: R_e^T
                jacobian[i, dof] += multiplier * (tip[0, i] * vx + tip[1, i] * vy + tip[2, i] * vz)
                jacobian[3 + i, dof] += multiplier * (tip[0, i] * wx + tip[1, i] * wy + tip[2, i] * wz)
        frame_index = frame_links[k, 0]


@kernel
def task_jacobian(frames, frame_links, poses, tip_frames, rows, row_weights, blocks, jacobian):
    """Stacked task Jacobian (m, n): row ``r`` is ``w_r`` times row ``axis_r`` of its tip's body
    Jacobian. ``blocks`` (T, 6, n) is work space (left holding each tip's full body Jacobian)."""
    for tip in range(tip_frames.shape[0]):
        tip_body_jacobian(frames, frame_links, poses, tip_frames[tip], blocks[tip])
    for r in range(rows.shape[0]):
        block_row = blocks[rows[r, 0], rows[r, 1]]
        for j in range(jacobian.shape[1]):
            jacobian[r, j] = row_weights[r] * block_row[j]


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
    theta = math.atan2(0.5 * double_sine, cosine)
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


@kernel
def task_error(poses, targets, tip_frames, rows, row_weights, error, norms, full, relative):
    """Stacked weighted body-frame error (m,) and per-tip error norms (T, 2) (position [m],
    orientation [rad], over the controlled rows, unweighted).

    Per tip (tip axes): ``[R_e^T (p_d - p_e); log(R_e^T R_d)]``. ``full`` (T, 6) and
    ``relative`` (3, 3) are work space.
    """
    tips = tip_frames.shape[0]
    for tip in range(tips):
        pose = poses[tip_frames[tip]]
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
    norms[:, :] = 0.0
    for r in range(rows.shape[0]):
        value = full[rows[r, 0], rows[r, 1]]
        error[r] = row_weights[r] * value
        norms[rows[r, 0], 1 if rows[r, 1] >= 3 else 0] += value * value
    for tip in range(tips):
        norms[tip, 0] = math.sqrt(norms[tip, 0])
        norms[tip, 1] = math.sqrt(norms[tip, 1])


@kernel
def forward_and_jacobian(frames, frame_links, q, tip_frame, poses, jacobian):
    """FK of every frame and the body Jacobian (6, n) of one tip: the kernels' public entry for
    tests and the kinematics benchmark."""
    forward_kinematics(frames, frame_links, q, poses)
    tip_body_jacobian(frames, frame_links, poses, tip_frame, jacobian)


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


# ------------------------------------------------------------------ one Levenberg-Marquardt attempt


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


@kernel
def limited_step(jacobian, error, joints, q, damping, min_damping2, primary_rows, work, step):
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
            if pinned[j]:
                continue
            candidate = q[j] + step[j]
            if candidate < joints[j, LOWER] or candidate > joints[j, UPPER]:
                bound = joints[j, LOWER] if candidate < joints[j, LOWER] else joints[j, UPPER]
                pinned[j], violating = True, True
                pinned_motion[j] = bound - q[j]
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
def _transpose_step(jacobian, error, joints, q, mu, step):
    """Jacobian transpose (Buss 2004): ``dq = alpha W J^T e`` with the step length that best
    reduces ``|e - J dq|``, divided by the trust-region factor and shortened uniformly to stay
    within the limits."""
    rows, dof = jacobian.shape
    for j in range(dof):
        value = 0.0
        for r in range(rows):
            value += jacobian[r, j] * error[r]
        step[j] = joints[j, WEIGHT] * value
    numerator, denominator = 0.0, 0.0
    for r in range(rows):
        predicted = 0.0
        for j in range(dof):
            predicted += jacobian[r, j] * step[j]
        numerator += error[r] * predicted
        denominator += predicted * predicted
    scale = numerator / max(denominator, 1e-300) / mu
    shortening = 1.0
    for j in range(dof):
        step[j] *= scale
        if step[j] != 0.0:
            room = joints[j, UPPER] - q[j] if step[j] > 0.0 else joints[j, LOWER] - q[j]
            shortening = min(shortening, room / step[j])
    for j in range(dof):
        step[j] *= max(shortening, 0.0)


@kernel
def _stationary(jacobian, error, joints, q):
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
        blocked = (q[j] <= joints[j, LOWER] and descent < 0.0) or (q[j] >= joints[j, UPPER] and descent > 0.0)
        if not blocked:
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
def posture_cost(q, joints, posture_gains):
    """``P = sum_j k_j (q_j - q_rest_j)^2`` (seed 004's control term ``z = alpha_i (theta_i -
    theta_ci)^2`` summed; ``k_j`` the per-joint posture gains) [rad^2 or m^2]."""
    value = 0.0
    for j in range(q.shape[0]):
        difference = q[j] - joints[j, REST]
        value += posture_gains[j] * difference * difference
    return value


@kernel
def _task_restored(
    frames, frame_links, tip_frames, rows, row_weights, tolerances, joints, targets, min_damping2,
    candidate, poses, blocks, jacobian, error, norms, tip_errors, relative, work, step,
):  # fmt: skip
    """Whether ``candidate`` (corrected in place) has every tip within tolerance, after at most
    ``POSTURE_CORRECTIONS`` Gauss-Newton steps (:func:`limited_step` with ``lambda^2 =
    lambda_min^2``, clipped to the limits); ``norms`` receives its errors."""
    rows_count = rows.shape[0]
    for correction in range(POSTURE_CORRECTIONS + 1):
        forward_kinematics(frames, frame_links, candidate, poses)
        task_error(poses, targets, tip_frames, rows, row_weights, error, norms, tip_errors, relative)
        if _within_tolerance(norms, tolerances, rows, rows_count):
            return True
        if correction == POSTURE_CORRECTIONS:
            break
        task_jacobian(frames, frame_links, poses, tip_frames, rows, row_weights, blocks, jacobian)
        limited_step(jacobian, error, joints, candidate, min_damping2, min_damping2, NO_PRIORITY, work, step)
        for j in range(candidate.shape[0]):
            candidate[j] = min(max(candidate[j] + step[j], joints[j, LOWER]), joints[j, UPPER])
    return False


@kernel
def posture_refinement(
    frames, frame_links, tip_frames, rows, row_weights, tolerances, joints, targets,
    min_damping2, posture_gains, seed, max_joint_move, budget, deadline, q, norms,
):  # fmt: skip
    """Null-space motion toward the rest posture from a converged ``q`` (updated in place, with
    its per-tip errors in ``norms``); returns the posture iterations used (``budget`` at most).

    Each iteration: the pull ``z_j = k_j w_j (q_rest_j - q_j)`` (``k_j`` the per-joint posture
    gains, ``w_j`` the joint weights: minus half the gradient of :func:`posture_cost`) projected
    into the task's null space, ``dq = (I - J^+ J) z`` (seed 004's "J with control term",
    :func:`null_space_motion`), clipped to the limits; that leaves the task unchanged to first
    order only, so the candidate is corrected back within tolerance (:func:`_task_restored`) and
    kept only if it is and its posture cost fell; else the step is halved (``POSTURE_HALVINGS``
    times). Stops when no step is kept, the cost falls by less than ``POSTURE_SETTLED`` of
    itself, the budget is used or the clock passes ``deadline`` [ns]. Every ``q`` it keeps solves
    the task: turning the posture on never costs a solution the task found. With
    ``max_joint_move`` > 0 [rad or m] a step is kept only if no joint ends farther than that from
    ``seed`` (or than the converged ``q`` already was): the posture never turns a solution into
    a branch flip (see :func:`search`).
    """
    cost = posture_cost(q, joints, posture_gains)
    if budget <= 0 or not cost > 0.0:
        return 0
    frame_count = frames.shape[0] + 1
    tips, rows_count, dof = tip_frames.shape[0], rows.shape[0], q.shape[0]
    poses = np.empty((frame_count, 4, 4))
    blocks = np.empty((tips, 6, dof))
    jacobian = np.empty((rows_count, dof))
    error = np.empty(rows_count)
    candidate_norms = np.empty((tips, 2))
    tip_errors, relative = np.empty((tips, 6)), np.empty((3, 3))
    candidate = np.empty(dof)
    pull = np.empty(dof)
    motion = np.empty(dof)
    weights = np.empty(dof)
    step = np.empty(dof)
    work = step_workspace(rows_count, dof)
    gram, solution, image = work[0], work[1], work[2]
    for j in range(dof):
        weights[j] = joints[j, WEIGHT]
    move_bound = 0.0
    if max_joint_move > 0.0:
        move_bound = max(max_joint_move, _largest_move(q, seed, joints))
    used = 0
    while used < budget:
        if deadline != NO_DEADLINE and monotonic_ns() >= deadline:
            break
        used += 1
        forward_kinematics(frames, frame_links, q, poses)
        task_jacobian(frames, frame_links, poses, tip_frames, rows, row_weights, blocks, jacobian)
        for j in range(dof):
            pull[j] = posture_gains[j] * weights[j] * (joints[j, REST] - q[j])
        null_space_motion(jacobian, pull, weights, FIRST_ROW, rows_count, gram, solution, image, motion)
        scale, kept, candidate_cost = 1.0, False, cost
        for _ in range(POSTURE_HALVINGS + 1):
            for j in range(dof):
                candidate[j] = min(max(q[j] + scale * motion[j], joints[j, LOWER]), joints[j, UPPER])
            if _task_restored(
                frames, frame_links, tip_frames, rows, row_weights, tolerances, joints, targets, min_damping2,
                candidate, poses, blocks, jacobian, error, candidate_norms, tip_errors, relative, work, step,
            ):  # fmt: skip
                candidate_cost = posture_cost(candidate, joints, posture_gains)
                if candidate_cost < cost and (
                    move_bound <= 0.0 or _largest_move(candidate, seed, joints) <= move_bound
                ):
                    kept = True
                    break
            scale *= 0.5
        if not kept:
            break
        for j in range(dof):
            q[j] = candidate[j]
        for tip in range(tips):
            norms[tip, 0], norms[tip, 1] = candidate_norms[tip, 0], candidate_norms[tip, 1]
        settled = cost - candidate_cost <= POSTURE_SETTLED * cost
        cost = candidate_cost
        if settled:
            break
    return used


@kernel
def lm_attempt(
    frames, frame_links, tip_frames, rows, row_weights, tolerances, joints, targets,
    method, min_damping, posture_gains, seed, max_joint_move, max_iterations, primary_rows, deadline, q,
    norms,
):  # fmt: skip
    """One Levenberg-Marquardt attempt from ``q`` (updated in place; ``norms`` (T, 2) receives its
    per-tip errors). Returns (outcome, iterations).

    Each iteration: the step (:func:`limited_step` with ``lambda^2 = lambda_min^2 + mu E``,
    ``E = e^T e / 2``, Sugihara 2011: large far from the goal or near a singularity, vanishing as
    the error does; ``pinv``: ``lambda_min^2 + PINV_DAMPING``; ``transpose``:
    :func:`_transpose_step`; ``ccd``: a sweep of :func:`_ccd_sweep`), clipped to the limits, is
    kept only if ``E`` decreases (trust region: ``mu`` falls by ``MU_DOWN``, else grows by a
    factor that doubles while refusals repeat). Outcomes: ``CONVERGED``; ``STUCK`` (``mu`` past
    ``MU_MAX``, or stationary: a local minimum); ``STALLED`` (``E`` not halved in
    ``STALL_ITERATIONS``); ``ITERATIONS``; ``DEADLINE`` (the clock passed ``deadline`` [ns]).

    With ``primary_rows > 0`` (task priority, rows of the reachable tips first) ``E`` is the
    secondary rows' error, and a step is kept only if the primary tips stay within tolerance.

    Once converged (``dls`` and ``pinv``, without priority), :func:`posture_refinement` moves
    ``q`` toward the rest posture in the task's null space with the per-joint ``posture_gains``
    (all 0: off), within the iterations left (counted), no joint past ``max_joint_move`` (> 0)
    from ``seed`` (n,) (the search's seed, not the attempt's start).
    """
    frame_count = frames.shape[0] + 1
    tips, rows_count, dof = tip_frames.shape[0], rows.shape[0], q.shape[0]
    poses = np.empty((frame_count, 4, 4))
    candidate_poses = np.empty((frame_count, 4, 4))
    blocks = np.empty((tips, 6, dof))
    jacobian = np.empty((rows_count, dof))
    error = np.empty(rows_count)
    candidate_error = np.empty(rows_count)
    candidate_norms = np.empty((tips, 2))
    candidate = np.empty(dof)
    step = np.empty(dof)
    tip_errors, relative = np.empty((tips, 6)), np.empty((3, 3))
    work = step_workspace(rows_count, dof)
    min_damping2 = min_damping * min_damping

    forward_kinematics(frames, frame_links, q, poses)
    task_error(poses, targets, tip_frames, rows, row_weights, error, norms, tip_errors, relative)
    posture_budget = 0
    if (method == DLS or method == PINV) and primary_rows == 0:
        posture_budget = min(POSTURE_ITERATIONS, max_iterations)
    if _within_tolerance(norms, tolerances, rows, rows_count):
        return CONVERGED, posture_refinement(
            frames, frame_links, tip_frames, rows, row_weights, tolerances, joints, targets,
            min_damping2, posture_gains, seed, max_joint_move, posture_budget, deadline, q, norms,
        )  # fmt: skip
    cost = _cost(error, primary_rows)
    task_jacobian(frames, frame_links, poses, tip_frames, rows, row_weights, blocks, jacobian)
    mu, growth = MU_INITIAL, 2.0
    checkpoint_cost, since_checkpoint = cost, 0
    for iteration in range(1, max_iterations + 1):
        if mu > MU_MAX:
            return STUCK, iteration - 1
        if (
            method != CCD
            and primary_rows == 0
            and mu > MU_INITIAL
            and _stationary(jacobian, error, joints, q)
        ):
            return STUCK, iteration - 1  # (checked once steps are being refused)
        if since_checkpoint > STALL_ITERATIONS:
            return STALLED, iteration - 1
        if deadline != NO_DEADLINE and monotonic_ns() >= deadline:
            return DEADLINE, iteration - 1
        if method == CCD:
            _ccd_sweep(
                frames,
                frame_links,
                tip_frames,
                rows,
                row_weights,
                joints,
                targets,
                min_damping2,
                q,
                cost,
                candidate,
            )
        else:
            if method == TRANSPOSE:
                _transpose_step(jacobian, error, joints, q, mu, step)
            else:
                damping = min_damping2 + (mu * cost if method == DLS else PINV_DAMPING)
                limited_step(jacobian, error, joints, q, damping, min_damping2, primary_rows, work, step)
            for j in range(dof):
                candidate[j] = min(max(q[j] + step[j], joints[j, LOWER]), joints[j, UPPER])
        forward_kinematics(frames, frame_links, candidate, candidate_poses)
        task_error(
            candidate_poses,
            targets,
            tip_frames,
            rows,
            row_weights,
            candidate_error,
            candidate_norms,
            tip_errors,
            relative,
        )
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
        for j in range(dof):
            q[j] = candidate[j]
        for r in range(rows_count):
            error[r] = candidate_error[r]
        for tip in range(tips):
            norms[tip, 0], norms[tip, 1] = candidate_norms[tip, 0], candidate_norms[tip, 1]
        cost = candidate_cost
        if _within_tolerance(norms, tolerances, rows, rows_count):
            posture_budget = min(posture_budget, max_iterations - iteration)
            return CONVERGED, iteration + posture_refinement(
                frames, frame_links, tip_frames, rows, row_weights, tolerances, joints, targets,
                min_damping2, posture_gains, seed, max_joint_move, posture_budget, deadline, q, norms,
            )  # fmt: skip
        poses, candidate_poses = candidate_poses, poses
        task_jacobian(frames, frame_links, poses, tip_frames, rows, row_weights, blocks, jacobian)
        mu, growth = max(mu * MU_DOWN, MU_MIN), 2.0
        if cost < STALL_DECREASE * checkpoint_cost:
            checkpoint_cost, since_checkpoint = cost, 0
    return ITERATIONS, max_iterations


@kernel
def _ccd_sweep(
    frames, frame_links, tip_frames, rows, row_weights, joints, targets, min_damping2, q, cost, candidate
):
    """Cyclic coordinate descent: one joint at a time, last to first, each a 1-D least-squares
    step ``dq_j = J_j . e / (J_j . J_j + lambda_min^2)`` along its own Jacobian column (the
    geometric CCD for one revolute joint and a position goal), clipped to the joint's limits and
    kept only if the error decreases. The swept configuration goes to ``candidate``."""
    frame_count = frames.shape[0] + 1
    tips, rows_count, dof = tip_frames.shape[0], rows.shape[0], q.shape[0]
    poses = np.empty((frame_count, 4, 4))
    blocks = np.empty((tips, 6, dof))
    jacobian = np.empty((rows_count, dof))
    error = np.empty(rows_count)
    norms = np.empty((tips, 2))
    tip_errors, relative = np.empty((tips, 6)), np.empty((3, 3))
    for j in range(dof):
        candidate[j] = q[j]
    forward_kinematics(frames, frame_links, candidate, poses)
    task_error(poses, targets, tip_frames, rows, row_weights, error, norms, tip_errors, relative)
    for j in range(dof - 1, -1, -1):
        if joints[j, WEIGHT] <= 0.0:
            continue
        task_jacobian(frames, frame_links, poses, tip_frames, rows, row_weights, blocks, jacobian)
        along, length = 0.0, min_damping2
        for r in range(rows_count):
            along += jacobian[r, j] * error[r]
            length += jacobian[r, j] * jacobian[r, j]
        previous = candidate[j]
        candidate[j] = min(max(previous + along / length, joints[j, LOWER]), joints[j, UPPER])
        forward_kinematics(frames, frame_links, candidate, poses)
        task_error(poses, targets, tip_frames, rows, row_weights, error, norms, tip_errors, relative)
        trial_cost = _cost(error, FIRST_ROW)
        if trial_cost < cost:
            cost = trial_cost
        else:
            candidate[j] = previous
            forward_kinematics(frames, frame_links, candidate, poses)
            task_error(poses, targets, tip_frames, rows, row_weights, error, norms, tip_errors, relative)


# ------------------------------------------------------------------ restarts and the search


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


@kernel
def _fk_features(frames, frame_links, tip_frames, feature_spec, feature_scale, q, poses, tip_poses, out):
    """:func:`pose_features` of the tips at ``q`` (``poses``, ``tip_poses``: work space)."""
    forward_kinematics(frames, frame_links, q, poses)
    for tip in range(tip_frames.shape[0]):
        pose = poses[tip_frames[tip]]
        for i in range(4):
            for k in range(4):
                tip_poses[tip, i, k] = pose[i, k]
    pose_features(tip_poses, feature_spec, feature_scale, out)


@kernel
def table_features(frames, frame_links, tip_frames, feature_spec, feature_scale, table_q):
    """Features (S, F) of the configurations ``table_q`` (S, n)."""
    poses = np.empty((frames.shape[0] + 1, 4, 4))
    tip_poses = np.empty((tip_frames.shape[0], 4, 4))
    features = np.empty((table_q.shape[0], feature_spec.shape[0]))
    for s in range(table_q.shape[0]):
        _fk_features(
            frames,
            frame_links,
            tip_frames,
            feature_spec,
            feature_scale,
            table_q[s],
            poses,
            tip_poses,
            features[s],
        )
    return features


@kernel
def _squared_distance(a, b):
    value = 0.0
    for i in range(a.shape[0]):
        value += (a[i] - b[i]) * (a[i] - b[i])
    return value


@kernel
def _score(frames, frame_links, tip_frames, rows, row_weights, joints, q, seed, norms, converged, solve_type):
    """Rank of an attempt's end (lower is better): converged ones first (``(0, x)``), by solve
    type (``speed``: 0; ``distance``: the weighted norm of the move, see below;
    ``manipulability``: ``-sqrt(det(J J^T))``, Yoshikawa 1985); unconverged ones by their summed
    error norms ``(1, x)``.

    ``distance`` is ``sum_j (q_j - seed_j)^2 / w_j`` over the joints with ``w_j > 0`` (joints that
    turn freely compared at the nearest turn): the norm ``dq^T W^-1 dq`` that the damped step
    ``dq = W J^T (J W J^T + lambda^2 I)^-1 e`` minimises among the moves with ``J dq = e`` (as
    ``lambda -> 0``; the weighted least-norm solution), so a stronger joint (larger ``w``, which
    the step moves more) costs less to move. A locked joint (``w = 0``) stays at the seed: no
    term."""
    if not converged:
        return 1.0, norms.sum()
    if solve_type == DISTANCE:
        value = 0.0
        for j in range(q.shape[0]):
            weight = joints[j, WEIGHT]
            if weight > 0.0:
                difference = _near(q[j], seed[j], joints[j]) - seed[j]
                value += difference * difference / weight
        return 0.0, value
    if solve_type == MANIPULABILITY:
        rows_count, dof = rows.shape[0], q.shape[0]
        poses = np.empty((frames.shape[0] + 1, 4, 4))
        blocks = np.empty((tip_frames.shape[0], 6, dof))
        jacobian = np.empty((rows_count, dof))
        forward_kinematics(frames, frame_links, q, poses)
        task_jacobian(frames, frame_links, poses, tip_frames, rows, row_weights, blocks, jacobian)
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
def _largest_move(q, seed, joints):
    """``max_j |q_j - seed_j|`` [rad or m], joints that turn freely compared at the nearest turn."""
    largest = 0.0
    for j in range(q.shape[0]):
        largest = max(largest, abs(_near(q[j], seed[j], joints[j]) - seed[j]))
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
def search(
    targets, seed, deadline, q_out, norms_out,
    frames, frame_links, tip_frames, rows, row_weights, tolerances, joints,
    feature_spec, feature_scale, table_q, table_features_, table_spacing,
    method, solve_type, min_damping, posture_gains, max_iterations, max_attempts, random_seed,
    max_joint_move,
):  # fmt: skip
    """Levenberg-Marquardt attempts (:func:`lm_attempt`) from restarts until one converges
    (``speed``), or the deadline [ns] or ``max_attempts`` (< 0: unbounded) ends the search; the
    best end by :func:`_score` goes to ``q_out`` (joints that turn freely: the turn nearest the seed) and
    ``norms_out``. Returns (best outcome, iterations, attempts, deadline reached); the outcome is
    ``SEED_NOT_FINITE`` for a seed with NaN or infinity. The seed is clipped into the limits.

    Starts: the seed; with one tip, when the seed's tip pose lies farther from the target than
    the table's typical spacing and a table entry lies nearer, that entry first and the seed next.
    Then the ``TABLE_RESTARTS`` table entries nearest the targets (by :func:`pose_features`), then
    uniform random configurations within the sampling bounds (joints that turn freely: a turn
    around the seed; locked joints at the seed; numba's generator seeded with ``random_seed``).

    No branch flips (``speed`` with ``max_joint_move`` > 0 [rad or m]): a solution whose largest
    joint move from the seed (:func:`_largest_move`) exceeds ``max_joint_move`` does not end the
    search; the restarts then begin around the seed (``NEAR_RESTARTS`` of them, within a box
    that doubles from ``max_joint_move``) and the solution with the smallest largest move among
    the first ``NEAR_CANDIDATES`` found within the budget is returned (ssik's criterion).
    """
    dof, tips = seed.shape[0], tip_frames.shape[0]
    for j in range(dof):
        if not math.isfinite(seed[j]):
            return SEED_NOT_FINITE, 0, 0, False
    clipped = np.empty(dof)
    for j in range(dof):
        clipped[j] = min(max(seed[j], joints[j, LOWER]), joints[j, UPPER])
    seed = clipped
    np.random.seed(random_seed)
    table_size = table_q.shape[0]
    poses = np.empty((frames.shape[0] + 1, 4, 4))
    target_features = np.empty(feature_spec.shape[0])
    seed_features = np.empty(feature_spec.shape[0])
    nearest = np.empty(0, dtype=np.int64)
    next_nearest, pending_seed = 0, False
    start = seed.copy()
    if table_size > 1:
        pose_features(targets, feature_spec, feature_scale, target_features)
    if tips == 1 and table_size > 1:
        tip_poses = np.empty((tips, 4, 4))
        _fk_features(
            frames,
            frame_links,
            tip_frames,
            feature_spec,
            feature_scale,
            seed,
            poses,
            tip_poses,
            seed_features,
        )
        seed_distance = _squared_distance(seed_features, target_features)
        if seed_distance > table_spacing * table_spacing:
            nearest = _nearest_entries(table_features_, target_features)
            if _squared_distance(table_features_[nearest[0]], target_features) < seed_distance:
                for j in range(dof):
                    start[j] = table_q[nearest[0], j]
                next_nearest, pending_seed = 1, True

    norms = np.empty((tips, 2))
    best_rank, best_value, best_outcome = 2.0, 0.0, ITERATIONS
    iterations, attempts, deadline_reached, near_restarts, candidates = 0, 0, False, 0, 0
    while True:
        q = start.copy()
        outcome, used = lm_attempt(
            frames, frame_links, tip_frames, rows, row_weights, tolerances, joints, targets,
            method, min_damping, posture_gains, seed, max_joint_move if solve_type == SPEED else 0.0,
            max_iterations, NO_PRIORITY, deadline, q, norms,
        )  # fmt: skip
        iterations += used
        attempts += 1
        converged = outcome == CONVERGED
        rank, value = _score(
            frames, frame_links, tip_frames, rows, row_weights, joints, q, seed, norms, converged, solve_type
        )
        avoid_flips = converged and solve_type == SPEED and max_joint_move > 0.0
        if avoid_flips:
            value = _largest_move(q, seed, joints)
            candidates += 1
        if rank < best_rank or (rank == best_rank and value < best_value):
            best_rank, best_value, best_outcome = rank, value, outcome
            for j in range(dof):
                q_out[j] = q[j]
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
            for j in range(dof):
                start[j] = seed[j]
            pending_seed = False
            continue
        if solve_type == SPEED and max_joint_move > 0.0 and near_restarts < NEAR_RESTARTS:
            box = min(max_joint_move * 2.0 ** (near_restarts // 2), math.pi)
            for j in range(dof):
                step = box * (2.0 * np.random.random() - 1.0) if joints[j, WEIGHT] > 0.0 else 0.0
                start[j] = min(max(seed[j] + step, joints[j, LOWER]), joints[j, UPPER])
            near_restarts += 1
            continue
        if table_size > 1 and nearest.shape[0] == 0:
            nearest = _nearest_entries(table_features_, target_features)
        if next_nearest < nearest.shape[0]:
            for j in range(dof):
                start[j] = table_q[nearest[next_nearest], j]
            next_nearest += 1
            continue
        for j in range(dof):
            if joints[j, WEIGHT] <= 0.0:
                start[j] = seed[j]
                continue
            low, high = joints[j, SAMPLE_LOWER], joints[j, SAMPLE_UPPER]
            start[j] = low + (high - low) * np.random.random()
            if joints[j, WRAPS] > 0.0:  # a turn around the seed, within the limits
                start[j] = min(max(start[j] + seed[j], joints[j, LOWER]), joints[j, UPPER])
    for j in range(dof):
        q_out[j] = _near(q_out[j], seed[j], joints[j])
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
def search_many(
    targets, seeds, timeout_ns, q_out, norms_out, outcomes,
    frames, frame_links, tip_frames, rows, row_weights, tolerances, joints,
    feature_spec, feature_scale, table_q, table_features_, table_spacing,
    method, solve_type, min_damping, posture_gains, max_iterations, max_attempts, random_seed,
    max_joint_move,
):  # fmt: skip
    """:func:`search` for each of N targets (N, T, 4, 4) from its seed (N, n), in turn, without
    the GIL (:meth:`IKSolver.solve_many` runs slices of a batch on several threads); each
    target's deadline is ``timeout_ns`` after its own start (< 0: none). ``outcomes`` (N,)
    receives each best outcome; the arguments after it are :func:`search`'s."""
    for index in range(targets.shape[0]):
        deadline = NO_DEADLINE if timeout_ns < 0 else monotonic_ns() + timeout_ns
        outcome, _, _, _ = search(
            targets[index], seeds[index], deadline, q_out[index], norms_out[index],
            frames, frame_links, tip_frames, rows, row_weights, tolerances, joints,
            feature_spec, feature_scale, table_q, table_features_, table_spacing,
            method, solve_type, min_damping, posture_gains, max_iterations, max_attempts, random_seed,
            max_joint_move,
        )  # fmt: skip
        outcomes[index] = outcome
