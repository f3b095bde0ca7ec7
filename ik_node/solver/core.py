"""What a solver's solves run on, as one value: :class:`SolverCore`.

A solver serves its solves with one kernel set at a time (the compiled kernels, or while they
compile the same functions as plain Python: :mod:`.kernel_switch`) and one set of collision pairs
(obstacles can be replaced). Everything a solve reads that depends on those — the problem made
for the kernel set, its seed table, the task-priority problems and the search call — is made
together into a :class:`SolverCore` and replaced whole, in one assignment; a solve reads the
solver's core once and runs on it to the end, whatever is swapped in meanwhile. ``solve_many``,
task priority, the closed form's nearest batch and the kernels' preparation take a core, not the
solver.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import kernels
from .options import SolverOptions
from .priority import TaskPriority
from .problem import Problem
from .search_call import SearchArguments, SearchCall, search_arguments
from .seed_table import SeedTable

__all__ = ["PYTHON_SEED_TABLE", "SolverCore"]

#: Seed-table entries at most while the kernels run as plain Python (each entry's FK ~0.3 ms).
PYTHON_SEED_TABLE = 256


class SolverCore(NamedTuple):
    """The kernel set a solver's solves call (:mod:`.kernels`, or its plain-Python copy
    :func:`kernels.python_kernels`), the solver's options, the problem made for that kernel set,
    its seed table, the task-priority problems (:class:`~.priority.TaskPriority`) and the search
    of ``solve`` and ``solve_many`` (:class:`~.search_call.SearchCall`). Made by :meth:`build`
    and :meth:`with_collision`, never changed."""

    kernels: Any
    options: SolverOptions
    problem: Problem
    seed_table: SeedTable
    priority: TaskPriority
    search: SearchCall

    @classmethod
    def build(cls, kernel_set, options: SolverOptions, problem: Problem, table_size: int) -> SolverCore:
        """The core of ``problem`` on ``kernel_set``: the problem calling it, a seed table of
        ``table_size`` entries (``PYTHON_SEED_TABLE`` at most as plain Python) around the rest
        posture, the task-priority problems and the search."""
        problem = problem.with_kernels(kernel_set)
        if kernel_set is not kernels:
            table_size = min(table_size, PYTHON_SEED_TABLE)
        table = SeedTable(problem, table_size, options.random_seed, problem.rest_posture)
        return cls.assemble(
            kernel_set, options, problem, table, TaskPriority(problem, table, options, kernel_set)
        )

    @classmethod
    def assemble(
        cls, kernel_set, options: SolverOptions, problem: Problem, table: SeedTable, priority: TaskPriority
    ) -> SolverCore:
        """The core of these parts (made for ``kernel_set``), with their search."""
        return cls(
            kernel_set, options, problem, table, priority, _search(kernel_set, problem, table, options)
        )

    def with_collision(self, collision: tuple) -> SolverCore:
        """The same core keeping the pairs ``collision`` apart
        (:meth:`~.problem.Problem.with_collision`): the seed table is kept."""
        problem = self.problem.with_collision(collision)
        return self._replace(
            problem=problem,
            priority=self.priority.with_collision(problem),
            search=_search(self.kernels, problem, self.seed_table, self.options),
        )

    @property
    def arguments(self) -> SearchArguments:
        """The search's bundles (:func:`.search_call.search_arguments` of the problem and its
        table)."""
        return self.search.arguments


def _search(kernel_set, problem: Problem, table: SeedTable, options: SolverOptions) -> SearchCall:
    """The search of ``solve`` and ``solve_many`` on ``kernel_set`` for ``problem`` and ``table``."""
    arguments = search_arguments(problem, table, options)
    return SearchCall(kernel_set, arguments, len(problem.tips), len(problem.rest_posture))
