"""Straight-line paths of tips that never jump (:meth:`ik_node.IKSolver.cartesian_path`).

Each tip's controlled point moves from its pose at the seed through its ``waypoints`` (4x4
``T_base_point``, base frame; a tip without waypoints holds its pose; all tips at one rate):
between two poses its position on the straight line and its
rotation on the shortest turn (``R_a exp(s log(R_a^T R_b))``), both at one rate
(:func:`ik_node.compiled.rotations.interpolate_pose`). Each segment is cut into equal steps of at
most ``max_step`` [m] and ``max_angle`` [rad]; each step is solved from the last configuration
and kept only when

* the solver's search (``search_in``, with its method, collision checks and tuning; without
  its null-space posture, whose pull toward the rest posture would move the joints beyond what
  the step needs, which the jump bound below would end; with ``solve_type`` ``speed`` whatever
  the solver's: a step seeded by the last configuration converges to the solution nearest it,
  where ``distance`` or ``manipulability`` would compare solutions until the step's timeout, on
  every step) reaches it from there (within its
  tolerances and the joint limits; free of collisions where it checks them) within ``timeout``:
  else the path ends (reason ``unreachable``: out of reach or of the limits; ``collision``);
* the joints move no more than the step can need: ``max_i |dq_i| <= 2 max_i |(J^+ dx)_i| + 1e-3``
  [rad, m] (``J`` the tips' body Jacobian at the last configuration, without the columns of
  joints a step would push past their limits; ``dx`` the step's body twist; ``J^+`` by an SVD),
  and at most ``MAX_JOINT_STEP`` (0.1): twice the first-order motion, so a flip to another branch (or a wrist
  turning half round) ends the path (reason ``jump``) instead of being returned;
* the last configuration is not singular: the smallest singular value of ``J`` at least
  ``singular_threshold`` [m] (reason ``singularity``);
* the tip stays within ``tolerance`` [m] of the straight line while the joints move linearly
  from one configuration to the next (FK at the middle).

A step that fails one of these is halved first, down to 1/256 of it (a jump or the line: the
joints may just move fast there), or 1/8 (out of reach, in collision: the path ends within a
millimetre of where it must), then the path ends with that reason.

``fraction`` is the share of the path's length achieved (MoveIt's meaning; a path that only
turns: of its angle). Timing (:mod:`.timing`) is time-optimal along the joint path.

Python checks the input and cuts the segments into steps; the step loop is one compiled call,
:func:`ik_node.compiled.straight_lines.straight_line_steps` (its constants: ``MAX_JOINT_STEP``
...), in a search context of the solver's own: compiled at the first path (no solve needs it:
said once, :data:`COMPILE_NOTICE`), and run as plain Python, like every kernel, while the
solver's kernels compile.

Units: m, rad, s. Configurations in ``joint_names`` order.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np

from ..compiled.jit import kernel_ready
from ..errors import IKNodeError, StartStateError, TargetError
from . import kernels
from .kernel_switch import search_budget

__all__ = ["CartesianPath", "plan_cartesian_path"]

#: Why a path ended, by the code :func:`kernels.straight_line_steps` returns.
REASONS = {
    kernels.COMPLETE: "complete",
    kernels.UNREACHABLE: "unreachable",
    kernels.IN_COLLISION: "collision",
    kernels.JUMP: "jump",
    kernels.SINGULARITY: "singularity",
    kernels.DEVIATION: "deviation",
}
#: Said (``logging`` warning) before the straight-line kernel is compiled rather than loaded, once
#: per process and combination of feature switches (no solve needs it: it compiles at the first
#: path).
COMPILE_NOTICE = (
    "compiling the straight-line path kernel (once per install and set of features: about 9 s on "
    "2 cores; later runs load it from the cache)"
)

_log = logging.getLogger("ik_node.solver")
_looked_up: set = set()  # (the switch combinations whose path kernel was looked for in the cache)


@dataclass(frozen=True)
class CartesianPath:
    """A path: ``q`` (m, nq) configurations (the first is the seed), ``points`` (m, T, 4, 4) each
    tip's controlled point at each (``solver.tip_links`` order), ``fraction`` of the length
    achieved (0..1), ``reason`` why it ended (``'complete'``, ``'unreachable'``, ``'collision'``,
    ``'jump'``, ``'singularity'``, ``'deviation'``), ``deviation``: the largest distance [m] of a
    tip from its line at the midpoints checked; with timing, ``time`` (m,) [s] and ``velocity``,
    ``acceleration`` (m, nv)."""

    q: np.ndarray
    points: np.ndarray
    fraction: float
    reason: str
    deviation: float
    time: np.ndarray | None = None
    velocity: np.ndarray | None = None
    acceleration: np.ndarray | None = None
    trajectory: object = None

    @property
    def duration(self) -> float:
        """The timed path's duration [s] (nan untimed)."""
        return float(self.time[-1]) if self.time is not None else float("nan")

    def sample(self, rate: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The timed path at ``rate`` [Hz] from 0 to its end: ``(t, q, velocity, acceleration)``
        of the joint spline the timing ran along (1-DOF joints)."""
        if self.trajectory is None:
            raise IKNodeError("the path is not timed (give cartesian_path a max_acceleration)")
        times = np.append(np.arange(0.0, self.duration, 1.0 / rate), self.duration)
        return times, self.trajectory(times), self.trajectory(times, 1), self.trajectory(times, 2)


def _poses(waypoints) -> np.ndarray:
    poses = np.asarray(waypoints, dtype=float)
    if poses.ndim == 2:
        poses = poses[None]
    if poses.ndim != 3 or poses.shape[1:] != (4, 4) or len(poses) == 0:
        raise TargetError(f"waypoints must be one or more 4x4 poses, got an array of shape {poses.shape}")
    for index, pose in enumerate(poses):
        if not np.all(np.isfinite(pose)):
            raise TargetError(f"waypoint {index} is not finite")
        rotation = pose[:3, :3]
        if not np.allclose(rotation.T @ rotation, np.eye(3), atol=1e-6) or np.linalg.det(rotation) < 0:
            raise TargetError(f"waypoint {index}'s rotation is not a rotation matrix")
    return np.ascontiguousarray(poses)


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    cosine = (np.trace(a[:3, :3].T @ b[:3, :3]) - 1.0) / 2.0
    return math.acos(min(1.0, max(-1.0, cosine)))


def _segments(solver, waypoints, start: np.ndarray) -> np.ndarray:
    """The corners (K + 1, T, 4, 4) of every tip's path: its pose at the start, then its
    waypoints (``{tip: poses}`` of one length; a tip left out holds its start pose), or, for
    a solver of one tip, the poses themselves."""
    tips = solver.tip_links
    if not isinstance(waypoints, dict):
        if len(tips) != 1:
            raise TargetError(f"waypoints for several tips go in a dict {{tip: poses}}; tips: {list(tips)}")
        waypoints = {tips[0]: waypoints}
    unknown = [tip for tip in waypoints if tip not in tips]
    if unknown:
        raise TargetError(f"waypoints for {unknown}, which are not tips; tips: {list(tips)}")
    poses = {tip: _poses(values) for tip, values in waypoints.items()}
    counts = {tip: len(values) for tip, values in poses.items()}
    if len(set(counts.values())) != 1:
        raise TargetError(f"every tip needs as many waypoints; got {counts}")
    count = next(iter(counts.values()))
    corners = np.repeat(start[None], count + 1, axis=0)
    for tip, values in poses.items():
        corners[1:, tips.index(tip)] = values
    return corners


def plan_cartesian_path(
    solver,
    waypoints,
    seed=None,
    max_step: float = 0.005,
    max_angle: float | None = None,
    tolerance: float = 0.001,
    singular_threshold: float = 1e-3,
    timeout: float = 0.02,
) -> CartesianPath:
    """The path of ``solver``'s tips through ``waypoints`` (see :func:`_segments`) from ``seed``
    (default: the rest posture); see the module docstring. All tips move at one rate: a
    segment's steps are those of its tip that needs the most. ``max_angle`` defaults to
    ``max_step / 0.1 m`` (5 mm: 0.05 rad); ``timeout`` [s] per step's solve (a step from the last
    configuration converges in its first attempt unless it is out of reach: the budget is for the
    restarts that say so, and for a loaded machine)."""
    for name, value in (("max_step", max_step), ("tolerance", tolerance)):
        if not (math.isfinite(value) and value > 0.0):
            raise IKNodeError(f"{name} must be a positive number [m], got {value}")
    max_angle = max_step / 0.1 if max_angle is None else max_angle
    if not (math.isfinite(max_angle) and max_angle > 0.0):
        raise IKNodeError(f"max_angle must be a positive number [rad], got {max_angle}")
    beyond_poses = sorted(solver.problem.gaze_tips | set(solver.problem.relative_tips))
    if beyond_poses:
        raise IKNodeError(
            f"a straight-line path moves tips along poses in the base frame; tips {beyond_poses} have gaze "
            "or relative tasks: solve each goal with solve()"
        )
    tree = solver.tree
    q = tree.normalized(tree.joint_vector(solver.rest_posture if seed is None else seed))
    outside = [
        name
        for name, value, low, high in zip(tree.joint_names, q, solver.lower, solver.upper)
        if not low - 1e-9 <= value <= high + 1e-9
    ]
    if outside:
        raise StartStateError(f"the start configuration is outside the limits at joints {outside}")
    corners = _segments(solver, waypoints, solver.tip_poses(q))
    lengths = np.linalg.norm(corners[1:, :, :3, 3] - corners[:-1, :, :3, 3], axis=2)  # (K, T)
    angles = np.array(
        [[_angle(a, b) for a, b in zip(before, after)] for before, after in zip(corners, corners[1:])]
    )
    measure = lengths.max(axis=1) if lengths.sum() > 0.0 else angles.max(axis=1)  # (K,): the lead tip's
    total = float(measure.sum())
    steps = np.array(
        [
            max(1, math.ceil(max(length / max_step, angle / max_angle) - 1e-12))
            for length, angle in zip(lengths.max(axis=1), angles.max(axis=1))
        ],
        dtype=np.int64,
    )
    core = solver.core  # (read once, as a solve reads it)
    arguments = core.arguments
    tuning, method, _, posture, collision = arguments.trailing
    if posture is not None:  # (its gains zero, its type kept: the kernels the solver has)
        posture = np.zeros_like(posture)
    call = (
        arguments.context(core.kernels, len(q)), corners, measure, steps, q, float(tolerance),
        float(singular_threshold), search_budget(timeout, solver.options.max_attempts, core.kernels),
        tuning, method, None, posture, collision,  # (solve_type speed: see the module's docstring)
    )  # fmt: skip
    if core.kernels is kernels:
        _say_if_compiling(call)
    path_q, points, code, achieved, deviation = core.kernels.straight_line_steps(*call)
    reason = REASONS[code]
    fraction = 1.0 if total == 0.0 or reason == "complete" else min(1.0, achieved / total)
    return CartesianPath(path_q, points, fraction, reason, deviation)


def _say_if_compiling(call: tuple) -> None:
    """Say :data:`COMPILE_NOTICE` before the compiled :func:`kernels.straight_line_steps` is
    compiled for ``call``'s argument types rather than loaded (a user never waits on a compile
    silently); looked up once per process and combination of feature switches (the last four
    arguments: they decide the types)."""
    key = tuple(switch is None for switch in call[-4:])
    if key not in _looked_up:
        _looked_up.add(key)
        if not kernel_ready(kernels.straight_line_steps, call):
            _log.warning(COMPILE_NOTICE)
