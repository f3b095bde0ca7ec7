"""One search of :func:`kernels.search_many` for one target, at the least Python cost per call.

A re-solve (the goal moved a little, seeded at the last answer) converges in 1-3 iterations,
~1 us each compiled; what a call costs around them is Python's. :class:`SearchCall` pays once
what every call would: the bundles' tuple (:meth:`IKSolver._search_arguments`), the compiled
function for their types (:func:`~ik_node.compiled.jit.compiled_entry`: no dispatch by type),
and the call's input and output arrays (the *frame*, reused: each call copies the target and
seed in and the answer out). A call made while another thread's is in the frame (the node's
solves and a user's, say) gets a frame of its own.
"""

from __future__ import annotations

import threading

import numpy as np

from ..compiled.jit import compiled_entry
from . import kernels


class SearchCall:
    """:func:`kernels.search_many` of ``kernel_set`` for one target with ``arguments`` (the
    bundles after the outputs), for ``tips`` tips and ``nq`` configuration coordinates."""

    def __init__(self, kernel_set, arguments: tuple, tips: int, nq: int):
        self.arguments = arguments
        self._search_many = kernel_set.search_many
        self._shape = (tips, nq)
        self._frame = _frame(tips, nq)
        self._frame_free = threading.Lock()
        self._entry = None  # (found at the first call, once the arguments' kernels are compiled)

    def __call__(
        self, targets: np.ndarray, seed: np.ndarray, deadline: int, primary_rows: int = kernels.NO_PRIORITY
    ) -> tuple[int, int, int, bool, np.ndarray, list]:
        """Search for ``targets`` (T, 4, 4) [base frame, m] from ``seed`` (nq,) until ``deadline``
        [ns, ``time.monotonic_ns``]; returns (outcome, iterations, attempts, whether the deadline
        ended it, q (nq,), the tips' [position m, orientation rad] errors)."""
        if not self._frame_free.acquire(blocking=False):
            return self._run(_frame(*self._shape), targets, seed, deadline, primary_rows)
        try:
            return self._run(self._frame, targets, seed, deadline, primary_rows)
        finally:
            self._frame_free.release()

    def _run(self, frame: tuple, targets, seed, deadline: int, primary_rows: int) -> tuple:
        """The call with ``frame`` (:func:`_frame`'s arrays)."""
        target_in, seed_in, q_out, norms_out, results = frame
        target_in[0] = targets
        seed_in[0] = seed
        call = (target_in, seed_in, -1, deadline, primary_rows, q_out, norms_out, results, *self.arguments)
        if self._entry is None:
            self._search_many(*call)
            self._entry = compiled_entry(self._search_many, call)
        else:
            self._entry(*call)
        outcome, iterations, attempts, deadline_reached = results[0].tolist()
        return outcome, iterations, attempts, bool(deadline_reached), q_out[0].copy(), norms_out[0].tolist()


def _frame(tips: int, nq: int) -> tuple:
    """A call's arrays: the target (1, T, 4, 4) and seed (1, nq) in; q (1, nq), norms (1, T, 2)
    and the results (1, ``RESULT_COLUMNS``) out (writable, aligned C arrays: one compiled
    signature)."""
    return (
        np.empty((1, tips, 4, 4)),
        np.empty((1, nq)),
        np.empty((1, nq)),
        np.empty((1, tips, 2)),
        np.empty((1, kernels.RESULT_COLUMNS), dtype=np.int64),
    )
