"""The ``ik_node`` command line: its usage (help, the node's entry points), ``solve`` / ``fk``
(success, unknown link, unreachable goal, malformed input), ``info`` on every bundled robot
against the URDF's XML and the model, and ``config``'s refusals — each with its exit code and a
message on stderr. (``config``'s files and the node started with them: test_cli_config.py.)"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
import yaml

from ik_node import load_robot
from ik_node.cli.main import SUBCOMMANDS, _parser, _task, main
from ik_node.decisions.conversions import pose_to_fields
from ik_node.description.catalogue import URDF_DIR
from ik_node.solver import TipTask

ARM7 = str(URDF_DIR / "arm7.urdf")
ARM6 = str(URDF_DIR / "arm6.urdf")
BUNDLED_ROBOTS = ("arm6", "arm7", "dual_arm", "humanoid", "mobile_manipulator")
XACRO_PACKAGES = Path(__file__).resolve().parent / "xacro" / "packages"
XACRO_ARM = XACRO_PACKAGES / "my_robot_description" / "urdf" / "arm.urdf.xacro"  # (test_xacro's)
XACRO_REFERENCE = XACRO_PACKAGES.parent / "arm_reference.urdf"
#: How a numeric option's help states its unit.
UNIT = r"\[(m|s|rad|rad or m|rad/s\^2 or m/s\^2|unitless[^]]*)\]"


def run(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ik_node.cli", *arguments], capture_output=True, text=True, timeout=60
    )


def parse_joints(stdout: str) -> dict:
    return {
        line.split()[0]: float(line.split()[1])
        for line in stdout.splitlines()
        if line and not line.startswith("#")
    }


def test_fk_then_solve_round_trip():
    q = ["0.3", "-0.4", "0.2", "-2.0", "0.1", "1.9", "0.5"]
    forward = run("fk", "--urdf", ARM7, "--base", "base_link", "--tip", "tool0", "--q", *q)
    assert forward.returncode == 0, forward.stderr
    lines = dict(line.split(":", 1) for line in forward.stdout.splitlines())
    xyz = lines["xyz [m]"].split()
    quaternion = lines["quaternion xyzw"].split()
    expected = load_robot(ARM7).tree("base_link", "tool0").forward(np.array(q, dtype=float))
    np.testing.assert_allclose(np.array(xyz, dtype=float), expected[:3, 3], atol=1e-6)

    solved = run(
        "solve", "--urdf", ARM7, "--base", "base_link", "--tip", "tool0", "--xyz", *xyz, "--quat", *quaternion
    )
    assert solved.returncode == 0, solved.stderr
    assert "# success" in solved.stdout
    joints = parse_joints(solved.stdout)
    pose = load_robot(ARM7).forward(joints, "tool0", base="base_link")
    np.testing.assert_allclose(pose[:3, 3], np.array(xyz, dtype=float), atol=1e-5)  # xyz printed to 1e-6


def test_unknown_link_lists_the_links():
    result = run(
        "solve", "--urdf", ARM7, "--base", "base_link", "--tip", "gripper", "--xyz", "0.4", "0", "0.5"
    )
    assert result.returncode == 2
    assert "unknown link 'gripper'" in result.stderr and "tool0" in result.stderr
    assert "Traceback" not in result.stderr


def test_unreachable_goal_reports_the_best_error():
    result = run("solve", "--urdf", ARM7, "--base", "base_link", "--tip", "tool0", "--xyz", "3", "0", "0")
    assert result.returncode == 1
    assert "unreachable" in result.stderr and "position error" in result.stderr
    joints = parse_joints(result.stdout)
    assert len(joints) == 7 and all(np.isfinite(list(joints.values())))


def test_solve_all_prints_every_solution_each_reaching_the_goal():
    """``solve --all`` on the 6-joint arm (three parallel axes: a closed form): a line of joint
    values per solution, in the ``# joints:`` order, nearest the seed first, each reaching the goal
    (FK, values printed to 1e-6), distinct, and a summary saying the set is complete; an
    unreachable goal exits 1 with the closest approaches."""
    chain = ("--urdf", ARM6, "--base", "base_link", "--tip", "tool0")
    seed = np.array([0.1, -1.2, 1.0, -1.0, 1.2, 0.3])
    goal = load_robot(ARM6).tree("base_link", "tool0").forward(seed + 0.05)
    xyz = [f"{value:.9f}" for value in goal[:3, 3]]
    quaternion = pose_to_fields(goal)[1]
    shown = run(
        "solve", *chain, "--xyz", *xyz, "--quat", *[f"{value:.12f}" for value in quaternion], "--all",
        "--seed", *map(str, seed),
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    names = lines[0].removeprefix("# joints:").split()
    rows = np.array([line.split("#")[0].split() for line in lines[1:-1]], dtype=float)
    assert len(rows) >= 8 and lines[-1].startswith("# success") and "every solution" in lines[-1]
    tree = load_robot(ARM6).tree("base_link", "tool0")
    assert names == list(tree.joint_names)
    for row in rows:
        np.testing.assert_allclose(tree.forward(row), goal, atol=1e-5)
    assert len(np.unique(rows.round(4), axis=0)) == len(rows)
    np.testing.assert_allclose(rows[0], seed + 0.05, atol=1e-5)  # (the nearest the seed first)
    far = run("solve", *chain, "--xyz", "3", "0", "0", "--all")
    assert far.returncode == 1 and "no solution reaches the goal" in far.stderr


def test_solve_with_a_locked_joint():
    """``--lock joint7=0.3``: with ``--all`` the 7-joint arm's set in closed form (the other six
    decompose), every solution holding joint7 and reaching the goal; a plain ``solve`` holds it
    too; an unknown joint or a value out of range exits 2 naming it."""
    chain = ("--urdf", ARM7, "--base", "base_link", "--tip", "tool0")
    tree = load_robot(ARM7).tree("base_link", "tool0")
    q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.3])
    goal = tree.forward(q)
    pose = ("--xyz", *[f"{value:.9f}" for value in goal[:3, 3]], "--quat",
            *[f"{value:.12f}" for value in pose_to_fields(goal)[1]])  # fmt: skip
    shown = run("solve", *chain, *pose, "--all", "--lock", "joint7=0.3", "--seed", *map(str, q))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    rows = np.array([line.split("#")[0].split() for line in lines[1:-1]], dtype=float)
    assert "every solution" in lines[-1] and len(rows) >= 1, lines[-1]
    assert np.all(rows[:, 6] == 0.3)
    for row in rows:
        np.testing.assert_allclose(tree.forward(row), goal, atol=1e-5)
    np.testing.assert_allclose(rows[0], q, atol=1e-5)
    held = run("solve", *chain, *pose, "--lock", "joint7=0.3")
    assert held.returncode == 0, held.stderr
    answer = dict(line.split()[:2] for line in held.stdout.splitlines() if line.startswith("joint"))
    assert float(answer["joint7"]) == 0.3
    for bad in ("joint9=0", "joint7=9"):
        refused = run("solve", *chain, *pose, "--all", "--lock", bad)
        assert refused.returncode == 2 and bad.split("=")[0] in refused.stderr, refused.stderr


def test_malformed_input_is_refused_with_a_message():
    not_a_number = run(
        "solve", "--urdf", ARM7, "--base", "base_link", "--tip", "tool0", "--xyz", "0.4", "x", "0.5"
    )
    assert not_a_number.returncode == 2 and "invalid float value" in not_a_number.stderr
    zero_quaternion = run(
        "solve",
        "--urdf",
        ARM7,
        "--base",
        "base_link",
        "--tip",
        "tool0",
        "--xyz",
        "0.4",
        "0",
        "0.5",
        "--quat",
        "0",
        "0",
        "0",
        "0",
    )
    assert zero_quaternion.returncode == 2 and "non-zero quaternion" in zero_quaternion.stderr
    wrong_count = run("fk", "--urdf", ARM7, "--base", "base_link", "--tip", "tool0", "--q", "0.1", "0.2")
    assert wrong_count.returncode == 2 and "expected 7 joint values" in wrong_count.stderr
    missing_file = run("fk", "--urdf", "/nonexistent.urdf", "--base", "base_link", "--tip", "tool0")
    assert missing_file.returncode == 2 and "URDF file not found" in missing_file.stderr


# ------------------------------------------------------------------ solve: the tip's task

SOLVE = ["solve", "--urdf", ARM7, "--base", "base_link", "--tip", "tool0", "--xyz", "0.4", "0", "0.5"]


@pytest.mark.parametrize(
    "options, task",
    [
        ([], TipTask()),
        (["--position-only"], TipTask("position")),
        (["--task", "orientation", "--tolerance", "1e-4"], TipTask("orientation", 1.0, 1e-4, 1e-4)),
        (["--task", "vx vy wz"], TipTask((True, True, False, False, False, True))),
        (["--task", "vz", "--task-axes", "base"], TipTask("vz", axes="base")),
        (["--offset", "0", "0", "0.1"], TipTask(offset=(0.0, 0.0, 0.1))),
        (
            ["--task=vz", "--task-axes=base", "--offset", "0.0", "-0.02", "0.1"],
            TipTask(axes="base", offset=(0, -0.02, 0.1), kind="vz"),
        ),
    ],
)
def test_solve_makes_the_tip_s_task_from_task_task_axes_offset_and_tolerance(options, task):
    assert _task(_parser().parse_args(SOLVE + options)) == task


@pytest.mark.parametrize(
    "options",
    [
        ["--position-only", "--task", "vz"],  # one or the other
        ["--task-axes", "world"],
        ["--offset", "0", "0.1"],
        ["--offset", "0", "x", "0.1"],
    ],
)
def test_solve_refuses_malformed_task_options_as_usage_errors(options, capsys):
    with pytest.raises(SystemExit) as exited:
        _parser().parse_args(SOLVE + options)
    assert exited.value.code == 2
    assert "ik_node solve: error:" in capsys.readouterr().err


@pytest.mark.parametrize(
    "options, message",
    [
        (
            ["--task", "vq"],
            "error: --task: unknown task 'vq'; use one of ['pose', 'position', 'orientation', 'gaze'] or",
        ),
        (["--task", "vz vz"], "error: --task: task 'vz vz' names vz more than once"),
        (["--offset", "0", "nan", "0"], "error: --offset: task offset must be 3 finite numbers x y z [m]"),
        (["--tolerance", "2"], "error: --tolerance must be a finite number in [1e-09, 1] m, got 2.0"),
        (["--tolerance", "0"], "error: --tolerance must be a finite number in [1e-09, 1] m, got 0.0"),
    ],
)
def test_solve_refuses_a_bad_task_naming_the_option_before_any_solve(options, message, capsys):
    assert main(SOLVE + options) == 2
    assert capsys.readouterr().err.startswith(message)


# ------------------------------------------------------------------ usage


@pytest.mark.parametrize("arguments", [(), ("-h",), ("--help",)], ids=["bare", "-h", "--help"])
def test_help_lists_the_subcommands_how_to_run_the_node_and_the_exit_codes(arguments):
    result = run(*arguments)
    assert result.returncode == 0, result.stderr
    for subcommand in SUBCOMMANDS:
        assert subcommand in result.stdout
    assert (
        "ik_node --ros-args --params-file my_robot.yaml -p robot_description_file:=robot.urdf"
        in result.stdout
    )
    assert "ros2 launch ik_node ik_node.launch.py" in result.stdout
    assert "exit codes" in result.stdout and "goal not reached" in result.stdout


@pytest.mark.parametrize("subcommand", SUBCOMMANDS)
def test_each_subcommand_has_a_help(subcommand):
    result = run(subcommand, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: ik_node {subcommand}")


def test_every_option_has_help_and_numbers_have_units():
    commands = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in commands.choices.items():
        for action in command._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"ik_node {name} {action.option_strings or action.dest} has no help"
            if action.type is float:
                assert re.search(UNIT, action.help), f"ik_node {name} {action.option_strings}: no unit"


@pytest.mark.parametrize("arguments", [("node", "--ros-args"), ("--ros-args",)], ids=["node", "--ros-args"])
def test_node_runs_from_the_node_subcommand_and_from_ros_args(arguments):
    """Without parameters the node refuses to start (tip_links is required): the node's own
    message and exit code show the command line reached it."""
    result = run(*arguments, "-p", "mode:=solve")
    assert result.returncode == 2
    assert "ik_node: parameter tip_links is required" in result.stderr


def test_an_unknown_subcommand_is_refused_with_the_choices():
    result = run("--params-file", "robot.yaml")
    assert result.returncode == 2
    assert "unknown option '--params-file'" in result.stderr and "--ros-args" in result.stderr


# ------------------------------------------------------------------ info


def movable_joints_in_the_xml(urdf: Path) -> dict:
    """``{joint: element}`` of the URDF's non-fixed joints, read with ElementTree (not the model)."""
    root = ElementTree.parse(urdf).getroot()
    return {joint.get("name"): joint for joint in root.iter("joint") if joint.get("type") != "fixed"}


