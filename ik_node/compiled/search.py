"""The restart search: :func:`search_in` (one target: one loop, its rules named: the attempts
from each start, the ranking of their ends by solve type, the stop rule, the report) and
:func:`search_many` (a batch, without the GIL: the entry from Python, for one target too), in the
work arrays of a :func:`search_context`. Where each attempt starts is :mod:`.restarts`' (the seed
table's nearest entries: :mod:`.table_search`); the continuation, :mod:`.continuation`'s."""

from __future__ import annotations

import math

import numpy as np

from .attempt import attempt_workspace, run_attempt
from .bundles import (
    ANSWERS_IN_COLLISION,
    ATTEMPTS,
    ATTEMPTS_MADE,
    BEST_OUTCOME,
    CANDIDATE_EVALUATION,
    CANDIDATES_FOUND,
    CELL_STARTS,
    COLLISION,
    CONTACT,
    CONTINUATION_DUE,
    CONTINUING,
    CONVERGED,
    COORDINATES,
    DEADLINE,
    DEADLINE_HIT,
    DEADLINE_REACHED,
    DISTANCE,
    EVALUATION,
    FEATURE_SPEC,
    FOUND_IN_COLLISION,
    FRAME_LINKS,
    FRAMES,
    GRAM,
    ITERATIONS_SPENT,
    ITERATIONS_USED,
    JACOBIAN,
    JOINT_MOVE,
    LIMB_FEATURES,
    MANIPULABILITY,
    MAX_ATTEMPTS,
    MAX_ITERATIONS,
    MAX_JOINT_MOVE,
    MAX_TARGET_DISTANCE,
    MIN_DAMPING,
    NO_DEADLINE,
    ORTHONORMAL_TOLERANCE,
    OUTCOME,
    PAIRS,
    PASSED_OVER,
    POINTS,
    POSES,
    RANDOM_SEED,
    SEED_NOT_FINITE,
    SOLUTION,
    STARTS_SKIPPED,
    STATE_SLOTS,
    STEP_WORK,
    TABLE_Q,
    TARGET_NOT_USABLE,
    TIP_FEATURES,
    TIP_FRAMES,
    WEIGHT,
)
from .contacts import clear_contacts, contacts
from .context import new_context, record_fields
from .continuation import attempt_in_pieces
from .fitting import fit_workspace
from .jit import allocating_kernel, batch_kernel, inline_kernel, inner_kernel, kernel, monotonic_ns
from .joints import _usable_seed, largest_move, nearest_turn, seed_displacement
from .linalg import manipulability
from .restarts import PARTIAL_RESTARTS, first_start, next_start
from .spatial import forward_kinematics
from .table_search import EVERY_CELL_UP_TO, PROBED_CELLS, TABLE_RESTARTS
from .tasks import POSE_OK, check_poses, jacobian_at, tip_points

#: Solutions compared before the one with the smallest largest move is returned, when none moves
#: less than ``max_joint_move`` (the budget ends the comparison earlier).
NEAR_CANDIDATES = 16
#: Answers in collision an attempt without the pairs may find before attempts keep them (see
#: :func:`search_in`): another start often finds another, collision-free, branch quicker.
COLLIDING_ANSWERS = 4
#: Restarts in collision passed over per search at most (each costs an FK and the pairs'
#: distances, ~1-5 us); past that, colliding restarts are tried as they come.
SKIPPED_STARTS = 1000
#: Slots of :func:`search_workspace` (the search's state at ``STATE``).
(
    CLIPPED, START, ATTEMPT_Q, TARGET_FEATURES, SEED_FEATURES, DRAWS, DISPLACEMENT, DISTANCES, NEAREST,
    NEAREST_DISTANCE, NORMS, ATTEMPT_SPACE, CELL_DISTANCES, PROBED, PROBED_DISTANCE, KEEP, LIMB_TARGET,
    LIMB_DISTANCES, LIMB_CHOSEN, PIECES_SPACE, FIT_SPACE, STATE,
) = range(22)  # fmt: skip


@inner_kernel
def penetration_at(tree, collision, q, space):
    """The collision pairs' penetration (summed overlap [m], 0 when collision-free) at ``q``, in
    ``space`` (an :func:`~ik_node.compiled.tasks.evaluation_workspace`), measured at margin 0
    (the same value, less work); 0 without pairs, at no cost (``collision=None``: nothing
    compiled)."""
    if collision is None:
        return 0.0
    if collision[PAIRS].shape[0] == 0:
        return 0.0
    forward_kinematics(tree[FRAMES], tree[FRAME_LINKS], q, space[POSES])
    clear_contacts(collision, space[CONTACT])
    return contacts(collision, 0.0, space[POSES], space[CONTACT])


