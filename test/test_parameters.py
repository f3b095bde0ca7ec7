"""The node's parameter schema without ROS (ik_node.decisions.parameters): every default of its kind and
within its range or choices, every spec's refusals (kind, range with its bounds and unit,
non-finite numbers, choices listed), the per-joint and per-tip patterns (the tip's task, axes and
offset included), the rules across parameters, the names a command line overrides, the typed
record, the per-joint defaults a URDF gives, and the parameters that are solver options agreeing
with the solver's own specification (the same ranges, choices and units; a value refused by one
refused by the other)."""

from __future__ import annotations

import array
import math
import re

import numpy as np
import pytest

from ik_node import load_robot
from ik_node.decisions.command_line import overridden_names
from ik_node.decisions.parameters import (
    JOINT_PARAMETERS,
    KINDS,
    NODE_PARAMETERS,
    OBSTACLE_PARAMETERS,
    TIP_PARAMETERS,
    NodeSettings,
    ParameterSpec,
    check_values,
    joint_parameter_defaults,
    parameter_obstacles,
    spec_of,
)
from ik_node.errors import IKNodeError
from ik_node.solver import SolverOptions, TipTask
from ik_node.solver.options import OPTION_SPECS, OPTIONS

EVERY_SPEC = NODE_PARAMETERS + JOINT_PARAMETERS + TIP_PARAMETERS + OBSTACLE_PARAMETERS
WITH_DEFAULT = [spec for spec in EVERY_SPEC if spec.default is not None]
RANGED = [spec for spec in EVERY_SPEC if spec.low is not None or spec.high is not None]
WITH_CHOICES = [spec for spec in EVERY_SPEC if spec.choices]

#: What each kind accepts, written independently of ParameterSpec.check.
IS_OF_KIND = {
    "bool": lambda value: type(value) is bool,
    "integer": lambda value: type(value) is int,
    "double": lambda value: type(value) is float,
    "string": lambda value: type(value) is str,
    "string_array": lambda value: isinstance(value, (list, tuple)) and all(type(x) is str for x in value),
    "double_array": lambda value: isinstance(value, (list, tuple)) and all(type(x) is float for x in value),
}
#: Values of another kind than the key (an int for a double: ROS would type it as an integer).
WRONG_KIND = {
    "bool": [1, 0.0, "true"],
    "integer": [True, 1.0, "1"],
    "double": [1, True, "0.5"],
    "string": [1, 0.5, ["pose"]],
    "string_array": ["tool0", ["tool0", 1], 3],
    "double_array": [0.0, [0.0, 0, 0.1], ["0.0"], "0 0 0", (0.0, True, 0.0)],
}
#: An instance name of each pattern (``{}``: a joint or a tip).
INSTANCE = "j1"


def instance(spec: ParameterSpec) -> str:
    return spec.name.format(INSTANCE) if "{}" in spec.name else spec.name


def default_values(**changes) -> dict:
    """Every node parameter at its default (unset string arrays as None), with ``changes``."""
    return {**{spec.name: spec.default for spec in NODE_PARAMETERS}, **changes}


# ---------------------------------------------------------------- the schema's own defaults


def test_every_kind_is_covered_and_names_are_unique():
    assert {spec.kind for spec in EVERY_SPEC} == set(IS_OF_KIND) == set(KINDS)
    names = [spec.name for spec in EVERY_SPEC]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("spec", WITH_DEFAULT, ids=lambda spec: spec.name)
def test_a_default_is_of_its_kind_and_within_its_range_and_choices(spec):
    value = spec.default
    assert IS_OF_KIND[spec.kind](value), (spec.kind, value)
    if spec.low is not None:
        assert math.isfinite(value) and value >= spec.low, (value, spec.low)
    if spec.high is not None:
        assert math.isfinite(value) and value <= spec.high, (value, spec.high)
    if spec.choices:
        assert value in spec.choices, (value, spec.choices)
    spec.check(instance(spec), value)  # and the schema's own check agrees


def test_the_defaults_together_pass_the_rules_across_parameters():
    check_values(default_values())
    assert (
        default_values()["lower_singularity_threshold"] < default_values()["hard_stop_singularity_threshold"]
    )


def test_a_spec_of_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown kind 'float'"):
        ParameterSpec("x", "float", 1.0, "x")


def test_the_description_shows_the_unit_and_the_choices():
    assert spec_of("timeout").described.endswith("[s]")
    assert spec_of("mode").described.endswith("one of ['solve', 'track']")
    assert spec_of("tip_offsets.tool0").described.endswith("[m]")
    assert spec_of("tip_task_axes.tool0").described.endswith("one of ['tip', 'base']")
    assert "axis names among vx vy vz wx wy wz" in spec_of("tip_tasks.tool0").described


def test_an_integer_range_is_written_in_full():
    with pytest.raises(IKNodeError) as refused:
        spec_of("random_seed").check("random_seed", 2**32)
    assert str(refused.value) == f"parameter random_seed must be in [0, {2**32 - 1}], got {2**32}"


