"""The next velocity of a servo period within every joint limit, by construction.

One period of ``T`` seconds moves each joint (tangent coordinate ``i``) from position ``x_i`` at
velocity ``v_i`` (the last command's) with the new velocity ``u_i``: ``x_i + u_i T``. The new
velocity must lie in an interval made of four bounds, in this priority (a lower one gives way
when it cannot be met together with those above, and the nearest point of the higher ones is
kept):

1. **position**: ``lower_i <= x_i + u_i T <= upper_i`` (the hard limits);
2. **acceleration**: ``|u_i - v_i| <= a_i T``;
3. **braking**: from ``u_i`` the joint can still stop before its limit less the margin,
   decelerating at ``a_i``: ``u T + u^2 / (2 a) <= d`` with ``d`` the distance to
   ``upper_i - margin`` (``lower_i + margin`` below), i.e. ``u <= a (sqrt(T^2 + 2 d / a) - T)``
   (:func:`braking_speed`). If the last velocity met this bound, decelerating by ``a T`` meets
   the next one (``(v - aT) T + (v - aT)^2 / 2a = v^2 / 2a - aT^2 / 2 <= d - vT``), so the
   bounds never contradict each other once a motion starts within them;
4. **velocity**: ``|u_i| <= v_max,i``.

The intervals are pairwise compatible (each holds ``v_i``'s deceleration toward zero), so by
Helly's theorem in one dimension they have a common point (:func:`velocity_bounds`).

The desired velocity ``w`` (a twist's joint velocities, a jog, a step toward a goal) is then
scaled as a whole, ``u = s w`` with the one ``s`` that lies in every joint's interval nearest 1 and
at most ``speed_cap``: the tip keeps its direction, never one joint clipped alone
(:func:`scaled_velocity`). Where no single ``s`` fits (the direction turns faster than the
accelerations allow), the velocity moves from the last one toward ``s w`` along a straight line
in joint space as far as the intervals allow.

Units: rad, m, s; vectors in the tangent order of the configuration (a floating base's
coordinates have no position limits: ``-inf``/``inf``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import IKNodeError

__all__ = ["MotionLimits", "braking_speed", "scaled_velocity", "velocity_bounds"]


@dataclass(frozen=True)
class MotionLimits:
    """Per tangent coordinate (nv,): position limits ``lower``/``upper`` [rad, m] (``-inf``/``inf``
    where none), ``max_velocity`` [rad/s, m/s] and ``max_acceleration`` [rad/s^2, m/s^2] (``inf``:
    none), and ``margin`` [rad, m]: where braking must end, inside the position limits."""

    lower: np.ndarray
    upper: np.ndarray
    max_velocity: np.ndarray
    max_acceleration: np.ndarray
    margin: float = 0.0

    def __post_init__(self):
        for name in ("lower", "upper", "max_velocity", "max_acceleration"):
            object.__setattr__(self, name, np.array(getattr(self, name), dtype=float))
        for name in ("max_velocity", "max_acceleration"):
            values = getattr(self, name)
            if np.any(np.isnan(values)) or np.any(values <= 0.0):
                raise IKNodeError(f"{name} must be > 0 for every joint (inf: no limit), got {values}")
        if not (np.isfinite(self.margin) and self.margin >= 0.0):
            raise IKNodeError(f"the position margin must be a finite number >= 0, got {self.margin}")


def braking_speed(distance: np.ndarray, acceleration: np.ndarray, period: float) -> np.ndarray:
    """The largest speed ``u >= 0`` [rad/s, m/s] for which a joint ``distance`` [rad, m] away from
    where it must stop can do a period at ``u`` and then stop decelerating at ``acceleration``:
    ``u T + u^2 / (2 a) <= d``, so ``u = a (sqrt(T^2 + 2 d / a) - T)``; ``d / T`` where ``a`` is
    infinite; 0 where ``d <= 0``."""
    distance = np.maximum(np.asarray(distance, dtype=float), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        limited = acceleration * (np.sqrt(period * period + 2.0 * distance / acceleration) - period)
    return np.where(np.isfinite(acceleration), limited, distance / period)


def velocity_bounds(
    position: np.ndarray, velocity: np.ndarray, limits: MotionLimits, period: float, goal=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per joint, the interval ``[low, high]`` of the next velocity (see the module docstring):
    position, acceleration, braking and velocity bounds, merged in that priority; and where a
    position limit (braking for it) is tighter than the velocity limit, below and above
    (``braked_low``, ``braked_high``: booleans; a goal's braking not counted). ``goal``:
    a tangent displacement (nv,) to a joint goal, which the joint must be able to stop at like a
    limit (a joint with ``goal_i = 0`` may still move, within its other bounds)."""
    acceleration_step = limits.max_acceleration * period
    upper_room = limits.upper - limits.margin - position
    lower_room = position - (limits.lower + limits.margin)
    braking_low = -braking_speed(lower_room, limits.max_acceleration, period)
    braking_high = braking_speed(upper_room, limits.max_acceleration, period)
    braked_low, braked_high = braking_low > -limits.max_velocity, braking_high < limits.max_velocity
    if goal is not None:
        to_goal = braking_speed(np.abs(goal), limits.max_acceleration, period)
        braking_high = np.where(goal > 0.0, np.minimum(braking_high, to_goal), braking_high)
        braking_low = np.where(goal < 0.0, np.maximum(braking_low, -to_goal), braking_low)
    bounds = (
        ((limits.lower - position) / period, (limits.upper - position) / period),
        (velocity - acceleration_step, velocity + acceleration_step),
        (braking_low, braking_high),
        (-limits.max_velocity, limits.max_velocity),
    )
    low, high = (np.asarray(bound, dtype=float).copy() for bound in bounds[0])
    for bound_low, bound_high in bounds[1:]:
        new_low, new_high = np.maximum(low, bound_low), np.minimum(high, bound_high)
        fits = new_low <= new_high
        # (no overlap: the point of the kept interval nearest the new one)
        nearest = np.where(bound_high < low, low, high)
        low, high = np.where(fits, new_low, nearest), np.where(fits, new_high, nearest)
    return low, high, braked_low, braked_high


