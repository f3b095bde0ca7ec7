"""The ik_node ROS 2 node: ``geometry_msgs/PoseStamped`` goals in, ``sensor_msgs/JointState``
commands out, with joint limits from parameters.

Topics, services and parameters around :class:`ik_node.decisions.policy.IKPolicy` (every decision: goals,
seeds, readiness, pause, tracking steps) and :mod:`ik_node.ros.messages` (every outgoing message).

Topics (``~`` is the node's name; all remappable):

* in: ``~/target_pose`` (one tip) or ``~/<tip>/target_pose`` (several), and for a gaze tip the
  point to look at on ``~/target_point`` or ``~/<tip>/target_point``, best effort (it matches
  reliable and best-effort publishers), depth 1 so the latest goal wins; in track mode
  ``~/delta_twist_cmds`` (``TwistStamped``) and ``~/delta_joint_cmds`` (``control_msgs/JointJog``
  where importable), the same QoS (:mod:`ik_node.ros.node_streams`); ``/joint_states`` (the
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
  while collisions are checked), ``/diagnostics`` (one status per goal), ``~/status``
  (``DiagnosticStatus``: the servo's state in track mode, when it changes).

Services: ``~/enable`` (``std_srvs/SetBool``), ``~/reset`` (``std_srvs/Trigger``), and
``compute_ik_service_name`` (default ``~/compute_ik``: ``moveit_msgs/srv/GetPositionIK`` where
moveit_msgs is importable, :mod:`ik_node.ros.compute_ik_service` over
:mod:`ik_node.decisions.compute_ik`; it never commands).

Start-up: the description is loaded and the rest posture published within a second; the solver
is built on a background thread (a second or two; after an install it answers as plain Python
while a helper process compiles its kernels); goals arriving meanwhile are answered when it is
ready. Works on Humble (no post-set parameter
callback there: changes are applied in the validating callback).
"""

from __future__ import annotations

import logging
import signal
import sys
import time
import warnings

import rclpy
from geometry_msgs.msg import PointStamped, Pose, PoseStamped
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

from ..decisions.command_line import overridden_names
from ..decisions.conversions import pose_from_message
from ..decisions.parameters import NodeSettings
from ..decisions.planning import description_path
from ..decisions.policy import IKPolicy
from ..decisions.readiness import SolverReadiness
from ..decisions.replies import GoalRequest, Reply, refusal
from ..description import load_robot, xacro_arguments
from ..errors import IKNodeError
from .frames import transform_lookup
from .interactive_goals import interactive_goals
from .node_commands import CommandOutput
from .node_feedback import LATCHED_QOS, WARNING_PERIOD, NodeFeedback
from .node_parameters import NodeParameters
from .node_services import NodeServices
from .node_streams import StreamInputs
from .obstacle_messages import MarkerObstacles
from .scene_messages import SceneObstacles

#: Goals: BEST_EFFORT matches every publisher, reliable or best effort (teleop and high-rate
#: streams often are; a RELIABLE subscription never connects to them), VOLATILE matches volatile
#: and transient-local ones; depth 1, the latest goal wins (older ones are stale anyway).
GOAL_QOS = QoSProfile(
    depth=1,
    history=HistoryPolicy.KEEP_LAST,
    reliability=ReliabilityPolicy.BEST_EFFORT,
    durability=DurabilityPolicy.VOLATILE,
)