@pytest.mark.parametrize("robot", BUNDLED_ROBOTS)
def test_info_lists_the_movable_joints_with_their_limits(robot):
    urdf = URDF_DIR / f"{robot}.urdf"
    expected = movable_joints_in_the_xml(urdf)
    summary = json.loads(run("info", "--urdf", str(urdf), "--json").stdout)
    assert [joint["name"] for joint in summary["movable_joints"]] == list(expected)
    for joint in summary["movable_joints"]:
        element = expected[joint["name"]]
        assert joint["type"] == element.get("type")
        assert joint["unit"] == ("m" if element.get("type") == "prismatic" else "rad")
        limit, soft = element.find("limit"), element.find("safety_controller")
        if element.get("type") == "continuous":
            assert joint["lower"] is None and joint["upper"] is None
        else:  # the hard limits, tightened by a safety controller's soft limits
            lower, upper = float(limit.get("lower")), float(limit.get("upper"))
            if soft is not None:
                lower = max(lower, float(soft.get("soft_lower_limit", lower)))
                upper = min(upper, float(soft.get("soft_upper_limit", upper)))
            assert (joint["lower"], joint["upper"]) == (lower, upper)
        assert joint["max_velocity"] == float(limit.get("velocity"))
    model = load_robot(urdf)
    assert set(summary["degrees_of_freedom"]) == set(model.joint_names)
    assert summary["unusable_joints"] == {}
    assert summary["root"] == model.root and len(summary["links"]) == len(model.links)

    text = run("info", "--urdf", str(urdf))
    assert text.returncode == 0, text.stderr
    assert f"movable joints: {len(expected)} " in text.stdout
    table = {line.split()[0]: line for line in text.stdout.splitlines() if line.startswith("  ")}
    for name, element in expected.items():
        unit = "m" if element.get("type") == "prismatic" else "rad"
        assert f"{unit}/s" in table[name], table[name]


