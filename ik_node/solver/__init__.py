"""Inverse kinematics over a :class:`~ik_node.kinematics.KinematicTree`.

A newcomer's map: :mod:`.options` (what can be asked: :class:`SolverOptions`, :class:`TipTask`),
:mod:`.problem` (the arrays a solve runs on), :mod:`.seed_table` (where restarts begin),
:mod:`.kernels` (what it calls of the compiled core, :mod:`ik_node.compiled`: FK, Jacobians, the
damped step with limit rows, one loop with a step per method, the restart search; numba or plain
Python: :mod:`ik_node.compiled.jit`), :mod:`.search_call` (one search: its bundles and call),
:mod:`.ik_solver` (the :class:`IKSolver` façade: build, search, report) and its parts:
:mod:`.inputs` (checks of what callers hand it), :mod:`.kernel_switch` (which kernels serve the
solves, their compile), :mod:`.priority` (task priority), :mod:`.batch` (``solve_many``),
:mod:`.results` (:class:`IKResult`, :class:`BatchResult`, outcomes and their reasons),
:mod:`.null_space`, and :mod:`.closed_form` and :mod:`.all_solutions` (every solution of a goal,
:meth:`IKSolver.solve_all`: closed form where the chain decomposes, read from the tree; else a
search).
Exported besides: the option list and its syntax (what the node's parameters and the CLI's
options are made from), :func:`check_movable` (a tree the solver can work on),
:func:`resolve_tasks` (the tips' tasks checked together), and what a branch
label names and where there are any (:data:`BRANCH_ROOTS`, :func:`has_closed_form`).
"""

from .all_solutions import has_closed_form
from .cartesian import CartesianPath
from .closed_form import BRANCH_ROOTS
from .ik_solver import IKSolver
from .inputs import check_movable, limits_and_rest, resolve_tasks
from .kernel_switch import kernels_prepared, prepare_kernels
from .options import (
    KIND_SYNTAX,
    METHODS,
    OPTION_SPECS,
    SOLVE_TYPES,
    TASK_AXES,
    TASK_KINDS,
    SolverOptions,
    TipTask,
    bounds_text,
    task_kind,
    task_offset,
)
from .results import BatchResult, IKResult, IKSolutions, Outcome

__all__ = [
    "BRANCH_ROOTS",
    "BatchResult",
    "CartesianPath",
    "IKResult",
    "IKSolutions",
    "IKSolver",
    "KIND_SYNTAX",
    "METHODS",
    "OPTION_SPECS",
    "Outcome",
    "SOLVE_TYPES",
    "SolverOptions",
    "TASK_AXES",
    "TASK_KINDS",
    "TipTask",
    "bounds_text",
    "check_movable",
    "has_closed_form",
    "kernels_prepared",
    "limits_and_rest",
    "prepare_kernels",
    "resolve_tasks",
    "task_kind",
    "task_offset",
]
