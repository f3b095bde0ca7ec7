"""The set of IK solutions a target has inside the limits, from candidate configurations, compiled.

What ``IKSolver.solve_all`` makes of the branches the decompositions (:mod:`.decompositions`) or a
search found: each candidate's FK error against the target, the distinct ones that reach it (else,
the target being out of reach, the least-squares ones), every ``θ + 2πk`` of their revolute
joints inside the limits, nearest a seed first. Units: rad, m; configurations in the solver's
joint order; poses ``T_base_point`` (4x4) in the base frame.
"""

from __future__ import annotations

import math

import numpy as np

from .bundles import MAX_TARGET_DISTANCE, ORTHONORMAL_TOLERANCE, SEED_NOT_FINITE, TARGET_NOT_USABLE
from .decompositions import MAX_BRANCHES, as_solved, branches_of
from .jit import allocating_kernel, inline_allocating_kernel, inline_kernel, kernel
from .spatial import forward_kinematics, point_pose
from .subproblems import FREE, LEAST_SQUARES
from .tasks import POSE_OK, check_poses

__all__ = [
    "DUPLICATE_TOLERANCE",
    "LIMIT_SLACK",
    "SET_MADE",
    "branch_configurations",
    "closed_form_set",
    "pose_error",
    "solution_set",
]

#: Two solutions closer than this in every joint [rad, m] (revolute joints modulo 2π) are one.
DUPLICATE_TOLERANCE = 1e-6
#: Slack [rad] on the limits when fitting a solution into them (the kernels' rounding).
LIMIT_SLACK = 1e-9
TWO_PI = 2.0 * math.pi
#: :func:`closed_form_set` made the set (else it says which input it refused).
SET_MADE = 0


@kernel
def _column_dot(a, i, b, j):
    """``(Aᵀ B)_ij`` over the rotation blocks of 4x4 poses ``a`` and ``b``."""
    return a[0, i] * b[0, j] + a[1, i] * b[1, j] + a[2, i] * b[2, j]


@kernel
def pose_error(reached, target):
    """``(‖p − p_d‖ [m], angle of Rᵀ R_d [rad])`` of pose ``reached`` from ``target`` (4x4 each):
    the angle as ``atan2(‖vee(E − Eᵀ)‖ / 2, (tr E − 1) / 2)`` with ``E = Rᵀ R_d`` (precise near 0,
    unlike ``acos``; the rotation angle of Lynch & Park Sec. 3.2.3.3)."""
    dx, dy, dz = reached[0, 3] - target[0, 3], reached[1, 3] - target[1, 3], reached[2, 3] - target[2, 3]
    sx = _column_dot(reached, 2, target, 1) - _column_dot(reached, 1, target, 2)
    sy = _column_dot(reached, 0, target, 2) - _column_dot(reached, 2, target, 0)
    sz = _column_dot(reached, 1, target, 0) - _column_dot(reached, 0, target, 1)
    trace = 0.0
    for i in range(3):
        trace += _column_dot(reached, i, target, i)
    angle = math.atan2(0.5 * math.sqrt(sx * sx + sy * sy + sz * sz), 0.5 * (trace - 1.0))
    return math.sqrt(dx * dx + dy * dy + dz * dz), angle


@inline_kernel
def wrapped_angle(angle):
    """``angle`` [rad] moved by a multiple of 2π into [−π, π): ``θ − 2π ⌊(θ + π) / 2π⌋`` (Python's
    ``(θ + π) % 2π − π``, without numba's call of its ``fmod`` helper: 8 % of ``solve_all``)."""
    return angle - TWO_PI * math.floor((angle + math.pi) / TWO_PI)


@kernel
def _largest_gap(a, b, periodic):
    """The largest joint difference between configurations ``a`` and ``b``, revolute joints
    (``periodic``) modulo 2π."""
    largest = 0.0
    for j in range(a.shape[0]):
        gap = a[j] - b[j]
        if periodic[j]:
            gap = wrapped_angle(gap)
        largest = max(largest, abs(gap))
    return largest