@inner_kernel
def _has_pairs(collision):
    """Whether ``collision`` (a feature switch: None without collision checks) has pairs."""
    if collision is None:
        return False
    return collision[PAIRS].shape[0] > 0


@kernel
def _score(tree, task, joints, q, seed, norms, converged, penetration, solve_type, displacement, workspace):
    """Rank of an attempt's end (lower is better): converged ones first (``(0, x)``), by solve
    type (``speed``, ``solve_type=None``: 0, and nothing else compiled; ``distance``: the
    weighted norm of the move, see below;
    ``manipulability``: ``-sqrt(det(J J^T))``, Yoshikawa 1985); unconverged ones by their summed
    error norms, collision-free ones (``(1, x)``) before those in collision (``(1.5, x)``).

    ``distance`` is ``sum_j d_j^2 / w_j`` over the tangent coordinates with ``w_j > 0``
    (:func:`seed_displacement` ``d`` from the seed): the norm ``dq^T W^-1 dq`` that the damped step
    ``dq = W J^T (J W J^T + lambda^2 I)^-1 e`` minimises among the moves with ``J dq = e`` (as
    ``lambda -> 0``; the weighted least-norm solution), so a stronger joint (larger ``w``, which
    the step moves more) costs less to move. A locked joint (``w = 0``) stays at the seed: no
    term. ``workspace``: an :func:`~ik_node.compiled.attempt.attempt_workspace` not in use."""
    if not converged:
        return (1.0 if penetration <= 0.0 else 1.5), norms.sum()
    if solve_type is None:
        return 0.0, 0.0
    if solve_type == DISTANCE:
        seed_displacement(tree, joints, seed, q, displacement)
        value = 0.0
        for j in range(joints.shape[0]):
            weight = joints[j, WEIGHT]
            if weight > 0.0:
                value += displacement[j] * displacement[j] / weight
        return 0.0, value
    if solve_type == MANIPULABILITY:
        space, jacobian, work = workspace[EVALUATION], workspace[JACOBIAN], workspace[STEP_WORK]
        forward_kinematics(tree[FRAMES], tree[FRAME_LINKS], q, space[POSES])
        tip_points(space[POSES], task, space[POINTS])
        jacobian_at(tree, task, space, jacobian)
        return 0.0, -manipulability(jacobian, work[GRAM], work[SOLUTION])
    return 0.0, 0.0


@inline_kernel
def search_workspace(tree, task, joints, table, collision, nq):
    """Work arrays of :func:`search_in` for ``nq`` configuration coordinates, made once per solver
    or batch slice in its :func:`search_context` and used by every search there: (the clipped seed,
    the next start, the attempt's q (nq,) each; the target's and the seed's features (F,); draws
    and displacement (nv,); the probed cells' entries' distances (P times the largest cell); the
    nearest entries (K,) int and their distances (K,); norms (T, 2); the attempts'
    :func:`~ik_node.compiled.attempt.attempt_workspace`; the index's cell distances (C,), the
    probed cells (P,) int and their distances (P,); the coordinates a partial restart keeps (nv,)
    bool; a limb's features (12,), the table's distances from them (S,) and the entries ranked
    nearest (``PARTIAL_RESTARTS``,) int with their distances; the continuation's pieces space; the
    free base's :func:`~ik_node.compiled.fitting.fit_workspace`; the search's state
    (``STATE_SLOTS``,) int, slot ``STATE``). Their size does not grow with the table's. A search
    writes each before it reads it.

    Inlined into :func:`search_context`, its one caller, which counts references (so these arrays
    may be made there). Not for a caller without reference counting."""
    features, table_size, dof = table[FEATURE_SPEC].shape[0], table[TABLE_Q].shape[0], joints.shape[0]
    cell_starts = table[CELL_STARTS]
    tips = task[TIP_FRAMES].shape[0]
    cells = cell_starts.shape[0] - 1
    restarts = min(TABLE_RESTARTS, table_size)
    probed = cells if table_size <= EVERY_CELL_UP_TO else min(PROBED_CELLS, cells)
    largest_cell = 0
    for cell in range(cells):
        largest_cell = max(largest_cell, cell_starts[cell + 1] - cell_starts[cell])
    return (
        np.empty(nq),  # CLIPPED
        np.empty(nq),  # START
        np.empty(nq),  # ATTEMPT_Q
        np.empty(features),  # TARGET_FEATURES
        np.empty(features),  # SEED_FEATURES
        np.empty(dof),  # DRAWS
        np.empty(dof),  # DISPLACEMENT
        np.empty(probed * largest_cell),  # DISTANCES
        np.empty(restarts, dtype=np.int64),  # NEAREST
        np.empty(restarts),  # NEAREST_DISTANCE
        np.empty((tips, 2)),  # NORMS
        attempt_workspace(tree, task, collision, dof, nq),  # ATTEMPT_SPACE
        np.empty(cells),  # CELL_DISTANCES
        np.empty(probed, dtype=np.int64),  # PROBED
        np.empty(probed),  # PROBED_DISTANCE
        np.empty(dof, dtype=np.bool_),  # KEEP
        np.empty(TIP_FEATURES),  # LIMB_TARGET
        np.empty(table[LIMB_FEATURES].shape[2]),  # LIMB_DISTANCES
        (np.empty(PARTIAL_RESTARTS, dtype=np.int64), np.empty(PARTIAL_RESTARTS)),  # LIMB_CHOSEN
        (  # PIECES_SPACE
            np.empty((tips, 4, 4)),  # PIECES_SEED_POINTS
            np.empty((tips, 4, 4)),  # PIECES_TARGETS
            np.empty((3, 3)),  # PIECES_RELATIVE
            np.empty(3),  # PIECES_ROTATION_VECTOR
        ),
        fit_workspace(tips),  # FIT_SPACE
        np.empty(STATE_SLOTS, dtype=np.int64),  # STATE
    )


