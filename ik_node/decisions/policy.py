"""What the node decides, free of rclpy: which goal is solved from which seed, readiness, pause
and reset, and each tracking step.

:class:`IKPolicy` answers each event with a :class:`~ik_node.decisions.replies.Reply`: a
:class:`~ik_node.decisions.replies.Command` to publish (after the limit guard, :meth:`IKPolicy.commit`),
a :class:`~ik_node.decisions.replies.Status` for ``/diagnostics``, a warning to log. The node
(:mod:`ik_node.ros.node`) turns messages into these calls and replies into messages; tests drive
the policy directly, without ROS. Its parts, one concern each:

* :class:`~ik_node.decisions.model_state.ModelState` (``model_state``): the parameters, the
  model a description and they make (:mod:`ik_node.decisions.planning`), readiness, the SRDF and
  obstacles from topics;
* :class:`~ik_node.decisions.robot_state.JointStateInput` (``joint_states``): the latest
  ``/joint_states`` (its ``receive``), the seed they make, goal frames through the model's FK or
  tf2;
* :class:`~ik_node.decisions.motion.Motion` (``motion``): each solve's command or joint goal, the
  tracking steps, the limit guard and the last command (``last_command``, ``state``, ...).

This class holds the goals (the latest per tip, in the base frame; those that came while the
solver was being built) and the pause, and says which part answers what; its parts are read
directly (``policy.model_state.model``, ``policy.motion.last_command``), and its methods are the
events that involve more than one part (a new model, a goal, a step, a reset).

Readiness: the :class:`~ik_node.IKSolver` (a second or two to build; after an install it answers
as plain Python while its kernels compile) is attached after the model
(:meth:`IKPolicy.attach_solver`). Goals arriving meanwhile are kept, the latest per tip, and
answered when the solver is attached.

Units: m, rad, s (times are ``time.monotonic()`` seconds); joint vectors in the model's
``joint_names`` order (configuration coordinates: a floating base's ``root_joint/x`` ...
``root_joint/qw`` included), velocities in its tangent order; poses are 4x4 ``T_base_frame``
matrices. A floating or planar base's coordinates are never read from ``/joint_states`` (the seed
takes them from the last command, else the rest posture).
"""

from __future__ import annotations

import numpy as np

from ..errors import IKNodeError
from ..lie import inverse
from ..servo import WAITING_FOR_KERNELS, ServoStatus
from ..solver import IKSolver
from .model_state import ModelState
from .motion import REFUSED, Motion
from .parameters import NodeSettings
from .planning import Model
from .replies import Command, GoalRequest, Reply, Status, refusal
from .robot_state import FrameLookup, JointStateInput
from .streams import JogRequest, jog_command, twist_command, twist_tip

__all__ = ["IKPolicy"]


