"""Checks and conversions of what callers hand the solver: joint vectors by name, limits, joint
weights, the rest posture and posture gains, tasks, target poses and time budgets. Each error
names the joint, tip or option and says what would be valid."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..errors import IKNodeError, TargetError, UnknownJointError, UnknownLinkError, URDFError
from . import kernels
from .options import tip_task

__all__ = [
    "c_array",
    "check_movable",
    "check_pose",
    "check_seconds",
    "joint_vector",
    "joint_weights",
    "limits_and_rest",
    "pose_matrix",
    "point_target",
    "pose_stack",
    "posture_gains",
    "resolve_tasks",
    "rest_posture",
    "seed_vector",
    "stack_targets",
    "tightened_limits",
    "timeout_ns",
]


def check_movable(tree) -> None:
    """Raise :class:`URDFError` when no joint of ``tree`` moves its tips (all fixed): no IK."""
    if not tree.joint_names:
        raise URDFError(
            f"nothing moves the tips {list(tree.tip_links)} relative to '{tree.base_link}' (every joint "
            "between them is fixed): there is no IK to solve"
        )


def joint_vector(names: Sequence[str], values, default, what: str) -> np.ndarray:
    """``values`` (``{joint: value}`` or an array in ``names`` order) as a vector; joints a
    mapping leaves out take ``default`` (a scalar or a vector)."""
    vector = np.broadcast_to(np.asarray(default, dtype=float), (len(names),)).copy()
    if values is None:
        return vector
    if isinstance(values, Mapping):
        for name, value in values.items():
            if name not in names:
                raise UnknownJointError(name, names, what=f"joint in {what}")
            vector[names.index(name)] = float(value)
        return vector
    array = np.asarray(values, dtype=float).reshape(-1)
    if array.shape != vector.shape:
        raise IKNodeError(f"{what} needs {len(vector)} values ({list(names)}), got {array.size}")
    return array


def tightened_limits(names: Sequence[str], urdf_lower, urdf_upper, lower: Mapping, upper: Mapping):
    """The URDF limits [rad, m] tightened by ``{joint: bound}`` ones (a looser bound than the
    URDF is ignored); (lower, upper) vectors."""
    low, high = np.array(urdf_lower, dtype=float), np.array(urdf_upper, dtype=float)
    for bounds, target, pick in ((lower, low, np.maximum), (upper, high, np.minimum)):
        for name, value in bounds.items():
            if name not in names:
                raise UnknownJointError(name, names, what="joint in limits")
            if not math.isfinite(value):
                raise IKNodeError(f"limit for joint '{name}' must be finite, got {value}")
            index = names.index(name)
            target[index] = pick(target[index], value)
    for index in np.flatnonzero(low > high):
        raise IKNodeError(
            f"joint '{names[index]}': lower limit {low[index]} is above upper limit {high[index]}"
        )
    return low, high


def limits_and_rest(tree, options) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The position limits a solver of ``tree`` with ``options`` (a
    :class:`~.options.SolverOptions`) keeps its answers in, per configuration coordinate [rad, m]
    (the URDF's tightened by ``options.lower``/``upper``: :func:`tightened_limits`), and its rest
    posture within them (:func:`rest_posture`): the one rule, for the solver and for whoever
    must know them before it is built (the node's model)."""
    lower, upper = tightened_limits(
        tree.joint_names, tree.lower, tree.upper, options.lower or {}, options.upper or {}
    )
    return lower, upper, rest_posture(tree, lower, upper, options.rest_posture)


def joint_weights(names: Sequence[str], values) -> np.ndarray:
    """The ``joint_weights`` option as a vector in ``names`` (tangent) order, joints left out
    at 1; each finite and >= 0, else an :class:`IKNodeError`."""
    weights = joint_vector(names, values, 1.0, "joint_weights")
    if np.any(weights < 0) or not np.all(np.isfinite(weights)):
        raise IKNodeError(f"joint_weights must be finite and >= 0, got {weights}")
    return weights


def rest_posture(tree, lower: np.ndarray, upper: np.ndarray, values) -> np.ndarray:
    """The ``rest_posture`` option as a configuration of ``tree`` within ``lower``/``upper`` (it
    is also the default seed): joints left out at mid-range, or where unbounded at the tree's
    neutral value."""
    bounded = np.isfinite(lower) & np.isfinite(upper)
    middle = np.where(
        bounded, 0.5 * (np.where(bounded, lower, 0) + np.where(bounded, upper, 0)), tree.neutral
    )
    rest = joint_vector(tree.joint_names, values, middle, "rest_posture")
    return tree.normalized(np.clip(rest, lower, upper), "rest_posture")


