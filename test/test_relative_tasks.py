"""Relative tasks (issue 50, part 2): one tip's pose in another tip's frame, two hands holding one
object. Its rows are the body twist of ``T_ref^-1 T_tip`` (checked against finite differences of
pinocchio's FK through its ``log6``, the reference's rows in its own axes or the base's); over
seeded random goals on the bundled dual arm, the relative pose by an independent FK is within
tolerance, with the reference at a target of its own or held where it was, and in a batch; bad
relative tasks are refused naming the tips."""

from __future__ import annotations

import numpy as np
import pytest
from test_compute_ik import IndependentFK

from ik_node import IKSolver, TipTask, load_robot
from ik_node.description.catalogue import URDF_DIR
from ik_node.errors import IKNodeError, UnknownLinkError
from ik_node.lie import inverse

TIPS = ["left_tool0", "right_tool0"]
LEFT_OFFSET, RIGHT_OFFSET = np.array([0.0, 0.0, 0.1]), np.array([0.02, 0.0, 0.12])
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def dual_arm():
    return load_robot(URDF_DIR / "dual_arm.urdf")


def relative_solver(robot, reference_axes: str = "tip", **options) -> IKSolver:
    tasks = {
        "left_tool0": TipTask(axes=reference_axes, offset=LEFT_OFFSET),
        "right_tool0": TipTask(relative_to="left_tool0", offset=RIGHT_OFFSET),
    }
    return IKSolver(robot, "base_link", TIPS, tasks=tasks, **options)


def controlled_points(fk, names, q) -> tuple[np.ndarray, np.ndarray]:
    """The two tools' controlled points (4x4 ``T_base_point``) by the independent FK."""
    values = dict(zip(names, q))
    points = []
    for tip, offset in zip(TIPS, (LEFT_OFFSET, RIGHT_OFFSET)):
        pose = fk(values, tip)
        pose[:3, 3] += pose[:3, :3] @ offset
        points.append(pose)
    return points[0], points[1]


def pose_errors(reached: np.ndarray, goal: np.ndarray) -> tuple[float, float]:
    cosine = (np.trace(reached[:3, :3].T @ goal[:3, :3]) - 1) / 2
    return float(np.linalg.norm(reached[:3, 3] - goal[:3, 3])), float(np.arccos(min(1.0, max(-1.0, cosine))))


@pytest.mark.parametrize("reference_axes", ["tip", "base"])
def test_the_relative_rows_are_the_body_twist_of_the_relative_pose_by_finite_differences(
    dual_arm, reference_axes
):
    """The right tool's six rows are ``(d/dq_j) log6(T_rel(q)^-1 T_rel(q + h e_j)) / h`` with
    ``T_rel = T_left^-1 T_right`` (the controlled points, pinocchio's FK and ``log6``), whether the
    left tool's own rows are in its axes or the base's."""
    pin = pytest.importorskip("pinocchio")
    solver = relative_solver(dual_arm, reference_axes)
    fk = IndependentFK(URDF_DIR / "dual_arm.urdf", dual_arm)
    names = solver.joint_names

    def relative(q):
        left, right = controlled_points(fk, names, q)
        return inverse(left) @ right

    rng = np.random.default_rng(4)
    for _ in range(10):
        q = rng.uniform(solver.lower, solver.upper)
        rows = solver.task_jacobian(q)[6:]
        at = relative(q)
        step = 1e-6
        for j in range(len(names)):
            dq = np.zeros(len(names))
            dq[j] = step
            ahead = pin.log6(pin.SE3(inverse(at) @ relative(q + dq))).vector
            behind = pin.log6(pin.SE3(inverse(at) @ relative(q - dq))).vector
            np.testing.assert_allclose(rows[:, j], (ahead - behind) / (2 * step), atol=1e-6)


