"""The model a robot description and the node's parameters make, free of rclpy: the tree from
``base_link`` to the tips, the active limits, the rest posture, the solver's options
(:func:`plan_model`, milliseconds, no compile), and its solver (:func:`build_solver`, a second or
two; after an install it answers as plain Python while its kernels compile), attached later.

Units: m, rad, s; joint vectors in the model's ``joint_names`` order (configuration
coordinates: a floating base's ``root_joint/x`` ... ``root_joint/qw`` included), velocities in
its tangent order; poses are 4x4 ``T_base_frame`` matrices.

Multi-DOF joints (a floating or planar base, ``root_joint`` or the URDF's own): no per-joint
parameters (no limits, weight 1, not pulled toward a rest posture, rest at the origin); each
component of the base's twist within ``base_max_linear_velocity`` or
``base_max_angular_velocity``.

Collisions (issue 18): the solver checks self-collision when ``self_collision`` (the link pairs
of the SRDF given to :func:`plan_model`) and the obstacles always: the parameters'
(``obstacle_names``) and the topic's (handed to :func:`plan_model`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..description import resolve_path
from ..errors import IKNodeError
from ..servo import Servo
from ..solver import IKSolver, SolverOptions, TipTask, check_movable, limits_and_rest, resolve_tasks
from .control import JointLayout, acceleration_limits, merge_joint_limits
from .parameters import NodeSettings, spec_of

__all__ = ["Model", "ServoSettings", "build_solver", "description_path", "plan_model", "solver_for_change"]


@dataclass(frozen=True)
class ServoSettings:
    """The servo's parameters (:class:`~ik_node.servo.Servo`): ``joint_limit_margin`` [rad, m],
    ``singular_value_threshold`` [m], ``collision_slowdown_distance`` [m]."""

    joint_limit_margin: float = 0.02
    singular_value_threshold: float = 0.04
    collision_slowdown_distance: float = 0.1


@dataclass(frozen=True)
class Model:
    """What one robot description and one set of parameter values make; replaced whole.

    ``lower``/``upper``: the active position limits per configuration coordinate (URDF merged
    with the ``joint_limits`` parameters; ±inf for a multi-DOF joint's), ``max_velocity`` per
    tangent coordinate (a multi-DOF joint's from ``base_max_linear_velocity`` and
    ``base_max_angular_velocity``), ``max_acceleration`` per tangent coordinate (``inf``: none;
    track mode); ``rest_posture``: within them;
    ``layout``: the 1-DOF joints the messages carry and the multi-DOF ones whose pose is
    published; ``command_order``: indices of ``command_joints`` in ``joint_names``; ``solver``:
    None until attached; :attr:`servo` streams track mode's commands with it."""

    robot: object
    tree: object
    options: SolverOptions
    lower: np.ndarray
    upper: np.ndarray
    max_velocity: np.ndarray
    max_acceleration: np.ndarray
    servo_settings: ServoSettings
    rest_posture: np.ndarray
    command_order: np.ndarray
    layout: JointLayout
    warnings: tuple[str, ...] = ()
    solver: IKSolver | None = None

    @cached_property
    def servo(self) -> Servo:
        """The streaming servo of the attached solver (made and warmed at first use, kept with the
        model) within the model's velocity and acceleration limits."""
        settings = self.servo_settings
        servo = Servo(
            self.solver,
            max_velocity=self.max_velocity,
            max_acceleration=self.max_acceleration,
            position_margin=settings.joint_limit_margin,
            singular_threshold=settings.singular_value_threshold,
            collision_distance=settings.collision_slowdown_distance,
        )
        servo.warm()
        return servo

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
    velocity = tree.tangent_max_velocity(
        settings.base_max_linear_velocity, settings.base_max_angular_velocity
    )
    velocity[layout.tangent] = single_velocity
    acceleration = np.full(len(tree.tangent_names), np.inf)  # (none for a floating or planar joint)
    acceleration[layout.tangent], acceleration_warnings = acceleration_limits(
        single, settings.values, changed
    )
    warnings = [*warnings, *acceleration_warnings]
    tasks = {tip: _tip_task(settings, tip) for tip in tips}
    try:  # (what one tip's parameters cannot say: a relative task's reference among the tips)
        resolve_tasks(tips, tasks, settings.position_tolerance, settings.orientation_tolerance)
    except IKNodeError as error:
        raise IKNodeError(f"parameters tip_relative_to: {error}") from None
    options = SolverOptions(
        tasks=tasks,
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
    lower, upper, rest_posture = limits_and_rest(tree, options)  # (the solver's, before it is built)
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
        max_acceleration=acceleration,
        servo_settings=ServoSettings(
            settings.joint_limit_margin,
            settings.singular_value_threshold,
            settings.collision_slowdown_distance,
        ),
        rest_posture=rest_posture,
        command_order=np.array([position[joint] for joint in command_joints], dtype=int),
        layout=layout,
        warnings=tuple(warnings),
    )


def _tip_task(settings: NodeSettings, tip: str) -> TipTask:
    """The task of ``tip`` from its ``tip_tasks``, ``tip_task_axes``, ``tip_offsets``,
    ``tip_bands``, (for a gaze) ``tip_gaze_axes`` and ``tip_relative_to`` parameters (each checked
    by its spec: a refusal names the parameter)."""
    values = {
        f"tip_tasks.{tip}": settings.tip_tasks.get(tip, "pose"),
        f"tip_task_axes.{tip}": settings.tip_task_axes.get(tip, "tip"),
        f"tip_offsets.{tip}": settings.tip_offsets.get(tip, (0.0, 0.0, 0.0)),
        f"tip_bands.{tip}": settings.tip_bands.get(tip, (0.0,) * 6),
        f"tip_gaze_axes.{tip}": settings.tip_gaze_axes.get(tip, (0.0, 0.0, 1.0)),
        f"tip_relative_to.{tip}": settings.tip_relative_to.get(tip, ""),
    }
    for name, value in values.items():
        spec_of(name).check(name, value)
    kind, axes, offset, bands, gaze_axis, relative_to = values.values()
    if relative_to:
        try:
            TipTask(kind, axes=axes, relative_to=relative_to)
        except IKNodeError as error:
            raise IKNodeError(
                f"parameter tip_relative_to.{tip} (with tip_tasks.{tip} '{kind}'): {error}"
            ) from None
    if kind == "gaze":  # (each of its parameters alone, so that a refusal names the one at fault)
        for name, task in (
            (f"tip_gaze_axes.{tip}", {"axis": gaze_axis}),
            (f"tip_task_axes.{tip}", {"axes": axes}),
            (f"tip_bands.{tip}", {"bands": bands}),
        ):
            try:
                TipTask("gaze", **task)
            except IKNodeError as error:
                raise IKNodeError(f"parameter {name} (with tip_tasks.{tip} 'gaze'): {error}") from None
    try:
        return TipTask(
            kind,
            position_tolerance=settings.position_tolerance,
            orientation_tolerance=settings.orientation_tolerance,
            axes=axes,
            offset=offset,
            bands=bands,
            axis=gaze_axis if kind == "gaze" else None,
            relative_to=relative_to or None,
        )
    except IKNodeError as error:  # (a band the task cannot take: on an axis it leaves out, past pi)
        raise IKNodeError(f"parameter tip_bands.{tip} (with tip_tasks.{tip} '{kind}'): {error}") from None


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


def solver_for_change(model: Model) -> IKSolver:
    """:func:`build_solver` for a run-time change: any failure (a missing optional package, say)
    as an :class:`IKNodeError` that refuses the change, the solver in use staying."""
    try:
        return build_solver(model)
    except IKNodeError:
        raise
    except Exception as error:
        raise IKNodeError(f"the IK solver could not be built: {type(error).__name__}: {error}") from None
