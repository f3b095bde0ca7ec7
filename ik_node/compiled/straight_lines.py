"""Straight-line paths of tips, compiled: :func:`straight_line_steps`, the step loop of
:meth:`ik_node.IKSolver.cartesian_path` (its rules are :mod:`ik_node.solver.cartesian`'s docstring),
each step solved by the search of the solver's solves (:func:`~.search.search_in`, in its context).

A step from configuration ``q`` (the tips' controlled points ``x``) toward the targets ``x_d`` on
the lines is kept when the search reaches them from ``q``, its joint motion ``dq`` is at most
``min(2 max_i |(J^+ dx)_i| + JUMP_SLACK, MAX_JOINT_STEP)``, ``J`` at ``q`` is not singular, and the
tips at ``q (+) dq / 2`` lie within the tolerance of their lines; else it is halved, or the path
ends. ``J`` (6T, nv) stacks each tip's full 6-row Jacobian at its controlled point and ``dx`` each
tip's twist to its target (:func:`~.tasks.task_error`: ``[R^T (p_d - p); log(R^T R_d)]``), both in
the tip's task axes (its own, or the base's: ``blockdiag(R, R)`` times both, which leaves ``J^+
dx`` and ``J``'s singular values as they are, an orthogonal change of rows). Units: m, rad, ns.
"""

from __future__ import annotations

import math

import numpy as np

from .bundles import (
    BLOCKS,
    COLLISION,
    CONVERGED,
    COORDINATES,
    FRAME_LINKS,
    FRAMES,
    FULL_ERRORS,
    LOWER,
    NO_DEADLINE,
    NO_PRIORITY,
    POSES,
    ROWS,
    SPANS,
    UPPER,
)
from .context import record_fields
from .jit import allocating_kernel, inline_kernel, inner_allocating_kernel, monotonic_ns
from .linalg import pseudo_inverse_times
from .manifold import difference, integrate
from .rotations import interpolate_pose
from .search import search_in
from .spatial import forward_kinematics
from .tasks import evaluate_task, evaluation_workspace, jacobian_at, tip_points

#: How far a step may be halved to keep the tip near the line and the joints' step small (2^-8
#: of it), and before a step out of reach or in collision ends the path (2^-3: within ~1 mm).
MAX_HALVINGS, END_HALVINGS = 8, 3
#: The largest joint step [rad, m] between two points (smaller steps where the joints move fast
#: for the tip, near a singularity: the path between points stays what linear interpolation gives).
MAX_JOINT_STEP = 0.1
#: Slack of the jump bound [rad, m] beyond twice the first-order motion.
JUMP_SLACK = 1e-3
#: A joint this close to a limit [rad, m] counts as at it in the first-order prediction.
LIMIT_CONTACT = 1e-4
#: A segment is done once this share of it at most is left (the rounding of its steps' sum).
DONE_SLACK = 1e-12
#: A path's arrays have room for its planned points (a step each), this many at most at first
#: (a line of millions of steps may end at its first); they double when full.
FIRST_CAPACITY = 1 << 16
#: Why a path ended (:func:`straight_line_steps`' reason; :mod:`ik_node.solver.cartesian` names
#: them): it is complete; a step is out of reach (or of the joint limits), in collision, a jump,
#: from a singular configuration, or leaves the line.
COMPLETE, UNREACHABLE, IN_COLLISION, JUMP, SINGULARITY, DEVIATION = range(6)
#: No failure (yet) of a step.
KEPT = -1


@inline_kernel
def _distance_to_segment(point, start, end):
    """The distance [m] from the position of ``point`` to the segment between the positions of
    ``start`` and ``end`` (4x4 poses each)."""
    length, along = 0.0, 0.0
    for i in range(3):
        direction = end[i, 3] - start[i, 3]
        length += direction * direction
        along += (point[i, 3] - start[i, 3]) * direction
    share = 0.0 if length == 0.0 else min(1.0, max(0.0, along / length))
    distance = 0.0
    for i in range(3):
        off = point[i, 3] - (start[i, 3] + share * (end[i, 3] - start[i, 3]))
        distance += off * off
    return math.sqrt(distance)


