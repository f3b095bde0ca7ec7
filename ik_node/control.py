"""Joint-space command logic of the node, free of rclpy so it is tested on its own.

* :func:`effective_joint_limits`: the MoveIt / ros2_control ``joint_limits`` parameters merged
  with the URDF (the tighter bound wins);
* :func:`velocity_limited_step`: one tracking step toward a joint goal, every joint within its
  velocity limit, scaled uniformly so the motion keeps its direction;
* :func:`singularity_scale`: MoveIt Servo's slow-down near singularities;
* :func:`command_violation`: the check every command passes before it is published.

Units: rad and m for positions, rad/s and m/s for velocities, s for time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import IKNodeError

__all__ = [
    "EffectiveLimits",
    "command_violation",
    "effective_joint_limits",
    "singularity_scale",
    "velocity_limited_step",
]

#: Slack of the command check: positions [rad, m] and velocities relative (1e-9 of the limit).
POSITION_SLACK = 1e-9
VELOCITY_RELATIVE_SLACK = 1e-9


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


def velocity_limited_step(q, goal, max_velocity, period: float, speed_scale: float = 1.0):
    """One tracking step of ``period`` seconds from ``q`` toward ``goal``.

    ``q_next = q + s (goal - q)`` with one scale for all joints,
    ``s = speed_scale * min(1, min_i v_max,i T / |goal_i - q_i|)``, so no joint exceeds its
    velocity limit and the joint-space direction is kept. Returns ``(q_next, velocity)`` with
    ``velocity = (q_next - q) / T``.
    """
    q = np.asarray(q, dtype=float)
    difference = np.asarray(goal, dtype=float) - q
    reach = np.asarray(max_velocity, dtype=float) * period  # largest motion per joint this step
    excess = np.abs(difference) / reach  # > 1 where the joint cannot get there in one step
    scale = min(max(speed_scale, 0.0), 1.0) / max(1.0, float(excess.max(initial=0.0)))
    step = scale * difference
    return q + step, step / period


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


def command_violation(names, positions, lower, upper, velocities=None, max_velocity=None) -> str | None:
    """Why a command must not be published (the first joint outside its limits), or ``None``.

    Positions must lie in ``[lower, upper]`` and, when given, ``|velocity| <= max_velocity``
    (slack: :data:`POSITION_SLACK`, :data:`VELOCITY_RELATIVE_SLACK`).
    """
    positions = np.asarray(positions, dtype=float)
    for index, name in enumerate(names):
        value = positions[index]
        if not (
            math.isfinite(value) and lower[index] - POSITION_SLACK <= value <= upper[index] + POSITION_SLACK
        ):
            return f"joint '{name}' position {value} is outside its limits [{lower[index]}, {upper[index]}]"
        if velocities is not None:
            speed = abs(float(velocities[index]))
            limit = max_velocity[index]
            if not (math.isfinite(speed) and speed <= limit * (1 + VELOCITY_RELATIVE_SLACK)):
                return f"joint '{name}' velocity {velocities[index]} exceeds its limit {limit}"
    return None