class IKPolicy:
    """The node's decisions for the tips ``tips`` under ``settings``: the model in use and the
    parameters (``model_state``: its ``settings`` replaced whole by :meth:`apply`), ``goals``
    (``{tip: T_base_goal}``), ``pending`` (``{tip: GoalRequest}`` kept while the solver is
    prepared), ``enabled`` (false: paused), the latest ``/joint_states`` (``joint_states``) and the
    commands (``motion``: a new one per model)."""

    def __init__(self, tips, settings: NodeSettings):
        self.model_state = ModelState(settings)
        self.tips = list(tips)
        self.goals: dict[str, np.ndarray] = {}
        self.pending: dict[str, GoalRequest] = {}
        self.enabled = True
        self.joint_states = JointStateInput()
        self.motion = Motion()

    # ------------------------------------------------------------------ model and readiness

    def install(self, model: Model) -> Command | None:
        """A new description's model (:meth:`ModelState.install`): goals and commands of the old
        one are forgotten (goals waiting for readiness are kept). Returns the rest-posture command
        to publish when ``publish_rest_posture_at_start``."""
        self.model_state.install(model)
        self.goals = {}
        self.motion = Motion()
        if self.model_state.settings.publish_rest_posture_at_start:
            return Command(model.rest_posture.copy(), None, model.rest_posture.copy())
        return None

    def apply(self, settings: NodeSettings, model: Model | None) -> bool:
        """:meth:`ModelState.apply` (true when the mode or a rate changed); a mode change with a
        new model drops the tracking goal."""
        mode = self.model_state.settings.mode
        changed = self.model_state.apply(settings, model)
        if model is not None and settings.mode != mode:
            self.motion.joint_goal = None
        return changed

    def attach_solver(self, solver: IKSolver) -> list[GoalRequest]:
        """The solver is ready (:meth:`ModelState.attach_solver`): returns the goals kept
        meanwhile (answer them in this order)."""
        self.model_state.attach_solver(solver)
        waiting, self.pending = list(self.pending.values()), {}
        return waiting

    def preparation_failed(self, error: Exception) -> list[Reply]:
        """The solver could not be built: the goals kept meanwhile are answered with the reason,
        and later ones refused with it until a new description is installed."""
        why = self.model_state.solver_error = f"the IK solver could not be built: {error}"
        waiting, self.pending = list(self.pending.values()), {}
        return [refusal(request, why, "no_solver") for request in waiting]

    # ------------------------------------------------------------------ inputs

    def current(self, now: float, warn: bool = True) -> tuple[np.ndarray, str | None]:
        """The seed and a warning (once per staleness; none without ``warn``): fresh
        ``/joint_states`` (by name, 1-DOF joints only), else the last command, else the rest
        posture (a floating base's coordinates always from the last command or the rest
        posture)."""
        model, settings = self.model_state.model, self.model_state.settings
        last = self.motion.last_command
        fallback = model.rest_posture if last is None else last
        return self.joint_states.current(model, fallback, settings.joint_state_timeout, now, warn)

    def seed(self, now: float) -> tuple[np.ndarray, str | None]:
        """Track mode steps from its own last command (consecutive commands then respect the
        velocity limits); solve mode seeds from the current state."""
        if self.model_state.settings.mode == "track" and self.motion.last_command is not None:
            return self.motion.last_command.copy(), None
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
        """``T_base_frame`` of the model at ``state`` (:meth:`JointStateInput.frame_pose`)."""
        return self.joint_states.frame_pose(
            self.model_state.model, frame, stamp, state, transform, what, others
        )

    def receive_goal(self, request: GoalRequest, now: float, transform: FrameLookup | None = None) -> Reply:
        """A goal for ``request.tip``: refused (paused, no description, bad frame), kept until the
        solver is ready, or solved with the other tips' latest goals."""
        model_state = self.model_state
        if not self.enabled:
            why = "the node is paused (~/enable false)"
            return Reply(Status(False, "paused", why, goal=request), warning=f"goal ignored: {why}")
        if model_state.model is None:
            why = model_state.description_error or (
                "no robot description yet (parameter robot_description, robot_description_file or "
                "topic /robot_description)"
            )
            return Reply(
                Status(False, "no_robot_description", why, goal=request), warning=f"goal ignored: {why}"
            )
        if not model_state.ready and model_state.solver_error:
            return refusal(request, model_state.solver_error, "no_solver")
        kind = model_state.settings.tip_tasks.get(request.tip, "pose")
        if request.point and kind != "gaze":
            return refusal(
                request,
                f"goal for '{request.tip}' refused: a point goal (target_point) is for a gaze task, and "
                f"tip_tasks.{request.tip} is '{kind}' (send a pose on target_pose, or set it to 'gaze')",
            )
        if not model_state.ready:
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
            return refusal(request, f"goal for '{request.tip}' refused: {error}")
        reference = model_state.settings.tip_relative_to.get(request.tip, "")
        if reference:  # (kept as the pose relative to the reference as it is now)
            goal = inverse(self.tip_poses(seed)[reference]) @ goal
        self.goals[request.tip] = goal
        reply = self.motion.solve(model_state.model, model_state.settings, self.goals, seed, request)
        if stale and reply.warning is None:
            reply.warning = stale
        return reply

    def receive_stream(self, request, now: float, transform: FrameLookup | None = None) -> Reply:
        """A twist or a jog (:class:`~ik_node.decisions.streams.TwistRequest`, ``JogRequest``):
        made the servo's command, followed from the next period on (the latest command of any kind
        wins); refused, the last good command kept, when paused, without a description or solver,
        in solve mode, or when bad (not finite, an unknown joint, a frame without a transform);
        while the solver is prepared, the arm holds (``waiting_for_kernels``)."""
        model_state = self.model_state
        why = None
        if not self.enabled:
            why = "the node is paused (~/enable false)"
        elif model_state.model is None:
            why = model_state.description_error or "no robot description yet"
        elif model_state.settings.mode != "track":
            why = "twists and jogs are followed in track mode only: set the parameter mode to 'track'"
        elif not model_state.ready and not model_state.solver_error:
            why = (
                "the IK kernels are being prepared (compiled once after an install): the arm holds at rest, "
                "streaming starts when the compiled kernels serve"
            )
            return Reply(servo_status=ServoStatus(WAITING_FOR_KERNELS, why), warning=why)
        elif not model_state.ready:
            why = model_state.solver_error
        if why is None:
            try:
                command = self._stream_command(request, now, transform)
            except IKNodeError as error:
                why = str(error)
        if why is not None:
            return Reply(servo_status=ServoStatus(REFUSED, f"command refused: {why}"), warning=why)
        self.motion.receive_stream(command, now)
        return Reply()

    def _stream_command(self, request, now: float, transform: FrameLookup | None):
        model = self.model_state.model
        if isinstance(request, JogRequest):
            return jog_command(request, model.layout.names)
        tip = twist_tip(self.model_state.settings, self.tips)

        def frame_rotation(frame: str, stamp) -> np.ndarray:
            state, _ = self.seed(now)
            return self.frame_pose(frame, stamp, state, transform, "twist")[:3, :3]

        return twist_command(request, tip, model.base_link, frame_rotation)

    # ------------------------------------------------------------------ commands

    def track_step(self, now: float) -> Reply:
        """One servo period from the seed (:meth:`Motion.track_step`); nothing until ready, nor
        at rest with no joint goal and no stream (the seed is not read then: a staleness warning
        waits for a goal)."""
        model_state, motion = self.model_state, self.motion
        if not model_state.ready or (
            motion.joint_goal is None and motion.stream is None and not motion.moving
        ):
            return Reply()
        return motion.track_step(model_state.model, model_state.settings, self.seed(now)[0], now)

    def commit(self, command: Command) -> str | None:
        """The limit guard every command passes (:meth:`Motion.commit`): why it must not be
        published, or None, and then it is the last command."""
        return self.motion.commit(self.model_state.model, command)

    # ------------------------------------------------------------------ services and display

    def set_enabled(self, enabled: bool) -> tuple[str, Command | None]:
        """``~/enable``: false pauses (goals are refused; track mode stops where it is, with one
        stop command if it was moving), true resumes. Returns the message and the stop command."""
        if enabled == self.enabled:
            return f"already {'enabled' if enabled else 'paused'}", None
        self.enabled = enabled
        if enabled:
            return "enabled: goals are solved", None
        return "paused: goals are refused", self.motion.stop(self.model_state.model)

    def reset(self) -> tuple[bool, str]:
        """``~/reset``: forget the goals and the last command, so that the next solve is seeded
        from ``/joint_states`` (or the rest posture when none are fresh)."""
        if self.model_state.model is None:
            return False, "nothing to reset: no robot description yet"
        self.goals, self.pending = {}, {}
        self.motion.forget()
        return True, "goals forgotten; the next goal is seeded from /joint_states"

    def collision_shapes(self) -> list:
        """The solver's collision shapes at the state shown (the rest posture before any
        command), robot and obstacles, in the base frame; empty without a solver."""
        if not self.model_state.ready:
            return []
        model, state = self.model_state.model, self.motion.state
        return model.solver.collision_shapes(model.rest_posture if state is None else state)

    def tip_poses(self, q: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """``{tip: T_base_point}`` at ``q`` (default: the state shown, else the rest posture): the
        pose of each tip's controlled point, the tip's frame moved by its ``tip_offsets`` (x y z
        [m] in the tip's frame, axes unchanged). A goal for the tip sets this pose, so the goal
        markers start here and the reached arrows are drawn here."""
        model, state = self.model_state.model, self.motion.state
        q = (model.rest_posture if state is None else state) if q is None else q
        poses = model.tree.link_poses(q)
        points = {}
        for tip in self.tips:
            point = model.tree.pose_of(poses, tip)
            point[:3, 3] += point[:3, :3] @ np.asarray(model.options.tasks[tip].offset)
            points[tip] = point
        return points

    def goals_in_base(self, q: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """``{tip: T_base_goal}`` of the goals kept, a relative tip's (``tip_relative_to``) placed on
        its reference's controlled point at ``q`` (default: the state shown): what the markers
        draw."""
        relative_to = self.model_state.settings.tip_relative_to
        if not any(relative_to.get(tip) for tip in self.goals):
            return self.goals
        points = self.tip_poses(q)
        return {
            tip: points[relative_to[tip]] @ goal if relative_to.get(tip) else goal
            for tip, goal in self.goals.items()
        }
