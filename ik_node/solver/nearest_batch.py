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

from typing import NamedTuple

import numpy as np

from ..compiled import nearest_branches
from . import kernels
from .all_solutions import NEAR_LEAST_SQUARES, say_if_cold
from .batch_threads import in_slices
from .closed_form import ClosedForm
from .core import SolverCore
from .search_call import search_arguments, search_tuning

__all__ = ["ChainClosedForm", "nearest_in_closed_form"]


class ChainClosedForm(NamedTuple):
    """A chain's closed form without locked joints (:func:`~.all_solutions.chain_closed_form`)
    and what the compiled solution set needs of the solver
    (:func:`~.all_solutions.solution_set_arrays`)."""

    closed: ClosedForm
    arrays: tuple


def nearest_in_closed_form(
    core: SolverCore, chain: ChainClosedForm, targets: np.ndarray, seeds: np.ndarray, search
) -> tuple:
    """The solutions nearest ``seeds`` (N, n) for ``targets`` (N, 1, 4, 4) [base frame, m] on a
    solver's ``core`` whose chain has the closed form ``chain``: ``(q (N, n), errors (N, 2)
    [m, rad], converged (N,))``. ``search(arguments, targets, seeds)`` is ``solve_many``'s batch
    search (returns q, the tips' error norms (N, T, 2) and the outcomes): it polishes a calibrated
    arm's branches (with ``arguments``) and searches the targets no branch reaches (``None``: the
    core's own)."""
    closed = chain.closed
    say_if_cold(nearest_branches.nearest_branches)
    frames, links, tip_frame, offset, lower, upper, periodic, continuous, weights = chain.arrays
    if closed.exact:
        tolerances = np.array(core.problem.tolerances[0])  # (the tip's task's: position, orientation)
    else:  # (a nominal branch near the goal on the real tree, as solve_all's polish takes them)
        margin = NEAR_LEAST_SQUARES * closed.deviation
        tolerances = np.array((margin * closed.length, margin))
    poses = np.ascontiguousarray(targets[:, 0])
    count, n = seeds.shape
    q, errors, converged = np.empty((count, n)), np.empty((count, 2)), np.empty(count, dtype=np.bool_)

    def nearest_slice(first: int, stop: int) -> None:
        nearest_branches.nearest_branches(
            closed.code, np.bool_(closed.inverted), closed.axes,
            closed.offsets, closed.tool_rotation, closed.reference, closed.joints, frames, links, tip_frame,
            offset, tolerances, lower, upper, periodic, continuous, weights, poses[first:stop],
            seeds[first:stop], q[first:stop], errors[first:stop], converged[first:stop],
        )  # fmt: skip

    in_slices(count, nearest_slice)
    if not closed.exact:
        _polish(core, targets, q, errors, converged, search)
    max_joint_move = core.options.max_joint_move
    unreached = np.flatnonzero(~converged)
    if len(unreached):
        found, norms, outcomes = search(None, targets[unreached], np.ascontiguousarray(seeds[unreached]))
        q[unreached], errors[unreached] = found, norms[:, 0]
        converged[unreached] = outcomes == kernels.CONVERGED
    if max_joint_move is not None:  # (revolute joints: the move is q − s)
        converged &= np.abs(q - seeds).max(axis=1) <= max_joint_move
    return q, errors, converged


def _polish(core: SolverCore, targets: np.ndarray, q, errors, converged, search) -> None:
    """One LM attempt on the real tree from each nominal branch ``q[converged]`` (updated in place
    with ``errors`` and ``converged``: a polish that fails leaves its target to the search)."""
    chosen = np.flatnonzero(converged)
    tuning = search_tuning(core.options, max_attempts=1, max_joint_move=0.0)  # (from the branch)
    arguments = search_arguments(core.problem, core.seed_table, core.options, tuning)
    polished, norms, outcomes = search(arguments, targets[chosen], np.ascontiguousarray(q[chosen]))
    q[chosen], errors[chosen] = polished, norms[:, 0]
    converged[chosen] = outcomes == kernels.CONVERGED
