"""What a servo is told each period: a tip's twist, joint velocities, a joint goal, or nothing
(come to rest). Each is checked when made: a bad one raises :class:`ServoCommandError` naming the
problem, and is never half-applied.

Units: m/s and rad/s; twists ``[v; w]`` (the controlled point's linear velocity first).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..errors import IKNodeError

__all__ = ["JointGoalCommand", "JointJogCommand", "ServoCommandError", "TwistCommand", "TWIST_AXES"]

#: Whose axes a twist is expressed in: the base link's, or the tip's own (the controlled point's
#: frame, which turns with the tip).
TWIST_AXES = ("base", "tip")


class ServoCommandError(IKNodeError):
    """A servo command that cannot be followed (not finite, an unknown tip or joint, ...)."""


@dataclass(frozen=True)
class TwistCommand:
    """Move ``tip``'s controlled point (its task's ``offset``) with ``twist`` (6,) ``[v; w]``
    [m/s, rad/s], in the base link's axes (``axes='base'``) or the tip's (``'tip'``); the other
    tips hold their poses. ``rotation`` (3x3, optional): the axes of another frame the twist is
    given in, ``R_base_frame`` (the node reads it from TF); then ``axes`` must be ``'base'``."""

    tip: str
    twist: np.ndarray
    axes: str = "base"
    rotation: np.ndarray | None = None

    def __post_init__(self):
        twist = np.array(self.twist, dtype=float).reshape(-1)
        if twist.shape != (6,):
            raise ServoCommandError(f"a twist has 6 components [vx vy vz wx wy wz], got {twist.size}")
        if not np.all(np.isfinite(twist)):
            raise ServoCommandError(f"twist for '{self.tip}' is not finite: {twist.tolist()}")
        if self.axes not in TWIST_AXES:
            raise ServoCommandError(f"twist axes must be one of {list(TWIST_AXES)}, got {self.axes!r}")
        if self.rotation is not None:
            rotation = np.array(self.rotation, dtype=float)
            if rotation.shape != (3, 3) or not np.all(np.isfinite(rotation)):
                raise ServoCommandError("a twist's frame rotation must be a finite 3x3 matrix")
            if self.axes != "base":
                raise ServoCommandError("a twist with a frame rotation must have axes 'base'")
            twist = np.concatenate((rotation @ twist[:3], rotation @ twist[3:]))
            object.__setattr__(self, "rotation", None)
        object.__setattr__(self, "twist", twist)


@dataclass(frozen=True)
class JointJogCommand:
    """Move joints at ``velocities`` ``{joint: rad/s or m/s}`` (joints left out: 0)."""

    velocities: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self):
        velocities = {}
        for name, value in dict(self.velocities).items():
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ServoCommandError(
                    f"jog velocity for joint '{name}' is not a number: {value!r}"
                ) from None
            if not math.isfinite(value):
                raise ServoCommandError(f"jog velocity for joint '{name}' is not finite: {value}")
            velocities[str(name)] = value
        object.__setattr__(self, "velocities", velocities)


@dataclass(frozen=True)
class JointGoalCommand:
    """Move to the configuration ``goal`` (nq,) and stop there (an IK answer: pose goals tracked
    in joint space), at most at ``speed_scale`` (0..1) of the speed the limits allow."""

    goal: np.ndarray
    speed_scale: float = 1.0

    def __post_init__(self):
        goal = np.array(self.goal, dtype=float).reshape(-1)
        if not np.all(np.isfinite(goal)):
            raise ServoCommandError(f"joint goal is not finite: {goal.tolist()}")
        if not (0.0 <= self.speed_scale <= 1.0):
            raise ServoCommandError(f"speed_scale must be in [0, 1], got {self.speed_scale}")
        object.__setattr__(self, "goal", goal)
