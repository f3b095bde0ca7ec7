"""Inverse kinematics over a :class:`~ik_node.kinematics.KinematicTree`.

Default method: singularity-robust damped least squares (Levenberg-Marquardt) on the body
Jacobian with body-frame errors, with the joint limits fighting inside the solve, a null-space
posture term, several tips at once and random restarts within a time budget.

One iteration, for the stacked task error ``e`` (per tip ``[R_e^T (p_d - p_e); log(R_e^T R_d)]``,
trimmed to the rows the tip's task controls and scaled by the task weights) and the matching
stacked body Jacobian ``J``:

1. ``dq = W J^T (J W J^T + lambda^2 I)^-1 e`` (the SR-inverse; a Cholesky solve, no explicit
   inverse), with ``W`` the joint weights (0 locks a joint) and the damping
   ``lambda^2 = mu * E + lambda_min^2``, ``E = e^T e / 2`` (Sugihara 2011): large far from the
   goal or near a singularity, vanishing as the error does (quadratic convergence).
2. Joints the step would push past a limit get a selection row (a one in the joint's column)
   stacked onto ``J`` with the error "distance to that limit", and the step is solved again, so
   the limits shape the step inside the solve instead of clamping it afterwards.
3. A posture term ``(I - J^+ J) k (q_rest - q)`` moves the joints toward a rest posture in the
   null space of the task (it does not change the task error to first order).
4. Step control (trust region): the step is accepted only if the task error decreases; otherwise
   ``mu`` grows and the step is recomputed. When ``mu`` saturates the attempt is stuck in a local
   minimum and the solver restarts from another configuration within the limits.

Restarts begin where the goal is likely near: a seed table of configurations sampled uniformly
within the limits, with their tip poses, is searched for the entries whose tip poses lie nearest
the targets (a nearest-neighbour seed, as in database-seeded IK); random configurations follow.
With one tip and a goal far from the seed, the first attempt itself starts at the nearest entry.

Units: metres, radians, seconds. Joint vectors are in :attr:`IKSolver.joint_names` order.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import IKNodeError, TargetError, UnknownJointError, UnknownLinkError
from .kinematics import task_rows
from .lie import so3_log

__all__ = ["IKSolver", "IKResult", "TipTask", "METHODS", "SOLVE_TYPES"]

#: Selectable methods. ``dls`` is the default; the others are for study and comparison.
METHODS = ("dls", "pinv", "transpose", "ccd")
#: ``speed``: first solution; ``distance``: closest to the seed found within the budget;
#: ``manipulability``: most manipulable found within the budget.
SOLVE_TYPES = ("speed", "distance", "manipulability")

#: Target coordinates larger than this [m] are refused: no robot reaches them, and their
#: squared errors would overflow to infinity.
MAX_TARGET_DISTANCE = 1e9
_ORTHONORMAL_TOLERANCE = 1e-6
_IDENTITY3 = np.eye(3)


class _Budget:
    """The time budget of one solve. A loop asks :meth:`exhausted` once per pass; the answer is
    yes when another pass, as long as the last one, would end past the deadline, so a solve
    returns within its budget rather than one (possibly 1 ms, on a large batch) iteration past it."""

    def __init__(self, deadline: float):
        self.deadline = deadline
        self._last_call: float | None = None
        self._last_pass = 0.0  # s, between the last two calls

    def exhausted(self) -> bool:
        now = time.perf_counter()
        if self._last_call is not None:
            self._last_pass = now - self._last_call
        self._last_call = now
        return now + self._last_pass >= self.deadline

    def remaining(self) -> float | None:
        """Seconds left (at least 1 us), or None without a deadline."""
        return None if math.isinf(self.deadline) else max(self.deadline - time.perf_counter(), 1e-6)


class _Restarts:
    """Where the attempts of one solve begin. The first is the seed or, for one tip, the
    seed-table entry whose tip pose lies nearest the target when the seed's is farther from it
    (the seed is then the first restart); the restarts are the next nearest table entries, then
    uniform random configurations (a generator keyed on the solver's ``random_seed``). Prepared
    on first use: tracking solves never consult the table.

    Measured on the TRAC-IK protocol: starting at the nearest entry doubled the goals solved in
    the first attempt on the single arms (arm6 27 -> 53 %) but lowered the 5 ms rate on the
    two-arm and humanoid trees (75-78 -> 56-64 %, 88 -> 75 %), where the nearest of 2048 entries
    in 24 or 48 feature dimensions is a poorer start than the mid-range seed."""

    def __init__(self, solver: IKSolver, targets: np.ndarray, seed: np.ndarray):
        self._solver, self._targets, self._seed = solver, targets, seed
        self._target_features: np.ndarray | None = None  # computed on first use
        self._nearest: np.ndarray | None = None  # table rows, nearest first, not yet handed out
        self._pending = np.empty((0, len(seed)))  # configurations to hand out before the table's
        self._generator: np.random.Generator | None = None

    def first(self, seed_poses: np.ndarray) -> np.ndarray:
        """The first attempt's start (see the class docstring), given the seed's
        :meth:`~ik_node.kinematics.KinematicTree.link_poses`: the table is consulted only when
        the seed lies farther from the targets than the table's typical spacing."""
        solver = self._solver
        if not solver._table_usable or len(solver.tip_links) > 1:
            return self._seed
        target_features = self._features()
        seed_tips = seed_poses[solver._tip_selector]
        seed_distance = np.linalg.norm(solver._pose_features(seed_tips) - target_features)
        if seed_distance <= solver._table_spacing:
            return self._seed
        self._nearest = solver._nearest_table_entries(target_features)
        nearest = self._nearest[0]
        if np.linalg.norm(solver._seed_table[1][nearest] - target_features) >= seed_distance:
            return self._seed
        self._nearest, self._pending = self._nearest[1:], self._seed[None]
        return solver._seed_table[0][nearest]

    def _features(self) -> np.ndarray:
        """The targets' seed-table features."""
        if self._target_features is None:
            self._target_features = self._solver._pose_features(self._targets)
        return self._target_features

    def take(self, count: int) -> np.ndarray:
        """``count`` configurations (count, dof) within the limits."""
        solver = self._solver
        if self._nearest is None and solver._table_usable:
            self._nearest = solver._nearest_table_entries(self._features())
        elif self._nearest is None:
            self._nearest = np.zeros(0, dtype=int)
        pending, self._pending = self._pending[:count], self._pending[count:]
        chosen, self._nearest = self._nearest[: count - len(pending)], self._nearest[count - len(pending) :]
        seeds = np.concatenate((pending, solver._seed_table[0][chosen]))
        if len(seeds) < count:
            if self._generator is None:
                self._generator = np.random.default_rng(solver.random_seed)
            fresh = solver._random_seeds(count - len(seeds), self._seed, self._generator)
            seeds = np.concatenate((seeds, fresh))
        return seeds


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
            if not (math.isfinite(value) and value > 0):
                raise IKNodeError(f"task {name} must be a positive number, got {value}")


@dataclass
class IKResult:
    """The outcome of :meth:`IKSolver.solve`.

    ``q``: joint values (rad, m) in ``joint_names`` order, always within the limits;
    ``position_error`` [m] / ``orientation_error`` [rad]: the largest over the tips (controlled
    rows only); ``tip_errors``: ``{tip: (position_error, orientation_error)}``; ``reason``:
    ``'success'``, ``'unreachable'`` (a target lies beyond the tip's workspace, or the closest
    configuration found is a local minimum of the error),
    ``'timeout'`` or ``'iterations'`` (the budget ran out while an attempt still progressed).
    """

    q: np.ndarray
    success: bool
    position_error: float
    orientation_error: float
    iterations: int
    elapsed: float
    reason: str
    attempts: int = 1
    tip_errors: dict = field(default_factory=dict)


class IKSolver:
    """Solve for joint values that bring the tips of a base-to-tips tree to target poses.

    Options (all keyword):

    * ``tasks``: ``{tip: TipTask | kind}`` (default: full pose for every tip);
    * ``position_tolerance`` [m], ``orientation_tolerance`` [rad]: defaults for every task (1e-5);
    * ``method``: one of :data:`METHODS` (``'dls'``); ``solve_type``: one of :data:`SOLVE_TYPES`;
    * ``joint_weights``: ``{joint: weight}`` or an array, ``>= 0``; 0 locks the joint;
    * ``lower``/``upper``: ``{joint: bound}`` tightening the URDF limits (rad, m);
    * ``rest_posture``: ``{joint: value}`` or an array (default: mid-range, 0 for continuous);
      ``posture_gain``: null-space pull toward it per iteration, in [0, 1] (default 0: off; the
      pull's second-order effect on the task slows convergence, measured in the README);
    * ``min_damping``: ``lambda_min`` (default 1e-3); ``max_iterations``: per attempt (default
      100); ``max_attempts``: restarts included (default: unlimited, bounded by the timeout);
    * ``batch_size``: attempts advanced together as one numpy batch after the first attempt's
      first iterations (default: 16, fewer on large trees, where a batch iteration costs in proportion to the
      frames times the task rows: ``3072 // (frames * rows)`` but at least 4. On the 6-DOF arms
      the 5 ms solve rate rose from 86-93 % with 8 to 97-99 % with 16; a 16-row iteration of the
      humanoid (34 frames, 24 rows) costs 1.7 ms, and 4-6 rows solved 94 % against 88 %);
    * ``seed_table_size``: configurations in the seed table whose nearest entries (by tip pose)
      are the first restarts (default 2048; 0: random restarts only). Sampled once, here (5-60 ms
      for the bundled robots); not used while a joint is locked;
    * ``random_seed``: for the seed table and the random restarts (default 0): results are
      deterministic for a seed when the time budget is not what ends the search.
    """

    def __init__(
        self,
        robot,
        base_link: str,
        tip_links: str | Sequence[str],
        *,
        tasks: Mapping | None = None,
        position_tolerance: float = 1e-5,
        orientation_tolerance: float = 1e-5,
        method: str = "dls",
        solve_type: str = "speed",
        joint_weights=None,
        lower: Mapping[str, float] | None = None,
        upper: Mapping[str, float] | None = None,
        rest_posture=None,
        posture_gain: float = 0.0,
        min_damping: float = 1e-3,
        max_iterations: int = 100,
        max_attempts: int | None = None,
        batch_size: int | None = None,
        seed_table_size: int = 2048,
        random_seed: int = 0,
    ):
        if method not in METHODS:
            raise IKNodeError(f"unknown method '{method}'; choose one of {list(METHODS)}")
        if solve_type not in SOLVE_TYPES:
            raise IKNodeError(f"unknown solve_type '{solve_type}'; choose one of {list(SOLVE_TYPES)}")
        for name, value, low in (("posture_gain", posture_gain, 0.0), ("min_damping", min_damping, 0.0)):
            if not (math.isfinite(value) and value >= low):
                raise IKNodeError(f"{name} must be a finite number >= {low}, got {value}")
        if posture_gain > 1.0:
            raise IKNodeError(f"posture_gain must be in [0, 1], got {posture_gain}")
        if int(max_iterations) < 1 or (max_attempts is not None and int(max_attempts) < 1):
            raise IKNodeError("max_iterations and max_attempts must be at least 1")
        if batch_size is not None and int(batch_size) < 1:
            raise IKNodeError(f"batch_size must be at least 1, got {batch_size}")
        if int(seed_table_size) < 0:
            raise IKNodeError(f"seed_table_size must be >= 0, got {seed_table_size}")
        self.seed_table_size = int(seed_table_size)
        self.tree = robot.tree(base_link, tip_links)
        self.robot = robot
        self.method = method
        self.solve_type = solve_type
        self.posture_gain = float(posture_gain)
        self.min_damping = float(min_damping)
        self.max_iterations = int(max_iterations)
        self.max_attempts = None if max_attempts is None else int(max_attempts)
        self.random_seed = random_seed
        self.joint_names = self.tree.joint_names
        self.tip_links = self.tree.tip_links
        self.lower, self.upper = self._limits(lower or {}, upper or {})
        self.continuous = self.tree.continuous & ~np.isfinite(self.lower) & ~np.isfinite(self.upper)
        self.joint_weights = self._joint_vector(joint_weights, 1.0, "joint_weights")
        if np.any(self.joint_weights < 0) or not np.all(np.isfinite(self.joint_weights)):
            raise IKNodeError(f"joint_weights must be finite and >= 0, got {self.joint_weights}")
        self._unit_joint_weights = bool(np.all(self.joint_weights == 1.0))
        bounded = np.isfinite(self.lower) & np.isfinite(self.upper)
        middle = np.where(
            bounded, 0.5 * (np.where(bounded, self.lower, 0.0) + np.where(bounded, self.upper, 0.0)), 0.0
        )
        # Within the limits: the rest posture is also the default seed.
        self.rest_posture = np.clip(
            self._joint_vector(rest_posture, middle, "rest_posture"), self.lower, self.upper
        )
        self.tasks = self._tasks(tasks or {}, position_tolerance, orientation_tolerance)
        self._tip_frames = [self.tree.frame_index(tip) for tip in self.tip_links]
        self._reach = [self.tree.reach(tip) for tip in self.tip_links]  # (centre, radius) [m]
        # A slice where the tips' frames are consecutive (always for one tip): numpy views.
        self._tip_selector = (
            slice(self._tip_frames[0], self._tip_frames[-1] + 1)
            if self._tip_frames == list(range(self._tip_frames[0], self._tip_frames[-1] + 1))
            else np.array(self._tip_frames)
        )
        self._rows = [task_rows(self.tasks[tip].kind) for tip in self.tip_links]
        self._row_weights = np.concatenate(
            [np.full(len(rows), self.tasks[tip].weight) for tip, rows in zip(self.tip_links, self._rows)]
        )
        self._stacked_rows = np.concatenate([rows + 6 * index for index, rows in enumerate(self._rows)])
        work = self.tree.frame_count * len(self._stacked_rows)
        default_batch = min(_MAX_BATCH, max(_MIN_BATCH, _BATCH_WORK // work))
        self.batch_size = default_batch if batch_size is None else int(batch_size)
        self._full_pose_tasks = len(self._stacked_rows) == 6 * len(self.tip_links)
        self._unit_row_weights = bool(np.all(self._row_weights == 1.0))
        # Sums the squared controlled rows into per-tip position and orientation norms.
        tip_of_row = np.concatenate([np.full(len(rows), index) for index, rows in enumerate(self._rows)])
        is_angular = np.concatenate([rows >= 3 for rows in self._rows])
        self._norm_selector = np.zeros((len(tip_of_row), 2 * len(self.tip_links)))
        self._norm_selector[np.arange(len(tip_of_row)), tip_of_row + is_angular * len(self.tip_links)] = 1.0
        self._tolerances = np.array(
            [
                [self.tasks[tip].position_tolerance for tip in self.tip_links],
                [self.tasks[tip].orientation_tolerance for tip in self.tip_links],
            ]
        )
        # Restarts sample bounded joints within their limits, a joint bounded on one side over the
        # full turn next to its bound, an unbounded one over (-pi, pi] around the seed.
        finite_lower, finite_upper = np.isfinite(self.lower), np.isfinite(self.upper)
        self._sampling_lower = np.where(
            finite_lower, self.lower, np.where(finite_upper, self.upper - 2 * np.pi, -np.pi)
        )
        self._sampling_upper = np.where(
            finite_upper, self.upper, np.where(finite_lower, self.lower + 2 * np.pi, np.pi)
        )
        # Seed-table features: per tip the position columns (0-2) when the task controls a linear
        # row, the rotation columns (3-11) when it controls an angular one.
        columns, scale = [], []
        for index, (tip, rows, (_, radius)) in enumerate(zip(self.tip_links, self._rows, self._reach)):
            weight = self.tasks[tip].weight
            if np.any(rows < 3):
                columns += range(_TIP_FEATURES * index, _TIP_FEATURES * index + 3)
                scale += [weight] * 3
            if np.any(rows >= 3):
                columns += range(_TIP_FEATURES * index + 3, _TIP_FEATURES * (index + 1))
                scale += [weight * max(radius, _MIN_ROTATION_SCALE) / np.pi] * 9
        self._feature_columns, self._feature_scale = np.array(columns), np.array(scale)
        # The table's poses assume every joint free: not sampled while a joint is locked.
        self._table_usable = self.seed_table_size > 0 and bool(np.all(self.joint_weights > 0))
        self._seed_table = self._sample_seed_table()  # (q, features)
        self._table_spacing = self._typical_spacing()
        self._subsolvers: dict = {}  # tips -> (IKSolver for those tips, their joints' indices here)

    # ------------------------------------------------------------------ configuration

    def _joint_vector(self, values, default, what: str) -> np.ndarray:
        vector = np.broadcast_to(np.asarray(default, dtype=float), (len(self.joint_names),)).copy()
        if values is None:
            return vector
        if isinstance(values, Mapping):
            for name, value in values.items():
                if name not in self.joint_names:
                    raise UnknownJointError(name, self.joint_names, what=f"joint in {what}")
                vector[self.joint_names.index(name)] = float(value)
            return vector
        array = np.asarray(values, dtype=float).reshape(-1)
        if array.shape != vector.shape:
            raise IKNodeError(
                f"{what} needs {len(vector)} values ({list(self.joint_names)}), got {array.size}"
            )
        return array

    def _limits(self, lower: Mapping, upper: Mapping) -> tuple[np.ndarray, np.ndarray]:
        """URDF limits, tightened by the given ones (a looser bound than the URDF is ignored)."""
        low, high = self.tree.lower.copy(), self.tree.upper.copy()
        for bounds, pick in ((lower, np.maximum), (upper, np.minimum)):
            for name, value in bounds.items():
                if name not in self.joint_names:
                    raise UnknownJointError(name, self.joint_names, what="joint in limits")
                if not math.isfinite(value):
                    raise IKNodeError(f"limit for joint '{name}' must be finite, got {value}")
                index = self.joint_names.index(name)
                target = low if bounds is lower else high
                target[index] = pick(target[index], value)
        for index in np.flatnonzero(low > high):
            raise IKNodeError(
                f"joint '{self.joint_names[index]}': lower limit {low[index]} "
                f"is above upper limit {high[index]}"
            )
        return low, high

    def _tasks(self, tasks: Mapping, position_tolerance: float, orientation_tolerance: float) -> dict:
        for tip in tasks:
            if tip not in self.tip_links:
                raise UnknownLinkError(tip, self.tip_links, what="tip in tasks")
        resolved = {}
        for tip in self.tip_links:
            task = tasks.get(tip, "pose")
            if not isinstance(task, TipTask):
                task = TipTask(task, 1.0, position_tolerance, orientation_tolerance)
            resolved[tip] = task
        return resolved

    # ------------------------------------------------------------------ errors

    def _per_tip(self, errors: np.ndarray) -> dict:
        return {tip: (float(errors[0, i]), float(errors[1, i])) for i, tip in enumerate(self.tip_links)}

    def _targets(self, targets, seed: np.ndarray) -> np.ndarray:
        """Validate ``{tip: 4x4}`` (or a bare 4x4 for one tip) into a (tips, 4, 4) array; tips
        without a target are held at their pose at the seed."""
        if isinstance(targets, np.ndarray) or not isinstance(targets, Mapping):
            if len(self.tip_links) != 1:
                raise TargetError(
                    f"targets must be a mapping {{tip: 4x4 pose}} for tips {list(self.tip_links)}"
                )
            targets = {self.tip_links[0]: targets}
        for tip in targets:
            if tip not in self.tip_links:
                raise UnknownLinkError(tip, self.tip_links, what="tip")
        stacked = np.empty((len(self.tip_links), 4, 4))
        seed_poses = None
        for index, tip in enumerate(self.tip_links):
            if tip not in targets:
                if seed_poses is None:
                    seed_poses = self.tree.link_poses(seed)
                stacked[index] = seed_poses[self._tip_frames[index]]
                continue
            pose = np.asarray(targets[tip], dtype=float)
            if pose.shape != (4, 4):
                raise TargetError(f"target for tip '{tip}' must be a 4x4 pose, got shape {pose.shape}")
            if not np.isfinite(pose).all():
                raise TargetError(f"target for tip '{tip}' contains NaN or infinity")
            if np.abs(pose[:3, 3]).max() > MAX_TARGET_DISTANCE:
                raise TargetError(
                    f"target for tip '{tip}' is at {pose[:3, 3].tolist()} m; coordinates beyond "
                    f"{MAX_TARGET_DISTANCE:g} m are refused (their squared errors overflow)"
                )
            (x0, y0, z0), (x1, y1, z1), (x2, y2, z2) = pose[:3, :3].tolist()
            determinant = x0 * (y1 * z2 - z1 * y2) - y0 * (x1 * z2 - z1 * x2) + z0 * (x1 * y2 - y1 * x2)
            if (
                np.abs(pose[:3, :3].T @ pose[:3, :3] - _IDENTITY3).max() > _ORTHONORMAL_TOLERANCE
                or determinant < 0
                or pose[3].tolist() != [0.0, 0.0, 0.0, 1.0]
            ):
                raise TargetError(
                    f"target for tip '{tip}' is not a rigid transform (its rotation must be "
                    "orthonormal with determinant +1 and its last row 0 0 0 1)"
                )
            stacked[index] = pose
        return stacked

    def _task_error(self, poses: np.ndarray, targets: np.ndarray):
        """Stacked weighted body-frame error over the controlled rows, and the per-tip error
        norms as a (2, tips) array: position [m] in row 0, orientation [rad] in row 1 (with a
        leading batch axis for batched poses).

        Per tip: ``[R_e^T (p_d - p_e); log(R_e^T R_d)]`` (tip-frame axes; the body Jacobian's).
        """
        tips = poses[..., self._tip_selector, :, :]
        rotations = tips[..., :3, :3]
        linear = ((targets[:, :3, 3] - tips[..., :3, 3])[..., None, :] @ rotations)[..., 0, :]
        angular = so3_log(np.swapaxes(rotations, -1, -2) @ targets[:, :3, :3])
        controlled = np.concatenate((linear, angular), axis=-1).reshape(poses.shape[:-3] + (-1,))
        if not self._full_pose_tasks:
            controlled = controlled[..., self._stacked_rows]
        norms = np.sqrt((controlled * controlled) @ self._norm_selector).reshape(poses.shape[:-3] + (2, -1))
        return (controlled if self._unit_row_weights else controlled * self._row_weights), norms

    def _converged(self, errors: np.ndarray) -> bool:
        return bool((errors <= self._tolerances).all())

    def _jacobian(self, poses: np.ndarray) -> np.ndarray:
        """Stacked body Jacobian of the tips, trimmed to the controlled rows and weighted
        ((m, dof), or (B, m, dof) for batched poses)."""
        if len(self._tip_frames) == 1:
            full = self.tree.frame_body_jacobian(poses, self._tip_frames[0])
        else:
            full = np.concatenate(
                [self.tree.frame_body_jacobian(poses, frame) for frame in self._tip_frames], axis=-2
            )
        if not self._full_pose_tasks:
            full = full[..., self._stacked_rows, :]
        return full if self._unit_row_weights else full * self._row_weights[:, None]

    def task_jacobian(self, q) -> np.ndarray:
        """The stacked, trimmed, weighted body Jacobian the solver inverts, at ``q`` (in
        :attr:`joint_names` order): one row per controlled tip-frame axis ``[v; w]``."""
        return self._jacobian(self.tree.link_poses(self.tree.joint_vector(q)))

    # ------------------------------------------------------------------ solving

    def solve(self, targets, seed=None, timeout: float | None = 0.005) -> IKResult:
        """Find ``q`` within the limits bringing each tip to its target (4x4 ``T_base_tip``).

        ``targets``: ``{tip: 4x4}`` (a bare 4x4 when there is one tip; tips left out are held at
        their pose at the seed). ``seed``: start configuration (array or ``{joint: value}``;
        default: the rest posture); values outside the limits are clipped into them.
        ``timeout``: time budget in seconds (None: only ``max_iterations``/``max_attempts``).
        Raises :class:`~ik_node.errors.TargetError` for unusable input; an unreachable goal is
        not an error: the best configuration found comes back with ``success=False``.
        """
        start = time.perf_counter()
        if timeout is None and self.max_attempts is None:
            raise IKNodeError("solve needs a timeout or a solver with max_attempts, or it may never end")
        if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
            raise IKNodeError(f"timeout must be a positive number of seconds, got {timeout}")
        budget = _Budget(math.inf if timeout is None else start + float(timeout))
        seed = self.rest_posture.copy() if seed is None else self._seed(seed)
        target_poses = self._targets(targets, seed)
        restarts = _Restarts(self, target_poses, seed)
        # Only several tips need it up front (task priority); one tip only to name a failure.
        out_of_reach = self._tips_out_of_reach(target_poses) if len(self.tip_links) > 1 else None
        if self.method == "ccd":
            outcome = self._search_sequential(target_poses, seed, budget, restarts)
        elif out_of_reach and len(out_of_reach) < len(self.tip_links):
            outcome = self._search_prioritised(target_poses, seed, budget, out_of_reach)
        else:
            outcome = self._search_batched(target_poses, seed, budget, restarts)
        best, iterations, outcomes, attempts = outcome
        _, q, errors, best_outcome = best
        converged = best_outcome == "converged"
        if converged:
            reason = "success"
        elif best_outcome == "stuck" or (
            out_of_reach if out_of_reach is not None else self._tips_out_of_reach(target_poses)
        ):
            reason = "unreachable"  # beyond the workspace, or the closest found is a local minimum
        else:
            reason = "timeout" if "deadline" in outcomes else "iterations"
        return IKResult(
            q=self._near_seed(q, seed),
            success=converged,
            position_error=float(errors[0].max()),
            orientation_error=float(errors[1].max()),
            iterations=iterations,
            elapsed=time.perf_counter() - start,
            reason=reason,
            attempts=attempts,
            tip_errors=self._per_tip(errors),
        )

    def _seed(self, seed) -> np.ndarray:
        """The seed as a vector clipped into the limits; joints a mapping leaves out sit at the
        rest posture."""
        if isinstance(seed, Mapping):
            seed = {**dict(zip(self.joint_names, self.rest_posture)), **seed}
        return np.clip(self.tree.joint_vector(seed, what="seed"), self.lower, self.upper)

    def _score(self, q, seed, errors, converged: bool) -> tuple:
        """Order attempts: converged first, then by solve type; unconverged by task error."""
        if not converged:
            return (1, float(errors.sum()))
        if self.solve_type == "distance":
            difference = self._near_seed(q, seed) - seed
            return (0, float(np.sum(self.joint_weights * difference**2)))
        if self.solve_type == "manipulability":
            jacobian = self._jacobian(self.tree.link_poses(q))
            return (0, -math.sqrt(max(np.linalg.det(jacobian @ jacobian.T), 0.0)))
        return (0, 0.0)

    def _near_seed(self, q: np.ndarray, seed: np.ndarray) -> np.ndarray:
        """Continuous joints wrapped to within pi of the seed (same pose, nearest turn)."""
        if not self.continuous.any():
            return q
        q = q.copy()
        difference = q[self.continuous] - seed[self.continuous]
        q[self.continuous] = seed[self.continuous] + (difference + np.pi) % (2 * np.pi) - np.pi
        return q

    def _tips_out_of_reach(self, targets: np.ndarray) -> list[str]:
        """Tips whose target position lies outside the sphere containing all the tip's positions
        (only tips whose task controls position)."""
        return [
            tip
            for tip, target, (centre, radius), rows in zip(self.tip_links, targets, self._reach, self._rows)
            if np.any(rows < 3) and np.linalg.norm(target[:3, 3] - centre) > radius
        ]

    def _subsolver(self, tips: tuple):
        """A solver for some of the tips, with this one's options and limits, and the indices of
        its joints in :attr:`joint_names`."""
        if tips not in self._subsolvers:
            own = set(self.robot.tree(self.tree.base_link, list(tips)).joint_names)
            indices = [index for index, name in enumerate(self.joint_names) if name in own]
            names = [self.joint_names[index] for index in indices]
            solver = IKSolver(
                self.robot,
                self.tree.base_link,
                list(tips),
                tasks={tip: self.tasks[tip] for tip in tips},
                method=self.method,
                solve_type=self.solve_type,
                joint_weights=dict(zip(names, self.joint_weights[indices])),
                lower={
                    name: value for name, value in zip(names, self.lower[indices]) if math.isfinite(value)
                },
                upper={
                    name: value for name, value in zip(names, self.upper[indices]) if math.isfinite(value)
                },
                rest_posture=dict(zip(names, self.rest_posture[indices])),
                posture_gain=self.posture_gain,
                min_damping=self.min_damping,
                max_iterations=self.max_iterations,
                max_attempts=self.max_attempts,
                batch_size=self.batch_size,
                # built inside a solve: no sampling of its own, which would overrun the budget;
                # it shares this solver's table below
                seed_table_size=0,
                random_seed=self.random_seed,
            )
            if self._table_usable:
                tip_of_column = np.array(self.tip_links)[self._feature_columns // _TIP_FEATURES]
                solver._share_seed_table(
                    self._seed_table[0][:, indices], self._seed_table[1][:, np.isin(tip_of_column, tips)]
                )
            self._subsolvers[tips] = (
                solver,
                np.array([self.joint_names.index(n) for n in solver.joint_names]),
            )
        return self._subsolvers[tips]

    def _search_prioritised(self, targets: np.ndarray, seed: np.ndarray, budget: _Budget, out_of_reach):
        """Task priority when some tips' targets are out of reach (Siciliano & Slotine 1991).

        First the reachable tips alone (their own solver: the far tips do not pull on the shared
        joints); then, with the reachable tips held by a correction step and the far tips' step
        projected into the null space of their Jacobian, ``dq = J1^+ e1 + (I - J1^+ J1) J2^+ (e2 -
        J2 J1^+ e1)``, the far tips come as close as that leaves them. Joints a step pushes past a
        limit are locked for that step. A step is kept when the reachable tips stay within
        tolerance and the far tips' error drops. Same return value as :meth:`_search_batched`.
        """
        near = tuple(tip for tip in self.tip_links if tip not in out_of_reach)
        solver, indices = self._subsolver(near)
        near_targets = {tip: targets[self.tip_links.index(tip)] for tip in near}
        first = solver.solve(near_targets, seed=seed[indices], timeout=budget.remaining())
        q = seed.copy()
        q[indices] = first.q
        primary = np.concatenate(
            [
                rows + 6 * index
                for index, (tip, rows) in enumerate(zip(self.tip_links, self._rows))
                if tip in near
            ]
        )
        primary = np.flatnonzero(np.isin(self._stacked_rows, primary))
        secondary = np.setdiff1d(np.arange(len(self._stacked_rows)), primary)
        near_tips = np.array([tip in near for tip in self.tip_links])

        def evaluate(q):
            poses = self.tree.link_poses(q)
            error, norms = self._task_error(poses, targets)
            return poses, error, norms, 0.5 * float(error[secondary] @ error[secondary])

        poses, error, norms, cost = evaluate(q)
        iterations, mu = first.iterations, _MU_INITIAL
        while first.success and mu <= _MU_MAX and iterations < first.iterations + self.max_iterations:
            if budget.exhausted():
                break
            iterations += 1
            jacobian = self._jacobian(poses)
            step = self._prioritised_step(
                jacobian[primary], error[primary], jacobian[secondary], error[secondary], mu * cost, q
            )
            candidate = np.clip(q + step, self.lower, self.upper)
            candidate_poses, candidate_error, candidate_norms, candidate_cost = evaluate(candidate)
            if candidate_cost < cost and np.all(
                candidate_norms[:, near_tips] <= self._tolerances[:, near_tips]
            ):
                q, poses, error, norms, cost = (
                    candidate,
                    candidate_poses,
                    candidate_error,
                    candidate_norms,
                    candidate_cost,
                )
                mu = max(mu * _MU_DOWN, _MU_MIN)
            else:
                mu *= 2.0
        best = (self._score(q, seed, norms, False), q, norms, "stuck")
        return best, iterations, ["stuck"], first.attempts

    def _prioritised_step(
        self, primary_jacobian, primary_error, secondary_jacobian, secondary_error, damping, q
    ):
        """``J1^+ e1 + (I - J1^+ J1) J2^+ (e2 - J2 J1^+ e1)`` (damped inverses, joint weights),
        joints the step pushes past a limit locked and the step recomputed (twice at most)."""
        weights = self.joint_weights.copy()
        for _ in range(3):
            correction = _damped_step(primary_jacobian, primary_error, weights, self.min_damping**2)
            remaining = secondary_error - secondary_jacobian @ correction
            secondary = _damped_step(secondary_jacobian, remaining, weights, self.min_damping**2 + damping)
            step = correction + self.null_space_motion(primary_jacobian, secondary, weights)
            candidate = q + step
            violating = ((candidate < self.lower) | (candidate > self.upper)) & (weights > 0)
            if not violating.any():
                break
            weights = np.where(violating, 0.0, weights)
        return step

    def _random_seeds(self, count: int, seed: np.ndarray, rng) -> np.ndarray:
        """Restart configurations: uniform within the limits (continuous joints within pi of the
        seed); locked joints stay at the seed."""
        seeds = rng.uniform(self._sampling_lower, self._sampling_upper, size=(count, len(seed)))
        if self.continuous.any():
            seeds[:, self.continuous] += seed[self.continuous]
        return np.where(self.joint_weights > 0, seeds, seed)

    def _sample_seed_table(self) -> tuple[np.ndarray, np.ndarray]:
        """The seed table: ``seed_table_size`` configurations uniform within the limits (a stream
        keyed on ``random_seed``) and their tip-pose features, FK in chunks to bound memory."""
        generator = np.random.default_rng((self.random_seed, _TABLE_STREAM))
        size = self.seed_table_size if self._table_usable else 0
        q = self._random_seeds(size, np.zeros(len(self.joint_names)), generator)
        features = [
            self._pose_features(self.tree.link_poses(q[start : start + _TABLE_CHUNK])[:, self._tip_selector])
            for start in range(0, len(q), _TABLE_CHUNK)
        ]
        return q, np.concatenate(features) if features else np.zeros((0, len(self._feature_columns)))

    def _share_seed_table(self, q: np.ndarray, features: np.ndarray) -> None:
        """Use a table sampled by another solver: a parent's, restricted to this solver's joints
        and tips (same limits, chains and task weights, hence the same features)."""
        self.seed_table_size, self._table_usable = len(q), len(q) > 0
        self._seed_table = (q, features)
        self._table_spacing = self._typical_spacing()

    def _typical_spacing(self) -> float:
        """Median distance from a table entry to its nearest neighbour (feature metres; over the
        first ``_SPACING_SAMPLE`` entries): a seed nearer its goal than this is not improved on by
        the table."""
        features = self._seed_table[1]
        if len(features) < 2:
            return math.inf
        sample = features[:_SPACING_SAMPLE]
        norms = (features * features).sum(axis=1)
        # |a - b|^2 = |a|^2 + |b|^2 - 2 a.b: one matrix product, not a (64, size, F) difference
        distance = norms[: len(sample), None] + norms - 2.0 * sample @ features.T
        distance[np.arange(len(sample)), np.arange(len(sample))] = math.inf
        return float(np.median(np.sqrt(np.maximum(distance.min(axis=1), 0.0))))

    def _pose_features(self, tip_poses: np.ndarray) -> np.ndarray:
        """Per tip ``[w p, w r R]`` (position [m] and rotation matrix scaled by ``r``, the tip's
        reach radius / pi: ``|R - R'|`` is about ``sqrt(2)`` times the angle between them, so a small
        rotation of one radian weighs as much as ~0.45 of the reach; ``w`` the
        task weight), the blocks the task controls, for (..., tips, 4, 4) poses -> (..., F).
        Squared Euclidean distances between features rank poses by closeness."""
        flat = np.concatenate(
            (tip_poses[..., :3, 3], tip_poses[..., :3, :3].reshape(tip_poses.shape[:-2] + (9,))), axis=-1
        ).reshape(tip_poses.shape[:-3] + (-1,))
        return flat[..., self._feature_columns] * self._feature_scale

    def _nearest_table_entries(self, target_features: np.ndarray) -> np.ndarray:
        """Indices of the seed table's ``_TABLE_RESTARTS`` entries whose tip-pose features are
        nearest ``target_features``, nearest first."""
        difference = self._seed_table[1] - target_features
        distance = (difference * difference).sum(axis=1)
        count = min(_TABLE_RESTARTS, len(distance))
        nearest = np.argpartition(distance, count - 1)[:count]
        return nearest[np.argsort(distance[nearest])]

    def _evaluate(self, q: np.ndarray, targets: np.ndarray):
        """Poses, stacked task errors, per-tip error norms and costs ``e^T e / 2`` of a batch."""
        poses = self.tree.link_poses(q)
        error, norms = self._task_error(poses, targets)
        cost = 0.5 * (error * error).sum(axis=-1)
        return poses, error, norms, (float(cost) if cost.ndim == 0 else cost)

    def _search_batched(self, targets: np.ndarray, seed: np.ndarray, budget: _Budget, restarts):
        """Levenberg-Marquardt attempts advanced together as one numpy batch.

        The first attempt (``restarts.first``: the seed, or the table entry nearest a far goal)
        runs alone for a few iterations (most goals near the seed converge there); then
        ``batch_size`` rows run side by side, each restarting (``restarts.take``) when it
        converges (other solve types), stalls (the error did not halve within
        ``_STALL_ITERATIONS`` iterations), reaches a local minimum (the damping saturates) or
        uses ``max_iterations``. Returns (best, iterations, outcomes, attempts): best = (score,
        q, norms, outcome); one outcome per finished attempt: ``converged``, ``stuck`` (a local
        minimum: no step decreases the error), ``stalled``, ``iterations`` or ``deadline`` (cut
        by the time budget).
        """
        # The first attempt alone, with scalar bookkeeping: the cheapest iterations, and where
        # goals near the seed (tracking) converge.
        seed_state = self._evaluate(seed, targets)
        start = seed if self._converged(seed_state[2]) else restarts.first(seed_state[0])
        solo_q, solo_norms, solo_outcome, iterations = self._attempt(
            start, targets, budget, seed_state if start is seed else None
        )
        attempts = 1
        solo_converged = solo_outcome == "converged"
        best = (self._score(solo_q, seed, solo_norms, solo_converged), solo_q, solo_norms, solo_outcome)
        outcomes = [] if solo_outcome == "iterations" else [solo_outcome]  # "iterations": continues
        if solo_outcome == "deadline" or (solo_converged and self.solve_type == "speed"):
            return best, iterations, [solo_outcome], attempts
        if solo_outcome == "iterations":
            q = solo_q[None]
        else:
            q = restarts.take(1)
            attempts += 1
        poses, error, norms, cost = self._evaluate(q, targets)
        jacobian = self._jacobian(poses)
        mu, growth = np.full(1, _MU_INITIAL), np.full(1, 2.0)
        checkpoint_cost, age, since_checkpoint = cost.copy(), np.zeros(1, int), np.zeros(1, int)
        while True:
            converged = (norms <= self._tolerances).all(axis=(1, 2))
            ended = (
                converged
                | (mu > _MU_MAX)
                | (since_checkpoint > _STALL_ITERATIONS)
                | (age >= self.max_iterations)
            )
            out_of_time = budget.exhausted()
            if out_of_time or ended.any():
                for row in range(len(q)) if out_of_time else np.flatnonzero(ended):
                    if converged[row]:
                        outcome = "converged"
                    elif mu[row] > _MU_MAX or self._stationary(jacobian[row], error[row], q[row]):
                        outcome = "stuck"
                    elif not ended[row]:
                        outcome = "deadline"
                    elif since_checkpoint[row] > _STALL_ITERATIONS:
                        outcome = "stalled"
                    else:
                        outcome = "iterations"
                    outcomes.append(outcome)
                    score = self._score(q[row], seed, norms[row], outcome == "converged")
                    if best is None or score < best[0]:
                        best = (score, q[row].copy(), norms[row].copy(), outcome)
                if out_of_time or (best[3] == "converged" and self.solve_type == "speed"):
                    break
            elif out_of_time:
                break
            # Fill the batch with restarts (replacing ended rows) while the attempts budget lasts.
            if ended.any() or len(q) < self.batch_size:
                keep = np.flatnonzero(~ended)
                wanted = self.batch_size - len(keep)
                allowed = wanted if self.max_attempts is None else self.max_attempts - attempts
                count = max(0, min(wanted, allowed))
                q, error, norms, cost, jacobian = (
                    q[keep],
                    error[keep],
                    norms[keep],
                    cost[keep],
                    jacobian[keep],
                )
                mu, growth, age = mu[keep], growth[keep], age[keep]
                checkpoint_cost, since_checkpoint = checkpoint_cost[keep], since_checkpoint[keep]
                if count:
                    fresh = restarts.take(count)
                    fresh_poses, fresh_error, fresh_norms, fresh_cost = self._evaluate(fresh, targets)
                    attempts += count
                    q = np.concatenate((q, fresh))
                    error = np.concatenate((error, fresh_error))
                    norms = np.concatenate((norms, fresh_norms))
                    cost = np.concatenate((cost, fresh_cost))
                    jacobian = np.concatenate((jacobian, self._jacobian(fresh_poses)))
                    mu = np.concatenate((mu, np.full(count, _MU_INITIAL)))
                    growth = np.concatenate((growth, np.full(count, 2.0)))
                    checkpoint_cost = np.concatenate((checkpoint_cost, fresh_cost))
                    age = np.concatenate((age, np.zeros(count, int)))
                    since_checkpoint = np.concatenate((since_checkpoint, np.zeros(count, int)))
                if len(q) == 0:
                    break
                if count:
                    continue  # fresh rows may already be converged
            iterations += 1
            step = self._step(jacobian, error, cost, mu, q)
            candidate = np.clip(q + step, self.lower, self.upper)
            candidate_poses, candidate_error, candidate_norms, candidate_cost = self._evaluate(
                candidate, targets
            )
            age += 1
            since_checkpoint += 1
            accepted = candidate_cost < cost
            # Trust region: a kept step relaxes the damping, a refused one raises it (faster and
            # faster while refusals repeat).
            mu = np.where(accepted, np.maximum(mu * _MU_DOWN, _MU_MIN), mu * growth)
            growth = np.where(accepted, 2.0, 2.0 * growth)
            if accepted.all():
                q, error, norms, cost = candidate, candidate_error, candidate_norms, candidate_cost
                jacobian = self._jacobian(candidate_poses)
            elif accepted.any():
                q = np.where(accepted[:, None], candidate, q)
                error = np.where(accepted[:, None], candidate_error, error)
                norms = np.where(accepted[:, None, None], candidate_norms, norms)
                cost = np.where(accepted, candidate_cost, cost)
                jacobian = np.where(accepted[:, None, None], self._jacobian(candidate_poses), jacobian)
            halved = cost < _STALL_DECREASE * checkpoint_cost
            checkpoint_cost = np.where(halved, cost, checkpoint_cost)
            since_checkpoint[halved] = 0
        return best, iterations, outcomes, attempts

    def _attempt(self, q: np.ndarray, targets: np.ndarray, budget: _Budget, state=None):
        """The first attempt's solo Levenberg-Marquardt iterations (the batch's update rules on
        one row, with float bookkeeping), from ``q`` and its :meth:`_evaluate` ``state`` when
        known. Returns (q, norms, outcome, iterations); outcome ``iterations`` means the solo
        budget ran out while the error still fell."""
        poses, error, norms, cost = self._evaluate(q, targets) if state is None else state
        if self._converged(norms):
            return q, norms, "converged", 0
        jacobian = self._jacobian(poses)
        mu, growth = _MU_INITIAL, 2.0
        checkpoint_cost, checkpoint_iteration = cost, 0
        for iteration in range(1, _SOLO_ITERATIONS + 1):
            if mu > _MU_MAX or (mu > _MU_INITIAL and self._stationary(jacobian, error, q)):
                return q, norms, "stuck", iteration - 1  # (checked once steps are being refused)
            if iteration - checkpoint_iteration > _STALL_ITERATIONS:
                return q, norms, "stalled", iteration - 1
            if budget.exhausted():
                return q, norms, "deadline", iteration - 1
            candidate = np.clip(q + self._step(jacobian, error, cost, mu, q), self.lower, self.upper)
            candidate_poses, candidate_error, candidate_norms, candidate_cost = self._evaluate(
                candidate, targets
            )
            if candidate_cost < cost:
                q, error, norms, cost = candidate, candidate_error, candidate_norms, candidate_cost
                if self._converged(norms):
                    return q, norms, "converged", iteration  # (no Jacobian needed at a solution)
                jacobian = self._jacobian(candidate_poses)
                mu, growth = max(mu * _MU_DOWN, _MU_MIN), 2.0
                if cost < _STALL_DECREASE * checkpoint_cost:
                    checkpoint_cost, checkpoint_iteration = cost, iteration
            else:
                mu, growth = mu * growth, 2.0 * growth
        return q, norms, "iterations", _SOLO_ITERATIONS

    def _stationary(self, jacobian: np.ndarray, error: np.ndarray, q: np.ndarray) -> bool:
        """A local minimum of the error within the limits: the descent direction ``W J^T e``
        vanishes (relative to its scale) once the joints held at a limit it pushes against are
        left out (the KKT condition of the bound-constrained least squares)."""
        descent = self.joint_weights * (jacobian.T @ error)
        blocked = ((q <= self.lower) & (descent < 0.0)) | ((q >= self.upper) & (descent > 0.0))
        free = np.linalg.norm(np.where(blocked, 0.0, descent))
        return bool(free <= _STATIONARY * np.linalg.norm(jacobian) * np.linalg.norm(error))

    def _step(self, jacobian, error, cost, mu, q):
        """One joint step per batch row for the selected method (shapes (R, m, n), (R, m), (R,),
        (R,), (R, n)), with the joint limits inside the solve."""
        if self.method == "transpose":
            # Buss 2004: dq = alpha W J^T e with the step length that best reduces |e - J dq|,
            # shortened by the trust-region factor and uniformly to stay within the limits.
            gradient = self.joint_weights * _apply(np.swapaxes(jacobian, -1, -2), error)
            predicted = _apply(jacobian, gradient)
            alpha = (error * predicted).sum(axis=-1) / np.maximum(
                (predicted * predicted).sum(axis=-1), 1e-300
            )
            return _limit_step(q, (alpha / mu)[..., None] * gradient, self.lower, self.upper)
        damping = self.min_damping**2 + (mu * cost if self.method == "dls" else 1e-12)
        weights = None if self._unit_joint_weights else self.joint_weights
        step = _damped_step(jacobian, error, weights, damping)
        # Joints the step pushes past a limit get a selection row (a one in the joint's column,
        # the distance to its limit as error) stacked under the task. Solved exactly (an
        # infinite row weight) the row pins the joint at its limit: its motion is fixed and the
        # task error it leaves is handed to the other joints, whose weights stay.
        pinned = np.zeros(q.shape, dtype=bool)
        pinned_motion = np.zeros(q.shape)
        for _ in range(2):
            candidate = q + step
            below, above = candidate < self.lower, candidate > self.upper
            violating = (below | above) & ~pinned
            if not violating.any():
                break
            pinned |= violating
            pinned_motion = np.where(violating, np.where(below, self.lower, self.upper) - q, pinned_motion)
            free_weights = self.joint_weights * ~pinned
            remaining_error = error - _apply(jacobian, pinned_motion)
            step = pinned_motion + _damped_step(jacobian, remaining_error, free_weights, damping)
            weights = free_weights
        if self.posture_gain > 0.0:
            pull = self.posture_gain * self.joint_weights * (self.rest_posture - q) * ~pinned
            step = step + self.null_space_motion(jacobian, pull, weights)
        return step

    def null_space_motion(self, jacobian: np.ndarray, motion: np.ndarray, weights=None) -> np.ndarray:
        """``(I - J^+ J) z`` with the weighted pseudo-inverse ``J^+ = W J^T (J W J^T)^-1``: the
        part of ``z`` that leaves the task unchanged (``J (I - J^+ J) = 0``); a regularisation of
        1e-10 keeps the solve finite at singularities. ``W`` defaults to the joint weights.
        Shapes (m, n), (n,) or batched (R, m, n), (R, n)."""
        weights = self.joint_weights if weights is None else weights
        return motion - _damped_step(jacobian, _apply(jacobian, motion), weights, 1e-10)

    def _search_sequential(self, targets: np.ndarray, seed: np.ndarray, budget: _Budget, restarts):
        """Cyclic coordinate descent attempts one after another (seed first, then the
        restarts). Same return value as :meth:`_search_batched`."""
        best, iterations, outcomes = None, 0, []
        start = seed
        while True:
            q, norms, outcome, used = self._attempt_ccd(start, targets, budget)
            iterations += used
            outcomes.append(outcome)
            converged = outcome == "converged"
            score = self._score(q, seed, norms, converged)
            if best is None or score < best[0]:
                best = (score, q, norms, outcome)
            if converged and self.solve_type == "speed":
                break
            if outcome == "deadline" or budget.exhausted():
                break
            if self.max_attempts is not None and len(outcomes) >= self.max_attempts:
                break
            start = restarts.take(1)[0]
        return best, iterations, outcomes, len(outcomes)

    def _attempt_ccd(self, q: np.ndarray, targets: np.ndarray, budget: _Budget):
        """Cyclic coordinate descent: one joint at a time, tip to base, each a 1-D least-squares
        step along its own Jacobian column (the classic geometric CCD for a single revolute joint
        and a position goal), clipped to the joint's limits. Returns (q, norms, outcome, sweeps);
        ``stuck`` when a whole sweep no longer decreases the error."""
        error, norms = self._task_error(self.tree.link_poses(q), targets)
        cost = 0.5 * float(error @ error)
        movable = [index for index in range(len(q)) if self.joint_weights[index] > 0][::-1]
        for sweep in range(1, self.max_iterations + 1):
            if self._converged(norms):
                return q, norms, "converged", sweep - 1
            sweep_start_cost = cost
            for index in movable:
                column = self._jacobian(self.tree.link_poses(q))[:, index]
                step = float(column @ error) / (float(column @ column) + self.min_damping**2)
                candidate = q.copy()
                candidate[index] = np.clip(q[index] + step, self.lower[index], self.upper[index])
                candidate_error, candidate_norms = self._task_error(self.tree.link_poses(candidate), targets)
                candidate_cost = 0.5 * float(candidate_error @ candidate_error)
                if candidate_cost < cost:
                    q, error, norms, cost = candidate, candidate_error, candidate_norms, candidate_cost
            if self._converged(norms):
                return q, norms, "converged", sweep
            if cost >= sweep_start_cost * (1.0 - 1e-12):
                return q, norms, "stuck", sweep
            if budget.exhausted():
                return q, norms, "deadline", sweep
        return q, norms, "iterations", self.max_iterations


def _apply(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` for one (m, n) matrix or a batch (R, m, n) with vectors (R, n)."""
    return (matrix @ vector[..., None])[..., 0]


def _damped_step(jacobian: np.ndarray, error: np.ndarray, weights: np.ndarray | None, damping):
    """``dq = W J^T (J W J^T + lambda^2 I)^-1 e`` by a linear solve on the SPD matrix
    (``weights=None``: ``W = I``); batched over leading axes, ``damping`` per row."""
    weighted = jacobian if weights is None else jacobian * weights[..., None, :]
    gram = weighted @ np.swapaxes(jacobian, -1, -2)
    if gram.ndim == 2:  # one row (the seed's solo iterations): fewer numpy calls
        gram.flat[:: gram.shape[0] + 1] += damping
        return np.linalg.solve(gram, error) @ weighted
    diagonal = np.arange(gram.shape[-1])
    gram[..., diagonal, diagonal] += np.asarray(damping)[..., None]
    return (np.linalg.solve(gram, error[..., None])[..., 0][..., None, :] @ weighted)[..., 0, :]


def _limit_step(q, step, lower, upper):
    """Scale each row's step uniformly so that ``q + step`` stays within the limits."""
    room = np.where(step > 0, upper - q, lower - q)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(step != 0, room / step, np.inf)
    return step * np.minimum(1.0, ratios.min(axis=-1, keepdims=True))


_MU_INITIAL, _MU_DOWN, _MU_MIN, _MU_MAX = 0.1, 1.0 / 3.0, 1e-4, 1e6
_STALL_ITERATIONS, _STALL_DECREASE = 10, 0.5
_SOLO_ITERATIONS = 8
_MIN_BATCH, _MAX_BATCH, _BATCH_WORK = 4, 16, 3072  # default batch: 3072 // (frames x rows), in [4, 16]
_STATIONARY = 1e-3
_TABLE_STREAM = 1  # the seed table's random stream, apart from the restarts'
_TABLE_RESTARTS = 64  # nearest table entries tried before random restarts
_TIP_FEATURES = 12  # seed-table feature columns per tip before trimming: position 3, rotation 9
_TABLE_CHUNK = 256  # configurations per FK batch while sampling the seed table
_SPACING_SAMPLE = 64  # table entries whose nearest-neighbour distances give the table's spacing
_MIN_ROTATION_SCALE = 0.1  # m: rotation weight in the table's distance for tips with no reach
