"""The node's parameters as one schema, free of rclpy: one :class:`ParameterSpec` per parameter
(type, default, unit, range or choices, read-only, description), from which the node declares
them (descriptors), validates every change (:meth:`ParameterSpec.check`, :func:`check_values`)
and docs/node.md's table is checked. The parameters that are solver options (``method``,
``position_tolerance``, ...) take their kind, range or choices, unit and description from the
options' own specification (:data:`ik_node.solver.options.OPTIONS`), so the node and the solver
accept the same values. Per-joint and per-tip parameters are patterns (``{}``: the joint or tip
name), declared when the robot description names the joints; per-obstacle ones
(``obstacles.{}.type``, ``.size``, ``.pose``) for each name of ``obstacle_names``, at start-up
(:func:`parameter_obstacles` makes them :class:`~ik_node.Obstacle` objects).
"""

from __future__ import annotations

import array
import itertools
import math
import numbers
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields

import numpy as np

from ..collision import OBSTACLE_KINDS, Obstacle
from ..description import ROOT_JOINT_TYPES, xacro_arguments
from ..errors import IKNodeError
from ..solver import BRANCH_ROOTS, KIND_SYNTAX, OPTION_SPECS, TASK_AXES, bounds_text, task_kind
from ..solver import TASK_KINDS as _TASK_KINDS
from .control import JointLayout

__all__ = [
    "BRANCHES",
    "JOINT_PARAMETERS",
    "MODES",
    "NODE_PARAMETERS",
    "OBSTACLE_PARAMETERS",
    "NodeSettings",
    "ParameterSpec",
    "ROOT_JOINTS",
    "TASK_KINDS",
    "NEAREST",
    "TIP_PARAMETERS",
    "PER_JOINT_OR_TIP",
    "branch_label",
    "check_obstacle_names",
    "check_values",
    "joint_parameter_defaults",
    "obstacle_parameter_names",
    "parameter_obstacles",
    "spec_of",
]

