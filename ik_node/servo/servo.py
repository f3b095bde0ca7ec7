"""The streaming servo: one period at a time, a twist, a jog or a joint goal becomes the next
joint command, within every limit, smooth through singularities and near collisions.

:meth:`Servo.step` takes the state the last command left (:class:`ServoState`: configuration,
velocity, the poses the other tips hold) and a command, and returns the next state with a
:class:`ServoStatus`. No ROS: the node (:mod:`ik_node.decisions.streaming`) is topics around it.

The rule of one period ``T`` [s]:

1. **Task velocity** (a twist): the twisting tip's controlled point moves with ``[v; w]`` (in
   its own axes: ``R^T v``, ``R^T w``, the body twist of its point); every other tip holds the
   pose it had when the stream began, with the correction ``K e`` (``e``: its body pose error,
   ``K`` = ``hold_gain`` [1/s]). Each tip's rows are those its solver task controls in the
   tip's axes (a ``'position'`` task: the 3 linear ones, and a twist's angular part is left
   free), all 6 for a task in the base's axes.
2. **Singularities**: joint velocities from the body Jacobian ``J = U S V^T`` of all the tips
   (6 rows each) by singular-value filtering (each singular direction on its own, as in
   Maciejewski & Klein 1988, "Numerical filtering for the operation of robotic manipulators
   through kinematically singular configurations"): ``qdot = sum_i h(s_i) / s_i v_i u_i^T xdot``
   with the share ``h(s) = min(1, s / eps)^3``. Directions whose singular value is at least
   ``eps`` are followed exactly; along a vanishing ``s_i`` the task speed falls continuously
   (as ``(s_i / eps)^3``) and the joint speed with it (as ``s_i^2 / eps^3``: damped least
   squares' ``s / (s^2 + l^2)`` keeps the joints sliding along the singular set at ``s / l^2``
   of the push), never a hard stop; a push to full extension ends at rest there, on the branch
   it started on.
3. **Collisions** (where the solver checks them): each pair nearer than ``margin + distance`` (its
   distance ``d``, its rate ``ddot = n^T (J_a - J_b) qdot``) caps the speed while it closes,
   ``ddot >= -gain (d - margin)`` (the velocity damper of Faverjon & Tournassoud 1987): the
   motion slows by how fast it closes the pair, reaching zero at the margin; a motion that opens
   every pair is never slowed.
4. **Limits**: the velocity is scaled as a whole within the positions (with a margin),
   velocities and accelerations (:mod:`.limits`), so the tip keeps its direction.

A joint jog skips 1 and 2; a joint goal moves along its joint-space displacement (at the speed
of the joint slowest to get there, times the command's ``speed_scale``; the position margin does
not apply: the goal is within the limits) and brakes to stop there. No command brings the arm to
rest at the accelerations' pace.

Units: m, rad, s. Configurations in the solver's ``joint_names`` order, velocities in its
tangent order (``tangent_names``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..compiled import bundles, contacts
from ..errors import IKNodeError
from ..solver import TipTask
from .commands import JointGoalCommand, JointJogCommand, ServoCommandError, TwistCommand
from .limits import MotionLimits, goal_velocity, scaled_velocity, velocity_bounds

__all__ = [
    "COLLISION",
    "HALTED",
    "JOINT_LIMIT",
    "OK",
    "REACHED",
    "SINGULARITY",
    "WAITING_FOR_KERNELS",
    "Servo",
    "ServoState",
    "ServoStatus",
]

#: Status codes of a step (the node adds its own: see :mod:`ik_node.decisions.streaming`).
OK, SINGULARITY, JOINT_LIMIT, COLLISION = "ok", "singularity", "joint_limit", "collision"
HALTED, REACHED, WAITING_FOR_KERNELS = "halted", "reached", "waiting_for_kernels"
#: Share of a commanded task velocity the singularity filter may drop before the status says so.
FILTER_NOTICE = 0.01
#: Joint motion [rad, m] and speed below which a joint goal counts as reached.
GOAL_REACHED = 1e-9


@dataclass(frozen=True)
class ServoStatus:
    """``code`` (:data:`OK`, :data:`SINGULARITY`, ...) and a sentence for people."""

    code: str = OK
    text: str = ""


@dataclass(frozen=True)
class ServoState:
    """Where the last command left the robot: ``q`` (nq,) [rad, m], ``velocity`` (nv,) [rad/s,
    m/s], ``held``: the poses (T, 4, 4) ``T_base_point`` the tips hold while one of them is
    twisted (None until a twist stream begins), ``status`` of the step that made it."""

    q: np.ndarray
    velocity: np.ndarray
    held: np.ndarray | None = None
    status: ServoStatus = field(default_factory=ServoStatus)

    @property
    def at_rest(self) -> bool:
        return not np.any(self.velocity)


class Servo:
    """Stream commands to the robot of ``solver`` (an :class:`~ik_node.IKSolver`: its tree, tips
    and controlled points, limits, kernels and collision model).

    ``max_velocity`` (nv,) [rad/s, m/s]: default the URDF's (a joint without one is refused), a
    floating or planar joint's each linear and angular twist component at ``base_max_velocity``
    ([m/s], [rad/s]);
    ``max_acceleration``: a number or (nv,) [rad/s^2, m/s^2], ``inf`` for none (default);
    ``position_margin`` [rad, m]: braking ends this far inside the position limits;
    ``singular_threshold``: the filter's ``eps`` (the units of the Jacobian's singular values:
    m per rad for the linear rows); ``hold_gain`` [1/s];
    ``collision_distance`` [m]: pairs nearer than the solver's ``collision_margin`` plus this slow
    the motion, ``collision_gain`` [1/s] how fast they may close; ``require_compiled``: hold at
    rest while the solver's kernels still run as plain Python (a cycle would miss its period).
    """

    def __init__(
        self,
        solver,
        *,
        max_velocity=None,
        base_max_velocity: tuple[float, float] = (1.0, 1.0),
        max_acceleration=np.inf,
        position_margin: float = 0.0,
        singular_threshold: float = 0.04,
        hold_gain: float = 10.0,
        collision_distance: float = 0.1,
        collision_gain: float = 5.0,
        require_compiled: bool = True,
    ):
        self.solver = solver
        tree = solver.tree
        self.tips = tuple(solver.tip_links)
        self.tangent_names = tuple(tree.tangent_names)
        self._tangent_index = {name: at for at, name in enumerate(self.tangent_names)}
        problem = solver.problem
        # (the 1-DOF joints' tangent indices and their coordinates: a multi-DOF joint has no limits)
        coordinates = problem.tree_arrays[bundles.COORDINATES]
        self.single = np.flatnonzero(coordinates >= 0)
        self.single_coordinates = coordinates[self.single]
        dof = len(self.tangent_names)
        if max_velocity is None:
            max_velocity = tree.tangent_max_velocity(*base_max_velocity)
        checked = {
            "singular_threshold": singular_threshold,
            "hold_gain": hold_gain,
            "collision_distance": collision_distance,
            "collision_gain": collision_gain,
        }
        for name, value in checked.items():
            if not (math.isfinite(value) and value > 0.0):
                raise IKNodeError(f"servo {name} must be a positive number, got {value}")
        self.limits = MotionLimits(
            problem.lower,
            problem.upper,
            max_velocity,
            np.broadcast_to(max_acceleration, (dof,)),
            position_margin,
        )
        self._goal_limits = replace(self.limits, margin=0.0)
        self._single_lower, self._single_upper = (
            self.limits.lower[self.single],
            self.limits.upper[self.single],
        )
        unbounded = [
            name for name, value in zip(self.tangent_names, self.limits.max_velocity) if math.isinf(value)
        ]
        if unbounded:
            raise IKNodeError(f"the servo needs a velocity limit for joints {unbounded}; the URDF gives none")
        self.singular_threshold = singular_threshold
        self.hold_gain, self.collision_distance, self.collision_gain = (
            hold_gain,
            collision_distance,
            collision_gain,
        )
        self.require_compiled = require_compiled
        self._tasks = {  # (a gaze tip holds its orientation: where it looks, as it looks)
            tip: TipTask(
                "orientation" if task.kind == "gaze" else task.mask if task.axes == "tip" else "pose",
                offset=task.offset,
            )
            for tip, task in solver.tasks.items()
        }
        self._made_for = self._workspace = None  # (the solver's problem _problem() last served)

    # ------------------------------------------------------------------ state

    def start(self, q) -> ServoState:
        """The state at rest at ``q`` (nq, or a mapping by joint name)."""
        q = self.solver.tree.normalized(self.solver.tree.joint_vector(q))
        return ServoState(q, np.zeros(len(self.tangent_names)))

    def warm(self) -> None:
        """Load what a twist step calls (numba loads a cached kernel at its first call, tens of
        ms), so that a stream's first period is on time; nothing while the kernels compile."""
        if self.solver.compiled:
            self.step(self.start(self.solver.rest_posture), TwistCommand(self.tips[0], np.zeros(6)), 1.0)

    # ------------------------------------------------------------------ one period

    def step(self, state: ServoState, command, period: float) -> ServoState:
        """The state one ``period`` [s] later under ``command`` (:class:`TwistCommand`,
        :class:`JointJogCommand`, :class:`JointGoalCommand`, or None: come to rest). Raises
        :class:`~.commands.ServoCommandError` for a command this robot cannot follow (an unknown
        tip or joint, a goal of the wrong size); the state is then unchanged."""
        if not (math.isfinite(period) and period > 0.0):
            raise ServoCommandError(f"the servo period must be a positive number of seconds, got {period}")
        if command is None:
            return self._move(state, np.zeros_like(state.velocity), period, None, 1.0, HALTED, "at rest")
        if isinstance(command, JointJogCommand):
            return self._move(state, self._jog_velocity(command), period, None, 1.0, OK, "", held=None)
        if self.require_compiled and not self.solver.compiled:
            why = "the IK kernels are compiling (after an install): holding at rest until they serve"
            return self._move(
                state, np.zeros_like(state.velocity), period, None, 1.0, WAITING_FOR_KERNELS, why
            )
        if isinstance(command, JointGoalCommand):
            return self._goal_step(state, command, period)
        if isinstance(command, TwistCommand):
            return self._twist_step(state, command, period)
        raise ServoCommandError(f"not a servo command: {type(command).__name__}")

    def _jog_velocity(self, command: JointJogCommand) -> np.ndarray:
        velocity = np.zeros(len(self.tangent_names))
        index = self._tangent_index
        for name, value in command.velocities.items():
            if name not in index:
                raise ServoCommandError(f"jog for unknown joint '{name}'; joints: {list(self.tangent_names)}")
            velocity[index[name]] = value
        return velocity

    def _goal_step(self, state: ServoState, command: JointGoalCommand, period: float) -> ServoState:
        tree = self.solver.tree
        if command.goal.shape != state.q.shape:
            raise ServoCommandError(
                f"joint goal has {command.goal.size} values; expected {state.q.size} {list(tree.joint_names)}"
            )
        difference = tree.difference(state.q, command.goal)
        largest = np.max(np.abs(difference), initial=0.0)
        if largest <= GOAL_REACHED:  # (there: come to rest, then say so)
            if state.at_rest:
                return ServoState(state.q, state.velocity, None, ServoStatus(REACHED, "at the joint goal"))
            return self._move(state, np.zeros_like(state.velocity), period, None, 1.0, OK, "")
        desired = goal_velocity(difference, self.limits.max_velocity, period, command.speed_scale)
        return self._move(state, desired, period, difference, 1.0, OK, "", goal_limits=True)

    def _twist_step(self, state: ServoState, command: TwistCommand, period: float) -> ServoState:
        if command.tip not in self.tips:
            raise ServoCommandError(f"twist for '{command.tip}', which is not a tip; tips: {list(self.tips)}")
        problem, collision, work = self._problem()
        held = state.held
        points, jacobian, errors, space = self._evaluate(problem, collision, work, state.q, held)
        tip = self.tips.index(command.tip)
        twist = command.twist
        if command.axes == "base":  # ([R^T v; R^T w]: both rows of [v w]^T times R)
            twist = (twist.reshape(2, 3) @ points[tip, :3, :3]).reshape(6)
        velocities = self.hold_gain * errors if held is not None else np.zeros((len(self.tips), 6))
        velocities[tip] = twist
        task_velocity = velocities[problem.rows[:, 0], problem.rows[:, 1]]
        joint_velocity, filtered = self._filtered_solve(jacobian, task_velocity)
        cap, code, text = 1.0, OK, ""
        if filtered > FILTER_NOTICE * np.linalg.norm(task_velocity):
            code, text = SINGULARITY, "near a singularity: the motion toward it slows (singular-value filter)"
        if collision is not None:
            closing = self._collision_cap(problem, collision, space, joint_velocity)
            if closing < 1.0:
                cap, code, text = closing, COLLISION, f"near a collision: speed scaled to {closing:.2f}"
        held = points if held is None else held.copy()
        held[tip] = points[tip]  # (the twisted tip holds where it is when another one is twisted)
        return self._move(state, joint_velocity, period, None, cap, code, text, held=held)

    # ------------------------------------------------------------------ parts of a step

    def _problem(self):
        """The solver's problem (its current kernel set) with a full pose task per tip, its
        collision bundle with the servo's reach (``collision_margin + collision_distance``), and
        the work arrays of :meth:`_evaluate` (made once per problem: the kernels overwrite them)."""
        problem = self.solver.problem
        if self._made_for is not problem:  # (a new core: new kernels or obstacles)
            servo_problem = problem.with_tasks(self._tasks)
            collision = problem.collision
            if collision is not None:
                reach = self.solver.options.collision_margin + self.collision_distance
                collision = (*collision[:4], np.float64(reach), *collision[5:])
            dof, tips, rows = len(self.tangent_names), len(self.tips), len(servo_problem.rows)
            space = problem.kernels.evaluation_workspace(
                servo_problem.tree_arrays, servo_problem.task, np.int64(dof), collision
            )
            arrays = (space, np.repeat(np.eye(4)[None], tips, axis=0), np.empty(rows), np.empty((tips, 2)))
            self._made_for = problem
            self._workspace = (servo_problem, collision, (*arrays, np.empty((rows, dof))))
        return self._workspace

    def _evaluate(self, problem, collision, work, q, held):
        """FK at ``q``: the tips' controlled points (T, 4, 4), the body Jacobian of the rows the
        servo controls (R, nv), the body errors (T, 6) toward ``held`` (the identity without),
        and the kernels' workspace (``work``: :meth:`_problem`'s arrays, overwritten)."""
        kernel_set, (space, identity, error, norms, jacobian) = problem.kernels, work
        targets = identity if held is None else held
        kernel_set.evaluate(problem.tree_arrays, problem.task, collision, targets, q, space, error, norms)
        kernel_set.jacobian_at(problem.tree_arrays, problem.task, space, jacobian)
        return space[bundles.POINTS].copy(), jacobian, space[bundles.FULL_ERRORS], space

    def _filtered_solve(self, jacobian: np.ndarray, task_velocity: np.ndarray) -> tuple[np.ndarray, float]:
        """Joint velocities by singular-value filtering (the module docstring, rule 2), and how
        much of the task velocity the filter dropped (the norm of ``xdot - J qdot`` it caused,
        not counting what the task asks beyond the Jacobian's range)."""
        left, values, right = np.linalg.svd(jacobian, full_matrices=False)
        threshold = self.singular_threshold
        share = np.minimum(values / threshold, 1.0) ** 3
        gains = np.divide(share, values, out=np.zeros_like(values), where=values > 0.0)
        projected = left.T @ task_velocity
        joint_velocity = right.T @ (gains * projected)
        return joint_velocity, float(np.linalg.norm(projected * (1.0 - share)))

    def _collision_cap(self, problem, collision, space, joint_velocity: np.ndarray) -> float:
        """The largest share of ``joint_velocity`` every near pair allows (rule 3): 1 when it
        opens them all."""
        records = problem.kernels.near_records(space[bundles.CONTACT])
        if len(records) == 0:
            return 1.0
        dof = len(self.tangent_names)
        rows, blocks = np.empty((len(records), dof)), np.empty((2, 6, dof))
        kernel_set = problem.kernels
        kernel_set.contact_rows(
            problem.tree_arrays, collision, space[bundles.POSES], space[bundles.CONTACT], blocks, rows
        )
        margin = self.solver.options.collision_margin
        cap = 1.0
        for record, row in zip(records, rows):
            closing = -float(row @ joint_velocity)
            if closing > 0.0:
                allowed = self.collision_gain * max(record[contacts.DISTANCE] - margin, 0.0)
                cap = min(cap, allowed / closing)
        return cap

    def _move(
        self, state, desired, period, goal, cap, code, text, held=None, goal_limits=False
    ) -> ServoState:
        """The next state: ``desired`` (nv,) scaled within the limits (:mod:`.limits`; toward a
        joint goal, ``goal_limits``, without the position margin: the goal is an answer within the
        limits), at most ``cap`` of it, integrated on the configuration manifold."""
        tree = self.solver.tree
        position = np.zeros(len(state.velocity))
        position[self.single] = state.q[self.single_coordinates]
        low, high, braked_low, braked_high = velocity_bounds(
            position, state.velocity, self._goal_limits if goal_limits else self.limits, period, goal
        )
        velocity, scale, kept = scaled_velocity(desired, state.velocity, low, high, cap)
        limited = not kept or scale < min(cap, 1.0) - 1e-12
        if (
            limited
            and code in (OK, SINGULARITY)
            and np.any((desired > 0) & braked_high | (desired < 0) & braked_low)
        ):
            code, text = JOINT_LIMIT, "at a joint limit: the motion toward it stops there"
        q = tree.integrate(state.q, velocity * period)
        at, before = self.single_coordinates, state.q[self.single_coordinates]
        # (rounding of q + u T: on the limit, not beyond; a joint outside already is not moved in)
        q[at] = np.minimum(
            np.maximum(q[at], np.minimum(self._single_lower, before)), np.maximum(self._single_upper, before)
        )
        return ServoState(q, velocity, held, ServoStatus(code, text))
