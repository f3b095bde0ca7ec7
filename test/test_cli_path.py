"""``ik_node path`` (:mod:`ik_node.cli.cartesian_path`), run in-process through ``main(argv)``:
a relative line on arm7 whose printed points the robot's own FK puts on the line, its JSON, the
``--plot`` PNG, a waypoint out of reach (exit 1, the fraction printed), and bad input (exit 2,
the problem named). The planner itself: test_cartesian.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ik_node import load_robot
from ik_node.cli.cartesian_path import waypoint_poses
from ik_node.cli.main import main
from ik_node.description.catalogue import URDF_DIR
from ik_node.lie import matrix_to_rpy, rpy_to_matrix

pytest.importorskip("toppra", reason="timing a path needs toppra (pip install toppra)")

ARM7 = str(URDF_DIR / "arm7.urdf")
CHAIN = ["--urdf", ARM7, "--base", "base_link", "--tip", "tool0"]
START = [0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5]
PATH = ["path", *CHAIN, "--q", *map(str, START)]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def exit_code(argv) -> int:
    """``main(argv)``'s exit code, argparse's usage errors (SystemExit) included."""
    try:
        return main(argv)
    except SystemExit as exited:
        return exited.code


def printed_points(stdout: str) -> tuple[str, list[str], np.ndarray]:
    """The header line, the joint names and the rows (time, joint values) ``path`` printed."""
    lines = stdout.splitlines()
    header, columns = lines[0], lines[1]
    assert header.startswith("# fraction ") and columns.startswith("# time [s], joints [rad, m]: ")
    names = columns.split(": ", 1)[1].split()
    rows = np.array([[float(value) for value in line.split()] for line in lines[2:]])
    assert rows.shape[1] == 1 + len(names)
    return header, names, rows


def tip(names, q) -> np.ndarray:
    return load_robot(ARM7).forward(dict(zip(names, q)), "tool0", base="base_link")


def distance_to_segment(point, a, b) -> float:
    along = min(1.0, max(0.0, float((point - a) @ (b - a)) / float((b - a) @ (b - a))))
    return float(np.linalg.norm(point - (a + along * (b - a))))


def test_a_relative_line_is_printed_point_by_point_on_the_line(capsys):
    """15 cm along the base's x from the start: exit 0, the header says complete, times rise from
    0 to the duration, every printed point's tip (the robot's own FK, from the 6 printed decimals)
    on the segment, the last at the goal, the orientation the start's."""
    assert main([*PATH, "--relative", "--waypoint", "0.15", "0", "0", "--max-acceleration", "3"]) == 0
    header, names, rows = printed_points(capsys.readouterr().out)
    assert "fraction 1.000000, reason complete" in header and f"{len(rows)} points" in header
    times, q = rows[:, 0], rows[:, 1:]
    np.testing.assert_allclose(q[0], START)
    assert times[0] == 0.0 and np.all(np.diff(times) > 0.0)
    assert f"duration {times[-1]:.6f} s" in header
    start = tip(names, START)
    goal = start[:3, 3] + [0.15, 0.0, 0.0]
    assert len(rows) >= 0.15 / 0.005
    for row in q:
        assert distance_to_segment(tip(names, row)[:3, 3], start[:3, 3], goal) < 1e-5
    end = tip(names, q[-1])
    np.testing.assert_allclose(end[:3, 3], goal, atol=1e-5)
    np.testing.assert_allclose(end[:3, :3], start[:3, :3], atol=1e-5)


def test_untimed_json_and_a_turn_at_an_absolute_waypoint(capsys):
    """--json: the object's fields; untimed: null times. An absolute waypoint with an rpy: the
    path ends at that pose."""
    start = tip(load_robot(ARM7).tree("base_link", "tool0").joint_names, START)
    xyz = start[:3, 3] + [0.0, 0.0, -0.05]
    rpy = np.add(matrix_to_rpy(start[:3, :3]), [0.0, 0.0, 0.2])  # (turned 0.2 rad about the base's z)
    waypoint = [*(f"{value:.9f}" for value in xyz), *(f"{value:.9f}" for value in rpy)]
    assert main([*PATH, "--waypoint", *waypoint, "--json"]) == 0, capsys.readouterr().err
    path = json.loads(capsys.readouterr().out)
    assert path["reason"] == "complete" and path["fraction"] == 1.0
    assert path["time"] is None and path["duration"] is None and path["velocity"] is None
    assert len(path["q"]) == path["points"] == len(path["xyz"])
    end = tip(path["joint_names"], path["q"][-1])
    np.testing.assert_allclose(end[:3, 3], xyz, atol=1e-5)
    np.testing.assert_allclose(end[:3, :3], rpy_to_matrix(*rpy), atol=1e-5)


