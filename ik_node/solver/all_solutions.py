"""Every IK solution of a goal, :meth:`IKSolver.solve_all <ik_node.solver.IKSolver.solve_all>`.

Where the chain decomposes (:mod:`.closed_form`: one tip controlling its full pose, six free
revolute joints whose axes are within ``NEAR_TOLERANCE`` of a spherical wrist or of three
parallel axes), every branch comes from the compiled subproblem kernels: as they are where the
axes are exact, else as seeds that the solver's own Levenberg–Marquardt solve polishes on the real
tree (each branch is then exact on the URDF, not on its nominal geometry). The set is then
*complete*. Elsewhere (other chains, 5 or 7 free joints, several tips, partial tasks), restarts of
:meth:`~ik_node.solver.IKSolver.solve` from random seeds collect distinct solutions within the time
budget: ``complete=False``.

Every solution is within the limits and verified by FK (position and orientation errors below the
tip task's tolerances). A joint with limits wider than 2π gives every ``θ + 2πk`` inside them as
its own solution; a continuous joint gives one, the one nearest the seed (else in (−π, π]).
Solutions equal within :data:`DUPLICATE_TOLERANCE` are one. Units: rad, m; joint order
``solver.joint_names``; poses ``T_base_point`` (4x4) of the tip's controlled point.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from ..compiled.subproblems import FREE, LEAST_SQUARES
from ..errors import IKNodeError, UnknownJointError
from .closed_form import Branches, ClosedForm, decompose
from .inputs import check_pose

__all__ = ["DUPLICATE_TOLERANCE", "IKSolutions", "solve_all"]

#: Two solutions closer than this in every joint [rad, m] are the same one.
DUPLICATE_TOLERANCE = 1e-6
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
#: Slack [rad, m] on the limits when fitting a solution into them (rounding of the kernels).
LIMIT_SLACK = 1e-9
TWO_PI = 2.0 * np.pi


@dataclass(frozen=True)
class IKSolutions:
    """What :meth:`IKSolver.solve_all <ik_node.solver.IKSolver.solve_all>` found for one goal.

    ``q`` (k, n): the distinct solutions [rad, m] in ``joint_names`` order, inside the limits,
    nearest the seed first (weighted joint distance) when one was given; ``labels``: per solution
    the tuple of its branch names where the method has them (``('shoulder+', 'elbow-',
    'wrist+')``: which root of each two-root subproblem; a branch keeps its label along a path
    away from singularities), else None; ``complete``: whether ``q`` is every solution (closed
    form; for a polished nominal geometry, where no nominal branch was singular or least squares
    and each polish stayed on its branch) or what a search found in the budget; ``method``: the
    decomposition kernel's name, with ``'+polish'`` where its branches were polished on the real
    tree, or ``'search'``;
    ``success``: whether any solution reaches the goal (else ``q`` holds the least-squares
    branches inside the limits, closest approaches to an unreachable goal, or is empty);
    ``singular``: a solution at a singularity (e.g. a wrist at zero), where a one-parameter family
    solves the goal: one representative is reported, the free joint at the seed's value (else at
    0; where that member is out of reach, as a wrist with an offset can be, the family is missed);
    ``position_error`` [m] / ``orientation_error`` [rad] (k,): each solution's error; ``elapsed``
    [s].
    """

    q: np.ndarray
    labels: tuple | None
    complete: bool
    method: str
    success: bool
    singular: bool
    position_error: np.ndarray
    orientation_error: np.ndarray
    elapsed: float


def pose_errors(reached: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Position [m] and orientation [rad] errors (k,) of poses ``reached`` (k, 4, 4) from
    ``target``: ``‖p − p_d‖`` and the angle of ``Rᵀ R_d``, ``atan2(‖vee(E − Eᵀ)‖ / 2, (tr E − 1) /
    2)`` (precise near 0, unlike ``acos``)."""
    position = np.linalg.norm(reached[:, :3, 3] - target[:3, 3], axis=1)
    error = np.swapaxes(reached[:, :3, :3], 1, 2) @ target[:3, :3]
    skew = np.stack(
        (error[:, 2, 1] - error[:, 1, 2], error[:, 0, 2] - error[:, 2, 0], error[:, 1, 0] - error[:, 0, 1]),
        axis=1,
    )
    angle = np.arctan2(0.5 * np.linalg.norm(skew, axis=1), 0.5 * (np.trace(error, axis1=1, axis2=2) - 1.0))
    return position, angle


