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
from .context import new_closed_form_context
from .decompositions import MAX_BRANCHES, as_solved, branches_of
from .elementary import atan2
from .jit import allocating_kernel, inline_kernel, inner_allocating_kernel, inner_kernel, kernel
from .spatial import first_moved_frame, forward_kinematics, forward_kinematics_from, point_pose
from .subproblems import FREE, LEAST_SQUARES
from .tasks import POSE_OK, check_poses

__all__ = [
    "BRANCH",
    "DUPLICATE_TOLERANCE",
    "LIMIT_SLACK",
    "MORE_ROWS",
    "ORIENTATION_ERROR",
    "POSITION_ERROR",
    "SET_COLUMNS",
    "SET_MADE",
    "branch_configurations",
    "closed_form_context",
    "closed_form_set",
    "pose_error",
    "solution_set",
    "write_branch_configurations",
]

#: Two solutions closer than this in every joint [rad, m] (revolute joints modulo 2π) are one.
DUPLICATE_TOLERANCE = 1e-6
#: Slack [rad] on the limits when fitting a solution into them (the kernels' rounding).
LIMIT_SLACK = 1e-9
TWO_PI = 2.0 * math.pi
#: :func:`closed_form_set` made the set (else it says which input it refused, or
#: :data:`MORE_ROWS`).
SET_MADE = 0
#: :func:`closed_form_set`'s ``out`` has fewer rows than the set's solutions (nothing written).
MORE_ROWS = 1
#: Columns of :func:`closed_form_set`'s rows after the n joint values: the position error [m],
#: the orientation error [rad], the branch's choice of roots.
POSITION_ERROR, ORIENTATION_ERROR, BRANCH = 0, 1, 2
SET_COLUMNS = 3


@inner_kernel
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
    angle = atan2(0.5 * math.sqrt(sx * sx + sy * sy + sz * sz), 0.5 * (trace - 1.0))
    return math.sqrt(dx * dx + dy * dy + dz * dz), angle


@inline_kernel
def wrapped_angle(angle):
    """``angle`` [rad] moved by a multiple of 2π into [−π, π): ``θ − 2π ⌊(θ + π) / 2π⌋`` (Python's
    ``(θ + π) % 2π − π``, without numba's call of its ``fmod`` helper: 8 % of ``solve_all``)."""
    return angle - TWO_PI * math.floor((angle + math.pi) / TWO_PI)


@inner_kernel
def _same_solution(a, b, periodic):
    """Whether configurations ``a`` and ``b`` differ by at most :data:`DUPLICATE_TOLERANCE` in
    every joint, revolute joints (``periodic``) modulo 2π; from the first joint that differs
    (distinct branches mostly differ in their first joints)."""
    for j in range(a.shape[0]):
        gap = a[j] - b[j]
        if abs(gap) > DUPLICATE_TOLERANCE and not (
            periodic[j] and abs(wrapped_angle(gap)) <= DUPLICATE_TOLERANCE
        ):
            return False
    return True


@inner_kernel
def _checked_candidates(
    frames, frame_links, tip_frame, point_offset, target, candidates, count, status, tolerances, periodic,
    poses, point, errors, reached, picked,
):  # fmt: skip
    """Steps (1)-(3) of :func:`solution_set` over the first ``count`` rows of ``candidates``:
    each one's FK error into ``errors`` (rows, 2) and whether it reaches the target into
    ``reached``; the distinct ones among those that reach it (else the least-squares ones) into
    ``picked``. ``poses`` (F + 1, 4, 4) and ``point`` (4, 4) are work arrays. Returns ``(kept,
    whether any candidate reached the target)``."""
    success = False
    for c in range(count):
        if c == 0:
            forward_kinematics(frames, frame_links, candidates[c], poses)
        else:  # (only the frames after the first joint that moved: branches share their first joints)
            first = first_moved_frame(frame_links, candidates[c], candidates[c - 1])
            forward_kinematics_from(frames, frame_links, candidates[c], poses, first)
        point_pose(poses, tip_frame, point_offset, point)
        errors[c, 0], errors[c, 1] = pose_error(point, target)
        reached[c] = errors[c, 0] <= tolerances[0] and errors[c, 1] <= tolerances[1]
        success |= reached[c]
    kept = 0
    for c in range(count):
        if not (reached[c] if success else (status[c] & LEAST_SQUARES) != 0):
            continue
        duplicate = False
        for other in range(kept):
            if _same_solution(candidates[c], candidates[picked[other]], periodic):
                duplicate = True
                break
        if not duplicate:
            picked[kept] = c
            kept += 1
    return kept, success