@pytest.mark.parametrize("robot", BUNDLED_ROBOTS)
def test_info_suggests_a_base_above_every_joint_and_leaf_tips_by_joint_count(robot):
    urdf = URDF_DIR / f"{robot}.urdf"
    summary = json.loads(run("info", "--urdf", str(urdf), "--json").stdout)
    model = load_robot(urdf)
    base = summary["suggested_base_links"][0]
    assert summary["suggested_base_links"][-1] == model.root
    tips = summary["suggested_tip_links"]
    assert tips, "no tip suggested"
    parents = {
        element.find("parent").get("link") for element in ElementTree.parse(urdf).getroot().iter("joint")
    }
    counts = [tip["joints"] for tip in tips]
    assert counts == sorted(counts, reverse=True)
    for tip in tips:
        assert tip["link"] not in parents, f"{tip['link']} is not a leaf"
        path = model.path_joints(base, tip["link"])  # raises unless the tip is below the base
        assert tip["joints"] == sum(joint.type != "fixed" for joint in path) > 0
    # every movable joint is below the base: a tree from it to all tips holds every degree of freedom
    # the leaves reach
    assert set(model.tree(base, [tip["link"] for tip in tips]).joint_names) == set(model.joint_names)


def test_info_expands_a_xacro_file_with_its_arguments_and_package_paths():
    """test_xacro's fixture arm, found through --package-path, lists the joints of the URDF
    written by hand for the same arguments."""
    result = run("info", "--urdf", str(XACRO_ARM), "--json", "--package-path", str(XACRO_PACKAGES),
                 "--xacro-arg", "prefix:=left_", "--xacro-arg", "with_tool:=true")  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    expected = movable_joints_in_the_xml(XACRO_REFERENCE)
    assert [joint["name"] for joint in summary["movable_joints"]] == list(expected)
    assert [tip["link"] for tip in summary["suggested_tip_links"]] == ["left_tool0"]
    without_packages = run("info", "--urdf", str(XACRO_ARM))
    assert without_packages.returncode == 2
    assert "'my_robot_description' not found" in without_packages.stderr
    assert "--package-path" in without_packages.stderr


