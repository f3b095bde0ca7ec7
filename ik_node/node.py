"""The ik_node ROS 2 node: ``geometry_msgs/PoseStamped`` goals in, ``sensor_msgs/JointState``
commands out, with joint limits from parameters.

A thin layer over the rclpy-free core: it converts messages (:mod:`ik_node.conversions`),
merges parameters with the URDF (:mod:`ik_node.control`) and calls :class:`~ik_node.IKSolver`.

Topics (``~`` is the node's name; all remappable):

* in: ``~/target_pose`` (one tip) or ``~/<tip>/target_pose`` (several), depth 1 so the latest
  goal wins; ``/joint_states`` (the seed, matched by name); ``/robot_description`` (transient
  local) when neither ``robot_description`` nor ``robot_description_file`` is set;
* out: ``~/joint_commands`` (``JointState``), ``~/joint_trajectory`` (``JointTrajectory``, when
  ``publish_trajectory``), ``~/markers`` (``MarkerArray``: goals and reached poses),
  ``/diagnostics`` (``DiagnosticArray``: one status per goal).

Modes: ``solve`` publishes one command per goal, solved from the current state; ``track`` solves
each goal once and then steps toward it at ``publish_rate`` with every joint within its velocity
limit, slowing near singularities like MoveIt Servo. Every command passes one guard
(:meth:`IKNode._publish_command`) that refuses anything outside the active limits.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass

import numpy as np
import rclpy
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PoseStamped
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import Marker, MarkerArray

from .control import (
    command_violation,
    current_state,
    merge_joint_limits,
    singularity_scale_toward,
    trajectory_duration,
    velocity_limited_step,
)
from .conversions import pose_from_message, pose_to_fields
from .errors import IKNodeError
from .model import load_robot
from .parameters import (
    JOINT_PARAMETERS,
    NODE_PARAMETERS,
    TIP_PARAMETERS,
    ParameterSpec,
    check_values,
    overridden_names,
)
from .resources import resolve_path
from .solver import IKSolver, SolverOptions, TipTask, kernels_prepared

#: Joint motion [rad, m] below which a tracked goal counts as reached.
REACHED = 1e-9
#: Largest rate of the marker array [Hz]: the latest solve is drawn, older ones are skipped.
MARKER_RATE = 20.0
#: Seconds between repeats of the same warning.
WARNING_PERIOD = 2.0


def _descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """The ROS descriptor of a parameter spec: description with unit and choices, read-only,
    and its range (which rclpy then also enforces)."""
    extra = {}
    if spec.low is not None and spec.high is not None:
        if spec.kind == "integer":
            extra["integer_range"] = [IntegerRange(from_value=int(spec.low), to_value=int(spec.high), step=1)]
        else:
            extra["floating_point_range"] = [
                FloatingPointRange(from_value=spec.low, to_value=spec.high, step=0.0)
            ]
    if spec.choices:
        extra["additional_constraints"] = f"one of {list(spec.choices)}"
    return ParameterDescriptor(description=spec.described, read_only=spec.read_only, **extra)


GOAL_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
DESCRIPTION_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


@dataclass
class _Model:
    """Everything built from one robot description and one set of parameter values; replaced
    whole, never updated in place."""

    robot: object
    solver: IKSolver
    joint_names: tuple
    lower: np.ndarray
    upper: np.ndarray
    max_velocity: np.ndarray
    command_order: np.ndarray  # indices of command_joints in joint_names


class IKNode(Node):
    """The ik_node node. See the module docstring for topics and modes, the README for the
    parameters."""

    def __init__(self, override_names: frozenset = frozenset(), **options):
        """``override_names``: the parameters the command line sets (:func:`overridden_names`),
        so that entries for joints or tips the node does not have are named in a warning."""
        super().__init__("ik_node", **options)
        self._override_names = frozenset(override_names)
        self._declaring = True
        self._pending = None  # (values, model) validated by the on-set callback, applied after
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._after_set_parameters)
        self._values: dict = {}
        for spec in NODE_PARAMETERS:
            self._declare(spec.name, spec, spec.default)
        self._tips = list(self._values["tip_links"] or [])
        if not self._tips or not all(self._tips):
            raise IKNodeError(
                "parameter tip_links is required: the links that reach the goals, e.g. ['tool0']"
            )
        for tip in self._tips:
            for spec in TIP_PARAMETERS:
                self._declare(spec.name.format(tip), spec, spec.default)
        self._declaring = False
        check_values(self._values)

        self._model: _Model | None = None
        self._description_error: str | None = None  # why the last description was refused
        self._goals: dict[str, np.ndarray] = {}  # tip -> 4x4 goal in the base frame
        self._joint_state: dict[str, float] = {}
        self._joint_state_time = -math.inf
        self._stale_warned = False
        self._last_command: np.ndarray | None = None
        self._last_velocity: np.ndarray | None = None
        self._joint_goal: np.ndarray | None = None  # track mode: where the steps lead
        self._state: np.ndarray | None = None  # what ~/joint_states repeats: the latest command
        self._enabled = True  # ~/enable: paused nodes refuse goals

        self._command_publisher = self.create_publisher(JointState, "~/joint_commands", 10)
        self._trajectory_publisher = self.create_publisher(JointTrajectory, "~/joint_trajectory", 10)
        self._marker_publisher = self.create_publisher(MarkerArray, "~/markers", 10)
        self._diagnostics_publisher = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self._state_publisher = self.create_publisher(JointState, "~/joint_states", 10)
        self._position_publisher = self.create_publisher(Float64MultiArray, "~/position_commands", 10)
        self.create_service(SetBool, "~/enable", self._on_enable)
        self.create_service(Trigger, "~/reset", self._on_reset)
        self.create_subscription(JointState, "/joint_states", self._on_joint_state, 10)
        for tip in self._tips:
            topic = "~/target_pose" if len(self._tips) == 1 else f"~/{tip}/target_pose"
            self.create_subscription(
                PoseStamped, topic, lambda message, tip=tip: self._on_goal(tip, message), GOAL_QOS
            )
        self._timer = None
        self._state_timer = None
        self._reset_timer()
        # Markers are for eyes: drawn at MARKER_RATE from the latest solve, off the goal path.
        self._pending_markers = None
        self.create_timer(1.0 / MARKER_RATE, self._on_marker_timer)

        description = self._values["robot_description"]
        path = self._values["robot_description_file"]
        if description:
            self._load_description(description, "the robot_description parameter")
        elif path:
            try:
                text = resolve_path(path).read_bytes()
            except OSError as error:
                raise IKNodeError(f"robot_description_file '{path}' cannot be read: {error}") from None
            self._load_description(text, f"robot_description_file '{path}'")
        else:
            self.get_logger().info("waiting for the robot description on /robot_description")
            self.create_subscription(String, "/robot_description", self._on_description, DESCRIPTION_QOS)

    # ------------------------------------------------------------------ robot description

    def _on_description(self, message: String) -> None:
        self._load_description(message.data, "/robot_description")

    def _load_description(self, urdf, source: str) -> None:
        """Build a new model from a URDF; on any error keep the current one and say why."""
        try:
            robot = load_robot(urdf.encode() if isinstance(urdf, str) else urdf)
            base = self._values["base_link"] or robot.root
            self._declare_joint_parameters(robot.tree(base, self._tips))
            model = self._build_model(robot, self._values)
        except IKNodeError as error:
            self._description_error = f"robot description from {source} refused: {error}"
            self.get_logger().error(self._description_error)
            return
        self._description_error = None
        self._model = model
        self._goals = {}  # goals and commands belong to the model they were made for
        self._last_command = self._last_velocity = self._joint_goal = None
        self.get_logger().info(
            f"robot '{robot.name}' loaded from {source}: {base} -> {self._tips}, "
            f"joints {list(model.joint_names)}"
        )
        self._warn_unknown_overrides(model)
        self._state = None
        if self._values["publish_rest_posture_at_start"]:
            rest = model.solver.rest_posture
            self._publish_command(model, rest, None, rest)

    def _declare(self, name: str, spec: ParameterSpec, default) -> None:
        """Declare ``name`` from its spec (a start-up override wins over ``default``; a
        ``string_array`` without a default starts unset) and record its value."""
        initial = Parameter.Type.STRING_ARRAY if default is None and spec.kind == "string_array" else default
        self.declare_parameter(name, initial, _descriptor(spec))
        try:
            self._values[name] = self.get_parameter(name).value
        except rclpy.exceptions.ParameterUninitializedException:
            self._values[name] = None

    def _declare_joint_parameters(self, tree) -> None:
        """The per-joint parameters of the chain, defaulting to the URDF's limits and mid-range."""
        self._declaring = True
        try:
            for index, joint in enumerate(tree.joint_names):
                lower, upper, velocity = tree.lower[index], tree.upper[index], tree.max_velocity[index]
                bounded = bool(np.isfinite(lower))
                defaults = {
                    "joint_limits.{}.has_position_limits": bounded,
                    "joint_limits.{}.min_position": float(lower) if bounded else 0.0,
                    "joint_limits.{}.max_position": float(upper) if bounded else 0.0,
                    "joint_limits.{}.has_velocity_limits": bool(np.isfinite(velocity)),
                    "joint_limits.{}.max_velocity": float(velocity) if np.isfinite(velocity) else 0.0,
                    "joint_weights.{}": 1.0,
                    "rest_posture.{}": float(0.5 * (lower + upper)) if bounded else 0.0,
                }
                for spec in JOINT_PARAMETERS:
                    name = spec.name.format(joint)
                    if not self.has_parameter(name):
                        self._declare(name, spec, defaults[spec.name])
        finally:
            self._declaring = False

    def _warn_unknown_overrides(self, model: _Model) -> None:
        """Parameter-file entries for joints or tips the node does not have: named, not silent."""
        prefixes = ("joint_limits.", "joint_weights.", "rest_posture.", "tip_tasks.")
        for name in sorted(self._override_names):
            if name.startswith(prefixes) and not self.has_parameter(name):
                self.get_logger().warning(
                    f"parameter '{name}' names no joint of the chain {list(model.joint_names)} or tip "
                    f"of {self._tips}; ignored"
                )

    def _build_model(self, robot, values: dict, changed: frozenset | None = None) -> _Model:
        """The solver and the active limits for ``values``. At start-up (``changed`` None) a joint
        limit that is unusable or wider than the URDF falls back to the URDF with a warning; at
        run time, when a parameter in ``changed`` makes it so, this raises (and the change is
        rejected with the reason)."""
        tree = robot.tree(values["base_link"] or robot.root, self._tips)
        lower, upper, velocity, warnings = merge_joint_limits(
            tree.joint_names, tree.lower, tree.upper, tree.max_velocity, values, changed
        )
        for warning in warnings:
            self.get_logger().warning(warning)
        options = SolverOptions(
            tasks={
                tip: TipTask(
                    values[f"tip_tasks.{tip}"],
                    position_tolerance=values["position_tolerance"],
                    orientation_tolerance=values["orientation_tolerance"],
                )
                for tip in self._tips
            },
            method=values["method"],
            solve_type=values["solve_type"],
            joint_weights={joint: values[f"joint_weights.{joint}"] for joint in tree.joint_names},
            lower={joint: bound for joint, bound in zip(tree.joint_names, lower) if math.isfinite(bound)},
            upper={joint: bound for joint, bound in zip(tree.joint_names, upper) if math.isfinite(bound)},
            rest_posture={joint: values[f"rest_posture.{joint}"] for joint in tree.joint_names},  # clipped
            posture_gain=values["posture_gain"],
            min_damping=values["min_damping"],
            max_iterations=values["max_iterations"],
            random_seed=values["random_seed"],
            max_joint_move=values["max_joint_move"] or None,
        )
        first_solver = not kernels_prepared()
        if first_solver:
            self.get_logger().info(
                "preparing the IK kernels (the first start after an install compiles them: about 30 s)"
            )
        solver = IKSolver(robot, tree.base_link, self._tips, options=options)
        if first_solver:
            seconds, compiled = kernels_prepared()
            how = "compiled and cached for later starts" if compiled else "loaded"
            self.get_logger().info(f"IK kernels {how} in {seconds:.1f} s")
        return _Model(
            robot, solver, tree.joint_names, solver.lower, solver.upper, velocity,
            self._command_order(tree.joint_names, values["command_joints"]),
        )  # fmt: skip

    @staticmethod
    def _command_order(joint_names, command_joints) -> np.ndarray:
        """Indices into ``joint_names`` of the ``command_joints`` parameter (default: all, in order)."""
        if not command_joints:
            return np.arange(len(joint_names))
        unknown = [name for name in command_joints if name not in joint_names]
        if unknown or len(set(command_joints)) != len(command_joints):
            raise IKNodeError(
                f"parameter command_joints must name each joint of the chain at most once, from "
                f"{list(joint_names)}; got {list(command_joints)}"
            )
        return np.array([joint_names.index(name) for name in command_joints], dtype=int)

    # ------------------------------------------------------------------ parameters

    def _on_set_parameters(self, parameters) -> SetParametersResult:
        """Validate a change as a whole: every value against its spec, the rules across
        parameters, and a candidate model built from it; applied by :meth:`_after_set_parameters`."""
        if self._declaring:
            return SetParametersResult(successful=True)
        candidate = dict(self._values)
        candidate.update({parameter.name: parameter.value for parameter in parameters})
        try:
            check_values(candidate)
            changed = frozenset(parameter.name for parameter in parameters)
            model = None if self._model is None else self._build_model(self._model.robot, candidate, changed)
        except IKNodeError as error:
            self.get_logger().warning(f"parameter change refused: {error}")
            return SetParametersResult(successful=False, reason=str(error))
        self._pending = (candidate, model)
        return SetParametersResult(successful=True)

    def _after_set_parameters(self, parameters) -> None:
        """Install what :meth:`_on_set_parameters` validated: the values, the new model (used from
        the next solve), the timers when a rate or the mode changed."""
        if self._declaring or self._pending is None:
            return
        candidate, model = self._pending
        self._pending = None
        rate_changed = any(
            candidate[name] != self._values[name] for name in ("publish_rate", "joint_state_rate")
        )
        mode_changed = candidate["mode"] != self._values["mode"]
        self._values = candidate
        if model is not None:
            self._model = model
            self._joint_goal = None if mode_changed else self._joint_goal
        if rate_changed or mode_changed:
            self._reset_timer()

    def _reset_timer(self) -> None:
        for timer in (self._timer, self._state_timer):
            if timer is not None:
                self.destroy_timer(timer)
        self._timer = self._state_timer = None
        if self._values["mode"] == "track":
            self._timer = self.create_timer(1.0 / self._values["publish_rate"], self._on_track_timer)
        if self._values["joint_state_rate"] > 0.0:
            self._state_timer = self.create_timer(1.0 / self._values["joint_state_rate"], self._publish_state)

    # ------------------------------------------------------------------ services

    def _on_enable(self, request, response):
        """``~/enable`` (std_srvs/SetBool): false pauses (goals are refused with status 'paused';
        track mode stops where it is; ~/joint_states continues), true resumes."""
        if bool(request.data) == self._enabled:
            response.success = True
            response.message = f"already {'enabled' if self._enabled else 'paused'}"
            return response
        self._enabled = bool(request.data)
        model = self._model
        if not self._enabled:
            self._joint_goal = None
            moving = self._last_velocity is not None and np.any(self._last_velocity)
            if model is not None and moving and self._last_command is not None:
                q = self._last_command
                self._publish_command(model, q, np.zeros_like(q), q)  # one stop command
        response.success = True
        response.message = "enabled: goals are solved" if self._enabled else "paused: goals are refused"
        self.get_logger().info(response.message)
        return response

    def _on_reset(self, request, response):
        """``~/reset`` (std_srvs/Trigger): forget the goals and the last command, so that the next
        solve is seeded from /joint_states (or the rest posture when none are fresh)."""
        if self._model is None:
            response.success = False
            response.message = "nothing to reset: no robot description yet"
            return response
        self._goals = {}
        self._joint_goal = None
        self._last_command = self._last_velocity = None
        response.success = True
        response.message = "goals forgotten; the next goal is seeded from /joint_states"
        self.get_logger().info(response.message)
        return response

    # ------------------------------------------------------------------ inputs

    def _on_joint_state(self, message: JointState) -> None:
        """Keep the latest position of every named joint (mismatched or NaN entries skipped)."""
        if len(message.position) != len(message.name):
            self.get_logger().warning(
                f"/joint_states message has {len(message.name)} names but {len(message.position)} "
                "positions; ignored",
                throttle_duration_sec=WARNING_PERIOD,
            )
            return
        for name, value in zip(message.name, message.position):
            if math.isfinite(value):
                self._joint_state[name] = float(value)
        self._joint_state_time = time.monotonic()
        self._stale_warned = False

    def _current(self, model: _Model) -> np.ndarray:
        """The seed: fresh /joint_states (by name), else the last command, else the rest posture."""
        fallback = model.solver.rest_posture if self._last_command is None else self._last_command
        timeout = self._values["joint_state_timeout"]
        q, stale = current_state(
            model.joint_names, self._joint_state, time.monotonic() - self._joint_state_time, timeout, fallback
        )
        if stale and not self._stale_warned:
            self.get_logger().warning(
                f"/joint_states older than joint_state_timeout ({timeout} s); seeding from the last command"
            )
            self._stale_warned = True
        return q

    def _goal_in_base(self, model: _Model, message: PoseStamped, seed: np.ndarray) -> np.ndarray:
        """The goal as ``T_base_goal``; a ``frame_id`` naming a link goes through the model's FK
        at the current state (the seed for the chain's joints, /joint_states for the others)."""
        pose = pose_from_message(message.pose)
        frame = message.header.frame_id.lstrip("/")
        base = model.solver.tree.base_link
        if frame in ("", base):
            return pose
        robot = model.robot
        if frame not in robot.links:
            known = ", ".join(sorted(robot.links))
            raise IKNodeError(
                f"goal frame '{frame}' is not a link of robot '{robot.name}'; known frames: {known}"
            )
        state = {name: value for name, value in self._joint_state.items() if name in robot.joint_names}
        state.update(zip(model.joint_names, seed))
        return robot.forward(state, frame, base) @ pose

    def _on_goal(self, tip: str, message: PoseStamped) -> None:
        model = self._model
        if not self._enabled:
            why = "the node is paused (~/enable false)"
            self.get_logger().warning(f"goal ignored: {why}", throttle_duration_sec=WARNING_PERIOD)
            self._publish_status(False, "paused", why, {}, message)
            return
        if model is None:
            why = self._description_error or (
                "no robot description yet (parameter robot_description, robot_description_file or "
                "topic /robot_description)"
            )
            self.get_logger().warning(f"goal ignored: {why}", throttle_duration_sec=WARNING_PERIOD)
            self._publish_status(False, "no_robot_description", why, {}, message)
            return
        seed = self._seed(model)
        try:
            goal = self._goal_in_base(model, message, seed)
        except IKNodeError as error:
            self.get_logger().warning(
                f"goal for '{tip}' refused: {error}", throttle_duration_sec=WARNING_PERIOD
            )
            self._publish_status(False, "invalid_goal", f"goal for '{tip}' refused: {error}", {}, message)
            return
        self._goals[tip] = goal
        self._solve(model, seed, message)

    def _seed(self, model: _Model) -> np.ndarray:
        """Track mode steps from its own last command (so consecutive commands respect the velocity
        limits); solve mode seeds from the current state."""
        if self._values["mode"] == "track" and self._last_command is not None:
            return self._last_command.copy()
        return self._current(model)

    # ------------------------------------------------------------------ solving and commands

    def _solve(self, model: _Model, seed: np.ndarray, message: PoseStamped) -> None:
        try:
            result = model.solver.solve(dict(self._goals), seed=seed, timeout=self._values["timeout"])
        except IKNodeError as error:  # e.g. a joint state outside the limits of a locked joint
            self.get_logger().warning(f"solve refused: {error}", throttle_duration_sec=WARNING_PERIOD)
            self._publish_status(False, "invalid_goal", str(error), {}, message)
            return
        details = {
            "position_error": f"{result.position_error:.3g}",
            "orientation_error": f"{result.orientation_error:.3g}",
            "iterations": str(result.iterations),
            "time_ms": f"{result.elapsed * 1e3:.3f}",
            "attempts": str(result.attempts),
        }
        publish = result.success or self._values["publish_best_effort"]
        if not result.success:
            self.get_logger().warning(
                f"no solution for the goal ({result.reason}): position error {result.position_error:.3g} m, "
                f"orientation error {result.orientation_error:.3g} rad"
                + ("; publishing the closest configuration found" if publish else "; no command published"),
                throttle_duration_sec=WARNING_PERIOD,
            )
        if publish:
            if self._values["mode"] == "track":
                self._joint_goal = result.q
            else:
                self._publish_command(model, result.q, None, seed)
        self._publish_status(result.success, result.reason, "", details, message)
        self._pending_markers = (model, result.q, result.success)

    def _on_track_timer(self) -> None:
        model = self._model
        if model is None or self._joint_goal is None:
            return
        period = 1.0 / self._values["publish_rate"]
        q = self._seed(model)
        difference = self._joint_goal - q
        if np.max(np.abs(difference), initial=0.0) <= REACHED:
            if self._last_velocity is not None and np.any(self._last_velocity):
                self._publish_command(model, q, np.zeros_like(q), q)  # one stop command
            self._joint_goal = None
            return
        scale = self._singularity_scale(model, q, difference)
        q_next, velocity = velocity_limited_step(q, self._joint_goal, model.max_velocity, period, scale)
        self._publish_command(model, q_next, velocity, q)

    def _singularity_scale(self, model: _Model, q: np.ndarray, difference: np.ndarray) -> float:
        lower = self._values["lower_singularity_threshold"]
        hard = self._values["hard_stop_singularity_threshold"]
        scale, condition = singularity_scale_toward(model.solver.task_jacobian, q, difference, lower, hard)
        if scale < 1.0:
            self.get_logger().warning(
                f"near a singularity (condition number {condition:.1f}; slowing from {lower}, stop at "
                f"{hard}): speed scaled to {scale:.2f}",
                throttle_duration_sec=WARNING_PERIOD,
            )
        return scale

    def _publish_command(self, model: _Model, q: np.ndarray, velocity, previous: np.ndarray) -> bool:
        """The one place commands leave the node: each is checked against the active limits
        (positions, and velocities when given) and refused, with an error, if it violates them."""
        violation = command_violation(
            model.joint_names,
            q,
            model.lower,
            model.upper,
            velocity,
            None if velocity is None else model.max_velocity,
        )
        if violation is not None:
            self.get_logger().error(f"command refused by the limit guard: {violation}")
            self._publish_status(False, "limit_guard", violation, {}, None)
            return False
        stamp = self.get_clock().now().to_msg()
        command = JointState()
        command.header.stamp = stamp
        command.name = list(model.joint_names)
        command.position = [float(value) for value in q]
        if velocity is not None:
            command.velocity = [float(value) for value in velocity]
        self._command_publisher.publish(command)
        if self._values["publish_position_commands"]:
            self._position_publisher.publish(
                Float64MultiArray(data=[float(q[i]) for i in model.command_order])
            )
        self._state = np.array(q, dtype=float)
        self._publish_state()
        if self._values["publish_trajectory"]:
            self._publish_trajectory(model, q, velocity, previous)
        self._last_command = np.array(q, dtype=float)
        self._last_velocity = None if velocity is None else np.array(velocity, dtype=float)
        return True

    def _publish_state(self) -> None:
        """``~/joint_states``: the latest command's positions, now and at ``joint_state_rate`` (as
        joint_state_publisher does), so that a robot_state_publisher or RViz started later shows
        the robot at once."""
        model = self._model
        if model is None or self._state is None:
            return
        state = JointState()
        state.header.stamp = self.get_clock().now().to_msg()
        state.name = list(model.joint_names)
        state.position = [float(value) for value in self._state]
        self._state_publisher.publish(state)

    def _publish_trajectory(self, model: _Model, q, velocity, previous) -> None:
        """One point for ros2_control's joint trajectory controller: reached after the period
        (track mode) or after the slowest joint's time at its velocity limit (solve mode)."""
        period = None if velocity is None else 1.0 / self._values["publish_rate"]
        duration = trajectory_duration(
            q, previous, model.max_velocity, self._values["min_trajectory_duration"], period
        )
        point = JointTrajectoryPoint()
        point.positions = [float(value) for value in q]
        if velocity is not None:
            point.velocities = [float(value) for value in velocity]
        seconds = math.floor(duration)
        point.time_from_start = Duration(sec=int(seconds), nanosec=int((duration - seconds) * 1e9))
        trajectory = JointTrajectory()
        trajectory.joint_names = list(model.joint_names)
        trajectory.points = [point]
        self._trajectory_publisher.publish(trajectory)

    def _publish_status(self, success: bool, reason: str, message: str, details: dict, goal) -> None:
        """One ``DiagnosticStatus`` per goal on /diagnostics: success, errors, iterations, time,
        reason, and the goal's stamp and frame (to match goals to outcomes)."""
        status = DiagnosticStatus()
        status.level = DiagnosticStatus.OK if success else DiagnosticStatus.WARN
        status.name = f"{self.get_name()}: ik"
        status.hardware_id = "" if self._model is None else self._model.robot.name
        status.message = message or reason
        values = {"success": str(success).lower(), "reason": reason, **details}
        if goal is not None:
            values["goal_frame"] = goal.header.frame_id
            values["goal_stamp"] = f"{goal.header.stamp.sec}.{goal.header.stamp.nanosec:09d}"
        status.values = [KeyValue(key=key, value=value) for key, value in values.items()]
        array = DiagnosticArray()
        array.header.stamp = self.get_clock().now().to_msg()
        array.status = [status]
        self._diagnostics_publisher.publish(array)

    def _on_marker_timer(self) -> None:
        if self._pending_markers is not None:
            self._publish_markers(*self._pending_markers)
            self._pending_markers = None

    def _publish_markers(self, model: _Model, q: np.ndarray, success: bool) -> None:
        """Arrows along each tip's x axis: the goal (green) and the pose reached (blue, or red when
        the solve failed), in the base frame."""
        poses = model.solver.tree.link_poses(q)
        markers = MarkerArray()
        base = model.solver.tree.base_link
        for index, tip in enumerate(self._tips):
            reached = model.solver.tree.pose_of(poses, tip)
            for namespace, pose, color in (
                ("goal", self._goals.get(tip), (0.1, 0.8, 0.1)),
                ("reached", reached, (0.1, 0.3, 0.9) if success else (0.9, 0.1, 0.1)),
            ):
                if pose is None:
                    continue
                marker = Marker()
                marker.header.frame_id = base
                marker.ns, marker.id = namespace, index
                marker.type, marker.action = Marker.ARROW, Marker.ADD
                position, quaternion = pose_to_fields(pose)
                marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = position
                (
                    marker.pose.orientation.x,
                    marker.pose.orientation.y,
                    marker.pose.orientation.z,
                    marker.pose.orientation.w,
                ) = quaternion
                marker.scale.x, marker.scale.y, marker.scale.z = 0.1, 0.012, 0.012
                marker.color.r, marker.color.g, marker.color.b = color
                marker.color.a = 0.9
                markers.markers.append(marker)
        self._marker_publisher.publish(markers)


def main(argv=None) -> int:
    """Run the node: ``ik_node --ros-args --params-file FILE`` (or ``ros2 run ik_node ik_node``).
    Returns 0 on SIGINT/SIGTERM, 2 when the configuration is unusable."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    rclpy.init(args=["ik_node", *arguments])
    node = None
    # Made before the node: a signal that lands while an executor is being built leaves a
    # half-made one whose finaliser prints a traceback (rclpy), and the node's start-up is when
    # signals come (a launch stopped early).
    executor = SingleThreadedExecutor()
    try:
        node = IKNode(override_names=overridden_names(arguments))
        executor.add_node(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except (
        IKNodeError,
        rclpy.exceptions.InvalidParameterTypeException,
        rclpy.exceptions.InvalidParameterValueException,
    ) as error:
        print(f"ik_node: {error}", file=sys.stderr)
        return 2
    except Exception:
        # A SIGINT/SIGTERM shuts the context down from rclpy's signal handler; landing between the
        # executor's checks, it surfaces as an RCLError on the invalid context. Only then is it
        # the requested shutdown; anything else is a real error.
        if rclpy.ok():
            raise
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
