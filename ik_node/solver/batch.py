"""Batches: many targets or configurations at once, in slices on the batch threads
(:data:`~ik_node.compiled.jit.BATCH_THREADS`; the kernels release the GIL).
:func:`solve_many` is :meth:`IKSolver.solve_many`, :func:`solution_figures`
:meth:`IKSolver.solution_figures`, both over :func:`.batch_threads.in_slices`; both take values
(a solver's :class:`~.core.SolverCore`, a problem), not the solver.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import TargetError
from . import kernels
from .batch_threads import in_slices
from .core import SolverCore
from .inputs import stack_targets, timeout_ns
from .nearest_batch import ChainClosedForm, nearest_in_closed_form
from .problem import Problem
from .results import BatchResult, Outcome
from .search_call import SearchArguments

__all__ = ["solution_figures", "solve_many"]


def solve_many(
    core: SolverCore, targets, seed, timeout: float | None, closed_form: ChainClosedForm | None, start: float
) -> BatchResult:
    """:meth:`IKSolver.solve_many` on ``core`` (see there; the compiled kernels), begun at
    ``start`` (``perf_counter``): the targets and seeds checked and stacked,
    :func:`_search_batch` on its search's bundles (or, with ``closed_form``, the chain's closed
    form where the solver answers from it, each target's solution nearest its seed:
    :mod:`.nearest_batch`), the result."""
    problem = core.problem
    budget = timeout_ns(timeout, core.options.max_attempts)
    target_poses = stack_targets(problem.tips, targets, None, gaze_tips=problem.gaze_tips)
    count, names = len(target_poses), problem.tree.joint_names
    if seed is None:
        seeds = np.broadcast_to(problem.rest_posture, (count, len(names)))
    else:
        seeds = np.asarray(seed, dtype=float)
        if seeds.shape not in ((len(names),), (count, len(names))):
            raise TargetError(
                f"seed must have shape ({len(names)},) or ({count}, {len(names)}) "
                f"for joints {list(names)}, got {seeds.shape}"
            )
        if not np.isfinite(seeds).all():
            raise TargetError("seed contains NaN or infinity")
        clipped = np.clip(seeds, problem.configuration_lower, problem.configuration_upper)
        seeds = np.broadcast_to(problem.tree.normalized(clipped, "seed"), (count, len(names)))
    seeds = np.array(seeds, order="C")  # writable: one compiled signature
    if closed_form is not None:

        def search(arguments, targets, seeds) -> tuple:
            return _search_batch(arguments or core.arguments, targets, seeds, budget)

        q, errors, converged = nearest_in_closed_form(core, closed_form, target_poses, seeds, search)
    else:
        q, norms, outcomes = _search_batch(core.arguments, target_poses, seeds, budget)
        errors, converged = norms.max(axis=1), outcomes == Outcome.CONVERGED
    return BatchResult(
        q=q,
        success=converged,
        position_error=errors[:, 0],
        orientation_error=errors[:, 1],
        elapsed=time.perf_counter() - start,
    )


def _search_batch(arguments: SearchArguments, targets: np.ndarray, seeds: np.ndarray, budget: int) -> tuple:
    """:func:`kernels.search_many` with ``arguments`` (:func:`.search_call.search_arguments`)
    over targets (N, T, 4, 4) and seeds (N, n) (C-contiguous), in slices on the batch threads,
    each slice in a search context of its own. Returns q (N, n), norms (N, T, 2) and outcomes
    (N,)."""
    count = len(targets)
    q, norms = np.empty(seeds.shape), np.empty((count, targets.shape[1], 2))
    results = np.empty((count, kernels.RESULT_COLUMNS), dtype=np.int64)

    def search_slice(first: int, stop: int) -> None:
        kernels.search_many(
            arguments.context(kernels, seeds.shape[1]), targets[first:stop], seeds[first:stop], budget,
            kernels.NO_DEADLINE, kernels.NO_PRIORITY, q[first:stop], norms[first:stop], results[first:stop],
            *arguments.trailing,
        )  # fmt: skip

    in_slices(count, search_slice)
    return q, norms, results[:, kernels.OUTCOME]


def solution_figures(problem: Problem, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For configurations ``q`` (K, nq): the pose (K, 4, 4) of ``problem``'s first tip's
    controlled point in the base frame and the manipulability (K,) of its task Jacobian
    (:func:`kernels.solution_figures`), on the batch threads."""
    q = np.ascontiguousarray(q, dtype=float)
    points, manipulability = np.empty((len(q), 4, 4)), np.empty(len(q))
    dof = np.int64(len(problem.joints))

    def figures(first: int, stop: int) -> None:
        kernels.solution_figures(
            problem.tree_arrays, problem.task, dof, q[first:stop], points[first:stop],
            manipulability[first:stop],
        )  # fmt: skip

    in_slices(len(q), figures)
    return points, manipulability
