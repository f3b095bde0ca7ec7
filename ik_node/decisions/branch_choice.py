"""A fixed branch for every goal, free of rclpy: the ``branch`` parameter (issue 30).

Where the arm has a closed form, :meth:`IKSolver.solve_all <ik_node.IKSolver.solve_all>` gives
every solution of a goal with its branch label (``('shoulder+', 'elbow-', 'wrist+')``: which root
of each two-root subproblem it took; a branch keeps its label along a path away from
singularities). With ``branch`` set to a label, a goal is answered by the solution on that branch
nearest the seed (the current joints; in track mode the last command) in the solver's metric
``Σ (q_j − s_j)² / w_j`` (the joint weights), by which ``solve_all`` orders its solutions: an arm
kept elbow up stays elbow up along a path. ``solve_type`` and ``max_joint_move`` do not apply.

The answer reads as the solver's own :class:`~ik_node.solver.IKResult` (``iterations`` 0), its
``reason``: ``success``; ``unreachable`` (no solution reaches the goal: ``q`` is the branch's
closest approach inside the limits, published only with ``publish_best_effort``); or
:data:`OFF_BRANCH` (solutions, none on the branch, or none on it free of collisions where they are
checked: nothing to publish). Units: rad, m, s; goals are 4x4 ``T_base_goal``.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import IKNodeError
from ..solver import IKResult, IKSolver, has_closed_form
from .parameters import NEAREST, branch_label

__all__ = ["OFF_BRANCH", "branch_refusal", "solve_goal", "solve_on_branch"]

#: The reason of a goal with solutions none of which is on the ``branch`` (no command published).
OFF_BRANCH = "off_branch"


def branch_refusal(solver: IKSolver, branch: str) -> str | None:
    """Why goals on ``solver``'s chain cannot be answered on ``branch`` (naming the parameter, the
    value and the valid values), or None: 'nearest' always can, a label where the chain has a
    closed form."""
    if branch_label(branch) is None or has_closed_form(solver):
        return None
    return (
        f"parameter branch '{branch}' needs a chain with a closed form (one tip controlling its full "
        "pose through six revolute joints with a spherical wrist or three parallel axes); this chain "
        f"has none, so its branches have no labels: the only valid value is '{NEAREST}'"
    )


def solve_goal(solver: IKSolver, goals: dict, seed: np.ndarray, timeout: float, branch: str) -> IKResult:
    """The answer the node gives ``goals`` (``{tip: T_base_goal}``) from ``seed`` within
    ``timeout`` [s] under its ``branch`` parameter: the solver's own (``nearest``; from the
    closed form's complete set where the chain has one and ``solve_type`` is ``distance``), else
    :func:`solve_on_branch`. What goals and ``compute_ik`` requests both get."""
    if branch == NEAREST:
        tips = solver.tip_links
        if len(tips) == 1 and len(goals) == 1 and tips[0] in goals:
            # the pose itself, not a mapping: checked once, in the search kernel (a mapping's
            # poses are checked and stacked in Python first)
            return solver.solve(goals[tips[0]], seed=seed, timeout=timeout)
        return solver.solve(dict(goals), seed=seed, timeout=timeout)
    return solve_on_branch(solver, goals, seed, timeout, branch)


def solve_on_branch(solver: IKSolver, goals: dict, seed: np.ndarray, timeout: float, branch: str) -> IKResult:
    """The solution of ``goals`` (``{tip: T_base_goal}``) on ``branch`` nearest ``seed`` (see the
    module's text), within ``timeout`` [s]; raises :class:`IKNodeError` where ``branch`` cannot
    answer (:func:`branch_refusal`)."""
    refused = branch_refusal(solver, branch)
    if refused:
        raise IKNodeError(refused)
    label = branch_label(branch)
    found = solver.solve_all(dict(goals), seed=seed, timeout=timeout)
    on_branch = [row for row, labels in enumerate(found.labels) if frozenset(labels) == label]
    if not on_branch:
        return IKResult(np.array(seed, dtype=float), False, math.inf, math.inf, 0, found.elapsed, OFF_BRANCH)
    row = on_branch[0]  # (solve_all orders its solutions nearest the seed first)
    return IKResult(
        found.q[row],
        found.success,
        float(found.position_error[row]),
        float(found.orientation_error[row]),
        0,
        found.elapsed,
        "success" if found.success else "unreachable",
    )
