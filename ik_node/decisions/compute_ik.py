"""MoveIt's ``compute_ik`` (``moveit_msgs/srv/GetPositionIK``) free of rclpy and of messages: a
request's plain values (:class:`IKQuery`, which the node fills from the message) and the node's
:class:`~ik_node.decisions.policy.IKPolicy` give the answer (:class:`IKAnswer`: MoveIt's error code, a
message naming the problem, the solution's joint values).

What a request means here (docs/node.md, "compute_ik"):

* the seed: ``robot_state.joint_state`` by name; the chain's joints it leaves out at the node's
  current state (fresh ``/joint_states``, else the last command, else the rest posture). A name
  that is no joint of the robot, a NaN or inf, a name twice, names and positions of different
  lengths, or a floating/planar joint in it (a JointState carries 1-DOF joints): INVALID_ROBOT_STATE.
  Joints of the robot outside the chain are accepted: they place the links a pose's frame may
  name (as ``/joint_states`` does for goals); ``multi_dof_joint_state`` is not read.
* the poses: ``pose_stamped`` for ``ik_link_name`` (empty: the node's single tip), or
  ``pose_stamped_vector`` for ``ik_link_names`` (several tips; a tip of the node left out holds
  its pose at the seed). A link that is no tip of the node, a tip twice, or the lists' lengths
  differing: INVALID_LINK_NAME. ``header.frame_id`` is resolved as a goal's
  (:meth:`~ik_node.decisions.policy.IKPolicy.frame_pose`: the base, a link of the model at the seed,
  else tf2); none: FRAME_TRANSFORM_FAILURE. A NaN/inf position or a zero quaternion, or no pose at
  all (the message's default pose: empty frame, the origin, identity or zero quaternion), or any
  ``constraints`` (not supported): INVALID_GOAL_CONSTRAINTS.
* ``timeout`` [s]: 0 is the node's ``timeout`` parameter; more than :data:`MAX_TIMEOUT` is cut to
  it; negative: FAILURE. The node's executor waits for the solve (other callbacks too).
* the answer: the node's own for a goal (:func:`~ik_node.decisions.branch_choice.solve_goal`): with
  the ``branch`` parameter set to a label, the solution on that branch nearest the seed (the
  closed form's complete set; none on it: NO_IK_SOLUTION saying so); with ``nearest`` the
  solver's (from the complete set where the chain has a closed form and ``solve_type`` is
  ``distance``: the nearest the seed). A label on a chain without a closed form: FAILURE naming
  the parameter.
* ``avoid_collisions``: the answer comes from the node's one solver, which checks collisions when
  the node does (``self_collision``, or obstacles): every answer is then collision-free,
  ``avoid_collisions`` true or false (no collision-free answer: GOAL_IN_COLLISION). Where the node
  checks no collision, ``avoid_collisions`` true is answered unchecked and the message says so.
* the outcome: SUCCESS with every joint of the solver (1-DOF joints by name in ``joint_names``/
  ``positions``, a floating or planar joint as its ``T_parent_child`` in ``multi_dof``);
  NO_IK_SOLUTION (unreachable, or the iterations ran out), TIMED_OUT (the budget ran out while the
  search still progressed), GOAL_IN_COLLISION; FAILURE while there is no robot description or
  solver yet. A failed answer carries no joints (as MoveIt's).

Nothing here moves the robot: the policy's goals, last command and state are left as they were.
``group_name`` is not checked (the node serves its one chain), and ``attached_collision_objects``
and ``is_diff`` are not read (the request's joints are applied on the current state either way).

Units: m, rad, s; quaternions in ROS order ``(x, y, z, w)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import IKNodeError, TargetError
from ..lie import inverse
from .branch_choice import OFF_BRANCH, branch_refusal, solve_goal
from .conversions import pose_from_fields
from .motion import node_result
from .parameters import spec_of

__all__ = [
    "FAILURE",
    "FRAME_TRANSFORM_FAILURE",
    "GOAL_IN_COLLISION",
    "INVALID_GOAL_CONSTRAINTS",
    "INVALID_LINK_NAME",
    "INVALID_ROBOT_STATE",
    "IKAnswer",
    "IKQuery",
    "MAX_TIMEOUT",
    "NO_IK_SOLUTION",
    "PoseValues",
    "SUCCESS",
    "TIMED_OUT",
    "RefusedRequestError",
    "answer_query",
    "collision_notes",
    "pose_in_base",
    "request_seed",
    "require_solver",
]

# MoveIt's error codes (moveit_msgs/msg/MoveItErrorCodes; test_node_compute_ik.py checks them
# against the message's constants where moveit_msgs is importable).
SUCCESS = 1
FAILURE = 99999
TIMED_OUT = -6
GOAL_IN_COLLISION = -12
INVALID_GOAL_CONSTRAINTS = -16
INVALID_ROBOT_STATE = -17
INVALID_LINK_NAME = -18
FRAME_TRANSFORM_FAILURE = -21
NO_IK_SOLUTION = -31

#: The longest solve a request gets [s]: the ``timeout`` parameter's upper bound (the node's
#: executor waits for it).
MAX_TIMEOUT = spec_of("timeout").high
#: The solver's reason -> MoveIt's code for a failed solve.
FAILED_SOLVE = {"timeout": TIMED_OUT, "collision": GOAL_IN_COLLISION}
#: What the message's default pose holds (no pose given): the origin, identity or zero quaternion.
DEFAULT_ORIENTATIONS = ((0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0, 0.0))


@dataclass(frozen=True)
class PoseValues:
    """A ``geometry_msgs/PoseStamped`` as plain values: ``position`` [m], ``orientation``
    ``(x, y, z, w)``, ``frame`` (``header.frame_id``) and ``stamp`` (``header.stamp``, opaque
    here: for tf2)."""

    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float]
    frame: str = ""
    stamp: object = None

    @property
    def is_default(self) -> bool:
        """Whether this is the message's default pose (empty frame, the origin, identity or
        zero quaternion): no pose was given."""
        return (
            self.frame == ""
            and tuple(self.position) == (0.0, 0.0, 0.0)
            and tuple(self.orientation) in DEFAULT_ORIENTATIONS
        )


@dataclass(frozen=True)
class IKQuery:
    """A ``PositionIKRequest`` as plain values. ``links``/``poses``: ``ik_link_names`` and
    ``pose_stamped_vector`` when that is not empty, else ``(ik_link_name,)`` and
    ``(pose_stamped,)``; ``joint_names``/``joint_positions``: ``robot_state.joint_state``;
    ``timeout`` [s]; ``has_constraints``: any constraint in ``constraints``."""

    links: tuple[str, ...]
    poses: tuple[PoseValues, ...]
    joint_names: tuple[str, ...] = ()
    joint_positions: tuple[float, ...] = ()
    timeout: float = 0.0
    avoid_collisions: bool = False
    has_constraints: bool = False
    group_name: str = ""


@dataclass
class IKAnswer:
    """The answer: MoveIt's error ``code`` and ``message``; on SUCCESS the solver's 1-DOF joints
    (``joint_names``, ``positions``), its floating or planar joints (``multi_dof``:
    ``(joint, parent, child, T_parent_child)``) and the whole configuration ``q`` (the model's
    ``joint_names`` order)."""

    code: int
    message: str
    joint_names: tuple[str, ...] = ()
    positions: tuple[float, ...] = ()
    multi_dof: tuple = ()
    q: np.ndarray | None = None

    @property
    def success(self) -> bool:
        return self.code == SUCCESS


class RefusedRequestError(Exception):
    """A request refused with MoveIt's ``code`` and a message (this service's and
    :mod:`.compute_cartesian_path`'s)."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def answer_query(policy, query: IKQuery, now: float, transform=None) -> IKAnswer:
    """The answer to ``query`` from ``policy``'s model and solver at ``now`` (``time.monotonic()``
    [s]; for the freshness of ``/joint_states``); ``transform``: the node's tf2 lookup (None:
    frames outside the model are refused). See the module's docstring for the rules. Never
    changes the policy (no goal kept, no command)."""
    try:
        return _answer(policy, query, now, transform)
    except RefusedRequestError as refused:
        return IKAnswer(refused.code, str(refused))


