"""Straight-line paths of tips that never jump (:meth:`ik_node.IKSolver.cartesian_path`).

Each tip's controlled point moves from its pose at the seed through its ``waypoints`` (4x4
``T_base_point``, base frame; a tip without waypoints holds its pose; all tips at one rate):
between two poses its position on the straight line and its
rotation on the shortest turn (``R_a exp(s log(R_a^T R_b))``), both at one rate
(:func:`ik_node.compiled.rotations.interpolate_pose`). Each segment is cut into equal steps of at
most ``max_step`` [m] and ``max_angle`` [rad]; each step is solved from the last configuration
and kept only when

* the solver reaches it from there (within its tolerances and the joint limits; free of
  collisions where it checks them) within ``timeout``: else the path ends (reason
  ``unreachable``: out of reach or of the limits; ``collision``);
* the joints move no more than the step can need: ``max_i |dq_i| <= 2 max_i |(J^+ dx)_i| + 1e-3``
  [rad, m] (``J`` the tips' body Jacobian at the last configuration, without the columns of
  joints a step would push past their limits; ``dx`` the step's body twist), and at most
  ``MAX_JOINT_STEP``: twice the first-order motion, so a flip to another branch (or a wrist
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

Units: m, rad, s. Configurations in ``joint_names`` order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..compiled import bundles
from ..compiled.rotations import interpolate_pose
from ..errors import IKNodeError, StartStateError, TargetError

__all__ = ["CartesianPath", "plan_cartesian_path"]

#: How far a step may be halved to keep the tip near the line and the joints' step small (2^-8
#: of it), and before a step out of reach or in collision ends the path (2^-3: within ~1 mm).
MAX_HALVINGS, END_HALVINGS = 8, 3
#: The largest joint step [rad, m] between two points (smaller steps where the joints move fast
#: for the tip, near a singularity: the path between points stays what linear interpolation gives).
MAX_JOINT_STEP = 0.1
#: Slack of the jump bound [rad, m] beyond twice the first-order motion.
JUMP_SLACK = 1e-3
#: A joint this close to a limit [rad, m] counts as at it in the first-order prediction.
LIMIT_CONTACT = 1e-4


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


def _between(start: np.ndarray, end: np.ndarray, fraction: float) -> np.ndarray:
    out = np.empty((4, 4))
    interpolate_pose(start, end, fraction, np.empty((3, 3)), np.empty(3), out)
    return out


def _distance_to_segment(point: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    direction = b - a
    length = float(direction @ direction)
    along = 0.0 if length == 0.0 else min(1.0, max(0.0, float((point - a) @ direction) / length))
    return float(np.linalg.norm(point - (a + along * direction)))


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
    tree, tips = solver.tree, solver.tip_links
    offsets = [np.asarray(solver.tasks[tip].offset, dtype=float) for tip in tips]
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
    path_q, path_points = [q], [corners[0]]
    achieved, deviation = 0.0, 0.0

    def finish(reason: str) -> CartesianPath:
        fraction = 1.0 if total == 0.0 or reason == "complete" else min(1.0, achieved / total)
        return CartesianPath(np.array(path_q), np.array(path_points), fraction, reason, deviation)

    def points_at(configurations) -> np.ndarray:
        """Each tip's controlled point (k, T, 4, 4) at each configuration (k, nq)."""
        poses = tree.link_poses(np.asarray(configurations))
        points = np.stack([tree.pose_of(poses, tip) for tip in tips], axis=1)
        for index, offset in enumerate(offsets):
            points[:, index, :3, 3] += points[:, index, :3, :3] @ offset
        return points

    limits = _limit_columns(solver)
    for segment, (a, b) in enumerate(zip(corners, corners[1:])):
        length, angle = lengths[segment].max(), angles[segment].max()
        steps = max(1, math.ceil(max(length / max_step, angle / max_angle) - 1e-12))
        done, step = 0.0, 1.0 / steps
        while done < 1.0 - 1e-12:
            step = min(step, 1.0 - done)
            jacobian = np.vstack([tree.body_jacobian(q, tip, offset) for tip, offset in zip(tips, offsets)])
            left, values, right = np.linalg.svd(jacobian, full_matrices=False)
            if values[-1] < singular_threshold:
                return finish("singularity")
            targets = np.array([_between(a[t], b[t], done + step) for t in range(len(tips))])
            current = path_points[-1]
            twist = np.concatenate([_body_twist(current[t], targets[t]) for t in range(len(tips))])
            predicted = _first_order(jacobian, left, values, right, twist, q, limits)
            result = solver.solve(dict(zip(tips, targets)), seed=q, timeout=timeout)
            failure, motion, reached, off_line = None, None, None, 0.0
            if not result.success:  # (out of reach or of the joint limits, or in collision)
                failure = "collision" if result.reason == "collision" else "unreachable"
            else:
                motion = tree.difference(q, result.q)
                largest = np.max(np.abs(motion))
                if largest > min(2.0 * np.max(np.abs(predicted)) + JUMP_SLACK, MAX_JOINT_STEP):
                    failure = "jump"
                else:
                    middle, reached = points_at([tree.integrate(q, 0.5 * motion), result.q])
                    off_line = max(
                        _distance_to_segment(middle[t, :3, 3], current[t, :3, 3], targets[t, :3, 3])
                        for t in range(len(tips))
                    )
                    failure = "deviation" if off_line > tolerance else None
            if failure is not None:  # (a smaller step, down to a share of it, before giving up)
                halvings = END_HALVINGS if failure in ("unreachable", "collision") else MAX_HALVINGS
                if step / 2.0 < 1.0 / steps / 2**halvings:
                    return finish(failure)
                step /= 2.0
                continue
            deviation = max(deviation, off_line)
            q = result.q
            path_q.append(q)
            path_points.append(reached)
            done += step
            achieved += measure[segment] * step
            step = min(2.0 * step, 1.0 / steps)  # (back to the full step once past a hard part)
    return finish("complete")


