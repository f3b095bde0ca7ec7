"""Joint-space command logic of the node, free of rclpy so it is tested on its own.

* :func:`effective_joint_limits`: the MoveIt / ros2_control ``joint_limits`` parameters merged
  with the URDF (the tighter bound wins), and :func:`merge_joint_limits` for a chain with the
  node's start-up and run-time rules;
* :func:`trajectory_duration`: when a command's trajectory point is to be reached;
* :func:`singularity_scale`: MoveIt Servo's slow-down near singularities, and
  :func:`singularity_scale_toward` evaluating it for a step;
* :func:`current_state`: the seed from /joint_states while they are fresh;
* :func:`command_violation`: the check every command passes before it is published;
* :class:`JointLayout`: which coordinates of a tree's configuration the joint messages carry
  (its 1-DOF joints, by name) and which joints move as a whole (floating, planar: a pose).

Units: rad and m for positions, rad/s and m/s for velocities, s for time. Trees with multi-DOF
joints (a floating or planar base) step on their configuration manifold: displacements are tangent
vectors (``tree.difference``), steps are taken with ``tree.integrate``, so quaternions stay unit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import IKNodeError

__all__ = [
    "acceleration_limits",
    "EffectiveLimits",
    "JointLayout",
    "command_violation",
    "current_state",
    "singularity_scale_toward",
    "effective_joint_limits",
    "merge_joint_limits",
    "trajectory_duration",
    "singularity_scale",
]

#: Slack of the command check: positions [rad, m] and velocities relative (1e-9 of the limit).
POSITION_SLACK = 1e-9
VELOCITY_RELATIVE_SLACK = 1e-9


@dataclass(frozen=True)
class JointLayout:
    """Where a :class:`~ik_node.kinematics.KinematicTree`'s joints sit in its vectors.

    ``names``: its 1-DOF joints (revolute, continuous, prismatic) in tree order: what JointState,
    Float64MultiArray and JointTrajectory messages and the per-joint parameters name; their
    indices in the configuration (``configuration``, into ``tree.joint_names``) and in the
    tangent (``tangent``, into ``tree.tangent_names``). ``multi_dof``: the multi-DOF joints
    (:class:`ik_node.description.model.Joint`; floating or planar in a URDF), whose pose is published instead
    of their coordinates."""

    names: tuple[str, ...]
    configuration: np.ndarray
    tangent: np.ndarray
    multi_dof: tuple = ()

    @classmethod
    def of(cls, tree) -> JointLayout:
        single = [joint.name for joint in tree.joints if not joint.is_multi_dof]
        configuration = {name: index for index, name in enumerate(tree.joint_names)}
        tangent = {name: index for index, name in enumerate(tree.tangent_names)}
        return cls(
            tuple(single),
            np.array([configuration[name] for name in single], dtype=int),
            np.array([tangent[name] for name in single], dtype=int),
            tuple(joint for joint in tree.joints if joint.is_multi_dof),
        )


@dataclass(frozen=True)
class EffectiveLimits:
    """One joint's limits after merging: ``lower``/``upper`` (``-inf``/``inf`` when unbounded)
    and ``max_velocity`` (``inf`` when unbounded); ``warnings``: overrides that were refused."""

    lower: float
    upper: float
    max_velocity: float
    warnings: tuple[str, ...] = ()


def effective_joint_limits(
    joint: str,
    urdf_lower: float,
    urdf_upper: float,
    urdf_max_velocity: float,
    *,
    has_position_limits: bool,
    min_position: float,
    max_position: float,
    has_velocity_limits: bool,
    max_velocity: float,
) -> EffectiveLimits:
    """Merge ``joint_limits.<joint>.*`` parameters with the URDF limits of ``joint``.

    The tighter bound wins. An override wider than the URDF (a bound beyond it, or
    ``has_position_limits: false`` on a joint the URDF limits) is refused with a warning and the
    URDF bound stays. Raises :class:`~ik_node.errors.IKNodeError` for values that cannot be
    limits: non-finite numbers, ``min_position > max_position``, ``max_velocity <= 0``, or
    position limits that leave no range inside the URDF's.
    """
    warnings = []
    lower, upper = urdf_lower, urdf_upper
    urdf_bounded = math.isfinite(urdf_lower) or math.isfinite(urdf_upper)
    if has_position_limits:
        if not (math.isfinite(min_position) and math.isfinite(max_position)):
            raise IKNodeError(
                f"joint_limits.{joint}: min_position and max_position must be finite, "
                f"got [{min_position}, {max_position}]"
            )
        if min_position > max_position:
            raise IKNodeError(
                f"joint_limits.{joint}: min_position {min_position} is above max_position {max_position}"
            )
        if min_position < urdf_lower:
            warnings.append(
                f"joint_limits.{joint}.min_position {min_position} is below the URDF's lower limit "
                f"{urdf_lower}; the URDF limit stays (the tighter bound wins)"
            )
        if max_position > urdf_upper:
            warnings.append(
                f"joint_limits.{joint}.max_position {max_position} is above the URDF's upper limit "
                f"{urdf_upper}; the URDF limit stays (the tighter bound wins)"
            )
        lower, upper = max(urdf_lower, min_position), min(urdf_upper, max_position)
        if lower > upper:
            raise IKNodeError(
                f"joint_limits.{joint}: [{min_position}, {max_position}] does not overlap the URDF "
                f"limits [{urdf_lower}, {urdf_upper}]"
            )
    elif urdf_bounded:
        warnings.append(
            f"joint_limits.{joint}.has_position_limits is false but the URDF limits the joint to "
            f"[{urdf_lower}, {urdf_upper}]; the URDF limits stay"
        )
    velocity = urdf_max_velocity
    if has_velocity_limits:
        if not (math.isfinite(max_velocity) and max_velocity > 0):
            raise IKNodeError(
                f"joint_limits.{joint}.max_velocity must be a positive number, got {max_velocity}"
            )
        if max_velocity > urdf_max_velocity:
            warnings.append(
                f"joint_limits.{joint}.max_velocity {max_velocity} is above the URDF's "
                f"{urdf_max_velocity}; the URDF limit stays (the tighter bound wins)"
            )
        velocity = min(urdf_max_velocity, max_velocity)
    return EffectiveLimits(lower, upper, velocity, tuple(warnings))


LIMIT_KEYS = ("has_position_limits", "min_position", "max_position", "has_velocity_limits", "max_velocity")


def current_state(
    joint_names, joint_state: Mapping, age: float, timeout: float, fallback, readable=None
) -> tuple:
    """The current joint values (``joint_names`` order) and whether /joint_states are stale:
    ``joint_state`` (by name; joints it lacks from ``fallback``) while its ``age`` [s] is within
    ``timeout``, else ``fallback`` (the last command or the rest posture). Stale only once some
    state has arrived (``age`` finite). ``readable``: which coordinates ``joint_state`` may set
    (booleans; default all): a floating base's always come from ``fallback``."""
    fallback = np.asarray(fallback, dtype=float)
    if age > timeout:
        return fallback.copy(), math.isfinite(age)
    readable = [True] * len(joint_names) if readable is None else readable
    return np.array(
        [
            joint_state.get(name, fallback[index]) if read else fallback[index]
            for index, (name, read) in enumerate(zip(joint_names, readable))
        ]
    ), False


