"""Forward kinematics and Jacobians: hand-computed poses, finite differences, an independent
cross-product construction, and pinocchio on the bundled and example-robot-data robots."""

from __future__ import annotations

import numpy as np
import pytest

from ik_node import load_robot
from ik_node.description.catalogue import BUNDLED, URDF_DIR, RobotCase, all_cases

CONFIGURATIONS = 100
FD_STEP = 1e-6


def random_configurations(tree, count: int, seed: int) -> np.ndarray:
    """Uniform within limits; continuous (unbounded) joints in [-pi, pi]."""
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(tree.lower), tree.lower, -np.pi)
    upper = np.where(np.isfinite(tree.upper), tree.upper, np.pi)
    return rng.uniform(lower, upper, size=(count, len(lower)))


def small_rotation_vector(rotation: np.ndarray) -> np.ndarray:
    """``theta u`` of a small rotation, ``vee((R - R^T) / 2)`` (exact to O(theta^3): at the
    finite-difference steps here, to ~1e-18 rad), independent of ik_node's SO(3) log."""
    skew = 0.5 * (rotation - rotation.T)
    return np.array([skew[2, 1], skew[0, 2], skew[1, 0]])


def body_twist_difference(pose_plus: np.ndarray, pose_minus: np.ndarray, step: float):
    """Central difference of a pose as a body twist [v; w] (tip-frame axes)."""
    pose = 0.5 * (pose_plus + pose_minus)
    rotation = pose[:3, :3]
    linear = rotation.T @ (pose_plus[:3, 3] - pose_minus[:3, 3]) / (2 * step)
    angular = small_rotation_vector(pose_minus[:3, :3].T @ pose_plus[:3, :3]) / (2 * step)
    return np.concatenate((linear, angular))


def finite_difference_body_jacobian(tree, q, link, offset=None):
    offset = np.eye(4) if offset is None else offset
    columns = []
    for index in range(len(q)):
        step = np.zeros(len(q))
        step[index] = FD_STEP
        plus = tree.forward(q + step, link) @ offset
        minus = tree.forward(q - step, link) @ offset
        columns.append(body_twist_difference(plus, minus, FD_STEP))
    return np.array(columns).T


def finite_difference_mixed_jacobian(tree, q, link):
    columns = []
    for index in range(len(q)):
        step = np.zeros(len(q))
        step[index] = FD_STEP
        plus, minus = tree.forward(q + step, link), tree.forward(q - step, link)
        linear = (plus[:3, 3] - minus[:3, 3]) / (2 * FD_STEP)
        angular = small_rotation_vector(plus[:3, :3] @ minus[:3, :3].T) / (2 * FD_STEP)  # world frame
        columns.append(np.concatenate((linear, angular)))
    return np.array(columns).T


def cross_product_mixed_jacobian(tree, q, link):
    """Independent reference (the seed's spatial-axis construction): for each joint on the path,
    world axis z_j and position p_j; revolute column [z_j x (p_e - p_j); z_j], prismatic [z_j; 0];
    mimic followers add multiplier x their column to the leader's."""
    robot = tree.robot
    values = dict(zip(tree.joint_names, q))
    tip_position = tree.forward(q, link)[:3, 3]
    jacobian = np.zeros((6, len(q)))
    for joint in robot.path_joints(tree.base_link, link):
        if not joint.is_movable:
            continue
        leader, multiplier, _ = robot.mimic_map(joint.name)
        child_pose = tree.forward(values, joint.child)
        axis = child_pose[:3, :3] @ joint.axis
        if joint.type == "prismatic":
            column = np.concatenate((axis, np.zeros(3)))
        else:
            column = np.concatenate((np.cross(axis, tip_position - child_pose[:3, 3]), axis))
        jacobian[:, tree.joint_names.index(leader)] += multiplier * column
    return jacobian


@pytest.fixture(scope="module", params=all_cases(), ids=str)
def case(request) -> RobotCase:
    return request.param


@pytest.fixture(scope="module")
def tree(case):
    return load_robot(case.urdf).tree(case.base, case.tips)


# ---------------------------------------------------------------- hand-computed poses

PLANAR_RRP = """<robot name="rrp">
  <link name="base"/><link name="upper"/><link name="lower"/><link name="slider"/><link name="tool"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="elbow" type="continuous"><parent link="upper"/><child link="lower"/>
    <origin xyz="0.5 0 0"/><axis xyz="0 0 3"/><limit effort="1" velocity="1"/></joint>
  <joint name="slide" type="prismatic"><parent link="lower"/><child link="slider"/>
    <origin xyz="0.4 0 0"/><axis xyz="1 0 0"/><limit lower="0" upper="0.2" effort="1" velocity="1"/></joint>
  <joint name="tool_mount" type="fixed"><parent link="slider"/><child link="tool"/>
    <origin xyz="0.1 0 0" rpy="0 0 1.5707963267948966"/></joint>
</robot>"""


