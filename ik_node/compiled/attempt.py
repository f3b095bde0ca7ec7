"""One attempt: the iteration loop (a step per method, kept when the error falls; the trust
region), its stopping rules, and the null-space posture once the task has converged.

:func:`run_attempt` is one loop in the shape of Robotics Toolbox's ``_IK_loop`` (``ik.cpp``),
where only the step differs between methods (:func:`~ik_node.compiled.steps.method_step`); each
rule it applies is a kernel of its own, written once: the stop rules (:func:`_converged`,
:func:`_stop_rule`), the acceptance of a candidate (:func:`_accept_step`), the trust region
(:func:`_next_damping`), the stall rule's checkpoint (:func:`_stall_checkpoint`), the next start
(:func:`_take_candidate`) and the outcome (:func:`_verdict`). :func:`posture_refinement` is a
loop of the same shape (:func:`_posture_pull`, :func:`_posture_accepted`,
:func:`_posture_settled`). The rules are :func:`~ik_node.compiled.jit.inline_kernel`: numba
inlines each into its caller's IR, about 25 ms of compile a call site (~40 ms in the posture's
:func:`~ik_node.compiled.jit.allocating_kernel`), where a :func:`~ik_node.compiled.jit.kernel`
of its own costs ~60 ms more. The loops stay in their kernels, and the posture's rules take
arrays, not tuples of them: the loop as an inline kernel of its own, with the rules inlined in
it, had cost ~1 s of compile per specialisation of :func:`run_attempt`, and tuples of arrays
inlined into the posture ~0.4 s."""

from __future__ import annotations

import math

import numpy as np

from .bundles import (
    CANDIDATE,
    CANDIDATE_ERROR,
    CANDIDATE_EVALUATION,
    CANDIDATE_NORMS,
    CCD,
    COLLISION,
    CONSTRAINT,
    CONTACT,
    CONTACT_BUFFER,
    CONVERGED,
    COORDINATES,
    DEADLINE,
    ERROR,
    EVALUATION,
    FIRST_ROW,
    GRAM,
    IMAGE,
    ITERATIONS,
    JACOBIAN,
    MAX_ITERATIONS,
    MAX_JOINT_MOVE,
    MIN_DAMPING,
    NEAR_COUNT,
    NO_DEADLINE,
    NO_PRIORITY,
    PAIRS,
    PENETRATION,
    PINV,
    REST,
    ROWS,
    SOLUTION,
    STALLED,
    STEP,
    STEP_WORK,
    STUCK,
    TIP_FRAMES,
    TOLERANCES,
    WEIGHT,
)
from .contacts import MAX_CONTACT_ROWS, clear_contacts
from .jit import allocating_kernel, inline_kernel, inner_allocating_kernel, inner_kernel, kernel, monotonic_ns
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
#: :func:`_stop_rule`'s answer while no rule ends the loop (not an outcome: never returned; apart
#: from every outcome and search code of :mod:`.bundles`).
GOING_ON = -3


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


@inner_kernel
def _within_tolerance(norms, tolerances, rows, row_end):
    """Every tip with a row among ``rows[:row_end]`` is within its position and orientation
    tolerance."""
    for r in range(row_end):
        tip = rows[r, 0]
        if norms[tip, 0] > tolerances[tip, 0] or norms[tip, 1] > tolerances[tip, 1]:
            return False
    return True


@inner_kernel
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


@inline_kernel
def _past(deadline):
    """The deadline rule: the monotonic clock has passed ``deadline`` [ns] (never for
    ``NO_DEADLINE``, without reading the clock)."""
    return deadline != NO_DEADLINE and monotonic_ns() >= deadline


@inline_kernel
def _take_candidate(candidate, candidate_norms, q, norms):
    """The next start: a kept candidate's configuration (nq,) and per-tip errors (T, 2) [m, rad]
    into ``q`` and ``norms``."""
    for i in range(q.shape[0]):
        q[i] = candidate[i]
    for tip in range(norms.shape[0]):
        norms[tip, 0], norms[tip, 1] = candidate_norms[tip, 0], candidate_norms[tip, 1]


