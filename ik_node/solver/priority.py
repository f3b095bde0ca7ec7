"""Task priority when some tips' targets lie beyond their reach (Siciliano & Slotine 1991).

The reachable tips are solved first on their own (a search over their rows: the far tips do not
pull on the shared joints); then one Levenberg-Marquardt attempt with the reachable tips' rows as
primary brings the far tips as close as holding the reachable ones allows,
``dq = J1⁺e1 + (I − J1⁺J1) J2⁺(e2 − J2 J1⁺e1)``. :class:`TaskPriority` holds the problems of each
split of the tips (prepared with the solver, for trees of up to ``PREPARED_PRIORITY_TIPS`` tips)
and their searches (:class:`PrioritySearches`, made at a split's first use);
:func:`solve_prioritised` runs them.
"""

from __future__ import annotations

import copy
from typing import NamedTuple

import numpy as np

from . import kernels
from .options import SolverOptions
from .problem import Problem
from .results import Outcome
from .search_call import SearchCall, SearchResult, search_arguments, search_tuning
from .seed_table import SeedTable

__all__ = ["PrioritySearches", "TaskPriority", "solve_prioritised"]

#: Trees with up to this many tips prepare the task-priority problems of every split of their
#: tips when built (at most 14), so that none is built inside a solve's budget.
PREPARED_PRIORITY_TIPS = 4


