"""The solver's options without solving (ik_node.solver.options): the one specification table
(SolverOptions' defaults and refusals come from it), and TipTask: kinds given by name, by axis
names or as a mask, the axes ('tip' or 'base'), the controlled point's offset, and refusals that
name the tip where it is known. (That the node's parameters agree with the table:
test_parameters.py.)"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from ik_node.errors import IKNodeError, UnknownLinkError
from ik_node.solver import SolverOptions, TipTask
from ik_node.solver.inputs import resolve_tasks
from ik_node.solver.options import AXIS_NAMES, OPTION_SPECS, OPTIONS, TASK_KINDS, task_kind

pytestmark = pytest.mark.plain_python

# ---------------------------------------------------------------- SolverOptions and the table


def test_the_option_names_are_unchanged():
    assert SolverOptions.names() == (
        "tasks",
        "position_tolerance",
        "orientation_tolerance",
        "method",
        "solve_type",
        "joint_weights",
        "lower",
        "upper",
        "rest_posture",
        "posture_gain",
        "min_damping",
        "max_iterations",
        "max_attempts",
        "seed_table_size",
        "random_seed",
        "max_joint_move",
        "self_collision",
        "collision_margin",
        "srdf",
        "obstacles",
    )


def test_every_scalar_option_is_in_the_table_with_its_default():
    fields = {field.name: field.default for field in dataclasses.fields(SolverOptions)}
    assert set(OPTION_SPECS) == set(fields) - {
        "tasks", "joint_weights", "lower", "upper", "rest_posture", "srdf", "obstacles"
    }  # fmt: skip
    for spec in OPTIONS:
        assert fields[spec.name] == spec.default, spec.name
        spec.check(spec.default)  # a default passes its own check
    assert (TipTask().position_tolerance, TipTask().orientation_tolerance) == (
        OPTION_SPECS["position_tolerance"].default,
        OPTION_SPECS["orientation_tolerance"].default,
    )


@pytest.mark.parametrize(
    "option, value, refusal",
    [
        ("method", "newton", "unknown method 'newton'; choose one of ['dls', 'pinv', 'transpose', 'ccd']"),
        ("solve_type", 3, "unknown solve_type 3; choose one of ['speed', 'distance', 'manipulability']"),
        ("position_tolerance", 0.0, "position_tolerance must be a finite number in [1e-09, 1] m, got 0.0"),
        ("position_tolerance", 2.0, "position_tolerance must be a finite number in [1e-09, 1] m, got 2.0"),
        (
            "orientation_tolerance",
            math.nan,
            "orientation_tolerance must be a finite number in [1e-09, 3.2] rad",
        ),
        ("min_damping", -1e-3, "min_damping must be a finite number in [0, 1], got -0.001"),
        ("min_damping", True, "min_damping must be a finite number in [0, 1], got True"),
        ("max_iterations", 0, "max_iterations must be an integer in [1, 100000], got 0"),
        ("max_iterations", 10.0, "max_iterations must be an integer in [1, 100000], got 10.0"),
        ("max_attempts", 0, "max_attempts must be an integer in [1, inf] (or None), got 0"),
        ("seed_table_size", -1, "seed_table_size must be an integer in [0, inf] (or None), got -1"),
        ("random_seed", 2**32, "random_seed must be an integer in [0, 4294967295], got 4294967296"),
        ("random_seed", -1, "random_seed must be an integer in [0, 4294967295], got -1"),
        ("max_joint_move", -0.1, "max_joint_move must be a finite number in [0, 100] rad or m (or None)"),
        ("max_joint_move", math.inf, "max_joint_move must be a finite number in [0, 100] rad or m (or None)"),
        ("posture_gain", 1.5, "posture_gain must be a finite number in [0, 1], got 1.5"),
        (
            "posture_gain",
            {"j2": -0.5},
            "posture_gain for joint 'j2' must be a finite number in [0, 1], got -0.5",
        ),
        ("posture_gain", [0.5, 2.0], "posture_gain[1] must be a finite number in [0, 1], got 2.0"),
    ],
)
def test_an_option_out_of_its_range_is_refused_naming_it_and_the_range(option, value, refusal):
    with pytest.raises(IKNodeError) as refused:
        SolverOptions(**{option: value})
    assert str(refused.value).startswith(refusal), str(refused.value)


@pytest.mark.parametrize(
    "option, value",
    [
        ("position_tolerance", 1e-9),
        ("orientation_tolerance", 3.2),
        ("min_damping", 0),  # an int is a number here (the node's typing is ROS's)
        ("max_iterations", np.int64(100000)),
        ("random_seed", 2**32 - 1),
        ("max_joint_move", 100.0),
        ("max_attempts", None),
        ("seed_table_size", 0),
        ("posture_gain", np.array([0.0, 1.0])),
    ],
)
def test_an_option_at_its_bound_is_taken(option, value):
    SolverOptions(**{option: value})


def test_max_joint_move_0_is_off_as_none():
    assert SolverOptions(max_joint_move=0.0).max_joint_move is None
    assert SolverOptions(max_joint_move=0).max_joint_move is None
    assert dataclasses.replace(SolverOptions(max_joint_move=0.5), max_joint_move=0.0).max_joint_move is None


# ---------------------------------------------------------------- TipTask: kinds


@pytest.mark.parametrize("kind", list(TASK_KINDS))
def test_a_named_kind_is_kept_by_name(kind):
    task = TipTask(kind)
    assert task.kind == kind and task.mask == TASK_KINDS[kind]
    np.testing.assert_array_equal(task.rows, np.flatnonzero(TASK_KINDS[kind]))


@pytest.mark.parametrize(
    "names, rows",
    [
        ("vz", [2]),
        ("wz", [5]),
        ("vx vy wz", [0, 1, 5]),
        ("wz,vx", [0, 5]),
        ("vx, vy,vz", [0, 1, 2]),
        ("  wx\twy  ", [3, 4]),
        (" ".join(AXIS_NAMES), [0, 1, 2, 3, 4, 5]),
    ],
)
def test_axis_names_become_the_mask_in_row_order(names, rows):
    task = TipTask(names)
    assert task.kind == tuple(index in rows for index in range(6)) == task.mask
    assert task.rows.tolist() == rows
    assert task == TipTask(task.kind)  # the same task as the mask given as such


@pytest.mark.parametrize("mask", [[0, 0, 1, 0, 0, 0], np.array([False, False, True, False, False, False])])
def test_a_mask_is_stored_as_six_bools(mask):
    task = TipTask(mask)
    assert task.kind == (False, False, True, False, False, False) and task == TipTask("vz")
    assert all(type(flag) is bool for flag in task.kind)
    hash(task)  # (frozen and hashable)


@pytest.mark.parametrize(
    "kind, refusal",
    [
        ("bogus", "unknown task 'bogus'; use one of ['pose', 'position', 'orientation', 'gaze'] or axis "
         "names among vx vy vz wx wy wz separated by spaces or commas (e.g. 'vz', 'vx vy wz')"),
        ("", "unknown task ''"),
        (" , ", "unknown task ' , '"),
        ("vz Vx", "unknown task 'vz Vx'"),
        ("position vz", "unknown task 'position vz'"),
        ("vz;wz", "unknown task 'vz;wz'"),
        ("wz vz wz", "task 'wz vz wz' names wz more than once"),
        ((1, 0), "a task mask needs 6 booleans (vx vy vz wx wy wz) with one set, got (1, 0)"),
        ((0,) * 6, "a task mask needs 6 booleans (vx vy vz wx wy wz) with one set"),
        (("vz",) * 6, "a task mask needs 6 booleans"),
        ([[1, 0], [1]], "a task mask needs 6 booleans"),
        (None, "a task mask needs 6 booleans"),
    ],
)  # fmt: skip
def test_a_kind_that_is_none_of_these_is_refused_saying_what_is_valid(kind, refusal):
    with pytest.raises(IKNodeError) as refused:
        task_kind(kind)
    assert str(refused.value).startswith(refusal), str(refused.value)
    with pytest.raises(IKNodeError):
        TipTask(kind)


# ---------------------------------------------------------------- TipTask: axes and offset


def test_a_base_axes_task_on_an_offset_point_validates():
    task = TipTask(axes="base", offset=(0, 0, 0.1), kind="vz")
    assert task.axes == "base" and task.offset == (0.0, 0.0, 0.1)
    assert all(type(value) is float for value in task.offset)
    assert task.rows.tolist() == [2] and task.kind == (False, False, True, False, False, False)


def test_the_defaults_are_the_full_pose_in_the_tip_s_axes_at_its_origin():
    task = TipTask()
    assert (task.kind, task.axes, task.offset, task.weight) == ("pose", "tip", (0.0, 0.0, 0.0), 1.0)
    assert TipTask("pose", 1.0, 1e-5, 1e-5) == task  # (the former positional order still holds)


@pytest.mark.parametrize("offset", [np.array([0.1, 0.2, 0.3]), [0.1, 0.2, 0.3], (0.1, 0.2, 0.3)])
def test_an_offset_is_stored_as_a_tuple_of_three_floats(offset):
    assert TipTask(offset=offset).offset == (0.1, 0.2, 0.3)


@pytest.mark.parametrize(
    "changes, refusal",
    [
        ({"axes": "world"}, "task axes must be one of ['tip', 'base'], got 'world'"),
        ({"axes": "Base"}, "task axes must be one of ['tip', 'base'], got 'Base'"),
        ({"axes": None}, "task axes must be one of ['tip', 'base'], got None"),
        ({"offset": (0.0, 0.1)},
         "task offset must be 3 finite numbers x y z [m] in the tip frame, got (0.0, 0.1)"),
        ({"offset": (0.0, 0.0, 0.0, 1.0)}, "task offset must be 3 finite numbers"),
        ({"offset": np.eye(3)}, "task offset must be 3 finite numbers"),
        ({"offset": (0.0, math.nan, 0.0)}, "task offset must be 3 finite numbers"),
        ({"offset": (0.0, 0.0, math.inf)}, "task offset must be 3 finite numbers"),
        ({"offset": "0 0 1"}, "task offset must be 3 finite numbers x y z [m] in the tip frame, got '0 0 1'"),
        ({"offset": None}, "task offset must be 3 finite numbers"),
        ({"offset": ("a", "b", "c")}, "task offset must be 3 finite numbers"),
        ({"weight": 0.0}, "task weight must be a positive number, got 0.0"),
        ({"weight": math.nan}, "task weight must be a positive number, got nan"),
        ({"position_tolerance": 0.0},
         "task position_tolerance must be a finite number in [1e-09, 1] m, got 0.0"),
        ({"orientation_tolerance": 4.0},
         "task orientation_tolerance must be a finite number in [1e-09, 3.2] rad"),
    ],
)  # fmt: skip
def test_bad_axes_offsets_weights_and_tolerances_are_refused_saying_what_is_valid(changes, refusal):
    with pytest.raises(IKNodeError) as refused:
        TipTask(**changes)
    assert str(refused.value).startswith(refusal), str(refused.value)


# ---------------------------------------------------------------- the tip named where known


@pytest.mark.parametrize("kind", ["vq", (1, 0, 0), "vz vz"])
def test_a_bad_kind_for_a_tip_is_refused_naming_the_tip(kind):
    for make in (
        lambda: resolve_tasks(["left_foot", "tool0"], {"tool0": kind}, 1e-5, 1e-5),
        lambda: SolverOptions(tasks={"tool0": kind}),
    ):
        with pytest.raises(IKNodeError, match=r"^task for tip 'tool0': "):
            make()


def test_resolve_tasks_keeps_tasks_makes_kinds_tasks_and_fills_in_the_pose():
    foot = TipTask("vz", axes="base", offset=(0.0, 0.0, -0.05))
    tasks = resolve_tasks(["left_foot", "hand", "tool0"], {"left_foot": foot, "hand": "vx vy"}, 1e-4, 2e-3)
    assert tasks["left_foot"] is foot
    assert tasks["hand"] == TipTask((True, True, False, False, False, False), 1.0, 1e-4, 2e-3)
    assert tasks["tool0"] == TipTask("pose", 1.0, 1e-4, 2e-3)
    with pytest.raises(UnknownLinkError, match="unknown tip in tasks 'hand'"):
        resolve_tasks(["tool0"], {"hand": "pose"}, 1e-5, 1e-5)


def test_tasks_must_be_a_mapping():
    with pytest.raises(
        IKNodeError, match=r"tasks must be a mapping \{tip: TipTask or kind\}, got \['pose'\]"
    ):
        SolverOptions(tasks=["pose"])
