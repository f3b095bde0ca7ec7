"""MoveIt's ``compute_cartesian_path`` (``moveit_msgs/srv/GetCartesianPath``) free of rclpy and of
messages: a request's plain values (:class:`PathQuery`, which the node fills from the message) and
the node's :class:`~ik_node.decisions.policy.IKPolicy` give the answer (:class:`PathAnswer`:
MoveIt's error code, a message, the timed path).

What a request means here (docs/node.md, "compute_cartesian_path"), as MoveIt's move_group
capability reads it (``cartesian_path_service_capability.cpp``) where nothing else is said:

* the start: ``start_state.joint_state`` by name, as ``compute_ik``'s seed
  (:func:`~ik_node.decisions.compute_ik.request_seed`: the chain's joints it leaves out at the
  node's current state); a start outside the joint limits: INVALID_ROBOT_STATE naming the joints.
* ``link_name``: a tip of the node (empty: the node's single tip); another link:
  INVALID_LINK_NAME. ``group_name`` is not checked (the node serves its one chain).
* ``waypoints``: poses of the tip's controlled point after the start, in ``header.frame_id`` (empty:
  the base; a link of the model at the start state, the tip itself among them: MoveIt's
  "link" reference; else tf2); none: FAILURE; NaN or a zero quaternion: INVALID_GOAL_CONSTRAINTS;
  no transform: FRAME_TRANSFORM_FAILURE.
* ``max_step`` [m]: the path's largest Cartesian step (``IKSolver.cartesian_path``'s); not > 0:
  FAILURE, as MoveIt's. ``jump_threshold`` (and the prismatic and revolute ones) are accepted
  and not needed: the path never jumps, by construction (:mod:`ik_node.solver.cartesian`).
* ``avoid_collisions``: as ``compute_ik``'s (the node's one solver checks collisions when the node
  does, whatever the request asks; the message says which). ``path_constraints``: not supported,
  INVALID_GOAL_CONSTRAINTS.
* the answer: SUCCESS with the path as far as it goes (``fraction`` < 1 and the reason in the
  message when it ends early: out of reach, a limit, a singularity, a collision, a jump avoided),
  timed time-optimally (:mod:`ik_node.solver.timing`) within the velocity limits and the
  accelerations of :func:`~ik_node.decisions.motion.path_limits`, times the request's
  ``max_velocity_scaling_factor`` and ``max_acceleration_scaling_factor`` where the message has
  them (0: 1, as MoveIt's default; outside 0..1: FAILURE). A model with a floating or planar
  joint: FAILURE (the timing takes 1-DOF joints).

Nothing here moves the robot. Units: m, rad, s; quaternions in ROS order ``(x, y, z, w)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import IKNodeError, StartStateError, TargetError
from .compute_ik import (
    FAILURE,
    INVALID_GOAL_CONSTRAINTS,
    INVALID_LINK_NAME,
    INVALID_ROBOT_STATE,
    SUCCESS,
    PoseValues,
    RefusedRequestError,
    collision_notes,
    pose_in_base,
    request_seed,
    require_solver,
)
from .motion import path_limits

__all__ = ["PathAnswer", "PathQuery", "answer_path_query"]

#: The reasons a path ends early, as the message words them.
ENDED = {
    "unreachable": "the next step is out of reach or past a joint limit",
    "collision": "the next step collides (self-collision or an obstacle)",
    "jump": "going on needs a jump of the joints (another branch), which is never returned",
    "singularity": "the arm reaches a singularity",
    "deviation": "the tip cannot keep to the line there",
}


@dataclass(frozen=True)
class PathQuery:
    """A ``GetCartesianPath`` request as plain values: ``link`` (``link_name``), ``waypoints``
    (each in ``header.frame_id``, with ``header.stamp``), ``joint_names``/``joint_positions``
    (``start_state.joint_state``), ``max_step`` [m], ``jump_threshold``, ``avoid_collisions``,
    ``has_constraints`` (any ``path_constraints``), the scaling factors (0: not given)."""

    link: str
    waypoints: tuple[PoseValues, ...]
    joint_names: tuple[str, ...] = ()
    joint_positions: tuple[float, ...] = ()
    max_step: float = 0.0
    jump_threshold: float = 0.0
    avoid_collisions: bool = False
    has_constraints: bool = False
    velocity_scaling: float = 0.0
    acceleration_scaling: float = 0.0
    group_name: str = ""


@dataclass
class PathAnswer:
    """The answer: MoveIt's error ``code`` and ``message``; the start (``start_names``,
    ``start_positions``: the solver's 1-DOF joints); on SUCCESS ``fraction`` and the timed path
    (``joint_names``; ``positions``, ``velocities``, ``accelerations`` (m, n) and ``times`` (m,)
    [s from the start]; the first point is the start)."""

    code: int
    message: str
    fraction: float = 0.0
    joint_names: tuple[str, ...] = ()
    positions: np.ndarray | None = None
    velocities: np.ndarray | None = None
    accelerations: np.ndarray | None = None
    times: np.ndarray | None = None
    start_positions: tuple[float, ...] = ()

    @property
    def success(self) -> bool:
        return self.code == SUCCESS


def answer_path_query(policy, query: PathQuery, now: float, transform=None) -> PathAnswer:
    """The answer to ``query`` from ``policy``'s model and solver at ``now`` (``time.monotonic()``
    [s]); ``transform``: the node's tf2 lookup (None: frames outside the model are refused). See
    the module's docstring for the rules. Never changes the policy."""
    try:
        return _answer(policy, query, now, transform)
    except RefusedRequestError as refused:
        return PathAnswer(refused.code, str(refused))