def _answer(policy, query: IKQuery, now: float, transform) -> IKAnswer:
    model_state = policy.model_state
    model = require_solver(model_state)
    if query.has_constraints:
        raise RefusedRequestError(
            INVALID_GOAL_CONSTRAINTS,
            "constraints are not supported by ik_node's compute_ik: send the request without them",
        )
    seed, others = request_seed(policy, query.joint_names, query.joint_positions, now)
    targets = _targets(policy, query, seed, others, transform)
    timeout, notes = _timeout(policy, query.timeout)
    notes += collision_notes(model_state, query.avoid_collisions)
    branch = model_state.settings.branch
    refused = branch_refusal(model.solver, branch)
    if refused:
        raise RefusedRequestError(FAILURE, refused)
    try:
        result = node_result(solve_goal(model.solver, targets, seed, timeout, branch))
    except TargetError as error:
        raise RefusedRequestError(INVALID_GOAL_CONSTRAINTS, f"pose refused: {error}") from None
    except IKNodeError as error:  # e.g. a locked joint's value outside its limits
        raise RefusedRequestError(INVALID_ROBOT_STATE, f"robot_state refused: {error}") from None
    if not result.success:
        code = FAILED_SOLVE.get(result.reason, NO_IK_SOLUTION)
        why = {
            "timeout": f"the timeout ({timeout:g} s) ran out while the search still progressed",
            "collision": "every answer found collides (self-collision or an obstacle, collision_margin "
            f"{model_state.settings.collision_margin} m)",
            "unreachable": "a pose is out of reach, or the closest configuration found is a local minimum",
            OFF_BRANCH: f"solutions reach it, none on branch '{branch}' (the node's branch parameter) free "
            "of collisions where they are checked",
        }.get(result.reason, f"{result.reason} within the timeout ({timeout:g} s)")
        message = (
            f"no IK solution for {sorted(targets)}: {why}; closest: position error "
            f"{result.position_error:.3g} m, orientation error {result.orientation_error:.3g} rad"
        )
        return IKAnswer(code, "; ".join([message, *notes]))
    layout = model.layout
    q = np.array(result.q, dtype=float)
    multi_dof = ()
    if layout.multi_dof:
        poses = model.tree.link_poses(q)
        multi_dof = tuple(
            (
                joint.name,
                joint.parent,
                joint.child,
                inverse(model.tree.pose_of(poses, joint.parent)) @ model.tree.pose_of(poses, joint.child),
            )
            for joint in layout.multi_dof
        )
    return IKAnswer(
        SUCCESS,
        "; ".join(notes),
        tuple(layout.names),
        tuple(float(value) for value in q[layout.configuration]),
        multi_dof,
        q,
    )