# ---------------------------------------------------------------- ParameterSpec.check


@pytest.mark.parametrize("spec", EVERY_SPEC, ids=lambda spec: spec.name)
def test_a_value_of_another_kind_is_refused_naming_the_parameter(spec):
    name = instance(spec)
    for value in WRONG_KIND[spec.kind]:
        with pytest.raises(IKNodeError, match=f"parameter {name} must be a {spec.kind.replace('_', ' ')}"):
            spec.check(name, value)


def test_an_integer_for_a_double_gets_the_decimal_point_hint():
    with pytest.raises(IKNodeError, match=r"write doubles with a decimal point, 100.0 not 100\), got 100$"):
        spec_of("publish_rate").check("publish_rate", 100)


def bounds(spec: ParameterSpec) -> str:
    """``[low, high] unit`` as a refusal writes it: integers in full, doubles as ``%g``."""
    shown = [
        ("-inf" if bound < 0 else "inf")
        if bound is None or math.isinf(bound)
        else (str(int(bound)) if spec.kind == "integer" else f"{bound:g}")
        for bound in (
            -math.inf if spec.low is None else spec.low,
            math.inf if spec.high is None else spec.high,
        )
    ]
    return f"[{shown[0]}, {shown[1]}]" + (f" {spec.unit}" if spec.unit else "")


def outside_values(spec: ParameterSpec) -> list:
    """Values just below ``low`` and just above ``high`` (of the spec's kind)."""
    step = 1 if spec.kind == "integer" else None
    values = []
    if spec.low is not None:
        values.append(spec.low - (step or max(abs(spec.low), 1e-3)))
    if spec.high is not None:
        values.append(spec.high + (step or max(abs(spec.high), 1e-3)))
    return [int(value) if spec.kind == "integer" else float(value) for value in values]


@pytest.mark.parametrize("spec", RANGED, ids=lambda spec: spec.name)
def test_a_value_outside_the_range_is_refused_with_the_bounds_and_the_unit(spec):
    name = instance(spec)
    for value in outside_values(spec):
        with pytest.raises(IKNodeError) as refused:
            spec.check(name, value)
        assert str(refused.value) == f"parameter {name} must be in {bounds(spec)}, got {value}"
    for bound in (spec.low, spec.high):  # the range is inclusive
        if bound is not None:
            spec.check(name, int(bound) if spec.kind == "integer" else float(bound))


@pytest.mark.parametrize(
    "spec", [spec for spec in RANGED if spec.kind == "double"], ids=lambda spec: spec.name
)
def test_a_non_finite_number_is_refused_by_a_ranged_double(spec):
    name = instance(spec)
    for value in (math.nan, math.inf, -math.inf):
        with pytest.raises(IKNodeError, match=f"parameter {re.escape(name)} must be in .*, got {value}"):
            spec.check(name, value)


def test_a_non_finite_number_is_refused_by_a_half_open_range():
    """(Infinity lies within [0, inf): refused for not being finite, not for the range.)"""
    spec = ParameterSpec("gain", "double", 1.0, "a gain", low=0.0)
    spec.check("gain", 1e300)
    for value in (math.inf, math.nan):
        with pytest.raises(IKNodeError, match=f"parameter gain must be in \\[0, inf\\], got {value}"):
            spec.check("gain", value)


UNRANGED_DOUBLES = [spec for spec in EVERY_SPEC if spec.kind == "double" and spec not in RANGED]


@pytest.mark.parametrize("spec", UNRANGED_DOUBLES, ids=lambda spec: spec.name)
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_non_finite_number_is_refused_by_every_double(spec, value):
    with pytest.raises(IKNodeError, match="must be a finite number"):
        spec.check(instance(spec), value)


@pytest.mark.parametrize("spec", WITH_CHOICES, ids=lambda spec: spec.name)
def test_a_value_outside_the_choices_is_refused_listing_them(spec):
    name = instance(spec)
    with pytest.raises(IKNodeError) as refused:
        spec.check(name, "nonsense")
    assert str(refused.value) == f"parameter {name} must be one of {list(spec.choices)}, got 'nonsense'"
    for choice in spec.choices:
        spec.check(name, choice)


# ---------------------------------------------------------------- spec_of: names and patterns


@pytest.mark.parametrize(
    "name, pattern",
    [
        ("mode", "mode"),
        ("joint_limits.j1.max_velocity", "joint_limits.{}.max_velocity"),
        ("joint_limits.left_joint_1.has_position_limits", "joint_limits.{}.has_position_limits"),
        ("joint_weights.elbow", "joint_weights.{}"),
        ("rest_posture.j1", "rest_posture.{}"),
        ("tip_tasks.tool0", "tip_tasks.{}"),
        ("tip_task_axes.tool0", "tip_task_axes.{}"),
        ("tip_offsets.left_tool0", "tip_offsets.{}"),
    ],
)
def test_spec_of_finds_a_name_or_an_instance_of_a_pattern(name, pattern):
    spec = spec_of(name)
    assert spec is not None and spec.name == pattern