def scaled_velocity(
    desired: np.ndarray, velocity: np.ndarray, low: np.ndarray, high: np.ndarray, speed_cap: float = 1.0
) -> tuple[np.ndarray, float, bool]:
    """``(u, s, kept)``: the next velocity within ``[low, high]`` (:func:`velocity_bounds`).

    ``u = s desired`` with ``s`` the point of the interval of common scales nearest
    ``min(1, speed_cap)`` (``speed_cap``: the singularity's and the collisions' share, >= 0), and
    ``kept`` true; where no common scale exists, ``u = c + k (s' desired - c)`` with ``c`` the
    last velocity brought into the intervals and ``k`` in [0, 1] as large as they allow (``s`` is
    then ``nan`` and ``kept`` false)."""
    desired = np.asarray(desired, dtype=float)
    target = max(0.0, min(1.0, speed_cap))
    moving = desired != 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        first, second = low / desired, high / desired
    scale_low = np.where(moving, np.minimum(first, second), -np.inf)
    scale_high = np.where(moving, np.maximum(first, second), np.inf)
    least, most = max(0.0, float(scale_low.max(initial=0.0))), float(scale_high.min(initial=np.inf))
    still_fits = bool(np.all((low <= 0.0) & (high >= 0.0) | moving))
    if still_fits and least <= most:
        scale = min(max(target, least), most)
        return scale * desired, scale, True
    start = np.clip(velocity, low, high)
    direction = target * desired - start
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(direction > 0.0, (high - start) / direction, (low - start) / direction)
    share = float(np.clip(np.where(direction != 0.0, room, np.inf).min(initial=1.0), 0.0, 1.0))
    return start + share * direction, float("nan"), False
