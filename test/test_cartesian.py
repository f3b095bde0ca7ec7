"""Straight-line paths (issue 49, the library): ``IKSolver.cartesian_path``.

References: the robot's own full-robot FK (``Robot.forward``, not the solver's tree) for the tip
on the line at the path's points and between them (joints interpolated linearly); the joint and
acceleration limits sampled at 1 kHz along the timed spline; TOPP-RA (toppra) is the timing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_servo import well_conditioned

from ik_node import IKNodeError, IKSolver, load_robot
from ik_node.description.catalogue import URDF_DIR
from ik_node.solver import kernels

pytest.importorskip("toppra", reason="timing a path needs toppra (pip install toppra)")

TOLERANCE = 0.001  # [m] the tip's distance from the line between path points (the default)


@pytest.fixture(scope="module", params=["arm6", "arm7"])
def arm(request):
    robot = load_robot(URDF_DIR / f"{request.param}.urdf")
    solver = IKSolver(robot, "base_link", ["tool0"])
    solver.wait_for_kernels()
    return robot, solver


def _rotation(axis, angle: float) -> np.ndarray:
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    x, y, z = axis
    skew = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    return np.eye(3) + math.sin(angle) * skew + (1 - math.cos(angle)) * skew @ skew


def _segment(solver, rng, start_q):
    """A goal 10-30 cm from the tool's pose at ``start_q`` along a random direction, turned by up
    to 30 degrees about a random axis."""
    start = solver.tip_poses(start_q)[0]
    goal = start.copy()
    direction = rng.normal(size=3)
    goal[:3, 3] += rng.uniform(0.1, 0.3) * direction / np.linalg.norm(direction)
    goal[:3, :3] = start[:3, :3] @ _rotation(rng.normal(size=3), math.radians(rng.uniform(0, 30)))
    return start, goal


def _distance_to_line(point, a, b) -> float:
    direction = (b - a) / np.linalg.norm(b - a)
    offset = point - a
    return float(np.linalg.norm(offset - (offset @ direction) * direction))


def test_paths_stay_on_the_line_without_jumps_and_end_where_they_say(arm):
    """20 random segments from well-conditioned starts: every path point's tip (the robot's own
    FK) on the line within 1e-5 m, the middle of every joint step within the tolerance of it,
    joint steps small (no jump: at most 0.3 rad for a 5 mm step, near a singularity; a branch
    flip moves joints by ~pi and leaves the line between points); a complete path ends at the
    goal; ``fraction`` is the share of the length reached."""
    robot, solver = arm
    rng = np.random.default_rng(5)
    names = list(solver.tree.joint_names)
    complete = 0
    for trial in range(20):
        q0 = well_conditioned(solver.tree, 100 + trial)
        start, goal = _segment(solver, rng, q0)
        path = solver.cartesian_path(goal, seed=q0)
        assert np.allclose(path.q[0], q0)
        a, b = start[:3, 3], goal[:3, 3]
        for k, q in enumerate(path.q):
            tip = robot.forward(dict(zip(names, q)), "tool0", "base_link")
            assert _distance_to_line(tip[:3, 3], a, b) < 1e-5, (trial, k)
            if k:
                middle = robot.forward(dict(zip(names, 0.5 * (q + path.q[k - 1]))), "tool0", "base_link")
                assert _distance_to_line(middle[:3, 3], a, b) <= TOLERANCE
                assert np.max(np.abs(q - path.q[k - 1])) <= 0.3, (trial, k)
        reached = robot.forward(dict(zip(names, path.q[-1])), "tool0", "base_link")
        share = np.linalg.norm(reached[:3, 3] - a) / np.linalg.norm(b - a)
        assert path.fraction == pytest.approx(share, abs=1e-4)
        if path.reason == "complete":
            complete += 1
            assert path.fraction == 1.0  # (exactly: callers test fraction == 1.0, as MoveIt's do)
            assert np.allclose(reached, goal, atol=1e-5)
        else:
            assert path.fraction < 1.0 and path.reason in (
                "unreachable",
                "jump",
                "singularity",
            )
    assert complete >= 10


def test_a_timed_path_keeps_every_limit_at_1_khz(arm):
    """A 12 cm segment timed with 2 rad/s^2: sampled at 1 kHz along the spline, every joint
    within its position, velocity and acceleration limits; at rest at both ends; the time is
    increasing and the points' velocities are the spline's. Then 6 random segments: the
    velocities and accelerations within the limits at 1 kHz."""
    robot, solver = arm
    q0 = well_conditioned(solver.tree, 7)
    start = solver.tip_poses(q0)[0]
    goal = start.copy()
    goal[:3, 3] += [0.08, -0.05, 0.08]
    path = solver.cartesian_path(goal, seed=q0, max_acceleration=2.0)
    assert path.reason == "complete" and path.duration > 0
    assert np.all(np.diff(path.time) > 0)
    times, q, velocity, acceleration = path.sample(1000.0)
    assert np.all(q >= solver.lower - 1e-9) and np.all(q <= solver.upper + 1e-9)
    assert np.all(np.abs(velocity) <= solver.tree.max_velocity * (1 + 1e-9))
    assert np.all(np.abs(acceleration) <= 2.0 * (1 + 1e-9))
    assert np.allclose(velocity[0], 0.0, atol=1e-9) and np.allclose(velocity[-1], 0.0, atol=1e-9)
    assert np.allclose(path.velocity[0], 0.0) and np.allclose(path.velocity[-1], 0.0)
    assert np.allclose(q[-1], path.q[-1], atol=1e-9)
    rng = np.random.default_rng(12)  # (and random segments, bends of the joint path included)
    for trial in range(6):
        q0 = well_conditioned(solver.tree, 40 + trial)
        _, goal = _segment(solver, rng, q0)
        path = solver.cartesian_path(goal, seed=q0, max_acceleration=2.0)
        if len(path.q) < 2:
            continue
        _, q, velocity, acceleration = path.sample(1000.0)
        assert np.all(np.abs(velocity) <= solver.tree.max_velocity * (1 + 1e-9)), trial
        assert np.all(np.abs(acceleration) <= 2.0 * (1 + 1e-9)), trial


def test_a_path_out_of_reach_stops_with_its_fraction_and_reason(arm):
    """A 3 m segment straight out: the path ends before the goal (reason ``unreachable`` or
    ``singularity``), its fraction the share of the 3 m it went, its last point on the line."""
    robot, solver = arm
    q0 = well_conditioned(solver.tree, 3)
    start = solver.tip_poses(q0)[0]
    goal = start.copy()
    outward = start[:3, 3] / np.linalg.norm(start[:3, 3])
    goal[:3, 3] += 3.0 * outward
    path = solver.cartesian_path(goal, seed=q0)
    assert path.reason in ("unreachable", "singularity", "jump") and 0.0 < path.fraction < 0.5
    reached = solver.tip_poses(path.q[-1])[0][:3, 3]
    assert np.linalg.norm(reached - start[:3, 3]) == pytest.approx(3.0 * path.fraction, abs=1e-4)


def test_bad_input_is_refused_naming_it(arm):
    robot, solver = arm
    q0 = well_conditioned(solver.tree, 1)
    goal = solver.tip_poses(q0)[0]
    bad = goal.copy()
    bad[0, 3] = np.nan
    with pytest.raises(IKNodeError, match="waypoint 0 is not finite"):
        solver.cartesian_path(bad, seed=q0)
    with pytest.raises(IKNodeError, match="one or more 4x4 poses"):
        solver.cartesian_path(np.zeros((0, 4, 4)), seed=q0)
    skewed = goal.copy()
    skewed[:3, :3] *= 2.0
    with pytest.raises(IKNodeError, match="not a rotation"):
        solver.cartesian_path(skewed, seed=q0)
    with pytest.raises(IKNodeError, match="max_step must be a positive"):
        solver.cartesian_path(goal, seed=q0, max_step=0.0)
    outside = q0.copy()
    outside[1] = solver.upper[1] + 0.5
    with pytest.raises(IKNodeError, match="outside the limits"):
        solver.cartesian_path(goal, seed=outside)
    with pytest.raises(IKNodeError, match="max_acceleration must be finite and > 0"):
        solver.cartesian_path(goal, seed=q0, max_acceleration=-1.0)


def test_two_tips_move_on_their_lines_at_one_rate_or_hold():
    """The dual arm: the left tool 12 cm along y while the right one holds, then both tools on
    lines of their own (10 and 5 cm) at one rate: each tip (the robot's own FK) on its line at
    every point, the held tip still, both arriving together; unequal waypoint counts and an
    unknown tip refused naming them."""
    robot = load_robot(URDF_DIR / "dual_arm.urdf")
    tips = ["left_tool0", "right_tool0"]
    solver = IKSolver(robot, "base_link", tips)
    solver.wait_for_kernels()
    q0 = well_conditioned(solver.tree, 2)
    names = list(solver.tree.joint_names)
    start = dict(zip(tips, solver.tip_poses(q0)))
    left = start["left_tool0"].copy()
    left[:3, 3] += [0.0, 0.12, 0.0]
    right = start["right_tool0"].copy()
    right[:3, 3] += [0.0, 0.0, 0.05]
    held = solver.cartesian_path({"left_tool0": left}, seed=q0)
    both = solver.cartesian_path({"left_tool0": [left], "right_tool0": [right]}, seed=q0)
    for path, goals in ((held, {"left_tool0": left, "right_tool0": start["right_tool0"]}),
                        (both, {"left_tool0": left, "right_tool0": right})):  # fmt: skip
        assert path.reason == "complete" and path.fraction == pytest.approx(1.0)
        for q in path.q:
            for tip in tips:
                point = robot.forward(dict(zip(names, q)), tip, "base_link")[:3, 3]
                a, b = start[tip][:3, 3], goals[tip][:3, 3]
                distance = np.linalg.norm(point - a) if np.allclose(a, b) else _distance_to_line(point, a, b)
                assert distance < 1e-5, tip
        for tip in tips:
            assert np.allclose(
                robot.forward(dict(zip(names, path.q[-1])), tip, "base_link"), goals[tip], atol=1e-5
            )
    with pytest.raises(IKNodeError, match="as many waypoints"):
        solver.cartesian_path({"left_tool0": [left, left], "right_tool0": [right]}, seed=q0)
    with pytest.raises(IKNodeError, match="not tips"):
        solver.cartesian_path({"tool0": left}, seed=q0)
    with pytest.raises(IKNodeError, match="go in a dict"):
        solver.cartesian_path(left, seed=q0)


def test_the_compiled_step_loop_and_its_plain_python_copy_give_one_path():
    """The step loop (``kernels.straight_line_steps``) compiled and as plain Python (what serves
    while the kernels compile: the same source) give the same reasons, fractions and points,
    within rounding, on arm7 with a search bounded by attempts, not time, and a seed table the
    plain-Python core keeps whole (``PYTHON_SEED_TABLE``: the same restarts): a 4 cm line from a
    start with joint 2 at its upper limit toward where that joint would push past it (the
    first-order motion without its column); a 10 cm line in one planned step of 10 cm (halved to
    keep the line: more points than planned, the arrays grow); a line 1 m straight out (its last
    steps halved, then the end)."""
    robot = load_robot(URDF_DIR / "arm7.urdf")
    solver = IKSolver(robot, "base_link", ["tool0"], max_attempts=3, seed_table_size=256)
    solver.wait_for_kernels()
    q0 = well_conditioned(solver.tree, 11)
    start = solver.tip_poses(q0)[0]
    at_limit = q0.copy()
    at_limit[1] = solver.upper[1]
    held = solver.tip_poses(at_limit)[0]
    pushed = held.copy()
    outward = held[:3, :3] @ solver.tree.body_jacobian(at_limit, "tool0")[:3, 1]  # (joint 2's, base axes)
    pushed[:3, 3] += 0.04 * outward / np.linalg.norm(outward)
    down, far = start.copy(), start.copy()
    down[:3, 3] += [0.0, 0.0, -0.1]
    far[:3, 3] += start[:3, 3] / np.linalg.norm(start[:3, 3])
    cases = ((at_limit, pushed, 0.005), (q0, down, 0.1), (q0, far, 0.005))

    def paths():
        return [
            solver.cartesian_path(goal, seed=seed, max_step=step, timeout=None) for seed, goal, step in cases
        ]

    compiled = paths()
    solver._install(kernels.python_kernels(), solver.problem)  # (the plain-Python core)
    assert solver.core.kernels is not kernels
    plain = paths()
    assert [path.reason for path in compiled[:2]] == ["complete", "complete"] and len(compiled[1].q) > 2
    assert compiled[2].reason != "complete"
    for one, other in zip(compiled, plain):
        assert (one.reason, len(one.q)) == (other.reason, len(other.q))
        assert one.fraction == pytest.approx(other.fraction, abs=1e-12)
        assert one.deviation == pytest.approx(other.deviation, abs=1e-12)
        np.testing.assert_allclose(one.q, other.q, atol=1e-9)
        np.testing.assert_allclose(one.points, other.points, atol=1e-9)


def test_a_solver_with_a_null_space_posture_walks_the_same_lines(arm):
    """A solver with ``posture_gain`` (its null-space pull toward the rest posture) walks each
    line as far as the same solver without it, on the line (the robot's own FK): its steps'
    searches leave the posture out (each step's pull would move the joints beyond what the step
    needs, which the jump bound ends)."""
    robot, plain = arm
    postured = IKSolver(robot, "base_link", ["tool0"], posture_gain=0.1)
    postured.wait_for_kernels()
    rng = np.random.default_rng(9)
    names = list(plain.tree.joint_names)
    for trial in range(8):
        q0 = well_conditioned(plain.tree, 200 + trial)
        start, goal = _segment(plain, rng, q0)
        expected, path = plain.cartesian_path(goal, seed=q0), postured.cartesian_path(goal, seed=q0)
        assert (path.reason, path.fraction) == (expected.reason, expected.fraction), trial
        for q in path.q:
            tip = robot.forward(dict(zip(names, q)), "tool0", "base_link")
            assert _distance_to_line(tip[:3, 3], start[:3, 3], goal[:3, 3]) < 1e-5


def test_a_solver_of_another_solve_type_walks_the_same_lines_as_fast(arm):
    """``solve_type='distance'``: the same paths as ``speed`` (a step seeded by the last
    configuration converges to the nearest solution; its search does not compare solutions until
    the step's timeout, which took 0.36 s a path on arm6)."""
    robot, plain = arm
    nearest = IKSolver(robot, "base_link", ["tool0"], solve_type="distance")
    nearest.wait_for_kernels()
    rng = np.random.default_rng(13)
    for trial in range(6):
        q0 = well_conditioned(plain.tree, 300 + trial)
        _, goal = _segment(plain, rng, q0)
        expected, path = plain.cartesian_path(goal, seed=q0), nearest.cartesian_path(goal, seed=q0)
        assert (path.reason, path.fraction) == (expected.reason, expected.fraction), trial
        np.testing.assert_array_equal(path.q, expected.q)
