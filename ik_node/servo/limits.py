"""The next velocity of a servo period within every joint limit, by construction.

One period of ``T`` seconds moves each joint (tangent coordinate ``i``) from position ``x_i`` at
velocity ``v_i`` (the last command's) with the new velocity ``u_i``: ``x_i + u_i T``. The new
velocity must lie in an interval made of four bounds, in this priority (a lower one gives way
when it cannot be met together with those above, and the nearest point of the higher ones is
kept):

1. **position**: ``lower_i <= x_i + u_i T <= upper_i`` (the hard limits; a joint already
   outside them may stay or move back, at the pace the other bounds allow);
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

import math
from dataclasses import dataclass

import numpy as np

from ..errors import IKNodeError

__all__ = ["MotionLimits", "braking_speed", "goal_velocity", "scaled_velocity", "velocity_bounds"]

#: A distance [rad, m] that stands for "no position limit" in the braking speed (inf / inf).
FAR = 1e12


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
    ``u T + u^2 / (2 a) <= d``, so ``u = a (sqrt(T^2 + 2 d / a) - T)``, computed as
    ``2 d / (T + sqrt(T^2 + 2 d / a))`` (the same number; ``d / T`` where ``a`` is infinite); 0
    where ``d <= 0``; far (``sqrt(2 a d)``, 1e12 at most) where ``d`` is infinite."""
    distance = np.clip(distance, 0.0, FAR)
    return 2.0 * distance / (period + np.sqrt(period * period + 2.0 * distance / acceleration))


def goal_velocity(difference: np.ndarray, max_velocity: np.ndarray, period: float, speed_scale: float = 1.0):
    """The velocity toward a joint goal ``difference`` (nv,) away [rad, m]: there in one period,
    or as fast as the joint slowest to get there allows (one scale for all: the joint-space
    direction is kept), times ``speed_scale`` (0..1)."""
    reach = np.min(max_velocity * period / np.maximum(np.abs(difference), 1e-300), initial=np.inf)
    return difference / period * (min(1.0, float(reach)) * speed_scale)


def _merge(low, high, bound_low, bound_high):
    """``[low, high]`` intersected with ``[bound_low, bound_high]`` per joint; where they do not
    overlap, the point of ``[low, high]`` nearest the bound."""
    new_low, new_high = np.maximum(low, bound_low), np.minimum(high, bound_high)
    apart = new_low > new_high
    if apart.any():
        nearest = np.where(bound_high < low, low, high)
        new_low, new_high = np.where(apart, nearest, new_low), np.where(apart, nearest, new_high)
    return new_low, new_high


def velocity_bounds(
    position: np.ndarray, velocity: np.ndarray, limits: MotionLimits, period: float, goal=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per joint, the interval ``[low, high]`` of the next velocity (see the module docstring):
    position, acceleration, braking and velocity bounds, merged in that priority; and where a
    position limit (braking for it) is tighter than the velocity limit, below and above
    (``braked_low``, ``braked_high``: booleans; a goal's braking not counted). ``goal``:
    a tangent displacement (nv,) to a joint goal, which the joint must be able to stop at like a
    limit (a joint with ``goal_i = 0`` may still move, within its other bounds)."""
    acceleration = limits.max_acceleration
    braking_low = -braking_speed(position - (limits.lower + limits.margin), acceleration, period)
    braking_high = braking_speed(limits.upper - limits.margin - position, acceleration, period)
    braked_low, braked_high = braking_low > -limits.max_velocity, braking_high < limits.max_velocity
    if goal is not None:
        to_goal = braking_speed(np.abs(goal), acceleration, period)
        braking_high = np.where(goal > 0.0, np.minimum(braking_high, to_goal), braking_high)
        braking_low = np.where(goal < 0.0, np.maximum(braking_low, -to_goal), braking_low)
    step = acceleration * period
    # (a joint already outside its limits, a limit tightened past it, may stay or move back, never
    # jump: the other bounds set how fast; the command stays outside and the node's guard says so)
    low = np.minimum((limits.lower - position) / period, 0.0)
    high = np.maximum((limits.upper - position) / period, 0.0)
    low, high = _merge(low, high, velocity - step, velocity + step)
    low, high = _merge(low, high, braking_low, braking_high)
    low, high = _merge(low, high, -limits.max_velocity, limits.max_velocity)
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
    target = max(0.0, min(1.0, speed_cap))
    least, most, fits = 0.0, math.inf, True  # (the scales s with low <= s desired <= high, every joint)
    for want, bottom, top in zip(desired.tolist(), low.tolist(), high.tolist()):
        if want > 0.0:
            least, most = max(least, bottom / want), min(most, top / want)
        elif want < 0.0:
            least, most = max(least, top / want), min(most, bottom / want)
        elif bottom > 0.0 or top < 0.0:  # (a joint asked to stay cannot)
            fits = False
    if fits and least <= most:
        scale = min(max(target, least), most)
        return scale * desired, scale, True
    start = np.clip(velocity, low, high)
    direction = target * desired - start
    share = 1.0
    for step, begin, bottom, top in zip(direction.tolist(), start.tolist(), low.tolist(), high.tolist()):
        if step > 0.0:
            share = min(share, (top - begin) / step)
        elif step < 0.0:
            share = min(share, (bottom - begin) / step)
    return start + max(share, 0.0) * direction, float("nan"), False
