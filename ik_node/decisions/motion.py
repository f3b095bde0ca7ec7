"""What the robot is commanded to do, free of rclpy: each solve's answer as a command (solve
mode) or a joint goal (track mode), the tracking steps toward it, and the limit guard every
command passes before it becomes the last one.

Units: m, rad, s; configurations in the model's ``joint_names`` order, velocities [rad/s, m/s]
in its tangent order. Track mode steps on the configuration manifold (tangent displacements,
``q (+) dq``, for a floating or planar base), every joint within its velocity limit, the base's
twist within ``base_max_linear_velocity`` / ``base_max_angular_velocity`` and scaled with the
joints (one factor: the motion keeps its direction).

A goal without a collision-free answer (reason ``collision``), or with answers on other branches
only (``off_branch``, a fixed ``branch``), publishes nothing, even with ``publish_best_effort``:
the last command stays.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import IKNodeError
from .branch_choice import OFF_BRANCH, solve_goal
from .control import command_violation, singularity_scale_toward, velocity_limited_step
from .parameters import NodeSettings
from .planning import Model
from .replies import Command, GoalRequest, Reply, Status

__all__ = ["COLLISION", "JOINT_MOVE", "REACHED", "Motion", "node_result"]

#: Joint motion [rad, m] below which a tracked goal counts as reached.
REACHED = 1e-9
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

    @property
    def moving(self) -> bool:
        """Whether the last command had a velocity other than zero (a stop is then due)."""
        return self.last_velocity is not None and bool(np.any(self.last_velocity))

    def forget(self) -> None:
        """Forget the last command and the joint goal (the state shown stays)."""
        self.last_command = self.last_velocity = self.joint_goal = None

    def solve(
        self, model: Model, settings: NodeSettings, goals: dict, seed: np.ndarray, request: GoalRequest | None
    ) -> Reply:
        """Solve ``goals`` (``{tip: T_base_goal}``) from ``seed`` (the solver's answer, or the
        ``branch``'s: :mod:`ik_node.decisions.branch_choice`): in solve mode a command, in track mode a
        new joint goal for :meth:`track_step`; a failed solve publishes the closest configuration
        only with ``publish_best_effort``."""
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
                self.joint_goal = result.q
            else:
                reply.command = Command(result.q, None, seed)
        return reply

    def track_step(self, model: Model, settings: NodeSettings, q: np.ndarray) -> Reply:
        """One step of ``1/publish_rate`` s from ``q`` toward ``joint_goal`` (not None), every
        joint within its velocity limit and slowed near singularities (MoveIt Servo's rule); one
        stop command (zero velocity) when the goal is reached."""
        period = 1.0 / settings.publish_rate
        space = model.manifold  # (a floating base: tangent displacements, q (+) dq)
        difference = self.joint_goal - q if space is None else space.difference(q, self.joint_goal)
        if np.max(np.abs(difference), initial=0.0) <= REACHED:
            self.joint_goal = None
            if self.moving:
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

    def stop(self, model: Model) -> Command | None:
        """Stop where the last command left the robot: the joint goal dropped, and one stop
        command (zero velocity) when it was moving."""
        self.joint_goal = None
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
