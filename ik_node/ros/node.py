"""The ik_node ROS 2 node: ``geometry_msgs/PoseStamped`` goals in, ``sensor_msgs/JointState``
commands out, with joint limits from parameters.

Topics, services and parameters around :class:`ik_node.ros.policy.IKPolicy` (every decision: goals,
seeds, readiness, pause, tracking steps) and :mod:`ik_node.ros.messages` (every outgoing message).

Topics (``~`` is the node's name; all remappable):

* in: ``~/target_pose`` (one tip) or ``~/<tip>/target_pose`` (several), best effort (it matches
  reliable and best-effort publishers), depth 1 so the latest goal wins; ``/joint_states`` (the
  seed, matched by name); ``/robot_description`` (transient local) when neither
  ``robot_description`` nor ``robot_description_file`` is set;
  ``/robot_description_semantic`` (SRDF, transient local; used while the
  ``robot_description_semantic`` parameter is empty); ``~/obstacles`` (``MarkerArray``:
  obstacles, :mod:`ik_node.ros.obstacle_messages`); the goal markers' feedback
  (:mod:`ik_node.ros.interactive_goals`);
* out: ``~/joint_states`` (the latest command, else the rest posture, steadily from the first
  second; 1-DOF joints), ``~/base_pose`` (``PoseStamped``: a floating or planar base's pose,
  with ``~/joint_states``, and as a TF where tf2_ros is importable),
  ``~/joint_commands`` (``JointState``), ``~/position_commands`` (``Float64MultiArray``),
  ``~/joint_trajectory`` (``JointTrajectory``), ``~/ready`` (``std_msgs/Bool``, transient local:
  true once goals are solved), ``~/markers`` (``MarkerArray``), ``~/collision_markers``
  (``MarkerArray``, transient local: the collision model at the state shown and the obstacles,
  while collisions are checked), ``/diagnostics`` (one status per goal).

Services: ``~/enable`` (``std_srvs/SetBool``), ``~/reset`` (``std_srvs/Trigger``), and
``compute_ik_service_name`` (default ``~/compute_ik``: ``moveit_msgs/srv/GetPositionIK`` where
moveit_msgs is importable, :mod:`ik_node.ros.compute_ik_service` over
:mod:`ik_node.ros.compute_ik`; it never commands).

Start-up: the description is loaded and the rest posture published within a second; the solver
is built on a background thread (a second or two; after an install it answers as plain Python
while a helper process compiles its kernels); goals arriving meanwhile are answered when it is
ready. Works on Humble (no post-set parameter
callback there: changes are applied in the validating callback).
"""

from __future__ import annotations

import logging
import sys
import time
import warnings

import rclpy
from geometry_msgs.msg import PoseStamped
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from ..description import load_robot, xacro_arguments
from ..errors import IKNodeError
from ..lie import inverse
from ..solver import kernels_prepared
from . import messages
from .compute_ik import answer_query
from .compute_ik_service import compute_ik_service
from .control import trajectory_duration
from .conversions import pose_from_message
from .frames import transform_broadcaster, transform_lookup
from .interactive_goals import interactive_goals
from .obstacle_messages import MarkerObstacles, collision_markers
from .parameters import (
    NODE_PARAMETERS,
    OBSTACLE_PARAMETERS,
    PER_JOINT_OR_TIP,
    TIP_PARAMETERS,
    NodeSettings,
    ParameterSpec,
    check_obstacle_names,
    check_values,
    joint_parameter_defaults,
    overridden_names,
    spec_of,
)
from .planning import build_solver, description_path
from .policy import IKPolicy
from .preparation import SolverPreparation
from .replies import GoalRequest, refusal

#: Largest rate of the marker array [Hz]: the latest solve is drawn, older ones are skipped.
MARKER_RATE = 20.0
#: Seconds between repeats of the same warning.
WARNING_PERIOD = 2.0
#: How often the executor looks whether the background solver build has finished [s].
READY_POLL = 0.05