@kernel
def _task_restored(
    tree, task, collision, joints, targets, min_damping2, candidate, space, jacobian, error, norms, work, step
):
    """Whether ``candidate`` (corrected in place) has every tip within tolerance, after at most
    ``POSTURE_CORRECTIONS`` Gauss-Newton steps (:func:`limited_step` with ``lambda^2 =
    lambda_min^2``, applied with :func:`apply_step`); ``norms`` receives its errors."""
    rows, tolerances, coordinates = task[ROWS], task[TOLERANCES], tree[COORDINATES]
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


@inline_kernel
def _posture_move_bound(tree, joints, seed, max_joint_move, q, displacement):
    """The largest move from ``seed`` [rad or m] a posture step may leave: ``max_joint_move``, or
    the converged ``q``'s own largest move where that is larger (:func:`largest_move`); 0 (no
    bound) without ``max_joint_move``."""
    if max_joint_move > 0.0:
        return max(max_joint_move, largest_move(tree, joints, q, seed, displacement))
    return 0.0


@inline_kernel
def _posture_pull(q, joints, posture, coordinates, weights, pull):
    """The pull toward the rest posture into ``pull`` (nv,) [rad or m, weighted], ``z_j = k_j w_j
    (q_rest_j - q_j)`` over the 1-DOF joints (0 for the others), and the joint weights ``w_j``
    into ``weights`` (nv,): ``k_j`` the posture gains ``posture`` (nv,); minus half the gradient
    of :func:`posture_cost`, weighted (seed 004's control term). Projected into the task's null
    space, ``dq = (I - J^+ J) z`` (:func:`null_space_motion`, ``J^+`` weighted by ``W =
    diag(w)``), it is the posture's motion."""
    for j in range(joints.shape[0]):
        weights[j] = joints[j, WEIGHT]
        pull[j] = 0.0
        if coordinates[j] >= 0:
            pull[j] = posture[j] * weights[j] * (joints[j, REST] - q[coordinates[j]])


@inline_kernel
def _posture_accepted(
    tree, joints, posture, seed, move_bound, cost, restored, penetration, candidate, displacement
):
    """Acceptance of a posture candidate ``candidate`` (nq,), corrected back to the task by
    :func:`_task_restored` (``restored``): kept when its tips are within tolerance, it is
    collision-free (``penetration``, the one its evaluation left [m]), its posture cost is below
    ``cost`` and, with ``move_bound`` > 0 [rad or m], no joint ends farther than that from
    ``seed`` (``displacement`` (nv,): work space). Returns (kept, its posture cost; ``cost``
    where not measured)."""
    if not (restored and penetration <= 0.0):
        return False, cost
    candidate_cost = posture_cost(candidate, joints, posture, tree[COORDINATES])
    kept = candidate_cost < cost and (
        move_bound <= 0.0 or largest_move(tree, joints, candidate, seed, displacement) <= move_bound
    )
    return kept, candidate_cost


@inline_kernel
def _posture_settled(cost, candidate_cost):
    """The posture's stop rule after a kept step: its cost fell by at most ``POSTURE_SETTLED`` of
    itself."""
    return cost - candidate_cost <= POSTURE_SETTLED * cost