def singularity_scale_toward(
    task_jacobian, q, difference, lower: float, hard_stop: float, integrate=None
) -> tuple:
    """(:func:`singularity_scale` for a step along ``difference`` from ``q``, the condition
    number at ``q``), the conditions of ``task_jacobian(q)`` and 1e-3 further along the step.
    ``integrate(q, dq)``: the manifold's ``q (+) dq`` when ``difference`` is a tangent vector
    (default: ``q + dq``)."""
    condition = float(np.linalg.cond(task_jacobian(q)))
    step = 1e-3 * np.asarray(difference) / np.linalg.norm(difference)
    ahead = np.asarray(q) + step if integrate is None else integrate(q, step)
    condition_ahead = float(np.linalg.cond(task_jacobian(ahead)))
    return singularity_scale(condition, condition_ahead, lower, hard_stop), condition


def merge_joint_limits(
    joint_names, urdf_lower, urdf_upper, urdf_max_velocity, values, changed=None, mode=None
):
    """The chain's active limits (lower, upper, max_velocity vectors) and the warnings to log,
    from the URDF's and the ``joint_limits.<joint>.*`` entries of ``values``.

    At start-up (``changed`` None) an override that is unusable or wider than the URDF is refused
    with a warning and the URDF's limit stays. At run time (``changed``: the parameters being set)
    a change that makes it so raises :class:`IKNodeError` (the change is rejected); joints not
    touched keep what start-up decided, silently. ``track`` mode (``values['mode']``) needs a
    velocity limit for every joint and raises naming those without one."""
    lower = np.array(urdf_lower, dtype=float)
    upper = np.array(urdf_upper, dtype=float)
    velocity = np.array(urdf_max_velocity, dtype=float)
    warnings: list[str] = []
    for index, joint in enumerate(joint_names):
        touched = changed is not None and any(name.startswith(f"joint_limits.{joint}.") for name in changed)
        try:
            limits = effective_joint_limits(
                joint,
                float(lower[index]),
                float(upper[index]),
                float(velocity[index]),
                **{key: values[f"joint_limits.{joint}.{key}"] for key in LIMIT_KEYS},
            )
        except IKNodeError as error:
            if touched:
                raise
            if changed is None:
                warnings.append(f"{error}; the URDF limits of '{joint}' apply")
            continue
        if changed is None:
            warnings.extend(limits.warnings)
        elif limits.warnings and touched:
            raise IKNodeError(limits.warnings[0])  # a change wider than the URDF is rejected
        lower[index], upper[index], velocity[index] = limits.lower, limits.upper, limits.max_velocity
    unknown = [joint for joint, limit in zip(joint_names, velocity) if not math.isfinite(limit)]
    if (mode or values.get("mode")) == "track" and unknown:
        raise IKNodeError(
            f"track mode needs a velocity limit for joints {unknown}: the URDF gives none (or 0, or "
            "a negative 'unlimited'); set joint_limits.<joint>.has_velocity_limits and max_velocity"
        )
    return lower, upper, velocity, warnings


