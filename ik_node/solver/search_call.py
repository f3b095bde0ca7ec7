"""One search of :func:`kernels.search_many` for one target, at the least Python cost per call,
and the bundles it takes (:func:`search_arguments`).

A re-solve (the goal moved a little, seeded at the last answer) converges in 1-3 iterations,
~1 us each compiled; what a call costs around them is Python's and numba's call. :class:`SearchCall`
pays once what every call would: the search's context (:func:`kernels.search_context`: the
bundles and the work arrays in one record, passed as one pointer), the compiled function for the
arguments' types (:class:`~ik_node.compiled.jit.CompiledCall`: no dispatch by type), and the
call's input and output arrays (the *call's arrays*, reused: each call copies the target and
seed in and the answer out). A call made while another thread's is using them (the node's solves
and a user's, say) gets arrays of its own, with a context of its own.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np

from ..compiled import bundles
from ..compiled.jit import CompiledCall
from . import kernels
from .options import METHODS, SOLVE_TYPES, SolverOptions
from .problem import Problem
from .seed_table import SeedTable

__all__ = ["SearchArguments", "SearchCall", "SearchResult", "search_arguments", "search_tuning"]


class SearchArguments(NamedTuple):
    """What a search of one problem takes: the bundles (see :mod:`ik_node.compiled.bundles`; the
    tree, task, joints and table reach :func:`kernels.search_many` in its context,
    :meth:`context`), the tuning and the feature switches (None where the problem does not use
    the feature, so that it compiles only the kernels it uses), :meth:`trailing` in
    ``search_many``'s order."""

    tree: tuple
    task: tuple
    joints: np.ndarray
    table: tuple
    tuning: tuple
    method: np.int64 | None
    solve_type: np.int64 | None
    posture: np.ndarray | None
    collision: tuple | None

    @property
    def switches(self) -> tuple:
        """The feature switches: ``method``, ``solve_type``, ``posture``, ``collision``."""
        return (self.method, self.solve_type, self.posture, self.collision)

    @property
    def trailing(self) -> tuple:
        """What :func:`kernels.search_many` takes after its outputs: the tuning and the switches
        (the bundles reach it in its context, :meth:`context`)."""
        return (self.tuning, *self.switches)

    def context(self, kernel_set, nq: int):
        """A context of ``kernel_set`` (:func:`kernels.search_context`) for these bundles and ``nq``
        configuration coordinates: one per thread that searches."""
        return kernel_set.search_context(self.tree, self.task, self.joints, self.table, self.collision, nq)


class SearchResult(NamedTuple):
    """What a :class:`SearchCall` returns: the outcome (a code of :mod:`ik_node.compiled.bundles`),
    the iterations and attempts used, whether the deadline ended the search, q (nq,) and the tips'
    [position m, orientation rad] errors."""

    outcome: int
    iterations: int
    attempts: int
    deadline_reached: bool
    q: np.ndarray
    errors: list


def search_arguments(
    problem: Problem, table: SeedTable, options: SolverOptions, tuning: tuple | None = None
) -> SearchArguments:
    """The :class:`SearchArguments` of ``problem`` with seed table ``table``: its tree, task and
    joints, the seed table, the tuning (``tuning``, else :func:`search_tuning` of
    ``options``) and the feature switches of ``options`` and ``problem``."""
    method, solve_type = METHODS[options.method], SOLVE_TYPES[options.solve_type]
    return SearchArguments(
        tree=problem.tree_arrays,
        task=problem.task,
        joints=problem.joints,
        table=bundles.table_bundle(
            feature_spec=problem.feature_spec,
            feature_scale=problem.feature_scale,
            table_q=table.q,
            blocked_features=table.blocked_features,
            table_spacing=float(table.spacing),
            blocked_centroids=table.blocked_centroids,
            cell_starts=table.cell_starts,
            limb_frames=problem.limb_frames,
            limb_starts=problem.limb_starts,
            limb_coordinates=problem.limb_coordinates,
            limb_scale=problem.limb_scale,
            limb_q=table.limb_q,
            limb_features=table.limb_features,
        ),
        tuning=search_tuning(options) if tuning is None else tuning,
        method=None if method == kernels.DLS else np.int64(method),  # (the defaults dls and speed: None)
        solve_type=None if solve_type == kernels.SPEED else np.int64(solve_type),
        posture=problem.posture,
        collision=problem.collision,
    )