MODES = ("solve", "track")
#: ``root_joint``'s values: none, or the joint ``load_robot`` adds from a new link ``world`` to the
#: URDF's root.
ROOT_JOINTS = ("", *ROOT_JOINT_TYPES)
#: The named task kinds (``tip_tasks.<tip>`` also takes axis names: ``'vz'``, ``'vx vy wz'``).
TASK_KINDS = tuple(_TASK_KINDS)
#: ``branch``'s default: each goal answered by the solver's solution near the current joints.
NEAREST = "nearest"
#: ``branch``'s other values: a label of the arm's closed form, each root of :data:`BRANCH_ROOTS`
#: with ``+`` or ``-`` (any order: ``ik_node solve --all`` prints them in its kernel's).
BRANCHES = tuple(
    " ".join(root + sign for root, sign in zip(BRANCH_ROOTS, signs))
    for signs in itertools.product("+-", repeat=len(BRANCH_ROOTS))
)
#: The value types a spec may have; ``string_array`` parameters without a default are required
#: or defaulted by the node (``tip_links``, ``command_joints``).
KINDS = ("bool", "integer", "double", "string", "string_array", "double_array")


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter: ``name`` (a pattern with ``{}`` for per-joint or per-tip ones), ``kind``
    (one of :data:`KINDS`), ``default`` (None: none), ``description``, ``unit``, an inclusive
    range ``low``-``high`` or ``choices``, ``read_only`` (changing it needs a restart), ``size``
    (a ``double_array``'s length), and ``validate`` (a further check of the value: a function
    raising :class:`IKNodeError`) with ``valid``, what it accepts (for the refusal)."""

    name: str
    kind: str
    default: object
    description: str
    unit: str = ""
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    read_only: bool = False
    size: int | None = None
    validate: Callable[[object], object] | None = field(default=None, compare=False)
    valid: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"parameter spec '{self.name}': unknown kind '{self.kind}'")

    @property
    def described(self) -> str:
        """The description with its unit and the valid values, as the descriptor shows it."""
        text = self.description + (f" [{self.unit}]" if self.unit else "")
        if self.choices:
            text += f"; one of {list(self.choices)}"
        return text

    def check(self, name: str, value) -> None:
        """Raise :class:`IKNodeError` naming the parameter ``name`` (this spec's, or an instance
        of its pattern) unless ``value`` has the kind and lies in the range or choices."""
        expected = {
            "bool": lambda v: isinstance(v, bool),
            "integer": lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool),
            "double": lambda v: isinstance(v, float),
            "string": lambda v: isinstance(v, str),
            "string_array": lambda v: isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v),
            "double_array": lambda v: (
                isinstance(v, (list, tuple, array.array, np.ndarray)) and all(isinstance(x, float) for x in v)
            ),
        }[self.kind]
        if not expected(value):
            doubles = self.kind in ("double", "double_array")
            hint = " (write doubles with a decimal point, 100.0 not 100)" if doubles else ""
            raise IKNodeError(
                f"parameter {name} must be a {self.kind.replace('_', ' ')}{hint}, got {value!r}"
            )
        if self.choices and value not in self.choices:
            raise IKNodeError(f"parameter {name} must be one of {list(self.choices)}, got '{value}'")
        unit = f" [{self.unit}]" if self.unit else ""
        if self.kind == "double_array":
            if self.size is not None and len(value) != self.size:
                raise IKNodeError(f"parameter {name} must have {self.size} values{unit}, got {list(value)}")
            if not all(math.isfinite(x) for x in value):
                raise IKNodeError(f"parameter {name} must be finite numbers{unit}, got {list(value)}")
        elif self.low is not None or self.high is not None:
            low = -math.inf if self.low is None else self.low
            high = math.inf if self.high is None else self.high
            if not (isinstance(value, numbers.Real) and math.isfinite(value) and low <= value <= high):
                bounds = bounds_text(self.low, self.high, self.kind, self.unit)
                raise IKNodeError(f"parameter {name} must be in {bounds}, got {value}")
        elif self.kind == "double" and not math.isfinite(value):  # (a range says its bounds)
            raise IKNodeError(f"parameter {name} must be a finite number{unit}, got {value}")
        if self.validate is not None:
            try:
                self.validate(value)
            except IKNodeError:
                raise IKNodeError(f"parameter {name} must be {self.valid}, got {value!r}") from None


def branch_label(value: str) -> frozenset[str] | None:
    """The roots a ``branch`` value chooses (``{'shoulder+', 'elbow-', 'wrist+'}``, the words of
    one of :data:`BRANCHES` in any order), None for :data:`NEAREST`; raises :class:`IKNodeError`
    otherwise."""
    if value == NEAREST:
        return None
    words = value.split()
    roots = sorted(word[:-1] for word in words if word[-1:] in ("+", "-"))
    if len(words) != len(BRANCH_ROOTS) or roots != sorted(BRANCH_ROOTS):
        raise IKNodeError(f"not a branch label: {value!r}")
    return frozenset(words)


def _spec(
    name, kind, default, description, unit="", low=None, high=None, choices=(), read_only=False, **more
):
    return ParameterSpec(name, kind, default, description, unit, low, high, tuple(choices), read_only, **more)


_SOLVER_DEFAULT = object()


def _option(name: str, note: str = "", default=_SOLVER_DEFAULT) -> ParameterSpec:
    """The parameter of solver option ``name``: its kind, unit, range or choices and description
    from :data:`~ik_node.solver.options.OPTIONS` (``note``: what the description adds for the
    node), and the solver's default unless ``default`` gives the node's own."""
    option = OPTION_SPECS[name]
    if not option.node:
        raise ValueError(f"solver option {name} is not a node parameter")
    default = option.default if default is _SOLVER_DEFAULT else default
    description = option.description + (f"; {note}" if note else "")
    return _spec(
        name, option.kind, default, description, option.unit, option.low, option.high, option.choices
    )


#: Declared at start-up.
NODE_PARAMETERS = (
    _spec("robot_description", "string", "", "URDF XML. Empty: robot_description_file, else the "
          "/robot_description topic", read_only=True),
    _spec("robot_description_file", "string", "", "URDF or xacro file (a path or "
          "package://ik_node/urdf/arm7.urdf), used when robot_description is empty", read_only=True),
    _spec("xacro_args", "string_array", None, "xacro arguments NAME:=VALUE for a .xacro "
          "robot_description_file", read_only=True),
    _spec("package_paths", "string_array", None, "directories holding ROS packages, for a xacro's "
          "$(find pkg) and package:// paths outside the ament index", read_only=True),
    _spec("root_joint", "string", "", "a joint added from a new link 'world' to the URDF's root "
          "link: 'floating' (a free-flying base, e.g. a humanoid's: x y z and a quaternion) or 'planar' "
          "(x, y, theta in world's xy plane); its pose is published on ~/base_pose. Empty: none",
          choices=ROOT_JOINTS, read_only=True),
    _spec("base_link", "string", "", "link the goals and the solver's chain start from (empty: the "
          "URDF root; 'world' with root_joint)", read_only=True),
    _spec("tip_links", "string_array", None, "links that reach the goals, one goal topic each (required)",
          read_only=True),
    _spec("mode", "string", "solve", "'solve': one command per goal; 'track': step toward the latest goal, "
          "twist or jog at publish_rate (the servo)", choices=MODES),
    _spec("publish_rate", "double", 100.0, "track mode command rate", "Hz", 1.0, 1000.0),
    _spec("twist_tip", "string", "", "the tip ~/delta_twist_cmds moves (empty: the first of tip_links); the "
          "other tips hold their poses"),
    _spec("incoming_command_timeout", "double", 0.1, "a twist or jog stream silent this long brings the "
          "arm to rest (decelerating within the limits)", "s", 1e-3, 60.0),
    _spec("joint_limit_margin", "double", 0.02, "twists and jogs brake to stop this far inside each "
          "position limit", "rad or m", 0.0, 1.0),
    _spec("singular_value_threshold", "double", 0.04, "twists: below this smallest singular value of "
          "the tips' Jacobian the motion along it slows, as (s / threshold)^3", "m", 1e-4, 1.0),
    _spec("collision_slowdown_distance", "double", 0.1, "twists: pairs nearer than collision_margin "
          "plus this slow the motion that closes them, to rest at collision_margin", "m", 1e-3, 2.0),
    _option("method"),
    _option("solve_type", "the seed is the current state; 'distance' and 'manipulability' use the "
            "whole timeout"),
    _spec("timeout", "double", 0.05, "time budget per solve (goals near the seed take well under 1 ms)",
          "s", 1e-4, 10.0),
    _option("position_tolerance"),
    _option("orientation_tolerance"),
    _option("min_damping"),
    _option("max_iterations"),
    _option("posture_gain", "toward rest_posture"),
    _option("random_seed"),
    _option("max_joint_move", "the seed is the current state", default=0.5),
    _spec("branch", "string", NEAREST, "which solution answers a goal: 'nearest', the solver's near the "
          "current joints; or a branch of the arm's closed form (one tip controlling its full pose through "
          "six revolute joints that decompose), its label as ik_node solve --all prints it, e.g. 'shoulder+ "
          "elbow- wrist+': the solution on that branch nearest the current joints (solve_type and "
          "max_joint_move do not apply)", validate=branch_label,
          valid=f"'{NEAREST}' or a branch label, its words in any order: one of {list(BRANCHES)}"),
    _spec("straight_line_goals", "bool", False, "solve mode, one tip: a pose goal moves the tip on the "
          "straight line from where it is (IKSolver.cartesian_path), sent as one timed JointTrajectory on "
          "~/joint_trajectory; a goal the line cannot reach is refused, nothing moves (needs toppra)"),
    _spec("straight_line_acceleration", "double", 2.0, "straight-line goals' acceleration limit of the "
          "joints without joint_limits.<joint>.max_acceleration", "rad/s^2 or m/s^2", 1e-3, 1000.0),
    _spec("publish_best_effort", "bool", False, "on a failed solve, publish the closest configuration found "
          "(within limits)"),
    _spec("publish_rest_posture_at_start", "bool", False, "publish one command at the rest posture when "
          "the robot loads (the launch file's demo sets it; beside a running robot it would move it there)",
          read_only=True),
    _spec("publish_trajectory", "bool", False, "also publish trajectory_msgs/JointTrajectory on "
          "~/joint_trajectory"),
    _spec("publish_position_commands", "bool", False, "also publish std_msgs/Float64MultiArray on "
          "~/position_commands (ros2_control's forward position controller), in command_joints order"),
    _spec("command_joints", "string_array", None, "joint order of ~/position_commands (default: the "
          "chain's joints, base to tip)", read_only=True),
    _spec("joint_state_rate", "double", 10.0, "rate of ~/joint_states, the latest command (the rest "
          "posture before any); 0: only at start and on each command", "Hz",
          0.0, 1000.0),
    _spec("base_max_linear_velocity", "double", 1.0, "a floating or planar joint's (root_joint's) largest "
          "linear velocity along each of its axes, track mode and trajectory timing", "m/s", 1e-3, 1000.0),
    _spec("base_max_angular_velocity", "double", 1.0, "a floating or planar joint's (root_joint's) largest "
          "angular velocity about each of its axes, track mode and trajectory timing", "rad/s", 1e-3, 1000.0),
    _spec("min_trajectory_duration", "double", 0.1, "smallest time_from_start of a solve-mode trajectory "
          "point", "s", 0.0, 60.0),
    _spec("joint_state_timeout", "double", 1.0, "/joint_states older than this are stale; the last command "
          "seeds", "s", 0.0, 3600.0),
    _spec("lower_singularity_threshold", "double", 17.0, "track mode: condition number where slowing starts",
          "", 1.0, 1e9),
    _spec("hard_stop_singularity_threshold", "double", 30.0, "track mode: condition number where motion "
          "toward a singularity stops", "", 1.0, 1e9),
    _spec("interactive_markers", "bool", True, "a 6-DOF RViz marker per tip that sends goals as you drag "
          "it (track mode) or release it (solve mode); needs the interactive_markers package",
          read_only=True),
    _spec("transform_timeout", "double", 0.05, "how long a goal in a TF frame outside the model waits "
          "for the latest transform when none is known at its stamp (needs tf2_ros)", "s", 0.0, 5.0),
    _spec("compute_ik_service_name", "string", "~/compute_ik", "name of the moveit_msgs/srv/GetPositionIK "
          "service (IK answers, the robot never moved; needs moveit_msgs): '/compute_ik' stands in for "
          "MoveIt's move_group. Empty: no service", read_only=True),
    _spec("cartesian_path_service_name", "string", "~/compute_cartesian_path", "name of the "
          "moveit_msgs/srv/GetCartesianPath service (timed straight-line paths, the robot never moved; needs "
          "moveit_msgs): '/compute_cartesian_path' stands in for MoveIt's move_group. Empty: no service",
          read_only=True),
    _option("self_collision", "the obstacles (obstacle_names, ~/obstacles) are checked whether or not "
            "it is on"),
    _option("collision_margin"),
    _spec("robot_description_semantic", "string", "", "SRDF XML (MoveIt's convention): its "
          "<disable_collisions> pairs are not checked. Empty: the /robot_description_semantic topic "
          "(transient local), else the pairs are computed as MoveIt's Setup Assistant does"),
    _spec("planning_scene_topic", "string", "/monitored_planning_scene", "moveit_msgs/PlanningScene topic "
          "(move_group's): its world's boxes, spheres, cylinders and cones are obstacles beside ~/obstacles "
          "and obstacle_names; needs moveit_msgs. Empty: not read", read_only=True),
    _spec("obstacle_names", "string_array", None, "static obstacles in the base frame, each described "
          "by obstacles.<name>.type, .size and .pose", read_only=True),
)  # fmt: skip

#: Per joint of the solver's chain (``{}``: the joint), declared when the robot is loaded; the
#: defaults come from the URDF (None here).
JOINT_PARAMETERS = (
    _spec("joint_limits.{}.has_position_limits", "bool", None, "whether min/max_position apply "
          "(tighter than the URDF wins)"),
    _spec("joint_limits.{}.min_position", "double", None, "lower position limit", "rad or m"),
    _spec("joint_limits.{}.max_position", "double", None, "upper position limit", "rad or m"),
    _spec("joint_limits.{}.has_velocity_limits", "bool", None, "whether max_velocity applies"),
    _spec("joint_limits.{}.max_velocity", "double", None, "velocity limit, track mode and trajectories",
          "rad/s or m/s"),
    _spec("joint_limits.{}.has_acceleration_limits", "bool", None, "whether max_acceleration applies "
          "(track mode; the URDF has none)"),
    _spec("joint_limits.{}.max_acceleration", "double", None, "acceleration limit, track mode",
          "rad/s^2 or m/s^2"),
    _spec("joint_weights.{}", "double", 1.0, "joint's share of the motion, >= 0 (0 locks it)", "", 0.0, 1e6),
    _spec("rest_posture.{}", "double", None, "null-space rest value (default: mid-range)", "rad or m"),
)  # fmt: skip

#: Per tip (``{}``: the tip), declared at start-up.
TIP_PARAMETERS = (
    _spec("tip_tasks.{}", "string", "pose", f"what the tip's goal controls: {KIND_SYNTAX}",
          validate=task_kind, valid=f"{KIND_SYNTAX}, each axis once"),
    _spec("tip_task_axes.{}", "string", "tip", "whose axes tip_tasks names: 'tip' (the tip's own) or "
          "'base' (the base frame's, at the tip's controlled point: 'vz' alone is its height along the "
          "base z)", choices=TASK_AXES),
    _spec("tip_offsets.{}", "double_array", (0.0, 0.0, 0.0), "the controlled point x y z in the tip's "
          "frame (a tool centre that is not a link); goals are poses of the tip's frame moved there",
          "m", size=3),
    _spec("tip_bands.{}", "double_array", (0.0,) * 6, "tolerance band half-widths vx vy vz wx wy wz in "
          "the axes of tip_task_axes: a goal is met anywhere within +- them (0: exactly; pi on a rotation "
          "axis frees it, e.g. [0, 0, 0, 0, 0, 3.1416] for a tool symmetric about its z); only on axes "
          "tip_tasks controls", "m or rad", size=6),
    _spec("tip_gaze_axes.{}", "double_array", (0.0, 0.0, 1.0), "for tip_tasks 'gaze': the tip's axis x y z "
          "in its own frame, from its controlled point, that points at the goal's point (default z: a camera "
          "optical frame's optical axis)", "", size=3),
    _spec("tip_relative_to.{}", "string", "", "another tip: this tip's goals are its pose in that tip's "
          "controlled point's frame (two hands holding one object); '' none"),
)  # fmt: skip

#: The size values each obstacle type takes, in order [m].
OBSTACLE_SIZES = {
    "sphere": "[radius]",
    "box": "[x, y, z] (edge lengths)",
    "cylinder": "[radius, length]",
    "capsule": "[radius, length]",
}

#: Per obstacle of ``obstacle_names`` (``{}``: its name), declared at start-up; the type and
#: size have no default (required).
OBSTACLE_PARAMETERS = (
    _spec("obstacles.{}.type", "string", None, "the obstacle's shape (required)", choices=OBSTACLE_KINDS),
    _spec("obstacles.{}.size", "double_array", None, "the obstacle's size (required): sphere [radius], box "
          "[x, y, z] edge lengths, cylinder and capsule [radius, length] (the axis along the pose's z)",
          "m"),
    _spec("obstacles.{}.pose", "double_array", (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), "the obstacle's "
          "centre and orientation in the base frame: x y z [m], quaternion qx qy qz qw", size=7),
)  # fmt: skip

#: Prefixes of the per-joint and per-tip parameters.
PER_JOINT_OR_TIP = tuple(sorted({spec.name.split("{}")[0] for spec in JOINT_PARAMETERS + TIP_PARAMETERS}))
#: A name ``obstacle_names`` may hold: one token of a ROS parameter name.
OBSTACLE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def joint_parameter_defaults(tree) -> dict[str, object]:
    """Every per-joint parameter of ``tree``'s 1-DOF joints (revolute, continuous, prismatic:
    ``tree.lower``/``upper`` [rad, m], ``max_velocity``) with its default: the URDF's limits
    (``has_*`` false and 0.0 where it gives none; no acceleration limits), weight 1.0, rest at
    mid-range (0.0 for an
    unbounded joint). Multi-DOF joints (a floating or planar base) have none: no limits, weight
    1.0, rest at the origin."""
    defaults = {}
    layout = JointLayout.of(tree)
    for joint, index in zip(layout.names, layout.configuration):
        lower, upper, velocity = tree.lower[index], tree.upper[index], tree.max_velocity[index]
        bounded = bool(math.isfinite(lower))
        for pattern, value in (
            ("joint_limits.{}.has_position_limits", bounded),
            ("joint_limits.{}.min_position", float(lower) if bounded else 0.0),
            ("joint_limits.{}.max_position", float(upper) if bounded else 0.0),
            ("joint_limits.{}.has_velocity_limits", bool(math.isfinite(velocity))),
            ("joint_limits.{}.max_velocity", float(velocity) if math.isfinite(velocity) else 0.0),
            ("joint_limits.{}.has_acceleration_limits", False),
            ("joint_limits.{}.max_acceleration", 0.0),
            ("joint_weights.{}", 1.0),
            ("rest_posture.{}", float(0.5 * (lower + upper)) if bounded else 0.0),
        ):
            defaults[pattern.format(joint)] = value
    return defaults


_BY_NAME = {spec.name: spec for spec in NODE_PARAMETERS}
_PATTERNS = [
    (spec.name.split("{}")[0], spec.name.split("{}")[1], spec)
    for spec in JOINT_PARAMETERS + TIP_PARAMETERS + OBSTACLE_PARAMETERS
]


@dataclass(frozen=True)
class NodeSettings:
    """The node's parameter values as a typed record (one field per entry of
    :data:`NODE_PARAMETERS`, same names; the per-joint and per-tip ones as mappings by joint or
    tip), made whole from validated values by :meth:`from_values` and replaced whole on a change.
    Units as in the schema: s, Hz, m, rad."""

    robot_description: str
    robot_description_file: str
    xacro_args: tuple[str, ...]
    package_paths: tuple[str, ...]
    root_joint: str  # '', 'floating' or 'planar'
    base_link: str
    tip_links: tuple[str, ...]
    mode: str
    publish_rate: float  # [Hz]
    twist_tip: str  # '': the first tip
    incoming_command_timeout: float  # [s]
    joint_limit_margin: float  # [rad or m]
    singular_value_threshold: float  # [m]
    collision_slowdown_distance: float  # [m]
    method: str
    solve_type: str
    timeout: float  # [s]
    position_tolerance: float  # [m]
    orientation_tolerance: float  # [rad]
    min_damping: float
    max_iterations: int
    posture_gain: float
    random_seed: int
    max_joint_move: float  # [rad or m]; 0: off
    branch: str  # 'nearest', or a label of BRANCHES (words in any order)
    straight_line_goals: bool
    straight_line_acceleration: float  # [rad/s^2 or m/s^2]
    publish_best_effort: bool
    publish_rest_posture_at_start: bool
    publish_trajectory: bool
    publish_position_commands: bool
    command_joints: tuple[str, ...]  # empty: the chain's joints
    joint_state_rate: float  # [Hz]
    base_max_linear_velocity: float  # [m/s]
    base_max_angular_velocity: float  # [rad/s]
    min_trajectory_duration: float  # [s]
    joint_state_timeout: float  # [s]
    lower_singularity_threshold: float
    hard_stop_singularity_threshold: float
    interactive_markers: bool
    transform_timeout: float  # [s]
    compute_ik_service_name: str  # '' : no compute_ik service
    cartesian_path_service_name: str  # '' : no compute_cartesian_path service
    self_collision: bool
    collision_margin: float  # [m]
    robot_description_semantic: str  # SRDF XML; empty: the topic's, else none
    planning_scene_topic: str  # '' : the planning scene is not read
    obstacle_names: tuple[str, ...]
    #: ``{tip: task}``, ``{tip: 'tip' or 'base'}``, ``{tip: (x, y, z)}`` [m] from
    #: ``tip_tasks.<tip>``, ``tip_task_axes.<tip>``, ``tip_offsets.<tip>`` (tips declared so far).
    tip_tasks: Mapping[str, str]
    tip_task_axes: Mapping[str, str]
    tip_offsets: Mapping[str, tuple[float, float, float]]
    #: ``{tip: (vx, vy, vz, wx, wy, wz)}`` [m, rad] from ``tip_bands.<tip>``.
    tip_bands: Mapping[str, tuple[float, ...]]
    #: ``{tip: (x, y, z)}`` (tip axes) from ``tip_gaze_axes.<tip>``; ``{tip: other tip or ''}``
    #: from ``tip_relative_to.<tip>``.
    tip_gaze_axes: Mapping[str, tuple[float, float, float]]
    tip_relative_to: Mapping[str, str]
    #: ``{joint: weight}``, ``{joint: rest value}`` from ``joint_weights.<joint>``,
    #: ``rest_posture.<joint>`` (joints declared so far).
    joint_weights: Mapping[str, float]
    rest_posture: Mapping[str, float]
    #: The obstacles of ``obstacle_names`` (:func:`parameter_obstacles`), in the base frame.
    obstacles: tuple[Obstacle, ...]
    #: Every value by its parameter name, for the limit merge (``joint_limits.<joint>.<key>``).
    values: Mapping[str, object]

    @classmethod
    def from_values(cls, values: Mapping) -> NodeSettings:
        """The record of ``values`` (parameter name -> value; unset string arrays as None)."""

        def per(prefix: str) -> dict:
            return {name[len(prefix) :]: value for name, value in values.items() if name.startswith(prefix)}

        record = {
            spec.name: tuple(values[spec.name] or ()) if spec.kind == "string_array" else values[spec.name]
            for spec in NODE_PARAMETERS
        }
        return cls(
            **record,
            tip_tasks=per("tip_tasks."),
            tip_task_axes=per("tip_task_axes."),
            tip_offsets={tip: tuple(float(x) for x in offset) for tip, offset in per("tip_offsets.").items()},
            tip_bands={tip: tuple(float(x) for x in bands) for tip, bands in per("tip_bands.").items()},
            tip_gaze_axes={tip: tuple(float(x) for x in axis) for tip, axis in per("tip_gaze_axes.").items()},
            tip_relative_to=per("tip_relative_to."),
            joint_weights=per("joint_weights."),
            rest_posture=per("rest_posture."),
            obstacles=parameter_obstacles(values),
            values=dict(values),
        )

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(field.name for field in fields(cls))


def spec_of(name: str) -> ParameterSpec | None:
    """The spec of parameter ``name`` (an instance of a pattern included), or None."""
    if name in _BY_NAME:
        return _BY_NAME[name]
    for prefix, suffix, spec in _PATTERNS:
        middle = name[len(prefix) : len(name) - len(suffix)]
        if name.startswith(prefix) and name.endswith(suffix) and middle and "." not in middle:
            return spec
    return None


def check_values(values: Mapping) -> None:
    """Every value against its spec, then the rules across parameters; raises
    :class:`IKNodeError` naming the parameter."""
    for name, value in values.items():
        spec = spec_of(name)
        if spec is not None and value is not None:
            spec.check(name, value)
    xacro_arguments(values.get("xacro_args") or (), "parameter xacro_args")
    semantic = values.get("robot_description_semantic") or ""
    check_semantic_description(semantic, "parameter robot_description_semantic")
    parameter_obstacles(values)
    tips = values.get("tip_links") or ()
    if values.get("twist_tip") and tips and values["twist_tip"] not in tips:
        raise IKNodeError(f"parameter twist_tip '{values['twist_tip']}' is not one of tip_links {list(tips)}")
    if not values["lower_singularity_threshold"] < values["hard_stop_singularity_threshold"]:
        raise IKNodeError(
            "lower_singularity_threshold must be below hard_stop_singularity_threshold, got "
            f"{values['lower_singularity_threshold']} and {values['hard_stop_singularity_threshold']}"
        )


def check_semantic_description(text: str, source: str) -> None:
    """Raise :class:`IKNodeError` naming ``source`` unless ``text`` is empty or well-formed XML
    whose root is ``<robot>`` (an SRDF; its links are the solver's to check: unknown ones are
    warned about and ignored)."""
    if not text.strip():
        return
    try:
        root = ElementTree.fromstring(text.strip().encode("utf-8"))
    except ElementTree.ParseError as error:
        raise IKNodeError(f"{source} is not well-formed SRDF XML: {error}") from None
    if root.tag != "robot":
        raise IKNodeError(f"{source} is not an SRDF: its root element is <{root.tag}>, not <robot>")


def obstacle_parameter_names(name: str) -> tuple[str, ...]:
    """The parameters of obstacle ``name``: ``obstacles.<name>.type``, ``.size``, ``.pose``."""
    return tuple(spec.name.format(name) for spec in OBSTACLE_PARAMETERS)


def check_obstacle_names(names) -> None:
    """``obstacle_names``: distinct tokens of a parameter name (letters, digits, underscores,
    starting with a letter); raises :class:`IKNodeError` naming the bad entry."""
    for name in names or ():
        if not OBSTACLE_NAME.match(name):
            raise IKNodeError(
                f"parameter obstacle_names: '{name}' is not usable in a parameter name (letters, digits and "
                "underscores, starting with a letter)"
            )
    repeated = sorted({name for name in names or () if list(names).count(name) > 1})
    if repeated:
        raise IKNodeError(f"parameter obstacle_names lists {repeated} more than once")


def parameter_obstacles(values: Mapping) -> tuple[Obstacle, ...]:
    """The :class:`~ik_node.Obstacle` of each name of ``obstacle_names`` from its
    ``obstacles.<name>.type``, ``.size`` [m] and ``.pose`` (x y z [m], quaternion qx qy qz qw, in
    the base frame; a zero quaternion is refused); raises :class:`IKNodeError` naming the
    parameter and the obstacle."""
    names = values.get("obstacle_names") or ()
    check_obstacle_names(names)
    obstacles = []
    for name in names:
        kind, size, pose = (values.get(parameter) for parameter in obstacle_parameter_names(name))
        for parameter, value in zip(obstacle_parameter_names(name), (kind, size, pose)):
            if value is None:
                raise IKNodeError(
                    f"parameter {parameter} is required for obstacle '{name}' (listed in obstacle_names): "
                    + (f"one of {list(OBSTACLE_KINDS)}" if parameter.endswith(".type") else
                       "its size [m]: " + ", ".join(f"{k} {v}" for k, v in OBSTACLE_SIZES.items()))
                )  # fmt: skip
            spec_of(parameter).check(parameter, value)
        try:
            obstacles.append(
                Obstacle(kind, tuple(float(x) for x in size), (tuple(pose[:3]), tuple(pose[3:])), name)
            )
        except IKNodeError as error:
            raise IKNodeError(
                f"parameters obstacles.{name}.*: {error} (size: {kind} {OBSTACLE_SIZES[kind]} [m]; pose: "
                "x y z [m], qx qy qz qw)"
            ) from None
    return tuple(obstacles)
