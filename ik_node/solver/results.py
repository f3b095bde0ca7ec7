"""What the solver reports: :class:`IKResult` (:meth:`IKSolver.solve`), :class:`BatchResult`
(:meth:`IKSolver.solve_many`), :class:`IKSolutions` (:meth:`IKSolver.solve_all`), and how an
attempt ended: the kernels' :class:`Outcome` codes and :func:`outcome_reason`, the one map from
them to a result's ``reason``."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from ..compiled.solution_sets import BRANCH, ORIENTATION_ERROR, POSITION_ERROR, SET_COLUMNS
from . import kernels

__all__ = ["BatchResult", "IKResult", "IKSolutions", "Outcome", "outcome_reason"]


class Outcome(enum.IntEnum):
    """How an attempt ended (the kernels' codes)."""

    CONVERGED = kernels.CONVERGED
    STUCK = kernels.STUCK  # a local minimum: no step decreases the error
    STALLED = kernels.STALLED  # the error did not halve within STALL_ITERATIONS
    ITERATIONS = kernels.ITERATIONS  # max_iterations used while the error still fell
    DEADLINE = kernels.DEADLINE  # cut by the time budget
    COLLISION = kernels.COLLISION  # the tips were within tolerance only in collision
    JOINT_MOVE = kernels.JOINT_MOVE  # every solution found moves a joint beyond max_joint_move


def outcome_reason(outcome: int, deadline_reached: bool, out_of_reach, problem, target_poses) -> str:
    """:attr:`IKResult.reason` of a search's outcome (the one map from the kernels' codes):
    ``out_of_reach`` the tips found beyond their reach before the search; else ``problem``
    (a :class:`~.problem.Problem`) says whether ``target_poses`` lie beyond them (asked only
    when the outcome leaves the reason open)."""
    if outcome == kernels.CONVERGED:
        return "success"
    if outcome == kernels.COLLISION:
        return "collision"
    if outcome == kernels.JOINT_MOVE:
        return "joint_move"
    if outcome == kernels.STUCK or out_of_reach or problem.tips_out_of_reach(target_poses):
        return "unreachable"  # beyond the workspace, or the closest found is a local minimum
    return "timeout" if deadline_reached else "iterations"


@dataclass(slots=True)
class IKResult:
    """The outcome of :meth:`IKSolver.solve` (a slotted dataclass: one is made per solve).

    ``q``: joint values [rad, m] in ``joint_names`` order, always within the limits;
    ``position_error`` [m] / ``orientation_error`` [rad]: the largest over the tips (controlled
    rows only); ``tip_errors``: ``{tip: (position_error, orientation_error)}``; ``reason``:
    ``'success'``, ``'unreachable'`` (a target lies beyond the tip's workspace, or the closest
    configuration found is a local minimum of the error), ``'collision'`` (with collision checks
    on: the targets were reached only in collision; ``q`` is the closest collision-free
    configuration found, else the closest found), ``'joint_move'`` (with ``max_joint_move``:
    every solution found moves some joint farther than that from the seed; ``q`` is the one whose
    largest move is smallest, its errors within tolerance), ``'timeout'`` or ``'iterations'``
    (the budget ran out while an attempt still progressed).
    """

    q: np.ndarray
    success: bool
    position_error: float
    orientation_error: float
    iterations: int
    elapsed: float
    reason: str
    attempts: int = 1
    tip_errors: dict = field(default_factory=dict)


@dataclass
class BatchResult:
    """The outcome of :meth:`IKSolver.solve_many` for N targets: ``q`` (N, n), ``success``
    (N,), ``position_error`` [m] and ``orientation_error`` [rad] (N,), ``elapsed`` [s] (all)."""

    q: np.ndarray
    success: np.ndarray
    position_error: np.ndarray
    orientation_error: np.ndarray
    elapsed: float


class IKSolutions:
    """What :meth:`IKSolver.solve_all <ik_node.solver.IKSolver.solve_all>` found for one goal.

    ``q`` (k, n): the distinct solutions [rad, m] in ``joint_names`` order, inside the limits,
    nearest the seed first (weighted joint distance ``Σ (q_j − s_j)² / w_j``, the joint weights
    ``w``) when one was given; ``labels``: per solution
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

    An exact closed form's set comes as one block of rows (:meth:`from_rows`): ``q`` and the
    errors are views of it and ``labels`` is made from its branch column, each at its first use
    (a call that does not read them does not pay for them: ~1.5 µs of ``solve_all``'s ~15).
    """

    __slots__ = (
        "complete", "method", "success", "singular", "elapsed",
        "_q", "_labels", "_position_error", "_orientation_error", "_rows", "_count", "_names",
    )  # fmt: skip

    def __init__(
        self, q, labels, complete, method, success, singular, position_error, orientation_error, elapsed
    ):
        self._q, self._labels, self.complete, self.method, self.success, self.singular = (
            q, labels, complete, method, success, singular,
        )  # fmt: skip
        self._position_error, self._orientation_error, self.elapsed = (
            position_error,
            orientation_error,
            elapsed,
        )
        self._rows = self._count = self._names = None

    @classmethod
    def from_rows(cls, rows, count: int, exact, success, singular, elapsed) -> IKSolutions:
        """A complete set from the first ``count`` of ``rows`` (n +
        :data:`~ik_node.compiled.solution_sets.SET_COLUMNS` columns,
        :func:`~ik_node.compiled.solution_sets.closed_form_set`'s: the joint values, the errors,
        the branch's choice of roots) of the :class:`ExactSet` ``exact`` (its method's name and
        its branches' labels)."""
        found = cls.__new__(cls)  # (without __init__'s nine arguments: ~0.1 µs less)
        found._q = found._labels = found._position_error = found._orientation_error = None
        found.complete, found.method, found.success, found.singular, found.elapsed = (
            True, exact.kind, success, singular, elapsed,
        )  # fmt: skip
        found._rows, found._count, found._names = rows, count, exact.names
        return found

    @property
    def q(self) -> np.ndarray:
        if self._q is None:
            self._q = self._rows[: self._count, :-SET_COLUMNS]
        return self._q

    @property
    def labels(self) -> tuple | None:
        if self._labels is None and self._rows is not None:
            branches = self._rows[: self._count, -SET_COLUMNS + BRANCH].astype(int).tolist()
            self._labels = tuple(map(self._names.__getitem__, branches))
        return self._labels

    @property
    def position_error(self) -> np.ndarray:
        if self._position_error is None:
            self._position_error = self._rows[: self._count, -SET_COLUMNS + POSITION_ERROR]
        return self._position_error

    @property
    def orientation_error(self) -> np.ndarray:
        if self._orientation_error is None:
            self._orientation_error = self._rows[: self._count, -SET_COLUMNS + ORIENTATION_ERROR]
        return self._orientation_error

    def __repr__(self) -> str:
        return (
            f"IKSolutions(q={self.q!r}, labels={self.labels!r}, complete={self.complete}, "
            f"method={self.method!r}, success={self.success}, singular={self.singular}, "
            f"position_error={self.position_error!r}, "
            f"orientation_error={self.orientation_error!r}, elapsed={self.elapsed})"
        )