FLYER = """<robot name="flyer">
  <link name="world"/><link name="body"/><link name="arm"/><link name="hand"/><link name="odd_link"/>
  <joint name="free" type="floating"><parent link="world"/><child link="body"/></joint>
  <joint name="shoulder" type="revolute"><parent link="body"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" velocity="2" effort="1"/></joint>
  <joint name="wrist" type="continuous"><parent link="arm"/><child link="hand"/><axis xyz="0 1 0"/></joint>
  <joint name="odd" type="screw"><parent link="body"/><child link="odd_link"/></joint>
</robot>"""


FLOATING_COORDINATES = [f"free/{suffix}" for suffix in ("x", "y", "z", "qx", "qy", "qz", "qw")]
FLOATING_TANGENT = [f"free/{suffix}" for suffix in ("vx", "vy", "vz", "wx", "wy", "wz")]


def test_info_shows_a_floating_joint_s_coordinates_counts_its_6_dof_and_names_unusable_joints(tmp_path):
    urdf = tmp_path / "flyer.urdf"
    urdf.write_text(FLYER)
    summary = json.loads(run("info", "--urdf", str(urdf), "--json").stdout)
    assert set(summary["unusable_joints"]) == {"odd"}
    assert "unknown type 'screw'" in summary["unusable_joints"]["odd"]
    free = next(joint for joint in summary["movable_joints"] if joint["name"] == "free")
    assert free["type"] == "floating" and free["coordinates"] == FLOATING_COORDINATES
    assert (free["lower"], free["upper"]) == (None, None)
    # degrees of freedom are tangent coordinates: 6 for the floating joint, 1 per 1-DOF joint
    assert summary["degrees_of_freedom"] == [*FLOATING_TANGENT, "shoulder", "wrist"]
    assert summary["suggested_base_links"] == ["world", "body"]  # whole-body, and held at the body
    assert summary["suggested_tip_links"] == [{"link": "hand", "joints": 3, "degrees_of_freedom": 8}]
    text = run("info", "--urdf", str(urdf))
    assert text.returncode == 0, text.stderr
    assert "movable joints: 3 (8 degrees of freedom)" in text.stdout
    assert re.search(r"\n  free +floating +none +none +coordinates free/\{x y z qx qy qz qw\}\n", text.stdout)
    assert "odd: unknown type 'screw'" in text.stdout
    assert re.search(r"hand +3: free, shoulder, wrist\n", text.stdout)
    assert re.search(r"odd_link +1: free  \(joint 'odd' cannot be used\)", text.stdout)
    assert re.search(
        r"suggested base links: world \(.*whole-body IK: 'free' moves the robot.*\), body \(", text.stdout
    )
    assert "hand (3 joints, 8 DOF)" in text.stdout
    assert f"next: ik_node config --urdf {urdf} --base world --tip hand" in text.stdout
    through = run("config", "--urdf", str(urdf), "--base", "world", "--tip", "odd_link")
    assert through.returncode == 2
    assert "error: joint 'odd' on the path from 'world' to 'odd_link' cannot be used" in through.stderr


