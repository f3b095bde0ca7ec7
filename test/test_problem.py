"""The IK problem as the kernels see it (ik_node.solver.problem.Problem), built directly: the task
rows and their weights (checked through the stacked Jacobian they select against the tree's body
Jacobian), the joint table, each tip's reach sphere (against the URDF's own numbers and against
FK over many random configurations) and the seed-table features (against the model's FK)."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from ik_node import IKSolver, load_robot
from ik_node.description.catalogue import URDF_DIR
from ik_node.solver import TipTask, kernels
from ik_node.solver.problem import MIN_ROTATION_SCALE, Problem

#: base -j1 (revolute z, at 0.3 m up)-> a -j2 (revolute y, 0.2 m along x)-> b -j3 (prismatic x,
#: 0.25 m along x, 0-0.1 m)-> c -tool (fixed, 0.05 m along x and 0.02 m up, pitched)-> tool.
SMALL_CHAIN = """<robot name="small"><link name="base"/><link name="a"/><link name="b"/><link name="c"/>
<link name="tool"/>
<joint name="j1" type="revolute"><parent link="base"/><child link="a"/><origin xyz="0 0 0.3"/>
  <axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
<joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.2 0 0"/>
  <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
<joint name="j3" type="prismatic"><parent link="b"/><child link="c"/><origin xyz="0.25 0 0"/>
  <axis xyz="1 0 0"/><limit lower="0" upper="0.1" effort="1" velocity="1"/></joint>
<joint name="tool" type="fixed"><parent link="c"/><child link="tool"/>
  <origin xyz="0.05 0 0.02" rpy="0 0.3 0"/></joint>