def test_a_relative_pose_is_met_with_the_reference_at_its_target_or_held(dual_arm):
    """Seeded random goals (both tools' poses at a random configuration): the right tool's pose in
    the left's frame and the left's pose met by the independent FK; with the left's target left
    out, the left holds its pose at the seed (the torso and left arm as drawn, the right arm
    anywhere) and the relative pose is met; within the limits."""
    solver = relative_solver(dual_arm)
    fk = IndependentFK(URDF_DIR / "dual_arm.urdf", dual_arm)
    names = solver.joint_names
    is_right = np.array([name.startswith("right_") for name in names])
    rng = np.random.default_rng(8)
    for _ in range(25):
        drawn = rng.uniform(solver.lower, solver.upper)
        left, right = controlled_points(fk, names, drawn)
        goal = inverse(left) @ right
        both = solver.solve({"left_tool0": left, "right_tool0": goal}, timeout=0.1)
        assert both.success, both.reason
        assert np.all((solver.lower <= both.q) & (both.q <= solver.upper))
        reached_left, reached_right = controlled_points(fk, names, both.q)
        assert max(pose_errors(reached_left, left)) <= TOLERANCE * (1 + 1e-6)
        assert max(pose_errors(inverse(reached_left) @ reached_right, goal)) <= 2 * TOLERANCE
        # a seed with the torso and left arm as drawn (the goal reachable from there), the right
        # arm anywhere
        seed = np.where(is_right, rng.uniform(solver.lower, solver.upper), drawn)
        held_left, _ = controlled_points(fk, names, seed)
        alone = solver.solve({"right_tool0": goal}, seed=seed, timeout=0.1)
        assert alone.success, alone.reason
        reached_left, reached_right = controlled_points(fk, names, alone.q)
        assert max(pose_errors(reached_left, held_left)) <= TOLERANCE * (1 + 1e-6)
        assert max(pose_errors(inverse(reached_left) @ reached_right, goal)) <= 2 * TOLERANCE


def test_solve_many_takes_relative_targets(dual_arm):
    solver = relative_solver(dual_arm)
    fk = IndependentFK(URDF_DIR / "dual_arm.urdf", dual_arm)
    names = solver.joint_names
    rng = np.random.default_rng(9)
    lefts, goals = [], []
    for _ in range(20):
        left, right = controlled_points(fk, names, rng.uniform(solver.lower, solver.upper))
        lefts.append(left)
        goals.append(inverse(left) @ right)
    batch = solver.solve_many({"left_tool0": np.array(lefts), "right_tool0": np.array(goals)}, timeout=0.1)
    assert batch.success.all()
    for q, goal in zip(batch.q, goals):
        reached_left, reached_right = controlled_points(fk, names, q)
        assert max(pose_errors(inverse(reached_left) @ reached_right, goal)) <= 2 * TOLERANCE


def test_bad_relative_tasks_are_refused_naming_the_tips(dual_arm):
    def build(left: TipTask, right: TipTask, **options):
        return IKSolver(
            dual_arm, "base_link", TIPS, tasks={"left_tool0": left, "right_tool0": right}, **options
        )

    with pytest.raises(IKNodeError, match="task for tip 'right_tool0' is relative_to itself"):
        build(TipTask(), TipTask(relative_to="right_tool0"))
    with pytest.raises(UnknownLinkError, match="relative_to of tip 'right_tool0'.*'elbow'"):
        build(TipTask(), TipTask(relative_to="elbow"))
    cycle = "'left_tool0' is relative_to 'right_tool0', whose own task is relative_to 'left_tool0'"
    with pytest.raises(IKNodeError, match=cycle):
        build(TipTask(relative_to="right_tool0"), TipTask(relative_to="left_tool0"))
    with pytest.raises(IKNodeError, match="whose own task is a gaze"):
        build(TipTask("gaze"), TipTask(relative_to="left_tool0"))
    with pytest.raises(IKNodeError, match="a relative task is a pose .* in the tip's axes"):
        TipTask(relative_to="left_tool0", axes="base")
    with pytest.raises(IKNodeError, match="relative_to must name another tip"):
        TipTask(relative_to="")
    with pytest.raises(IKNodeError, match="method 'ccd'.*\\['right_tool0'\\]"):
        build(TipTask(), TipTask(relative_to="left_tool0"), method="ccd")
    with pytest.raises(IKNodeError, match="tips \\['right_tool0'\\] have gaze or relative tasks"):
        build(TipTask(), TipTask(relative_to="left_tool0")).cartesian_path({"left_tool0": np.eye(4)})