@pytest.mark.parametrize("shoulder, elbow, slide", [(0, 0, 0), (0.3, -1.1, 0.15), (-2.0, 2.5, 0.05)])
def test_forward_matches_hand_computed_planar_chain(shoulder, elbow, slide):
    robot = load_robot(PLANAR_RRP)
    pose = robot.forward({"shoulder": shoulder, "elbow": elbow, "slide": slide}, "tool")
    reach = 0.4 + slide + 0.1
    expected_x = 0.5 * np.cos(shoulder) + reach * np.cos(shoulder + elbow)
    expected_y = 0.5 * np.sin(shoulder) + reach * np.sin(shoulder + elbow)
    heading = shoulder + elbow + np.pi / 2
    np.testing.assert_allclose(pose[:3, 3], [expected_x, expected_y, 0.1], atol=1e-12)
    np.testing.assert_allclose(
        pose[:3, :3],
        [[np.cos(heading), -np.sin(heading), 0], [np.sin(heading), np.cos(heading), 0], [0, 0, 1]],
        atol=1e-12,
    )


def test_forward_relative_to_another_base_and_array_input():
    robot = load_robot(PLANAR_RRP)
    q = np.array([0.4, -0.7, 0.1])
    assert robot.joint_names == ("shoulder", "elbow", "slide")
    in_upper = robot.forward(q, "tool", base="upper")
    np.testing.assert_allclose(robot.forward(q, "upper") @ in_upper, robot.forward(q, "tool"), atol=1e-12)
    tree = robot.tree("upper", "tool")
    assert tree.joint_names == ("elbow", "slide")
    np.testing.assert_allclose(tree.forward(q[1:]), in_upper, atol=1e-12)


def test_forward_up_the_tree_is_the_inverse_of_forward_down_it():
    """arm7 read from its tool up to its base crosses every joint from child to parent (motions
    inverted; z axes, which FK turns with fewer products, and y axes alike): the base's pose in
    the tool frame is the inverse of the tool's in the base frame, every link's too."""
    robot = load_robot(URDF_DIR / "arm7.urdf")
    down, up = robot.tree("base_link", "tool0"), robot.tree("tool0", "base_link")
    rng = np.random.default_rng(8)
    for _ in range(20):
        q = rng.uniform(np.maximum(down.lower, -np.pi), np.minimum(down.upper, np.pi))
        q_up = up.joint_vector(dict(zip(down.joint_names, q)))
        for link in ("base_link", "link3", "link6"):
            expected = np.linalg.inv(down.forward(q, "tool0")) @ down.forward(q, link)
            np.testing.assert_allclose(up.forward(q_up, link), expected, atol=1e-12)


def test_mimic_joint_follows_its_leader():
    urdf = PLANAR_RRP.replace(
        '<joint name="elbow" type="continuous">',
        '<joint name="elbow" type="continuous"><mimic joint="shoulder" multiplier="-2" offset="0.5"/>',
    )
    robot = load_robot(urdf)
    assert robot.joint_names == ("shoulder", "slide")
    full = load_robot(PLANAR_RRP)
    np.testing.assert_allclose(
        robot.forward({"shoulder": 0.3, "slide": 0.1}, "tool"),
        full.forward({"shoulder": 0.3, "elbow": -2 * 0.3 + 0.5, "slide": 0.1}, "tool"),
        atol=1e-12,
    )


# ---------------------------------------------------------------- Jacobians vs finite differences


def test_body_and_mixed_jacobians_match_finite_differences(tree, case):
    for q in random_configurations(tree, CONFIGURATIONS, seed=1):
        for tip in case.tips:
            np.testing.assert_allclose(
                tree.body_jacobian(q, tip), finite_difference_body_jacobian(tree, q, tip), atol=1e-6
            )
            np.testing.assert_allclose(
                tree.mixed_jacobian(q, tip), finite_difference_mixed_jacobian(tree, q, tip), atol=1e-6
            )


def test_point_and_offset_frame_jacobians_match_finite_differences(tree, case):
    rng = np.random.default_rng(2)
    for q in random_configurations(tree, CONFIGURATIONS, seed=3):
        point = rng.uniform(-0.2, 0.2, 3)
        offset = np.eye(4)
        offset[:3, 3] = point
        tip = case.tips[-1]
        np.testing.assert_allclose(
            tree.body_jacobian(q, tip, offset=point),
            finite_difference_body_jacobian(tree, q, tip, offset),
            atol=1e-6,
        )
        # The point Jacobian's linear rows are the point's velocity; angular rows are the link's.
        mixed = tree.mixed_jacobian(q, tip, offset=point)
        columns = []
        for index in range(len(q)):
            step = np.zeros(len(q))
            step[index] = FD_STEP
            columns.append(
                ((tree.forward(q + step, tip) - tree.forward(q - step, tip)) @ np.append(point, 1))[:3]
                / (2 * FD_STEP)
            )
        np.testing.assert_allclose(mixed[:3], np.array(columns).T, atol=1e-6)
        np.testing.assert_allclose(mixed[3:], tree.mixed_jacobian(q, tip)[3:], atol=1e-12)


