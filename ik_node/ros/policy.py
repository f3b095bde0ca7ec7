"""What the node decides, free of rclpy: the model a description and the parameters make, which
goal is solved from which seed, readiness, pause and reset, and each tracking step.

:class:`IKPolicy` holds the state (goals, the latest ``/joint_states``, the last command) and
answers each event with a :class:`Reply`: a :class:`Command` to publish (after the limit guard,
:meth:`IKPolicy.commit`), a :class:`Status` for ``/diagnostics``, a warning to log. The node
(:mod:`ik_node.ros.node`) turns messages into these calls and replies into messages; tests drive the
policy directly, without ROS.

Readiness: a description is loaded in milliseconds (:func:`plan_model`: tree, limits, rest
posture), so the node shows the robot at once; the :class:`~ik_node.IKSolver` (a second or two
to build; after an install it answers as plain Python while its kernels compile) is attached later
(:meth:`IKPolicy.attach_solver`). Goals arriving meanwhile are kept, the latest per tip, and
answered when the solver is attached.

Units: m, rad, s; joint vectors in the model's ``joint_names`` order (configuration
coordinates: a floating base's ``root_joint/x`` ... ``root_joint/qw`` included), velocities in its
tangent order; poses are 4x4 ``T_base_frame`` matrices.

Multi-DOF joints (a floating or planar base, ``root_joint`` or the URDF's own): no per-joint
parameters (no limits, weight 1, not pulled toward a rest posture, rest at the origin); their
coordinates are never read from ``/joint_states`` (the seed takes them from the last command,
else the rest posture); track mode steps on the configuration manifold (tangent displacements,
``q (+) dq``), each component of the base's twist within ``base_max_linear_velocity`` or
``base_max_angular_velocity``, scaled with the joints (one factor: the motion keeps its direction).

Collisions (issue 18): the solver checks self-collision when ``self_collision`` (the link pairs
of the SRDF, :attr:`IKPolicy.semantic_description`: the ``robot_description_semantic``
parameter, else the topic's latest) and the obstacles always: the parameters' (``obstacle_names``)
and the topic's (:attr:`IKPolicy.topic_obstacles`, replaced between solves without a rebuild).
A goal without a collision-free answer (reason ``collision``) publishes nothing, even with
``publish_best_effort``: the last command stays.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..collision import Obstacle
from ..description import resolve_path
from ..errors import IKNodeError
from ..solver import IKSolver, SolverOptions, TipTask, check_movable
from .control import (
    JointLayout,
    command_violation,
    current_state,
    merge_joint_limits,
    singularity_scale_toward,
    velocity_limited_step,
)
from .parameters import NodeSettings, check_semantic_description, check_values, spec_of

__all__ = [
    "Command",
    "GoalRequest",
    "IKPolicy",
    "Model",
    "Reply",
    "Status",
    "build_solver",
    "description_path",
    "node_result",
    "plan_model",
]

#: Joint motion [rad, m] below which a tracked goal counts as reached.
REACHED = 1e-9
#: The solver's reason for a goal whose answers all collide (no command is published).
COLLISION = "collision"
#: The solver's reason for an answer that reaches the goal but moves a joint farther than
#: ``max_joint_move`` from the seed (the nearest it found).
JOINT_MOVE = "joint_move"

#: ``transform(frame, base, stamp) -> T_base_frame`` for frames outside the model (tf2), raising
#: :class:`IKNodeError` naming the frame and the missing transform; None where tf2 is missing.
FrameLookup = Callable[[str, str, object], np.ndarray]


def node_result(result):
    """The node's reading of a solve's :class:`~ik_node.solver.IKResult`: its ``max_joint_move``
    stays a preference (the search looks near the current state first; a goal that truly needs a
    larger move is still reached, as before the solver's bound became a guarantee), so an answer
    the solver refuses only for its move (``joint_move``: it reaches the goal) counts as a
    success."""
    return replace(result, success=True, reason="success") if result.reason == JOINT_MOVE else result


@dataclass(frozen=True)
class Model:
    """What one robot description and one set of parameter values make; replaced whole.

    ``lower``/``upper``: the active position limits per configuration coordinate (URDF merged
    with the ``joint_limits`` parameters; ±inf for a multi-DOF joint's), ``max_velocity`` per
    tangent coordinate (a multi-DOF joint's from ``base_max_linear_velocity`` and
    ``base_max_angular_velocity``); ``rest_posture``: within them;
    ``layout``: the 1-DOF joints the messages carry and the multi-DOF ones whose pose is
    published; ``command_order``: indices of ``command_joints`` in ``joint_names``; ``solver``:
    None until attached."""

    robot: object
    tree: object
    options: SolverOptions
    lower: np.ndarray
    upper: np.ndarray
    max_velocity: np.ndarray
    rest_posture: np.ndarray
    command_order: np.ndarray
    layout: JointLayout
    warnings: tuple[str, ...] = ()
    solver: IKSolver | None = None

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.tree.joint_names

    @property
    def tangent_size(self) -> int:
        return len(self.tree.tangent_names)

    @property
    def manifold(self):
        """The tree when it has multi-DOF joints (steps through its ``difference`` and
        ``integrate``), else None (plain vectors)."""
        return self.tree if self.layout.multi_dof else None

    @property
    def base_link(self) -> str:
        return self.tree.base_link


def plan_model(
    robot, settings: NodeSettings, changed: frozenset | None = None, semantic: str = "", obstacles=()
) -> Model:
    """The model of ``robot`` for ``settings`` without its solver (milliseconds, no compile).
    ``semantic``: the SRDF XML the solver's self-collision pairs come from when
    ``self_collision`` (empty: computed); ``obstacles``: more obstacles (the topic's) after the
    parameters' ones.

    At start-up (``changed`` None) a joint limit that is unusable or wider than the URDF falls
    back to the URDF with a warning (in ``Model.warnings``); at run time, when a parameter in
    ``changed`` makes it so, this raises :class:`IKNodeError` (the change is refused). Raises as
    well for unknown links, bad solver options and ``command_joints`` that do not name the
    chain's 1-DOF joints. Per-joint parameters apply to the 1-DOF joints only (see the module's
    docstring for multi-DOF ones)."""
    tips = list(settings.tip_links)
    tree = robot.tree(settings.base_link or robot.root, tips)
    check_movable(tree)
    layout = JointLayout.of(tree)
    single, at = layout.names, layout.configuration
    single_lower, single_upper, single_velocity, warnings = merge_joint_limits(
        single, tree.lower[at], tree.upper[at], tree.max_velocity[at], settings.values, changed
    )
    lower, upper = tree.lower.copy(), tree.upper.copy()
    lower[at], upper[at] = single_lower, single_upper
    velocity = np.array(  # a floating or planar joint's: per twist component, linear or angular
        [
            settings.base_max_linear_velocity if name.rsplit("/", 1)[-1].startswith("v")
            else settings.base_max_angular_velocity
            for name in tree.tangent_names
        ]
    )  # fmt: skip
    velocity[layout.tangent] = single_velocity
    options = SolverOptions(
        tasks={tip: _tip_task(settings, tip) for tip in tips},
        method=settings.method,
        solve_type=settings.solve_type,
        joint_weights={joint: settings.joint_weights.get(joint, 1.0) for joint in single},
        lower={joint: bound for joint, bound in zip(single, single_lower) if math.isfinite(bound)},
        upper={joint: bound for joint, bound in zip(single, single_upper) if math.isfinite(bound)},
        rest_posture={
            joint: settings.rest_posture[joint] for joint in single if joint in settings.rest_posture
        },
        # a floating base has no rest to be pulled toward: the gain is the 1-DOF joints' only
        posture_gain={joint: settings.posture_gain for joint in single}
        if layout.multi_dof
        else settings.posture_gain,
        min_damping=settings.min_damping,
        max_iterations=settings.max_iterations,
        random_seed=settings.random_seed,
        max_joint_move=settings.max_joint_move or None,
        self_collision=settings.self_collision,
        collision_margin=settings.collision_margin,
        srdf=(semantic or None) if settings.self_collision else None,
        obstacles=(*settings.obstacles, *obstacles),
    )
    bounded = np.isfinite(lower) & np.isfinite(upper)
    middle = 0.5 * (np.where(bounded, lower, 0.0) + np.where(bounded, upper, 0.0))
    rest = tree.neutral.copy()  # (multi-DOF joints: at the origin, unit quaternions)
    rest[at] = [settings.rest_posture.get(joint, middle[i]) for joint, i in zip(single, at)]
    command_joints = list(settings.command_joints or single)
    position = dict(zip(single, at))  # joint -> its index in joint_names
    if any(name not in position for name in command_joints) or len(set(command_joints)) != len(
        command_joints
    ):
        raise IKNodeError(
            f"parameter command_joints must name each joint of the chain at most once, from "
            f"{list(single)}; got {command_joints}"
        )
    return Model(
        robot=robot,
        tree=tree,
        options=options,
        lower=lower,
        upper=upper,
        max_velocity=velocity,
        rest_posture=np.clip(rest, lower, upper),  # as the solver clips it
        command_order=np.array([position[joint] for joint in command_joints], dtype=int),
        layout=layout,
        warnings=tuple(warnings),
    )


def _tip_task(settings: NodeSettings, tip: str) -> TipTask:
    """The task of ``tip`` from its ``tip_tasks``, ``tip_task_axes`` and ``tip_offsets``
    parameters (each checked by its spec: a refusal names the parameter)."""
    values = {
        f"tip_tasks.{tip}": settings.tip_tasks.get(tip, "pose"),
        f"tip_task_axes.{tip}": settings.tip_task_axes.get(tip, "tip"),
        f"tip_offsets.{tip}": settings.tip_offsets.get(tip, (0.0, 0.0, 0.0)),
    }
    for name, value in values.items():
        spec_of(name).check(name, value)
    kind, axes, offset = values.values()
    return TipTask(
        kind,
        position_tolerance=settings.position_tolerance,
        orientation_tolerance=settings.orientation_tolerance,
        axes=axes,
        offset=offset,
    )


def description_path(settings: NodeSettings) -> Path:
    """The file ``robot_description_file`` names (a path, ``file://`` or ``package://``, found
    through ``package_paths`` or the ament index); raises :class:`IKNodeError` saying why not."""
    location = settings.robot_description_file
    try:
        path = resolve_path(location, list(settings.package_paths) or None)
    except FileNotFoundError as error:
        raise IKNodeError(f"robot_description_file: {error}") from None
    if not path.is_file():
        raise IKNodeError(f"robot_description_file '{location}' is not a file ({path})")
    return path


def build_solver(model: Model) -> IKSolver:
    """The solver of a planned model; the first in a process compiles or loads the kernels."""
    return IKSolver(model.robot, model.base_link, list(model.tree.tip_links), options=model.options)


def _built(model: Model) -> IKSolver:
    """:func:`build_solver` for a run-time change: any failure (a missing optional package, say)
    as an :class:`IKNodeError` that refuses the change, the solver in use staying."""
    try:
        return build_solver(model)
    except IKNodeError:
        raise
    except Exception as error:
        raise IKNodeError(f"the IK solver could not be built: {type(error).__name__}: {error}") from None


@dataclass
class GoalRequest:
    """A goal as it arrived: ``pose`` (4x4) in ``frame`` ('' = the base), ``stamp`` (when the
    pose was valid, for tf2; opaque here) and ``header`` (what the status echoes)."""

    tip: str
    pose: np.ndarray | None
    frame: str = ""
    stamp: object = None
    header: object = None


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
    vector), and the state they leave from (``previous``, for a trajectory point's duration)."""

    q: np.ndarray
    velocity: np.ndarray | None
    previous: np.ndarray


@dataclass
class Reply:
    """What one event asks the node to do: publish ``command`` (through the guard), publish
    ``status``, log ``warning``, draw ``solution`` (``(q, success)``)."""

    status: Status | None = None
    command: Command | None = None
    warning: str | None = None
    solution: tuple | None = None


class IKPolicy:
    """The node's decisions for the tips ``tips`` under ``settings`` (replace
    :attr:`settings` whole when parameters change). Times are ``time.monotonic()`` seconds."""

    def __init__(self, tips, settings: NodeSettings):
        self.tips = list(tips)
        self.settings = settings
        self.model: Model | None = None
        self.description_error: str | None = None  # why the last description was refused
        self.solver_error: str | None = None  # why the model's solver could not be built
        self.goals: dict[str, np.ndarray] = {}  # tip -> T_base_goal
        self.pending: dict[str, GoalRequest] = {}  # tip -> latest goal while the solver is prepared
        self.joint_state: dict[str, float] = {}
        self.joint_state_time = -math.inf
        self.stale_warned = False
        self.last_command: np.ndarray | None = None
        self.last_velocity: np.ndarray | None = None
        self.joint_goal: np.ndarray | None = None  # track mode: where the steps lead
        self.state: np.ndarray | None = None  # what ~/joint_states repeats
        self.enabled = True
        self.semantic_topic = ""  # the latest SRDF from the topic
        self.topic_obstacles: dict[str, Obstacle] = {}  # by name ('ns/id' of the marker)

    # ------------------------------------------------------------------ model and readiness

    @property
    def ready(self) -> bool:
        """Whether goals are solved now (a model with its solver)."""
        return self.model is not None and self.model.solver is not None

    def install(self, model: Model) -> Command | None:
        """A new description's model: goals and commands of the old one are forgotten (goals
        waiting for readiness are kept). Returns the rest-posture command to publish when
        ``publish_rest_posture_at_start``."""
        self.model = model
        self.description_error = self.solver_error = None
        self.goals = {}
        self.last_command = self.last_velocity = self.joint_goal = None
        self.state = None
        if self.settings.publish_rest_posture_at_start:
            return Command(model.rest_posture.copy(), None, model.rest_posture.copy())
        return None

    def candidate(self, values: dict, changed: frozenset) -> tuple[NodeSettings, Model | None]:
        """The settings and the model (with its solver when the kernels are ready: milliseconds)
        that new parameter ``values`` make, the parameters ``changed`` by name; raises
        :class:`IKNodeError` naming the parameter when they are refused."""
        check_values(values)
        settings = NodeSettings.from_values(values)
        model = self.model
        if model is not None:
            model = self.plan(model.robot, settings, changed)
            if self.ready:
                model = replace(model, solver=_built(model))
        return settings, model

    def plan(self, robot, settings: NodeSettings | None = None, changed: frozenset | None = None) -> Model:
        """:func:`plan_model` with the SRDF and the topic's obstacles of this policy."""
        settings = self.settings if settings is None else settings
        semantic = settings.robot_description_semantic or self.semantic_topic
        return plan_model(robot, settings, changed, semantic, tuple(self.topic_obstacles.values()))

    @property
    def semantic_description(self) -> str:
        """The SRDF in use: the ``robot_description_semantic`` parameter, else the topic's."""
        return self.settings.robot_description_semantic or self.semantic_topic

    def receive_semantic(self, text: str, source: str) -> Model | None:
        """An SRDF from the topic: checked (raises :class:`IKNodeError` naming ``source``), kept,
        and the model it makes (its solver built when the kernels are ready; raises, the SRDF
        not kept, when that fails) to :meth:`apply` when it changes the solver (self_collision
        on, no SRDF parameter), else None."""
        check_semantic_description(text, source)
        previous, self.semantic_topic = self.semantic_topic, text
        if self.model is None or not self.settings.self_collision or self.settings.robot_description_semantic:
            return None
        try:
            model = self.plan(self.model.robot)
            if self.ready:
                model = replace(model, solver=_built(model))
        except IKNodeError as error:
            self.semantic_topic = previous
            raise IKNodeError(f"{source} refused: {error}") from None
        return model

    @property
    def obstacles(self) -> tuple[Obstacle, ...]:
        """Every obstacle the solver avoids: the parameters', then the topic's."""
        return (*self.settings.obstacles, *self.topic_obstacles.values())

    @property
    def checks_collisions(self) -> bool:
        """Whether answers are checked for collisions (self_collision, or any obstacle)."""
        return bool(self.settings.self_collision or self.obstacles)

    def set_topic_obstacles(self, obstacles: dict) -> None:
        """Replace the topic's obstacles (``{name: Obstacle}``); the solver avoids them from
        the next solve (no rebuild)."""
        self.topic_obstacles = dict(obstacles)
        self._sync_obstacles()

    def _sync_obstacles(self) -> None:
        """The solver's obstacles are :attr:`obstacles` (a solver built before the topic's
        latest change, or for other parameters, gets them here)."""
        model = self.model
        if model is None or model.solver is None:
            return
        obstacles = self.obstacles
        if tuple(model.solver.obstacles) != obstacles:
            model.solver.set_obstacles(obstacles)
        self.model = replace(model, options=replace(model.options, obstacles=obstacles))

    def collision_shapes(self) -> list:
        """The solver's collision shapes at the state shown (the rest posture before any
        command), robot and obstacles, in the base frame; empty without a solver."""
        if not self.ready:
            return []
        model = self.model
        q = self.state if self.state is not None else model.rest_posture
        return model.solver.collision_shapes(q)

    def apply(self, settings: NodeSettings, model: Model | None) -> bool:
        """Install a validated :meth:`candidate` (the model serves from the next solve; a mode
        change drops the tracking goal). True when the mode or a rate changed (timers)."""
        old, self.settings = self.settings, settings
        if model is not None:
            self.model = model
            self._sync_obstacles()
            if settings.mode != old.mode:
                self.joint_goal = None
        return (settings.mode, settings.publish_rate, settings.joint_state_rate) != (
            old.mode,
            old.publish_rate,
            old.joint_state_rate,
        )

    def attach_solver(self, solver: IKSolver) -> list[GoalRequest]:
        """The solver is ready: returns the goals kept meanwhile (answer them in this order)."""
        self.model = replace(self.model, solver=solver)
        self._sync_obstacles()
        waiting, self.pending = list(self.pending.values()), {}
        return waiting

    def preparation_failed(self, error: Exception) -> list[Reply]:
        """The solver could not be built: the goals kept meanwhile are answered with the reason,
        and later ones refused with it until a new description is installed."""
        self.solver_error = f"the IK solver could not be built: {error}"
        waiting, self.pending = list(self.pending.values()), {}
        return [self.refusal(request, self.solver_error, "no_solver") for request in waiting]

    # ------------------------------------------------------------------ inputs

    def on_joint_state(self, names, positions, now: float) -> str | None:
        """Keep the latest position of every named joint (NaN entries skipped); a warning when
        names and positions differ in length (the message is ignored)."""
        if len(positions) != len(names):
            return f"/joint_states message has {len(names)} names but {len(positions)} positions; ignored"
        for name, value in zip(names, positions):
            if math.isfinite(value):
                self.joint_state[name] = float(value)
        self.joint_state_time = now
        self.stale_warned = False
        return None

    def current(self, now: float, warn: bool = True) -> tuple[np.ndarray, str | None]:
        """The seed and a warning (once per staleness; none without ``warn``): fresh
        ``/joint_states`` (by name, 1-DOF joints only), else the last command, else the rest
        posture (a floating base's coordinates always from the last command or the rest
        posture)."""
        model = self.model
        fallback = model.rest_posture if self.last_command is None else self.last_command
        timeout = self.settings.joint_state_timeout
        readable = np.zeros(len(model.joint_names), dtype=bool)
        readable[model.layout.configuration] = True
        q, stale = current_state(
            model.joint_names, self.joint_state, now - self.joint_state_time, timeout, fallback, readable
        )
        if stale and warn and not self.stale_warned:
            self.stale_warned = True
            return (
                q,
                f"/joint_states older than joint_state_timeout ({timeout} s); seeding from the last command",
            )
        return q, None

    def seed(self, now: float) -> tuple[np.ndarray, str | None]:
        """Track mode steps from its own last command (consecutive commands then respect the
        velocity limits); solve mode seeds from the current state."""
        if self.settings.mode == "track" and self.last_command is not None:
            return self.last_command.copy(), None
        return self.current(now)

    def goal_in_base(
        self, request: GoalRequest, seed: np.ndarray, transform: FrameLookup | None
    ) -> np.ndarray:
        """``T_base_goal``: a ``frame`` naming a link goes through the model's FK at the current
        state (the seed for the chain's joints, ``/joint_states`` for the others); another frame
        through ``transform`` (tf2), refused with the reason when there is none."""
        return self.frame_pose(request.frame, request.stamp, seed, transform, "goal") @ request.pose

    def frame_pose(
        self,
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
        model = self.model
        frame = frame.lstrip("/")
        base = model.base_link
        if frame in ("", base):
            return np.eye(4)
        robot = model.robot
        if frame in robot.links:
            values = {
                name: value
                for name, value in self.joint_state.items()
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

    def refusal(self, request: GoalRequest | None, message: str, reason: str = "invalid_goal") -> Reply:
        """A refused goal or command: its status and the warning to log."""
        return Reply(Status(False, reason, message, goal=request), warning=message)

    def receive_goal(self, request: GoalRequest, now: float, transform: FrameLookup | None = None) -> Reply:
        """A goal for ``request.tip``: refused (paused, no description, bad frame), kept until the
        solver is ready, or solved with the other tips' latest goals."""
        if not self.enabled:
            why = "the node is paused (~/enable false)"
            return Reply(Status(False, "paused", why, goal=request), warning=f"goal ignored: {why}")
        if self.model is None:
            why = self.description_error or (
                "no robot description yet (parameter robot_description, robot_description_file or "
                "topic /robot_description)"
            )
            return Reply(
                Status(False, "no_robot_description", why, goal=request), warning=f"goal ignored: {why}"
            )
        if not self.ready and self.solver_error:
            return self.refusal(request, self.solver_error, "no_solver")
        if not self.ready:
            self.pending[request.tip] = request
            why = (
                "the IK solver is being built (a second or two); the latest goal per tip is answered as soon "
                "as it is ready"
            )
            return Reply(Status(False, "queued", why, goal=request))
        seed, stale = self.seed(now)
        try:
            goal = self.goal_in_base(request, seed, transform)
        except IKNodeError as error:
            return self.refusal(request, f"goal for '{request.tip}' refused: {error}")
        self.goals[request.tip] = goal
        reply = self.solve(seed, request)
        if stale and reply.warning is None:
            reply.warning = stale
        return reply

    # ------------------------------------------------------------------ solving

    def solve(self, seed: np.ndarray, request: GoalRequest | None) -> Reply:
        """Solve every tip's latest goal from ``seed``: in solve mode a command, in track mode a
        new joint goal for :meth:`track_step`; a failed solve publishes the closest
        configuration only with ``publish_best_effort``."""
        model, settings = self.model, self.settings
        try:
            result = node_result(model.solver.solve(dict(self.goals), seed=seed, timeout=settings.timeout))
        except IKNodeError as error:  # e.g. a joint state outside the limits of a locked joint
            return Reply(
                Status(False, "invalid_goal", str(error), goal=request), warning=f"solve refused: {error}"
            )
        details = {
            "position_error": f"{result.position_error:.3g}",
            "orientation_error": f"{result.orientation_error:.3g}",
            "iterations": str(result.iterations),
            "time_ms": f"{result.elapsed * 1e3:.3f}",
            "attempts": str(result.attempts),
        }
        # (no collision-free answer: the last command stays, even with publish_best_effort)
        publish = result.success or (settings.publish_best_effort and result.reason != COLLISION)
        reply = Reply(
            Status(result.success, result.reason, "", details, request), solution=(result.q, result.success)
        )
        if result.reason == COLLISION and not result.success:
            reply.warning = (
                "no collision-free solution for the goal within the timeout (self-collision or an obstacle, "
                f"collision_margin {settings.collision_margin} m): no command published, the last one stays"
            )
        elif not result.success:
            reply.warning = (
                f"no solution for the goal ({result.reason}): position error {result.position_error:.3g} m, "
                f"orientation error {result.orientation_error:.3g} rad"
                + ("; publishing the closest configuration found" if publish else "; no command published")
            )
        if publish:
            if settings.mode == "track":
                self.joint_goal = result.q
            else:
                reply.command = Command(result.q, None, seed)
        return reply

    def track_step(self, now: float) -> Reply:
        """One step of ``1/publish_rate`` s toward the joint goal, every joint within its
        velocity limit and slowed near singularities (MoveIt Servo's rule); one stop command
        (zero velocity) when the goal is reached."""
        model = self.model
        if not self.ready or self.joint_goal is None:
            return Reply()
        settings = self.settings
        period = 1.0 / settings.publish_rate
        q, _ = self.seed(now)
        space = model.manifold  # (a floating base: tangent displacements, q (+) dq)
        difference = self.joint_goal - q if space is None else space.difference(q, self.joint_goal)
        if np.max(np.abs(difference), initial=0.0) <= REACHED:
            self.joint_goal = None
            if self.last_velocity is not None and np.any(self.last_velocity):
                return Reply(command=Command(q, np.zeros(model.tangent_size), q))
            return Reply()
        lower, hard = settings.lower_singularity_threshold, settings.hard_stop_singularity_threshold
        scale, condition = singularity_scale_toward(
            model.solver.task_jacobian, q, difference, lower, hard, None if space is None else space.integrate
        )
        q_next, velocity = velocity_limited_step(q, self.joint_goal, model.max_velocity, period, scale, space)
        reply = Reply(command=Command(q_next, velocity, q))
        if scale < 1.0:
            reply.warning = (
                f"near a singularity (condition number {condition:.1f}; slowing from {lower}, stop at "
                f"{hard}): speed scaled to {scale:.2f}"
            )
        return reply

    def commit(self, command: Command) -> str | None:
        """The limit guard every command passes: why it must not be published (a position
        outside the active limits, a velocity over its limit), or None, and then it becomes the
        last command and the state ``~/joint_states`` repeats."""
        model = self.model
        violation = command_violation(
            model.joint_names,
            command.q,
            model.lower,
            model.upper,
            command.velocity,
            None if command.velocity is None else model.max_velocity,
            model.tree.tangent_names,
        )
        if violation is not None:
            return violation
        self.state = self.last_command = np.array(command.q, dtype=float)
        self.last_velocity = None if command.velocity is None else np.array(command.velocity, dtype=float)
        return None

    # ------------------------------------------------------------------ services

    def set_enabled(self, enabled: bool) -> tuple[str, Command | None]:
        """``~/enable``: false pauses (goals are refused; track mode stops where it is, with one
        stop command if it was moving), true resumes. Returns the message and the stop command."""
        if enabled == self.enabled:
            return f"already {'enabled' if enabled else 'paused'}", None
        self.enabled = enabled
        if enabled:
            return "enabled: goals are solved", None
        self.joint_goal = None
        stop = None
        moving = self.last_velocity is not None and np.any(self.last_velocity)
        if self.model is not None and moving and self.last_command is not None:
            q = self.last_command
            stop = Command(q, np.zeros(self.model.tangent_size), q)
        return "paused: goals are refused", stop

    def reset(self) -> tuple[bool, str]:
        """``~/reset``: forget the goals and the last command, so that the next solve is seeded
        from ``/joint_states`` (or the rest posture when none are fresh)."""
        if self.model is None:
            return False, "nothing to reset: no robot description yet"
        self.goals, self.pending = {}, {}
        self.joint_goal = None
        self.last_command = self.last_velocity = None
        return True, "goals forgotten; the next goal is seeded from /joint_states"

    def tip_poses(self, q: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """``{tip: T_base_point}`` at ``q`` (default: the state shown, else the rest posture): the
        pose of each tip's controlled point, the tip's frame moved by its ``tip_offsets`` (x y z
        [m] in the tip's frame, axes unchanged). A goal for the tip sets this pose, so the goal
        markers start here and the reached arrows are drawn here."""
        model = self.model
        q = (self.state if self.state is not None else model.rest_posture) if q is None else q
        poses = model.tree.link_poses(q)
        points = {}
        for tip in self.tips:
            point = model.tree.pose_of(poses, tip)
            point[:3, 3] += point[:3, :3] @ np.asarray(model.options.tasks[tip].offset)
            points[tip] = point
        return points