def config_parameters(result: subprocess.CompletedProcess, node: str = "ik_node") -> dict:
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)[node]["ros__parameters"]


def test_config_of_a_floating_robot_writes_per_joint_parameters_for_its_1_dof_joints_only(tmp_path):
    urdf = tmp_path / "flyer.urdf"
    urdf.write_text(FLYER)
    result = run("config", "--urdf", str(urdf), "--base", "world", "--tip", "hand")
    parameters = config_parameters(result)
    assert list(parameters["joint_limits"]) == ["shoulder", "wrist"]
    assert "root_joint" not in parameters  # (the URDF's own floating joint: no root joint added)
    comment = " ".join(
        line.lstrip("# ").strip() for line in result.stdout.splitlines() if line.lstrip().startswith("#")
    )
    assert (
        f"Joint 'free' (floating, world -> body; coordinates {', '.join(FLOATING_COORDINATES)}) has no "
        "limits and no per-joint parameters (joint_limits, joint_weights, rest_posture)" in comment
    )
    assert "world -> hand, 3 joints (8 degrees of freedom)" in comment
    assert "Base pose (geometry_msgs/PoseStamped, in world's frame): /ik_node/base_pose" in comment
    assert "Joints world -> hand: free, shoulder, wrist" in comment
    held = config_parameters(run("config", "--urdf", str(urdf), "--base", "body", "--tip", "hand"))
    assert list(held["joint_limits"]) == ["shoulder", "wrist"]