</robot>"""
#: The small chain's reach by hand: centred on j1's origin; the offsets after it, the prismatic
#: travel and the tool offset laid end to end.
SMALL_CENTRE = np.array([0.0, 0.0, 0.3])
SMALL_RADIUS = 0.2 + 0.25 + 0.1 + math.hypot(0.05, 0.02)

#: One revolute joint whose child is the tip, at the joint's origin: the tip's position never moves.
WRIST_ONLY = """<robot name="wrist"><link name="base"/><link name="hand"/>
<joint name="roll" type="continuous"><parent link="base"/><child link="hand"/><origin xyz="0.1 0.2 0.3"/>
  <axis xyz="1 0 0"/></joint></robot>"""

DUAL_ARM = URDF_DIR / "dual_arm.urdf"
DUAL_TIPS = ("left_tool0", "right_tool0")

CONFIGURATIONS = 8


def make_problem(robot, base: str, tips, tasks: dict, weights=None, rest=None) -> Problem:
    """A Problem the way IKSolver builds one, from the URDF limits."""
    tree = robot.tree(base, list(tips))
    n = len(tree.joint_names)
    return Problem(
        tree,
        tuple(tips),
        tasks,
        tree.lower.copy(),
        tree.upper.copy(),
        np.ones(n) if weights is None else weights,
        np.zeros(n) if rest is None else rest,
        np.zeros(n),
    )


def random_configurations(tree, count: int, seed: int) -> np.ndarray:
    """Uniform within the limits, continuous joints over [-pi, pi]."""
    lower = np.where(np.isfinite(tree.lower), tree.lower, -np.pi)
    upper = np.where(np.isfinite(tree.upper), tree.upper, np.pi)
    return np.random.default_rng(seed).uniform(lower, upper, size=(count, len(tree.joint_names)))


@pytest.fixture(scope="module")
def small():
    return load_robot(SMALL_CHAIN)


@pytest.fixture(scope="module")
def dual_arm():
    return load_robot(DUAL_ARM)


# ---------------------------------------------------------------- rows and row weights


TASKS = {
    "pose": ("pose", [0, 1, 2, 3, 4, 5]),
    "position": ("position", [0, 1, 2]),
    "orientation": ("orientation", [3, 4, 5]),
    "mask": ((True, False, True, False, False, True), [0, 2, 5]),
}


@pytest.mark.parametrize("name", list(TASKS))
def test_a_task_selects_its_axes_weighted_rows_of_the_body_jacobian(small, name):
    kind, axes = TASKS[name]
    task = TipTask(kind, weight=2.5, position_tolerance=1e-4, orientation_tolerance=2e-3)
    problem = make_problem(small, "base", ["tool"], {"tool": task})
    assert problem.tips == ("tool",)
    np.testing.assert_array_equal(problem.rows, [(0, axis) for axis in axes])
    np.testing.assert_array_equal(problem.row_weights, [2.5] * len(axes))
    np.testing.assert_array_equal(problem.tolerances, [[1e-4, 2e-3]])
    tree = small.tree("base", ["tool"])
    for q in random_configurations(tree, CONFIGURATIONS, seed=1):
        np.testing.assert_allclose(problem.jacobian(q), 2.5 * tree.body_jacobian(q, "tool")[axes], atol=1e-12)


def test_two_tips_stack_their_rows_in_tip_order_with_their_own_weights(dual_arm):
    tasks = {
        "left_tool0": TipTask("position", weight=2.0),
        "right_tool0": TipTask(
            (False, False, False, True, True, False), weight=0.5, orientation_tolerance=0.01
        ),
    }
    problem = make_problem(dual_arm, "base_link", DUAL_TIPS, tasks)
    np.testing.assert_array_equal(problem.rows, [(0, 0), (0, 1), (0, 2), (1, 3), (1, 4)])
    np.testing.assert_array_equal(problem.row_weights, [2.0, 2.0, 2.0, 0.5, 0.5])
    np.testing.assert_array_equal(problem.tolerances, [[1e-5, 1e-5], [1e-5, 0.01]])
    tree = dual_arm.tree("base_link", list(DUAL_TIPS))
    left_arm = [i for i, name in enumerate(tree.joint_names) if name.startswith("left_")]
    right_arm = [i for i, name in enumerate(tree.joint_names) if name.startswith("right_")]
    assert left_arm and right_arm and "torso_joint" in tree.joint_names
    for q in random_configurations(tree, CONFIGURATIONS, seed=2):
        jacobian = problem.jacobian(q)
        expected = np.vstack(
            (2.0 * tree.body_jacobian(q, "left_tool0")[:3], 0.5 * tree.body_jacobian(q, "right_tool0")[3:5])
        )
        np.testing.assert_allclose(jacobian, expected, atol=1e-12)
        assert not jacobian[:3, right_arm].any() and not jacobian[3:, left_arm].any()  # arms apart
        assert np.abs(jacobian[:, tree.joint_names.index("torso_joint")]).max() > 1e-3  # shared

    right_first = problem.for_tips(("right_tool0", "left_tool0"))
    np.testing.assert_array_equal(right_first.rows, [(0, 3), (0, 4), (1, 0), (1, 1), (1, 2)])
    np.testing.assert_array_equal(right_first.row_weights, [0.5, 0.5, 2.0, 2.0, 2.0])
    np.testing.assert_array_equal(right_first.tip_frames, problem.tip_frames[::-1])
    q = random_configurations(tree, 1, seed=3)[0]
    np.testing.assert_allclose(right_first.jacobian(q), problem.jacobian(q)[[3, 4, 0, 1, 2]], atol=1e-12)
    right_only = problem.for_tips(("right_tool0",))
    np.testing.assert_array_equal(right_only.rows, [(0, 3), (0, 4)])
    np.testing.assert_allclose(right_only.jacobian(q), problem.jacobian(q)[3:], atol=1e-12)


def test_the_solver_builds_the_same_problem(dual_arm):
    tasks = {"left_tool0": "position", "right_tool0": TipTask("pose", weight=3.0)}
    solver = IKSolver(dual_arm, "base_link", list(DUAL_TIPS), tasks=tasks, joint_weights={"torso_joint": 0.5})
    direct = make_problem(
        dual_arm,
        "base_link",
        DUAL_TIPS,
        {"left_tool0": TipTask("position"), "right_tool0": TipTask("pose", weight=3.0)},
        weights=solver.joint_weights,
        rest=solver.rest_posture,
    )
    for name in (
        "rows",
        "row_weights",
        "tolerances",
        "joints",
        "tip_frames",
        "feature_spec",
        "feature_scale",
    ):
        np.testing.assert_array_equal(getattr(solver.problem, name), getattr(direct, name), err_msg=name)


# ---------------------------------------------------------------- the joint table


def test_the_joint_table_holds_limits_weights_rest_and_sampling_bounds(small):
    tree = small.tree("base", ["tool"])
    lower = np.array([-2.0, -np.inf, 0.0])  # j1 bounded, j2 as if continuous, j3 one-sided
    upper = np.array([2.0, np.inf, np.inf])
    weights, rest = np.array([1.0, 0.0, 3.0]), np.array([0.5, 0.0, 0.05])
    problem = Problem(tree, ("tool",), {"tool": TipTask()}, lower, upper, weights, rest, np.zeros(3))
    joints = problem.joints
    assert joints.shape == (3, kernels.JOINT_COLUMNS) and joints.flags.c_contiguous
    np.testing.assert_array_equal(joints[:, kernels.LOWER], lower)
    np.testing.assert_array_equal(joints[:, kernels.UPPER], upper)
    np.testing.assert_array_equal(joints[:, kernels.WEIGHT], weights)
    np.testing.assert_array_equal(joints[:, kernels.REST], rest)
    np.testing.assert_array_equal(problem.lower, lower)
    np.testing.assert_array_equal(problem.weights, weights)
    # bounded: within its limits; free revolute: a turn; one-sided prismatic: 2 pi next to its bound
    np.testing.assert_array_equal(joints[:, kernels.SAMPLE_LOWER], [-2.0, -np.pi, 0.0])
    np.testing.assert_array_equal(joints[:, kernels.SAMPLE_UPPER], [2.0, np.pi, 2 * np.pi])
    np.testing.assert_array_equal(joints[:, kernels.WRAPS], [0.0, 1.0, 0.0])
    wide = Problem(
        tree, ("tool",), {"tool": TipTask()}, np.array([-4.5, -1.0, 0.0]), upper, weights, rest, np.zeros(3)
    )
    assert wide.joints[0, kernels.WRAPS] == 1.0  # a revolute range over a turn wraps: a turn
    assert (wide.joints[0, kernels.SAMPLE_LOWER], wide.joints[0, kernels.SAMPLE_UPPER]) == (-np.pi, np.pi)
    assert wide.joints[1, kernels.WRAPS] == 1.0 and wide.joints[2, kernels.WRAPS] == 0.0


# ---------------------------------------------------------------- reach


def test_the_reach_of_a_small_chain_is_its_offsets_and_travel_end_to_end(small):
    problem = make_problem(small, "base", ["tool"], {"tool": TipTask()})
    centre, radius = problem.reach[0]
    np.testing.assert_allclose(centre, SMALL_CENTRE, atol=1e-12)
    assert radius == pytest.approx(SMALL_RADIUS, abs=1e-12)
    tree = small.tree("base", ["tool"])
    distances = [
        np.linalg.norm(small.forward(dict(zip(tree.joint_names, q)), "tool", "base")[:3, 3] - centre)
        for q in random_configurations(tree, 2000, seed=4)
    ]
    # every position within the sphere; the chain can nearly stretch out (exactly 0.2 + |(0.4, 0.02)|)
    assert max(distances) <= radius, (max(distances), radius)
    assert max(distances) >= 0.98 * radius, (max(distances), radius)


def test_each_tip_keeps_its_own_reach_when_the_tips_are_reordered(small):
    """Two tips on the small chain: b (0.2 m past j1) and tool; for_tips carries each tip's
    sphere, and the rotation scale of its features, along with it."""
    tasks = {"tool": TipTask(), "b": TipTask()}
    problem = make_problem(small, "base", ["tool", "b"], tasks)
    reordered = problem.for_tips(("b", "tool"))
    for tips, built in ((("tool", "b"), problem), (("b", "tool"), reordered)):
        assert built.tips == tips
        radii = {"tool": SMALL_RADIUS, "b": 0.2}
        for (centre, radius), tip in zip(built.reach, tips):
            np.testing.assert_allclose(centre, SMALL_CENTRE, atol=1e-12)
            assert radius == pytest.approx(radii[tip], abs=1e-12), tip
        np.testing.assert_allclose(built.feature_scale[[3, 15]], [radii[tip] / np.pi for tip in tips])


def chain_offsets(urdf_text: str, base: str, tip: str) -> tuple[list[str], list[float]]:
    """Joints from ``base`` to ``tip`` and the length of each one's origin offset, from the XML."""
    by_child = {
        joint.find("child").get("link"): joint for joint in ElementTree.fromstring(urdf_text).iter("joint")
    }
    joints, link = [], tip
    while link != base:
        joints.insert(0, by_child[link])
        link = joints[0].find("parent").get("link")
    lengths = []
    for joint in joints:
        origin = joint.find("origin")
        xyz = [0.0, 0.0, 0.0] if origin is None else [float(v) for v in origin.get("xyz", "0 0 0").split()]
        lengths.append(float(np.linalg.norm(xyz)))
    return [joint.get("name") for joint in joints], lengths