@allocating_kernel
def posture_refinement(
    tree, task, collision, joints, posture, targets, min_damping2, seed, max_joint_move, budget, deadline, q,
    norms,
):  # fmt: skip
    """Null-space motion toward the rest posture from a converged ``q`` (updated in place, with
    its per-tip errors in ``norms``); returns the posture iterations used (``budget`` at most).

    Each iteration: the pull toward the rest posture (:func:`_posture_pull`) projected into the
    task's null space (:func:`null_space_motion`), applied with the limits; that leaves the task
    unchanged to first order only, so the candidate is corrected back within tolerance
    (:func:`_task_restored`) and kept (:func:`_posture_accepted`) only if it is, is
    collision-free and its posture cost fell; else the step is halved (``POSTURE_HALVINGS``
    times). Stops when no step is kept, the cost settles (:func:`_posture_settled`), the budget
    is used or the clock passes ``deadline`` [ns] (:func:`_past`).
    Every ``q`` it keeps solves the task: turning the posture on never costs a solution the task
    found. With ``max_joint_move`` > 0 [rad or m] a step is kept only if no joint ends farther
    than that from ``seed`` (or than the converged ``q`` already was,
    :func:`_posture_move_bound`): the posture never turns a solution into a branch flip (see
    :func:`search`). ``posture``: the posture gains (nv,), or None (a feature switch).
    """
    if posture is None:  # (no posture gain: a feature switch, nothing below compiled)
        return 0
    cost = posture_cost(q, joints, posture, tree[COORDINATES])
    if budget <= 0 or not cost > 0.0:
        return 0
    rows_count, tips, dof = task[ROWS].shape[0], task[TIP_FRAMES].shape[0], joints.shape[0]
    evaluation = evaluation_workspace(tree, task, dof, collision)
    jacobian, error, candidate_norms = np.empty((rows_count, dof)), np.empty(rows_count), np.empty((tips, 2))
    candidate, pull, motion, weights = np.empty(q.shape[0]), np.empty(dof), np.empty(dof), np.empty(dof)
    step, displacement, work = np.empty(dof), np.empty(dof), step_workspace(rows_count, dof)
    move_bound = _posture_move_bound(tree, joints, seed, max_joint_move, q, displacement)
    used = 0
    while used < budget and not _past(deadline):
        used += 1
        evaluate(tree, task, collision, targets, q, evaluation, error, candidate_norms)
        jacobian_at(tree, task, evaluation, jacobian)
        _posture_pull(q, joints, posture, tree[COORDINATES], weights, pull)
        null_space_motion(
            jacobian, pull, weights, FIRST_ROW, rows_count, work[GRAM], work[SOLUTION], work[IMAGE], motion
        )
        scale, kept, candidate_cost = 1.0, False, cost
        for _ in range(POSTURE_HALVINGS + 1):
            for j in range(step.shape[0]):
                step[j] = scale * motion[j]
            apply_step(tree, joints, q, step, candidate)
            restored = _task_restored(
                tree, task, collision, joints, targets, min_damping2, candidate, evaluation, jacobian, error,
                candidate_norms, work, step,
            )  # fmt: skip
            kept, candidate_cost = _posture_accepted(
                tree, joints, posture, seed, move_bound, cost, restored,
                evaluation[CONTACT][CONTACT_BUFFER][PENETRATION], candidate, displacement,
            )  # fmt: skip
            if kept:
                break
            scale *= 0.5
        if not kept:
            break
        _take_candidate(candidate, candidate_norms, q, norms)
        settled = _posture_settled(cost, candidate_cost)
        cost = candidate_cost
        if settled:
            break
    return used