@pytest.mark.parametrize(
    "name",
    [
        "joint_limits..max_velocity",  # no joint
        "joint_limits.a.b.max_velocity",  # a dotted joint
        "joint_limits.j1.max_speed",  # no such key
        "joint_limits.j1",
        "tip_tasks.",
        "tip_tasks.a.b",
        "tip_task_axes.",
        "tip_offsets.a.b",
        "tip_offsets",
        "joint_weights",
        "modes",
        "mode.x",
        "",
    ],
)
def test_spec_of_rejects_near_misses(name):
    assert spec_of(name) is None


# ---------------------------------------------------------------- check_values


def test_check_values_checks_each_value_by_its_spec_patterns_included():
    with pytest.raises(IKNodeError, match=r"parameter timeout must be in \[0.0001, 10\] s, got 0.0"):
        check_values(default_values(timeout=0.0))
    with pytest.raises(IKNodeError, match=r"parameter joint_weights.j1 must be in \[0, 1e\+06\], got -1.0"):
        check_values(default_values(**{"joint_weights.j1": -1.0}))
    with pytest.raises(IKNodeError, match="parameter tip_tasks.tool0 must be one of"):
        check_values(default_values(**{"tip_tasks.tool0": "everything"}))
    with pytest.raises(IKNodeError, match=r"parameter tip_offsets.tool0 must have 3 values \[m\]"):
        check_values(default_values(**{"tip_offsets.tool0": [0.0, 0.1]}))
    check_values(default_values(**{"joint_weights.j1": 2.0, "tip_tasks.tool0": "position", "other": "x"}))


@pytest.mark.parametrize("lower, hard_stop", [(30.0, 30.0), (31.0, 30.0), (1e9, 2.0)])
def test_the_lower_singularity_threshold_must_be_below_the_hard_stop(lower, hard_stop):
    values = default_values(lower_singularity_threshold=lower, hard_stop_singularity_threshold=hard_stop)
    with pytest.raises(IKNodeError) as refused:
        check_values(values)
    assert str(refused.value) == (
        "lower_singularity_threshold must be below hard_stop_singularity_threshold, got "
        f"{lower} and {hard_stop}"
    )
    check_values({**values, "lower_singularity_threshold": hard_stop - 0.5})


@pytest.mark.parametrize("arguments", [None, [], ["arm:=left"], ["arm:=left", "prefix:=", "x:=a:=b"]])
def test_xacro_args_of_name_value_pairs_pass(arguments):
    check_values(default_values(xacro_args=arguments))


@pytest.mark.parametrize(
    "arguments, malformed",
    [(["arm=left"], ["arm=left"]), (["arm:=left", "prefix", ""], ["prefix", ""])],
)
def test_xacro_args_without_name_value_are_refused_naming_them(arguments, malformed):
    with pytest.raises(IKNodeError) as refused:
        check_values(default_values(xacro_args=arguments))
    assert str(refused.value) == f"parameter xacro_args takes NAME:=VALUE entries, got {malformed}"


# ---------------------------------------------------------------- overridden_names

PARAMS_FILE = """\
/**:
  ros__parameters:
    mode: track
    joint_limits:
      j1:
        max_velocity: 1.0
        has_velocity_limits: true
ik_node:
  ros__parameters:
    timeout: 0.1
    rest_posture: {j2: 0.5}
/ik_node:
  ros__parameters:
    tip_tasks:
      tool0: position
other_node:
  ros__parameters:
    publish_rate: 50.0
/ik_node/not_parameters:
  method: pinv
"""
FROM_EVERY_NODE = {"mode", "joint_limits.j1.max_velocity", "joint_limits.j1.has_velocity_limits"}
FROM_IK_NODE = {"timeout", "rest_posture.j2", "tip_tasks.tool0"}


@pytest.fixture
def params_file(tmp_path):
    path = tmp_path / "ik_node.yaml"
    path.write_text(PARAMS_FILE)
    return str(path)


def test_overridden_names_of_a_params_file_for_this_node_nested_keys_joined(params_file):
    names = overridden_names(["--ros-args", "--params-file", params_file])
    assert names == FROM_EVERY_NODE | FROM_IK_NODE


def test_overridden_names_of_a_params_file_for_another_node(params_file):
    names = overridden_names(["--params-file", params_file], node_name="other_node")
    assert names == FROM_EVERY_NODE | {"publish_rate"}


