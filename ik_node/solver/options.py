"""The solver's options, specified once: :data:`OPTIONS` (one :class:`OptionSpec` per scalar option:
name, kind, default, unit, valid range or choices, description), from which
:class:`SolverOptions` validates its values and the node declares and checks its parameters for
the same options (:mod:`ik_node.decisions.parameters`); and :class:`TipTask` (what one tip controls).
Units: metres, radians, seconds."""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..compiled.jit import JIT_ENABLED
from ..errors import IKNodeError
from . import kernels

__all__ = [
    "AXIS_NAMES",
    "METHODS",
    "OPTIONS",
    "OPTION_SPECS",
    "OptionSpec",
    "SOLVE_TYPES",
    "SolverOptions",
    "TASK_AXES",
    "TASK_KINDS",
    "TipTask",
    "KIND_SYNTAX",
    "bounds_text",
    "task_kind",
    "task_offset",
    "tip_task",
]

#: Default seed-table sizes. Measured (5 ms budget, FK targets from the mid-range seed, this
#: 2-core VM): on the single chains every size solved 100 % of 1000, at 0.034-0.066 ms mean with
#: 256 entries, 0.042-0.064 with 1024, 0.054-0.074 with 2048 (when every entry was measured), but
#: the slowest solve on arm6 took 4.9 ms with 256 (at the budget's edge: 99.9 % in one benchmark
#: run), 1.8 ms with 1024, 1.1 ms with 2048; on the two-arm and humanoid trees 2048 entries solved
#: 100 % of 300, 256 entries 99.0-99.3 %, none 98.3-99.0 %. Since the table's index (a search
#: measures about 640 entries and centroids, whatever the size), one tip takes 16384: arm7's
#: TRAC-IK-protocol solves took 11.7 iterations on average with 1024 entries, 9.7 with 16384
#: (built in ~30 ms). As plain Python (no numba) each entry's FK takes ~0.3 ms: one tip keeps
#: 1024 entries there.
SEED_TABLE_ONE_TIP, SEED_TABLE_TREE = (16384 if JIT_ENABLED else 1024), 2048
#: A default seed table holds at most this many configuration values (entries x nq, 2 MiB of
#: float64: one tip's 16384 entries up to 16 coordinates) and at least ``SEED_TABLE_LEAST``
#: entries, so that building it stays linear in the number of joints: a 10,000-joint chain gets 64
#: entries, not 16384 (1.3 GB of configurations, each entry an FK of the whole chain).
SEED_TABLE_VALUES, SEED_TABLE_LEAST = 16384 * 16, 64