def acceleration_limits(joint_names, values, changed=None) -> tuple[np.ndarray, list[str]]:
    """Each joint's ``joint_limits.<joint>.max_acceleration`` [rad/s^2, m/s^2] where
    ``has_acceleration_limits`` (ROS's joint_limits convention), ``inf`` where not, and the
    warnings to log. A limit that is not a positive finite number is refused: at start-up
    (``changed`` None) with a warning (no limit then), at run time with an :class:`IKNodeError`
    when ``changed`` touches that joint."""
    limits, warnings = np.full(len(joint_names), np.inf), []
    for index, joint in enumerate(joint_names):
        if not values.get(f"joint_limits.{joint}.has_acceleration_limits", False):
            continue
        value = values[f"joint_limits.{joint}.max_acceleration"]
        if math.isfinite(value) and value > 0.0:
            limits[index] = value
            continue
        why = f"joint_limits.{joint}.max_acceleration must be a positive number, got {value}"
        if changed is None:
            warnings.append(f"{why}; '{joint}' has no acceleration limit")
        elif any(name.startswith(f"joint_limits.{joint}.") for name in changed):
            raise IKNodeError(why)
    return limits, warnings


def trajectory_duration(
    q, previous, max_velocity, min_duration: float, period: float | None = None, space=None
) -> float:
    """``time_from_start`` [s] of a command's trajectory point: the command period in ``track``
    mode (``period`` given), else the slowest joint's time at its velocity limit from
    ``previous`` to ``q``, at least ``min_duration``. ``space``: a tree with multi-DOF joints
    (the motion is its tangent ``difference``, ``max_velocity`` per tangent coordinate)."""
    if period is not None:
        return period
    if space is None:
        motion = np.asarray(q, dtype=float) - np.asarray(previous, dtype=float)
    else:
        motion = space.difference(np.asarray(previous, dtype=float), np.asarray(q, dtype=float))
    times = np.abs(motion) / np.asarray(max_velocity)
    return max(min_duration, float(np.max(times, initial=0.0)))


def singularity_scale(condition: float, condition_ahead: float, lower_threshold: float, hard_stop: float):
    """MoveIt Servo's velocity scale near a singularity, in [0, 1].

    ``condition``: condition number of the task Jacobian at the current configuration;
    ``condition_ahead``: the same a small step along the intended motion. Moving away from the
    singularity (the condition number does not grow) is never slowed; moving toward it is slowed
    linearly from 1 at ``lower_threshold`` to 0 at ``hard_stop``.
    """
    if not condition_ahead > condition or condition <= lower_threshold:
        return 1.0
    if condition >= hard_stop:
        return 0.0
    return 1.0 - (condition - lower_threshold) / (hard_stop - lower_threshold)


def command_violation(
    names, positions, lower, upper, velocities=None, max_velocity=None, velocity_names=None
) -> str | None:
    """Why a command must not be published (the first joint outside its limits), or ``None``.

    Positions must lie in ``[lower, upper]`` and, when given, ``|velocity| <= max_velocity``
    (slack: :data:`POSITION_SLACK`, :data:`VELOCITY_RELATIVE_SLACK`). ``velocity_names`` name
    the velocities when they are tangent coordinates (a floating base: ``names`` are the
    configuration's); default ``names``.
    """
    positions = np.asarray(positions, dtype=float)
    for index, name in enumerate(names):
        value = positions[index]
        if not (
            math.isfinite(value) and lower[index] - POSITION_SLACK <= value <= upper[index] + POSITION_SLACK
        ):
            return f"joint '{name}' position {value} is outside its limits [{lower[index]}, {upper[index]}]"
    if velocities is not None:
        for index, name in enumerate(names if velocity_names is None else velocity_names):
            speed = abs(float(velocities[index]))
            limit = max_velocity[index]
            if not (math.isfinite(speed) and speed <= limit * (1 + VELOCITY_RELATIVE_SLACK)):
                return f"joint '{name}' velocity {velocities[index]} exceeds its limit {limit}"
    return None
