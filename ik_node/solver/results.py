"""What the solver reports: :class:`IKResult` (:meth:`IKSolver.solve`), :class:`BatchResult`
(:meth:`IKSolver.solve_many`), and how an attempt ended: the kernels' :class:`Outcome` codes
and :func:`outcome_reason`, the one map from them to a result's ``reason``."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from . import kernels

__all__ = ["BatchResult", "IKResult", "Outcome", "outcome_reason"]


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