def search_tuning(options: SolverOptions, **overrides) -> tuple:
    """The kernels' ``tuning`` bundle of ``options`` (see :mod:`ik_node.compiled.bundles`), as
    float and int whatever number types they were given in: one compiled signature;
    ``overrides``: slots by name (``max_attempts=1``), of the same types."""
    values = {
        "min_damping": float(options.min_damping),
        "max_iterations": int(options.max_iterations),
        "max_attempts": -1 if options.max_attempts is None else int(options.max_attempts),
        "random_seed": int(options.random_seed),
        "max_joint_move": 0.0 if options.max_joint_move is None else float(options.max_joint_move),
    }
    return bundles.tuning_bundle(**(values | overrides))


class SearchCall:
    """:func:`kernels.search_many` of ``kernel_set`` for one target with ``arguments``, for
    ``tips`` tips and ``nq`` configuration coordinates."""

    def __init__(self, kernel_set, arguments: SearchArguments, tips: int, nq: int):
        self.arguments = arguments
        self._kernel_set, self._shape = kernel_set, (tips, nq)
        self._arrays = self._new_call_arrays()
        self._arrays_free = threading.Lock()
        leading = self._leading(self._arrays, kernels.NO_DEADLINE, kernels.NO_PRIORITY)
        self._search = CompiledCall(kernel_set.search_many, arguments.trailing, leading)

    def __call__(
        self, targets: np.ndarray, seed: np.ndarray, deadline: int, primary_rows: int = kernels.NO_PRIORITY
    ) -> SearchResult:
        """Search for ``targets`` (T, 4, 4) [base frame, m] from ``seed`` (nq,) until ``deadline``
        [ns, ``time.monotonic_ns``]."""
        arrays_free = self._arrays_free
        if not arrays_free.acquire(False):
            return self._run(self._new_call_arrays(), targets, seed, deadline, primary_rows)
        try:
            return self._run(self._arrays, targets, seed, deadline, primary_rows)
        finally:
            arrays_free.release()

    @staticmethod
    def _leading(arrays: tuple, deadline: int, primary_rows: int) -> tuple:
        """``search_many``'s arguments before the tuning, for one target with ``arrays``
        (:meth:`_new_call_arrays`'s)."""
        target_in, seed_in, q_out, norms_out, results, _, context = arrays
        return (context, target_in, seed_in, -1, deadline, primary_rows, q_out, norms_out, results)

    def _run(self, arrays: tuple, targets, seed, deadline: int, primary_rows: int) -> SearchResult:
        """The call with ``arrays`` (:meth:`_new_call_arrays`'s; the same steps as :meth:`_leading`'s
        tuple, unrolled: this is a re-solve's Python)."""
        target_in, seed_in, q_out, norms_out, results, answer, context = arrays
        target_in[...] = targets
        seed_in[...] = seed
        self._search(context, target_in, seed_in, -1, deadline, primary_rows, q_out, norms_out, results)
        outcome, iterations, attempts, deadline_reached = results.tolist()[0]  # (bundles.OUTCOME ...)
        errors = norms_out.tolist()[0]
        return SearchResult(outcome, iterations, attempts, deadline_reached == 1, answer.copy(), errors)

    def _new_call_arrays(self) -> tuple:
        """A call's arrays: the target (1, T, 4, 4) and seed (1, nq) in; q (1, nq), norms (1, T, 2)
        and the results (1, ``RESULT_COLUMNS``) out (writable, aligned C arrays: one compiled
        signature); the answer, q's row (nq,); and a search context of its own."""
        tips, nq = self._shape
        q_out = np.empty((1, nq))
        return (
            np.empty((1, tips, 4, 4)),
            np.empty((1, nq)),
            q_out,
            np.empty((1, tips, 2)),
            np.empty((1, kernels.RESULT_COLUMNS), dtype=np.int64),
            q_out[0],
            self.arguments.context(self._kernel_set, nq),
        )
