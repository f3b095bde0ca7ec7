"""The seeds' methods as the seeds describe them (issue 17, item 5): each converges on reachable
goals within its documented tolerance and budget (docs/solver.md, "Methods"), and each step is the
seed's own: the undamped pseudo-inverse's Gauss-Newton step, Buss's transpose step that leaves out
only the joints pinned at a limit, and seed 004's geometric CCD rotation."""

from __future__ import annotations

import numpy as np
import pytest

from ik_node import IKSolver, load_robot
from ik_node.description.catalogue import URDF_DIR

GOALS = 30


@pytest.fixture(scope="module")
def arm7():
    return load_robot(URDF_DIR / "arm7.urdf")


#: (method, task, tolerance [m, rad], budget [s]): what docs/solver.md promises each method.
DOCUMENTED = [
    ("dls", "pose", 1e-5, 0.005),
    ("pinv", "pose", 1e-5, 0.005),
    ("transpose", "position", 1e-3, 0.02),
    ("ccd", "position", 1e-5, 0.02),
]


@pytest.mark.parametrize(
    ("method", "task", "tolerance", "budget"), DOCUMENTED, ids=[row[0] for row in DOCUMENTED]
)
def test_each_method_converges_on_reachable_goals_within_its_documented_tolerance(
    arm7, method, task, tolerance, budget
):
    """Goals from FK of seeded random in-limit configurations, solved from the rest posture: every
    one within the tolerance (checked by the model's FK, not the solver's report) and the budget
    (one miss allowed: a loaded test machine can cut a budget of a few milliseconds)."""
    solver = IKSolver(
        arm7, "base_link", "tool0", method=method, tasks={"tool0": task},
        position_tolerance=tolerance, orientation_tolerance=tolerance,
    )  # fmt: skip
    rng = np.random.default_rng(17)
    solved = 0
    for q in rng.uniform(solver.lower, solver.upper, size=(GOALS, 7)):
        target = solver.tree.forward(q)
        result = solver.solve(target, timeout=budget)
        pose = solver.tree.forward(result.q)
        within = np.linalg.norm(pose[:3, 3] - target[:3, 3]) <= tolerance * (1 + 1e-9)
        if task == "pose":
            cosine = np.clip(0.5 * (np.trace(pose[:3, :3].T @ target[:3, :3]) - 1.0), -1.0, 1.0)
            within &= np.arccos(cosine) <= tolerance * 1.001
        assert not result.success or within, result
        solved += bool(result.success and within)
    assert solved >= GOALS - 1, solved


def one_attempt(robot, method, max_iterations, **options):
    return IKSolver(
        robot, "base_link", "tool0", method=method, max_attempts=1, max_iterations=max_iterations,
        seed_table_size=0, **options,
    )  # fmt: skip


def test_pinv_takes_the_undamped_gauss_newton_step(arm7):
    """``pinv``'s first step from a seed near a solution is ``J^+ e`` (no damping, whatever
    ``min_damping`` says): the error after it is second order in the error before (quadratic
    convergence), where a damped step (``lambda_min = 0.1``) would leave a first-order part."""
    solver = one_attempt(
        arm7, "pinv", 1, position_tolerance=1e-9, orientation_tolerance=1e-9, min_damping=0.1
    )
    rng = np.random.default_rng(5)
    middle = 0.5 * (solver.lower + solver.upper)
    for _ in range(5):
        goal = middle + rng.uniform(-0.5, 0.5, size=7)
        target = solver.tree.forward(goal)
        seed = goal + rng.normal(size=7) * 1e-3
        before = np.linalg.norm(solver.tree.forward(seed)[:3, 3] - target[:3, 3])
        after = solver.solve(target, seed=seed, timeout=None).position_error
        assert after < 50 * before**2, (before, after)


def test_transpose_leaves_out_only_the_joints_pinned_at_a_limit(arm7):
    """A seed with one joint at its limit and the goal beyond it: Buss's step leaves that joint
    pinned and still moves the others toward the goal (the old transpose scaled its whole step
    to zero once any joint sat on a limit)."""
    solver = one_attempt(arm7, "transpose", 20, tasks={"tool0": "position"})
    middle = 0.5 * (solver.lower + solver.upper)
    goal = middle.copy()
    goal[0] = solver.upper[0] - 0.05
    goal[1] += 0.3
    seed = goal.copy()
    seed[0] = solver.upper[0]  # at the limit; the goal needs the joint to come back down a little
    seed[1] -= 0.3
    target = solver.tree.forward(goal)
    result = solver.solve(target, seed=seed, timeout=None)
    assert result.iterations > 0
    assert np.any(np.abs(result.q[1:] - seed[1:]) > 1e-3)  # the free joints moved
    before = np.linalg.norm(solver.tree.forward(seed)[:3, 3] - target[:3, 3])
    assert result.position_error < 0.5 * before


@pytest.mark.parametrize("joint", [0, 3, 5])
def test_ccd_turns_a_joint_by_the_geometric_angle_in_one_sweep(arm7, joint):
    """Seed 004's CCD: a goal 1.2 rad about one joint (every other joint locked) is reached in one
    sweep, exactly: the joint turns by the angle between the joint-to-tip and joint-to-goal
    vectors in the plane normal to its axis (a linearised 1-D step ``J_j.e / |J_j|^2`` would fall
    short by tens of percent at that angle)."""
    weights = np.zeros(7)
    weights[joint] = 1.0
    solver = one_attempt(arm7, "ccd", 1, joint_weights=weights, tasks={"tool0": "position"})
    middle = 0.5 * (solver.lower + solver.upper)
    goal = middle.copy()
    goal[joint] = np.clip(middle[joint] + 1.2, solver.lower[joint], solver.upper[joint])
    target = solver.tree.forward(goal)
    result = solver.solve(target, seed=middle, timeout=None)
    assert result.iterations == 1
    assert abs(result.q[joint] - goal[joint]) < 1e-9, result.q[joint] - goal[joint]
    assert result.position_error < 1e-9
