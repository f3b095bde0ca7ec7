"""The ``ik_node solve`` / ``ik_node fk`` command line: success, unknown link, unreachable goal,
malformed input — each with its exit code and a message on stderr."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from ik_node import load_robot
from ik_node.catalogue import URDF_DIR

ARM7 = str(URDF_DIR / "arm7.urdf")


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