@inline_kernel
def _attempt_from_start(
    attempt_space, pieces_space, tree, task, joints, targets, tuning, method, solve_type, posture,
    collision, seed, primary_rows, deadline, start, state, q, norms, displacement,
):  # fmt: skip
    """One attempt from ``start`` (:func:`~.continuation.attempt_in_pieces`: the continuation
    while ``state[CONTINUING]``), its end into ``q`` and ``norms``, counted in ``state``. Returns
    (outcome, the penetration of its end: :func:`penetration_at`, 0 when converged), or
    (``PASSED_OVER``, 0) for a start passed over. Inlined at its one call site, with the one
    inlined copy of :func:`~.continuation.attempt_in_pieces`.

    With collision pairs, restarts in collision (table entries and random configurations, not
    the first start nor the continuation) are passed over (``SKIPPED_STARTS`` per search at most),
    and attempts are first run without the pairs (``collision=None``: an IK search's path need
    not be collision-free, only its answer), their answers measured. A collision-free answer
    counts as converged; one in collision ends its attempt as ``COLLISION`` (``FOUND_IN_COLLISION``),
    until ``COLLIDING_ANSWERS`` such answers: that attempt runs again from its start with the
    collision rows and the acceptance rule of :func:`run_attempt` (counted once, its iterations
    both times), as do all after it. ``displacement`` (nv,): work space."""
    max_joint_move = tuning[MAX_JOINT_MOVE]
    attempt_tuning = (  # (tuning, with run_attempt's posture bound: with speed only)
        tuning[MIN_DAMPING],  # MIN_DAMPING
        tuning[MAX_ITERATIONS],  # MAX_ITERATIONS
        tuning[MAX_ATTEMPTS],  # MAX_ATTEMPTS
        tuning[RANDOM_SEED],  # RANDOM_SEED
        max_joint_move if solve_type is None else 0.0,  # MAX_JOINT_MOVE
    )
    continuing = state[CONTINUING] == 1
    if (
        state[ATTEMPTS_MADE] > 0
        and not continuing
        and state[STARTS_SKIPPED] < SKIPPED_STARTS
        and penetration_at(tree, collision, start, attempt_space[CANDIDATE_EVALUATION]) > 0.0
    ):
        state[STARTS_SKIPPED] += 1
        return PASSED_OVER, 0.0
    # (the continuation keeps the pairs apart: one inlined copy of it, for the compile's sake)
    unchecked = _has_pairs(collision) and state[ANSWERS_IN_COLLISION] < COLLIDING_ANSWERS and not continuing
    for i in range(seed.shape[0]):
        q[i] = start[i]
    if unchecked:
        outcome, used = run_attempt(
            attempt_space, tree, task, joints, targets, attempt_tuning, method, posture, None, seed,
            primary_rows, deadline, q, norms,
        )  # fmt: skip
    else:
        outcome, used = attempt_in_pieces(
            continuing, attempt_space, pieces_space, tree, task, joints, targets, attempt_tuning, method,
            posture, collision, seed, primary_rows, max_joint_move, deadline, q, norms, displacement,
        )  # fmt: skip
    state[ITERATIONS_SPENT] += used
    penetration = -1.0  # (not measured yet)
    if unchecked and outcome == CONVERGED:
        penetration = penetration_at(tree, collision, q, attempt_space[CANDIDATE_EVALUATION])
    if penetration > 0.0:
        state[ANSWERS_IN_COLLISION] += 1
        state[FOUND_IN_COLLISION] = 1
        outcome = COLLISION
        if state[ANSWERS_IN_COLLISION] == COLLIDING_ANSWERS:  # again, keeping the pairs apart
            for i in range(seed.shape[0]):
                q[i] = start[i]
            outcome, used = run_attempt(
                attempt_space, tree, task, joints, targets, attempt_tuning, method, posture, collision,
                seed, primary_rows, deadline, q, norms,
            )  # fmt: skip
            state[ITERATIONS_SPENT] += used
            penetration = -1.0
    state[ATTEMPTS_MADE] += 1
    if outcome == COLLISION:
        state[FOUND_IN_COLLISION] = 1
    if outcome == CONVERGED:
        return outcome, 0.0
    if penetration < 0.0:
        penetration = penetration_at(tree, collision, q, attempt_space[CANDIDATE_EVALUATION])
    return outcome, penetration