PLANAR_ROVER = """<robot name="rover">
  <link name="map"/><link name="chassis"/><link name="boom"/><link name="tool"/>
  <joint name="drive" type="planar"><parent link="map"/><child link="chassis"/><axis xyz="0 0 1"/></joint>
  <joint name="slew" type="revolute"><parent link="chassis"/><child link="boom"/><axis xyz="0 0 1"/>
    <origin xyz="0 0 0.3"/><limit lower="-2" upper="2" velocity="1" effort="1"/></joint>
  <joint name="reach" type="prismatic"><parent link="boom"/><child link="tool"/><axis xyz="1 0 0"/>
    <limit lower="0.1" upper="0.8" velocity="0.5" effort="1"/></joint>
</robot>"""


def test_info_and_config_of_a_planar_root_joint_the_urdf_s_own_or_added_by_root_joint(tmp_path):
    urdf = tmp_path / "rover.urdf"
    urdf.write_text(PLANAR_ROVER)
    summary = json.loads(run("info", "--urdf", str(urdf), "--json").stdout)
    drive = summary["movable_joints"][0]
    assert drive["type"] == "planar" and drive["coordinates"] == ["drive/x", "drive/y", "drive/theta"]
    assert summary["degrees_of_freedom"] == ["drive/vx", "drive/vy", "drive/wz", "slew", "reach"]
    assert summary["suggested_base_links"] == ["map", "chassis"]
    assert summary["suggested_tip_links"] == [{"link": "tool", "joints": 3, "degrees_of_freedom": 5}]
    text = run("info", "--urdf", str(urdf)).stdout
    assert "movable joints: 3 (5 degrees of freedom)" in text
    assert re.search(r"drive +planar +none +none +coordinates drive/\{x y theta\}", text)
    parameters = config_parameters(run("config", "--urdf", str(urdf), "--base", "map", "--tip", "tool"))
    assert list(parameters["joint_limits"]) == ["slew", "reach"]

    # the same rover without its planar joint, given one by --root-joint planar (the node's root_joint)
    fixed = tmp_path / "rover_fixed.urdf"
    fixed.write_text(re.sub(r'<link name="map"/>|<joint name="drive".*?</joint>', "", PLANAR_ROVER))
    summary = json.loads(run("info", "--urdf", str(fixed), "--root-joint", "planar", "--json").stdout)
    assert summary["root"] == "world" and summary["movable_joints"][0]["name"] == "root_joint"
    assert summary["degrees_of_freedom"][:3] == ["root_joint/vx", "root_joint/vy", "root_joint/wz"]
    assert (
        "--root-joint planar --base world --tip tool"
        in run("info", "--urdf", str(fixed), "--root-joint", "planar").stdout
    )
    result = run("config", "--urdf", str(fixed), "--root-joint", "planar", "--base", "world", "--tip", "tool")
    parameters = config_parameters(result)
    assert parameters["root_joint"] == "planar" and parameters["base_link"] == "world"
    assert list(parameters["joint_limits"]) == ["slew", "reach"]
    assert f"ik_node config --urdf {fixed} --base world --tip tool --root-joint planar" in result.stdout
    without = run("info", "--urdf", str(fixed))
    assert "root_joint" not in without.stdout
    refused = run("info", "--urdf", str(fixed), "--root-joint", "spherical")
    assert refused.returncode == 2 and "--root-joint: invalid choice: 'spherical'" in refused.stderr


def test_info_of_unusable_input_exits_2_with_the_reason(tmp_path):
    missing = run("info", "--urdf", str(tmp_path / "robot.urdf"))
    assert missing.returncode == 2 and "URDF file not found" in missing.stderr
    broken = tmp_path / "broken.urdf"
    broken.write_text('<robot name="r"><link name="a"/></robot')
    malformed = run("info", "--urdf", str(broken))
    assert malformed.returncode == 2 and "malformed URDF XML" in malformed.stderr
    bad_argument = run("info", "--urdf", ARM7, "--xacro-arg", "prefix")
    assert (
        bad_argument.returncode == 2
        and "--xacro-arg takes NAME:=VALUE entries, got ['prefix']" in bad_argument.stderr
    )
    for result in (missing, malformed, bad_argument):
        assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr


