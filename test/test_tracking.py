"""Tracking without jumps: ``max_joint_move`` as a guarantee (no success for an answer that moves
a joint farther than it from the seed; ``reason='joint_move'`` with the nearest found), the
continuation that follows a goal step in pieces, and the pose interpolation it walks along.
Properties over seeded random goals and smooth joint-space paths on the bundled arms."""

from __future__ import annotations

import numpy as np
import pytest

from ik_node import IKSolver, load_robot
from ik_node.compiled.rotations import interpolate_pose
from ik_node.description.catalogue import URDF_DIR

#: The bound under test [rad], and the budget of each solve [s].
MAX_JOINT_MOVE, TIMEOUT = 0.3, 0.01
#: Smooth paths: joint changes per step at most this [rad] (goals a few mm apart), total motion
#: of the largest joint [rad].
PATH_STEP, PATH_LENGTH = 0.01, 0.6


@pytest.fixture(scope="module", params=["arm6", "arm7"])
def arm(request):
    robot = load_robot(URDF_DIR / f"{request.param}.urdf")
    return robot, IKSolver(robot, "base_link", "tool0", max_joint_move=MAX_JOINT_MOVE)


def largest_move(solver: IKSolver, q: np.ndarray, seed: np.ndarray) -> float:
    """max |q - seed| [rad], continuous joints at the nearest turn."""
    difference = np.asarray(q) - seed
    wraps = solver.continuous
    difference[..., wraps] = (difference[..., wraps] + np.pi) % (2 * np.pi) - np.pi
    return float(np.abs(difference).max())


def inside(solver: IKSolver, rng, count: int, margin: float = 0.1) -> np.ndarray:
    """``count`` configurations uniform within the limits less ``margin`` of each range."""
    lower = np.where(np.isfinite(solver.lower), solver.lower, -np.pi)
    upper = np.where(np.isfinite(solver.upper), solver.upper, np.pi)
    span = upper - lower
    return rng.uniform(lower + margin * span, upper - margin * span, size=(count, len(lower)))


@pytest.mark.parametrize("solve_type", ["speed", "distance"])
def test_no_success_beyond_max_joint_move(arm, solve_type):
    """Random far goals (a random configuration's pose) from random seeds: a success never moves
    a joint farther than ``max_joint_move``; a ``joint_move`` answer reaches the goal (within
    the tolerances) but moves farther; ``solve_many`` says the same."""
    robot, near_solver = arm
    solver = IKSolver(robot, "base_link", "tool0", max_joint_move=MAX_JOINT_MOVE, solve_type=solve_type)
    rng = np.random.default_rng(30)
    seeds, goals = inside(solver, rng, 40), inside(solver, rng, 40)
    targets = np.array([solver.tree.forward(goal) for goal in goals])
    refused = 0
    for seed, target in zip(seeds, targets):
        result = solver.solve(target, seed=seed, timeout=TIMEOUT)
        move = largest_move(solver, result.q, seed)
        if result.success:
            assert move <= MAX_JOINT_MOVE + 1e-12
        elif result.reason == "joint_move":
            refused += 1
            assert move > MAX_JOINT_MOVE
            assert result.position_error <= 1e-5 and result.orientation_error <= 1e-5
            np.testing.assert_allclose(solver.tree.forward(result.q), target, atol=1e-4)  # (by FK)
    assert refused > 0  # (far goals: most need a large move)
    batch = solver.solve_many(targets, seed=seeds, timeout=TIMEOUT)
    moves = [largest_move(solver, q, seed) for q, seed in zip(batch.q, seeds)]
    assert all(move <= MAX_JOINT_MOVE + 1e-12 for move, ok in zip(moves, batch.success) if ok)


def smooth_path(solver: IKSolver, rng) -> np.ndarray:
    """Joint configurations (K, n) along a straight joint-space segment eased in and out, inside
    the limits, each at most ``PATH_STEP`` from the last."""
    start = inside(solver, rng, 1, margin=0.2)[0]
    direction = rng.normal(size=len(start))
    direction /= np.abs(direction).max()
    steps = int(np.ceil(1.5 * PATH_LENGTH / PATH_STEP))
    s = np.linspace(0.0, 1.0, steps + 1)
    return start + PATH_LENGTH * (s * s * (3.0 - 2.0 * s))[:, None] * direction


def test_every_step_of_a_smooth_path_succeeds_within_max_joint_move(arm):
    """Goals along continuous in-limit paths (away from the singularities where branches meet),
    each seeded at the previous answer: every step succeeds, none moving a joint farther than
    ``max_joint_move`` (the answers stay on the seed's branch)."""
    _, solver = arm
    rng = np.random.default_rng(31)
    for _ in range(12):
        path = smooth_path(solver, rng)
        command = path[0]
        for q in path[1:]:
            result = solver.solve(solver.tree.forward(q), seed=command, timeout=0.05)
            assert result.success, result.reason
            assert largest_move(solver, result.q, command) <= MAX_JOINT_MOVE
            command = result.q


def test_the_continuation_keeps_more_big_steps_within_the_bound(arm):
    """Goal steps of 0.5 rad in every joint (poses decimetres apart) with ``max_joint_move`` 0.6:
    the attempt from the seed and its continuation (``max_attempts=2``, no table) solve more of
    them within the bound than the attempt alone, and none beyond it."""
    robot, _ = arm
    solved = []
    for attempts in (1, 2):
        solver = IKSolver(
            robot, "base_link", "tool0", max_joint_move=0.6, max_attempts=attempts, seed_table_size=0
        )
        rng = np.random.default_rng(32)
        count = 0
        for seed in inside(solver, rng, 100, margin=0.2):
            goal = seed + rng.choice([-0.5, 0.5], size=len(seed))
            result = solver.solve(solver.tree.forward(goal), seed=seed, timeout=None)
            assert not result.success or largest_move(solver, result.q, seed) <= 0.6
            count += result.success
        solved.append(count)
    assert solved[1] > solved[0]


def test_interpolate_pose_walks_the_geodesic():
    """:func:`interpolate_pose`: the ends at 0 and 1, and halfway the rotation by half the angle
    about the same axis and the midpoint of the positions."""
    rng = np.random.default_rng(33)
    start, end, middle = np.eye(4), np.eye(4), np.empty((4, 4))
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)

    def rotation(angle: float) -> np.ndarray:
        hat = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        return np.eye(3) + np.sin(angle) * hat + (1 - np.cos(angle)) * hat @ hat

    start[:3, :3], start[:3, 3] = rotation(0.3), rng.normal(size=3)
    end[:3, :3], end[:3, 3] = rotation(0.3) @ rotation(2.5), rng.normal(size=3)
    relative, work = np.empty((3, 3)), np.empty(3)
    for fraction, expected in ((0.0, start), (1.0, end)):
        interpolate_pose(start, end, fraction, relative, work, middle)
        np.testing.assert_allclose(middle, expected, atol=1e-12)
    interpolate_pose(start, end, 0.5, relative, work, middle)
    np.testing.assert_allclose(middle[:3, :3], rotation(0.3) @ rotation(1.25), atol=1e-12)
    np.testing.assert_allclose(middle[:3, 3], 0.5 * (start[:3, 3] + end[:3, 3]), atol=1e-12)
    np.testing.assert_allclose(middle[3], [0, 0, 0, 1])
