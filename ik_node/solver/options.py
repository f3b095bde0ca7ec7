"""The solver's options, validated once: :class:`SolverOptions` (used by the solver, the node and
the CLI) and :class:`TipTask` (what one tip controls). Units: metres, radians, seconds."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import IKNodeError
from ..kinematics import task_rows
from . import kernels

__all__ = ["METHODS", "SOLVE_TYPES", "SolverOptions", "TipTask"]

#: Default seed-table sizes. Measured (5 ms budget, FK targets from the mid-range seed, this
#: 2-core VM): on the single chains every size solved 100 % of 1000, at 0.034-0.066 ms mean with
#: 256 entries, 0.042-0.064 with 1024, 0.054-0.074 with 2048 (the nearest-entry search grows with
#: the table), but the slowest solve on arm6 took 4.9 ms with 256 (at the budget's edge: 99.9 % in
#: one benchmark run), 1.8 ms with 1024, 1.1 ms with 2048; on the two-arm and humanoid trees 2048
#: entries solved 100 % of 300, 256 entries 99.0-99.3 %, none 98.3-99.0 %.
SEED_TABLE_ONE_TIP, SEED_TABLE_TREE = 1024, 2048

#: Selectable methods (kernel codes). ``dls`` is the default; the others are for study.
METHODS = {"dls": kernels.DLS, "pinv": kernels.PINV, "transpose": kernels.TRANSPOSE, "ccd": kernels.CCD}
#: ``speed``: the first solution; ``distance``: the one closest to the seed found within the
#: budget, by the step's own weighted norm ``sum_j (q_j - seed_j)^2 / w_j`` (locked joints left
#: out); ``manipulability``: the most manipulable found within the budget.
SOLVE_TYPES = {"speed": kernels.SPEED, "distance": kernels.DISTANCE, "manipulability": kernels.MANIPULABILITY}


@dataclass(frozen=True)
class TipTask:
    """What to control at one tip.

    ``kind`` is ``'pose'``, ``'position'``, ``'orientation'`` or a 6-element mask over the
    tip-frame axes ``(vx, vy, vz, wx, wy, wz)``. ``weight`` scales the tip's rows against other
    tips. Tolerances: position [m], orientation [rad].
    """

    kind: str | tuple = "pose"
    weight: float = 1.0
    position_tolerance: float = 1e-5
    orientation_tolerance: float = 1e-5

    def __post_init__(self):
        if not isinstance(self.kind, str):
            object.__setattr__(self, "kind", tuple(bool(flag) for flag in self.kind))
        task_rows(self.kind)  # validates
        for name in ("weight", "position_tolerance", "orientation_tolerance"):
            value = getattr(self, name)
            if not (isinstance(value, numbers.Real) and math.isfinite(value) and value > 0):
                raise IKNodeError(f"task {name} must be a positive number, got {value}")

    @property
    def rows(self):
        """The ``[v; w]`` axes (0-5) this task controls."""
        return task_rows(self.kind)


def _check_posture_gain(posture_gain) -> None:
    """``posture_gain`` is a number, ``{joint: number}`` or a sequence of numbers, each finite and
    in [0, 1] (joint names and the sequence's length are the solver's to check)."""
    if isinstance(posture_gain, Mapping):
        named = [(f"posture_gain for joint '{joint}'", gain) for joint, gain in posture_gain.items()]
    elif isinstance(posture_gain, (str, bytes)) or not isinstance(
        posture_gain, (numbers.Real, Sequence, np.ndarray)
    ):
        raise IKNodeError(
            f"posture_gain must be a number, {{joint: number}} or an array, got {type(posture_gain).__name__}"
        )
    elif isinstance(posture_gain, numbers.Real):
        named = [("posture_gain", posture_gain)]
    else:
        named = [(f"posture_gain[{index}]", gain) for index, gain in enumerate(np.ravel(posture_gain))]
    for what, gain in named:
        number = isinstance(gain, numbers.Real) and not isinstance(gain, bool)
        if not (number and math.isfinite(gain) and 0 <= gain <= 1):
            raise IKNodeError(f"{what} must be a finite number in [0, 1], got {gain!r}")


@dataclass(frozen=True)
class SolverOptions:
    """Every option of :class:`~ik_node.solver.IKSolver`, checked when made.

    * ``tasks``: ``{tip: TipTask | kind}`` (default: the full pose for every tip);
    * ``position_tolerance`` [m], ``orientation_tolerance`` [rad]: defaults for every task;
    * ``method``: one of :data:`METHODS`; ``solve_type``: one of :data:`SOLVE_TYPES`;
    * ``joint_weights``: ``{joint: weight >= 0}`` or an array; 0 locks the joint;
    * ``lower``/``upper``: ``{joint: bound}`` tightening the URDF limits [rad, m];
    * ``rest_posture``: ``{joint: value}`` or an array (default: mid-range, 0 for continuous);
      ``posture_gain``: the null-space pull toward it per posture iteration once the task has
      converged, in [0, 1] (0: off): one number for every joint, or per joint (seed 004's
      ``alpha_i``) as ``{joint: gain}`` (joints left out: 0) or an array;
    * ``min_damping``: ``lambda_min`` [m or rad] of the damped step;
    * ``max_iterations``: per attempt; ``max_attempts``: restarts included (None: until the
      timeout);
    * ``seed_table_size``: configurations in the seed table whose nearest entries (by tip pose)
      are the first restarts (0: random restarts only; None: ``SEED_TABLE_ONE_TIP`` for one tip,
      ``SEED_TABLE_TREE`` for several, see there);
    * ``random_seed``: for the table and the random restarts; results are deterministic for a
      seed when the time budget is not what ends the search;
    * ``max_joint_move`` [rad or m] (``speed`` only; None: off): a solution moving some joint
      farther than this from the seed does not end the search: restarts around the seed follow
      and the solution with the smallest largest move among the first ``NEAR_CANDIDATES`` found
      within the budget is returned (no branch flips while following a path).
    """

    tasks: Mapping | None = None
    position_tolerance: float = 1e-5
    orientation_tolerance: float = 1e-5
    method: str = "dls"
    solve_type: str = "speed"
    joint_weights: object = None
    lower: Mapping | None = None
    upper: Mapping | None = None
    rest_posture: object = None
    posture_gain: float | Mapping | Sequence = 0.0
    min_damping: float = 1e-3
    max_iterations: int = 100
    max_attempts: int | None = None
    seed_table_size: int | None = None
    random_seed: int = 0
    max_joint_move: float | None = None

    def __post_init__(self):
        if self.method not in METHODS:
            raise IKNodeError(f"unknown method '{self.method}'; choose one of {list(METHODS)}")
        if self.solve_type not in SOLVE_TYPES:
            raise IKNodeError(f"unknown solve_type '{self.solve_type}'; choose one of {list(SOLVE_TYPES)}")
        _check_posture_gain(self.posture_gain)
        for name, low, high in (
            ("min_damping", 0.0, math.inf),
            ("position_tolerance", 0.0, math.inf),
            ("orientation_tolerance", 0.0, math.inf),
        ):
            value = getattr(self, name)
            if not (isinstance(value, numbers.Real) and math.isfinite(value) and low <= value <= high):
                raise IKNodeError(f"{name} must be a finite number in [{low}, {high}], got {value}")
        for name, low in (("max_iterations", 1), ("max_attempts", 1), ("seed_table_size", 0)):
            value = getattr(self, name)
            if value is None and name in ("max_attempts", "seed_table_size"):
                continue
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
                raise IKNodeError(f"{name} must be an integer >= {low}, got {value!r}")
        if self.max_joint_move is not None and not (
            isinstance(self.max_joint_move, numbers.Real)
            and math.isfinite(self.max_joint_move)
            and self.max_joint_move > 0
        ):
            raise IKNodeError(
                f"max_joint_move must be a positive number of rad or m (or None), got {self.max_joint_move}"
            )
        if not isinstance(self.random_seed, numbers.Integral) or not 0 <= self.random_seed < 2**32:
            raise IKNodeError(f"random_seed must be an integer in [0, 2**32), got {self.random_seed!r}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names, in declaration order."""
        return tuple(field.name for field in dataclasses.fields(cls))