@inline_kernel
def _first_order_motion(tree, joints, q, jacobian, twist, columns, work, predicted):
    """The joint motion ``J^+ dx`` (nv,) a step needs to first order, into ``predicted``
    (:func:`~.linalg.pseudo_inverse_times`); where it pushes a 1-DOF joint within
    ``LIMIT_CONTACT`` of a limit outward, the same without that joint's column (the solver keeps
    it there: its share goes to the others). Returns ``J``'s smallest singular value (all its
    columns). ``columns`` (nv,) bool and ``work`` (rows, rotation, squares): work space."""
    rows, rotation, squares = work
    coordinates = tree[COORDINATES]
    for j in range(columns.shape[0]):
        columns[j] = True
    smallest = pseudo_inverse_times(jacobian, columns, twist, rows, rotation, squares, predicted)
    blocked = False
    for j in range(coordinates.shape[0]):
        c = coordinates[j]
        if c >= 0 and (
            (q[c] <= joints[j, LOWER] + LIMIT_CONTACT and predicted[j] < 0.0)
            or (q[c] >= joints[j, UPPER] - LIMIT_CONTACT and predicted[j] > 0.0)
        ):
            columns[j] = False
            blocked = True
    if blocked:
        pseudo_inverse_times(jacobian, columns, twist, rows, rotation, squares, predicted)
    return smallest


@inline_kernel
def _step_failure(
    context, tree, task, q, current, targets, predicted, timeout_ns, tuning, method, solve_type, posture,
    collision, candidate, norms, motion, middle, poses, middle_points,
):  # fmt: skip
    """The step from ``q`` (the tips' points ``current`` (T, 4, 4)) to ``targets`` (T, 4, 4):
    :func:`~.search.search_in` from ``q`` within ``timeout_ns`` (< 0: none; its answer into
    ``candidate``), then the jump bound on its motion ``dq`` (``predicted``: the first-order
    motion) and the tips at ``q (+) dq / 2`` against their lines. Returns (``KEPT`` or why it
    fails, the tips' largest distance [m] from their lines at the middle). ``norms``,
    ``motion``, ``middle``, ``poses``, ``middle_points``: work space."""
    deadline = NO_DEADLINE
    if timeout_ns >= 0:
        deadline = monotonic_ns() + timeout_ns
    outcome, _, _, _ = search_in(
        context, targets, q, deadline, NO_PRIORITY, candidate, norms, tuning, method, solve_type, posture,
        collision,
    )  # fmt: skip
    if outcome != CONVERGED:  # (out of reach or of the joint limits, or in collision)
        return (IN_COLLISION if outcome == COLLISION else UNREACHABLE), 0.0
    spans = tree[SPANS]
    difference(spans, q, candidate, motion)
    largest, first_order = 0.0, 0.0
    for j in range(motion.shape[0]):
        largest = max(largest, abs(motion[j]))
        first_order = max(first_order, abs(predicted[j]))
    if largest > min(2.0 * first_order + JUMP_SLACK, MAX_JOINT_STEP):
        return JUMP, 0.0
    for j in range(motion.shape[0]):
        motion[j] *= 0.5
    integrate(spans, q, motion, middle)
    forward_kinematics(tree[FRAMES], tree[FRAME_LINKS], middle, poses)
    tip_points(poses, task, middle_points)
    off_line = 0.0
    for tip in range(targets.shape[0]):
        off_line = max(off_line, _distance_to_segment(middle_points[tip], current[tip], targets[tip]))
    return KEPT, off_line


@inner_allocating_kernel
def _doubled(array):
    """A copy of ``array`` (C order) with twice its rows, the later ones not written."""
    grown = np.empty((2 * array.shape[0],) + array.shape[1:])
    source, target = array.reshape(array.size), grown.reshape(grown.size)
    for i in range(source.shape[0]):
        target[i] = source[i]
    return grown


@inline_kernel
def _copy(source, target):
    """``target[...] = source`` for C arrays of one size (as a loop: see :mod:`.bundles`)."""
    source, target = source.reshape(source.size), target.reshape(target.size)
    for i in range(source.shape[0]):
        target[i] = source[i]