def test_overridden_names_of_p_arguments_and_a_file_together(params_file):
    arguments = [
        "--ros-args",
        "-p",
        "method:=pinv",
        "--param",
        "joint_weights.j3:=2.0",
        "-p",
        "ik_node:random_seed:=3",  # node-name prefix
        "--params-file",
        params_file,
        "-p",
        "no_assignment",
        "-r",
        "__node:=ik_node",
    ]
    expected = {"method", "joint_weights.j3", "random_seed"} | FROM_EVERY_NODE | FROM_IK_NODE
    assert overridden_names(arguments) == expected


@pytest.mark.parametrize("text", ["", "[1, 2]", "ik_node: 3", "a: [unclosed"])
def test_overridden_names_of_an_empty_odd_or_broken_params_file_are_none(tmp_path, text):
    path = tmp_path / "odd.yaml"
    path.write_text(text)
    missing = str(tmp_path / "missing.yaml")
    assert overridden_names(["--params-file", str(path), "--params-file", missing, "-p", "mode:=track"]) == {
        "mode"
    }


# ---------------------------------------------------------------- NodeSettings


def test_node_settings_is_one_field_per_node_parameter_plus_the_mappings():
    extra = ("tip_tasks", "tip_task_axes", "tip_offsets", "tip_bands", "tip_gaze_axes", "tip_relative_to")
    extra += ("joint_weights", "rest_posture")
    extra += ("obstacles",)
    extra += ("values",)
    assert NodeSettings.field_names() == tuple(spec.name for spec in NODE_PARAMETERS) + extra


def test_node_settings_from_values_is_a_typed_record():
    values = default_values(
        tip_links=["left_tool0", "right_tool0"],
        xacro_args=["arm:=left"],
        timeout=0.2,
        max_iterations=40,
        **{
            "tip_tasks.left_tool0": "position",
            "tip_tasks.right_tool0": "pose",
            "joint_weights.j1": 2.0,
            "joint_weights.j2": 0.0,
            "rest_posture.j1": 0.25,
            "joint_limits.j1.max_velocity": 1.5,
        },
    )
    settings = NodeSettings.from_values(values)
    assert settings.tip_links == ("left_tool0", "right_tool0") and type(settings.tip_links) is tuple
    assert settings.xacro_args == ("arm:=left",) and type(settings.xacro_args) is tuple
    assert settings.package_paths == () and settings.command_joints == ()  # unset: None -> ()
    assert settings.timeout == 0.2 and settings.max_iterations == 40 and settings.mode == "solve"
    assert settings.tip_tasks == {"left_tool0": "position", "right_tool0": "pose"}
    assert settings.joint_weights == {"j1": 2.0, "j2": 0.0}
    assert settings.rest_posture == {"j1": 0.25}
    assert settings.values["joint_limits.j1.max_velocity"] == 1.5
    assert settings.values == values and settings.values is not values  # a copy
    with pytest.raises(AttributeError):
        settings.timeout = 1.0  # frozen: a change makes a new record


def test_node_settings_from_values_needs_every_node_parameter():
    values = default_values()
    del values["timeout"]
    with pytest.raises(KeyError, match="timeout"):
        NodeSettings.from_values(values)


# ---------------------------------------------------------------- joint_parameter_defaults

SMALL_TREE = """<robot name="three"><link name="base"/><link name="a"/><link name="b"/><link name="tool"/>
<joint name="shoulder" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
  <limit lower="-1.5" upper="0.5" effort="1" velocity="2.0"/></joint>
<joint name="wrist" type="continuous"><parent link="a"/><child link="b"/><origin xyz="0.3 0 0"/>
  <axis xyz="0 1 0"/><limit effort="1" velocity="3.0"/></joint>
<joint name="slide" type="prismatic"><parent link="b"/><child link="tool"/><origin xyz="0.2 0 0"/>
  <axis xyz="1 0 0"/><limit lower="0" upper="0.1" effort="1" velocity="0"/></joint>
</robot>"""


def test_joint_parameter_defaults_of_a_bounded_a_continuous_and_a_no_velocity_joint():
    """shoulder: bounded, 2 rad/s; wrist: continuous, 3 rad/s; slide: bounded, velocity 0 (none
    known); none has an acceleration limit (a URDF gives none)."""
    tree = load_robot(SMALL_TREE).tree("base", ["tool"])
    defaults = joint_parameter_defaults(tree)
    assert defaults == {
        **{
            "joint_limits.shoulder.has_position_limits": True,
            "joint_limits.shoulder.min_position": -1.5,
            "joint_limits.shoulder.max_position": 0.5,
            "joint_limits.shoulder.has_velocity_limits": True,
            "joint_limits.shoulder.max_velocity": 2.0,
            "joint_limits.shoulder.has_acceleration_limits": False,
            "joint_limits.shoulder.max_acceleration": 0.0,
            "joint_weights.shoulder": 1.0,
            "rest_posture.shoulder": -0.5,
        },
        **{
            "joint_limits.wrist.has_position_limits": False,
            "joint_limits.wrist.min_position": 0.0,
            "joint_limits.wrist.max_position": 0.0,
            "joint_limits.wrist.has_velocity_limits": True,
            "joint_limits.wrist.max_velocity": 3.0,
            "joint_limits.wrist.has_acceleration_limits": False,
            "joint_limits.wrist.max_acceleration": 0.0,
            "joint_weights.wrist": 1.0,
            "rest_posture.wrist": 0.0,
        },
        **{
            "joint_limits.slide.has_position_limits": True,
            "joint_limits.slide.min_position": 0.0,
            "joint_limits.slide.max_position": 0.1,
            "joint_limits.slide.has_velocity_limits": False,
            "joint_limits.slide.max_velocity": 0.0,
            "joint_limits.slide.has_acceleration_limits": False,
            "joint_limits.slide.max_acceleration": 0.0,
            "joint_weights.slide": 1.0,
            "rest_posture.slide": 0.05,
        },
    }
    for name, value in defaults.items():  # every one a declared pattern, of its kind, in range
        spec = spec_of(name)
        assert spec in JOINT_PARAMETERS, name
        assert IS_OF_KIND[spec.kind](value), (name, value)
        spec.check(name, value)