# ------------------------------------------------------------------ config: bad input


def test_config_for_a_base_below_the_tip_writes_the_joints_crossed_going_up():
    """Any link can be the base: from link5 up to link2 the path crosses joint5, joint4 and joint3
    from child to parent; the file has their limits and names them."""
    result = run("config", "--urdf", ARM7, "--base", "link5", "--tip", "link2")
    parameters = config_parameters(result)
    assert parameters["base_link"] == "link5" and parameters["tip_links"] == ["link2"]
    assert list(parameters["joint_limits"]) == ["joint5", "joint4", "joint3"]
    assert "# Joints link5 -> link2: up through joint5, joint4, joint3\n" in result.stdout
    humanoid = run(
        "config", "--urdf", str(URDF_DIR / "humanoid.urdf"), "--base", "left_foot", "--tip", "pelvis"
    )
    assert list(config_parameters(humanoid)["joint_limits"]) == [
        "left_foot_joint", "left_ankle_roll_joint", "left_ankle_pitch_joint", "left_knee_joint",
        "left_hip_pitch_joint", "left_hip_roll_joint", "left_hip_yaw_joint",
    ]  # fmt: skip


def test_config_refuses_an_unknown_link_and_lists_the_links():
    result = run("config", "--urdf", ARM7, "--base", "base_link", "--tip", "gripper")
    assert result.returncode == 2 and not result.stdout
    assert "unknown link 'gripper'" in result.stderr and "tool0" in result.stderr and "link7" in result.stderr


def test_config_refuses_a_chain_without_movable_joints():
    result = run("config", "--urdf", ARM7, "--base", "world", "--tip", "base_link")
    assert result.returncode == 2 and "no movable joint between base link 'world'" in result.stderr


def test_config_refuses_a_missing_urdf_and_an_unwritable_output(tmp_path):
    missing = run("config", "--urdf", str(tmp_path / "robot.urdf"), "--base", "a", "--tip", "b")
    assert missing.returncode == 2 and "URDF file not found" in missing.stderr
    unwritable = run(
        "config",
        "--urdf",
        ARM7,
        "--base",
        "base_link",
        "--tip",
        "tool0",
        "--output",
        str(tmp_path / "no" / "x.yaml"),
    )
    assert (
        unwritable.returncode == 2
        and f"--output '{tmp_path / 'no' / 'x.yaml'}' cannot be written" in unwritable.stderr
    )


def test_config_track_mode_needs_velocity_limits(tmp_path):
    urdf = tmp_path / "slider.urdf"
    urdf.write_text(
        '<robot name="slider"><link name="base"/><link name="carriage"/>'
        '<joint name="slide" type="prismatic"><parent link="base"/><child link="carriage"/>'
        '<axis xyz="1 0 0"/><limit lower="0" upper="0.5" effort="10" velocity="0"/></joint></robot>'
    )
    result = run("config", "--urdf", str(urdf), "--base", "base", "--tip", "carriage", "--mode", "track")
    assert (
        result.returncode == 2 and "track mode needs a velocity limit for joints ['slide']" in result.stderr
    )
    solve = run("config", "--urdf", str(urdf), "--base", "base", "--tip", "carriage")
    assert solve.returncode == 0, solve.stderr
    assert "has_velocity_limits: false" in solve.stdout and "max_velocity: 0.0" in solve.stdout


@pytest.mark.parametrize("subcommand", ["info", "config", "solve", "fk", "path", "reach", "warmup", "node"])
def test_every_subcommand_lists_its_exit_codes_in_its_help(subcommand):
    """``--help`` of each subcommand ends with its exit codes, 0 and 2 (bad input) among them; the
    ones that can end unfinished say 1 too."""
    shown = run(subcommand, "--help")
    assert shown.returncode == 0, shown.stderr
    codes = shown.stdout.split("exit codes:")[-1]
    assert "exit codes:" in shown.stdout and "0 " in codes and "2 " in codes, shown.stdout
    if subcommand in ("solve", "path", "reach", "warmup"):
        assert "1 " in codes, shown.stdout