@inline_allocating_kernel
def solution_set(
    frames, frame_links, tip_frame, point_offset, target, candidates, status, tolerances,
    lower, upper, periodic, continuous, seed, weights,
):  # fmt: skip
    """The solutions among ``candidates`` (k, n), in five steps: (1) each one's FK error (k, 2)
    at the point ``point_offset`` (3,) [m] of frame ``tip_frame`` (:func:`pose_error`); (2) those
    within ``tolerances`` (position [m], orientation [rad]), or where none is, the ones whose
    ``status`` has the least-squares bit; (3) distinct ones (:data:`DUPLICATE_TOLERANCE`,
    revolute joints modulo 2π); (4) for each, every variant inside the limits: ``θ + 2πk`` for a
    bounded revolute joint (``periodic`` and not ``continuous``; all ks that fit, clipped within
    :data:`LIMIT_SLACK`), one value of a continuous joint (the nearest ``seed``'s; pass zeros for
    none), other joints as they are; (5) ordered by the weighted distance ``Σ w_j (q_j − s_j)²``
    from ``seed`` when ``weights`` is not all zero (stable). Returns ``(q (m, n), origin (m,):
    the candidate each came from, errors (k, 2), whether any candidate reached the target)``."""
    count, n = candidates.shape
    poses = np.empty((frames.shape[0] + 1, 4, 4))
    point = np.empty((4, 4))
    errors = np.empty((count, 2))
    reached = np.zeros(count, dtype=np.bool_)
    for c in range(count):
        forward_kinematics(frames, frame_links, candidates[c], poses)
        point_pose(poses, tip_frame, point_offset, point)
        errors[c, 0], errors[c, 1] = pose_error(point, target)
        reached[c] = errors[c, 0] <= tolerances[0] and errors[c, 1] <= tolerances[1]
    success = reached.any()
    picked = np.empty(count, dtype=np.int64)
    kept = 0
    for c in range(count):
        if not (reached[c] if success else (status[c] & LEAST_SQUARES) != 0):
            continue
        duplicate = False
        for other in range(kept):
            if _largest_gap(candidates[c], candidates[picked[other]], periodic) <= DUPLICATE_TOLERANCE:
                duplicate = True
                break
        if not duplicate:
            picked[kept] = c
            kept += 1
    picked = picked[:kept]
    shifted, choices, variants = _fitted_choices(candidates, picked, lower, upper, periodic, continuous, seed)
    q, origin = _variants(shifted, choices, variants, picked, lower, upper, periodic, continuous)
    if np.any(weights != 0.0) and q.shape[0] > 1:
        distance = np.zeros(q.shape[0])
        for row in range(q.shape[0]):
            for j in range(n):
                distance[row] += weights[j] * (q[row, j] - seed[j]) ** 2
        order = np.argsort(distance, kind="mergesort")
        return q[order], origin[order], errors, success
    return q, origin, errors, success


@allocating_kernel
def _fitted_choices(candidates, picked, lower, upper, periodic, continuous, seed):
    """Per picked candidate and joint: the value with a continuous joint moved nearest the seed
    and a bounded revolute one moved to its lowest ``θ + 2πk`` inside the limits (``shifted``),
    how many values ``θ + 2πk`` fit (``choices``: 1 for the others), and the variants per row."""
    rows, n = picked.shape[0], candidates.shape[1]
    shifted = np.empty((rows, n))
    choices = np.ones((rows, n), dtype=np.int64)
    variants = np.ones(rows, dtype=np.int64)
    for r in range(rows):
        for j in range(n):
            value = candidates[picked[r], j]
            if periodic[j] and continuous[j]:
                value -= TWO_PI * math.floor((value - seed[j]) / TWO_PI + 0.5)
            elif periodic[j]:
                first = math.ceil((lower[j] - LIMIT_SLACK - value) / TWO_PI)
                last = math.floor((upper[j] + LIMIT_SLACK - value) / TWO_PI)
                choices[r, j] = max(last - first + 1, 0)
                value += TWO_PI * first
            shifted[r, j] = value
            variants[r] *= choices[r, j]
    return shifted, choices, variants


@allocating_kernel
def _variants(shifted, choices, variants, picked, lower, upper, periodic, continuous):
    """Every variant of each row: ``shifted + 2π digit`` per joint, the digits counting in mixed
    radix ``choices`` (an odometer, the last joint fastest: no integer division per value),
    bounded revolute joints clipped into the limits. Returns the variants (m, n) and the
    candidate each came from (m,)."""
    rows, n = shifted.shape
    q = np.empty((variants.sum(), n))
    origin = np.empty(variants.sum(), dtype=np.int64)
    digits = np.empty(n, dtype=np.int64)
    index = 0
    for r in range(rows):
        digits[:] = 0
        for _ in range(variants[r]):
            for j in range(n):
                value = shifted[r, j] + TWO_PI * digits[j]
                if periodic[j] and not continuous[j]:
                    value = min(max(value, lower[j]), upper[j])
                q[index, j] = value
            origin[index] = picked[r]
            index += 1
            j = n - 1  # (the next variant: the last digit up, carried leftwards)
            while j >= 0 and digits[j] + 1 == choices[r, j]:
                digits[j] = 0
                j -= 1
            if j >= 0:
                digits[j] += 1
    return q, origin


