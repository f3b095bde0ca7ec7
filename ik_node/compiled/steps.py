"""One iteration's step of each method (seed 000-004): the damped step with the joint limits inside
the solve (``dls``; ``pinv`` undamped), Buss's Jacobian transpose, seed 004's geometric CCD, and
:func:`method_step`, which picks among them."""

from __future__ import annotations

import math

import numpy as np

from .bundles import (
    CCD,
    CONTACT,
    CONTACT_BUFFER,
    COORDINATES,
    FIRST_ROW,
    FRAME_LINKS,
    FRAMES,
    GRAM,
    IMAGE,
    IN_BASE_AXES,
    LOWER,
    NEAR_COUNT,
    NEAR_PAIRS,
    PAIRS,
    PINNED,
    PINNED_MOTION,
    PINV,
    POSES,
    REMAINING,
    ROWS,
    SOLUTION,
    STEP_WEIGHTS,
    TIP_FRAMES,
    TRANSPOSE,
    UPPER,
    WEIGHT,
)
from .contacts import DISTANCE, MAX_CONTACT_ROWS, contact_records, contact_rows
from .elementary import atan2
from .jit import allocating_kernel, inline_kernel, inner_allocating_kernel, inner_kernel, kernel
from .joints import apply_step, pushes_against_limit
from .linalg import factor_gram, free_step, gram_step, ldl_rank_one, weighted_gram
from .spatial import forward_kinematics, point_jacobian
from .tasks import tip_points

#: Levenberg-Marquardt trust region (dimensionless): damping factor at the start of an attempt,
#: its factor after a kept step, its floor, and the ceiling at which the attempt is stuck.
MU_INITIAL, MU_DOWN, MU_MIN, MU_MAX = 0.1, 1.0 / 3.0, 1e-4, 1e6
#: A near collision pair may close at most this share of its distance in one step (the velocity
#: damper of :func:`constrained_step`).
CLOSING = 0.5
#: ``pinv``'s regularisation [m^2 or rad^2] (numerical only: the step is undamped).
PINV_DAMPING = 1e-12


@kernel
def limited_step(jacobian, error, joints, coordinates, q, damping, min_damping2, primary_rows, work, step):
    """The damped step with the joint limits inside the solve (into ``step``; ``work``:
    :func:`step_workspace`).

    Joints the free step pushes past a limit get a selection row (a one in the joint's column,
    the distance to that limit as its error) stacked under the task and solved exactly: the joint
    is pinned at its limit and the task error its motion leaves is handed to the other joints
    (``e' = e - J dq_pinned``, the pinned joints' weights set to 0); twice at most. (The posture
    term is not part of the step: :func:`posture_refinement` runs once the task has converged.)
    Without priority ``J W J^T + lambda^2 I`` is made and factored once a step: a pinned joint
    ``j`` is taken out of the factors by a rank-one downdate by ``-w_j J_j J_j^T``
    (:func:`~ik_node.compiled.linalg.ldl_rank_one`, ``m^2`` operations) rather than the matrix
    made and factored again (a humanoid's 30 x 36: ~11 us each time; its steps pin joints in most
    iterations); where a downdate refuses (an indefinite result to working precision), the
    matrix is made anew with the joints pinned so far."""
    remaining, weights, gram = work[REMAINING], work[STEP_WEIGHTS], work[GRAM]
    pinned_motion, pinned, column = work[PINNED_MOTION], work[PINNED], work[IMAGE]  # (column: J_j)
    rows, dof = jacobian.shape
    factors_kept = primary_rows == 0  # (with priority: free_step's two inverses, made each round)
    for j in range(dof):
        weights[j] = joints[j, WEIGHT]
        pinned_motion[j] = 0.0
        pinned[j] = False
    factored = False
    if factors_kept:
        factored = _step_from_factors(jacobian, error, weights, damping, factored, work, step)
    else:
        free_step(jacobian, error, weights, damping, min_damping2, primary_rows, work, step)
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
                if factored:
                    for r in range(rows):
                        column[r] = jacobian[r, j]
                    factored = ldl_rank_one(gram, rows, column, -weights[j])
                weights[j] = 0.0
        if not violating:
            break
        for r in range(rows):
            value = error[r]
            for j in range(dof):
                value -= jacobian[r, j] * pinned_motion[j]
            remaining[r] = value
        if factors_kept:
            factored = _step_from_factors(jacobian, remaining, weights, damping, factored, work, step)
        else:
            free_step(jacobian, remaining, weights, damping, min_damping2, primary_rows, work, step)
        for j in range(dof):
            step[j] += pinned_motion[j]