@inner_allocating_kernel
def attempt_workspace(tree, task, collision, dof, nq):
    """Work arrays of :func:`run_attempt` for ``dof`` tangent and ``nq`` configuration
    coordinates, made once and handed to every attempt: (the evaluations at ``q`` and at the
    candidate (:func:`~ik_node.compiled.tasks.evaluation_workspace`), jacobian (m, nv), error
    (m,), candidate error (m,), candidate norms (T, 2), candidate (nq,), step (nv,), the step's
    :func:`~ik_node.compiled.linalg.step_workspace` for the task rows and the near pairs' rows,
    :func:`~ik_node.compiled.steps.constraint_workspace`): slots ``EVALUATION`` ... ``CONSTRAINT``
    of :mod:`.bundles`."""
    rows_count, tips = task[ROWS].shape[0], task[TIP_FRAMES].shape[0]
    return (
        evaluation_workspace(tree, task, dof, collision),  # EVALUATION
        evaluation_workspace(tree, task, dof, collision),  # CANDIDATE_EVALUATION
        np.empty((rows_count, dof)),  # JACOBIAN
        np.empty(rows_count),  # ERROR
        np.empty(rows_count),  # CANDIDATE_ERROR
        np.empty((tips, 2)),  # CANDIDATE_NORMS
        np.empty(nq),  # CANDIDATE
        np.empty(dof),  # STEP
        step_workspace(rows_count + _contact_rows_kept(collision), dof),  # STEP_WORK
        constraint_workspace(collision, rows_count, dof),  # CONSTRAINT
    )


@inner_kernel
def _contact_rows_kept(collision):
    """The near pairs' rows a step stacks at most (0 without collision checks)."""
    if collision is None:
        return 0
    return min(MAX_CONTACT_ROWS, collision[PAIRS].shape[0])


@inline_kernel
def _converged(within, penetration):
    """Convergence: every tip within its tolerances (``within``: :func:`_within_tolerance`) and
    the collision pairs' penetration ``P`` [m] zero."""
    return within and penetration <= 0.0


@inline_kernel
def _stop_rule(
    used, max_iterations, method, primary_rows, mu, since_checkpoint, deadline, penetration, jacobian,
    error, joints, coordinates, q,
):  # fmt: skip
    """Why the loop ends before its next step (``used`` steps taken), by the first rule that
    holds, else ``GOING_ON``:

    * ``ITERATIONS``: ``max_iterations`` steps taken;
    * ``STUCK``: the trust region has closed (``mu`` past ``MU_MAX``), or, once steps are being
      refused (``mu`` above ``MU_INITIAL``), ``q`` is a local minimum of ``E`` within the limits
      (:func:`stationary`, by the Jacobian and error at ``q``; checked for every method but CCD,
      without priority rows and with ``P = 0``);
    * ``STALLED``: ``E`` has not halved, nor ``P`` fallen, in ``STALL_ITERATIONS`` iterations
      (``since_checkpoint``, see :func:`_stall_checkpoint`);
    * ``DEADLINE``: the clock has passed ``deadline`` [ns] (:func:`_past`; read last)."""
    if used >= max_iterations:
        return ITERATIONS
    if mu > MU_MAX:
        return STUCK
    if (
        (method is None or method != CCD)
        and primary_rows == 0
        and mu > MU_INITIAL
        and penetration <= 0.0
        and stationary(jacobian, error, joints, coordinates, q)
    ):
        return STUCK
    if since_checkpoint > STALL_ITERATIONS:
        return STALLED
    if _past(deadline):
        return DEADLINE
    return GOING_ON


@inline_kernel
def _accept_step(
    collision, candidate_space, cost, penetration, candidate_cost, primary_rows, candidate_norms, task
):
    """Acceptance (the trust region's test) of the candidate evaluated in ``candidate_space``,
    with cost ``E = e^T e / 2`` = ``candidate_cost``: kept when it is better, its penetration
    ``P`` [m] falls, or does not grow while ``E`` falls (so a collision-free ``q`` only ever moves
    to collision-free candidates), and, with ``primary_rows`` > 0 (task priority), the primary
    tips (those of the task's first ``primary_rows`` rows) stay within tolerance. ``P`` is
    measured (:func:`evaluated_contacts`) only where it can decide: from a collision-free ``q`` a
    candidate whose ``E`` does not fall is refused unmeasured. Returns (kept, the candidate's
    ``P``, ``inf`` where not measured)."""
    candidate_penetration = math.inf
    if penetration > 0.0 or candidate_cost < cost:
        candidate_penetration = evaluated_contacts(collision, candidate_space)
    better = candidate_penetration < penetration or (
        candidate_penetration <= penetration and candidate_cost < cost
    )
    kept = better and (
        primary_rows == 0 or _within_tolerance(candidate_norms, task[TOLERANCES], task[ROWS], primary_rows)
    )
    return kept, candidate_penetration