@allocating_kernel
def straight_line_steps(
    context, corners, measures, steps, start, tolerance, singular_threshold, timeout_ns, tuning, method,
    solve_type, posture, collision,
):  # fmt: skip
    """The path of the tips from ``start`` (nq,) through the corners (K + 1, T, 4, 4) of their
    lines (``corners[0]``: the tips' controlled points at ``start``), segment ``k`` in
    ``steps[k]`` equal steps at first, each solved from the last configuration and kept as the
    module docstring says (``tolerance`` [m] from the lines; ``singular_threshold``: ``J``'s
    smallest singular value; each search within ``timeout_ns``, < 0: none); a step that fails is
    halved, down to ``2^-MAX_HALVINGS`` of the segment's step (a jump, the line) or
    ``2^-END_HALVINGS`` (out of reach, in collision), then the path ends with that reason.
    Between two poses of a segment the targets are :func:`~.rotations.interpolate_pose`'s (the
    straight line and the shortest turn, at one rate).

    Returns (the configurations (k, nq), the tips' controlled points at them (k, T, 4, 4), why it
    ended (``COMPLETE`` ... ``DEVIATION``), the length achieved (each kept step's share of its
    segment's ``measures[k]``), the tips' largest distance [m] from their lines at the kept
    steps' middles). ``context``: a search context of the solver (:func:`~.search.search_context`),
    ``tuning`` and the switches ``method`` ... ``collision`` its search's (:func:`~.search.search_in`).
    """
    tree, task, joints, _, _ = record_fields(context)
    tips, nq, dof = corners.shape[1], start.shape[0], joints.shape[0]
    space = evaluation_workspace(tree, task, dof, None)
    poses = space[POSES]
    jacobian = space[BLOCKS].reshape((6 * tips, dof))  # (each tip's 6 rows, stacked)
    twist = space[FULL_ERRORS].reshape(6 * tips)
    task_rows = task[ROWS].shape[0]
    error, trimmed, norms = np.empty(task_rows), np.empty((task_rows, dof)), np.empty((tips, 2))
    size = max(6 * tips, dof)
    work = (np.empty((size, size)), np.empty((size, size)), np.empty(size))
    columns, predicted, motion = np.empty(dof, dtype=np.bool_), np.empty(dof), np.empty(dof)
    q, candidate, middle = start.copy(), np.empty(nq), np.empty(nq)
    targets, middle_points = np.empty((tips, 4, 4)), np.empty((tips, 4, 4))
    relative, rotation_vector = np.empty((3, 3)), np.empty(3)
    capacity = 1
    for segment in range(steps.shape[0]):
        capacity = min(capacity + steps[segment], FIRST_CAPACITY)
    path_q, path_points = np.empty((capacity, nq)), np.empty((capacity, tips, 4, 4))
    _copy(start, path_q[0])
    _copy(corners[0], path_points[0])
    count, achieved, deviation, reason = 1, 0.0, 0.0, COMPLETE
    for segment in range(steps.shape[0]):
        full_step = 1.0 / steps[segment]
        done, step = 0.0, full_step
        while done < 1.0 - DONE_SLACK:
            step = min(step, 1.0 - done)
            for tip in range(tips):
                interpolate_pose(
                    corners[segment, tip], corners[segment + 1, tip], done + step, relative, rotation_vector,
                    targets[tip],
                )  # fmt: skip
            evaluate_task(tree, task, targets, q, space, error, norms)  # (J's points and dx)
            jacobian_at(tree, task, space, trimmed)  # (the tips' full rows, in BLOCKS)
            smallest = _first_order_motion(tree, joints, q, jacobian, twist, columns, work, predicted)
            if smallest < singular_threshold:
                reason = SINGULARITY
                break
            failure, off_line = _step_failure(
                context, tree, task, q, path_points[count - 1], targets, predicted, timeout_ns, tuning,
                method, solve_type, posture, collision, candidate, norms, motion, middle, poses,
                middle_points,
            )  # fmt: skip
            if failure == KEPT and off_line > tolerance:
                failure = DEVIATION
            if failure != KEPT:  # (a smaller step, down to a share of it, before giving up)
                halvings = END_HALVINGS if failure == UNREACHABLE or failure == IN_COLLISION else MAX_HALVINGS
                if step / 2.0 < full_step / 2.0**halvings:
                    reason = failure
                    break
                step /= 2.0
                continue
            if count == path_q.shape[0]:  # (more steps than planned: twice the room)
                path_q, path_points = _doubled(path_q), _doubled(path_points)
            _copy(candidate, q)
            _copy(candidate, path_q[count])
            forward_kinematics(tree[FRAMES], tree[FRAME_LINKS], candidate, poses)
            tip_points(poses, task, path_points[count])
            count += 1
            deviation = max(deviation, off_line)
            done += step
            achieved += measures[segment] * step
            step = min(2.0 * step, full_step)  # (back to the full step once past a hard part)
        if reason != COMPLETE:
            break
    return path_q[:count].copy(), path_points[:count].copy(), reason, achieved, deviation