def test_joint_parameter_defaults_are_for_the_1_dof_joints_only_behind_a_floating_root():
    """A floating root_joint (x y z qx qy qz qw) has no limits, weight or rest parameter; the
    joints behind it have theirs as without it."""
    robot = load_robot(SMALL_TREE, root_joint="floating")
    assert robot.tree("world", ["tool"]).joint_names[:7] == tuple(
        f"root_joint/{suffix}" for suffix in ("x", "y", "z", "qx", "qy", "qz", "qw")
    )
    assert joint_parameter_defaults(robot.tree("world", ["tool"])) == joint_parameter_defaults(
        load_robot(SMALL_TREE).tree("base", ["tool"])
    )


def test_root_joint_is_read_only_and_none_floating_or_planar():
    spec = spec_of("root_joint")
    assert spec.read_only and spec.default == "" and spec.choices == ("", "floating", "planar")
    with pytest.raises(IKNodeError) as refused:
        check_values(default_values(root_joint="free-flyer"))
    assert str(refused.value) == (
        "parameter root_joint must be one of ['', 'floating', 'planar'], got 'free-flyer'"
    )
    assert NodeSettings.from_values(default_values(root_joint="planar")).root_joint == "planar"


# ---------------------------------------------------------------- a tip's task, axes and offset


@pytest.mark.parametrize("task", ["pose", "position", "orientation", "vz", "vx vy wz", "wz,vx", " vx,  vy "])
def test_tip_tasks_takes_a_named_kind_or_axis_names(task):
    spec_of("tip_tasks.tool0").check("tip_tasks.tool0", task)


@pytest.mark.parametrize("task", ["everything", "", "vz tz", "VZ", "pose vz", "vz;wz", "vz wz vz"])
def test_tip_tasks_refuses_anything_else_naming_the_parameter_and_the_syntax(task):
    with pytest.raises(IKNodeError) as refused:
        spec_of("tip_tasks.left_tool0").check("tip_tasks.left_tool0", task)
    assert str(refused.value) == (
        "parameter tip_tasks.left_tool0 must be one of ['pose', 'position', 'orientation', 'gaze'] or axis "
        "names among vx vy vz wx wy wz separated by spaces or commas (e.g. 'vz', 'vx vy wz'), each axis "
        f"once, got {task!r}"
    )


@pytest.mark.parametrize(
    "offset",
    [(0.0, 0.0, 0.0), [0.0, 0.0, 0.12], array.array("d", [0.1, -0.2, 0.3]), np.array([0.0, 1.0, 2.0])],
)
def test_tip_offsets_takes_three_finite_doubles_as_rclpy_gives_them(offset):
    spec_of("tip_offsets.tool0").check("tip_offsets.tool0", offset)


@pytest.mark.parametrize(
    "offset, refusal",
    [
        ([0.0, 0.1], "must have 3 values [m], got [0.0, 0.1]"),
        ([0.0, 0.1, 0.2, 0.3], "must have 3 values [m], got [0.0, 0.1, 0.2, 0.3]"),
        ([], "must have 3 values [m], got []"),
        ([0.0, math.nan, 0.0], "must be finite numbers [m], got [0.0, nan, 0.0]"),
        ([0.0, 0.0, -math.inf], "must be finite numbers [m], got [0.0, 0.0, -inf]"),
        (
            [0, 0, 1],
            "must be a double array (write doubles with a decimal point, 100.0 not 100), got [0, 0, 1]",
        ),
    ],
)
def test_tip_offsets_refuses_a_wrong_length_or_a_non_finite_value_naming_the_parameter(offset, refusal):
    with pytest.raises(IKNodeError) as refused:
        spec_of("tip_offsets.tool0").check("tip_offsets.tool0", offset)
    assert str(refused.value) == f"parameter tip_offsets.tool0 {refusal}"


