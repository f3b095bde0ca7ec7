"""Task priority when some tips' targets lie beyond their reach (Siciliano & Slotine 1991).

The reachable tips are solved first on their own (a search over their rows: the far tips do not
pull on the shared joints); then one Levenberg-Marquardt attempt with the reachable tips' rows as
primary brings the far tips as close as holding the reachable ones allows,
``dq = J1⁺e1 + (I − J1⁺J1) J2⁺(e2 − J2 J1⁺e1)``. :class:`TaskPriority` holds the problems of each
split of the tips (prepared with the solver, for trees of up to ``PREPARED_PRIORITY_TIPS`` tips);
:func:`solve_prioritised` runs the searches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import kernels
from .problem import Problem
from .results import Outcome
from .search_call import SearchCall, SearchResult, search_arguments, search_settings
from .seed_table import SeedTable

if TYPE_CHECKING:
    from .ik_solver import IKSolver

__all__ = ["TaskPriority", "solve_prioritised"]

#: Trees with up to this many tips prepare the task-priority problems of every split of their
#: tips when built (at most 14), so that none is built inside a solve's budget.
PREPARED_PRIORITY_TIPS = 4


class TaskPriority:
    """The task-priority problems of ``problem`` (its tips in order) and its seed table
    ``table``, one set per split of the tips into reachable and far (:meth:`problems`);
    ``random_seed`` and ``rest_posture`` are the solver's."""

    def __init__(self, problem: Problem, table: SeedTable, random_seed: int, rest_posture: np.ndarray):
        self._problem, self._table = problem, table
        self._random_seed, self._rest_posture = random_seed, rest_posture
        self._splits: dict = {}  # near tips -> (their problem and table, the problem near-first, no table)
        tips = problem.tips
        if len(tips) <= PREPARED_PRIORITY_TIPS:  # every split now, not inside a budget
            for mask in range(1, 2 ** len(tips) - 1):
                self.problems(tuple(tip for i, tip in enumerate(tips) if mask >> i & 1))

    def problems(self, near: tuple) -> tuple[Problem, SeedTable, Problem, SeedTable]:
        """For the reachable tips ``near``: their problem and seed table, and the whole problem
        with their rows first, with an empty table (its one attempt starts where the first search
        ended); built once per split."""
        if near not in self._splits:
            problem = self._problem
            near_problem = problem.for_tips(near)
            ordered = problem.for_tips(near + tuple(tip for tip in problem.tips if tip not in near))
            self._splits[near] = (
                near_problem,
                self._table.for_tips(near_problem, problem),
                ordered,
                SeedTable(ordered, 0, self._random_seed, self._rest_posture),
            )
        return self._splits[near]

    def set_collision(self, collision: tuple) -> None:
        """The prepared problems' collision arrays (:meth:`~.problem.Problem.set_collision`; the
        ones built later copy the problem's)."""
        for near_problem, _, ordered, _ in self._splits.values():
            near_problem.set_collision(collision)
            ordered.set_collision(collision)


def solve_prioritised(solver: IKSolver, targets, seed, deadline: int, out_of_reach: list) -> tuple:
    """``solver``'s search for ``targets`` (T, 4, 4) when the tips ``out_of_reach`` (some, not
    all) lie beyond their reach: the prioritised searches (:func:`_prioritised_search`); if they
    fail within the budget, the full search within what is left of it (the reach test is a bound,
    not a certainty), kept if it converges. Returns what a :class:`SearchCall` returns (a
    :class:`SearchResult`) and the tips still counted out of reach (none when the full search's
    answer is kept)."""
    found = _prioritised_search(solver, targets, seed, deadline, out_of_reach)
    if found.outcome not in (kernels.CONVERGED, kernels.SEED_NOT_FINITE) and not found.deadline_reached:
        full = solver._search_call(targets, seed, deadline)
        kept = full if full.outcome == kernels.CONVERGED else found
        found = kept._replace(
            iterations=found.iterations + full.iterations,
            attempts=found.attempts + full.attempts,
            deadline_reached=full.deadline_reached,
        )
        out_of_reach = [] if kept is full else out_of_reach
    return found, out_of_reach


def _prioritised_search(solver: IKSolver, targets, seed, deadline: int, out_of_reach: list) -> SearchResult:
    """First the reachable tips alone, then one attempt with their rows as primary (a search of
    one attempt from there with ``primary_rows``). Returns what a :class:`SearchCall` returns."""
    tips, options = solver.tip_links, solver.options
    near = tuple(tip for tip in tips if tip not in out_of_reach)
    near_problem, near_table, ordered, no_table = solver._priority.problems(near)
    order = [tips.index(tip) for tip in ordered.tips]
    near_arguments = search_arguments(near_problem, near_table, options)
    found = _search(solver, np.ascontiguousarray(targets[order[: len(near)]]), seed, deadline, near_arguments)
    outcome, iterations, attempts, deadline_reached, q = (
        found.outcome, found.iterations, found.attempts, found.deadline_reached, found.q,
    )  # fmt: skip
    if outcome == kernels.SEED_NOT_FINITE:
        return found
    ordered_targets = np.ascontiguousarray(targets[order])
    if outcome == Outcome.CONVERGED:
        primary_rows = np.int64(np.sum(ordered.rows[:, 0] < len(near)))
        settings = search_settings(options, max_attempts=1, max_joint_move=0.0)  # (one attempt from q)
        arguments = search_arguments(ordered, no_table, options, settings)
        attempt = _search(solver, ordered_targets, q, deadline, arguments, primary_rows)
        q, ordered_errors = attempt.q, attempt.errors
        iterations += attempt.iterations
        deadline_reached |= attempt.deadline_reached
        outcome = Outcome.CONVERGED if attempt.outcome == Outcome.CONVERGED else Outcome.STUCK
        max_joint_move = options.max_joint_move
        if outcome == Outcome.CONVERGED and max_joint_move is not None:
            # (that attempt's move is bounded from its own start, not from the seed)
            clipped = solver.tree.normalized(np.clip(seed, solver.lower, solver.upper))
            if np.abs(solver.tree.difference(clipped, q)).max() > max_joint_move:
                outcome = Outcome.JOINT_MOVE
    else:  # no iterations: the errors of every tip at q
        settings = search_settings(options, max_iterations=0, max_attempts=1, max_joint_move=0.0)
        arguments = search_arguments(ordered, no_table, options, settings)
        ordered_errors = _search(solver, ordered_targets, q, kernels.NO_DEADLINE, arguments).errors
    errors = [None] * len(order)
    for position, index in enumerate(order):
        errors[index] = ordered_errors[position]
    return SearchResult(outcome, iterations, attempts, deadline_reached, q, errors)


def _search(
    solver: IKSolver, targets, seed, deadline: int, arguments, primary_rows=kernels.NO_PRIORITY
) -> SearchResult:
    """A search other than ``solver``'s common one, on its kernel set (a :class:`SearchCall` with
    ``arguments``); returns what a :class:`SearchCall` does."""
    return SearchCall(solver._kernels, arguments, len(targets), len(seed))(
        targets, seed, deadline, primary_rows
    )