#: Goals: BEST_EFFORT matches every publisher, reliable or best effort (teleop and high-rate
#: streams often are; a RELIABLE subscription never connects to them), VOLATILE matches volatile
#: and transient-local ones; depth 1, the latest goal wins (older ones are stale anyway).
GOAL_QOS = QoSProfile(
    depth=1,
    history=HistoryPolicy.KEEP_LAST,
    reliability=ReliabilityPolicy.BEST_EFFORT,
    durability=DurabilityPolicy.VOLATILE,
)
LATCHED_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


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


class IKNode(Node):
    """The ik_node node. See the module docstring for topics, docs/node.md for parameters."""

    def __init__(self, override_names: frozenset = frozenset(), **options):
        """``override_names``: the parameters the command line sets (:func:`overridden_names`),
        so that entries for joints or tips the node does not have are named in a warning."""
        super().__init__("ik_node", **options)
        _route_python_logs(self.get_logger())
        self._override_names = frozenset(override_names)
        self._values: dict = {}
        self._declaring = True
        self._pending_change = None  # (values, model) validated, applied after the set
        self.add_on_set_parameters_callback(self._on_set_parameters)
        if hasattr(self, "add_post_set_parameters_callback"):  # Iron and later; Humble applies on set
            self.add_post_set_parameters_callback(lambda parameters: self._apply_change())
        tips = self._declare_parameters()
        self._policy = IKPolicy(tips, NodeSettings.from_values(self._values))
        self._preparation = SolverPreparation()
        self._pending_markers = None
        self._marker_obstacles = MarkerObstacles()
        self._pending_obstacles: list = []  # marker arrays that came before the robot description
        self._collision_markers_due = False
        self._collision_markers_shown = False

        self._command_publisher = self.create_publisher(JointState, "~/joint_commands", 10)
        self._trajectory_publisher = self.create_publisher(JointTrajectory, "~/joint_trajectory", 10)
        self._marker_publisher = self.create_publisher(MarkerArray, "~/markers", 10)
        self._diagnostics_publisher = self.create_publisher(messages.DiagnosticArray, "/diagnostics", 10)
        self._state_publisher = self.create_publisher(JointState, "~/joint_states", 10)
        self._base_pose_publisher = self.create_publisher(PoseStamped, "~/base_pose", 10)
        self._transform_broadcaster = None  # made for the first model with a floating base
        self._position_publisher = self.create_publisher(Float64MultiArray, "~/position_commands", 10)
        self._ready_publisher = self.create_publisher(Bool, "~/ready", LATCHED_QOS)
        self._ready_publisher.publish(Bool(data=False))
        self._collision_marker_publisher = self.create_publisher(
            MarkerArray, "~/collision_markers", LATCHED_QOS
        )
        self.create_subscription(MarkerArray, "~/obstacles", self._on_obstacles, 10)
        self.create_subscription(String, "/robot_description_semantic", self._on_semantic, LATCHED_QOS)
        self.create_service(SetBool, "~/enable", self._on_enable)
        self.create_service(Trigger, "~/reset", self._on_reset)
        self.create_subscription(JointState, "/joint_states", self._on_joint_state, 10)
        for tip in tips:
            topic = "~/target_pose" if len(tips) == 1 else f"~/{tip}/target_pose"
            self.create_subscription(
                PoseStamped, topic, lambda message, tip=tip: self._on_goal(tip, message), GOAL_QOS
            )
        self._rate_timers = []
        self._reset_timers()
        self.create_timer(1.0 / MARKER_RATE, self._on_marker_timer)
        self._ready_timer = self.create_timer(READY_POLL, self._on_ready_poll)
        self._transform, why = transform_lookup(self, self._settings.transform_timeout)
        if why:
            self.get_logger().info(why)
        self._compute_ik_service = None
        if self._settings.compute_ik_service_name:
            self._serve_compute_ik(self._settings.compute_ik_service_name)
        self._goal_markers = None
        if self._settings.interactive_markers:
            self._goal_markers, why = interactive_goals(self, self._receive_goal, lambda: self._settings.mode)
            if why:
                self.get_logger().info(why)
        self._load_initial_description()

    def _declare_parameters(self) -> list[str]:
        """Declare the node's parameters, then each tip's (``tip_links``) and each obstacle's
        (``obstacle_names``), and check them together; returns the tips."""
        for spec in NODE_PARAMETERS:
            self._declare(spec.name, spec, spec.default)
        tips = list(self._values["tip_links"] or [])
        if not tips or not all(tips):
            raise IKNodeError(
                "parameter tip_links is required: the links that reach the goals, e.g. ['tool0']"
            )
        for tip in tips:
            for spec in TIP_PARAMETERS:
                self._declare(spec.name.format(tip), spec, spec.default)
        obstacle_names = list(self._values["obstacle_names"] or [])
        check_obstacle_names(obstacle_names)
        for name in obstacle_names:
            for spec in OBSTACLE_PARAMETERS:
                self._declare(spec.name.format(name), spec, spec.default)
        self._declaring = False
        for name in sorted(self._override_names):
            if name.startswith("obstacles.") and not self.has_parameter(name):
                self.get_logger().warning(
                    f"parameter '{name}' names no obstacle of obstacle_names {obstacle_names}; ignored"
                )
        check_values(self._values)
        return tips

    @property
    def _settings(self) -> NodeSettings:
        return self._policy.settings

    # ------------------------------------------------------------------ robot description

    def _load_initial_description(self) -> None:
        settings = self._settings
        if settings.robot_description:
            self._load_description(settings.robot_description, "the robot_description parameter")
        elif settings.robot_description_file:
            self._load_description(
                description_path(settings), f"robot_description_file '{settings.robot_description_file}'"
            )
        else:
            self.get_logger().info("waiting for the robot description on /robot_description")
            self.create_subscription(String, "/robot_description", self._on_description, LATCHED_QOS)

    def _on_description(self, message: String) -> None:
        self._load_description(message.data, "/robot_description")

    def _load_description(self, description, source: str) -> None:
        """Load a URDF or xacro (a path, or XML); on any error keep the current model and say why.
        The robot is shown at once; the solver follows (:meth:`_prepare_solver`)."""
        settings = self._settings
        try:
            robot = load_robot(
                description.encode() if isinstance(description, str) else description,
                package_paths=list(settings.package_paths),
                xacro_args=xacro_arguments(settings.xacro_args, "parameter xacro_args"),
                root_joint=settings.root_joint or None,
            )
            self._declare_joint_parameters(robot.tree(settings.base_link or robot.root, self._policy.tips))
            model = self._policy.plan(robot)
        except IKNodeError as error:
            self._policy.description_error = f"robot description from {source} refused: {error}"
            self.get_logger().error(self._policy.description_error)
            return
        for warning in model.warnings:
            self.get_logger().warning(warning)
        rest = self._policy.install(model)
        self._pending_markers = None  # (drawn for the old model's joints)
        self._collision_markers_due = True
        pending, self._pending_obstacles = self._pending_obstacles, []
        for message in pending:  # (obstacles in the robot's frames need its model)
            self._on_obstacles(message)
        layout = model.layout
        bases = "".join(
            f", {joint.type} joint '{joint.name}' ({joint.parent} -> {joint.child}, pose on ~/base_pose)"
            for joint in layout.multi_dof
        )
        self.get_logger().info(
            f"robot '{robot.name}' loaded from {source}: {model.base_link} -> {self._policy.tips}, "
            f"joints {list(layout.names)}{bases}"
        )
        if layout.multi_dof and self._transform_broadcaster is None:
            self._transform_broadcaster, why = transform_broadcaster(self)
            if why:
                self.get_logger().info(why)
        multi_dof = {joint.name for joint in layout.multi_dof}
        for name in sorted(self._override_names):  # file entries for joints or tips not here: named
            if name.startswith(PER_JOINT_OR_TIP) and not self.has_parameter(name):
                joint = name.split(".")[1]
                why = (
                    f"names joint '{joint}', a {model.robot.joints[joint].type} joint: it has no "
                    "per-joint parameters (no limits, weight 1, rest at the origin)"
                    if joint in multi_dof
                    else f"names no joint of the chain {list(layout.names)} or tip of {self._policy.tips}"
                )
                self.get_logger().warning(f"parameter '{name}' {why}; ignored")
        if rest is not None:
            self._publish_command(rest)
        else:
            self._publish_state()
        if self._goal_markers is not None:  # at the tips' controlled points now (fresh /joint_states)
            self._goal_markers.show(
                model.base_link, self._policy.tip_poses(self._policy.current(time.monotonic())[0])
            )
        self._prepare_solver(model)

    def _prepare_solver(self, model) -> None:
        """Attach the model's solver now when the kernels are ready, else build it on a thread
        (the first build in a process compiles or loads them) and attach it when done."""
        if kernels_prepared() is not None:
            self._build_and_attach(model)
            return
        self._ready_publisher.publish(Bool(data=False))
        if self._preparation.start(model):  # (a running build prepares the kernels for this one too)
            self.get_logger().info(
                "preparing the IK solver in the background: the robot is shown meanwhile, and goals "
                "are kept and answered once it is ready"
            )

    def _on_ready_poll(self) -> None:
        finished = self._preparation.take()
        if finished is None:
            return
        model, solver, error = finished
        current = self._policy.model  # parameters or the description may have changed meanwhile
        if current is None or current.solver is not None:
            return
        if current is not model:  # built for an older model: now (kernels ready) or on the thread
            self._prepare_solver(current)
        elif error is not None:
            self._fail(error)
        else:
            self._attach(solver)

    def _build_and_attach(self, model) -> None:
        try:
            solver = build_solver(model)
        except Exception as error:  # e.g. out of memory for a huge tree: said, the node serves on
            self._fail(error)
            return
        self._attach(solver)

    def _fail(self, error: Exception) -> None:
        replies = self._policy.preparation_failed(error)
        self.get_logger().error(self._policy.solver_error)
        for reply in replies:
            self._handle(reply)

    def _attach(self, solver) -> None:
        waiting = self._policy.attach_solver(solver)
        self._collision_markers_due = True
        self._ready_publisher.publish(Bool(data=True))
        self.get_logger().info(f"ready: goals for {self._policy.tips} are solved")
        for request in waiting:
            self._handle(self._policy.receive_goal(request, time.monotonic(), self._transform))

    def _declare(self, name: str, spec: ParameterSpec, default) -> None:
        """Declare ``name`` from its spec (a start-up override wins over ``default``; a
        string, string array or double array without a default starts unset: None) and record
        its value."""
        unset = {"string": Parameter.Type.STRING, "string_array": Parameter.Type.STRING_ARRAY,
                 "double_array": Parameter.Type.DOUBLE_ARRAY}  # fmt: skip
        initial = unset[spec.kind] if default is None and spec.kind in unset else default
        self.declare_parameter(name, initial, _descriptor(spec))
        try:
            self._values[name] = self.get_parameter(name).value
        except rclpy.exceptions.ParameterUninitializedException:
            self._values[name] = None

    def _declare_joint_parameters(self, tree) -> None:
        """The per-joint parameters of the chain, defaulting to the URDF's limits and mid-range."""
        self._declaring = True
        try:
            for name, default in joint_parameter_defaults(tree).items():
                if not self.has_parameter(name):
                    self._declare(name, spec_of(name), default)
        finally:
            self._declaring = False
        check_values(self._values)  # start-up values of the joints' parameters (a NaN rest posture)
        self._policy.settings = NodeSettings.from_values(self._values)

    # ------------------------------------------------------------------ parameters

    def _on_set_parameters(self, parameters) -> SetParametersResult:
        """Validate a change as a whole: every value against its spec, the rules across
        parameters, and a candidate model built from it; applied by :meth:`_apply_change` (after
        the set, or here on Humble, which has no post-set callback)."""
        if self._declaring:
            return SetParametersResult(successful=True)
        candidate = {**self._values, **{parameter.name: parameter.value for parameter in parameters}}
        try:
            settings, model = self._policy.candidate(candidate, frozenset(p.name for p in parameters))
        except IKNodeError as error:
            self.get_logger().warning(f"parameter change refused: {error}")
            return SetParametersResult(successful=False, reason=str(error))
        self._pending_change = (candidate, settings, model)
        if not hasattr(self, "add_post_set_parameters_callback"):
            self._apply_change()
        return SetParametersResult(successful=True)

    def _apply_change(self) -> None:
        """Install what :meth:`_on_set_parameters` validated: the values, the new model (used from
        the next solve), the timers when a rate or the mode changed."""
        if self._declaring or self._pending_change is None:
            return
        candidate, settings, model = self._pending_change
        self._pending_change = None
        self._values = candidate
        if self._policy.apply(settings, model):
            self._reset_timers()
        self._collision_markers_due = True

    def _reset_timers(self) -> None:
        for timer in self._rate_timers:
            self.destroy_timer(timer)
        self._rate_timers = []
        settings = self._settings
        if settings.mode == "track":
            self._rate_timers.append(self.create_timer(1.0 / settings.publish_rate, self._on_track_timer))
        if settings.joint_state_rate > 0.0:
            self._rate_timers.append(self.create_timer(1.0 / settings.joint_state_rate, self._publish_state))

    # ------------------------------------------------------------------ services and inputs

    def _on_enable(self, request, response):
        """``~/enable`` (std_srvs/SetBool): false pauses, true resumes (see IKPolicy.set_enabled)."""
        response.message, stop = self._policy.set_enabled(bool(request.data))
        if stop is not None:
            self._publish_command(stop)
        response.success = True
        self.get_logger().info(response.message)
        return response

    def _on_reset(self, request, response):
        """``~/reset`` (std_srvs/Trigger): forget goals and the last command (IKPolicy.reset)."""
        response.success, response.message = self._policy.reset()
        if response.success:
            self.get_logger().info(response.message)
            if self._goal_markers is not None:
                self._goal_markers.move(self._policy.tip_poses())
        return response

    def _serve_compute_ik(self, name: str) -> None:
        """``GetPositionIK`` at ``name`` where moveit_msgs is importable (else said once)."""
        try:
            self._compute_ik_service, why = compute_ik_service(self, name, self._on_compute_ik)
        except rclpy.exceptions.NameValidationException as error:
            raise IKNodeError(
                f"parameter compute_ik_service_name '{name}' is not a service name: {error}"
            ) from None
        if why:
            self.get_logger().info(why)
        else:
            self.get_logger().info(
                f"serving moveit_msgs/srv/GetPositionIK on {self.resolve_service_name(name)} (IK answers; "
                "nothing is commanded)"
            )

    def _on_compute_ik(self, query):
        """A ``compute_ik`` request (:func:`answer_query`: never a command, the last one stays)."""
        answer = answer_query(self._policy, query, time.monotonic(), self._transform)
        if not answer.success:
            self.get_logger().warning(
                f"compute_ik: {answer.message} (code {answer.code})", throttle_duration_sec=WARNING_PERIOD
            )
        return answer

    def _on_semantic(self, message: String) -> None:
        """An SRDF on ``/robot_description_semantic``: used while the parameter is empty (a bad
        one is refused with the reason; the solver in use stays)."""
        source = "/robot_description_semantic"
        try:
            model = self._policy.receive_semantic(message.data, source)
        except IKNodeError as error:
            self.get_logger().error(f"SRDF refused: {error} (the self-collision pairs in use stay)")
            return
        if self._settings.robot_description_semantic:
            self.get_logger().info(
                f"SRDF on {source} received; the robot_description_semantic parameter is used instead"
            )
        elif model is None:
            self.get_logger().info(f"SRDF from {source} kept (self_collision is off)")
        if model is None:
            return
        self.get_logger().info(f"SRDF from {source}: the self-collision pairs follow it")
        self._policy.apply(self._settings, model)
        self._collision_markers_due = True
        if not self._policy.ready:
            self._prepare_solver(model)

    def _on_obstacles(self, message: MarkerArray) -> None:
        """``~/obstacles``: SPHERE, CUBE and CYLINDER markers as obstacles (see
        :mod:`ik_node.ros.obstacle_messages`); refused markers are named in one warning."""
        policy = self._policy
        if policy.model is None:
            self._pending_obstacles = [*self._pending_obstacles[-9:], message]
            return
        state, _ = policy.current(time.monotonic(), warn=False)

        def frame_pose(frame: str, stamp):
            return policy.frame_pose(frame, stamp, state, self._transform, "obstacle marker")

        changed, warnings = self._marker_obstacles.apply(message.markers, frame_pose)
        if warnings:
            self.get_logger().warning("; ".join(warnings), throttle_duration_sec=WARNING_PERIOD)
        if changed:
            policy.set_topic_obstacles(self._marker_obstacles.by_name())
            self._collision_markers_due = True
            self.get_logger().info(
                f"obstacles from ~/obstacles: {len(policy.topic_obstacles)} "
                f"({', '.join(policy.topic_obstacles) or 'none'})",
                throttle_duration_sec=WARNING_PERIOD,
            )

    def _on_joint_state(self, message: JointState) -> None:
        warning = self._policy.on_joint_state(message.name, message.position, time.monotonic())
        if warning:
            self.get_logger().warning(warning, throttle_duration_sec=WARNING_PERIOD)

    def _on_goal(self, tip: str, message: PoseStamped) -> None:
        self._receive_goal(tip, message.pose, message.header)

    def _receive_goal(self, tip: str, pose, header) -> None:
        """A goal from a topic or a goal marker: ``pose`` (``geometry_msgs/Pose``) in
        ``header.frame_id``."""
        try:
            request = GoalRequest(tip, pose_from_message(pose), header.frame_id, header.stamp, header)
        except IKNodeError as error:
            request = GoalRequest(tip, None, header.frame_id, header.stamp, header)
            self._handle(refusal(request, f"goal for '{tip}' refused: {error}"))
            return
        self._handle(self._policy.receive_goal(request, time.monotonic(), self._transform))
        if self._goal_markers is not None and self._policy.ready and tip in self._policy.goals:
            self._goal_markers.move({tip: self._policy.goals[tip]})

    def _on_track_timer(self) -> None:
        self._handle(self._policy.track_step(time.monotonic()))

    # ------------------------------------------------------------------ outputs

    def _handle(self, reply) -> None:
        """Carry out a policy reply: warning, command (through the guard), status, markers."""
        if reply.warning:
            self.get_logger().warning(reply.warning, throttle_duration_sec=WARNING_PERIOD)
        if reply.command is not None:
            self._publish_command(reply.command)
        if reply.status is not None:
            self._publish_status(reply.status)
        if reply.solution is not None:
            self._pending_markers = reply.solution

    def _publish_command(self, command) -> bool:
        """The one place commands leave the node: the policy's limit guard first. The joint
        messages carry the 1-DOF joints (a floating base's pose goes on ~/base_pose)."""
        violation = self._policy.commit(command)
        if violation is not None:
            self.get_logger().error(f"command refused by the limit guard: {violation}")
            self._publish_status(refusal(None, violation, "limit_guard").status)
            return False
        model, settings = self._policy.model, self._settings
        layout = model.layout
        positions = command.q[layout.configuration]
        velocities = None if command.velocity is None else command.velocity[layout.tangent]
        stamp = self.get_clock().now().to_msg()
        self._command_publisher.publish(messages.joint_state(layout.names, positions, stamp, velocities))
        if settings.publish_position_commands:
            self._position_publisher.publish(
                Float64MultiArray(data=[float(command.q[i]) for i in model.command_order])
            )
        self._publish_state()
        self._collision_markers_due = True
        if settings.publish_trajectory:
            period = None if command.velocity is None else 1.0 / settings.publish_rate
            duration = trajectory_duration(  # (the base's motion too: its pose follows the joints')
                command.q,
                command.previous,
                model.max_velocity,
                settings.min_trajectory_duration,
                period,
                model.manifold,
            )
            self._trajectory_publisher.publish(
                messages.joint_trajectory(layout.names, positions, velocities, duration)
            )
        return True

    def _publish_state(self) -> None:
        """``~/joint_states``: the latest command's positions (1-DOF joints), now and at
        ``joint_state_rate`` (as joint_state_publisher does), so that a robot_state_publisher or
        RViz started later shows the robot at once; with a floating or planar base its pose on
        ``~/base_pose`` and as a TF."""
        model, state = self._policy.model, self._policy.state
        if model is None:
            return
        state = model.rest_posture if state is None else state
        stamp = self.get_clock().now().to_msg()
        layout = model.layout
        self._state_publisher.publish(messages.joint_state(layout.names, state[layout.configuration], stamp))
        if not layout.multi_dof:
            return
        tree = model.tree
        poses = tree.link_poses(state)
        transforms = []
        for index, joint in enumerate(layout.multi_dof):
            child = tree.pose_of(poses, joint.child)  # T_base_child
            if index == 0:
                self._base_pose_publisher.publish(messages.pose_stamped(model.base_link, child, stamp))
            parent = tree.pose_of(poses, joint.parent)
            transforms.append(
                messages.transform_stamped(joint.parent, joint.child, inverse(parent) @ child, stamp)
            )
        if self._transform_broadcaster is not None:
            self._transform_broadcaster.sendTransform(transforms)

    def _publish_status(self, status) -> None:
        model = self._policy.model
        self._diagnostics_publisher.publish(
            messages.diagnostic_array(
                f"{self.get_name()}: ik",
                "" if model is None else model.robot.name,
                status,
                self.get_clock().now().to_msg(),
            )
        )

    def _on_marker_timer(self) -> None:
        self._publish_collision_markers()
        if self._pending_markers is None or not self._policy.ready:
            return
        q, success = self._pending_markers
        self._pending_markers = None
        model = self._policy.model
        self._marker_publisher.publish(
            messages.solution_markers(
                model.base_link, self._policy.tips, self._policy.goals, self._policy.tip_poses(q), success
            )
        )

    def _publish_collision_markers(self) -> None:
        """``~/collision_markers`` when something it shows changed (at most at the marker rate):
        the solver's shapes at the state shown and the obstacles while collisions are checked;
        one clearing array when checking stops."""
        policy = self._policy
        if not self._collision_markers_due or not policy.ready:
            return
        self._collision_markers_due = False
        base = policy.model.base_link
        stamp = self.get_clock().now().to_msg()
        if policy.checks_collisions:
            obstacles = policy.obstacles
            self._collision_marker_publisher.publish(
                collision_markers(
                    base,
                    policy.collision_shapes(),
                    [obstacle.name for obstacle in obstacles],
                    stamp,
                )
            )
            self._collision_markers_shown = True
        elif self._collision_markers_shown:
            self._collision_marker_publisher.publish(collision_markers(base, [], stamp=stamp))
            self._collision_markers_shown = False


def _route_python_logs(logger) -> None:
    """Python warnings (URDF problems, the numba fallback) and ik_node's ``logging`` records go
    to the ROS logger, so that they reach /rosout and launch logs."""

    def show(message, category, filename, lineno, file=None, line=None):
        logger.warning(f"{category.__name__}: {message}")

    class RosHandler(logging.Handler):
        def emit(self, record):  # one call site per severity: rclpy refuses a site changing it
            if record.levelno >= logging.ERROR:
                logger.error(record.getMessage())
            elif record.levelno >= logging.WARNING:
                logger.warning(record.getMessage())
            else:
                logger.info(record.getMessage())

    warnings.showwarning = show
    python_logger = logging.getLogger("ik_node")
    python_logger.handlers = [RosHandler()]
    python_logger.setLevel(logging.INFO)
    python_logger.propagate = False


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
        try:
            node = IKNode(override_names=overridden_names(arguments))
        except (
            IKNodeError,
            rclpy.exceptions.InvalidParameterTypeException,
            rclpy.exceptions.InvalidParameterValueException,
        ) as error:  # an unusable configuration at start-up (at run time, errors are replies)
            print(f"ik_node: {error}", file=sys.stderr)
            return 2
        executor.add_node(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
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