def require_solver(model_state):
    """The model (:class:`~ik_node.decisions.planning.Model`) whose solver answers a request;
    refused (FAILURE) while there is no description or solver yet."""
    model = model_state.model
    if model is None:
        raise RefusedRequestError(
            FAILURE,
            model_state.description_error
            or "no robot description yet (parameter robot_description, robot_description_file or topic "
            "/robot_description)",
        )
    if not model_state.ready:
        raise RefusedRequestError(
            FAILURE, model_state.solver_error or "the IK solver is being built (a second or two): call again"
        )
    return model


def collision_notes(model_state, avoid_collisions: bool) -> list[str]:
    """What the answer's message says of collisions: the node's solver checks them or not,
    whatever ``avoid_collisions`` asks."""
    checked = model_state.checks_collisions
    if avoid_collisions and not checked:
        return [
            "collisions not checked: avoid_collisions is true but the node checks none (set self_collision, "
            "or give obstacles)"
        ]
    if checked and not avoid_collisions:
        return ["checked for collisions all the same (the node's solver checks them)"]
    return []


def request_seed(policy, joint_names, joint_positions, now: float) -> tuple[np.ndarray, dict[str, float]]:
    """The seed (the node's current state with the request's chain joints: ``joint_names`` and
    ``joint_positions`` of its ``robot_state.joint_state``) and the request's other joints of
    the robot, by name; refuses a bad ``robot_state`` (INVALID_ROBOT_STATE)."""
    model = policy.model_state.model
    robot = model.robot
    names, positions = list(joint_names), list(joint_positions)
    if len(names) != len(positions):
        raise RefusedRequestError(
            INVALID_ROBOT_STATE,
            f"robot_state.joint_state has {len(names)} names but {len(positions)} positions",
        )
    seen = set()
    values = {}
    for name, value in zip(names, positions):
        if name in seen:
            raise RefusedRequestError(
                INVALID_ROBOT_STATE, f"robot_state.joint_state names joint '{name}' twice"
            )
        seen.add(name)
        joint = robot.joints.get(name)
        if joint is None:
            shown = ", ".join(sorted(model.layout.names))
            raise RefusedRequestError(
                INVALID_ROBOT_STATE,
                f"robot_state.joint_state names joint '{name}', which robot '{robot.name}' does not have "
                f"(the solver's joints: {shown})",
            )
        if joint.is_multi_dof:
            raise RefusedRequestError(
                INVALID_ROBOT_STATE,
                f"robot_state.joint_state names the {joint.type} joint '{name}': a JointState carries 1-DOF "
                "joints only",
            )
        if not math.isfinite(value):
            raise RefusedRequestError(
                INVALID_ROBOT_STATE, f"robot_state.joint_state: joint '{name}' is {value}"
            )
        values[name] = float(value)
    seed, _ = policy.current(now, warn=False)
    seed = np.array(seed, dtype=float)
    position = {name: index for name, index in zip(model.layout.names, model.layout.configuration)}
    others = {}
    for name, value in values.items():
        if name in position:
            seed[position[name]] = value
        elif name in model.robot.joint_names:  # (a fixed or mimic joint is no coordinate: ignored)
            others[name] = value
    return seed, others