@inline_kernel
def _next_damping(mu, growth, kept):
    """The trust region's next ``(mu, growth)`` (dimensionless), Nielsen's update (H. B. Nielsen,
    "Damping parameter in Marquardt's method", IMM-REP-1999-05) with the decrease fixed at his
    bound: a kept step multiplies ``mu`` by ``MU_DOWN`` (1/3, floored at ``MU_MIN``) and resets
    the growth to 2; a refused one multiplies ``mu`` by the growth, which doubles (2, 4, 8, ...
    while refusals repeat). ``mu`` scales the damping ``lambda^2 = mu E + lambda_min^2`` of
    :func:`~ik_node.compiled.steps.method_step`."""
    if kept:
        return max(mu * MU_DOWN, MU_MIN), 2.0
    return mu * growth, 2.0 * growth


@inline_kernel
def _stall_checkpoint(checkpoint_cost, since_checkpoint, cost, penetration_fell):
    """The stall rule's reference after a kept step with cost ``E`` = ``cost``: (``E``, 0
    iterations since) when the penetration fell or ``E`` is below ``STALL_DECREASE`` of the
    checkpoint's cost; else unchanged (see :func:`_stop_rule`)."""
    if penetration_fell or cost < STALL_DECREASE * checkpoint_cost:
        return cost, 0
    return checkpoint_cost, since_checkpoint


@inline_kernel
def _verdict(outcome, blocked, space):
    """The outcome an attempt reports for how its loop ended: ``CONVERGED`` and ``DEADLINE`` as
    they are; the others (``STUCK``, ``STALLED``, ``ITERATIONS``) become ``COLLISION`` when the
    tips were within tolerance at some ``q`` in collision (``blocked``) or the last ``q`` has a
    pair nearer than the margin (the near pairs its evaluation left in ``space``): held back by a
    collision."""
    if outcome == CONVERGED or outcome == DEADLINE:
        return outcome
    if blocked or space[CONTACT][CONTACT_BUFFER][NEAR_COUNT] > 0:
        return COLLISION
    return outcome


@inline_kernel
def _posture_budget(method, primary_rows, iterations_left):
    """The posture iterations a converged attempt may use: ``POSTURE_ITERATIONS`` within the
    ``iterations_left``, for ``dls`` and ``pinv`` without priority; 0 otherwise."""
    if primary_rows == 0 and (method is None or method == PINV):
        return min(POSTURE_ITERATIONS, iterations_left)
    return 0