@inline_allocating_kernel
def branch_configurations(angles, count, reference, joints):
    """Full configurations (count, n) of the first ``count`` branches ``angles`` (8, 6) of a
    decomposition: ``reference`` (n,) with joints ``joints`` (6,) moved by the branch's angles
    wrapped into [−π, π) [rad]."""
    q = np.empty((count, reference.shape[0]))
    for r in range(count):
        for j in range(reference.shape[0]):
            q[r, j] = reference[j]
        for i in range(joints.shape[0]):
            q[r, joints[i]] += wrapped_angle(angles[r, i])
    return q


@allocating_kernel
def closed_form_set(
    targets, seed, seeded, kind, inverted, axes, offsets, tool_rotation, reference, joints, frames,
    frame_links, tip_frame, point_offset, tolerances, lower, upper, periodic, continuous, weights,
):  # fmt: skip
    """The solutions of an exactly decomposable chain for ``targets[0]`` ((1, 4, 4),
    ``T_base_point``) in one call from Python (a call and its arguments cost more than the
    decomposition): the target checked (:func:`~.tasks.check_poses`); where ``seeded``, the
    ``seed`` (n,) checked (finite) and clipped into the limits; decomposition ``kind``
    (:data:`~.decompositions.DECOMPOSITION_CODES`; for an ``inverted`` chain, of the target's
    inverse) with the arguments of :class:`~ik_node.solver.closed_form.ClosedForm` (``axes``,
    ``offsets``, ``tool_rotation``, ``reference`` (n,), ``joints`` (6,)), a singularity's free
    joint at the seed's value (else the reference's); :func:`branch_configurations` and their
    :func:`solution_set` (ordered nearest the seed in ``Σ w_j (q_j − s_j)²`` where ``seeded``).
    Returns ``(problem, q (m, n), branch (m,), position_error (m,) [m], orientation_error (m,)
    [rad], success, singular)``: ``problem`` is :data:`SET_MADE`, or
    :data:`~.bundles.TARGET_NOT_USABLE` / :data:`~.bundles.SEED_NOT_FINITE` (then nothing is
    solved); per solution the choice of roots of the branch it came from and that branch's
    errors; ``singular``: one came from a branch with a free joint."""
    n = reference.shape[0]
    problem = SET_MADE
    if check_poses(targets, MAX_TARGET_DISTANCE, ORTHONORMAL_TOLERANCE) != POSE_OK:
        problem = TARGET_NOT_USABLE
    near, order, hint = np.zeros(n), np.zeros(n), np.zeros(6)
    if seeded:
        for j in range(n):
            if problem == SET_MADE and not math.isfinite(seed[j]):
                problem = SEED_NOT_FINITE  # (after the target's problem, if any)
            near[j] = min(max(seed[j], lower[j]), upper[j])
            order[j] = weights[j]
        for i in range(6):
            hint[i] = near[joints[i]] - reference[joints[i]]
    if problem != SET_MADE:
        nothing = np.empty(0)
        return problem, np.empty((0, n)), np.empty(0, np.int64), nothing, nothing, False, False
    target, solved = targets[0], np.empty((4, 4))
    as_solved(target, inverted, solved)
    angles = np.empty((MAX_BRANCHES, 6))
    status, branch = np.empty(MAX_BRANCHES, dtype=np.int64), np.empty(MAX_BRANCHES, dtype=np.int64)
    count = branches_of(kind, axes, offsets, tool_rotation, solved, hint, angles, status, branch)
    candidates = branch_configurations(angles, count, reference, joints)
    q, origin, errors, success = solution_set(
        frames, frame_links, tip_frame, point_offset, target, candidates, status[:count], tolerances, lower,
        upper, periodic, continuous, near, order,
    )  # fmt: skip
    singular = False
    for row in range(origin.shape[0]):
        singular |= (status[origin[row]] & FREE) != 0
    return SET_MADE, q, branch[origin], errors[origin, 0], errors[origin, 1], success, singular