@inline_kernel
def _rank_end(
    tree, task, joints, seed, q, norms, outcome, penetration, solve_type, max_joint_move, attempt_space,
    state, displacement,
):  # fmt: skip
    """Acceptance: the (rank, value) of an attempt's end (``q``, ``norms``, ``outcome``,
    ``penetration``: :func:`_attempt_from_start`); the search keeps the least, the first among
    equals. :func:`_score`'s, except: a continuation that did not converge never counts (rank 3:
    its q and norms may be a piece's, not the targets'); a start passed over neither (infinite).

    With ``max_joint_move`` > 0 [rad or m] and ``speed``, a solution's value is its largest
    move from the seed (:func:`largest_move`; ``CANDIDATES_FOUND`` counts them), so that the
    search keeps the solution with the smallest largest move (ssik's criterion); with other solve
    types, a solution beyond ``max_joint_move`` ranks 0.5: after every solution within it, before
    any unconverged end. ``attempt_space``: an attempt workspace not in use; ``displacement``
    (nv,): work space."""
    if outcome == PASSED_OVER:
        return math.inf, 0.0
    converged = outcome == CONVERGED
    rank, value = _score(
        tree, task, joints, q, seed, norms, converged, penetration, solve_type, displacement, attempt_space
    )
    if state[CONTINUING] == 1 and not converged:
        rank = 3.0
    if converged and solve_type is None and max_joint_move > 0.0:
        value = largest_move(tree, joints, q, seed, displacement)
        state[CANDIDATES_FOUND] += 1
    elif (
        converged
        and max_joint_move > 0.0
        and largest_move(tree, joints, q, seed, displacement) > max_joint_move
    ):
        rank = 0.5
    return rank, value


@inline_kernel
def _stops(outcome, value, solve_type, max_joint_move, max_attempts, deadline, state):
    """The stop rule, after each start (``outcome`` and ``value``: its end's, see
    :func:`_rank_end`): an attempt ended by the deadline [ns], or the clock past it
    (``DEADLINE_HIT``); with ``speed``, a solution within ``max_joint_move`` (when > 0), or
    ``NEAR_CANDIDATES`` solutions beyond it; ``max_attempts`` attempts (< 0: unbounded). Other
    solve types compare every solution until the deadline or ``max_attempts``."""
    if outcome != PASSED_OVER:
        if outcome == DEADLINE:
            state[DEADLINE_HIT] = 1
            return True
        solution = outcome == CONVERGED and solve_type is None
        if solution and (max_joint_move <= 0.0 or value <= max_joint_move):
            return True
        if solution and max_joint_move > 0.0 and state[CANDIDATES_FOUND] >= NEAR_CANDIDATES:
            return True
        if max_attempts >= 0 and state[ATTEMPTS_MADE] >= max_attempts:
            return True
    if deadline != NO_DEADLINE and monotonic_ns() >= deadline:
        state[DEADLINE_HIT] = 1
        return True
    return False


