"""One attempt: the iteration loop (a step per method, kept when the error falls; the trust
region), its stopping rules, and the null-space posture once the task has converged."""

from __future__ import annotations

import math

import numpy as np

from .bundles import (
    CCD,
    COLLISION,
    CONVERGED,
    DEADLINE,
    FIRST_ROW,
    ITERATIONS,
    MAX_ITERATIONS,
    MAX_JOINT_MOVE,
    MIN_DAMPING,
    NO_DEADLINE,
    NO_PRIORITY,
    PINV,
    REST,
    STALLED,
    STUCK,
    WEIGHT,
)
from .contacts import MAX_CONTACT_ROWS, clear_contacts
from .jit import allocating_kernel, kernel, monotonic_ns
from .joints import apply_step, largest_move, pushes_against_limit
from .linalg import null_space_motion, step_workspace
from .steps import MU_DOWN, MU_INITIAL, MU_MAX, MU_MIN, constraint_workspace, limited_step, method_step
from .tasks import evaluate, evaluate_task, evaluated_contacts, evaluation_workspace, jacobian_at

#: An attempt stalls when its cost has not halved within this many iterations.
STALL_ITERATIONS, STALL_DECREASE = 5, 0.5
#: Stationary (a local minimum within the limits) when the free descent direction is below
#: this fraction of ``|J| |e|``.
STATIONARY = 1e-3
#: Null-space posture, once the task has converged (:func:`posture_refinement`): posture steps
#: per attempt at most (within ``max_iterations``), halvings of a step whose task correction
#: fails, Gauss-Newton corrections that bring the task back within tolerance after a step, and
#: the relative decrease of the posture cost below which the posture is settled.
POSTURE_ITERATIONS, POSTURE_HALVINGS, POSTURE_CORRECTIONS, POSTURE_SETTLED = 20, 4, 3, 1e-3


@kernel
def stationary(jacobian, error, joints, coordinates, q):
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
        if not pushes_against_limit(q, coordinates, joints, j, descent):
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
def posture_cost(q, joints, posture, coordinates):
    """``P = sum_j k_j (q_j - q_rest_j)^2`` over the 1-DOF joints (seed 004's control term
    ``z = alpha_i (theta_i - theta_ci)^2`` summed; ``k_j`` the per-joint posture gains) [rad^2 or
    m^2]."""
    value = 0.0
    for j in range(coordinates.shape[0]):
        if coordinates[j] >= 0:
            difference_ = q[coordinates[j]] - joints[j, REST]
            value += posture[j] * difference_ * difference_
    return value


@kernel
def _task_restored(
    tree, task, collision, joints, targets, min_damping2, candidate, space, jacobian, error, norms, work, step
):
    """Whether ``candidate`` (corrected in place) has every tip within tolerance, after at most
    ``POSTURE_CORRECTIONS`` Gauss-Newton steps (:func:`limited_step` with ``lambda^2 =
    lambda_min^2``, applied with :func:`apply_step`); ``norms`` receives its errors."""
    rows, tolerances, coordinates = task[3], task[5], tree[3]
    for correction in range(POSTURE_CORRECTIONS + 1):
        evaluate(tree, task, collision, targets, candidate, space, error, norms)
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