def _limit_columns(solver):
    """``(tangent indices of the 1-DOF joints, their configuration indices, lower, upper)``."""
    coordinates = solver.problem.tree_arrays[bundles.COORDINATES]
    single = np.flatnonzero(coordinates >= 0)
    at = coordinates[single]
    return single, at, solver.lower[at], solver.upper[at]


def _first_order(jacobian, left, values, right, twist, q, limits) -> np.ndarray:
    """The joint motion ``J^+ dx`` (from ``J``'s SVD) a step needs to first order; where it
    pushes a joint at its limit outward, the same without that joint (the solver keeps it
    there: its share goes to the others)."""
    predicted = right.T @ ((left.T @ twist) / values)
    single, at, lower, upper = limits
    position, push = q[at], predicted[single]
    blocked = single[
        ((position <= lower + LIMIT_CONTACT) & (push < 0))
        | ((position >= upper - LIMIT_CONTACT) & (push > 0))
    ]
    if len(blocked) == 0:
        return predicted
    free = np.ones(jacobian.shape[1], dtype=bool)
    free[blocked] = False
    predicted = np.zeros(jacobian.shape[1])
    predicted[free] = np.linalg.pinv(jacobian[:, free]) @ twist
    return predicted


def _body_twist(current: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The body twist ``[v; w]`` (first order) from ``current`` to ``target``: the position
    change and the rotation vector of ``R_c^T R_t``, in the current point's axes."""
    rotation = current[:3, :3]
    relative = rotation.T @ target[:3, :3]
    angle = math.acos(min(1.0, max(-1.0, (np.trace(relative) - 1.0) / 2.0)))
    axis = np.array(
        [relative[2, 1] - relative[1, 2], relative[0, 2] - relative[2, 0], relative[1, 0] - relative[0, 1]]
    )
    rotation_vector = axis * (0.5 if angle < 1e-9 else angle / (2.0 * math.sin(angle)))
    return np.concatenate((rotation.T @ (target[:3, 3] - current[:3, 3]), rotation_vector))