def test_tip_task_axes_are_the_tip_s_or_the_base_s():
    spec = spec_of("tip_task_axes.tool0")
    for axes in ("tip", "base"):
        spec.check("tip_task_axes.tool0", axes)
    with pytest.raises(IKNodeError) as refused:
        spec.check("tip_task_axes.tool0", "world")
    assert str(refused.value) == "parameter tip_task_axes.tool0 must be one of ['tip', 'base'], got 'world'"


def test_the_tip_parameters_default_to_the_full_pose_in_the_tip_s_axes_at_its_origin():
    defaults = {spec.name: spec.default for spec in TIP_PARAMETERS}
    assert defaults == {
        "tip_tasks.{}": "pose",
        "tip_task_axes.{}": "tip",
        "tip_offsets.{}": (0.0, 0.0, 0.0),
        "tip_bands.{}": (0.0,) * 6,
        "tip_gaze_axes.{}": (0.0, 0.0, 1.0),
        "tip_relative_to.{}": "",
    }
    task, gaze = TipTask(), TipTask("gaze")
    assert (task.kind, task.axes, task.offset, task.bands, gaze.axis, task.relative_to or "") == tuple(
        defaults.values()
    )


@pytest.mark.parametrize(
    "values, parameter",
    [
        ({"tip_gaze_axes.tool0": [0.0, 0.0, 0.0]}, "tip_gaze_axes.tool0"),
        ({"tip_task_axes.tool0": "base"}, "tip_task_axes.tool0"),
        ({"tip_bands.tool0": [0, 0, 0, 0.1, 0, 0]}, "tip_bands.tool0"),
    ],
)
def test_a_gaze_the_tip_parameters_cannot_make_is_refused_naming_the_parameter(arm7, values, parameter):
    from test_policy import settings_for

    from ik_node.decisions.planning import plan_model

    settings = settings_for(arm7, **{"tip_tasks.tool0": "gaze", **values})
    with pytest.raises(IKNodeError, match=rf"^parameter {parameter} \(with tip_tasks.tool0 'gaze'\): "):
        plan_model(arm7, settings)


def test_a_tip_band_the_task_cannot_take_is_refused_naming_the_parameter(arm7):
    from test_policy import settings_for

    from ik_node.decisions.planning import plan_model

    settings = settings_for(arm7, **{"tip_tasks.tool0": "position", "tip_bands.tool0": [0, 0, 0, 0, 0, 1.0]})
    with pytest.raises(
        IKNodeError, match=r"parameter tip_bands.tool0 \(with tip_tasks.tool0 'position'\): .*band on wz"
    ):
        plan_model(arm7, settings)


def test_node_settings_carries_each_tip_s_task_axes_and_offset():
    values = default_values(
        tip_links=["left_foot", "tool0"],
        **{
            "tip_tasks.left_foot": "vz",
            "tip_task_axes.left_foot": "base",
            "tip_offsets.left_foot": array.array("d", [0.0, 0.0, -0.05]),  # (as rclpy may give it)
            "tip_tasks.tool0": "pose",
            "tip_task_axes.tool0": "tip",
            "tip_offsets.tool0": [0.0, 0.0, 0.1],
        },
    )
    check_values(values)
    settings = NodeSettings.from_values(values)
    assert settings.tip_tasks == {"left_foot": "vz", "tool0": "pose"}
    assert settings.tip_task_axes == {"left_foot": "base", "tool0": "tip"}
    assert settings.tip_offsets == {"left_foot": (0.0, 0.0, -0.05), "tool0": (0.0, 0.0, 0.1)}
    assert all(type(offset) is tuple for offset in settings.tip_offsets.values())


# ---------------------------------------------------------------- the solver options' parameters

OPTION_PARAMETERS = [spec for spec in NODE_PARAMETERS if spec.name in OPTION_SPECS]
#: The node's own default where it differs from the solver's (the node avoids branch flips).
NODE_DEFAULTS = {"max_joint_move": 0.5}


def test_every_node_option_is_a_parameter_and_no_other_option_is():
    assert {spec.name for spec in OPTION_PARAMETERS} == {option.name for option in OPTIONS if option.node}
    assert {"method", "solve_type", "position_tolerance", "orientation_tolerance", "min_damping"} <= {
        spec.name for spec in OPTION_PARAMETERS
    }


@pytest.mark.parametrize("spec", OPTION_PARAMETERS, ids=lambda spec: spec.name)
def test_an_option_s_parameter_has_the_option_s_kind_range_choices_unit_and_default(spec):
    option = OPTION_SPECS[spec.name]
    assert (spec.kind, spec.low, spec.high, spec.choices, spec.unit) == (
        option.kind,
        option.low,
        option.high,
        option.choices,
        option.unit,
    )
    assert spec.description.startswith(option.description)
    assert spec.default == NODE_DEFAULTS.get(spec.name, option.default)
    assert getattr(SolverOptions(), spec.name) == option.default  # the solver's default is the table's