@pytest.mark.parametrize("tip", DUAL_TIPS)
def test_the_reach_of_each_arm_of_the_two_arm_tree(dual_arm, tip):
    """Centred on the torso joint (the first joint that moves the tip, shared by both arms); the
    radius is the offsets after it laid end to end (revolute joints only), and every position of
    the tip over many random configurations lies within it."""
    problem = make_problem(dual_arm, "base_link", DUAL_TIPS, {tip: TipTask() for tip in DUAL_TIPS})
    centre, radius = problem.reach[DUAL_TIPS.index(tip)]
    names, lengths = chain_offsets(DUAL_ARM.read_text(), "base_link", tip)
    first = names.index("torso_joint")
    assert all(dual_arm.joints[name].type == "fixed" for name in names[:first])
    assert radius == pytest.approx(sum(lengths[first + 1 :]), abs=1e-9)
    tree = dual_arm.tree("base_link", list(DUAL_TIPS))
    configurations = random_configurations(tree, 2000, seed=5)
    torso_origins = [
        dual_arm.forward(dict(zip(tree.joint_names, q)), "torso_link")[:3, 3] for q in configurations[:5]
    ]
    for origin in torso_origins:  # the centre stays put whatever the joints
        np.testing.assert_allclose(centre, origin, atol=1e-12)
    distances = [
        np.linalg.norm(dual_arm.forward(dict(zip(tree.joint_names, q)), tip, "base_link")[:3, 3] - centre)
        for q in configurations
    ]
    assert max(distances) <= radius, (max(distances), radius)
    assert max(distances) >= 0.9 * radius, (max(distances), radius)  # and not far larger


