"""One search of :func:`kernels.search_many` for one target, at the least Python cost per call,
and the bundles it takes (:func:`search_arguments`).

A re-solve (the goal moved a little, seeded at the last answer) converges in 1-3 iterations,
~1 us each compiled; what a call costs around them is Python's. :class:`SearchCall` pays once
what every call would: the bundles' tuple (:func:`search_arguments`), the compiled
function for their types (:class:`~ik_node.compiled.jit.CompiledCall`: no dispatch by type),
and the call's input and output arrays (the *frame*, reused: each call copies the target and
seed in and the answer out). A call made while another thread's is in the frame (the node's
solves and a user's, say) gets a frame of its own.
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

__all__ = ["SearchArguments", "SearchCall", "SearchResult", "search_arguments", "search_settings"]


class SearchArguments(NamedTuple):
    """What :func:`kernels.search_many` takes after its targets, seeds, budget, task priority and
    outputs, in its order (passed as ``*arguments``: numba sees the bundles, not this tuple): the
    bundles (see :mod:`ik_node.compiled.bundles`) and the feature switches (None where the problem
    does not use the feature, so that it compiles only the kernels it uses)."""

    tree: tuple
    task: tuple
    joints: np.ndarray
    table: tuple
    settings: tuple
    method: np.int64 | None
    solve_type: np.int64 | None
    posture: np.ndarray | None
    collision: tuple | None

    @property
    def switches(self) -> tuple:
        """The feature switches: ``method``, ``solve_type``, ``posture``, ``collision``."""
        return (self.method, self.solve_type, self.posture, self.collision)


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
    problem: Problem, table: SeedTable, options: SolverOptions, settings: tuple | None = None
) -> SearchArguments:
    """The :class:`SearchArguments` of ``problem`` with seed table ``table``: its tree, task and
    joints, the seed table, the settings (``settings``, else :func:`search_settings` of
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
        settings=search_settings(options) if settings is None else settings,
        method=None if method == kernels.DLS else np.int64(method),  # (the defaults dls and speed: None)
        solve_type=None if solve_type == kernels.SPEED else np.int64(solve_type),
        posture=problem.posture,
        collision=problem.collision,
    )


def search_settings(options: SolverOptions, **overrides) -> tuple:
    """The kernels' ``settings`` bundle of ``options`` (see :mod:`ik_node.compiled.bundles`), as
    float and int whatever number types they were given in: one compiled signature;
    ``overrides``: slots by name (``max_attempts=1``), of the same types."""
    values = {
        "min_damping": float(options.min_damping),
        "max_iterations": int(options.max_iterations),
        "max_attempts": -1 if options.max_attempts is None else int(options.max_attempts),
        "random_seed": int(options.random_seed),
        "max_joint_move": 0.0 if options.max_joint_move is None else float(options.max_joint_move),
    }
    return bundles.settings_bundle(**(values | overrides))


class SearchCall:
    """:func:`kernels.search_many` of ``kernel_set`` for one target with ``arguments`` (the
    bundles after the outputs), for ``tips`` tips and ``nq`` configuration coordinates."""

    def __init__(self, kernel_set, arguments: SearchArguments, tips: int, nq: int):
        self.arguments = arguments
        self._shape = (tips, nq)
        self._frame = _frame(tips, nq)
        self._frame_free = threading.Lock()
        leading = self._leading(self._frame, kernels.NO_DEADLINE, kernels.NO_PRIORITY)
        self._search = CompiledCall(kernel_set.search_many, tuple(arguments), leading)

    def __call__(
        self, targets: np.ndarray, seed: np.ndarray, deadline: int, primary_rows: int = kernels.NO_PRIORITY
    ) -> SearchResult:
        """Search for ``targets`` (T, 4, 4) [base frame, m] from ``seed`` (nq,) until ``deadline``
        [ns, ``time.monotonic_ns``]."""
        frame_free = self._frame_free
        if not frame_free.acquire(False):
            return self._run(_frame(*self._shape), targets, seed, deadline, primary_rows)
        try:
            return self._run(self._frame, targets, seed, deadline, primary_rows)
        finally:
            frame_free.release()

    @staticmethod
    def _leading(frame: tuple, deadline: int, primary_rows: int) -> tuple:
        """``search_many``'s arguments before the bundles, for one target with ``frame``
        (:func:`_frame`'s arrays)."""
        target_in, seed_in, q_out, norms_out, results, _ = frame
        return (target_in, seed_in, -1, deadline, primary_rows, q_out, norms_out, results)

    def _run(self, frame: tuple, targets, seed, deadline: int, primary_rows: int) -> SearchResult:
        """The call with ``frame`` (:func:`_frame`'s arrays; the same steps as :meth:`_leading`'s
        tuple, unrolled: this is a re-solve's Python)."""
        target_in, seed_in, q_out, norms_out, results, answer = frame
        target_in[...] = targets
        seed_in[...] = seed
        self._search(target_in, seed_in, -1, deadline, primary_rows, q_out, norms_out, results)
        outcome, iterations, attempts, deadline_reached = results.tolist()[0]  # (bundles.OUTCOME ...)
        errors = norms_out.tolist()[0]
        return SearchResult(outcome, iterations, attempts, deadline_reached == 1, answer.copy(), errors)


def _frame(tips: int, nq: int) -> tuple:
    """A call's arrays: the target (1, T, 4, 4) and seed (1, nq) in; q (1, nq), norms (1, T, 2)
    and the results (1, ``RESULT_COLUMNS``) out (writable, aligned C arrays: one compiled
    signature); and the answer, q's row (nq,)."""
    q_out = np.empty((1, nq))
    return (
        np.empty((1, tips, 4, 4)),
        np.empty((1, nq)),
        q_out,
        np.empty((1, tips, 2)),
        np.empty((1, kernels.RESULT_COLUMNS), dtype=np.int64),
        q_out[0],
    )