@inline_kernel
def _report(tree, joints, seed, max_joint_move, state, displacement, q_out):
    """The search's outcome, from its best end (``q_out``; ``state[BEST_OUTCOME]``), whose joints
    that turn freely are put at the turn nearest the seed (:func:`nearest_turn`): ``COLLISION``
    when none converged and some attempt found the tips within tolerance only in collision
    (``FOUND_IN_COLLISION``); ``JOINT_MOVE`` for a solution that moves a joint farther than
    ``max_joint_move`` (> 0) from the seed (:func:`largest_move`: none within it was found).
    ``displacement`` (nv,): work space."""
    coordinates = tree[COORDINATES]
    for j in range(joints.shape[0]):
        c = coordinates[j]
        if c >= 0:
            q_out[c] = nearest_turn(q_out[c], seed[c], joints[j])
    outcome = state[BEST_OUTCOME]
    if state[FOUND_IN_COLLISION] == 1 and outcome != CONVERGED:
        return COLLISION
    if outcome == CONVERGED and max_joint_move > 0.0:
        if largest_move(tree, joints, q_out, seed, displacement) > max_joint_move:
            return JOINT_MOVE
    return outcome


@kernel
def search_in(
    context, targets, seed, deadline, primary_rows, q_out, norms_out, tuning, method, solve_type, posture,
    collision,
):  # fmt: skip
    """Attempts (:func:`~ik_node.compiled.attempt.run_attempt`) from restarts until the stop rule
    ends the search; the best end goes to ``q_out`` and ``norms_out``. Returns (outcome,
    iterations, attempts, deadline reached): the outcome is :func:`_report`'s, or
    ``TARGET_NOT_USABLE`` for a target that is no rigid pose (:func:`check_poses`: one check for
    every caller, without a call of its own), ``SEED_NOT_FINITE`` for a seed with NaN, infinity
    or a zero quaternion. The seed is clipped into the limits, its quaternions normalised.

    One loop (the shape of Robotics Toolbox's ``_IK_loop``), its rules named: the first start
    (:func:`~.restarts.first_start`); from each start an attempt (:func:`_attempt_from_start`),
    its acceptance (:func:`_rank_end`; the least (rank, value) so far is kept), the stop rule
    (:func:`_stops`: a solution with ``speed``, the deadline [ns], ``max_attempts``) and the next
    start (:func:`~.restarts.next_start`); the report. They share ``state`` (:mod:`.bundles`'
    slots ``ATTEMPTS_MADE`` ... ``NEXT_ENTRY``) and are inlined, one call site each (a kernel of
    its own would compile its callees once more), given the arrays they use rather than the whole
    ``workspace``; ``table_search``: the targets' features (F,),
    :func:`~.table_search.probe_table`'s and :func:`~.table_search.rank_probed`'s arrays.

    ``primary_rows`` > 0: task priority in every attempt (see :func:`run_attempt`; with
    ``max_attempts`` 1, one attempt from the seed). ``max_joint_move`` > 0 [rad or m] (no branch
    flips): a solution that moves a joint farther from the seed never counts as converged.
    ``method``, ``solve_type``, ``posture``, ``collision``: the feature switches (see
    :mod:`.bundles`; None: ``dls``, ``speed``, no posture, no collision checks). ``context``:
    :func:`search_context`'s (the bundles and the :func:`search_workspace`), its fields borrowed
    (:func:`~.context.record_fields`: no reference counted per call).
    """
    tree, task, joints, table, workspace = record_fields(context)
    max_attempts, max_joint_move = tuning[MAX_ATTEMPTS], tuning[MAX_JOINT_MOVE]
    clipped, start, q = workspace[CLIPPED], workspace[START], workspace[ATTEMPT_Q]
    target_features, seed_features = workspace[TARGET_FEATURES], workspace[SEED_FEATURES]
    draws, displacement, distances = workspace[DRAWS], workspace[DISPLACEMENT], workspace[DISTANCES]
    nearest, nearest_distance, norms = workspace[NEAREST], workspace[NEAREST_DISTANCE], workspace[NORMS]
    attempt_space, cell_distances = workspace[ATTEMPT_SPACE], workspace[CELL_DISTANCES]
    probed, probed_distance = workspace[PROBED], workspace[PROBED_DISTANCE]
    keep, limb_target, limb_distances = workspace[KEEP], workspace[LIMB_TARGET], workspace[LIMB_DISTANCES]
    limb_chosen = workspace[LIMB_CHOSEN]
    pieces_space, fit_space, state = workspace[PIECES_SPACE], workspace[FIT_SPACE], workspace[STATE]
    if check_poses(targets, MAX_TARGET_DISTANCE, ORTHONORMAL_TOLERANCE) != POSE_OK:
        return TARGET_NOT_USABLE, 0, 0, False
    if not _usable_seed(tree, joints, seed, displacement, clipped):
        return SEED_NOT_FINITE, 0, 0, False
    seed = clipped
    table_search = (  # (PROBE_TARGET_FEATURES ... PROBE_NEAREST_DISTANCE)
        target_features, cell_distances, probed, probed_distance, distances, nearest, nearest_distance,
    )  # fmt: skip
    evaluation = attempt_space[EVALUATION]
    restart_space = (  # (RESTART_DRAWS ... RESTART_FIT)
        draws, keep, limb_target, limb_distances, limb_chosen, evaluation, fit_space,
    )  # fmt: skip
    first_start(tree, task, table, targets, seed, evaluation, table_search, state, start, seed_features)
    if max_joint_move > 0.0 and primary_rows == 0:
        state[CONTINUATION_DUE] = 1
    best_rank, best_value = 2.0, 0.0  # (above every end's rank but a failed continuation's)
    while True:
        outcome, penetration = _attempt_from_start(
            attempt_space, pieces_space, tree, task, joints, targets, tuning, method, solve_type, posture,
            collision, seed, primary_rows, deadline, start, state, q, norms, displacement,
        )  # fmt: skip
        rank, value = _rank_end(
            tree, task, joints, seed, q, norms, outcome, penetration, solve_type, max_joint_move,
            attempt_space, state, displacement,
        )  # fmt: skip
        if rank < best_rank or (rank == best_rank and value < best_value):
            best_rank, best_value = rank, value
            state[BEST_OUTCOME] = outcome
            for i in range(seed.shape[0]):
                q_out[i] = q[i]
            for tip in range(norms.shape[0]):
                norms_out[tip, 0], norms_out[tip, 1] = norms[tip, 0], norms[tip, 1]
        if _stops(outcome, value, solve_type, max_joint_move, max_attempts, deadline, state):
            break
        next_start(
            tree, task, joints, table, targets, seed, tuning, solve_type, outcome, q, norms, restart_space,
            table_search, state, start,
        )  # fmt: skip
    outcome = _report(tree, joints, seed, max_joint_move, state, displacement, q_out)
    return outcome, state[ITERATIONS_SPENT], state[ATTEMPTS_MADE], state[DEADLINE_HIT] == 1