def test_targets_outside_a_reach_sphere_name_their_tip_for_position_rows_only(dual_arm):
    tasks = {"left_tool0": TipTask("position"), "right_tool0": TipTask("orientation")}
    problem = make_problem(dual_arm, "base_link", DUAL_TIPS, tasks)
    (left_centre, left_radius), (right_centre, right_radius) = problem.reach
    direction = np.array([0.6, -0.8, 0.0])
    targets = np.repeat(np.eye(4)[None], 2, axis=0)
    targets[0, :3, 3] = left_centre + 0.999 * left_radius * direction
    targets[1, :3, 3] = right_centre + 2.0 * right_radius * direction  # orientation only: no reach
    assert problem.tips_out_of_reach(targets) == []
    targets[0, :3, 3] = left_centre + 1.001 * left_radius * direction
    assert problem.tips_out_of_reach(targets) == ["left_tool0"]
    poses = make_problem(dual_arm, "base_link", DUAL_TIPS, {tip: TipTask("pose") for tip in DUAL_TIPS})
    assert poses.tips_out_of_reach(targets) == ["left_tool0", "right_tool0"]
    assert poses.for_tips(("right_tool0",)).tips_out_of_reach(targets[1:]) == ["right_tool0"]


# ---------------------------------------------------------------- features


def expected_features(robot, tree, base, q, tasks: dict, reach: list) -> np.ndarray:
    """Per tip in order: weight x position [m] when the task has a linear row, weight x
    max(reach, MIN_ROTATION_SCALE) / pi x the rotation matrix (row-major) when it has an angular
    one; poses from the model's FK."""
    features = []
    for (tip, task), (_, radius) in zip(tasks.items(), reach):
        pose = robot.forward(dict(zip(tree.joint_names, q)), tip, base)
        if np.any(task.rows < 3):
            features += list(task.weight * pose[:3, 3])
        if np.any(task.rows >= 3):
            features += list(task.weight * max(radius, MIN_ROTATION_SCALE) / np.pi * pose[:3, :3].ravel())
    return np.array(features)


@pytest.mark.parametrize("name", list(TASKS))
def test_features_of_one_tip_are_its_weighted_pose_from_forward_kinematics(small, name):
    tasks = {"tool": TipTask(TASKS[name][0], weight=1.5)}
    problem = make_problem(small, "base", ["tool"], tasks)
    tree = small.tree("base", ["tool"])
    q = random_configurations(tree, CONFIGURATIONS, seed=6)
    features = problem.features_of(q)
    width = {"pose": 12, "position": 3, "orientation": 9, "mask": 12}[name]
    assert features.shape == (CONFIGURATIONS, width)
    for row, configuration in zip(features, q):
        np.testing.assert_allclose(
            row, expected_features(small, tree, "base", configuration, tasks, problem.reach)
        )
    if name == "pose":  # position in metres, rotation scaled by reach / pi
        pose = small.forward(dict(zip(tree.joint_names, q[0])), "tool", "base")
        np.testing.assert_allclose(features[0, :3], 1.5 * pose[:3, 3], atol=1e-12)
        np.testing.assert_allclose(
            features[0, 3:], 1.5 * SMALL_RADIUS / np.pi * pose[:3, :3].ravel(), atol=1e-12
        )


