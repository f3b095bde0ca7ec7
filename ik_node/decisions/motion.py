"""What the robot is commanded to do, free of rclpy: each solve's answer as a command (solve
mode; with ``straight_line_goals`` the tip's timed straight line) or a joint goal (track mode),
the streams of twists and jogs, each track-mode period through the servo
(:class:`ik_node.servo.Servo`: the latest command of any kind), and the limit guard every
command passes before it becomes the last one.

Units: m, rad, s; configurations in the model's ``joint_names`` order, velocities [rad/s, m/s]
in its tangent order. Track mode steps on the configuration manifold (tangent displacements,
``q (+) dq``, for a floating or planar base), every joint within its position, velocity and
acceleration limits, the base's twist within ``base_max_linear_velocity`` /
``base_max_angular_velocity``, all scaled by one factor (the motion keeps its direction).

A goal without a collision-free answer (reason ``collision``), or with answers on other branches
only (``off_branch``, a fixed ``branch``), publishes nothing, even with ``publish_best_effort``:
the last command stays.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from ..errors import IKNodeError
from ..servo import REACHED as GOAL_REACHED
from ..servo import JointGoalCommand, ServoCommandError, ServoState, ServoStatus
from .branch_choice import OFF_BRANCH, solve_goal
from .control import command_violation, singularity_scale_toward
from .parameters import NodeSettings
from .planning import Model
from .replies import Command, GoalRequest, Reply, Status

__all__ = [
    "COLLISION",
    "JOINT_MOVE",
    "LATE",
    "REACHED",
    "REFUSED",
    "STREAM_TIMEOUT",
    "Motion",
    "node_result",
    "path_limits",
]

#: Joint motion [rad, m] below which a tracked goal counts as reached.
REACHED = 1e-9
#: Servo status codes the node adds to :mod:`ik_node.servo`'s: a step that missed its period
#: (slowing to rest instead), a stream that stopped, a command refused.
LATE, STREAM_TIMEOUT, REFUSED = "late", "stream_timeout", "refused"
STREAM_TIMEOUT_TEXT = "the twist or jog stream stopped (incoming_command_timeout): coming to rest"
#: The solver's reason for a goal whose answers all collide (no command is published).
COLLISION = "collision"
#: The solver's reason for an answer that reaches the goal but moves a joint farther than
#: ``max_joint_move`` from the seed (the nearest it found).
JOINT_MOVE = "joint_move"


def node_result(result):
    """The node's reading of a solve's :class:`~ik_node.solver.IKResult`: its ``max_joint_move``
    stays a preference (the search looks near the current state first; a goal that truly needs a
    larger move is still reached, as before the solver's bound became a guarantee), so an answer
    the solver refuses only for its move (``joint_move``: it reaches the goal) counts as a
    success."""
    return replace(result, success=True, reason="success") if result.reason == JOINT_MOVE else result


def path_limits(model: Model, settings: NodeSettings, velocity_scale=1.0, acceleration_scale=1.0) -> dict:
    """``cartesian_path``'s timing limits for the node's lines: ``max_velocity`` the model's (the
    URDF's and ``joint_limits.<joint>.max_velocity``) and ``max_acceleration``
    (``joint_limits.<joint>.max_acceleration``, else ``straight_line_acceleration``), by tangent
    name [rad/s, m/s; rad/s^2, m/s^2], times the scales (MoveIt's scaling factors, 0..1)."""
    acceleration = np.where(
        np.isfinite(model.max_acceleration), model.max_acceleration, settings.straight_line_acceleration
    )
    names = model.tree.tangent_names
    return {
        "max_acceleration": dict(zip(names, acceleration_scale * acceleration)),
        "max_velocity": dict(zip(names, velocity_scale * model.max_velocity)),
    }


class Motion:
    """The commands of one model: ``last_command`` (a configuration; track mode's seed),
    ``last_velocity`` (its tangent velocity, None in solve mode), ``joint_goal`` (where track
    mode's steps lead, None when there) and ``state`` (what ``~/joint_states`` repeats: the last
    command, kept by a reset)."""

    def __init__(self):
        self.last_command: np.ndarray | None = None
        self.last_velocity: np.ndarray | None = None
        self.joint_goal: np.ndarray | None = None
        self.state: np.ndarray | None = None
        self.stream = None  # the latest twist or jog (ik_node.servo.commands), None without
        self.stream_time = -np.inf  # when it came [monotonic s]
        self.held: np.ndarray | None = None  # the poses the other tips hold while one is twisted
        self.missed_deadlines = 0

    @property
    def moving(self) -> bool:
        """Whether the last command had a velocity other than zero (a stop is then due)."""
        return self.last_velocity is not None and bool(np.any(self.last_velocity))

    def forget(self) -> None:
        """Forget the last command, the joint goal and the stream (the state shown stays)."""
        self.last_command = self.last_velocity = self.joint_goal = self.stream = self.held = None

    def solve(
        self, model: Model, settings: NodeSettings, goals: dict, seed: np.ndarray, request: GoalRequest | None
    ) -> Reply:
        """Solve ``goals`` (``{tip: T_base_goal}``) from ``seed`` (the solver's answer, or the
        ``branch``'s: :mod:`ik_node.decisions.branch_choice`): in solve mode a command, in track mode a
        new joint goal for :meth:`track_step`; a failed solve publishes the closest configuration
        only with ``publish_best_effort``. With ``straight_line_goals`` in solve mode, the tip's
        straight line instead (:meth:`straight_line`)."""
        if settings.straight_line_goals and settings.mode == "solve":
            return self.straight_line(model, settings, goals, seed, request)
        try:
            result = node_result(solve_goal(model.solver, goals, seed, settings.timeout, settings.branch))
        except (
            IKNodeError
        ) as error:  # e.g. a locked joint's state outside its limits; a branch without labels
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
        # (no collision-free answer, nothing on the branch: the last command stays, even with
        # publish_best_effort)
        publish = result.success or (
            settings.publish_best_effort and result.reason not in (COLLISION, OFF_BRANCH)
        )
        reply = Reply(
            Status(result.success, result.reason, "", details, request), solution=(result.q, result.success)
        )
        if result.reason == COLLISION and not result.success:
            reply.warning = (
                "no collision-free solution for the goal within the timeout (self-collision or an obstacle, "
                f"collision_margin {settings.collision_margin} m): no command published, the last one stays"
            )
        elif result.reason == OFF_BRANCH:
            reply.warning = (
                f"no solution on branch '{settings.branch}' reaches the goal inside the limits (and free of "
                "collisions, where they are checked): no command published, the last one stays"
            )
        elif not result.success:
            reply.warning = (
                f"no solution for the goal ({result.reason}): position error {result.position_error:.3g} m, "
                f"orientation error {result.orientation_error:.3g} rad"
                + ("; publishing the closest configuration found" if publish else "; no command published")
            )
        if publish:
            if settings.mode == "track":
                self.joint_goal, self.stream, self.held = result.q, None, None
            else:
                reply.command = Command(result.q, None, seed)
        return reply

    def straight_line(
        self, model: Model, settings: NodeSettings, goals: dict, seed: np.ndarray, request: GoalRequest | None
    ) -> Reply:
        """The one tip from its pose at ``seed`` to its goal on a straight line
        (:meth:`ik_node.IKSolver.cartesian_path`), timed within the velocity limits and the
        accelerations (``joint_limits.<joint>.max_acceleration``, else
        ``straight_line_acceleration``): a command carrying the timed path. A line that ends
        before the goal (out of reach, a limit, a singularity, a jump) is refused with its reason
        and fraction: nothing moves."""
        if len(goals) != 1 or len(model.tree.tip_links) != 1:
            why = "straight_line_goals takes one tip; this node has " + str(list(model.tree.tip_links))
            return Reply(Status(False, "invalid_goal", why, goal=request), warning=why)
        try:
            path = model.solver.cartesian_path(
                next(iter(goals.values())), seed=seed, **path_limits(model, settings)
            )
        except IKNodeError as error:
            return Reply(
                Status(False, "invalid_goal", str(error), goal=request), warning=f"line refused: {error}"
            )
        details = {
            "fraction": f"{path.fraction:.4f}",
            "points": str(len(path.q)),
            "duration": f"{path.duration:.3f}",
        }
        if path.reason != "complete":
            why = (
                f"the straight line to the goal ends at {100.0 * path.fraction:.1f} % of it ({path.reason}): "
                "no command published, the last one stays"
            )
            return Reply(Status(False, path.reason, why, details, request), warning=why)
        reply = Reply(Status(True, "success", "", details, request), solution=(path.q[-1], True))
        reply.command = Command(path.q[-1], None, seed, path)
        return reply

    def receive_stream(self, command, now: float) -> None:
        """A twist or jog (:mod:`ik_node.servo.commands`) at ``now`` (monotonic s): the latest
        command of any kind wins, so a joint goal is dropped."""
        self.stream, self.stream_time, self.joint_goal = command, now, None

    def track_step(self, model: Model, settings: NodeSettings, q: np.ndarray, now: float) -> Reply:
        """One servo period (``1/publish_rate`` s) from ``q`` (:class:`~ik_node.servo.Servo`):
        the latest twist or jog while its stream is fresh (older than
        ``incoming_command_timeout``: to rest), else a step toward ``joint_goal`` slowed near
        singularities (MoveIt Servo's condition-number rule); every command within the position,
        velocity and acceleration limits. A step computed later than its period is not
        published: a step to rest from the last command is (counted in ``missed_deadlines``).
        Nothing once at rest with nothing to follow."""
        period = 1.0 / settings.publish_rate
        servo, command, timed_out = model.servo, None, False
        if self.stream is not None:
            timed_out = now - self.stream_time > settings.incoming_command_timeout
            command = None if timed_out else self.stream
        elif self.joint_goal is not None:
            command = JointGoalCommand(self.joint_goal, self._singularity_scale(model, settings, q))
        velocity = np.zeros(model.tangent_size) if self.last_velocity is None else self.last_velocity
        state = ServoState(q, velocity, self.held)
        started = time.perf_counter()
        try:
            following = servo.step(state, command, period)
        except ServoCommandError as error:  # (a jog for a joint of another model, say)
            self.stream = None
            return Reply(servo_status=ServoStatus(REFUSED, str(error)), warning=f"command refused: {error}")
        if time.perf_counter() - started > period:
            self.missed_deadlines += 1
            following = servo.step(state, None, period)
            late = self.missed_deadlines
            why = f"a servo step took longer than its period ({period * 1e3:.3g} ms; {late} in all)"
            following = replace(following, status=ServoStatus(LATE, f"{why}: slowing to rest instead"))
        self.held = following.held
        if timed_out:
            following = replace(following, status=ServoStatus(STREAM_TIMEOUT, STREAM_TIMEOUT_TEXT))
            if following.at_rest:
                self.stream = None
        if following.status.code == GOAL_REACHED:
            self.joint_goal = None
        reply = Reply(servo_status=following.status)
        if following.at_rest and state.at_rest:  # (at rest and staying there: no command)
            return reply
        reply.command = Command(following.q, following.velocity, q)
        return reply

    def _singularity_scale(self, model: Model, settings: NodeSettings, q: np.ndarray) -> float:
        """MoveIt Servo's speed scale for the step from ``q`` toward ``joint_goal``."""
        space = model.manifold
        difference = self.joint_goal - q if space is None else space.difference(q, self.joint_goal)
        if np.max(np.abs(difference), initial=0.0) <= REACHED:
            return 1.0
        scale, _ = singularity_scale_toward(
            model.solver.task_jacobian,
            q,
            difference,
            settings.lower_singularity_threshold,
            settings.hard_stop_singularity_threshold,
            None if space is None else space.integrate,
        )
        return scale

    def stop(self, model: Model) -> Command | None:
        """Stop where the last command left the robot: the joint goal and the stream dropped, and
        one stop command (zero velocity) when it was moving."""
        self.joint_goal = self.stream = self.held = None
        if not self.moving or self.last_command is None:
            return None
        q = self.last_command
        return Command(q, np.zeros(model.tangent_size), q)

    def commit(self, model: Model, command: Command) -> str | None:
        """The limit guard every command passes: why it must not be published (a position
        outside the active limits, a velocity over its limit), or None, and then it becomes the
        last command and the state ``~/joint_states`` repeats."""
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