@allocating_kernel
def search_context(tree, task, joints, table, collision, nq):
    """A :mod:`~.context` record of the bundles ``tree``, ``task``, ``joints``, ``table`` and a
    :func:`search_workspace` for ``nq`` configuration coordinates (and ``collision``'s pairs):
    what :func:`search_many` takes, made once per solver (and per batch slice) and used by every
    call, the work arrays included."""
    workspace = search_workspace(tree, task, joints, table, collision, nq)
    return new_context(tree, task, joints, table, workspace)


@batch_kernel
def search_many(
    context, targets, seeds, timeout_ns, deadline, primary_rows, q_out, norms_out, results, tuning, method,
    solve_type, posture, collision,
):  # fmt: skip
    """:func:`search_in` for each of N targets (N, T, 4, 4) from its seed (N, nq), in turn, in
    ``context`` (:func:`search_context`: the bundles and the work arrays, one context per thread),
    without the GIL (:meth:`IKSolver.solve_many` runs slices of a batch on several threads, each
    with a context of its own; :meth:`IKSolver.solve` one target: one compiled entry for both).
    Each target's deadline [ns] is ``deadline`` (``NO_DEADLINE``: none), or ``timeout_ns`` after
    its own start when that comes first (< 0: none). ``results`` (N, ``RESULT_COLUMNS``) receives
    each search's outcome, iterations, attempts and whether the deadline ended it; the other
    arguments are :func:`search_in`'s."""
    for index in range(targets.shape[0]):
        target_deadline = deadline
        if timeout_ns >= 0:
            target_deadline = min(deadline, monotonic_ns() + timeout_ns)
        outcome, iterations, attempts, deadline_reached = search_in(
            context, targets[index], seeds[index], target_deadline, primary_rows, q_out[index],
            norms_out[index], tuning, method, solve_type, posture, collision,
        )  # fmt: skip
        results[index, OUTCOME] = outcome
        results[index, ITERATIONS_USED] = iterations
        results[index, ATTEMPTS] = attempts
        results[index, DEADLINE_REACHED] = deadline_reached