def test_features_of_two_tips_follow_the_tip_order_and_each_task(dual_arm):
    tasks = {"left_tool0": TipTask("position", weight=2.0), "right_tool0": TipTask("pose", weight=0.5)}
    problem = make_problem(dual_arm, "base_link", DUAL_TIPS, tasks)
    tree = dual_arm.tree("base_link", list(DUAL_TIPS))
    np.testing.assert_array_equal(problem.feature_spec[:, 0], [0] * 3 + [1] * 12)
    np.testing.assert_array_equal(problem.feature_spec[:, 1], [*range(3), *range(12)])
    q = random_configurations(tree, CONFIGURATIONS, seed=7)
    features = problem.features_of(q)
    for row, configuration in zip(features, q):
        expected = expected_features(dual_arm, tree, "base_link", configuration, tasks, problem.reach)
        np.testing.assert_allclose(row, expected, atol=1e-12)
    swapped = problem.for_tips(("right_tool0", "left_tool0")).features_of(q)
    np.testing.assert_allclose(swapped, np.hstack((features[:, 3:], features[:, :3])), atol=1e-12)


def test_a_tip_whose_position_never_moves_weighs_its_rotation_by_the_floor():
    robot = load_robot(WRIST_ONLY)
    problem = make_problem(robot, "base", ["hand"], {"hand": TipTask("pose", weight=2.0)})
    centre, radius = problem.reach[0]
    np.testing.assert_allclose(centre, [0.1, 0.2, 0.3], atol=1e-12)
    assert radius == 0.0
    np.testing.assert_allclose(problem.feature_scale, [2.0] * 3 + [2.0 * MIN_ROTATION_SCALE / np.pi] * 9)
    features = problem.features_of(np.array([[0.0], [np.pi / 2]]))
    np.testing.assert_allclose(features[:, :3], [[0.2, 0.4, 0.6]] * 2, atol=1e-12)
    scale = 2.0 * MIN_ROTATION_SCALE / np.pi
    np.testing.assert_allclose(features[0, 3:], scale * np.eye(3).ravel(), atol=1e-12)
    np.testing.assert_allclose(
        features[1, 3:], scale * np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]]).ravel(), atol=1e-12
    )


LONG_CHAIN_BUILD = """
import resource, sys
import numpy as np
from ik_node import IKSolver, load_robot
rng = np.random.default_rng(0)
joints = int(sys.argv[1])
lines = ['<robot name="long"><link name="link_0"/>']
for i in range(1, joints + 1):
    x, y, z = rng.uniform(-0.05, 0.05, 3)
    axis = " ".join(map(str, np.eye(3)[rng.integers(3)]))
    lines.append(
        f'<link name="link_{i}"/><joint name="joint_{i}" type="revolute"><parent link="link_{i - 1}"/>'
        f'<child link="link_{i}"/><origin xyz="{x} {y} {z}"/><axis xyz="{axis}"/>'
        '<limit lower="-3.14" upper="3.14" effort="1" velocity="1"/></joint>'
    )
robot = load_robot("".join(lines) + "</robot>")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
solver = IKSolver(robot, "link_0", [f"link_{joints}"])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(solver.seed_table_size, (after - before) / 1024.0)
"""


def test_the_default_solver_of_a_long_chain_is_built_within_a_memory_bound():
    """A 10,000-joint chain with the default options (issue 31: the 16384-entry table once took
    2.7 GB and 15 s here): the seed table is sized by the chain (``default_seed_table_size``: 64
    entries) and building the solver raises the process's peak resident memory by less than
    200 MiB (measured in a fresh process, ``ru_maxrss``), the default table of a 7-joint arm stays
    whole."""
    import subprocess
    import sys

    from ik_node.solver.options import SEED_TABLE_LEAST, SEED_TABLE_ONE_TIP, default_seed_table_size

    assert default_seed_table_size(1, 7) == SEED_TABLE_ONE_TIP
    done = subprocess.run(
        [sys.executable, "-c", LONG_CHAIN_BUILD, "10000"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    size, grown_mib = done.stdout.split()
    assert int(size) == SEED_TABLE_LEAST
    assert float(grown_mib) < 200.0, f"building the solver raised the peak RSS by {grown_mib} MiB"
