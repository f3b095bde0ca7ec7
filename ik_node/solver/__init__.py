"""Inverse kinematics over a :class:`~ik_node.kinematics.KinematicTree`.

A newcomer's map: :mod:`.options` (what can be asked: :class:`SolverOptions`, :class:`TipTask`),
:mod:`.problem` (the arrays a solve runs on), :mod:`.seed_table` (where restarts begin),
:mod:`.kernels` (what it calls of the compiled core, :mod:`ik_node.compiled`: FK, Jacobians, the
damped step with limit rows, one loop with a step per method, the restart search; numba or plain
Python: :mod:`ik_node.compiled.jit`), and
:mod:`.ik_solver` (the :class:`IKSolver` façade: input checks, task priority, results).
"""

from .ik_solver import BatchResult, IKResult, IKSolver, Outcome, kernels_prepared, prepare_kernels
from .options import METHODS, SOLVE_TYPES, SolverOptions, TipTask

__all__ = [
    "BatchResult",
    "IKResult",
    "IKSolver",
    "METHODS",
    "Outcome",
    "SOLVE_TYPES",
    "SolverOptions",
    "TipTask",
    "kernels_prepared",
    "prepare_kernels",
]
