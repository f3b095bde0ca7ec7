"""Tolerance bands on a task's axes (issue 50, part 3): a target met anywhere within its band, the
error counting only what lies beyond it, checked by an independent FK (pinocchio where importable,
else the robot's own full-tree FK) over seeded random goals: a free rotation about the tool's
axis (a band of pi), a box of positions (a goal inside it needs no motion; a goal outside ends
within it), within the joint limits; bad bands refused naming the axis."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_compute_ik import IndependentFK

from ik_node import IKSolver, TipTask, load_robot
from ik_node.description.catalogue import URDF_DIR
from ik_node.errors import IKNodeError
from ik_node.lie import inverse

TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def arm6():
    return load_robot(URDF_DIR / "arm6.urdf")


def about_z(angle: float) -> np.ndarray:
    turn = np.eye(4)
    c, s = math.cos(angle), math.sin(angle)
    turn[:2, :2] = [[c, -s], [s, c]]
    return turn


def test_a_free_rotation_about_the_tool_axis_reaches_goals_turned_any_way_about_it(arm6):
    """A pose task with ``bands`` pi on wz: goals from random reachable poses turned by any angle
    about their own z are met in position and in the z axis's direction (the turn about it free);
    without the band most of those goals (turned past what the arm's wrist reaches) still count
    the turn."""
    fk = IndependentFK(URDF_DIR / "arm6.urdf", arm6)
    free = IKSolver(
        arm6, "base_link", ["tool0"], tasks={"tool0": TipTask("pose", bands=(0, 0, 0, 0, 0, math.pi))}
    )
    rng = np.random.default_rng(3)
    solved = 0
    for _ in range(40):
        q = rng.uniform(free.lower, free.upper)
        goal = free.tree.forward(q, "tool0") @ about_z(rng.uniform(-math.pi, math.pi))
        result = free.solve(goal, seed=rng.uniform(free.lower, free.upper), timeout=0.2)
        if not result.success:
            continue
        solved += 1
        assert np.all((free.lower - 1e-12 <= result.q) & (result.q <= free.upper + 1e-12))
        reached = fk(dict(zip(free.joint_names, result.q)), "tool0")
        assert np.linalg.norm(reached[:3, 3] - goal[:3, 3]) < TOLERANCE
        tilt = math.acos(min(1.0, float(reached[:3, 2] @ goal[:3, 2])))
        assert tilt < 2 * TOLERANCE  # (the tool's z as asked; the turn about it anything)
    assert solved >= 38, solved


def test_a_position_box_needs_no_motion_inside_and_is_reached_from_outside(arm6):
    """Bands of 2 cm on vx vy vz (tip axes): a goal 1 cm from the tip's pose along its x is met at
    the seed itself (no motion: the error is zero inside the band); a goal 5 cm along x ends
    within the box around it (the error beyond the band is what the solve removes: it stops once
    inside), the orientation held."""
    fk = IndependentFK(URDF_DIR / "arm6.urdf", arm6)
    box = IKSolver(
        arm6, "base_link", ["tool0"], tasks={"tool0": TipTask("pose", bands=(0.02, 0.02, 0.02, 0, 0, 0))}
    )
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(20):
        q = rng.uniform(0.8 * box.lower, 0.8 * box.upper)
        start = box.tree.forward(q, "tool0")
        inside = box.solve(start @ _along_x(0.01), seed=q)
        assert inside.success and inside.iterations == 0
        np.testing.assert_array_equal(inside.q, q)
        outside = box.solve(start @ _along_x(0.05), seed=q, timeout=0.2)
        if not outside.success:  # (a pose near the workspace's edge)
            continue
        checked += 1
        reached = fk(dict(zip(box.joint_names, outside.q)), "tool0")
        offset = inverse(start @ _along_x(0.05)) @ reached  # (where it ended, in the goal's axes)
        assert np.all(np.abs(offset[:3, 3]) <= 0.02 + TOLERANCE)  # (within the box: anywhere in it)
        angle = math.acos(min(1.0, (np.trace(offset[:3, :3]) - 1) / 2))
        assert angle < 2 * TOLERANCE
    assert checked >= 15, checked


def _along_x(distance: float) -> np.ndarray:
    moved = np.eye(4)
    moved[0, 3] = distance
    return moved


@pytest.mark.parametrize(
    "bands, words",
    [
        ((0, 0, -0.1, 0, 0, 0), "band on vz must be in [0, inf] m"),
        ((0, 0, 0, 0, 0, 4.0), "band on wz must be in [0, 3.14159]"),
        ((0, 0, float("nan"), 0, 0, 0), "band on vz"),
        ((0, 0, 0), "6 half-widths"),
        ("wide", "6 half-widths"),
    ],
)
def test_a_bad_band_is_refused_naming_the_axis(bands, words):
    with pytest.raises(IKNodeError, match=None) as raised:
        TipTask("pose", bands=bands)
    assert words in str(raised.value)


def test_a_band_on_an_axis_the_task_does_not_control_is_refused():
    with pytest.raises(IKNodeError, match="band on wz, which the task does not control"):
        TipTask("position", bands=(0, 0, 0, 0, 0, 1.0))