def probe_values(spec: ParameterSpec) -> list:
    """Values of the parameter's kind on both sides of each bound, at the bounds, non-finite
    numbers, the choices and a non-choice."""
    if spec.choices:
        return [*spec.choices, "nonsense", spec.choices[0].upper(), ""]
    if spec.kind == "bool":
        return [True, False, 1, 0, "true", 0.0]
    if spec.kind == "integer":
        return [spec.low - 1, spec.low, spec.low + 1, spec.high - 1, spec.high, spec.high + 1, 2**40]
    low, high = spec.low, spec.high
    return [
        low - max(abs(low), 1e-3),
        np.nextafter(low, -math.inf),
        low,
        0.5 * (low + high),
        high,
        np.nextafter(high, math.inf),
        high + 1.0,
        math.nan,
        math.inf,
        -math.inf,
    ]


def refuses(call, *arguments, **options) -> str | None:
    """The refusal's message, or None when ``call(*arguments, **options)`` accepts."""
    try:
        call(*arguments, **options)
    except IKNodeError as error:
        return str(error)
    return None


@pytest.mark.parametrize("spec", OPTION_PARAMETERS, ids=lambda spec: spec.name)
def test_a_value_is_refused_by_the_parameter_exactly_when_the_solver_refuses_it(spec):
    """Both name the option and give the valid range or choices."""
    for value in probe_values(spec):
        value = float(value) if spec.kind == "double" else value
        node = refuses(spec.check, spec.name, value)
        solver = refuses(SolverOptions, **{spec.name: value})
        assert (node is None) == (solver is None), (value, node, solver)
        if node is not None:
            range_or_choices = str(list(spec.choices)) if spec.choices else bounds(spec)
            if spec.kind == "bool":
                range_or_choices = ""  # (node: 'must be a bool'; solver: 'must be true or false')
            for refusal in (node, solver):
                assert spec.name in refusal and range_or_choices in refusal, refusal


def test_the_solver_takes_max_joint_move_0_as_off_as_the_node_does():
    assert SolverOptions(max_joint_move=0.0).max_joint_move is None
    assert SolverOptions(max_joint_move=0.5).max_joint_move == 0.5
    spec_of("max_joint_move").check("max_joint_move", 0.0)


# ---------------------------------------------------------------- collisions: SRDF and obstacles

SRDF = """<?xml version="1.0"?>
<robot name="arm7"><disable_collisions link1="link1" link2="link2" reason="Adjacent"/></robot>"""


def obstacle_values(**obstacles) -> dict:
    """Default values with ``obstacle_names`` and each obstacle's ``type``, ``size``, ``pose``
    (``{name: (type, size, pose)}``; pose None: the parameter's default)."""
    values = default_values(obstacle_names=list(obstacles))
    for name, (kind, size, pose) in obstacles.items():
        values[f"obstacles.{name}.type"] = kind
        values[f"obstacles.{name}.size"] = size
        values[f"obstacles.{name}.pose"] = spec_of("obstacles.x.pose").default if pose is None else pose
    return values


def test_the_collision_parameters_are_declared_as_the_solver_s_options():
    for name in ("self_collision", "collision_margin"):
        assert spec_of(name).kind == OPTION_SPECS[name].kind
    assert spec_of("self_collision").default is False
    assert spec_of("collision_margin").unit == "m"
    assert spec_of("robot_description_semantic").kind == "string"
    assert not spec_of("robot_description_semantic").read_only  # a change rebuilds the solver
    assert spec_of("obstacle_names").read_only  # (its obstacles' parameters are declared at start)


@pytest.mark.parametrize(
    "name, pattern",
    [
        ("obstacles.table.type", "obstacles.{}.type"),
        ("obstacles.table.size", "obstacles.{}.size"),
        ("obstacles.post_2.pose", "obstacles.{}.pose"),
    ],
)
def test_the_obstacle_parameters_are_patterns_per_name(name, pattern):
    assert spec_of(name).name == pattern


def test_parameter_obstacles_of_each_type_in_the_base_frame():
    turn = [0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4)]  # a quarter turn about z
    values = obstacle_values(
        table=("box", [1.0, 0.6, 0.05], [0.5, 0.0, 0.2, *turn]),
        ball=("sphere", [0.1], [0.3, 0.3, 0.3, 0.0, 0.0, 0.0, 1.0]),
        post=("cylinder", [0.05, 1.0], None),
        bar=("capsule", [0.02, 0.4], None),
    )
    check_values(values)
    obstacles = NodeSettings.from_values(values).obstacles
    assert [(o.name, o.kind, o.size) for o in obstacles] == [
        ("table", "box", (1.0, 0.6, 0.05)),
        ("ball", "sphere", (0.1,)),
        ("post", "cylinder", (0.05, 1.0)),
        ("bar", "capsule", (0.02, 0.4)),
    ]
    np.testing.assert_allclose(obstacles[0].pose[:3, 3], [0.5, 0.0, 0.2])
    np.testing.assert_allclose(obstacles[0].pose[:3, 0], [0.0, 1.0, 0.0], atol=1e-12)  # x turned onto y
    np.testing.assert_array_equal(obstacles[2].pose, np.eye(4))  # the default pose: the base's origin