def test_adjoint_block_jacobian_equals_cross_product_reference(tree, case):
    for q in random_configurations(tree, CONFIGURATIONS, seed=4):
        for tip in case.tips:
            np.testing.assert_allclose(
                tree.mixed_jacobian(q, tip), cross_product_mixed_jacobian(tree, q, tip), atol=1e-10
            )


TASKS = [
    ("pose", [0, 1, 2, 3, 4, 5]),
    ("position", [0, 1, 2]),
    ("orientation", [3, 4, 5]),
    ([True, False, True, False, True, False], [0, 2, 4]),
]


def test_stacked_trimmed_jacobian_has_shared_joints_once(tree, case):
    tasks = {tip: TASKS[index][0] for index, tip in enumerate(case.tips)}
    for q in random_configurations(tree, CONFIGURATIONS, seed=5):
        stacked = tree.jacobian(q, frame="mixed", tasks=tasks)
        expected = np.vstack(
            [
                finite_difference_mixed_jacobian(tree, q, tip)[TASKS[index][1]]
                for index, tip in enumerate(case.tips)
            ]
        )
        assert stacked.shape == expected.shape == (expected.shape[0], len(tree.joint_names))
        np.testing.assert_allclose(stacked, expected, atol=1e-6)


def test_jacobian_derivative_matches_finite_difference_along_velocity(tree, case):
    rng = np.random.default_rng(6)
    for q in random_configurations(tree, CONFIGURATIONS, seed=7):
        qdot = rng.normal(size=len(q))
        tip = case.tips[0]
        for frame, compute in (("body", tree.body_jacobian), ("mixed", tree.mixed_jacobian)):
            expected = (compute(q + FD_STEP * qdot, tip) - compute(q - FD_STEP * qdot, tip)) / (2 * FD_STEP)
            np.testing.assert_allclose(
                tree.jacobian_derivative(q, qdot, tip, frame=frame), expected, atol=1e-6
            )


# ---------------------------------------------------------------- pinocchio as a reference


@pytest.fixture(scope="module")
def pinocchio():
    """The pinocchio module; only the tests that ask for it skip where it is missing."""
    return pytest.importorskip("pinocchio", reason="pinocchio (PyPI 'pin') is a test extra")


def pinocchio_configuration(pinocchio, model, robot, values: dict) -> np.ndarray:
    """Our joint values (mimic followers derived from leaders) as a pinocchio q."""
    q = pinocchio.neutral(model)
    for joint_id in range(1, model.njoints):
        name = model.names[joint_id]
        leader, multiplier, offset = robot.mimic_map(name)
        value = multiplier * values.get(leader, 0.0) + offset
        start, size = model.joints[joint_id].idx_q, model.joints[joint_id].nq
        q[start : start + size] = [np.cos(value), np.sin(value)] if size == 2 else [value]
    return q


def test_forward_and_jacobians_match_pinocchio(tree, case, pinocchio):
    """The KinematicTree (the compiled FK and Jacobian the solver runs) equals pinocchio's FK and
    LOCAL frame Jacobian (mimic followers folded into their leaders)."""
    robot = tree.robot
    model = pinocchio.buildModelFromXML(open(case.urdf).read())
    data = model.createData()
    base_id = model.getFrameId(case.base)
    for q in random_configurations(tree, CONFIGURATIONS, seed=8):
        values = dict(zip(tree.joint_names, q))
        pin_q = pinocchio_configuration(pinocchio, model, robot, values)
        pinocchio.computeJointJacobians(model, data, pin_q)
        pinocchio.framesForwardKinematics(model, data, pin_q)
        base_pose = data.oMf[base_id].homogeneous
        for tip in case.tips:
            tip_id = model.getFrameId(tip)
            expected = np.linalg.inv(base_pose) @ data.oMf[tip_id].homogeneous
            np.testing.assert_allclose(tree.forward(q, tip), expected, atol=1e-9)
            local = pinocchio.getFrameJacobian(model, data, tip_id, pinocchio.LOCAL)
            expected_jacobian = np.zeros((6, len(q)))
            for column, name in enumerate(model.names[1:], start=1):
                joint = robot.joints.get(name)
                if joint is None or robot.leader_of(name) not in tree.joint_names:
                    continue
                leader, multiplier, _ = robot.mimic_map(name)
                if joint not in robot.path_joints(case.base, tip):
                    continue
                index_v = model.joints[column].idx_v
                expected_jacobian[:, tree.joint_names.index(leader)] += multiplier * local[:, index_v]
            np.testing.assert_allclose(tree.body_jacobian(q, tip), expected_jacobian, atol=1e-9)


@pytest.mark.parametrize("case", BUNDLED, ids=str)
def test_bundled_robot_loads_without_warnings(case, recwarn):
    load_robot(case.urdf).tree(case.base, case.tips)
    assert not [w for w in recwarn if "URDF" in str(w.message)]
