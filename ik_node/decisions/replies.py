"""What the policy answers each event with, free of rclpy: the goal as it arrived
(:class:`GoalRequest`), the outcome for ``/diagnostics`` (:class:`Status`), joint positions to
publish (:class:`Command`) and the whole answer (:class:`Reply`). The node
(:mod:`ik_node.ros.node`) turns a reply into messages: a warning to log, a command through the
limit guard, a status, the solution's markers.

Units: m, rad, s; joint vectors in the model's ``joint_names`` order (configuration coordinates),
velocities in its tangent order; poses are 4x4 ``T_frame_pose`` matrices.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Command", "GoalRequest", "Reply", "Status", "refusal"]


@dataclass
class GoalRequest:
    """A goal as it arrived: ``pose`` (4x4) in ``frame`` ('' = the base), ``stamp`` (when the
    pose was valid, for tf2; opaque here) and ``header`` (what the status echoes); ``point``: a
    point to look at (``~/target_point``: the pose's position, for a gaze tip only)."""

    tip: str
    pose: np.ndarray | None
    frame: str = ""
    stamp: object = None
    header: object = None
    point: bool = False


@dataclass
class Status:
    """One outcome for ``/diagnostics``: ``reason`` is a word (``success``, ``queued``,
    ``unreachable``, ``invalid_goal``, ``paused``, ...), ``message`` a sentence."""

    success: bool
    reason: str
    message: str = ""
    details: dict = field(default_factory=dict)
    goal: GoalRequest | None = None


@dataclass
class Command:
    """Joint positions to publish (a configuration; ``velocity`` in track mode, a tangent
    vector), and the state they leave from (``previous``, for a trajectory point's duration);
    ``path``: the timed straight line that leads there (:class:`ik_node.solver.CartesianPath`),
    for a straight-line goal."""

    q: np.ndarray
    velocity: np.ndarray | None
    previous: np.ndarray
    path: object = None


@dataclass
class Reply:
    """What one event asks the node to do: publish ``command`` (through the guard), publish
    ``status``, log ``warning``, draw ``solution`` (``(q, success)``), report the servo's state
    (``servo_status``: an :class:`ik_node.servo.ServoStatus`, on ``~/status`` when it changes)."""

    status: Status | None = None
    command: Command | None = None
    warning: str | None = None
    solution: tuple | None = None
    servo_status: object | None = None


def refusal(request: GoalRequest | None, message: str, reason: str = "invalid_goal") -> Reply:
    """A refused goal or command: its status (``reason``, ``message``) and the warning to log."""
    return Reply(Status(False, reason, message, goal=request), warning=message)