def posture_gains(names: Sequence[str], posture_gain) -> np.ndarray:
    """The per-joint posture gains ``k_j`` in ``names`` order from the ``posture_gain`` option: a
    number (every joint), ``{joint: gain}`` (joints left out: 0, not pulled) or an array; each a
    finite number in [0, 1], else an :class:`IKNodeError` naming the joint."""
    if isinstance(posture_gain, Mapping) or not np.isscalar(posture_gain):
        gains = np.array(joint_vector(names, posture_gain, 0.0, "posture_gain"))  # (a writable copy)
    else:
        gains = np.full(len(names), float(posture_gain))
    for name, gain in zip(names, gains):
        if not (math.isfinite(gain) and 0.0 <= gain <= 1.0):
            raise IKNodeError(
                f"posture_gain for joint '{name}' must be a finite number in [0, 1], got {gain}"
            )
    return gains


def resolve_tasks(
    tips: Sequence[str], tasks: Mapping, position_tolerance: float, orientation_tolerance: float
):
    """``{tip: TipTask}`` for every tip: a kind becomes a task with the default tolerances
    (an invalid one refused naming the tip), tips left out control the full pose; a task
    ``relative_to`` a tip that is not another of ``tips`` with a task of its own (neither
    relative nor a gaze) refused naming both."""
    for tip in tasks:
        if tip not in tips:
            raise UnknownLinkError(tip, tips, what="tip in tasks")
    resolved = {
        tip: tip_task(tip, tasks.get(tip, "pose"), position_tolerance, orientation_tolerance) for tip in tips
    }
    for tip, task in resolved.items():
        other = task.relative_to
        if other is None:
            continue
        if other == tip:
            raise IKNodeError(f"task for tip '{tip}' is relative_to itself: name another tip of {list(tips)}")
        if other not in tips:
            raise UnknownLinkError(other, tips, what=f"tip in relative_to of tip '{tip}'")
        reference = resolved[other]
        if reference.relative_to is not None or reference.kind == "gaze":
            what = f"relative_to '{reference.relative_to}'" if reference.relative_to else "a gaze"
            raise IKNodeError(
                f"task for tip '{tip}' is relative_to '{other}', whose own task is {what}: a relative "
                "task's reference holds a pose of its own (no chains or cycles of relative tasks)"
            )
    return resolved


def check_pose(tip: str, pose, check_poses=kernels.check_poses) -> np.ndarray:
    """``pose`` (4, 4) or (N, 4, 4) as a writable C-contiguous float array (one compiled
    signature for every caller), or a :class:`TargetError` naming the tip and the problem
    (found by ``check_poses``: the kernel, or its plain-Python copy while it compiles)."""
    pose = np.array(pose, dtype=float, order="C")
    if pose.shape[-2:] != (4, 4) or pose.ndim not in (2, 3):
        raise TargetError(f"target for tip '{tip}' must be a 4x4 pose, got shape {pose.shape}")
    problem = check_poses(pose.reshape(-1, 4, 4), kernels.MAX_TARGET_DISTANCE, kernels.ORTHONORMAL_TOLERANCE)
    if problem == kernels.POSE_NOT_FINITE:
        raise TargetError(f"target for tip '{tip}' contains NaN or infinity")
    if problem == kernels.POSE_TOO_FAR:
        raise TargetError(
            f"target for tip '{tip}' is at {pose[..., :3, 3].tolist()} m; coordinates beyond "
            f"{kernels.MAX_TARGET_DISTANCE:g} m are refused (their squared errors overflow)"
        )
    if problem == kernels.POSE_NOT_RIGID:
        raise TargetError(
            f"target for tip '{tip}' is not a rigid transform (its rotation must be "
            "orthonormal with determinant +1 and its last row 0 0 0 1)"
        )
    return pose


def seed_vector(seed, tree, rest_posture: np.ndarray) -> np.ndarray:
    """A solve's ``seed`` (an array in ``tree.joint_names`` order or ``{joint: value}``; None: the
    rest posture) as a vector (the kernels clip it into the limits and refuse NaN); joints a
    mapping leaves out sit at ``rest_posture``."""
    if seed is None:
        return rest_posture
    if type(seed) is np.ndarray and seed.shape == rest_posture.shape:
        return seed  # (the common case, without the general checks; the search copies it)
    if isinstance(seed, Mapping):
        seed = {**dict(zip(tree.joint_names, rest_posture)), **seed}
    # a copy of its own: writable, aligned, C-contiguous, as the compiled search is called with
    return np.array(tree.joint_vector(seed, what="seed"), order="C")


def c_array(values) -> np.ndarray:
    """``values`` as a writable, aligned, C-contiguous float array: itself where it is one, else
    a copy (what a compiled entry called without numba's dispatch takes: one type for every
    call, see :func:`~ik_node.compiled.jit.compiled_entry`)."""
    if type(values) is np.ndarray and values.dtype == np.float64:
        flags = values.flags  # (a new object at each access)
        if flags.c_contiguous and flags.writeable and flags.aligned:
            return values
    return np.array(values, dtype=float, order="C")