def _answer(policy, query: PathQuery, now: float, transform) -> PathAnswer:
    model_state = policy.model_state
    model = require_solver(model_state)
    if query.has_constraints:
        raise RefusedRequestError(
            INVALID_GOAL_CONSTRAINTS,
            "path_constraints are not supported by ik_node's compute_cartesian_path: send the request "
            "without them",
        )
    if model.layout.multi_dof:
        raise RefusedRequestError(
            FAILURE,
            "compute_cartesian_path times paths of 1-DOF joints; this model has the floating or planar "
            f"joint(s) {[joint.name for joint in model.layout.multi_dof]}",
        )
    if not (math.isfinite(query.max_step) and query.max_step > 0.0):
        raise RefusedRequestError(FAILURE, f"max_step must be > 0 [m] (MoveIt's rule), got {query.max_step}")
    scales = [_scale(name, value) for name, value in _scalings(query)]
    if not query.waypoints:
        raise RefusedRequestError(FAILURE, "waypoints is empty: give the poses after the start")
    tip = _tip(policy.tips, query.link)
    seed, others = request_seed(policy, query.joint_names, query.joint_positions, now)
    waypoints = np.array(
        [
            pose_in_base(policy, pose, seed, others, transform, f"waypoint {index}")
            for index, pose in enumerate(query.waypoints)
        ]
    )
    notes = collision_notes(model_state, query.avoid_collisions)
    if query.jump_threshold > 0.0:
        notes.append(
            "jump_threshold not needed: the path never jumps (each step is bounded by what it needs)"
        )
    limits = path_limits(model, model_state.settings, *scales)
    try:
        path = model.solver.cartesian_path(
            waypoints if len(policy.tips) == 1 else {tip: waypoints},
            seed=seed,
            max_step=query.max_step,
            **limits,
        )
    except StartStateError as error:
        raise RefusedRequestError(INVALID_ROBOT_STATE, f"start_state refused: {error}") from None
    except TargetError as error:
        raise RefusedRequestError(INVALID_GOAL_CONSTRAINTS, f"waypoints refused: {error}") from None
    except IKNodeError as error:  # (the timing: no toppra, a limit that is not finite)
        raise RefusedRequestError(FAILURE, f"the path cannot be timed: {error}") from None
    if path.reason != "complete":
        notes.insert(
            0, f"the path ends at {100.0 * path.fraction:.1f} % ({path.reason}: {ENDED[path.reason]})"
        )
    layout = model.layout
    return PathAnswer(
        SUCCESS,
        "; ".join(notes),
        path.fraction,
        tuple(layout.names),
        path.q[:, layout.configuration],
        path.velocity[:, layout.tangent],
        path.acceleration[:, layout.tangent],
        path.time,
        tuple(float(value) for value in seed[layout.configuration]),
    )


def _scalings(query: PathQuery):
    return (
        ("max_velocity_scaling_factor", query.velocity_scaling),
        ("max_acceleration_scaling_factor", query.acceleration_scaling),
    )


def _scale(name: str, value: float) -> float:
    """A scaling factor: 0 (not given) is 1, else in (0, 1]."""
    if value == 0.0:
        return 1.0
    if not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise RefusedRequestError(FAILURE, f"{name} must be in (0, 1] (0: 1), got {value}")
    return value


def _tip(tips: list[str], link: str) -> str:
    """The tip ``link_name`` names (empty: the node's single tip)."""
    if link == "":
        if len(tips) != 1:
            raise RefusedRequestError(
                INVALID_LINK_NAME, f"link_name is empty and the node has several tips: name one of {tips}"
            )
        return tips[0]
    if link not in tips:
        raise RefusedRequestError(
            INVALID_LINK_NAME, f"link '{link}' is not a tip of the node (its tip_links: {tips})"
        )
    return link
