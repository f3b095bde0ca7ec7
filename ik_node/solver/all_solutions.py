"""Every IK solution of a goal, :meth:`IKSolver.solve_all <ik_node.solver.IKSolver.solve_all>`.

Where the chain decomposes (:mod:`.closed_form`: one tip controlling its full pose, six free
revolute joints whose axes are within ``NEAR_TOLERANCE`` of a spherical wrist or of three
parallel axes), every branch comes from the compiled subproblem kernels: as they are where the
axes are exact, else as seeds that the solver's own Levenberg–Marquardt solve polishes on the real
tree (each branch is then exact on the URDF, not on its nominal geometry). The set is then
*complete* (a polished one unless it comes near a singularity, where the real arm's branches may
differ from the nominal's). Elsewhere (other chains, 5 or 7 free joints, several tips, partial
tasks), single attempts of :meth:`~ik_node.solver.IKSolver.solve` from the seed, then from random
seeds, collect distinct solutions within the time budget: ``complete=False`` (for a redundant arm,
samples of its families of solutions).

Every solution is within the limits and verified by FK (position and orientation errors below the
tip task's tolerances). A joint with limits wider than 2π gives every ``θ + 2πk`` inside them as
its own solution; a continuous joint gives one, the one nearest the seed (else in (−π, π]).
Solutions equal within :data:`DUPLICATE_TOLERANCE` are one. Units: rad, m; joint order
``solver.joint_names``; poses ``T_base_point`` (4x4) of the tip's controlled point.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from ..compiled import solution_sets
from ..compiled.decompositions import MAX_BRANCHES
from ..compiled.jit import cache_is_cold, compiled_entry
from ..compiled.solution_sets import (
    DUPLICATE_TOLERANCE,
    LIMIT_SLACK,
    SET_COLUMNS,
)
from ..compiled.subproblems import FREE, LEAST_SQUARES
from ..errors import IKNodeError, UnknownJointError
from . import kernels
from .closed_form import Branches, ClosedForm, branch_labels, decompose
from .inputs import c_array, check_pose, check_seconds, point_target, pose_matrix, seed_vector
from .results import IKResult, IKSolutions, outcome_reason

__all__ = [
    "DUPLICATE_TOLERANCE",
    "SolutionCaches",
    "chain_closed_form",
    "has_closed_form",
    "say_if_cold",
    "solution_set_arrays",
    "solve_all",
    "solve_nearest",
]

_log = logging.getLogger("ik_node.solver")
#: A C-contiguous float 4x4's shape and strides [bytes], and a float vector's strides (what the
#: compiled set takes as it is).
_FLOAT, _POSE_SHAPE, _POSE_STRIDES, _FLOAT_STRIDES = np.dtype(float), (4, 4), (32, 8), (8,)
_NOTHING_LOCKED, _UNMADE = ((), None), object()
_notice_said = False
_looked_up: set = set()  # (the kernels whose cache was looked at)

#: Said (``logging`` warning) before ``solve_all`` compiles its kernels, once per process.
COMPILE_NOTICE = (
    "compiling the closed-form IK kernels solve_all uses (once per install: about 27 s on 2 cores; "
    "later runs load them from the cache)"
)
#: A polished branch is given this share of ``solve_all``'s budget at least [s] (the LM solve
#: from a seed 1e-4 away converges in a few iterations, ~50 µs).
POLISH_TIMEOUT = 0.002
#: The tolerance [m, rad] a polishing solve aims at (the smallest the options allow).
POLISH_TOLERANCE = 1e-9
#: A polished branch farther than this from its seed in some joint [rad, m] is another branch.
POLISH_REACH = 0.1
#: A nominal least-squares branch within this many times the geometry's deviation (times the
#: arm's length, for positions) of the goal on the real tree may be a branch that the real arm has
#: and the snapped geometry lost (near an elbow or wrist singularity): the snapping moves the tip
#: by about the deviation times the arm's length.
NEAR_LEAST_SQUARES = 10.0
#: A search's single solves last at most this [s] each (then a new random seed).
SEARCH_SOLVE_TIMEOUT = 0.005
#: Sets of locked joints (and values) whose closed form, checks and helper solvers a solver
#: keeps (:func:`per_locked_joints`).
LOCKED_SETS_KEPT = 32
#: ``solve_all``'s budget [s] (polishing a calibrated arm's branches) when a ``solve`` with
#: ``solve_type='distance'`` on a chain with a closed form has no timeout.
SOLVE_ALL_TIMEOUT = 0.05


class SolutionCaches:
    """What :func:`solve_all` and the closed form keep for one solver (its attribute
    ``solution_caches``), made at first use: per set of locked joints (keys of
    :func:`per_locked_joints`) the checked locked values (``locked_references``), the closed form
    (``closed_forms``), the helper solvers that polish and search (``helper_solvers``) and the
    compiled exact sets (``exact_sets``); and the solution set's arrays (``set_arrays``,
    :func:`solution_set_arrays`). A copy of the solver (pickled) starts with empty caches."""

    __slots__ = ("locked_references", "closed_forms", "helper_solvers", "exact_sets", "set_arrays")

    def __init__(self):
        self.locked_references: dict = {}
        self.closed_forms: dict = {}
        self.helper_solvers: dict = {}
        self.exact_sets: dict = {}
        self.set_arrays: tuple | None = None

    def __reduce__(self):
        return (SolutionCaches, ())


def per_locked_joints(cache: dict, key, make):
    """What ``make()`` returns, kept in ``cache`` (one of a :class:`SolutionCaches`' dicts) for
    ``key`` (a set of locked joints and their values), made at the first use of ``key``; the
    :data:`LOCKED_SETS_KEPT` keys made last are kept (a path that moves a locked joint makes a new
    key at each step)."""
    if key not in cache:
        if len(cache) >= LOCKED_SETS_KEPT:
            del cache[next(iter(cache))]  # (the oldest: dicts keep their insertion order)
        cache[key] = make()
    return cache[key]


def _locked_reference(solver, locked: Mapping | None) -> tuple[tuple, np.ndarray | None]:
    """``locked`` ({joint: value [rad, m]}) checked (a known joint, a finite value inside its
    limits: else :class:`IKNodeError` naming the joint and its range) as a sorted key, and the
    reference configuration: the locked values, 0 elsewhere (None: nothing locked); checked once
    per set of values as given (:func:`per_locked_joints`: a path that keeps them looks them up)."""
    if not locked:
        return _NOTHING_LOCKED
    given = tuple(locked.items())
    try:
        return solver.solution_caches.locked_references[given]  # (the values seen before)
    except (KeyError, TypeError):  # (new values, or one of an unhashable type: a 0-d array)
        pass
    items = []
    for name, value in given:
        try:
            items.append((name, float(value)))
        except (TypeError, ValueError):
            raise IKNodeError(f"locked value for joint '{name}' must be a number, got {value!r}") from None
    items = tuple(sorted(items))
    try:
        hash(given)
    except TypeError:
        given = items
    references = solver.solution_caches.locked_references
    return per_locked_joints(references, given, lambda: _checked_locked(solver, items))


def _checked_locked(solver, items: tuple) -> tuple[tuple, np.ndarray]:
    """:func:`_locked_reference` of the sorted ``items`` ((joint, value) pairs)."""
    reference = np.zeros(len(solver.joint_names))
    for name, value in items:
        if name not in solver.joint_names:
            raise UnknownJointError(name, solver.joint_names, what="joint to lock")
        index = solver.joint_names.index(name)
        low, high = solver.lower[index], solver.upper[index]
        if not (math.isfinite(value) and low - LIMIT_SLACK <= value <= high + LIMIT_SLACK):
            raise IKNodeError(f"locked value {value} for joint '{name}' is outside its range [{low}, {high}]")
        reference[index] = value
    return items, reference


def periodic_coordinates(solver) -> np.ndarray:
    """Which configuration coordinates (bools, n) are revolute angles (revolute and continuous
    joints: equal up to 2π)."""
    return np.array(
        [
            joint.type in ("revolute", "continuous") and len(joint.coordinate_names) == 1
            for joint in solver.tree.joints
            for _ in joint.coordinate_names
        ],
        dtype=bool,
    )


def solution_set_arrays(solver) -> tuple:
    """What :func:`~ik_node.compiled.solution_sets.solution_set` needs of ``solver`` besides the
    candidates, target, tolerances and seed, made once per solver: the tree's frames, the first
    tip's frame and controlled point [m], the limits, which joints are revolute and continuous,
    and the seed distance's factors ``1 / w_j`` (0 for a locked joint, ``w_j = 0``): its
    ``Σ (q_j − s_j)² / w_j`` is the solver's own metric (``solve_type='distance'``)."""
    caches = solver.solution_caches
    arrays = caches.set_arrays
    if arrays is None:
        tree, tip = solver.tree, solver.tip_links[0]
        arrays = (
            tree.frames, tree.frame_links, np.int64(tree.frame_index(tip)),
            np.array(solver.tasks[tip].offset, dtype=float), solver.lower, solver.upper,
            periodic_coordinates(solver), np.ascontiguousarray(solver.continuous),
            _inverse_weights(solver.joint_weights),
        )  # fmt: skip
        caches.set_arrays = arrays
    return arrays


def _inverse_weights(weights) -> np.ndarray:
    """``1 / w`` where ``w > 0``, else 0 (a locked joint stays at the seed: no term)."""
    weights = np.asarray(weights, dtype=float)
    return np.divide(1.0, weights, out=np.zeros_like(weights), where=weights > 0)


def _seed_and_weights(solver, seed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The seed and the distance's weights as the compiled solution set takes them (zeros for
    both without a seed: no order)."""
    if seed is None:
        return (solution_set_arrays(solver)[-1] * 0.0,) * 2
    return seed, solution_set_arrays(solver)[-1]


def solution_set(solver, candidates, status, target, seed, tolerances) -> tuple:
    """:func:`~ik_node.compiled.solution_sets.solution_set` of ``candidates`` (k, n) for
    ``target`` (4x4, C-contiguous): ``(q (m, n), origin (m,), errors (k, 2), success)``, ordered
    nearest ``seed`` (n,) if given. ``tolerances``: (position [m], orientation [rad])."""
    frames, links, tip_frame, offset, lower, upper, periodic, continuous, _ = solution_set_arrays(solver)
    return solution_sets.solution_set(
        frames, links, tip_frame, offset, target, np.ascontiguousarray(candidates, dtype=float),
        np.ascontiguousarray(status, dtype=np.int64), np.array(tolerances, dtype=float), lower, upper,
        periodic, continuous, *_seed_and_weights(solver, seed),
    )  # fmt: skip


def _tool_pose(solver):
    """``q -> T_base_point`` (4x4) of the first tip's controlled point."""
    return lambda q: solver.tip_poses(q)[0]


def say_if_cold(*entries) -> None:
    """Say :data:`COMPILE_NOTICE` once per process before one of the compiled ``entries`` would
    be compiled rather than loaded (a user never waits on a compile silently); each combination
    is looked up once (the cache's files: ~30 µs)."""
    global _notice_said
    if entries in _looked_up:
        return
    _looked_up.add(entries)
    if not _notice_said and any(cache_is_cold(entry) for entry in entries):
        _notice_said = True
        _log.warning(COMPILE_NOTICE)


def chain_closed_form(solver, key: tuple = (), reference: np.ndarray | None = None) -> ClosedForm | None:
    """The chain's :class:`ClosedForm` with the joints of ``key`` locked at their values in
    ``reference`` (default: none locked, the reference at 0) (None: no closed form), found once
    per key and solver. Only for one tip controlling its full pose."""

    def make() -> ClosedForm | None:
        task = solver.tasks[solver.tip_links[0]]
        if not (len(solver.tip_links) == 1 and all(task.mask)):
            return None
        locked = {solver.joint_names.index(name) for name, _ in key}
        free = [index for index in range(len(solver.joint_names)) if index not in locked]
        at = np.zeros(len(solver.joint_names)) if reference is None else reference
        return decompose(solver.tree, _tool_pose(solver), free, at)

    return per_locked_joints(solver.solution_caches.closed_forms, key, make)


def helper_solver(solver, key: tuple, **overrides):
    """A solver like ``solver`` whose joints of ``key`` have their limits closed on the locked
    values and whose options ``overrides`` replaces (tolerances reach only the tips whose task is
    a kind, not a :class:`~.options.TipTask`): what polishes and searches. Made once per key and
    overrides."""

    def make():
        options = solver.options
        lower, upper = dict(options.lower or {}), dict(options.upper or {})
        for name, value in key:
            lower[name], upper[name] = value, value
        options = replace(options, lower=lower, upper=upper, **overrides)
        return type(solver)(solver.robot, solver.tree.base_link, solver.tip_links, options)

    key_and_overrides = (key, tuple(sorted(overrides.items())))
    return per_locked_joints(solver.solution_caches.helper_solvers, key_and_overrides, make)


def _polished(solver, key: tuple, closed: ClosedForm, target, seed, deadline: float):
    """The branches of the nominal geometry ``closed`` for ``target`` (free joints of a singularity
    at ``seed``'s values) polished on the real tree: each, fitted into the limits,
    seeds the solver's LM solve (with ``key``'s joints locked, aiming at ``POLISH_TOLERANCE`` so
    that a polished branch is as exact as the closed form's), to be verified against the task's
    tolerances. Returns the polished :class:`Branches` and whether they are surely all: no
    nominal branch was singular or a least-squares one within ``NEAR_LEAST_SQUARES`` deviations
    of the goal (such a branch is polished too; the others, out of reach, stay as they are), and
    every polish reached the task's tolerances (one cut short by its budget, on a loaded machine
    say, stops short of its branch, which the check drops) and none moved farther than
    ``POLISH_REACH`` from its seed (near a singularity the real arm's branches split, merge or
    move far from the nominal's; a solve that wandered may have found another branch)."""
    polisher = helper_solver(  # (max_joint_move: a branch is wherever it is, not near the seed;
        solver,  # solve_type: 'distance' would polish through solve_all again)
        key,
        position_tolerance=POLISH_TOLERANCE,
        orientation_tolerance=POLISH_TOLERANCE,
        max_joint_move=None,
        solve_type="speed",
    )
    kept, rows = [], []
    branches = closed.branches(target, seed)
    unchecked = (np.inf, np.inf)  # (every branch, fitted into the limits)
    fitted, origin, errors, _ = solution_set(solver, branches.q, branches.status, target, None, unchecked)
    margin = NEAR_LEAST_SQUARES * closed.deviation
    near = (errors[:, 0] <= margin * closed.length) & (errors[:, 1] <= margin)
    least_squares = (branches.status & LEAST_SQUARES) != 0
    complete = not np.any(branches.status & FREE) and not np.any(least_squares & near)
    firsts = np.flatnonzero(np.r_[True, origin[1:] != origin[:-1]]) if len(origin) else origin
    for count, first in enumerate(firsts):
        index = int(origin[first])
        kept.append(index)
        if least_squares[index] and not near[index]:  # (out of reach: the nominal approach stays)
            rows.append(fitted[first])
            continue
        budget = max(POLISH_TIMEOUT, (deadline - time.perf_counter()) / (len(firsts) - count))
        result = polisher.solve(target, seed=fitted[first], timeout=budget)
        gap = np.abs(np.remainder(result.q - fitted[first] + np.pi, 2 * np.pi) - np.pi).max()
        rows.append(result.q)
        reached = (
            result.position_error <= solver.options.position_tolerance
            and result.orientation_error <= solver.options.orientation_tolerance
        )  # (a polish cut short of the task's tolerances drops its branch: the set is then unsure)
        complete &= bool(reached and gap <= POLISH_REACH)
    kept_rows = np.array(rows).reshape(-1, len(solver.joint_names))
    return Branches(kept_rows, branches.status[kept], branches.branch[kept], branches.root_names), complete


def _search(solver, key: tuple, targets, seed, deadline: float) -> tuple[np.ndarray, np.ndarray]:
    """Solutions found by restarts of ``solve`` until ``deadline`` (at least one solve): from
    ``seed`` (else the rest posture), then from random configurations inside the limits (seeded by
    the ``random_seed`` option). Returns the successful ``q`` (k, n) and their position [m] and
    orientation [rad] errors (k, 2)."""
    searcher = helper_solver(  # (the seeds: here; every solution, however far from the seed)
        solver, key, max_attempts=1, seed_table_size=0, max_joint_move=None
    )
    rng = np.random.default_rng(searcher.options.random_seed)
    low = np.where(np.isfinite(searcher.lower), searcher.lower, -np.pi)
    high = np.where(np.isfinite(searcher.upper), searcher.upper, np.pi)
    start, rows, errors = seed, [], []
    while True:
        budget = min(SEARCH_SOLVE_TIMEOUT, max(deadline - time.perf_counter(), 1e-4))
        result = searcher.solve(targets, seed=start, timeout=budget)
        if result.success:
            rows.append(result.q)
            errors.append((result.position_error, result.orientation_error))
        if time.perf_counter() >= deadline:
            break
        start = rng.uniform(low, high)
    return np.array(rows).reshape(-1, len(solver.joint_names)), np.array(errors).reshape(-1, 2)


def has_closed_form(solver) -> bool:
    """Whether :func:`solve_all` solves ``solver``'s chain in closed form (without locked joints),
    its solutions labelled with their branches: one tip controlling its full pose through six
    revolute joints that decompose (:func:`~.closed_form.decompose`; the tree read once per solver,
    nothing compiled). Elsewhere it searches, without labels."""
    return len(solver.tip_links) == 1 and chain_closed_form(solver) is not None


def solve_nearest(solver, targets, seed, timeout: float | None) -> IKResult | None:
    """:meth:`~ik_node.solver.IKSolver.solve` with ``solve_type='distance'`` where the chain has
    a closed form without locked joints: the solution nearest ``seed`` (default: the rest
    posture) in the solver's metric ``Σ (q_j − s_j)² / w_j`` among every solution (the first of
    :func:`solve_all` ordered from the seed, within ``timeout`` [s], None:
    ``SOLVE_ALL_TIMEOUT``), where the set is complete and reaches the goal; None elsewhere (no
    closed form: no search is run; a set that is not complete; an unreachable goal: the search
    answers). With ``max_joint_move``, one that moves a joint farther is no success
    (``reason='joint_move'``)."""
    start = time.perf_counter()
    if not has_closed_form(solver):
        return None
    seed = seed_vector(seed, solver.tree, solver.rest_posture)  # (solve_all clips it into the limits)
    found = solve_all(solver, targets, seed, timeout or SOLVE_ALL_TIMEOUT, None)
    if not (found.complete and found.success):
        return None
    q = found.q[0].copy()
    outcome = kernels.CONVERGED
    max_joint_move = solver.options.max_joint_move
    if max_joint_move is not None:
        clipped = np.clip(seed, solver.lower, solver.upper)
        if np.abs(solver.tree.difference(clipped, q)).max() > max_joint_move:
            outcome = kernels.JOINT_MOVE
    errors = (float(found.position_error[0]), float(found.orientation_error[0]))
    return IKResult(
        q=q,
        success=outcome == kernels.CONVERGED,
        position_error=errors[0],
        orientation_error=errors[1],
        iterations=0,
        elapsed=time.perf_counter() - start,
        reason=outcome_reason(outcome, False, [], solver.problem, None),
        tip_errors={solver.tip_links[0]: errors},
    )


def solve_all(solver, targets, seed=None, timeout: float = 0.05, locked: Mapping | None = None):
    """Every solution of ``targets`` within the limits (see the module's text): ``targets`` as
    :meth:`~ik_node.solver.IKSolver.solve` takes them, ``seed`` (array or mapping) orders them
    nearest first, ``timeout`` [s] bounds polishing and search, ``locked`` ({joint: value}) holds
    joints (a 7-joint chain with one locked is solved in closed form where the other six
    decompose)."""
    start = time.perf_counter()
    if not (type(timeout) is float and 0.0 < timeout < math.inf):  # (the common case first)
        check_seconds(timeout)
    key, reference = _locked_reference(solver, locked)
    if len(solver.tip_links) > 1:
        return _searched(solver, key, targets, seed, None, start + timeout, start)
    tip = solver.tip_links[0]
    pose = targets[tip] if type(targets) is not np.ndarray and isinstance(targets, Mapping) else targets
    exact = _exact_set(solver, key, reference)
    if exact is not None:
        return exact.solve(solver, tip, pose, seed, start)
    closed = chain_closed_form(solver, key, reference)
    target = check_pose(tip, point_target(tip, pose) if tip in solver.problem.gaze_tips else pose)
    if target.ndim != 2:
        raise IKNodeError(f"solve_all takes one target for tip '{tip}', got shape {target.shape}")
    if closed is None:
        return _searched(solver, key, targets, seed, target, start + timeout, start)
    clipped_seed = _clipped_seed(solver, seed)
    say_if_cold(closed.kernel, solution_sets.branch_configurations, solution_sets.solution_set)
    branches, complete = _polished(solver, key, closed, target, clipped_seed, start + timeout)
    task = solver.tasks[tip]
    tolerances = (task.position_tolerance, task.orientation_tolerance)
    q, origin, errors, success = solution_set(
        solver, branches.q, branches.status, target, clipped_seed, tolerances
    )
    names = branch_labels(closed.root_names)
    found = IKSolutions(
        q=q,
        labels=tuple(map(names.__getitem__, branches.branch[origin].tolist())),
        complete=complete,
        method=closed.kind + "+polish",
        success=bool(success) and len(q) > 0,
        singular=bool(np.any(branches.status[origin] & FREE)),
        position_error=errors[origin, 0],
        orientation_error=errors[origin, 1],
        elapsed=time.perf_counter() - start,
    )
    return _collision_free(solver, found)


def _clipped_seed(solver, seed) -> np.ndarray | None:
    """``seed`` (array or mapping) as a vector clipped into the limits; None stays None (NaN
    passes: the compiled set refuses it, and the solver's checks name the joints)."""
    if seed is None:
        return None
    return np.clip(seed_vector(seed, solver.tree, solver.rest_posture), solver.lower, solver.upper)


class ExactSet:
    """:func:`solve_all` on a chain that decomposes exactly (one solver, one set of locked
    joints): one compiled call, :func:`~ik_node.compiled.solution_sets.closed_form_set` (it checks
    the target and the seed, decomposes, checks each branch by FK, orders the solutions and writes
    each one's errors and branch), without numba's dispatch, in a context made once (the
    decomposition's, the FK check's and the limits' arrays, and its work arrays: one argument),
    into new rows as many as the largest set so far (a set with more solutions is solved again
    with more rows). The compiled call holds the GIL from start to end, so two calls from
    threads never use the work arrays at once."""

    def __init__(self, solver, closed: ClosedForm):
        task = solver.tasks[solver.tip_links[0]]
        tolerances = np.array((task.position_tolerance, task.orientation_tolerance))
        frames, links, tip_frame, offset, *limits_and_metric = solution_set_arrays(solver)
        fixed = (
            closed.code, closed.inverted, closed.axes, closed.offsets, closed.tool_rotation, closed.reference,
            closed.joints, frames, links, tip_frame, offset, tolerances, *limits_and_metric,
        )  # fmt: skip
        self.reference, self.kind, self.names = (
            closed.reference,
            closed.kind,
            branch_labels(closed.root_names),
        )
        say_if_cold(solution_sets.closed_form_context, solution_sets.closed_form_set)
        self._columns, self._rows = len(closed.reference) + SET_COLUMNS, MAX_BRANCHES
        self._context = solution_sets.closed_form_context(*fixed)
        # (a first call, through numba's dispatch, with arrays of the usual types compiles or
        # loads that entry; the later calls go to it directly)
        first = (self._context, np.eye(4), closed.reference, False, np.empty((self._rows, self._columns)))
        solution_sets.closed_form_set(*first)
        self._call = compiled_entry(solution_sets.closed_form_set, first)

    def solve(self, solver, tip: str, pose, seed, start: float) -> IKSolutions:
        """:func:`solve_all` of one tip's ``pose`` from ``seed`` (None: unordered), begun at
        ``start`` (``perf_counter``). A pose or seed that is a C-contiguous float array of the
        right shape is passed as it is, read-only or not (the compiled set only reads them),
        else as a copy."""
        ndarray = np.ndarray  # (a C-contiguous 4x4 of floats has these strides; a (4, 3) view too)
        if (
            type(pose) is ndarray
            and pose.dtype is _FLOAT
            and pose.strides == _POSE_STRIDES
            and pose.shape == _POSE_SHAPE
        ):
            target = pose
        else:
            target = pose_matrix(tip, pose)
        if seed is None:
            given = self.reference
        elif type(seed) is ndarray and seed.dtype is _FLOAT and seed.strides == _FLOAT_STRIDES:
            given = (
                seed
                if len(seed) == len(self.reference)
                else c_array(seed_vector(seed, solver.tree, solver.rest_posture))
            )
        else:
            given = c_array(seed_vector(seed, solver.tree, solver.rest_posture))
        out = np.empty((self._rows, self._columns))
        problem, rows, success, singular = self._call(self._context, target, given, seed is not None, out)
        if problem:
            return self._refused(problem, rows, solver, tip, pose, seed, start)
        found = IKSolutions.from_rows(
            out, rows, self, success and rows > 0, singular, time.perf_counter() - start
        )
        return found if solver.collision_task is None else _collision_free(solver, found)

    def _refused(self, problem: int, rows: int, solver, tip: str, pose, seed, start: float) -> IKSolutions:
        """:meth:`solve` where the compiled set returned ``problem`` (not 0): too few rows for its
        ``rows`` solutions (solved again with more), else an unusable target or seed (raised,
        saying why)."""
        if problem == solution_sets.MORE_ROWS:
            self._rows = max(self._rows, rows)
            return self.solve(solver, tip, pose, seed, start)
        if problem == kernels.TARGET_NOT_USABLE:
            check_pose(tip, pose)  # raises, saying why
        solver.tree.joint_vector(seed, what="seed")  # raises, naming the joints (SEED_NOT_FINITE)
        raise AssertionError(f"the compiled set refused a target and seed it takes (code {problem})")


def _exact_set(solver, key: tuple, reference) -> ExactSet | None:
    """The :class:`ExactSet` of ``solver`` with the locked joints ``key`` (their reference
    configuration ``reference``), made at its first use; None where the chain does not decompose
    exactly."""
    exact_sets = solver.solution_caches.exact_sets
    made = exact_sets.get(key, _UNMADE)
    if made is not _UNMADE:  # (a re-solve's path: one lookup, no closure made)
        return made

    def make() -> ExactSet | None:
        closed = chain_closed_form(solver, key, reference)
        return ExactSet(solver, closed) if closed is not None and closed.exact else None

    return per_locked_joints(exact_sets, key, make)


def _searched(solver, key: tuple, targets, seed, target, deadline: float, start: float) -> IKSolutions:
    """:func:`solve_all` where the chain has no closed form (or several tips): the distinct
    solutions :func:`_search` found, ``complete=False``, without labels. ``target``: the one
    tip's checked pose (None for several tips)."""
    clipped_seed = _clipped_seed(solver, seed)
    say_if_cold(solution_sets.solution_set)
    q, errors = _search(solver, key, targets, clipped_seed, deadline)
    unchecked = (np.inf, np.inf)  # (every row a converged solve: it checked every tip)
    status = np.zeros(len(q), dtype=np.int64)
    target = np.eye(4) if target is None else target
    q, origin, _, success = solution_set(solver, q, status, target, clipped_seed, unchecked)
    found = IKSolutions(
        q=q,
        labels=None,
        complete=False,
        method="search",
        success=bool(success) and len(q) > 0,
        singular=False,
        position_error=errors[origin, 0],
        orientation_error=errors[origin, 1],
        elapsed=time.perf_counter() - start,
    )
    return _collision_free(solver, found)


def _collision_free(solver, found: IKSolutions) -> IKSolutions:
    """``found`` without the solutions in collision where the solver avoids obstacles
    (:meth:`~ik_node.solver.IKSolver.clearance` below 0)."""
    if solver.collision_task is None or not len(found.q):
        return found
    free = np.array([solver.clearance(row) >= 0.0 for row in found.q], dtype=bool)
    labels = None if found.labels is None else tuple(label for label, kept in zip(found.labels, free) if kept)
    success = found.success and bool(free.any())
    return IKSolutions(
        found.q[free], labels, found.complete, found.method, success, found.singular,
        found.position_error[free], found.orientation_error[free], found.elapsed,
    )  # fmt: skip