class TaskPriority:
    """The task-priority problems of ``problem`` (its tips in order) and its seed table
    ``table``, one set per split of the tips into reachable and far (:meth:`problems`), and
    their searches on ``kernel_set`` with ``options`` (the solver's; :meth:`searches`).
    The problems and searches are made once per split (a memo: nothing else changes);
    :meth:`with_collision` makes another for other collision pairs."""

    def __init__(self, problem: Problem, table: SeedTable, options: SolverOptions, kernel_set):
        self._problem, self._table, self._options, self._kernel_set = problem, table, options, kernel_set
        self._splits: dict = {}  # near tips -> (their problem and table, the problem near-first, no table)
        self._searches: dict = {}  # near tips -> their PrioritySearches
        tips = problem.tips
        # every split now, not inside a budget; none with relative tasks (a split would leave
        # out a reference: such solvers solve all tips at once, see IKSolver.solve)
        if len(tips) <= PREPARED_PRIORITY_TIPS and not problem.relative_tips:
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
                SeedTable(ordered, 0, self._options.random_seed, problem.rest_posture),
            )
        return self._splits[near]

    def searches(self, near: tuple) -> PrioritySearches:
        """The searches of the split with reachable tips ``near``, made once per split: each call
        after its first goes straight to the compiled function (:class:`SearchCall`), none pays
        numba's dispatch again."""
        if near not in self._searches:
            near_problem, near_table, ordered, no_table = self.problems(near)
            options, kernel_set = self._options, self._kernel_set
            nq, tips = len(self._problem.rest_posture), len(ordered.tips)
            one_attempt = search_tuning(options, max_attempts=1, max_joint_move=0.0)
            no_iterations = search_tuning(options, max_iterations=0, max_attempts=1, max_joint_move=0.0)
            self._searches[near] = PrioritySearches(
                SearchCall(kernel_set, search_arguments(near_problem, near_table, options), len(near), nq),
                SearchCall(kernel_set, search_arguments(ordered, no_table, options, one_attempt), tips, nq),
                SearchCall(kernel_set, search_arguments(ordered, no_table, options, no_iterations), tips, nq),
            )
        return self._searches[near]

    def __getstate__(self) -> dict:
        """Pickled (with its solver) without its searches and kernel set: the copy makes them
        again with the compiled kernels (:meth:`__setstate__`)."""
        return {**self.__dict__, "_searches": {}, "_kernel_set": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._kernel_set = kernels

    def with_collision(self, problem: Problem) -> TaskPriority:
        """The same splits for ``problem``, this one's problem with other collision pairs
        (:meth:`~.problem.Problem.with_collision`): the prepared problems take its pairs, the
        searches are made again at first use."""
        collision = problem.collision
        priority = copy.copy(self)
        priority._problem, priority._searches = problem, {}
        priority._splits = {
            near: (
                near_problem.with_collision(collision),
                near_table,
                ordered.with_collision(collision),
                no_table,
            )
            for near, (near_problem, near_table, ordered, no_table) in self._splits.items()
        }
        return priority


class PrioritySearches(NamedTuple):
    """The searches of one split of the tips: the reachable tips alone (``near``), one attempt
    of the whole problem with their rows first (``one_attempt``), and its errors without
    iterations (``errors_only``)."""

    near: SearchCall
    one_attempt: SearchCall
    errors_only: SearchCall


def solve_prioritised(core, targets, seed, deadline: int, out_of_reach: list) -> tuple:
    """The search of ``core`` (a solver's :class:`~.core.SolverCore`, which holds this module's
    :class:`TaskPriority`) for ``targets`` (T, 4, 4) when the
    tips ``out_of_reach`` (some, not all) lie beyond their reach: the prioritised searches
    (:func:`_prioritised_search`); if they fail within the budget, the full search within what is
    left of it (the reach test is a bound, not a certainty), kept if it converges. Returns what a
    :class:`SearchCall` returns (a :class:`SearchResult`) and the tips still counted out of reach
    (none when the full search's answer is kept)."""
    found = _prioritised_search(core, targets, seed, deadline, out_of_reach)
    if found.outcome not in (kernels.CONVERGED, kernels.SEED_NOT_FINITE) and not found.deadline_reached:
        full = core.search(targets, seed, deadline)
        kept = full if full.outcome == kernels.CONVERGED else found
        found = kept._replace(
            iterations=found.iterations + full.iterations,
            attempts=found.attempts + full.attempts,
            deadline_reached=full.deadline_reached,
        )
        out_of_reach = [] if kept is full else out_of_reach
    return found, out_of_reach


def _prioritised_search(core, targets, seed, deadline: int, out_of_reach: list) -> SearchResult:
    """First the reachable tips alone, then one attempt with their rows as primary (a search of
    one attempt from there with ``primary_rows``). Returns what a :class:`SearchCall` returns."""
    problem, max_joint_move = core.problem, core.options.max_joint_move
    tips = problem.tips
    near = tuple(tip for tip in tips if tip not in out_of_reach)
    ordered = core.priority.problems(near)[2]
    searches = core.priority.searches(near)
    order = [tips.index(tip) for tip in ordered.tips]
    found = searches.near(np.ascontiguousarray(targets[order[: len(near)]]), seed, deadline)
    outcome, iterations, attempts, deadline_reached, q = (
        found.outcome, found.iterations, found.attempts, found.deadline_reached, found.q,
    )  # fmt: skip
    if outcome == kernels.SEED_NOT_FINITE:
        return found
    ordered_targets = np.ascontiguousarray(targets[order])
    if outcome == Outcome.CONVERGED:
        primary_rows = np.int64(np.sum(ordered.rows[:, 0] < len(near)))
        attempt = searches.one_attempt(ordered_targets, q, deadline, primary_rows)
        q, ordered_errors = attempt.q, attempt.errors
        iterations += attempt.iterations
        deadline_reached |= attempt.deadline_reached
        outcome = Outcome.CONVERGED if attempt.outcome == Outcome.CONVERGED else Outcome.STUCK
        if outcome == Outcome.CONVERGED and max_joint_move is not None:
            # (that attempt's move is bounded from its own start, not from the seed)
            tree = problem.tree
            clipped = tree.normalized(np.clip(seed, problem.configuration_lower, problem.configuration_upper))
            if np.abs(tree.difference(clipped, q)).max() > max_joint_move:
                outcome = Outcome.JOINT_MOVE
    else:  # no iterations: the errors of every tip at q
        ordered_errors = searches.errors_only(ordered_targets, q, kernels.NO_DEADLINE).errors
    errors = [None] * len(order)
    for position, index in enumerate(order):
        errors[index] = ordered_errors[position]
    return SearchResult(outcome, iterations, attempts, deadline_reached, q, errors)