def _targets(policy, query: IKQuery, seed: np.ndarray, others: dict, transform) -> dict[str, np.ndarray]:
    """``{tip: T_base_goal}`` of the request's poses (a relative tip's, ``tip_relative_to``, made
    its pose in its reference's frame: the reference's pose in the request, else at ``seed``);
    refuses unknown links, bad poses and frames without a transform."""
    tips = policy.tips
    links, poses = list(query.links), list(query.poses)
    if not poses or (len(poses) == 1 and poses[0].is_default):
        raise RefusedRequestError(
            INVALID_GOAL_CONSTRAINTS,
            "the request holds no pose: set ik_request.pose_stamped (a frame in header.frame_id; for the "
            "base origin name the base frame), or pose_stamped_vector with ik_link_names",
        )
    if len(links) != len(poses):
        raise RefusedRequestError(
            INVALID_LINK_NAME,
            f"ik_link_names has {len(links)} names for {len(poses)} poses in pose_stamped_vector "
            f"(the node's tips: {tips})",
        )
    targets = {}
    for link, pose in zip(links, poses):
        tip = link
        if link == "":
            if len(tips) != 1:
                raise RefusedRequestError(
                    INVALID_LINK_NAME,
                    f"ik_link_name is empty and the node has several tips: name one of {tips}",
                )
            tip = tips[0]
        if tip not in tips:
            raise RefusedRequestError(
                INVALID_LINK_NAME, f"link '{link}' is not a tip of the node (its tip_links: {tips})"
            )
        if tip in targets:
            raise RefusedRequestError(INVALID_LINK_NAME, f"link '{tip}' has two poses")
        targets[tip] = pose_in_base(policy, pose, seed, others, transform, f"pose for '{tip}'")
    relative_to = policy.model_state.settings.tip_relative_to
    for tip in [tip for tip in targets if relative_to.get(tip)]:  # (poses of the links, as MoveIt's)
        reference = relative_to[tip]
        held = targets[reference] if reference in targets else policy.tip_poses(seed)[reference]
        targets[tip] = inverse(held) @ targets[tip]
    return targets


def pose_in_base(
    policy, pose: PoseValues, seed: np.ndarray, others: dict, transform, what: str
) -> np.ndarray:
    """``T_base_pose`` (4x4) of a request's ``pose``, its frame resolved with the model at ``seed``
    (with the request's ``others`` joints) or through ``transform``; refused with
    INVALID_GOAL_CONSTRAINTS (NaN, zero quaternion) or FRAME_TRANSFORM_FAILURE, the message naming
    ``what``."""
    try:
        goal = pose_from_fields(pose.position, pose.orientation)
    except TargetError as error:
        raise RefusedRequestError(INVALID_GOAL_CONSTRAINTS, f"{what} refused: {error}") from None
    try:
        frame = policy.frame_pose(pose.frame, pose.stamp, seed, transform, "compute_ik pose", others)
    except IKNodeError as error:
        raise RefusedRequestError(FRAME_TRANSFORM_FAILURE, f"{what} refused: {error}") from None
    return frame @ goal


def _timeout(policy, requested: float) -> tuple[float, list[str]]:
    """The solve's time budget [s] and notes for the message."""
    if not math.isfinite(requested) or requested < 0.0:
        raise RefusedRequestError(
            FAILURE, f"timeout must be 0 (the node's default) or positive, got {requested} s"
        )
    if requested == 0.0:
        default = policy.model_state.settings.timeout
        return default, [f"timeout 0: the node's timeout parameter ({default:g} s)"]
    if requested > MAX_TIMEOUT:
        return MAX_TIMEOUT, [f"timeout {requested:g} s cut to {MAX_TIMEOUT:g} s"]
    return requested, []