def _locked_reference(solver, locked: Mapping | None) -> tuple[tuple, np.ndarray]:
    """``locked`` ({joint: value [rad, m]}) checked (a known joint, a finite value inside its
    limits: else :class:`IKNodeError` naming the joint and its range) as a sorted key, and the
    reference configuration: the locked values, 0 elsewhere."""
    reference = np.zeros(len(solver.joint_names))
    key = []
    for name, value in sorted((locked or {}).items()):
        if name not in solver.joint_names:
            raise UnknownJointError(name, solver.joint_names, what="joint to lock")
        index = solver.joint_names.index(name)
        low, high = solver.lower[index], solver.upper[index]
        if not (math.isfinite(value) and low - LIMIT_SLACK <= value <= high + LIMIT_SLACK):
            raise IKNodeError(f"locked value {value} for joint '{name}' is outside its range [{low}, {high}]")
        reference[index] = value
        key.append((name, float(value)))
    return tuple(key), reference


def periodic_coordinates(solver) -> np.ndarray:
    """Which configuration coordinates (bools, n) are revolute angles (revolute and continuous
    joints: equal up to 2π), found once per solver."""
    cached = solver.__dict__.get("_periodic")
    if cached is None:
        flags = [
            joint.type in ("revolute", "continuous") and len(joint.coordinate_names) == 1
            for joint in solver.tree.joints
            for _ in joint.coordinate_names
        ]
        cached = solver.__dict__.setdefault("_periodic", np.array(flags, dtype=bool))
    return cached


