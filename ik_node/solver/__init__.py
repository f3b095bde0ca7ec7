"""Inverse kinematics over a :class:`~ik_node.kinematics.KinematicTree`.

A newcomer's map: :mod:`.options` (what can be asked: :class:`SolverOptions`, :class:`TipTask`),
:mod:`.problem` (the arrays a solve runs on), :mod:`.seed_table` (where restarts begin),
:mod:`.kernels` (the compiled math: FK, Jacobians, the damped step with limit rows, the one
Levenberg-Marquardt loop, the restart search), :mod:`.jit` (numba or plain Python), and
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