def default_seed_table_size(tips: int, coordinates: int) -> int:
    """The seed table's size where ``seed_table_size`` is None, for ``tips`` tips and a
    configuration of ``coordinates`` values: ``SEED_TABLE_ONE_TIP`` or ``SEED_TABLE_TREE``,
    fewer where it would hold more than ``SEED_TABLE_VALUES`` values."""
    size = SEED_TABLE_ONE_TIP if tips == 1 else SEED_TABLE_TREE
    return min(size, max(SEED_TABLE_LEAST, SEED_TABLE_VALUES // max(coordinates, 1)))


#: Selectable methods (kernel codes). ``dls`` is the default; the others are for study.
METHODS = {"dls": kernels.DLS, "pinv": kernels.PINV, "transpose": kernels.TRANSPOSE, "ccd": kernels.CCD}
#: ``speed``: the first solution; ``distance``: the one closest to the seed found within the
#: budget, by the step's own weighted norm ``sum_j (q_j - seed_j)^2 / w_j`` (locked joints left
#: out); ``manipulability``: the most manipulable found within the budget.
SOLVE_TYPES = {"speed": kernels.SPEED, "distance": kernels.DISTANCE, "manipulability": kernels.MANIPULABILITY}

# ------------------------------------------------------------------ the options' specification


def bounds_text(low, high, kind: str = "double", unit: str = "") -> str:
    """An inclusive range as error messages write it: ``[1e-09, 1] m``, ``[0, 4294967295]``
    (integers in full), ``[0, inf]`` (a side without a bound)."""

    def bound(value, infinity: str) -> str:
        if value is None:
            return infinity
        return f"{int(value)}" if kind == "integer" else f"{value:g}"

    return f"[{bound(low, '-inf')}, {bound(high, 'inf')}]" + (f" {unit}" if unit else "")


@dataclass(frozen=True)
class OptionSpec:
    """One scalar option: ``kind`` (``'double'``, ``'integer'``, ``'string'`` or ``'bool'``), the solver's
    ``default``, ``unit``, an inclusive range ``low``-``high`` (None: no bound on that side) or
    ``choices``, ``optional`` (None accepted: the option is off), ``per_joint`` (the solver also
    takes ``{joint: value}`` or an array, each value in the range), ``node`` (also a node
    parameter of the same name, range and choices: :mod:`ik_node.decisions.parameters`) and a one-line
    ``description``."""

    name: str
    kind: str
    default: object
    description: str
    unit: str = ""
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    optional: bool = False
    per_joint: bool = False
    node: bool = True

    @property
    def bounds(self) -> str:
        """The valid range with its unit (``[1e-09, 1] m``)."""
        return bounds_text(self.low, self.high, self.kind, self.unit)

    def check(self, value, what: str | None = None) -> None:
        """Raise :class:`IKNodeError` naming ``what`` (default: the option) and the valid range
        or choices unless ``value`` is valid. Numbers may be any real (``double``) or integral
        (``integer``) type, never a bool; doubles must be finite."""
        what = what or self.name
        if value is None and self.optional:
            return
        if self.kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise IKNodeError(f"{what} must be true or false, got {_shown(value)}")
            return
        if self.choices:
            if not isinstance(value, str) or value not in self.choices:
                raise IKNodeError(f"unknown {what} {_shown(value)}; choose one of {list(self.choices)}")
            return
        integer = self.kind == "integer"
        number = numbers.Integral if integer else numbers.Real
        typed = isinstance(value, number) and not isinstance(value, bool)
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        if not (typed and math.isfinite(value) and low <= value <= high):
            kind = "an integer" if integer else "a finite number"
            off = " (or None)" if self.optional else ""
            raise IKNodeError(f"{what} must be {kind} in {self.bounds}{off}, got {_shown(value)}")


def _shown(value) -> str:
    """``value`` in a message: numbers as printed, anything else as its repr (``'newton'``)."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return str(value)
    return repr(value)


#: Every scalar option of :class:`SolverOptions`, written once. Ranges: what is sensible, not
#: only what the kernels survive: a tolerance below 1e-9 is at the scale of double rounding in FK
#: and never counts as reached; ``orientation_tolerance`` 3.2 rad (just above pi) accepts any
#: orientation; a damping above 1 swamps ``J W J^T`` of any metre-sized arm; ``random_seed`` is
#: a 32-bit seed; ``max_joint_move`` beyond 100 rad or m is off in effect.
OPTIONS = (
    OptionSpec("position_tolerance", "double", 1e-5, "success threshold on each tip's position error",
               "m", 1e-9, 1.0),
    OptionSpec("orientation_tolerance", "double", 1e-5, "success threshold on each tip's orientation "
               "error", "rad", 1e-9, 3.2),
    OptionSpec("method", "string", "dls", "IK method: 'dls' damped least squares, 'pinv' pseudo-inverse, "
               "'transpose' Jacobian transpose, 'ccd' cyclic coordinate descent", choices=tuple(METHODS)),
    OptionSpec("solve_type", "string", "speed", "'speed': the first solution; 'distance': the closest to "
               "the seed found within the time budget, by sum (q - seed)^2 / joint weight; "
               "'manipulability': the most manipulable found within the budget",
               choices=tuple(SOLVE_TYPES)),
    OptionSpec("posture_gain", "double", 0.0, "null-space pull toward the rest posture per posture "
               "iteration, once the task has converged (0: off)", "", 0.0, 1.0, per_joint=True),
    OptionSpec("min_damping", "double", 1e-3, "damped least squares: smallest damping lambda_min", "",
               0.0, 1.0),
    OptionSpec("max_iterations", "integer", 100, "iterations per attempt before a restart", "", 1, 100000),
    OptionSpec("max_attempts", "integer", None, "attempts per solve, restarts included (None: until the "
               "timeout)", "", 1, None, optional=True, node=False),
    OptionSpec("seed_table_size", "integer", None, "configurations in the seed table (0: random restarts "
               "only; None: SEED_TABLE_ONE_TIP for one tip, SEED_TABLE_TREE for several, fewer on long "
               "chains)", "", 0, None, optional=True, node=False),
    OptionSpec("random_seed", "integer", 0, "seed of the solver's seed table and random restarts", "", 0,
               2**32 - 1),
    OptionSpec("max_joint_move", "double", None, "no success for a solution moving a joint farther than "
               "this from the seed (the nearest found comes back with reason 'joint_move'): no branch "
               "flips (0: off)", "rad or m", 0.0, 100.0, optional=True),
    OptionSpec("self_collision", "bool", False, "answers never in self-collision (the link pairs of the "
               "SRDF, else computed) nor in an obstacle: checked inside the solve"),
    OptionSpec("collision_margin", "double", 0.01, "link pairs (and obstacles) closer than this become "
               "constraint rows of the step (closing at most half their distance a step)", "m", 0.0, 1.0),
)  # fmt: skip
#: :data:`OPTIONS` by name.
OPTION_SPECS = {spec.name: spec for spec in OPTIONS}


def _default(name: str):
    return OPTION_SPECS[name].default


# ------------------------------------------------------------------ tasks

#: The ``[v; w]`` axes a task may control, in row order.
AXIS_NAMES = ("vx", "vy", "vz", "wx", "wy", "wz")
#: Named task kinds and the axes (a mask over :data:`AXIS_NAMES`) each controls.
TASK_KINDS = {
    "pose": (True,) * 6,
    "position": (True, True, True, False, False, False),
    "orientation": (False, False, False, True, True, True),
    "gaze": (False, False, False, True, True, False),  # (its two rows: docs/solver.md, gaze)
}
#: Whose axes a task's rows are in: the tip's own, or the base's at the tip's controlled point.
TASK_AXES = ("tip", "base")
#: What a kind given as a string may be.
KIND_SYNTAX = (
    f"one of {list(TASK_KINDS)} or axis names among {' '.join(AXIS_NAMES)} separated by spaces or "
    "commas (e.g. 'vz', 'vx vy wz')"
)


def task_kind(kind) -> str | tuple[bool, ...]:
    """``kind`` normalised: a named kind (:data:`TASK_KINDS`) as is; axis names (``'vz'``,
    ``'vx vy wz'``, ``'vx,vy'``) or a 6-element mask over :data:`AXIS_NAMES` as a tuple of 6
    bools. Raises :class:`IKNodeError` saying what is valid."""
    if isinstance(kind, str):
        if kind in TASK_KINDS:
            return kind
        names = [name for name in re.split(r"[\s,]+", kind.strip()) if name]
        if not names or any(name not in AXIS_NAMES for name in names):
            raise IKNodeError(f"unknown task '{kind}'; use {KIND_SYNTAX}")
        repeated = sorted({name for name in names if names.count(name) > 1}, key=AXIS_NAMES.index)
        if repeated:
            raise IKNodeError(f"task '{kind}' names {' '.join(repeated)} more than once")
        return tuple(axis in names for axis in AXIS_NAMES)
    try:
        mask = np.asarray(kind)
    except ValueError:  # (ragged)
        mask = np.asarray(None)
    if mask.shape != (6,) or mask.dtype.kind not in "biuf" or not mask.any():
        raise IKNodeError(f"a task mask needs 6 booleans ({' '.join(AXIS_NAMES)}) with one set, got {kind!r}")
    return tuple(bool(flag) for flag in mask)


def task_offset(offset) -> tuple[float, float, float]:
    """``offset`` (x y z [m] in the tip's frame) as a tuple of 3 floats; raises
    :class:`IKNodeError` unless it is 3 finite numbers."""
    try:
        array = None if isinstance(offset, (str, bytes)) else np.asarray(offset, dtype=float)
    except (TypeError, ValueError):
        array = None
    if array is None or array.shape != (3,) or not np.all(np.isfinite(array)):
        raise IKNodeError(f"task offset must be 3 finite numbers x y z [m] in the tip frame, got {offset!r}")
    return (float(array[0]), float(array[1]), float(array[2]))


def gaze_axis(kind, axis, axes, bands) -> tuple[float, float, float] | None:
    """A task's ``axis`` normalised: for ``kind='gaze'`` a unit vector (3 floats; None: the tip's
    z), else None; raises :class:`IKNodeError` for an axis of another kind, one that is not 3
    finite numbers or of zero length, and for a gaze task in base axes or with ``bands`` (6
    floats, as :func:`task_bands` makes them)."""
    if kind != "gaze":
        if axis is not None:
            raise IKNodeError(f"a task axis is for gaze tasks (kind='gaze'), not '{kind}'")
        return None
    if axes != "tip":
        raise IKNodeError("a gaze task is in the tip's axes (axes='tip'): its axis is the tip's own")
    if any(bands):
        raise IKNodeError("a gaze task takes no bands: its cone is orientation_tolerance, the angle [rad]")
    try:
        array = np.asarray((0.0, 0.0, 1.0) if axis is None else axis, dtype=float)
    except (TypeError, ValueError):
        array = np.asarray(None)
    if array.shape != (3,) or not np.all(np.isfinite(array)):
        raise IKNodeError(f"a gaze axis must be 3 finite numbers x y z in the tip frame, got {axis!r}")
    length = float(np.linalg.norm(array))
    if length < 1e-9:
        raise IKNodeError(f"a gaze axis must not be of zero length, got {axis!r}")
    return tuple(float(value) for value in array / length)


def task_bands(bands, mask) -> tuple[float, ...]:
    """``bands`` (half-widths over :data:`AXIS_NAMES`: [m] for vx vy vz, [rad] for wx wy wz;
    None: none) as 6 floats; raises :class:`IKNodeError` naming the axis unless each is finite,
    >= 0, at most pi on a rotation axis (pi: free about it), and 0 on an axis ``mask`` leaves out."""
    if bands is None:
        return (0.0,) * 6
    try:
        array = None if isinstance(bands, (str, bytes)) else np.asarray(bands, dtype=float)
    except (TypeError, ValueError):
        array = None
    if array is None or array.shape != (6,):
        raise IKNodeError(f"task bands must be 6 half-widths over {' '.join(AXIS_NAMES)}, got {bands!r}")
    for axis, value, controlled in zip(AXIS_NAMES, array, mask):
        limit, unit = (math.pi, "rad (pi: free about the axis)") if axis[0] == "w" else (math.inf, "m")
        if not (math.isfinite(value) and 0.0 <= value <= limit):
            raise IKNodeError(f"task band on {axis} must be in [0, {limit:g}] {unit}, got {value}")
        if value > 0.0 and not controlled:
            raise IKNodeError(f"task band on {axis}, which the task does not control (its axes: "
                              f"{' '.join(a for a, c in zip(AXIS_NAMES, mask) if c)})")  # fmt: skip
    return tuple(float(value) for value in array)


@dataclass(frozen=True)
class TipTask:
    """What to control at one tip.

    * ``kind``: ``'pose'``, ``'position'``, ``'orientation'``, axis names among
      ``vx vy vz wx wy wz`` separated by spaces or commas (``'vz'``, ``'vx vy wz'``; stored as the
      mask) or a 6-element mask over ``(vx, vy, vz, wx, wy, wz)``;
    * ``axes``: whose axes those are: ``'tip'`` (the tip's own, body rows) or ``'base'`` (the
      base frame's, at the tip's controlled point: ``'vz'`` alone is the point's height along the
      base z, ``'wz'`` the orientation about the base z);
    * ``offset``: the controlled point, x y z [m] in the tip's frame (a tool centre that is not a
      link): the task's frame is the tip's frame moved there, with the tip's axes;
    * ``weight``: scales the tip's rows against other tips; tolerances: position [m],
      orientation [rad], in the ranges of :data:`OPTIONS`;
    * ``bands``: a tolerance band per axis, half-widths over ``(vx, vy, vz, wx, wy, wz)`` in the
      task's axes ([m], [rad]; None: none): the target is met anywhere within ``target +- band``
      on that axis (the error counts only what lies beyond; inside, the row does not constrain the
      motion), so ``bands=(0, 0, 0, 0, 0, math.pi)`` leaves the rotation about the tool's z free.
      A band on a rotation axis bounds that component of the rotation vector ``log(R_e^T R_d)``.
    * ``axis``: for ``kind='gaze'``, the tip's axis (x y z in its own frame, from its controlled
      point; default ``(0, 0, 1)``, the optical axis of a ROS camera optical frame) that points at
      the target, a point (3,) [m] in the base frame. Two rows (the turn that would bring the axis
      onto the line of sight); ``orientation_tolerance`` is the cone: the angle [rad] allowed
      between them. Gaze tasks are in the tip's axes and take no bands.
    * ``relative_to``: another tip: the target is this tip's controlled point's pose (or the axes
      of ``kind``) in that tip's controlled point's frame, ``T_other^-1 T_tip`` (two hands holding
      one object; the other tip has a target of its own or holds where it is). In the tip's axes;
      the other tip's task must not be relative itself (no chains, no cycles) nor a gaze.
    """

    kind: str | tuple = "pose"
    weight: float = 1.0
    position_tolerance: float = _default("position_tolerance")
    orientation_tolerance: float = _default("orientation_tolerance")
    axes: str = "tip"
    offset: tuple = (0.0, 0.0, 0.0)
    bands: tuple | None = None
    axis: tuple | None = None
    relative_to: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "kind", task_kind(self.kind))
        object.__setattr__(self, "bands", task_bands(self.bands, self.mask))
        object.__setattr__(self, "axis", gaze_axis(self.kind, self.axis, self.axes, self.bands))
        if not isinstance(self.axes, str) or self.axes not in TASK_AXES:
            raise IKNodeError(f"task axes must be one of {list(TASK_AXES)}, got {self.axes!r}")
        object.__setattr__(self, "offset", task_offset(self.offset))
        if self.relative_to is not None:
            if not isinstance(self.relative_to, str) or not self.relative_to:
                raise IKNodeError(f"relative_to must name another tip, got {self.relative_to!r}")
            if self.axes != "tip" or self.kind == "gaze":
                raise IKNodeError(
                    "a relative task is a pose (or some of its axes) in the tip's axes: not "
                    f"axes={self.axes!r}, kind={self.kind!r}"
                )
        weight = self.weight
        if not (isinstance(weight, numbers.Real) and not isinstance(weight, bool) and math.isfinite(weight)):
            raise IKNodeError(f"task weight must be a positive number, got {weight!r}")
        if weight <= 0:
            raise IKNodeError(f"task weight must be a positive number, got {weight}")
        for name in ("position_tolerance", "orientation_tolerance"):
            OPTION_SPECS[name].check(getattr(self, name), f"task {name}")

    @property
    def mask(self) -> tuple[bool, ...]:
        """The controlled axes as 6 bools over ``(vx, vy, vz, wx, wy, wz)``."""
        return TASK_KINDS[self.kind] if isinstance(self.kind, str) else self.kind

    @property
    def rows(self) -> np.ndarray:
        """The ``[v; w]`` axes (0-5) this task controls."""
        return np.flatnonzero(self.mask)


def tip_task(tip: str, task, position_tolerance: float, orientation_tolerance: float) -> TipTask:
    """``task`` (a :class:`TipTask`, or a kind made a task with these tolerances) for ``tip``;
    an invalid kind raises :class:`IKNodeError` naming the tip."""
    if isinstance(task, TipTask):
        return task
    try:
        return TipTask(task, 1.0, position_tolerance, orientation_tolerance)
    except IKNodeError as error:
        raise IKNodeError(f"task for tip '{tip}': {error}") from None


# ------------------------------------------------------------------ the options


def _check_posture_gain(spec: OptionSpec, posture_gain) -> None:
    """``posture_gain`` is a number, ``{joint: number}`` or a sequence of numbers, each in the
    spec's range (joint names and the sequence's length are the solver's to check)."""
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
        spec.check(gain, what)