def fitted_variants(solver, q: np.ndarray, seed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The configurations equal to the rows of ``q`` (k, n) up to 2π on their revolute joints
    that lie within the limits: every ``θ + 2πk`` inside a bounded joint's range, one value of a
    continuous joint (the nearest ``seed``'s, else in (−π, π]). Returns them (m, n), row by row,
    and the row each came from (m,); a row with a joint that fits nowhere gives none."""
    q = np.atleast_2d(q)
    periodic = periodic_coordinates(solver)
    bounded = periodic & ~solver.continuous
    centre = 0.0 if seed is None else seed
    shifted = np.where(periodic & solver.continuous, q - TWO_PI * np.round((q - centre) / TWO_PI), q)
    low = np.where(bounded, solver.lower, 0.0)
    high = np.where(bounded, solver.upper, 0.0)
    first = np.where(bounded, np.ceil((low - LIMIT_SLACK - shifted) / TWO_PI), 0.0)
    last = np.where(bounded, np.floor((high + LIMIT_SLACK - shifted) / TWO_PI), 0.0)
    choices = np.maximum(last - first + 1, 0).astype(np.int64)  # (k, n) values per joint
    per_row = choices.prod(axis=1)
    origin = np.repeat(np.arange(len(q)), per_row)
    within = np.arange(len(origin)) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    radix = choices[origin]
    place = np.ones_like(radix)  # each variant's index within its row in mixed radix: digit j has
    place[:, :-1] = np.cumprod(radix[:, :0:-1], axis=1)[:, ::-1]  # place value prod(radix[:, j+1:])
    digits = (within[:, None] // place) % np.maximum(radix, 1)
    variants = (shifted + TWO_PI * first)[origin] + TWO_PI * digits
    return np.where(bounded, np.clip(variants, solver.lower, solver.upper), variants), origin


def _distinct(solver, rows: np.ndarray) -> np.ndarray:
    """Indices of the rows of ``rows`` (k, n) that differ from every earlier kept one by more
    than :data:`DUPLICATE_TOLERANCE` in some joint (revolute joints modulo 2π)."""
    gaps = rows[:, None] - rows[None]
    gaps = np.where(periodic_coordinates(solver), np.remainder(gaps + np.pi, TWO_PI) - np.pi, gaps)
    same = np.abs(gaps).max(axis=2) <= DUPLICATE_TOLERANCE
    kept: list[int] = []
    for index in range(len(rows)):
        if not same[index, kept].any():
            kept.append(index)
    return np.array(kept, dtype=np.int64)


def _tool_pose(solver):
    """``q -> T_base_point`` (4x4) of the first tip's controlled point."""
    return lambda q: solver.tip_poses(q)[0]


def _closed_form(solver, key: tuple, reference: np.ndarray) -> ClosedForm | None:
    """The chain's :class:`ClosedForm` with the joints of ``key`` locked (None: no closed form),
    found once per key and solver. Only for one tip controlling its full pose."""
    cache = solver.__dict__.setdefault("_closed_forms", {})
    if key not in cache:
        task = solver.tasks[solver.tip_links[0]]
        usable = len(solver.tip_links) == 1 and all(task.mask)
        locked = {solver.joint_names.index(name) for name, _ in key}
        free = [index for index in range(len(solver.joint_names)) if index not in locked]
        cache[key] = decompose(solver.tree, _tool_pose(solver), free, reference) if usable else None
    return cache[key]


def helper_solver(solver, key: tuple, tolerance: float | None = None):
    """A solver like ``solver`` whose joints of ``key`` have their limits closed on the locked
    values, with position and orientation tolerances ``tolerance`` [m, rad] where given (tips
    whose task is a kind, not a :class:`~.options.TipTask`): what polishes and searches. Made
    once per key and tolerance (``solver`` itself where neither changes anything)."""
    if not key and tolerance is None:
        return solver
    cache = solver.__dict__.setdefault("_helper_solvers", {})
    if (key, tolerance) not in cache:
        options = solver.options
        lower, upper = dict(options.lower or {}), dict(options.upper or {})
        for name, value in key:
            lower[name], upper[name] = value, value
        options = replace(options, lower=lower, upper=upper)
        if tolerance is not None:
            options = replace(options, position_tolerance=tolerance, orientation_tolerance=tolerance)
        cache[key, tolerance] = type(solver)(solver.robot, solver.tree.base_link, solver.tip_links, options)
    return cache[key, tolerance]


def tool_poses(solver, q: np.ndarray) -> np.ndarray:
    """Poses (k, 4, 4) ``T_base_point`` of the first tip's controlled point at configurations ``q``
    (k, n), by one batch FK (:meth:`~ik_node.kinematics.KinematicTree.link_poses`)."""
    tip = solver.tip_links[0]
    offset = np.eye(4)
    offset[:3, 3] = solver.tasks[tip].offset
    return solver.tree.pose_of(solver.tree.link_poses(q), tip) @ offset


def _polished(solver, key: tuple, closed: ClosedForm, branches: Branches, target, deadline: float):
    """The branches of a nominal geometry polished on the real tree: each, fitted into the limits,
    seeds the solver's LM solve (with ``key``'s joints locked, aiming at ``POLISH_TOLERANCE`` so
    that a polished branch is as exact as the closed form's), to be verified against the task's
    tolerances. Returns the polished :class:`Branches` and whether they are surely all: no
    nominal branch was singular or a least-squares one within ``NEAR_LEAST_SQUARES`` deviations
    of the goal (such a branch is polished too), and no polish moved farther than
    ``POLISH_REACH`` from its seed (near a singularity the real arm's branches split, merge or
    move far from the nominal's; a solve that wandered may have found another branch)."""
    polisher = helper_solver(solver, key, POLISH_TOLERANCE)
    kept, rows = [], []
    position, orientation = pose_errors(tool_poses(solver, branches.q), target)
    margin = NEAR_LEAST_SQUARES * closed.deviation
    near = (position <= margin * closed.length) & (orientation <= margin)
    least_squares = (branches.status & LEAST_SQUARES) != 0
    complete = not np.any(branches.status & FREE) and not np.any(least_squares & near)
    for index, q in enumerate(branches.q):
        fitted, _ = fitted_variants(solver, q, None)
        if not len(fitted) or (least_squares[index] and not near[index]):
            continue
        budget = max(POLISH_TIMEOUT, (deadline - time.perf_counter()) / (len(branches.q) - index))
        result = polisher.solve(target, seed=fitted[0], timeout=budget)
        gap = np.abs(np.remainder(result.q - fitted[0] + np.pi, 2 * np.pi) - np.pi).max()
        kept.append(index)
        rows.append(result.q)
        complete &= bool(gap <= POLISH_REACH)
    kept_rows = np.array(rows).reshape(-1, len(solver.joint_names))
    return Branches(kept_rows, branches.status[kept], branches.branch[kept], branches.root_names), complete


def _search(solver, key: tuple, targets, seed, deadline: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Solutions found by restarts of ``solve`` until ``deadline`` (at least one solve): from
    ``seed`` (else the rest posture), then from random configurations inside the limits (seeded by
    the ``random_seed`` option). Returns the successful ``q`` (k, n) and their position and
    orientation errors (k,)."""
    searcher = helper_solver(solver, key)
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
    q = np.array(rows).reshape(-1, len(solver.joint_names))
    errors = np.array(errors).reshape(-1, 2)
    return q, errors[:, 0], errors[:, 1]


def solve_all(solver, targets, seed=None, timeout: float = 0.05, locked: Mapping | None = None):
    """Every solution of ``targets`` within the limits (see the module's text): ``targets`` as
    :meth:`~ik_node.solver.IKSolver.solve` takes them, ``seed`` (array or mapping) orders them
    nearest first, ``timeout`` [s] bounds polishing and search, ``locked`` ({joint: value}) holds
    joints (a 7-joint chain with one locked is solved in closed form where the other six
    decompose)."""
    start = time.perf_counter()
    if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
        raise IKNodeError(f"timeout must be a positive number of seconds, got {timeout}")
    deadline = start + timeout
    key, reference = _locked_reference(solver, locked)
    seed_vector = None if seed is None else np.clip(solver._seed(seed), solver.lower, solver.upper)
    target = None
    if len(solver.tip_links) == 1:
        tip = solver.tip_links[0]
        target = check_pose(tip, targets[tip] if isinstance(targets, Mapping) else targets)
        if target.ndim != 2:
            raise IKNodeError(f"solve_all takes one target for tip '{tip}', got shape {target.shape}")
    closed = None if target is None else _closed_form(solver, key, reference)
    if closed is None:
        q, position, orientation = _search(solver, key, targets, seed_vector, deadline)
        status, labels, complete, method = np.zeros(len(q), dtype=np.int64), None, False, "search"
    else:
        branches = closed.branches(target, seed_vector)
        method, complete = closed.kind, True
        if not closed.exact:
            branches, complete = _polished(solver, key, closed, branches, target, deadline)
            method += "+polish"
        q, status, labels = branches.q, branches.status, branches.labels
        position, orientation = pose_errors(tool_poses(solver, q), target)
    return _collected(solver, q, status, labels, position, orientation, seed_vector, complete, method, start)


def _collected(solver, q, status, labels, position, orientation, seed, complete, method, start):
    """The :class:`IKSolutions` of candidate rows ``q`` (k, n): those within the tip's tolerances
    (else, unreachable, the least-squares ones), distinct, fitted into the limits (every 2π
    variant), without collisions where the solver checks them, nearest ``seed`` first."""
    task = solver.tasks[solver.tip_links[0]]
    reached = (position <= task.position_tolerance) & (orientation <= task.orientation_tolerance)
    if len(solver.tip_links) > 1:
        reached = np.ones(len(q), dtype=bool)  # (search results: solve verified every tip)
    success = bool(reached.any())
    picked = np.flatnonzero(reached if success else (status & LEAST_SQUARES) != 0)
    picked = picked[_distinct(solver, q[picked])] if len(picked) else picked
    q_out, origin = fitted_variants(solver, q[picked], seed)
    origin = picked[origin]
    if solver.collision_task is not None and len(q_out):
        free = np.array([solver.clearance(row) >= 0.0 for row in q_out], dtype=bool)
        q_out, origin = q_out[free], origin[free]
    if seed is not None and len(q_out):
        weights = solver.joint_weights
        order = np.argsort(np.sqrt(((q_out - seed) ** 2 * weights).sum(axis=1)), kind="stable")
        q_out, origin = q_out[order], origin[order]
    return IKSolutions(
        q=q_out,
        labels=None if labels is None else tuple(map(labels.__getitem__, origin.tolist())),
        complete=complete,
        method=method,
        success=success and len(q_out) > 0,
        singular=bool(np.any(status[origin] & FREE)),
        position_error=position[origin],
        orientation_error=orientation[origin],
        elapsed=time.perf_counter() - start,
    )