def pose_stack(tip: str, pose) -> np.ndarray:
    """A 4x4 ``pose`` as (1, 4, 4), writable, C-contiguous float (:func:`c_array`), or a
    :class:`TargetError` naming ``tip`` for another shape. Its values are not checked here: the
    compiled callers refuse a pose :func:`check_pose` would (``kernels.TARGET_NOT_USABLE``),
    without a call of its own, and the caller asks :func:`check_pose` why."""
    return pose_matrix(tip, pose).reshape(1, 4, 4)


def pose_matrix(tip: str, pose) -> np.ndarray:
    """A 4x4 ``pose`` as a writable, C-contiguous float 4x4 (:func:`c_array`), or a
    :class:`TargetError` naming ``tip`` for another shape; its values as :func:`pose_stack`'s."""
    pose = c_array(pose)
    if pose.shape != (4, 4):
        raise TargetError(f"target for tip '{tip}' must be one 4x4 pose, got shape {pose.shape}")
    return pose


def point_target(tip: str, point) -> np.ndarray:
    """A gaze tip's target, a point x y z (3,) or points (N, 3) [m, base frame] (or a 4x4 pose
    (N, 4, 4), of which the position), as poses (4, 4) or (N, 4, 4) with that position and no
    rotation; a :class:`TargetError` naming ``tip`` for another shape."""
    array = np.asarray(point, dtype=float)
    if array.ndim in (1, 2) and array.shape[-1] == 3:
        position = array
    elif array.ndim in (2, 3) and array.shape[-2:] == (4, 4):
        position = array[..., :3, 3]
    else:
        raise TargetError(
            f"target for gaze tip '{tip}' must be a point x y z [m] (or a 4x4 pose, whose position is "
            f"used), got shape {array.shape}"
        )
    pose = np.zeros(position.shape[:-1] + (4, 4))
    pose[..., :3, :3] = np.eye(3)
    pose[..., :3, 3] = position
    pose[..., 3, 3] = 1.0
    return pose


def stack_targets(
    tips: Sequence[str],
    targets,
    held_pose: Callable[[str], np.ndarray] | None,
    check_poses=kernels.check_poses,
    gaze_tips=frozenset(),
) -> np.ndarray:
    """Targets ``{tip: 4x4}`` (a bare pose for one tip) as (T, 4, 4) in ``tips`` order, tips
    left out at ``held_pose(tip)``; with ``held_pose=None`` (a batch) ``{tip: (N, 4, 4)}`` for
    every tip as (N, T, 4, 4). Each checked by :func:`check_pose` with ``check_poses``; the
    target of a tip in ``gaze_tips`` is a point (3,) or points (N, 3) (:func:`point_target`)."""
    if isinstance(targets, np.ndarray) or not isinstance(targets, Mapping):
        if len(tips) != 1:
            raise TargetError(f"targets must be a mapping {{tip: 4x4 pose}} for tips {list(tips)}")
        targets = {tips[0]: targets}
    for tip in targets:
        if tip not in tips:
            raise UnknownLinkError(tip, tips, what="tip")
    checked = {
        tip: check_pose(tip, point_target(tip, pose) if tip in gaze_tips else pose, check_poses)
        for tip, pose in targets.items()
    }
    if held_pose is None:
        shapes = {pose.shape for pose in checked.values()}
        if len(checked) != len(tips) or len(shapes) != 1 or len(next(iter(shapes))) != 3:
            got = {tip: pose.shape for tip, pose in checked.items()}
            raise TargetError(
                f"solve_many needs an (N, 4, 4) array for every tip {list(tips)} with the same N; got {got}"
            )
        return np.ascontiguousarray(np.stack([checked[tip] for tip in tips], axis=1))
    stacked = np.empty((len(tips), 4, 4))
    for index, tip in enumerate(tips):
        if tip not in checked:
            stacked[index] = held_pose(tip)
        elif checked[tip].shape != (4, 4):
            raise TargetError(f"target for tip '{tip}' must be a 4x4 pose, got shape {checked[tip].shape}")
        else:
            stacked[index] = checked[tip]
    return stacked


def timeout_ns(timeout: float | None, max_attempts: int | None) -> int:
    """A solve's time budget [ns] (-1: none, then ``max_attempts`` must bound it)."""
    if type(timeout) is float and 0.0 < timeout < math.inf:  # (the common case first)
        return int(timeout * 1e9)
    if timeout is None:
        if max_attempts is None:
            raise IKNodeError("solve needs a timeout or a solver with max_attempts, or it may never end")
        return -1
    check_seconds(timeout)
    return int(timeout * 1e9)


def check_seconds(timeout) -> None:
    """Raise :class:`IKNodeError` unless ``timeout`` is a finite number of seconds above 0 (an
    int or a float)."""
    if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
        raise IKNodeError(f"timeout must be a positive number of seconds, got {timeout}")