@inner_kernel
def _fitted_choices(
    candidates, picked, kept, lower, upper, periodic, continuous, seed, shifted, choices, variants
):
    """Step (4)'s count, per picked candidate (the first ``kept`` of ``picked``) and joint: the
    value with a continuous joint moved nearest the seed and a bounded revolute one moved to its
    lowest ``θ + 2πk`` inside the limits (into ``shifted``), how many values ``θ + 2πk`` fit
    (``choices``: 1 for the others), and the variants per row (``variants``). Returns the number
    of variants in all."""
    n = candidates.shape[1]
    total = 0
    for r in range(kept):
        variants[r] = 1
        for j in range(n):
            value = candidates[picked[r], j]
            choices[r, j] = 1
            if periodic[j] and continuous[j]:
                value -= TWO_PI * math.floor((value - seed[j]) / TWO_PI + 0.5)
            elif periodic[j]:
                first = math.ceil((lower[j] - LIMIT_SLACK - value) / TWO_PI)
                last = math.floor((upper[j] + LIMIT_SLACK - value) / TWO_PI)
                choices[r, j] = max(last - first + 1, 0)
                value += TWO_PI * first
            shifted[r, j] = value
            variants[r] *= choices[r, j]
        total += variants[r]
    return total


@inner_kernel
def _write_variants(
    shifted, choices, variants, picked, kept, lower, upper, periodic, continuous, digits, out
):
    """Step (4): every variant of the first ``kept`` rows into the rows of ``out`` (≥ n + 1
    columns): ``shifted + 2π digit`` per joint in its first n columns, the digits counting in
    mixed radix ``choices`` (an odometer, the last joint fastest: no integer division per value),
    bounded revolute joints clipped into the limits; the candidate each came from (``picked``)
    in column n. ``digits`` (n,) is a work array."""
    n = shifted.shape[1]
    index = 0
    for r in range(kept):
        for j in range(n):
            digits[j] = 0
        for _ in range(variants[r]):
            for j in range(n):
                value = shifted[r, j] + TWO_PI * digits[j]
                if periodic[j] and not continuous[j]:
                    value = min(max(value, lower[j]), upper[j])
                out[index, j] = value
            out[index, n] = picked[r]
            index += 1
            j = n - 1  # (the next variant: the last digit up, carried leftwards)
            while j >= 0 and digits[j] + 1 == choices[r, j]:
                digits[j] = 0
                j -= 1
            if j >= 0:
                digits[j] += 1


#: Up to this many rows, :func:`_order_by_distance` sorts in place (insertion, no work arrays:
#: limits of ±π or less give up to 8 solutions, more only where a joint sits at ±π, both ends);
#: more (joints of ±2π: up to 8 × 2⁶) by a merge sort of their distances.
IN_PLACE_ROWS = 16


@inline_kernel
def _distance(out, row, seed, weights):
    """``Σ w_j (q_j − s_j)²`` of row ``row`` of ``out`` (its first n columns a configuration)."""
    total = 0.0
    for j in range(seed.shape[0]):
        total += weights[j] * (out[row, j] - seed[j]) ** 2
    return total


@inner_allocating_kernel
def _order_by_distance(out, rows, seed, weights):
    """Step (5): the first ``rows`` rows of ``out`` (their first n columns a configuration)
    ordered by the weighted distance ``Σ w_j (q_j − s_j)²`` from ``seed`` (n,), stable, whole
    rows moved; as they are when ``weights`` is all zero. Up to :data:`IN_PLACE_ROWS` rows by
    insertion (each row moved up past the rows farther than it), more by a merge sort."""
    n = seed.shape[0]
    weighted = False
    for j in range(n):
        weighted |= weights[j] != 0.0
    if not weighted or rows < 2:
        return
    if rows <= IN_PLACE_ROWS:
        for row in range(1, rows):
            distance = _distance(out, row, seed, weights)
            place = row
            while place > 0 and _distance(out, place - 1, seed, weights) > distance:
                place -= 1
            if place == row:
                continue
            for column in range(out.shape[1]):
                moved = out[row, column]
                for shifted in range(row, place, -1):
                    out[shifted, column] = out[shifted - 1, column]
                out[place, column] = moved
        return
    distances = np.empty(rows)
    for row in range(rows):
        distances[row] = _distance(out, row, seed, weights)
    order = np.argsort(distances, kind="mergesort")
    unordered = out[:rows].copy()
    for row in range(rows):
        for column in range(out.shape[1]):
            out[row, column] = unordered[order[row], column]


