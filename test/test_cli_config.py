"""``ik_node config``, end to end: the parameter file written from ``ik_node info``'s suggestions.

For every bundled robot, and test_xacro's xacro arm, the file has the node's keys, the absolute
URDF path (and the xacro arguments and package directories), every tip's task parameters at their
defaults (read back as the node's record and the solver's tasks), and the URDF's joint limits (read
from the XML, not from the model) for exactly the chain's joints, in the types the node declares
(doubles with a decimal point, as rcl's parser needs). For arm7, dual_arm and the xacro arm the
node, started with the file as is, reaches a goal (the FK of a random in-limit configuration)
sent through a real topic, checked by pinocchio's FK.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml
from ros_harness import running_node

from ik_node import load_robot
from ik_node.cli.robot_setup import yaml_scalar
from ik_node.decisions.command_line import overridden_names
from ik_node.decisions.parameters import (
    NODE_PARAMETERS,
    TIP_PARAMETERS,
    NodeSettings,
    check_values,
    spec_of,
)
from ik_node.decisions.planning import plan_model
from ik_node.description.catalogue import URDF_DIR
from ik_node.solver import TipTask

XACRO_DIR = Path(__file__).resolve().parent / "xacro"
#: test_xacro's fixture: a xacro arm in a package found through --package-path, and the URDF
#: written by hand for these arguments.
XACRO_ARM = XACRO_DIR / "packages" / "my_robot_description" / "urdf" / "arm.urdf.xacro"
XACRO_ARGS = ("prefix:=left_", "upper_length:=0.5", "with_tool:=true")
XACRO_OPTIONS = ("--package-path", str(XACRO_DIR / "packages"), *(f"--xacro-arg={a}" for a in XACRO_ARGS))


@dataclass(frozen=True)
class Case:
    """A robot description, the options ``ik_node`` needs for it, which of ``info``'s suggested
    tips the file serves (empty: the first), and a plain URDF of the same robot (the oracle)."""

    description: Path
    options: tuple[str, ...] = ()
    tips: tuple[str, ...] = ()
    reference: Path | None = None

    @property
    def urdf(self) -> Path:
        return self.reference or self.description


CASES = {
    "arm6": Case(URDF_DIR / "arm6.urdf"),
    "arm7": Case(URDF_DIR / "arm7.urdf", tips=("tool0",)),
    "dual_arm": Case(URDF_DIR / "dual_arm.urdf", tips=("left_tool0", "right_tool0")),
    "humanoid": Case(URDF_DIR / "humanoid.urdf", tips=("left_hand", "right_hand")),
    "mobile_manipulator": Case(URDF_DIR / "mobile_manipulator.urdf"),
    "xacro_arm": Case(XACRO_ARM, XACRO_OPTIONS, ("left_tool0",), XACRO_DIR / "arm_reference.urdf"),
}
#: Seconds to wait for the node's first answer (a loaded machine, a cold kernel cache).
NODE_WAIT = 60.0


def run(*arguments: str) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "ik_node.cli", *arguments], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result


def write_config(robot: str, directory: Path, *options: str) -> tuple[Path, str, tuple[str, ...]]:
    """``ik_node config`` for ``robot`` with the base ``info`` suggests first and the case's tips
    (each one of its suggestions); returns the file, the base and the tips."""
    case = CASES[robot]
    description = ("--urdf", str(case.description), *case.options)
    summary = json.loads(run("info", *description, "--json").stdout)
    base = summary["suggested_base_links"][0]
    suggested = [tip["link"] for tip in summary["suggested_tip_links"]]
    tips = case.tips or (suggested[0],)
    assert set(tips) <= set(suggested), f"{tips} not among the suggested tips {suggested}"
    path = directory / f"{robot}.yaml"
    arguments = ["config", *description, "--base", base, "--output", str(path), *options]
    run(*arguments, *(item for tip in tips for item in ("--tip", tip)))
    return path, base, tuple(tips)


def urdf_limits(urdf: Path) -> dict:
    """``{joint: (lower, upper, max_velocity)}`` from the XML (soft limits of a safety controller
    applied; None where there is no limit)."""
    limits = {}
    for joint in ElementTree.parse(urdf).getroot().iter("joint"):
        limit, soft = joint.find("limit"), joint.find("safety_controller")
        if joint.get("type") == "fixed":
            continue
        velocity = float(limit.get("velocity")) if limit is not None and limit.get("velocity") else None
        if joint.get("type") == "continuous":
            limits[joint.get("name")] = (None, None, velocity)
            continue
        lower, upper = float(limit.get("lower")), float(limit.get("upper"))
        if soft is not None:
            lower = max(lower, float(soft.get("soft_lower_limit", lower)))
            upper = min(upper, float(soft.get("soft_upper_limit", upper)))
        limits[joint.get("name")] = (lower, upper, velocity)
    return limits


def flatten(tree: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


@pytest.mark.parametrize("robot", sorted(CASES))
def test_the_file_has_the_chain_and_the_urdf_limits_in_the_node_types(robot, tmp_path):
    path, base, tips = write_config(robot, tmp_path)
    case = CASES[robot]
    urdf = case.urdf
    text = path.read_text()
    description = case.description.resolve()
    assert f"ros2 launch ik_node ik_node.launch.py urdf_file:={description} params_file:={path}" in text
    assert f"ik_node --ros-args --params-file {path}" in text
    document = yaml.safe_load(text)
    assert list(document) == ["ik_node"] and list(document["ik_node"]) == ["ros__parameters"]
    parameters = document["ik_node"]["ros__parameters"]
    assert parameters["robot_description_file"] == str(description)
    if case.options:  # xacro: the arguments and package directories the node needs
        assert parameters["xacro_args"] == list(XACRO_ARGS)
        assert parameters["package_paths"] == [str(XACRO_DIR / "packages")]
    else:
        assert "xacro_args" not in parameters and "package_paths" not in parameters
    chain_written = (parameters["base_link"], parameters["tip_links"], parameters["mode"])
    assert chain_written == (base, list(tips), "solve")

    chain = load_robot(urdf).tree(base, list(tips)).joint_names
    assert list(parameters["joint_limits"]) == list(chain)
    expected = urdf_limits(urdf)
    for joint, written in parameters["joint_limits"].items():
        lower, upper, velocity = expected[joint]
        assert written["has_position_limits"] == (lower is not None)
        position = (written["min_position"], written["max_position"])
        assert position == ((lower, upper) if lower is not None else (0.0, 0.0))  # exactly the URDF's
        assert written["has_velocity_limits"] == (velocity is not None and velocity > 0)
        assert written["max_velocity"] == (velocity if written["has_velocity_limits"] else 0.0)

    flat = flatten(parameters)
    for name, value in flat.items():  # kinds, ranges and choices as the node checks them
        spec_of(name).check(name, value)
    # every double written with a decimal point, as rcl's parser needs to read a double (PyYAML,
    # above, also reads 1e-05 as a string, and 100 as an integer)
    doubles = {name.rsplit(".", 1)[-1] for name in flat if spec_of(name).kind == "double"}
    for line in text.splitlines():
        key, _, value = line.strip().partition(": ")
        if key in doubles:
            assert re.fullmatch(r"-?\d+\.\d+(e[-+]\d+)?", value), line


@pytest.mark.parametrize("robot", ["arm7", "dual_arm"])
def test_every_tip_s_task_parameters_are_written_at_their_defaults_and_read_back(robot, tmp_path):
    """The file is complete: the node reads the task of each tip from it (the full pose in the
    tip's axes at its origin) as its record and the solver's tasks."""
    path, _, tips = write_config(robot, tmp_path)
    parameters = yaml.safe_load(path.read_text())["ik_node"]["ros__parameters"]
    assert parameters["tip_tasks"] == {tip: "pose" for tip in tips}
    assert parameters["tip_task_axes"] == {tip: "tip" for tip in tips}
    assert parameters["tip_offsets"] == {tip: [0.0, 0.0, 0.0] for tip in tips}
    per_tip = {spec.name.format(tip) for spec in TIP_PARAMETERS for tip in tips}
    assert per_tip <= overridden_names(["--ros-args", "--params-file", str(path)])

    values = {spec.name: spec.default for spec in NODE_PARAMETERS} | flatten(parameters)
    check_values(values)
    settings = NodeSettings.from_values(values)
    assert settings.tip_offsets == {tip: (0.0, 0.0, 0.0) for tip in tips}
    model = plan_model(load_robot(CASES[robot].urdf), settings)
    assert model.options.tasks == {tip: TipTask() for tip in tips}


@pytest.mark.parametrize(
    "value", ["vx vy wz", "vz", "wz,vx", "base", "tip", (0.0, 0.0, 0.12), [-0.5, 1e-05, 2.0]]
)
def test_a_tip_parameter_s_value_is_written_as_yaml_that_reads_back_the_same(value):
    read = yaml.safe_load(f"key: {yaml_scalar(value)}")["key"]
    assert read == (list(value) if isinstance(value, tuple) else value)


def test_track_mode_is_written_for_a_robot_with_velocity_limits(tmp_path):
    path, _, _ = write_config("arm6", tmp_path, "--mode", "track")
    assert yaml.safe_load(path.read_text())["ik_node"]["ros__parameters"]["mode"] == "track"


def pinocchio_pose(urdf: Path, values: dict, link: str, base: str) -> np.ndarray:
    """4x4 pose of ``link`` in ``base`` by pinocchio (revolute joints only: q index per joint)."""
    pinocchio = pytest.importorskip("pinocchio", reason="pinocchio (PyPI 'pin') is a test extra")
    model = pinocchio.buildModelFromUrdf(str(urdf))
    data = model.createData()
    q = pinocchio.neutral(model)
    for name, value in values.items():
        joint = model.joints[model.getJointId(name)]
        assert joint.nq == 1, f"{name}: only 1-DOF joints here"
        q[joint.idx_q] = value
    pinocchio.framesForwardKinematics(model, data, q)
    pose = {}
    for frame in (link, base):
        placement = data.oMf[model.getFrameId(frame)]
        pose[frame] = np.eye(4)
        pose[frame][:3, :3], pose[frame][:3, 3] = placement.rotation, placement.translation
    return np.linalg.inv(pose[base]) @ pose[link]


@pytest.mark.parametrize("robot", ["arm7", "dual_arm", "xacro_arm"])
def test_the_node_started_with_the_file_reaches_a_goal(robot, tmp_path, ros_context):
    path, base, tips = write_config(robot, tmp_path)
    urdf = CASES[robot].urdf  # (for the xacro arm: the same robot written by hand)
    limits = yaml.safe_load(path.read_text())["ik_node"]["ros__parameters"]["joint_limits"]
    rng = np.random.default_rng(16)
    target = {}  # a random configuration in the middle half of the written limits
    for joint, limit in limits.items():
        low, high = limit["min_position"], limit["max_position"]
        target[joint] = rng.uniform(low + 0.25 * (high - low), high - 0.25 * (high - low))
    goals = {tip: pinocchio_pose(urdf, target, tip, base) for tip in tips}

    with running_node("--params-file", str(path), tips=tips) as (process, client):
        assert process.wait_for_log("loaded from robot_description_file", NODE_WAIT), process.log()
        command = None
        for tip in tips:  # a goal per tip; the node keeps each tip's latest goal
            before = len(client.commands)
            client.send_goal(goals[tip], tip=tip)
            command = client.wait_command(before, timeout=NODE_WAIT)
            assert command is not None, f"no command for the goal of {tip}:\n{process.log()}"
        log = process.log()
    assert "[WARN]" not in log and "[ERROR]" not in log, log

    reached = dict(zip(command.name, command.position))
    assert set(reached) == set(limits)
    for joint, value in reached.items():
        assert limits[joint]["min_position"] <= value <= limits[joint]["max_position"], joint
    for tip in tips:
        pose = pinocchio_pose(urdf, reached, tip, base)
        cosine = (np.trace(pose[:3, :3].T @ goals[tip][:3, :3]) - 1) / 2
        assert np.linalg.norm(pose[:3, 3] - goals[tip][:3, 3]) < 1e-5, tip
        assert math.acos(min(1.0, max(-1.0, cosine))) < 1e-5, tip
