"""``solve_many`` through the closed form: each target's solution nearest its seed.

Where :meth:`IKSolver.solve <ik_node.solver.IKSolver.solve>` answers from the complete set of
solutions (``solve_type='distance'``, one tip controlling its full pose through six revolute
joints that decompose: :func:`.all_solutions.solve_nearest`), :meth:`~ik_node.solver.IKSolver.solve_many`
does too, compiled over the batch (:func:`ik_node.compiled.nearest_branches.nearest_branches`):
every branch of each target, fitted into the limits, the nearest the seed in the solver's metric
``Σ (q_j − s_j)² / w_j``. On a calibrated arm (axes within
:data:`~.closed_form.NEAR_TOLERANCE` of a decomposable geometry, not exactly) the nearest branch of
the nominal geometry seeds one Levenberg–Marquardt attempt on the real tree (its polish). A target
no branch reaches (out of reach, or a polish that fails) is searched as ``solve_many`` searches
the others. With ``max_joint_move``, a nearest solution that moves a joint farther is no success
(as in ``solve``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..compiled import nearest_branches as compiled
from . import kernels
from .all_solutions import (
    NEAR_LEAST_SQUARES,
    chain_closed_form,
    has_closed_form,
    say_if_cold,
    solution_set_arrays,
)
from .batch_threads import in_slices
from .search_call import search_arguments, search_settings

if TYPE_CHECKING:
    from .ik_solver import IKSolver

__all__ = ["nearest_in_closed_form", "uses_closed_form"]


def uses_closed_form(solver: IKSolver) -> bool:
    """Whether ``solve_many`` answers ``solver``'s targets from the closed form: the
    ``distance`` solve type on a chain :func:`~.all_solutions.has_closed_form` says decomposes."""
    return solver.options.solve_type == "distance" and has_closed_form(solver)


def nearest_in_closed_form(solver: IKSolver, targets: np.ndarray, seeds: np.ndarray, search) -> tuple:
    """The solutions nearest ``seeds`` (N, n) for ``targets`` (N, 1, 4, 4) [base frame, m], for a
    solver that :func:`uses_closed_form`: ``(q (N, n), errors (N, 2) [m, rad], converged (N,))``.
    ``search(arguments, targets, seeds)`` is ``solve_many``'s batch search (returns q, the tips'
    error norms (N, T, 2) and the outcomes): it polishes a calibrated arm's branches (with
    ``arguments``) and searches the targets no branch reaches (``None``: the solver's own)."""
    closed = chain_closed_form(solver, (), np.zeros(len(solver.joint_names)))
    say_if_cold(compiled.nearest_branches)
    arrays = solution_set_arrays(solver)
    frames, links, tip_frame, offset, lower, upper, periodic, continuous, weights = arrays
    task = solver.tasks[solver.tip_links[0]]
    if closed.exact:
        tolerances = np.array((task.position_tolerance, task.orientation_tolerance))
    else:  # (a nominal branch near the goal on the real tree, as solve_all's polish takes them)
        margin = NEAR_LEAST_SQUARES * closed.deviation
        tolerances = np.array((margin * closed.length, margin))
    poses = np.ascontiguousarray(targets[:, 0])
    count, n = seeds.shape
    q, errors, converged = np.empty((count, n)), np.empty((count, 2)), np.empty(count, dtype=np.bool_)

    def nearest_slice(first: int, stop: int) -> None:
        compiled.nearest_branches(
            closed.code, np.bool_(closed.inverted), closed.axes,
            closed.offsets, closed.tool_rotation, closed.reference, closed.joints, frames, links, tip_frame,
            offset, tolerances, lower, upper, periodic, continuous, weights, poses[first:stop],
            seeds[first:stop], q[first:stop], errors[first:stop], converged[first:stop],
        )  # fmt: skip

    in_slices(count, nearest_slice)
    if not closed.exact:
        _polish(solver, targets, q, errors, converged, search)
    max_joint_move = solver.options.max_joint_move
    unreached = np.flatnonzero(~converged)
    if len(unreached):
        found, norms, outcomes = search(None, targets[unreached], np.ascontiguousarray(seeds[unreached]))
        q[unreached], errors[unreached] = found, norms[:, 0]
        converged[unreached] = outcomes == kernels.CONVERGED
    if max_joint_move is not None:  # (revolute joints: the move is q − s)
        converged &= np.abs(q - seeds).max(axis=1) <= max_joint_move
    return q, errors, converged


def _polish(solver: IKSolver, targets: np.ndarray, q, errors, converged, search) -> None:
    """One LM attempt on the real tree from each nominal branch ``q[converged]`` (updated in place
    with ``errors`` and ``converged``: a polish that fails leaves its target to the search)."""
    chosen = np.flatnonzero(converged)
    settings = search_settings(solver.options, max_attempts=1, max_joint_move=0.0)  # (from the branch)
    arguments = search_arguments(solver.problem, solver.seed_table, solver.options, settings)
    polished, norms, outcomes = search(arguments, targets[chosen], np.ascontiguousarray(q[chosen]))
    q[chosen], errors[chosen] = polished, norms[:, 0]
    converged[chosen] = outcomes == kernels.CONVERGED
