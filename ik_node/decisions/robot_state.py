"""Where the robot is, free of rclpy: the latest ``/joint_states``, the seed they make, and the
pose of a goal's frame through the model's FK (or tf2 for frames outside the model).

Units: m, rad, s (times are ``time.monotonic()`` seconds); joint vectors in the model's
``joint_names`` order (configuration coordinates); poses are 4x4 ``T_base_frame`` matrices.
Multi-DOF joints (a floating or planar base) are never read from ``/joint_states``: their
coordinates come from the caller's fallback (the last command, else the rest posture).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..errors import IKNodeError
from .control import current_state
from .planning import Model

__all__ = ["FrameLookup", "JointStateInput"]

#: ``transform(frame, base, stamp) -> T_base_frame`` for frames outside the model (tf2), raising
#: :class:`IKNodeError` naming the frame and the missing transform; None where tf2 is missing.
FrameLookup = Callable[[str, str, object], np.ndarray]


class JointStateInput:
    """The latest ``/joint_states``: ``positions`` (``{joint: value}`` [rad, m], every joint ever
    named, NaN entries skipped), ``time`` (when the latest came) and whether their staleness was
    warned about (once per staleness)."""

    def __init__(self):
        self.positions: dict[str, float] = {}
        self.time = -math.inf
        self.stale_warned = False

    def receive(self, names, positions, now: float) -> str | None:
        """Keep the latest position of every named joint (NaN entries skipped); a warning when
        names and positions differ in length (the message is ignored)."""
        if len(positions) != len(names):
            return f"/joint_states message has {len(names)} names but {len(positions)} positions; ignored"
        for name, value in zip(names, positions):
            if math.isfinite(value):
                self.positions[name] = float(value)
        self.time = now
        self.stale_warned = False
        return None

    def current(
        self, model: Model, fallback: np.ndarray, timeout: float, now: float, warn: bool = True
    ) -> tuple[np.ndarray, str | None]:
        """The model's configuration and a warning (once per staleness; none without ``warn``):
        fresh ``/joint_states`` (not older than ``timeout`` [s]; by name, 1-DOF joints only), else
        ``fallback``; a multi-DOF joint's coordinates always from ``fallback``."""
        readable = np.zeros(len(model.joint_names), dtype=bool)
        readable[model.layout.configuration] = True
        q, stale = current_state(
            model.joint_names, self.positions, now - self.time, timeout, fallback, readable
        )
        if stale and warn and not self.stale_warned:
            self.stale_warned = True
            return (
                q,
                f"/joint_states older than joint_state_timeout ({timeout} s); seeding from the last command",
            )
        return q, None

    def frame_pose(
        self,
        model: Model,
        frame: str,
        stamp,
        state: np.ndarray,
        transform: FrameLookup | None,
        what: str = "goal",
        others: dict | None = None,
    ) -> np.ndarray:
        """``T_base_frame``: the identity for '' or the base; a link through the model's FK at
        ``state`` (the chain's joints; ``/joint_states`` for the others, ``others`` ``{joint:
        value}`` over them); another frame through ``transform`` (tf2) at ``stamp``, refused
        (:class:`IKNodeError`, ``what`` names the message) when there is none."""
        frame = frame.lstrip("/")
        base = model.base_link
        if frame in ("", base):
            return np.eye(4)
        robot = model.robot
        if frame in robot.links:
            values = {
                name: value
                for name, value in self.positions.items()
                if name in robot.joints and not robot.joints[name].is_multi_dof and name in robot.joint_names
            }
            values.update(others or {})
            values.update(zip(model.joint_names, state))
            return robot.forward(values, frame, base)
        if transform is None:
            raise IKNodeError(
                f"{what} frame '{frame}' is not a link of robot '{robot.name}' and tf2_ros is not available "
                "to look it up (install tf2_ros, or use one of the robot's frames: "
                f"{', '.join(sorted(robot.links))})"
            )
        return transform(frame, base, stamp)
