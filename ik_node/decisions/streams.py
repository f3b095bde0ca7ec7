"""Twists and joint jogs streamed to the node, free of rclpy: each message as it arrived
(:class:`TwistRequest`, :class:`JogRequest`), checked and made a servo command
(:func:`twist_command`, :func:`jog_command`) for :meth:`ik_node.decisions.policy.IKPolicy.receive_stream`.

A twist ``[v; w]`` [m/s, rad/s] moves ``twist_tip``'s controlled point; its ``frame`` says whose
axes it is given in: ``''`` or the base link (the base's), the twisting tip (its own, turning with
it), another link of the model (through its FK at the current state) or any TF frame (through
tf2, where importable). A jog gives joint velocities by name [rad/s, m/s].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import IKNodeError
from ..servo import JointJogCommand, ServoCommandError, TwistCommand

__all__ = ["JogRequest", "TwistRequest", "jog_command", "twist_command", "twist_tip"]


@dataclass
class TwistRequest:
    """A twist as it arrived: ``twist`` (6,) ``[v; w]``, in ``frame``'s axes at ``stamp``."""

    twist: np.ndarray
    frame: str = ""
    stamp: object = None


@dataclass
class JogRequest:
    """A joint jog as it arrived: ``names`` and their ``velocities`` (and ``displacements``,
    which the servo does not take: it follows velocities)."""

    names: tuple
    velocities: tuple
    displacements: tuple = ()


def twist_tip(settings, tips) -> str:
    """The tip twists move: ``twist_tip``, else the first tip; an unknown one raises naming it."""
    tip = settings.twist_tip or tips[0]
    if tip not in tips:
        raise IKNodeError(f"parameter twist_tip '{tip}' is not one of tip_links {list(tips)}")
    return tip


def twist_command(request: TwistRequest, tip: str, base_link: str, frame_rotation) -> TwistCommand:
    """The servo command of ``request`` for ``tip``: in the base's axes (``frame`` empty or the
    base link), the tip's (``frame`` the tip), else turned by ``frame_rotation(frame, stamp)``
    (``R_base_frame``, 3x3; it raises :class:`IKNodeError` naming the frame when it cannot).
    Raises :class:`~ik_node.servo.ServoCommandError` for a twist that is not finite."""
    twist = np.asarray(request.twist, dtype=float)
    if not np.all(np.isfinite(twist)):
        raise ServoCommandError(f"twist for '{tip}' is not finite: {twist.tolist()}")
    if request.frame in ("", base_link):
        return TwistCommand(tip, twist)
    if request.frame == tip:
        return TwistCommand(tip, twist, axes="tip")
    return TwistCommand(tip, twist, rotation=frame_rotation(request.frame, request.stamp))


def jog_command(request: JogRequest, joints) -> JointJogCommand:
    """The servo command of ``request`` for the model's 1-DOF ``joints``; raises
    :class:`~ik_node.servo.ServoCommandError` naming an unknown joint, a count that does not
    match, velocities that are not finite, or displacements without velocities."""
    names, velocities = list(request.names), list(request.velocities)
    if not velocities and request.displacements:
        raise ServoCommandError(
            "a jog with displacements and no velocities: the servo follows velocities (send them in "
            "'velocities', one per joint name)"
        )
    if len(velocities) != len(names):
        raise ServoCommandError(f"a jog names {len(names)} joints and gives {len(velocities)} velocities")
    unknown = [name for name in names if name not in joints]
    if unknown:
        raise ServoCommandError(f"jog for unknown joints {unknown}; joints: {list(joints)}")
    bad = [name for name, value in zip(names, velocities) if not math.isfinite(value)]
    if bad:
        raise ServoCommandError(f"jog velocities for {bad} are not finite")
    return JointJogCommand(dict(zip(names, velocities)))