@inline_kernel
def _step_from_factors(jacobian, error, weights, damping, factored, work, step):
    """The damped step of every row for ``error`` (into ``step``) from the factors of ``J W J^T +
    lambda^2 I`` in ``work[GRAM]`` (``factored``), or, where there are none, from the matrix made
    and factored anew with ``weights``. Returns whether the factors are there (False: the matrix
    was refused, the step 0). Inlined at its two call sites: ``factored`` is a literal at the
    first, a variable at the second (two compiled signatures otherwise)."""
    rows, gram = jacobian.shape[0], work[GRAM]
    if not factored:
        weighted_gram(jacobian, weights, FIRST_ROW, rows, gram, step)
        factored = factor_gram(gram, damping, rows)
    gram_step(jacobian, error, weights, FIRST_ROW, rows, gram, factored, work[SOLUTION], step)
    return factored


@inner_allocating_kernel
def constraint_workspace(collision, rows, dof):
    """Work space of :func:`constrained_step` for ``rows`` task rows and ``dof`` joints, made once
    per attempt, one buffer (empty without pairs): the near pairs' rows (K, nv), point Jacobians
    (2, 6, nv), the stacked Jacobian (K + m, nv) and error (K + m,), K the near pairs kept. (The
    stacked solve uses the attempt's :func:`step_workspace`, made for K + m rows.)"""
    if collision is None:
        return np.empty(0)
    kept = min(MAX_CONTACT_ROWS, collision[PAIRS].shape[0])
    if kept == 0:
        return np.empty(0)
    return np.empty(kept * dof + 12 * dof + (kept + rows) * (dof + 1))


@kernel
def constrained_step(
    tree,
    collision,
    jacobian,
    error,
    joints,
    q,
    damping,
    min_damping2,
    primary_rows,
    work,
    space,
    constraint,
    step,
):
    """:func:`limited_step` with the collision pairs inside the solve (into ``step``): the near
    pairs that ``space`` (the evaluation at ``q``) holds (nearer than the margin), whose distance
    the step would close by more than ``CLOSING`` of itself (``d + row dq < (1 - CLOSING) d``,
    ``row`` from :func:`~ik_node.compiled.contacts.contact_rows`: a velocity damper, Faverjon &
    Tournassoud 1987, with the safety distance 0), are stacked above the task as primary rows with
    error ``-CLOSING d`` and the step solved again (:func:`~ik_node.compiled.linalg.free_step`'s
    task priority, the task rows as secondary, the joint limits as ever): the pair may approach,
    ever more slowly, but not cross; a pair in collision (``d < 0``) is pushed out by that share
    of its depth; the task error the pair's motion leaves is handed to the other directions, as
    :func:`limited_step` pins a joint at a limit.
    ``constraint``: :func:`constraint_workspace`; ``work``: :func:`step_workspace` for K + m rows."""
    coordinates = tree[COORDINATES]
    limited_step(jacobian, error, joints, coordinates, q, damping, min_damping2, primary_rows, work, step)
    contact = space[CONTACT]
    count = int(contact[CONTACT_BUFFER][NEAR_COUNT])
    if count == 0:
        return
    rows, dof = jacobian.shape
    kept = contact[NEAR_PAIRS].shape[0]
    pair_rows = constraint[: kept * dof].reshape((kept, dof))
    at = kept * dof
    blocks = constraint[at : at + 12 * dof].reshape((2, 6, dof))
    at += 12 * dof
    stacked = constraint[at : at + (kept + rows) * dof].reshape((kept + rows, dof))
    at += (kept + rows) * dof
    stacked_error = constraint[at : at + kept + rows]
    contact_rows(tree, collision, space[POSES], contact, blocks, pair_rows)
    records = contact_records(collision, contact)
    active = 0
    for c in range(count):
        distance = records[c, DISTANCE]
        floor = (1.0 - CLOSING) * distance
        predicted = distance
        for j in range(dof):
            predicted += pair_rows[c, j] * step[j]
        if predicted < floor:
            for j in range(dof):
                stacked[active, j] = pair_rows[c, j]
            stacked_error[active] = floor - distance
            active += 1
    if active == 0:
        return
    for r in range(rows):
        for j in range(dof):
            stacked[active + r, j] = jacobian[r, j]
        stacked_error[active + r] = error[r]
    limited_step(
        stacked[: active + rows],
        stacked_error[: active + rows],
        joints,
        coordinates,
        q,
        damping,
        min_damping2,
        active + primary_rows,
        work,
        step,
    )


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
        if pushes_against_limit(q, coordinates, joints, j, step[j]):
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


