"""The solver built off the node's executor thread, so that nothing a user sees first waits on
it (a build takes a second or two; after an install the solver then answers as plain Python
while a helper process compiles its kernels: see :class:`ik_node.solver.IKSolver`).

:class:`SolverPreparation` runs :func:`ik_node.decisions.planning.build_solver` on a daemon thread (a node
stopped meanwhile exits at once) and hands the outcome back to whoever polls :meth:`take`. One
build at a time: it loads the kernels for every later solver of the process. No rclpy here."""

from __future__ import annotations

import threading

from .planning import Model, build_solver

__all__ = ["SolverPreparation"]


class SolverPreparation:
    """One background solver build at a time; poll :meth:`take` for its outcome."""

    def __init__(self):
        self._model: Model | None = None
        self._thread: threading.Thread | None = None
        self._outcome: dict = {}

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, model: Model) -> bool:
        """Build ``model``'s solver on a thread; False (nothing started) while one is running."""
        if self.running:
            return False
        self._model, self._outcome = model, {}
        outcome = self._outcome

        def build():
            try:
                outcome["solver"] = build_solver(model)
            except Exception as error:  # handed to the poller: it reports it
                outcome["error"] = error

        self._thread = threading.Thread(target=build, name="ik_node solver preparation", daemon=True)
        self._thread.start()
        return True

    def take(self) -> tuple[Model, object, Exception | None] | None:
        """``(model, solver, error)`` once a build has finished (then forgotten), else None."""
        if self._thread is None or self._thread.is_alive():
            return None
        self._thread = None
        return self._model, self._outcome.get("solver"), self._outcome.get("error")