@allocating_kernel
def posture_refinement(
    tree,
    task,
    collision,
    joints,
    posture,
    targets,
    min_damping2,
    seed,
    max_joint_move,
    budget,
    deadline,
    q,
    norms,
):
    """Null-space motion toward the rest posture from a converged ``q`` (updated in place, with
    its per-tip errors in ``norms``); returns the posture iterations used (``budget`` at most).

    Each iteration: the pull ``z_j = k_j w_j (q_rest_j - q_j)`` over the 1-DOF joints (``k_j``
    the posture gains ``posture`` (nv,), ``w_j`` the joint weights: minus half the gradient of
    :func:`posture_cost`) projected into the task's null space, ``dq = (I - J^+ J) z`` (seed
    004's "J with control term", :func:`null_space_motion`), applied with the limits; that leaves
    the task unchanged to first order only, so the candidate is corrected back within tolerance
    (:func:`_task_restored`) and kept only if it is and its posture cost fell; else the step is
    halved (``POSTURE_HALVINGS`` times); a candidate in collision is never kept. Stops when no
    step is kept, the cost falls by less than ``POSTURE_SETTLED`` of itself, the budget is used
    or the clock passes ``deadline`` [ns].
    Every ``q`` it keeps solves the task: turning the posture on never costs a solution the task
    found. With ``max_joint_move`` > 0 [rad or m] a step is kept only if no joint ends farther
    than that from ``seed`` (or than the converged ``q`` already was): the posture never turns a
    solution into a branch flip (see :func:`search`).
    """
    if posture is None:  # (no posture gain: a feature switch, nothing below compiled)
        return 0
    coordinates = tree[3]
    cost = posture_cost(q, joints, posture, coordinates)
    if budget <= 0 or not cost > 0.0:
        return 0
    rows = task[3]
    tips, rows_count, dof = task[0].shape[0], rows.shape[0], joints.shape[0]
    space = evaluation_workspace(tree, task, dof, collision)
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
        move_bound = max(max_joint_move, largest_move(tree, joints, q, seed, displacement))
    used = 0
    while used < budget:
        if deadline != NO_DEADLINE and monotonic_ns() >= deadline:
            break
        used += 1
        evaluate(tree, task, collision, targets, q, space, error, candidate_norms)
        jacobian_at(tree, task, space, jacobian)
        for j in range(dof):
            pull[j] = 0.0
            if coordinates[j] >= 0:
                pull[j] = posture[j] * weights[j] * (joints[j, REST] - q[coordinates[j]])
        null_space_motion(jacobian, pull, weights, FIRST_ROW, rows_count, gram, solution, image, motion)
        scale, kept, candidate_cost = 1.0, False, cost
        for _ in range(POSTURE_HALVINGS + 1):
            for j in range(dof):
                step[j] = scale * motion[j]
            apply_step(tree, joints, q, step, candidate)
            if (
                _task_restored(
                    tree,
                    task,
                    collision,
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
                )
                and space[5][0][1] <= 0.0
            ):  # (and collision-free: the penetration of its evaluation)
                candidate_cost = posture_cost(candidate, joints, posture, coordinates)
                if candidate_cost < cost and (
                    move_bound <= 0.0
                    or largest_move(tree, joints, candidate, seed, displacement) <= move_bound
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


@allocating_kernel
def attempt_workspace(tree, task, collision, dof, nq):
    """Work arrays of :func:`run_attempt` for ``dof`` tangent and ``nq`` configuration
    coordinates, made once and handed to every attempt: (the evaluations at ``q`` and at the
    candidate (:func:`~ik_node.compiled.tasks.evaluation_workspace`), jacobian (m, nv), error
    (m,), candidate error (m,), candidate norms (T, 2), candidate (nq,), step (nv,), the step's
    :func:`~ik_node.compiled.linalg.step_workspace` for the task rows and the near pairs' rows,
    :func:`~ik_node.compiled.steps.constraint_workspace`)."""
    rows_count, tips = task[3].shape[0], task[0].shape[0]
    return (
        evaluation_workspace(tree, task, dof, collision),
        evaluation_workspace(tree, task, dof, collision),
        np.empty((rows_count, dof)),
        np.empty(rows_count),
        np.empty(rows_count),
        np.empty((tips, 2)),
        np.empty(nq),
        np.empty(dof),
        step_workspace(rows_count + _contact_rows_kept(collision), dof),
        constraint_workspace(collision, rows_count, dof),
    )


@kernel
def _contact_rows_kept(collision):
    """The near pairs' rows a step stacks at most (0 without collision checks)."""
    if collision is None:
        return 0
    return min(MAX_CONTACT_ROWS, collision[1].shape[0])


@kernel
def run_attempt(
    workspace, tree, task, joints, targets, settings, method, posture, collision, seed, primary_rows,
    deadline, q, norms,
):  # fmt: skip
    """One attempt of the iteration loop from ``q`` (updated in place; ``norms`` (T, 2) receives
    its per-tip errors), in ``workspace`` (:func:`attempt_workspace`). Returns (outcome,
    iterations).

    Each iteration: the candidate of the method's step (:func:`method_step`) is kept only if it
    is better (trust region: ``mu`` falls by ``MU_DOWN``, else grows by a factor that doubles
    while refusals repeat; a refused CCD sweep ends the attempt). Better, with the task's
    collision pairs' penetration ``P`` (the summed overlap [m], 0 when collision-free): ``P``
    falls, or does not grow while ``E = e^T e / 2`` falls; a collision-free ``q`` only ever moves
    to collision-free candidates. Outcomes: ``CONVERGED`` (every tip within tolerance and
    ``P = 0``); ``STUCK`` (``mu`` past ``MU_MAX``, or stationary: a local minimum); ``STALLED``
    (neither ``E`` halved nor ``P`` fell in ``STALL_ITERATIONS``); ``ITERATIONS``; ``DEADLINE``
    (the clock passed ``deadline`` [ns]); ``COLLISION`` in place of the first three and
    ``ITERATIONS`` when the tips were within tolerance at some ``q`` in collision or the attempt
    ends with a pair nearer than the margin (held back by a collision).

    With ``primary_rows > 0`` (task priority, rows of the reachable tips first) ``E`` is the
    secondary rows' error, and a step is kept only if the primary tips stay within tolerance.

    Once converged (``dls`` and ``pinv``, without priority), with ``posture`` (the posture
    gains (nv,); None: no posture, a feature switch) :func:`posture_refinement` moves ``q``
    toward the rest posture in the task's null space within the iterations left (counted), no
    joint past ``max_joint_move`` (> 0) from ``seed`` (the search's seed, not the attempt's
    start). ``settings``: see :mod:`.bundles` (``max_joint_move`` as the search passes it);
    ``method``: None for ``dls``, else the method's code (see :func:`method_step`);
    ``collision``: the pairs to keep apart, or None.
    """
    min_damping, max_iterations = settings[MIN_DAMPING], settings[MAX_ITERATIONS]
    max_joint_move = settings[MAX_JOINT_MOVE]
    rows, tolerances, coordinates = task[3], task[5], tree[3]
    tips, rows_count = task[0].shape[0], rows.shape[0]
    space, candidate_space, jacobian, error, candidate_error, candidate_norms = workspace[:6]
    candidate, step, work, constraint = workspace[6:]
    min_damping2 = min_damping * min_damping
    clear_contacts(collision, space[5])
    clear_contacts(collision, candidate_space[5])

    penetration = evaluate(tree, task, collision, targets, q, space, error, norms)
    posture_budget = 0
    if primary_rows == 0 and (method is None or method == PINV):
        posture_budget = min(POSTURE_ITERATIONS, max_iterations)
    within = _within_tolerance(norms, tolerances, rows, rows_count)
    if within and penetration <= 0.0:
        return CONVERGED, posture_refinement(
            tree, task, collision, joints, posture, targets, min_damping2, seed, max_joint_move,
            posture_budget, deadline, q, norms,
        )  # fmt: skip
    blocked = within  # (within tolerance, in collision)
    cost = _cost(error, primary_rows)
    jacobian_at(tree, task, space, jacobian)
    mu, growth = MU_INITIAL, 2.0
    checkpoint_cost, since_checkpoint = cost, 0
    outcome, used = ITERATIONS, max_iterations
    for iteration in range(1, max_iterations + 1):
        if mu > MU_MAX:
            outcome, used = STUCK, iteration - 1
            break
        if (
            (method is None or method != CCD)
            and primary_rows == 0
            and mu > MU_INITIAL
            and penetration <= 0.0
            and stationary(jacobian, error, joints, coordinates, q)
        ):
            outcome, used = STUCK, iteration - 1  # (checked once steps are being refused)
            break
        if since_checkpoint > STALL_ITERATIONS:
            outcome, used = STALLED, iteration - 1
            break
        if deadline != NO_DEADLINE and monotonic_ns() >= deadline:
            return DEADLINE, iteration - 1
        method_step(
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
        )
        evaluate_task(tree, task, targets, candidate, candidate_space, candidate_error, candidate_norms)
        candidate_cost = _cost(candidate_error, primary_rows)
        candidate_penetration = math.inf  # (a collision-free q refuses a costlier candidate unmeasured)
        if penetration > 0.0 or candidate_cost < cost:
            candidate_penetration = evaluated_contacts(collision, candidate_space)
        since_checkpoint += 1
        accepted = (
            candidate_penetration < penetration
            or (candidate_penetration <= penetration and candidate_cost < cost)
        ) and (primary_rows == 0 or _within_tolerance(candidate_norms, tolerances, rows, primary_rows))
        if not accepted:
            if method is not None and method == CCD:  # a whole sweep found nothing better
                outcome, used = STUCK, iteration
                break
            mu, growth = mu * growth, 2.0 * growth
            continue
        for i in range(q.shape[0]):
            q[i] = candidate[i]
        for r in range(rows_count):
            error[r] = candidate_error[r]
        for tip in range(tips):
            norms[tip, 0], norms[tip, 1] = candidate_norms[tip, 0], candidate_norms[tip, 1]
        if candidate_penetration < penetration:
            checkpoint_cost, since_checkpoint = candidate_cost, 0
        cost, penetration = candidate_cost, candidate_penetration
        within = _within_tolerance(norms, tolerances, rows, rows_count)
        if within and penetration <= 0.0:
            posture_budget = min(posture_budget, max_iterations - iteration)
            return CONVERGED, iteration + posture_refinement(
                tree, task, collision, joints, posture, targets, min_damping2, seed, max_joint_move,
                posture_budget, deadline, q, norms,
            )  # fmt: skip
        blocked = blocked or within
        space, candidate_space = candidate_space, space
        jacobian_at(tree, task, space, jacobian)
        mu, growth = max(mu * MU_DOWN, MU_MIN), 2.0
        if cost < STALL_DECREASE * checkpoint_cost:
            checkpoint_cost, since_checkpoint = cost, 0
    if blocked or space[5][0][0] > 0:  # (ended with a pair nearer than the margin: held back)
        outcome = COLLISION
    return outcome, used