class IKNode(Node):
    """The ik_node node. See the module docstring for topics, docs/node.md for parameters.

    Its parts, one concern each: :class:`~ik_node.ros.node_parameters.NodeParameters`
    (declared, validated on set, installed after), :class:`~ik_node.ros.node_commands.CommandOutput`
    (commands through the limit guard, the state shown),
    :class:`~ik_node.ros.node_feedback.NodeFeedback` (``/diagnostics``, ``~/ready``, markers),
    :class:`~ik_node.ros.node_services.NodeServices` and
    :class:`~ik_node.decisions.readiness.SolverReadiness` (the solver prepared off the executor);
    every decision is the policy's (:class:`~ik_node.decisions.policy.IKPolicy`). This class wires them:
    the subscriptions and what comes on them (the robot description, goals, ``/joint_states``, the
    SRDF, obstacles), the parameter callbacks, the timers."""

    def __init__(self, override_names: frozenset = frozenset(), **options):
        """``override_names``: the parameters the command line sets (:func:`overridden_names`),
        so that entries for joints or tips the node does not have are named in a warning."""
        super().__init__("ik_node", **options)
        _route_python_logs(self.get_logger())
        self._node_parameters = NodeParameters(self, override_names)
        tips = self._node_parameters.declare()
        self._policy = policy = IKPolicy(tips, self._node_parameters.settings)
        self._model_state = policy.model_state  # the parameters and the model in use (one object)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        if hasattr(self, "add_post_set_parameters_callback"):  # Iron and later; Humble applies on set
            self.add_post_set_parameters_callback(lambda parameters: self._apply_parameters())
        self._marker_obstacles, self._scene_obstacles = MarkerObstacles(), SceneObstacles()
        self._pending_obstacles: list = []  # (reader, message) that came before the robot description
        self._feedback = NodeFeedback(self, policy)
        self._commands = CommandOutput(self, policy, self._feedback)
        self.create_subscription(
            MarkerArray,
            "~/obstacles",
            lambda message: self._on_obstacles(self._marker_obstacles, message),
            10,
        )
        self._subscribe_planning_scene(self._settings.planning_scene_topic)
        self.create_subscription(String, "/robot_description_semantic", self._on_semantic, LATCHED_QOS)
        self.create_subscription(JointState, "/joint_states", self._on_joint_state, 10)
        for tip in tips:
            prefix = "~/" if len(tips) == 1 else f"~/{tip}/"
            self.create_subscription(
                PoseStamped,
                prefix + "target_pose",
                lambda message, tip=tip: self._on_goal(tip, message),
                GOAL_QOS,
            )
            self.create_subscription(
                PointStamped,
                prefix + "target_point",
                lambda message, tip=tip: self._on_point_goal(tip, message),
                GOAL_QOS,
            )
        self._rate_timers = []
        self._reset_timers()
        self._transform, why = transform_lookup(self, self._settings.transform_timeout)
        if why:
            self.get_logger().info(why)
        self._goal_markers = None
        if self._settings.interactive_markers:
            self._goal_markers, why = interactive_goals(self, self._receive_goal, lambda: self._settings.mode)
            if why:
                self.get_logger().info(why)
        self._streams = StreamInputs(self, policy, self._handle, self._transform, GOAL_QOS)
        self._readiness = SolverReadiness(self, policy, self._feedback, self._handle, self._transform)
        self._node_services = NodeServices(
            self,
            policy,
            self._commands,
            self._goal_markers,
            self._transform,
            self._settings.compute_ik_service_name,
            self._settings.cartesian_path_service_name,
        )
        self._load_initial_description()

    @property
    def _settings(self) -> NodeSettings:
        return self._model_state.settings

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
        The robot is shown at once; the solver follows (:meth:`SolverReadiness.prepare
        <ik_node.decisions.readiness.SolverReadiness.prepare>`)."""
        settings, policy = self._settings, self._policy
        try:
            robot = load_robot(
                description.encode() if isinstance(description, str) else description,
                package_paths=list(settings.package_paths),
                xacro_args=xacro_arguments(settings.xacro_args, "parameter xacro_args"),
                root_joint=settings.root_joint or None,
            )
            self._model_state.settings = self._node_parameters.declare_joints(
                robot.tree(settings.base_link or robot.root, policy.tips)
            )
            model = self._model_state.plan(robot)
        except IKNodeError as error:
            self._model_state.description_error = f"robot description from {source} refused: {error}"
            self.get_logger().error(self._model_state.description_error)
            return
        for warning in model.warnings:
            self.get_logger().warning(warning)
        rest = policy.install(model)
        self._feedback.show_solution(None)  # (drawn for the old model's joints)
        self._feedback.collision_markers_due = True
        pending, self._pending_obstacles = self._pending_obstacles, []
        for reader, message in pending:  # (obstacles in the robot's frames need its model)
            self._on_obstacles(reader, message)
        layout = model.layout
        bases = "".join(
            f", {joint.type} joint '{joint.name}' ({joint.parent} -> {joint.child}, pose on ~/base_pose)"
            for joint in layout.multi_dof
        )
        self.get_logger().info(
            f"robot '{robot.name}' loaded from {source}: {model.base_link} -> {policy.tips}, "
            f"joints {list(layout.names)}{bases}"
        )
        self._commands.use_model(model)
        self._node_parameters.warn_unused(model, policy.tips)
        if rest is not None:
            self._commands.publish(rest)
        else:
            self._commands.publish_state()
        if self._goal_markers is not None:  # at the tips' controlled points now (fresh /joint_states)
            self._goal_markers.show(model.base_link, policy.tip_poses(policy.current(time.monotonic())[0]))
        self._readiness.prepare(model)

    # ------------------------------------------------------------------ parameters and timers

    def _on_set_parameters(self, parameters):
        """A change validated as a whole (:meth:`NodeParameters.validate`); installed by
        :meth:`_apply_parameters` after the set, or here on Humble (no post-set callback)."""
        result = self._node_parameters.validate(parameters, self._model_state)
        if result.successful and not hasattr(self, "add_post_set_parameters_callback"):
            self._apply_parameters()
        return result

    def _apply_parameters(self) -> None:
        """Install what :meth:`_on_set_parameters` validated: the values, the new model (used from
        the next solve), the timers when a rate or the mode changed."""
        change = self._node_parameters.take_change()
        if change is None:
            return
        if self._policy.apply(*change):
            self._reset_timers()
        self._feedback.collision_markers_due = True

    def _reset_timers(self) -> None:
        for timer in self._rate_timers:
            self.destroy_timer(timer)
        self._rate_timers = []
        settings = self._settings
        if settings.mode == "track":
            self._rate_timers.append(self.create_timer(1.0 / settings.publish_rate, self._on_track_timer))
        if settings.joint_state_rate > 0.0:
            self._rate_timers.append(
                self.create_timer(1.0 / settings.joint_state_rate, self._commands.publish_state)
            )

    # ------------------------------------------------------------------ inputs

    def _on_semantic(self, message: String) -> None:
        """An SRDF on ``/robot_description_semantic``: used while the parameter is empty (a bad
        one is refused with the reason; the solver in use stays)."""
        source = "/robot_description_semantic"
        try:
            model = self._model_state.receive_semantic(message.data, source)
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
        self._feedback.collision_markers_due = True
        if not self._model_state.ready:
            self._readiness.prepare(model)

    def _subscribe_planning_scene(self, topic: str) -> None:
        """The planning scene's collision objects as obstacles (``planning_scene_topic``, where
        moveit_msgs is importable; :mod:`ik_node.ros.scene_messages`)."""
        if not topic:
            return
        try:
            from moveit_msgs.msg import PlanningScene
        except ImportError:
            self.get_logger().info(f"planning_scene_topic '{topic}' is not read: it needs moveit_msgs")
            return
        self.create_subscription(
            PlanningScene, topic, lambda message: self._on_obstacles(self._scene_obstacles, message), 100
        )

    def _on_obstacles(self, reader, message) -> None:
        """Obstacles from ``~/obstacles`` (``reader`` a :class:`MarkerObstacles`: SPHERE, CUBE and
        CYLINDER markers) or the planning scene (a :class:`SceneObstacles`); what is refused is
        named in one warning. The solver avoids both sets."""
        policy = self._policy
        if self._model_state.model is None:
            self._pending_obstacles = [*self._pending_obstacles[-9:], (reader, message)]
            return
        state, _ = policy.current(time.monotonic(), warn=False)

        def frame_pose(frame: str, stamp):
            return policy.frame_pose(frame, stamp, state, self._transform, "obstacle")

        markers = reader is self._marker_obstacles
        changed, warnings = reader.apply(message.markers if markers else message, frame_pose)
        if warnings:
            self.get_logger().warning("; ".join(warnings), throttle_duration_sec=WARNING_PERIOD)
        if changed:
            self._model_state.set_topic_obstacles(
                self._marker_obstacles.by_name() | self._scene_obstacles.by_name()
            )
            self._feedback.collision_markers_due = True
            source = "~/obstacles" if markers else self._settings.planning_scene_topic
            names = list(reader.by_name())
            self.get_logger().info(
                f"obstacles from {source}: {len(names)} ({', '.join(names) or 'none'})",
                throttle_duration_sec=WARNING_PERIOD,
            )

    def _on_joint_state(self, message: JointState) -> None:
        warning = self._policy.joint_states.receive(message.name, message.position, time.monotonic())
        if warning:
            self.get_logger().warning(warning, throttle_duration_sec=WARNING_PERIOD)

    def _on_goal(self, tip: str, message: PoseStamped) -> None:
        self._receive_goal(tip, message.pose, message.header)

    def _on_point_goal(self, tip: str, message: PointStamped) -> None:
        """A point for a gaze tip to look at: the goal is the pose at that point (no rotation)."""
        self._receive_goal(tip, Pose(position=message.point), message.header, point=True)

    def _receive_goal(self, tip: str, pose, header, point: bool = False) -> None:
        """A goal from a topic or a goal marker: ``pose`` (``geometry_msgs/Pose``) in
        ``header.frame_id`` (``point``: a point to look at, from ``target_point``)."""
        try:
            request = GoalRequest(tip, pose_from_message(pose), header.frame_id, header.stamp, header, point)
        except IKNodeError as error:
            request = GoalRequest(tip, None, header.frame_id, header.stamp, header, point)
            self._handle(refusal(request, f"goal for '{tip}' refused: {error}"))
            return
        self._handle(self._policy.receive_goal(request, time.monotonic(), self._transform))
        if self._goal_markers is not None and self._model_state.ready and tip in self._policy.goals:
            self._goal_markers.move({tip: self._policy.goals_in_base()[tip]})

    def _on_track_timer(self) -> None:
        self._handle(self._policy.track_step(time.monotonic()))

    def _handle(self, reply: Reply) -> None:
        """Carry out a policy reply: warning, command (through the guard), status, markers."""
        if reply.warning:
            self.get_logger().warning(reply.warning, throttle_duration_sec=WARNING_PERIOD)
        if reply.command is not None:
            self._commands.publish(reply.command)
        if reply.status is not None:
            self._feedback.publish_status(reply.status)
        if reply.solution is not None:
            self._feedback.show_solution(reply.solution)
        if reply.servo_status is not None:
            self._feedback.publish_servo_status(reply.servo_status)


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
    interrupt_handler = _stop_without_keyboard_interrupt()
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
        if interrupt_handler is not None:
            signal.signal(signal.SIGINT, interrupt_handler)
    return 0


def _stop_without_keyboard_interrupt():
    """Let a SIGINT stop the node as a SIGTERM does, and return Python's SIGINT handler it
    replaced (None where this thread cannot set one).

    rclpy's handler (installed by ``rclpy.init``, after this) shuts the context down, so that the
    executor stops between callbacks, then calls the handler it found: Python's, which raises
    ``KeyboardInterrupt`` at whatever line runs. Once that line was in rclpy's ``Task``
    constructor (Jazzy), and the half-made task's finaliser printed a traceback at exit. The
    handler set here does nothing: the context's shutdown alone stops the node."""
    try:
        return signal.signal(signal.SIGINT, lambda signal_number, frame: None)
    except ValueError:  # not the main thread: Python's handler stays
        return None


if __name__ == "__main__":
    sys.exit(main())