@kernel
def run_attempt(
    workspace, tree, task, joints, targets, tuning, method, posture, collision, seed, primary_rows,
    deadline, q, norms,
):  # fmt: skip
    """One attempt of the iteration loop from ``q`` (updated in place; ``norms`` (T, 2) receives
    its per-tip errors), in ``workspace`` (:func:`attempt_workspace`). Returns (outcome,
    iterations).

    Each iteration, as Robotics Toolbox's ``_IK_loop``: the stop rules (:func:`_converged`,
    :func:`_stop_rule`); the candidate of the method's step (:func:`method_step`, the only part
    that differs between methods), kept only if better (:func:`_accept_step`: the collision
    pairs' penetration ``P`` [m] falls, or does not grow while ``E = e^T e / 2`` falls); the trust
    region (:func:`_next_damping`; a refused CCD sweep ends the attempt ``STUCK``); a kept
    candidate is the next start (:func:`_take_candidate`, the Jacobian at it) and may restart the
    stall count (:func:`_stall_checkpoint`). The outcome: :func:`_verdict`. With ``primary_rows >
    0`` (task priority, rows of the reachable tips first) ``E`` is the secondary rows' error, and
    a step is kept only if the primary tips stay within tolerance.

    Once converged, with ``posture`` (the posture gains (nv,); None: a feature switch)
    :func:`posture_refinement` moves ``q`` toward the rest posture in the task's null space within
    :func:`_posture_budget`, no joint past ``max_joint_move`` (> 0) from ``seed`` (the search's).
    ``method``: None for ``dls``, else its code (:func:`method_step`); ``collision``: None or the
    pairs to keep apart (:mod:`.bundles`)."""
    min_damping, max_iterations = tuning[MIN_DAMPING], tuning[MAX_ITERATIONS]
    min_damping2 = min_damping * min_damping
    rows, tolerances, coordinates = task[ROWS], task[TOLERANCES], tree[COORDINATES]
    space, candidate_space = workspace[EVALUATION], workspace[CANDIDATE_EVALUATION]
    jacobian, error, candidate_error = workspace[JACOBIAN], workspace[ERROR], workspace[CANDIDATE_ERROR]
    candidate_norms, candidate, step = workspace[CANDIDATE_NORMS], workspace[CANDIDATE], workspace[STEP]
    work, constraint = workspace[STEP_WORK], workspace[CONSTRAINT]
    clear_contacts(collision, space[CONTACT])
    clear_contacts(collision, candidate_space[CONTACT])
    penetration = evaluate(tree, task, collision, targets, q, space, error, norms)
    within, blocked, moved = _within_tolerance(norms, tolerances, rows, rows.shape[0]), False, True
    cost = _cost(error, primary_rows)
    outcome, used, mu, growth, checkpoint_cost, since_checkpoint = GOING_ON, 0, MU_INITIAL, 2.0, cost, 0
    while True:
        if _converged(within, penetration):
            outcome = CONVERGED
            break
        blocked = blocked or within  # (within tolerance, in collision)
        if moved:
            jacobian_at(tree, task, space, jacobian)
        outcome = _stop_rule(
            used, max_iterations, method, primary_rows, mu, since_checkpoint, deadline, penetration, jacobian,
            error, joints, coordinates, q,
        )  # fmt: skip
        if outcome != GOING_ON:
            break
        method_step(
            method, tree, task, collision, joints, targets, q, jacobian, error, cost, mu, min_damping2,
            primary_rows, work, space, constraint, step, candidate,
        )  # fmt: skip
        evaluate_task(tree, task, targets, candidate, candidate_space, candidate_error, candidate_norms)
        candidate_cost = _cost(candidate_error, primary_rows)
        used, since_checkpoint = used + 1, since_checkpoint + 1
        moved, candidate_penetration = _accept_step(
            collision, candidate_space, cost, penetration, candidate_cost, primary_rows, candidate_norms, task
        )
        if not moved and method is not None and method == CCD:  # (a whole sweep found nothing better)
            outcome = STUCK
            break
        mu, growth = _next_damping(mu, growth, moved)
        if moved:
            _take_candidate(candidate, candidate_norms, q, norms)
            for r in range(rows.shape[0]):
                error[r] = candidate_error[r]
            checkpoint_cost, since_checkpoint = _stall_checkpoint(
                checkpoint_cost, since_checkpoint, candidate_cost, candidate_penetration < penetration
            )
            cost, penetration = candidate_cost, candidate_penetration
            within = _within_tolerance(norms, tolerances, rows, rows.shape[0])
            space, candidate_space = candidate_space, space  # (the candidate's evaluation is q's now)
    outcome = _verdict(outcome, blocked, space)
    if outcome == CONVERGED:
        used += posture_refinement(
            tree, task, collision, joints, posture, targets, min_damping2, seed, tuning[MAX_JOINT_MOVE],
            _posture_budget(method, primary_rows, max_iterations - used), deadline, q, norms,
        )  # fmt: skip
    return outcome, used