def test_no_obstacle_names_no_obstacles():
    assert parameter_obstacles(default_values()) == ()
    assert NodeSettings.from_values(default_values()).obstacles == ()


@pytest.mark.parametrize(
    "obstacle, refusal",
    [
        (("sphere", [0.1], [math.nan, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]), "parameter obstacles.ball.pose must be "
         "finite"),
        (("sphere", [0.1], [0.0] * 7), "obstacles.ball.*: obstacle 'ball': the orientation"),
        (("sphere", [-0.1], None), "obstacles.ball.*: obstacle 'ball': radius must be finite and > 0"),
        (("sphere", [0.1, 0.2], None), "obstacle 'ball': a sphere takes 1 size values"),
        (("box", [0.1, 0.2], None), "a box takes 3 size values [m]"),
        (("cone", [0.1], None), "parameter obstacles.ball.type must be one of ['sphere', 'box', 'capsule', "
         "'cylinder']"),
        (("sphere", [0.1], [0.0, 0.0, 0.0]), "parameter obstacles.ball.pose must have 7 values"),
        (("sphere", [1], None), "parameter obstacles.ball.size must be a double array"),
        ((None, [0.1], None), "parameter obstacles.ball.type is required for obstacle 'ball'"),
        (("sphere", None, None), "parameter obstacles.ball.size is required for obstacle 'ball'"),
    ],
)  # fmt: skip
def test_a_bad_obstacle_is_refused_naming_it_and_its_parameter(obstacle, refusal):
    with pytest.raises(IKNodeError) as raised:
        check_values(obstacle_values(ball=obstacle))
    assert refusal in str(raised.value)


@pytest.mark.parametrize(
    "names, refusal",
    [
        (["table", "table"], "parameter obstacle_names lists ['table'] more than once"),
        (["my.table"], "'my.table' is not usable in a parameter name"),
        (["2nd"], "'2nd' is not usable"),
        ([""], "'' is not usable"),
    ],
)
def test_obstacle_names_must_be_distinct_parameter_name_tokens(names, refusal):
    values = default_values(obstacle_names=names)
    with pytest.raises(IKNodeError) as raised:
        check_values(values)
    assert refusal in str(raised.value)


def test_the_srdf_parameter_takes_srdf_xml_or_nothing():
    check_values(default_values(robot_description_semantic=SRDF))
    check_values(default_values(robot_description_semantic=""))
    with pytest.raises(IKNodeError, match=r"robot_description_semantic is not well-formed SRDF XML"):
        check_values(default_values(robot_description_semantic="<robot><disable_collisions link1="))
    with pytest.raises(IKNodeError, match=r"parameter robot_description_semantic is not an SRDF: .*<html>"):
        check_values(default_values(robot_description_semantic="<html/>"))


def test_a_twist_tip_that_is_not_a_tip_is_refused_naming_it():
    values = default_values()
    values.update(tip_links=["tool0"], twist_tip="link3")
    with pytest.raises(IKNodeError, match="twist_tip 'link3' is not one of tip_links"):
        check_values(values)
    values.update(twist_tip="tool0")
    check_values(values)


@pytest.mark.parametrize(
    "values, words",
    [
        ({"tip_relative_to.right_tool0": "right_tool0"},
         "parameters tip_relative_to: task for tip 'right_tool0' is relative_to itself"),
        ({"tip_relative_to.right_tool0": "elbow"}, "parameters tip_relative_to: .*'elbow'"),
        ({"tip_relative_to.right_tool0": "left_tool0", "tip_relative_to.left_tool0": "right_tool0"},
         "parameters tip_relative_to: .*no chains or cycles"),
        ({"tip_relative_to.right_tool0": "left_tool0", "tip_task_axes.right_tool0": "base"},
         r"parameter tip_relative_to.right_tool0 \(with tip_tasks.right_tool0 'pose'\): a relative task is "
         r".* not axes='base'"),
    ],
)  # fmt: skip
def test_a_relative_task_the_tip_parameters_cannot_make_is_refused_naming_the_parameter(values, words):
    from test_policy import settings_for

    from ik_node import load_robot
    from ik_node.decisions.planning import plan_model
    from ik_node.description.catalogue import URDF_DIR

    dual_arm = load_robot(URDF_DIR / "dual_arm.urdf")
    with pytest.raises(IKNodeError, match=words):
        plan_model(dual_arm, settings_for(dual_arm, ("left_tool0", "right_tool0"), **values))