@dataclass(frozen=True)
class SolverOptions:
    """Every option of :class:`~ik_node.solver.IKSolver`, checked when made (the scalar ones
    against :data:`OPTIONS`, where their ranges, units and defaults are written).

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
      ``SEED_TABLE_TREE`` for several, fewer on long chains: :func:`default_seed_table_size`);
    * ``random_seed``: for the table and the random restarts; results are deterministic for a
      seed when the time budget is not what ends the search;
    * ``max_joint_move`` [rad or m] (None or 0: off, stored as None): a guarantee, no success for
      a solution moving some joint farther than this from the seed. The attempt from the seed is
      followed by a continuation (the step from the seed's tip poses to the targets cut into 2,
      4, 8 pieces) before any restart; then restarts around the seed; with ``speed`` the solution
      with the smallest largest move among the first ``NEAR_CANDIDATES`` found within the budget
      comes back, with ``success=False`` and ``reason='joint_move'`` if it moves more (no branch
      flips while following a path).
    * ``self_collision``: no answer in self-collision (the link pairs the SRDF leaves enabled,
      ``srdf`` a path or the XML; else the pairs :func:`ik_node.collision.srdf.compute_disabled_pairs`
      leaves) nor in an ``obstacles`` entry (:class:`ik_node.Obstacle`, base frame; checked
      whether or not ``self_collision`` is on); ``collision_margin`` [m]: pairs closer than
      this become constraint rows of the step (:mod:`ik_node.compiled.contacts`).
    """

    tasks: Mapping | None = None
    position_tolerance: float = _default("position_tolerance")
    orientation_tolerance: float = _default("orientation_tolerance")
    method: str = _default("method")
    solve_type: str = _default("solve_type")
    joint_weights: object = None
    lower: Mapping | None = None
    upper: Mapping | None = None
    rest_posture: object = None
    posture_gain: float | Mapping | Sequence = _default("posture_gain")
    min_damping: float = _default("min_damping")
    max_iterations: int = _default("max_iterations")
    max_attempts: int | None = _default("max_attempts")
    seed_table_size: int | None = _default("seed_table_size")
    random_seed: int = _default("random_seed")
    max_joint_move: float | None = _default("max_joint_move")
    self_collision: bool = _default("self_collision")
    collision_margin: float = _default("collision_margin")
    srdf: object = None
    obstacles: Sequence = ()

    def __post_init__(self):
        for spec in OPTIONS:
            value = getattr(self, spec.name)
            if spec.per_joint:
                _check_posture_gain(spec, value)
            else:
                spec.check(value)
        if self.max_joint_move == 0:
            object.__setattr__(self, "max_joint_move", None)
        if self.tasks is not None:
            if not isinstance(self.tasks, Mapping):
                raise IKNodeError(f"tasks must be a mapping {{tip: TipTask or kind}}, got {self.tasks!r}")
            for tip, task in self.tasks.items():
                tip_task(tip, task, self.position_tolerance, self.orientation_tolerance)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names, in declaration order."""
        return tuple(field.name for field in dataclasses.fields(cls))