def test_plot_writes_a_png_timed_at_the_default_acceleration(tmp_path, capsys):
    plot = tmp_path / "path.png"
    assert main([*PATH, "--relative", "--waypoint", "0", "0.05", "0", "--plot", str(plot)]) == 0
    captured = capsys.readouterr()
    assert "(max acceleration 2 rad/s^2" in captured.out and f"wrote {plot}" in captured.err
    assert plot.stat().st_size > 1000 and plot.read_bytes()[:8] == PNG_SIGNATURE


def test_a_waypoint_out_of_reach_ends_early_with_the_fraction(capsys):
    """3 m away: exit 1, the part planned printed with its fraction (< 1), the reason on stderr."""
    assert main([*PATH, "--waypoint", "3", "0", "0.5"]) == 1
    captured = capsys.readouterr()
    header, _, rows = printed_points(captured.out)
    fraction = float(header.split("fraction ")[1].split(",")[0])
    assert 0.0 <= fraction < 1.0 and "reason unreachable" in header
    assert len(rows) >= 1 and np.all(np.isnan(rows[:, 0]))  # (untimed: nan)
    assert f"error: the path ended at fraction {fraction:.4f}" in captured.err


def test_relative_waypoints_compose_on_the_start_pose():
    start = np.eye(4)
    start[:3, :3] = rpy_to_matrix(0.1, 0.2, 0.3)
    start[:3, 3] = [0.4, 0.0, 0.5]
    kept, turned = waypoint_poses([[0.1, 0.0, 0.0], [0.0, 0.0, -0.1, 0.0, 0.0, 0.5]], start, True)
    np.testing.assert_allclose(kept[:3, 3], [0.5, 0.0, 0.5])
    np.testing.assert_allclose(kept[:3, :3], start[:3, :3])
    np.testing.assert_allclose(turned[:3, 3], [0.4, 0.0, 0.4])
    np.testing.assert_allclose(turned[:3, :3], rpy_to_matrix(0.0, 0.0, 0.5) @ start[:3, :3])
    (absolute,) = waypoint_poses([[0.1, 0.2, 0.3]], start, False)
    np.testing.assert_allclose(absolute[:3, 3], [0.1, 0.2, 0.3])
    np.testing.assert_allclose(absolute[:3, :3], start[:3, :3])


@pytest.mark.parametrize(
    "options, message",
    [
        ([], "the following arguments are required: --waypoint"),
        (["--waypoint", "0.1", "0", "0", "0.2"], "--waypoint 1 takes 3 numbers X Y Z [m] or 6"),
        (["--waypoint", "0.1", "0", "0", "--waypoint", "0", "nan", "0"], "--waypoint 2 is not finite"),
        (["--waypoint", "0.1", "0", "0", "--max-step", "0"], "--max-step must be a positive number [m]"),
        (["--waypoint", "0.1", "0", "0", "--max-acceleration", "-1"], "--max-acceleration must be"),
        (["--waypoint", "0.1", "0", "0", "--timeout", "0"], "--timeout must be a positive number [s]"),
        (["--waypoint", "0.1", "x", "0"], "invalid float value: 'x'"),
        (["--waypoint", "0.1", "0", "0", "--q", "0.1", "0.2"], "expected 7 joint values"),
        (["--waypoint", "0.1", "0", "0", "--plot", "/nonexistent/path.png"], "its directory does not exist"),
        (["--waypoint", "0.1", "0", "0", "--joint", "joint4=0.5"], "outside the limits at joints ['joint4']"),
    ],
)
def test_bad_input_exits_2_naming_the_problem(options, message, capsys):
    assert exit_code(["path", *CHAIN, *options]) == 2
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error, error
