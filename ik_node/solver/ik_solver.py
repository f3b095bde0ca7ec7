"""The :class:`IKSolver` façade: builds the :class:`Problem` and the :class:`SeedTable` once
from checked input, searches (a :class:`SearchCall` of :func:`kernels.search_many`) and reports
(:class:`IKResult`).

Default method: singularity-robust damped least squares (Levenberg-Marquardt) on the body
Jacobian with body-frame errors, the joint limits as selection rows inside the solve, a null-space
posture term, several tips at once, restarts (seed-table entries nearest the goal, then random)
within a time budget; when some tips' targets lie beyond their reach, task priority: the
reachable tips first, the far ones as close as that leaves them. Units: metres, radians, seconds;
joint vectors in :attr:`IKSolver.joint_names` order.

What the solves run on is one value, the solver's :class:`~.core.SolverCore` (the kernel set,
the problem made for it, its seed table, the task-priority problems and the search), replaced
whole when the compiled kernels are swapped in (:mod:`.kernel_switch`) or the obstacles change; a
solve reads it once. The parts that take it, each in a module of its own: task priority
(:mod:`.priority`), batches (:mod:`.batch`, :mod:`.nearest_batch`); and besides, the results and
their reasons (:mod:`.results`), every solution and the nearest (:mod:`.all_solutions`, with its
caches in :attr:`IKSolver.solution_caches`), the collision queries (:class:`CollisionTask`) and
the null-space motion (:mod:`.null_space`).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from functools import partial

import numpy as np

from ..errors import IKNodeError
from . import kernels
from .all_solutions import (
    SolutionCaches,
    chain_closed_form,
    has_closed_form,
    solution_set_arrays,
    solve_all,
    solve_nearest,
)
from .batch import solution_figures, solve_many
from .cartesian import CartesianPath, plan_cartesian_path
from .collision_task import CollisionTask
from .core import SolverCore
from .free_base import BasePlacement
from .inputs import (
    check_movable,
    check_pose,
    joint_vector,
    joint_weights,
    limits_and_rest,
    posture_gains,
    resolve_tasks,
    seed_vector,
    stack_targets,
)
from .kernel_switch import KernelSwitch, search_budget
from .nearest_batch import ChainClosedForm
from .null_space import null_space_motion
from .options import SolverOptions, default_seed_table_size
from .priority import solve_prioritised
from .problem import Problem
from .results import BatchResult, IKResult, outcome_reason
from .search_call import search_arguments
from .seed_table import SeedTable
from .timing import time_optimal

__all__ = ["IKSolver"]

_log = logging.getLogger("ik_node.solver")


class IKSolver:
    """Solve for joint values that bring the tips of a base-to-tips tree to target poses.

    ``IKSolver(robot, base_link, tip_links, **options)`` or ``IKSolver(robot, base_link,
    tip_links, options=SolverOptions(...))``; the options are :class:`SolverOptions`'s.
    The seed table (``seed_table_size`` configurations) is sampled here (2-10 ms); it is not
    used while a joint is locked (its poses would not hold at the seed).

    The kernels the options use are compiled once per install (see :mod:`.warmup`) and loaded
    from numba's cache when built. Where they are not cached yet, the solver answers at once
    with the same kernels as plain Python (each ``solve`` given ``SLOWDOWN_WITHOUT_NUMBA`` times
    its budget, 1 s at most; ``solve_many`` waits for the compile) while a helper process
    compiles them, and switches to them when ready (:attr:`compiled`, :meth:`wait_for_kernels`);
    ``compile_helper=False`` (or ``IK_NODE_COMPILE_HELPER=0``) compiles them here instead, before
    the constructor returns.
    """

    def __init__(
        self,
        robot,
        base_link: str,
        tip_links: str | Sequence[str],
        options: SolverOptions | None = None,
        *,
        compile_helper: bool | None = None,
        **option_values,
    ):
        unknown = sorted(set(option_values) - set(SolverOptions.names()))
        if unknown:
            raise IKNodeError(f"unknown solver option '{unknown[0]}'; options: {list(SolverOptions.names())}")
        self.options = replace(options or SolverOptions(), **option_values)
        self.tree = robot.tree(base_link, tip_links)
        self.robot = robot
        self.joint_names = self.tree.joint_names
        self.tip_links = self.tree.tip_links
        check_movable(self.tree)
        options = self.options
        self.lower, self.upper, self.rest_posture = limits_and_rest(self.tree, options)
        self.continuous = np.isinf(self.lower) & np.isinf(self.upper)
        self.joint_weights = joint_weights(self.tree.tangent_names, options.joint_weights)
        self.posture_gains = posture_gains(self.tree.tangent_names, options.posture_gain)
        self.tasks = resolve_tasks(
            self.tip_links, options.tasks or {}, options.position_tolerance, options.orientation_tolerance
        )
        beyond_poses = [tip for tip, task in self.tasks.items() if task.kind == "gaze" or task.relative_to]
        if beyond_poses and options.method == "ccd":
            raise IKNodeError(
                f"method 'ccd' turns joints toward tip poses in the base frame; the gaze or relative tasks "
                f"of tips {beyond_poses} need a Jacobian method: 'dls', 'pinv' or 'transpose'"
            )
        problem = Problem(
            self.tree,
            self.tip_links,
            self.tasks,
            self.lower,
            self.upper,
            self.joint_weights,
            self.rest_posture,
            self.posture_gains,
        )
        self._base_placement = BasePlacement.for_problem(problem, self.rest_posture)
        #: Whether tips out of reach let the others go first (not with CCD, nor with relative tasks,
        #: whose reference a split could leave out).
        self._prioritised = options.method != "ccd" and not problem.relative_tips
        self.collision_task: CollisionTask | None = None
        if options.self_collision or options.obstacles:
            self.collision_task = CollisionTask(
                robot, self.tree, self.rest_posture, options.self_collision, options.srdf, options.obstacles
            )
            problem = problem.with_collision(self.collision_task.arrays(options.collision_margin))
        self.seed_table_size = options.seed_table_size
        if self.seed_table_size is None:
            self.seed_table_size = default_seed_table_size(len(self.tip_links), len(self.rest_posture))
        #: The seed table is not used while a joint is locked (its poses would not hold at the seed).
        self._table_size = self.seed_table_size if bool(np.all(self.joint_weights > 0)) else 0
        self.solution_caches = SolutionCaches()
        self._core: SolverCore | None = None
        self._core_lock = threading.Lock()  # (held while a new core is made and swapped in)
        self._kernel_switch = KernelSwitch()
        no_table = SeedTable(problem, 0, options.random_seed, self.rest_posture)
        probe = search_arguments(problem, no_table, options)  # (every search's types)
        self._kernel_switch.start(partial(self._install, first_problem=problem), probe, compile_helper)

    # ------------------------------------------------------------------ the core in use

    def _install(self, kernel_set, first_problem: Problem) -> SolverCore:
        """Serve the solves with ``kernel_set``: the compiled kernels (:mod:`.kernels`), or while
        those compile the same functions as plain Python (:func:`kernels.python_kernels`): a new
        core (:meth:`SolverCore.build <.core.SolverCore.build>`) of the problem in use
        (``first_problem`` before the first) swapped in whole (a solve under way finishes on the
        core it started with). Returns it."""
        with self._core_lock:
            problem = first_problem if self._core is None else self._core.problem
            core = SolverCore.build(kernel_set, self.options, problem, self._table_size)
            self._core = core
        return core

    @property
    def core(self) -> SolverCore:
        """What the solves run on now (:class:`~.core.SolverCore`): the kernel set, the problem,
        its seed table, the task-priority problems and the search; replaced whole, never changed."""
        return self._core

    @property
    def problem(self) -> Problem:
        """The problem the solves run on (the arrays of the kernels: :class:`~.problem.Problem`)."""
        return self._core.problem

    @property
    def seed_table(self) -> SeedTable:
        """Where restarts begin (:class:`~.seed_table.SeedTable`)."""
        return self._core.seed_table

    def __getstate__(self) -> dict:
        """Pickled (for a Dask worker, say) without the core's kernel set and search, its kernel
        switch and lock: the copy runs the compiled kernels (loading or compiling them at its
        first solve) on the same problem, seed table and task-priority problems."""
        state = self.__dict__.copy()
        del state["_kernel_switch"], state["_core_lock"]
        core = state.pop("_core")
        state["_pickled_core"] = (core.problem, core.seed_table, core.priority)
        return state

    def __setstate__(self, state: dict) -> None:
        problem, table, priority = state.pop("_pickled_core")
        self.__dict__.update(state)
        self._core = SolverCore.assemble(kernels, self.options, problem, table, priority)
        self._core_lock = threading.Lock()
        self._kernel_switch = KernelSwitch(compiled=True)

    @property
    def compiled(self) -> bool:
        """Whether the compiled kernels serve the solves (False while they compile after an
        install: the solves then run as plain Python; see :meth:`wait_for_kernels`)."""
        return self._kernel_switch.compiled

    def wait_for_kernels(self, timeout: float | None = None) -> bool:
        """Wait until the compiled kernels serve the solves, or their compile failed (at most
        ``timeout`` [s]); returns :attr:`compiled`."""
        return self._kernel_switch.wait(timeout)

    def __repr__(self) -> str:
        return f"IKSolver({self.tree!r}, method={self.options.method!r})"

    # ------------------------------------------------------------------ solving

    def _seed_in_limits(self, seed: np.ndarray) -> np.ndarray:
        """``seed`` (nq,) clipped into the limits and normalised: where the search starts."""
        return self.tree.normalized(np.clip(seed, self.lower, self.upper))

    def solve(self, targets, seed=None, timeout: float | None = 0.005) -> IKResult:
        """Find ``q`` within the limits bringing each tip to its target (4x4 ``T_base_tip``).

        ``targets``: ``{tip: 4x4}`` (a bare 4x4 when there is one tip; tips left out are held at
        their pose at the seed); a gaze tip's is a point x y z [m] (:class:`~.options.TipTask`).
        ``seed``: start configuration (array or ``{joint: value}``; default: the rest posture);
        values outside the limits are clipped into them.
        ``timeout``: time budget [s] (None: only ``max_iterations``/``max_attempts``).
        Raises :class:`~ik_node.errors.TargetError` for unusable input; an unreachable goal is
        not an error: the best configuration found comes back with ``success=False``.

        With ``solve_type='distance'`` on a chain with a closed form (see :meth:`solve_all`), the
        answer is the solution nearest the seed of the complete set
        (:func:`.all_solutions.solve_nearest`).
        """
        if self.options.solve_type == "distance" and len(self.tip_links) == 1:
            nearest = solve_nearest(self, targets, seed, timeout)
            if nearest is not None:
                return nearest
        start = time.perf_counter()
        core = self._core  # (read once: a core swapped in meanwhile serves the next solve)
        problem, kernel_set = core.problem, core.kernels
        budget = search_budget(timeout, self.options.max_attempts, kernel_set)
        deadline = kernels.NO_DEADLINE if budget < 0 else time.monotonic_ns() + budget
        placed = seed is None and self._base_placement is not None
        seed = seed_vector(seed, self.tree, self.rest_posture)
        one_array = type(targets) is np.ndarray and len(self.tip_links) == 1
        if one_array and targets.shape == (4, 4):
            target_poses = targets[None]  # (its values: the search checks)
        elif one_array and targets.shape == (3,) and problem.gaze_tips:
            target_poses = np.eye(4)[None]  # (one gaze tip's point; its values: the search checks)
            target_poses[0, :3, 3] = targets
        else:
            held: list = []  # (the seed's tip poses, computed only if a tip is left out)

            def held_pose(tip: str) -> np.ndarray:
                if not held:
                    held.append(problem.held_targets(self._seed_in_limits(seed)))
                return held[0][self.tip_links.index(tip)]

            target_poses = stack_targets(
                self.tip_links, targets, held_pose, kernel_set.check_poses, problem.gaze_tips
            )
        if placed:  # no seed: the rest posture carried onto the targets by its free base
            seed = self._base_placement.seed(target_poses, problem)
            if seed is None:  # (turned little: the first attempt carries it)
                seed = self.rest_posture
        out_of_reach = problem.tips_out_of_reach(target_poses) if len(self.tip_links) > 1 else []
        if out_of_reach and len(out_of_reach) < len(self.tip_links) and self._prioritised:
            found, out_of_reach = solve_prioritised(core, target_poses, seed, deadline, out_of_reach)
        else:
            found = core.search(target_poses, seed, deadline)
        outcome, errors = found.outcome, found.errors
        if outcome == kernels.TARGET_NOT_USABLE:
            check_pose(self.tip_links[0], target_poses[0], kernel_set.check_poses)  # raises, saying why
        if outcome != kernels.CONVERGED and problem.gaze_tips:  # (a point it could not look at)
            problem.check_gaze_targets(target_poses, self._seed_in_limits(seed))
        if outcome == kernels.SEED_NOT_FINITE:
            self.tree.joint_vector(seed, what="seed")  # raises, naming the joints
        if len(errors) == 1:  # (one tip, the common case: no max over tips, one dict entry)
            position_error, orientation_error = errors[0]
            tip_errors = {self.tip_links[0]: tuple(errors[0])}
        else:
            position_error, orientation_error = map(max, zip(*errors))
            tip_errors = dict(zip(self.tip_links, map(tuple, errors)))
        return IKResult(  # (its fields in order: a call by keywords costs ~0.7 us more, per solve)
            found.q,
            outcome == kernels.CONVERGED,
            position_error,
            orientation_error,
            found.iterations,
            time.perf_counter() - start,
            outcome_reason(outcome, found.deadline_reached, out_of_reach, problem, target_poses),
            found.attempts,
            tip_errors,
        )

    def solve_all(self, targets, seed=None, timeout: float = 0.05, locked=None):
        """Every solution of ``targets`` inside the limits, as an
        :class:`~.results.IKSolutions`: in closed form where the chain decomposes (six
        revolute joints, one tip controlling its full pose, a spherical wrist or three parallel
        axes, read from the tree: ``complete=True``), else by restarts of :meth:`solve` within
        ``timeout`` [s] (``complete=False``). ``seed`` orders them nearest first; ``locked``
        ({joint: value}) holds joints, e.g. one of a 7-joint arm. See :mod:`.all_solutions`."""
        return solve_all(self, targets, seed, timeout, locked)

    def solve_many(self, targets, seed=None, timeout: float | None = 0.005) -> BatchResult:
        """Solve N goals at once, spread over the machine's cores (slices of the batch on
        :data:`~ik_node.compiled.jit.BATCH_THREADS` threads).

        ``targets``: ``{tip: (N, 4, 4)}`` for every tip (an ``(N, 4, 4)`` array for one tip);
        ``seed``: ``(n,)`` for all or ``(N, n)``, clipped into the limits (default: the rest
        posture); ``timeout`` [s] applies to each target (None: ``max_attempts`` bounds each).
        Each target is solved as :meth:`solve` would from the same seed, without task priority
        (a target out of reach comes back unsolved with its closest configuration); with
        ``solve_type='distance'`` on a chain with a closed form, each answer is the solution
        nearest its seed (:mod:`.nearest_batch`). While the
        compiled kernels are not ready yet (see :class:`IKSolver`), it waits for them.
        """
        start = time.perf_counter()
        if not self.compiled:
            _log.info("solve_many waits for the IK kernels' compile")
            self.wait_for_kernels()
        closed_form = None
        if self.options.solve_type == "distance" and has_closed_form(self):
            closed_form = ChainClosedForm(chain_closed_form(self), solution_set_arrays(self))
        return solve_many(self._core, targets, seed, timeout, closed_form, start)

    def cartesian_path(
        self,
        waypoints,
        seed=None,
        max_step: float = 0.005,
        max_acceleration=None,
        max_velocity=None,
        max_angle: float | None = None,
        tolerance: float = 0.001,
        timeout: float = 0.02,
    ) -> CartesianPath:
        """The one tip's controlled point on straight lines (and shortest turns) from its pose at
        ``seed`` through ``waypoints`` (4x4 ``T_base_point`` each), in steps of at most
        ``max_step`` [m] and ``max_angle`` [rad], never jumping (:mod:`.cartesian`: where it
        cannot go on, it ends with ``fraction`` and ``reason``). With ``max_acceleration`` (a
        number or ``{joint: value}`` [rad/s^2, m/s^2]) it is timed time-optimally within that and
        the velocity limits (the URDF's, or ``max_velocity``: a number or ``{joint: value}``
        [rad/s, m/s]; :mod:`.timing`, needs toppra): ``time``, ``velocity``, ``acceleration``,
        :meth:`~.cartesian.CartesianPath.sample`."""
        path = plan_cartesian_path(self, waypoints, seed, max_step, max_angle, tolerance, timeout=timeout)
        if max_acceleration is None:
            return path
        names = self.tree.joint_names
        acceleration, velocity_limit = (
            np.full(len(names), float(given))
            if np.isscalar(given)
            else joint_vector(names, given, default, what)
            for what, given, default in (
                ("max_acceleration", max_acceleration, np.nan),
                ("max_velocity", max_velocity, self.tree.max_velocity),
            )
        )
        time, velocity, accelerations, trajectory = time_optimal(
            self.tree, path.q, velocity_limit, acceleration
        )
        return replace(path, time=time, velocity=velocity, acceleration=accelerations, trajectory=trajectory)

    def solution_figures(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For configurations ``q`` (K, nq): the pose (K, 4, 4) of the first tip's controlled point
        in the base frame and the manipulability (K,) of the task Jacobian
        (:func:`kernels.solution_figures`), on the batch threads."""
        return solution_figures(self.problem, q)

    # ------------------------------------------------------------------ collisions

    @property
    def obstacles(self) -> tuple:
        """The obstacles the solves avoid (:class:`~ik_node.collision.obstacles.Obstacle`, base frame)."""
        return () if self.collision_task is None else self.collision_task.obstacles

    def set_obstacles(self, obstacles) -> None:
        """Replace the obstacles (:class:`~ik_node.collision.obstacles.Obstacle`, base frame) for the next
        solves; ``()`` removes them. Raises :class:`IKNodeError` naming a bad entry."""
        if self.collision_task is None:
            if not obstacles:
                return
            self.collision_task = CollisionTask(
                self.robot, self.tree, self.rest_posture, False, None, obstacles
            )
        else:
            self.collision_task.set_obstacles(obstacles)
        collision = self.collision_task.arrays(self.options.collision_margin)
        with self._core_lock:
            self._core = self._core.with_collision(collision)

    def collision_distances(self, q) -> dict:
        """``{(owner_a, owner_b): distance [m]}`` of every checked pair of owners (links or
        obstacles) at ``q``, as the solver measures it: the larger of their shapes' distance and
        their convex hulls' (see :mod:`~ik_node.compiled.contacts`), the least over a concave
        link's pieces; negative: overlapping."""
        if self.collision_task is None:
            return {}
        q = self.tree.normalized(np.asarray(q, dtype=float))
        return self.collision_task.distances(q, self.options.collision_margin)

    def clearance(self, q) -> float:
        """The smallest distance [m] between checked pairs at ``q`` (``inf`` without pairs;
        negative: in collision)."""
        return min(self.collision_distances(q).values(), default=math.inf)

    def collision_shapes(self, q) -> list[tuple]:
        """The checked shapes placed at ``q`` in the base frame, for display: ``(owner, 'capsule',
        radius, a, b)`` (end centres a, b (3,) [m], equal for a sphere) or ``(owner, 'box', 0.0,
        pose, size)`` (4x4 ``T_base_box``, edge lengths (3,) [m])."""
        if self.collision_task is None:
            return []
        return self.collision_task.placed_shapes(self.tree.normalized(np.asarray(q, dtype=float)))

    # ------------------------------------------------------------------ linear algebra for callers

    def tip_poses(self, q) -> np.ndarray:
        """Poses (T, 4, 4) ``T_base_point`` of each tip's controlled point (its task's ``offset``,
        with the tip's axes) at configuration ``q`` (nq,)."""
        return self.problem.points(self.tree.normalized(np.asarray(q, dtype=float)))

    def task_jacobian(self, q, targets=None) -> np.ndarray:
        """The stacked, trimmed, weighted body Jacobian the solver inverts, at ``q`` (in
        :attr:`joint_names` order): one row per controlled tip-frame axis ``[v; w]``; a gaze tip's
        two rows (docs/solver.md, gaze) toward its point in ``targets`` (as
        :meth:`solve` takes them; tips left out, or ``targets=None``: the base's origin)."""
        problem = self.problem
        stacked = None
        if targets is not None:
            origin = np.eye(4)
            stacked = stack_targets(self.tip_links, targets, lambda tip: origin, gaze_tips=problem.gaze_tips)
        return problem.jacobian(self.tree.joint_vector(q), stacked)

    def null_space_motion(self, jacobian: np.ndarray, motion: np.ndarray, weights=None) -> np.ndarray:
        """``(I - J^+ J) z`` with the weighted pseudo-inverse ``J^+ = W J^T (J W J^T)^-1``
        (:func:`kernels.null_space_motion`): the part of ``z`` that leaves the task unchanged
        (``J (I - J^+ J) = 0``). ``W`` defaults to the joint weights. Shapes (m, n), (n,) or
        batched (R, m, n), (R, n)."""
        return null_space_motion(jacobian, motion, self.joint_weights if weights is None else weights)