@inner_kernel
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


@allocating_kernel
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
    frames, frame_links = tree[FRAMES], tree[FRAME_LINKS]
    rows = task[ROWS]
    tips, dof = task[TIP_FRAMES].shape[0], joints.shape[0]
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
            point_jacobian(
                frames, frame_links, poses, task[TIP_FRAMES][tip], points[tip], IN_BASE_AXES, blocks[tip]
            )
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
            move[j] = atan2(sum_cross, sum_dot) / rate  # (rate: a mimic multiplier's size)
        elif weight_sum > 0.0:
            move[j] = linear_sum / weight_sum
        if move[j] != 0.0:
            apply_step(tree, joints, candidate, move, candidate)
            move[j] = 0.0


@inline_kernel
def method_step(
    method,
    tree,
    task,
    collision,
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
    space,
    constraint,
    step,
    candidate,
):
    """The candidate of one iteration of ``method`` from ``q`` (into ``candidate``), given the
    task Jacobian and error at ``q`` (``space``: its evaluation), the cost ``E = e^T e / 2`` and
    the trust-region factor ``mu``:

    * ``dls`` (``method=None``, a feature switch: only this step is compiled): the damped step
      within the joint limits (:func:`limited_step`; with ``collision``, :func:`constrained_step`:
      the near collision pairs inside the solve too) with ``lambda^2 = lambda_min^2 + mu E``
      (Sugihara 2011: large far from the goal or near a singularity, vanishing as the error does);
    * ``pinv``: the undamped pseudo-inverse ``J^+ e`` (``lambda^2 = PINV_DAMPING``, limit and
      collision rows as ``dls``), scaled by ``min(1, MU_INITIAL / mu)`` (the trust region as a
      step length);
    * ``transpose``: :func:`transpose_step`, scaled the same way;
    * ``ccd``: one :func:`ccd_sweep`.

    Every step is applied on the manifold with the 1-DOF joints clipped (:func:`apply_step`).
    (``transpose`` and ``ccd`` have no collision rows; :func:`~ik_node.compiled.attempt.
    run_attempt` refuses their candidates that collide more.)"""
    if method is not None and method == CCD:
        ccd_sweep(tree, task, joints, targets, q, candidate)
        return
    coordinates = tree[COORDINATES]
    if method is not None and method == TRANSPOSE:
        transpose_step(jacobian, error, joints, coordinates, q, step)
    else:
        damping, floor = min_damping2 + mu * cost, min_damping2
        if method is not None and method == PINV:
            damping, floor = PINV_DAMPING, PINV_DAMPING
        if collision is None:
            limited_step(jacobian, error, joints, coordinates, q, damping, floor, primary_rows, work, step)
        elif collision[PAIRS].shape[0] == 0:  # (no collision pairs: not even the call)
            limited_step(jacobian, error, joints, coordinates, q, damping, floor, primary_rows, work, step)
        else:
            constrained_step(
                tree,
                collision,
                jacobian,
                error,
                joints,
                q,
                damping,
                floor,
                primary_rows,
                work,
                space,
                constraint,
                step,
            )
    if method is not None and mu > MU_INITIAL:
        for j in range(step.shape[0]):
            step[j] *= MU_INITIAL / mu
    apply_step(tree, joints, q, step, candidate)