@allocating_kernel
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
    the candidate each came from, errors (k, 2), whether any candidate reached the target)``.
    (:func:`closed_form_set` takes the same steps in its context's work arrays.)"""
    count, n = candidates.shape
    poses, point, errors = np.empty((frames.shape[0] + 1, 4, 4)), np.empty((4, 4)), np.empty((count, 2))
    reached, picked = np.empty(count, dtype=np.bool_), np.empty(count, dtype=np.int64)
    kept, success = _checked_candidates(
        frames, frame_links, tip_frame, point_offset, target, candidates, count, status, tolerances, periodic,
        poses, point, errors, reached, picked,
    )  # fmt: skip
    shifted, choices, variants = (
        np.empty((count, n)),
        np.empty((count, n), np.int64),
        np.empty(count, np.int64),
    )
    rows = _fitted_choices(
        candidates, picked, kept, lower, upper, periodic, continuous, seed, shifted, choices, variants
    )
    out = np.empty((rows, n + 1))
    digits = np.empty(n, dtype=np.int64)
    _write_variants(shifted, choices, variants, picked, kept, lower, upper, periodic, continuous, digits, out)
    _order_by_distance(out, rows, seed, weights)
    q = np.empty((rows, n))
    origin = np.empty(rows, dtype=np.int64)
    for row in range(rows):
        for j in range(n):
            q[row, j] = out[row, j]
        origin[row] = int(out[row, n])
    return q, origin, errors, success


@inner_kernel
def write_branch_configurations(angles, count, reference, joints, q):
    """Full configurations (count, n) into ``q`` of the first ``count`` branches ``angles``
    (8, 6) of a decomposition: ``reference`` (n,) with joints ``joints`` (6,) moved by the
    branch's angles wrapped into [−π, π) [rad]."""
    for r in range(count):
        for j in range(reference.shape[0]):
            q[r, j] = reference[j]
        for i in range(joints.shape[0]):
            q[r, joints[i]] += wrapped_angle(angles[r, i])


@allocating_kernel
def branch_configurations(angles, count, reference, joints):
    """:func:`write_branch_configurations` into a new array (count, n)."""
    q = np.empty((count, reference.shape[0]))
    write_branch_configurations(angles, count, reference, joints, q)
    return q


@allocating_kernel
def closed_form_context(
    kind, inverted, axes, offsets, tool_rotation, reference, joints, frames, frame_links, tip_frame,
    point_offset, tolerances, lower, upper, periodic, continuous, weights,
):  # fmt: skip
    """The :mod:`~.context` record :func:`closed_form_set` takes, made once per solver (and set
    of locked joints): ``decomposition``, decomposition ``kind``
    (:data:`~.decompositions.DECOMPOSITION_CODES`; for an ``inverted`` chain, of the target's
    inverse) with the arguments of :class:`~ik_node.solver.closed_form.ClosedForm` (``axes``,
    ``offsets``, ``tool_rotation``, ``reference`` (n,), ``joints`` (6,)); ``check``, the FK
    check's tree ``frames``, ``frame_links``, ``tip_frame``, ``point_offset`` (3,) [m] and
    ``tolerances`` (position [m], orientation [rad]); ``limits``, ``lower``, ``upper``,
    ``periodic``, ``continuous`` and the metric's ``weights`` (n,); and the work arrays of one
    call."""
    n = reference.shape[0]
    workspace = (
        np.zeros(n), np.zeros(n), np.zeros(6), np.empty((4, 4)), np.empty((MAX_BRANCHES, 6)),
        np.empty(MAX_BRANCHES, np.int64), np.empty(MAX_BRANCHES, np.int64), np.empty((MAX_BRANCHES, n)),
        np.empty((frames.shape[0] + 1, 4, 4)), np.empty((4, 4)), np.empty((MAX_BRANCHES, 2)),
        np.empty(MAX_BRANCHES, np.bool_), np.empty(MAX_BRANCHES, np.int64), np.empty((MAX_BRANCHES, n)),
        np.empty((MAX_BRANCHES, n), np.int64), np.empty(MAX_BRANCHES, np.int64), np.empty(n, np.int64),
    )  # fmt: skip
    return new_closed_form_context(
        (kind, inverted, axes, offsets, tool_rotation, reference, joints),
        (frames, frame_links, tip_frame, point_offset, tolerances),
        (lower, upper, periodic, continuous, weights),
        workspace,
    )


@allocating_kernel
def closed_form_set(context, target, seed, seeded, out):
    """The solutions of an exactly decomposable chain for ``target`` (4x4, ``T_base_point``) in
    one call from Python (a call, its arguments and the arrays it returns cost more than the
    decomposition), in ``context`` (:func:`closed_form_context`): the target checked
    (:func:`~.tasks.check_poses`); where ``seeded``, the ``seed`` (n,) checked (finite) and
    clipped into the limits; every branch of the decomposition (a singularity's free joint at the
    seed's value, else the reference's), their configurations and :func:`solution_set`'s steps
    (ordered nearest the seed in ``Σ w_j (q_j − s_j)²`` where ``seeded``), written into the rows
    of ``out`` (≥ n + 3 columns): per solution its n joint values, the position error [m] and
    orientation error [rad] of the branch it came from, and that branch's choice of roots.

    Returns ``(problem, rows, success, singular)``: ``problem`` is :data:`SET_MADE`,
    :data:`MORE_ROWS` (``out`` has fewer rows than the ``rows`` solutions: nothing written, call
    again with enough), or :data:`~.bundles.TARGET_NOT_USABLE` / :data:`~.bundles.SEED_NOT_FINITE`
    (then nothing is solved); ``singular``: a solution came from a branch with a free joint."""
    kind, inverted, axes, offsets, tool_rotation, reference, joints = context.decomposition
    frames, frame_links, tip_frame, point_offset, tolerances = context.check
    lower, upper, periodic, continuous, weights = context.limits
    (
        near, order, hint, solved, angles, status, branch, candidates, poses, point, errors, reached, picked,
        shifted, choices, variants, digits,
    ) = context.workspace  # fmt: skip
    n = reference.shape[0]
    problem = SET_MADE
    if check_poses(target.reshape((1, 4, 4)), MAX_TARGET_DISTANCE, ORTHONORMAL_TOLERANCE) != POSE_OK:
        problem = TARGET_NOT_USABLE
    for j in range(n):
        near[j], order[j] = 0.0, 0.0
        if seeded:
            if problem == SET_MADE and not math.isfinite(seed[j]):
                problem = SEED_NOT_FINITE  # (after the target's problem, if any)
            near[j] = min(max(seed[j], lower[j]), upper[j])
            order[j] = weights[j]
    if problem != SET_MADE:
        return problem, 0, False, False
    for i in range(6):
        hint[i] = near[joints[i]] - reference[joints[i]] if seeded else 0.0
    as_solved(target, inverted, solved)
    count = branches_of(kind, axes, offsets, tool_rotation, solved, hint, angles, status, branch)
    write_branch_configurations(angles, count, reference, joints, candidates)
    kept, success = _checked_candidates(
        frames, frame_links, tip_frame, point_offset, target, candidates, count, status, tolerances, periodic,
        poses, point, errors, reached, picked,
    )  # fmt: skip
    rows = _fitted_choices(
        candidates, picked, kept, lower, upper, periodic, continuous, near, shifted, choices, variants
    )
    if rows > out.shape[0]:
        return MORE_ROWS, rows, False, False
    _write_variants(shifted, choices, variants, picked, kept, lower, upper, periodic, continuous, digits, out)
    singular = False
    for row in range(rows):
        c = int(out[row, n])
        out[row, n] = errors[c, 0]
        out[row, n + 1] = errors[c, 1]
        out[row, n + 2] = branch[c]
        singular |= (status[c] & FREE) != 0
    _order_by_distance(out, rows, near, order)
    return SET_MADE, rows, success, singular
