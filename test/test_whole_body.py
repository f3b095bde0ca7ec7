"""Whole-body kinematics (issue 17): floating and planar roots, ball joints and paths that go up the
tree, against pinocchio (free-flyer and planar root models, frames relative to a stance foot) on
every example-robot-data humanoid and quadruped, and against central differences on the
configuration manifold; the configuration manifold's operations against pinocchio's integrate."""

from __future__ import annotations

import numpy as np
import pytest

from ik_node import Joint, Robot, load_robot
from ik_node.description.catalogue import URDF_DIR, example_robot_data_dir
from ik_node.errors import TargetError, URDFError
from ik_node.lie import adjoint, inverse

pin = pytest.importorskip("pinocchio", reason="pinocchio (PyPI 'pin') is a test extra")

FD_STEP = 1e-6
#: example-robot-data's humanoids and quadrupeds (URDF relative to its robots/ directory) and a
#: stance foot of each (a link the tests use as base).
LEGGED = {
    "talos": ("talos_data/robots/talos_reduced.urdf", "left_sole_link"),
    "g1": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", "left_ankle_roll_link"),
    "romeo": ("romeo_description/urdf/romeo.urdf", "LAnklePitchLink"),
    "simple_humanoid": ("simple_humanoid_description/urdf/simple_humanoid.urdf", "LLEG_LINK5"),
    "solo12": ("solo_description/robots/solo12.urdf", "FL_FOOT"),
    "anymal": ("anymal_b_simple_description/robots/anymal.urdf", "LF_FOOT"),
    "go1": ("go1_description/urdf/go1.urdf", "FL_foot"),
    "a1": ("a1_description/urdf/a1.urdf", "FL_foot"),
    "laikago": ("laikago_description/urdf/laikago.urdf", "FL_foot"),
    "hyq": ("hyq_description/robots/hyq_no_sensors.urdf", "lf_foot"),
}


def legged_cases():
    robots = example_robot_data_dir()
    if robots is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason="example-robot-data is not installed"))]
    cases = [
        pytest.param((name, robots / relative, foot), id=name)
        for name, (relative, foot) in LEGGED.items()
        if (robots / relative).is_file()
    ]
    assert len(cases) >= 6, "example-robot-data's legged robots moved"
    return cases


@pytest.fixture(scope="module", params=legged_cases())
def legged(request):
    name, urdf, foot = request.param
    with _Quiet():
        robot = load_robot(urdf, root_joint="floating")
    model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    return name, urdf, foot, robot, model


class _Quiet:
    """Ignore the URDF warnings of the example robots (tags ik_node does not read)."""

    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)


def random_configuration(tree, rng) -> np.ndarray:
    """Within the limits (unbounded 1-DOF joints in [-pi, pi]); a random base pose; unit quaternions."""
    lower = np.where(np.isfinite(tree.lower), tree.lower, -np.pi)
    upper = np.where(np.isfinite(tree.upper), tree.upper, np.pi)
    q = rng.uniform(lower, upper)
    for joint, (_, at, _) in zip(tree.joints, tree.spans):
        if joint.type == "floating":
            q[at : at + 3] = rng.uniform(-1.0, 1.0, 3)
            quaternion = rng.normal(size=4)
            q[at + 3 : at + 7] = quaternion / np.linalg.norm(quaternion)
        elif joint.type == "ball":
            quaternion = rng.normal(size=4)
            q[at : at + 4] = quaternion / np.linalg.norm(quaternion)
    return q


def joint_value(tree, values: dict, name: str) -> float:
    """A 1-DOF joint's value in ``values``; a mimic follower's from its leader (pinocchio models
    followers as joints of their own)."""
    if name in values or name not in tree.robot.joints:
        return values.get(name, 0.0)
    leader, multiplier, offset = tree.robot.mimic_map(name)
    return multiplier * values.get(leader, 0.0) + offset


def to_pinocchio(model, tree, q: np.ndarray) -> np.ndarray:
    """Our configuration as pinocchio's, matched by joint name (its root joint 'root_joint')."""
    pin_q = pin.neutral(model)
    values = dict(zip(tree.joint_names, q))
    for joint_id in range(1, model.njoints):
        name, joint = model.names[joint_id], model.joints[joint_id]
        start = joint.idx_q
        if joint.nq == 7:  # free flyer: the same layout
            pin_q[start : start + 7] = [
                values[f"{name}/{suffix}"] for suffix in ("x", "y", "z", "qx", "qy", "qz", "qw")
            ]
        elif joint.nq == 4 and joint.shortname() == "JointModelPlanar":
            theta = values[f"{name}/theta"]
            pin_q[start : start + 4] = [
                values[f"{name}/x"],
                values[f"{name}/y"],
                np.cos(theta),
                np.sin(theta),
            ]
        elif joint.nq == 2:  # continuous: cos, sin
            value = joint_value(tree, values, name)
            pin_q[start : start + 2] = [np.cos(value), np.sin(value)]
        else:
            pin_q[start] = joint_value(tree, values, name)
    return pin_q


def pinocchio_local_jacobian(model, data, frame: str, tree) -> np.ndarray:
    """pinocchio's LOCAL Jacobian of ``frame`` with its columns in our tangent order (by name)."""
    local = pin.getFrameJacobian(model, data, model.getFrameId(frame), pin.LOCAL)
    ours = np.zeros((6, len(tree.tangent_names)))
    index = {name: i for i, name in enumerate(tree.tangent_names)}
    for joint_id in range(1, model.njoints):
        name, joint = model.names[joint_id], model.joints[joint_id]
        if joint.nv == 6:
            names = [f"{name}/{suffix}" for suffix in ("vx", "vy", "vz", "wx", "wy", "wz")]
        elif joint.nv == 3:
            names = [f"{name}/{suffix}" for suffix in ("vx", "vy", "wz")]
        else:
            names = [name]
        multiplier = 1.0
        if name in tree.robot.joints and not tree.robot.joints[name].is_multi_dof:
            leader, multiplier, _ = tree.robot.mimic_map(name)
            names = [leader]
        for offset, column_name in enumerate(names):
            if column_name in index:
                ours[:, index[column_name]] += multiplier * local[:, joint.idx_v + offset]
    return ours


def test_floating_base_fk_and_jacobians_equal_pinocchio_free_flyer(legged):
    """``load_robot(root_joint='floating')``: every link's pose and the body Jacobians of the feet
    and hands equal pinocchio's with ``JointModelFreeFlyer`` (LOCAL frame), configurations mapped
    by name."""
    name, _, foot, robot, model = legged
    data = model.createData()
    tree = robot.full_tree
    assert tree.base_link == "world" and tree.joint_names[:7] == tuple(
        f"root_joint/{s}" for s in ("x", "y", "z", "qx", "qy", "qz", "qw")
    )
    rng = np.random.default_rng(1)
    links = [link for link in tree.link_names if model.existFrame(link) and link != "world"]
    for _ in range(4):
        q = random_configuration(tree, rng)
        pin_q = to_pinocchio(model, tree, q)
        pin.computeJointJacobians(model, data, pin_q)
        pin.framesForwardKinematics(model, data, pin_q)
        poses = tree.link_poses(q)
        for link in links:
            expected = data.oMf[model.getFrameId(link)].homogeneous
            np.testing.assert_allclose(
                tree.pose_of(poses, link), expected, atol=1e-9, err_msg=f"{name} {link}"
            )
        for link in (foot, *tree.tip_links[:4]):
            np.testing.assert_allclose(
                tree.body_jacobian(q, link), pinocchio_local_jacobian(model, data, link, tree), atol=1e-9
            )


def test_a_stance_foot_as_base_equals_pinocchio_relative_frames(legged):
    """Any link as base: from a stance foot (paths up the leg and down the others), each tip's pose
    is ``oMfoot^-1 oMtip`` and its body Jacobian the tip's relative to the foot, ``J_tip -
    Ad(T_tip_foot) J_foot`` (both pinocchio LOCAL, fixed-base model)."""
    name, urdf, foot, _, _ = legged
    with _Quiet():
        robot = load_robot(urdf)
    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    leaves = [tip for tip in robot.full_tree.tip_links if tip != foot and model.existFrame(tip)][:4]
    tree = robot.tree(foot, leaves)
    rng = np.random.default_rng(2)
    for _ in range(4):
        q = random_configuration(tree, rng)
        pin_q = to_pinocchio(model, tree, q)
        pin.computeJointJacobians(model, data, pin_q)
        pin.framesForwardKinematics(model, data, pin_q)
        foot_pose = data.oMf[model.getFrameId(foot)].homogeneous
        foot_jacobian = pinocchio_local_jacobian(model, data, foot, tree)
        for tip in leaves:
            tip_pose = data.oMf[model.getFrameId(tip)].homogeneous
            np.testing.assert_allclose(tree.forward(q, tip), inverse(foot_pose) @ tip_pose, atol=1e-9)
            expected = (
                pinocchio_local_jacobian(model, data, tip, tree)
                - adjoint(inverse(tip_pose) @ foot_pose) @ foot_jacobian
            )
            np.testing.assert_allclose(
                tree.body_jacobian(q, tip), expected, atol=1e-9, err_msg=f"{name} {tip}"
            )


def manifold_finite_difference(tree, q, link, base_axes=False) -> np.ndarray:
    """Central differences of ``link``'s pose along each tangent coordinate, ``q (+) +-h e_j``:
    body twists (tip axes), or the origin's velocity and the angular velocity in base axes."""
    columns = []
    for j in range(len(tree.tangent_names)):
        step = np.zeros(len(tree.tangent_names))
        step[j] = FD_STEP
        plus = tree.forward(tree.integrate(q, step), link)
        minus = tree.forward(tree.integrate(q, -step), link)
        relative = minus[:3, :3].T @ plus[:3, :3]
        skew = 0.5 * (relative - relative.T)
        angular = np.array([skew[2, 1], skew[0, 2], skew[1, 0]]) / (2 * FD_STEP)  # minus axes
        linear = (plus[:3, 3] - minus[:3, 3]) / (2 * FD_STEP)
        rotation = 0.5 * (plus + minus)[:3, :3]
        if base_axes:
            columns.append(np.concatenate((linear, minus[:3, :3] @ angular)))
        else:
            columns.append(np.concatenate((rotation.T @ linear, angular)))
    return np.array(columns).T


PLANAR_ROOT_ROBOTS = ["humanoid", "mobile_manipulator"]


@pytest.mark.parametrize("name", PLANAR_ROOT_ROBOTS)
def test_a_planar_root_equals_pinocchio_planar_joint(name):
    """``root_joint='planar'``: (x, y, theta) against pinocchio's ``JointModelPlanar`` (x, y, cos,
    sin): poses and LOCAL Jacobians (vx, vy, wz), and against manifold finite differences."""
    urdf = URDF_DIR / f"{name}.urdf"
    robot = load_robot(urdf, root_joint="planar")
    model = pin.buildModelFromUrdf(str(urdf), pin.JointModelPlanar())
    data = model.createData()
    tree = robot.full_tree
    assert tree.joint_names[:3] == ("root_joint/x", "root_joint/y", "root_joint/theta")
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = random_configuration(tree, rng)
        q[:3] = rng.uniform(-2, 2, 3)
        pin_q = to_pinocchio(model, tree, q)
        pin.computeJointJacobians(model, data, pin_q)
        pin.framesForwardKinematics(model, data, pin_q)
        for tip in tree.tip_links:
            expected = data.oMf[model.getFrameId(tip)].homogeneous
            np.testing.assert_allclose(tree.forward(q, tip), expected, atol=1e-9)
            jacobian = tree.body_jacobian(q, tip)
            np.testing.assert_allclose(jacobian, pinocchio_local_jacobian(model, data, tip, tree), atol=1e-9)
            np.testing.assert_allclose(jacobian, manifold_finite_difference(tree, q, tip), atol=1e-6)


def ball_robot() -> Robot:
    """A tree built in code: a floating torso, a ball shoulder, a revolute elbow and a prismatic
    tool slide (URDF has no ball joints)."""

    def origin(x, y, z, roll=0.0):
        pose = np.eye(4)
        pose[:3, 3] = (x, y, z)
        pose[1:3, 1:3] = [[np.cos(roll), -np.sin(roll)], [np.sin(roll), np.cos(roll)]]
        return pose

    joints = [
        Joint("base", "floating", "world", "torso", origin(0, 0, 0), np.array([0.0, 0, 1])),
        Joint("shoulder", "ball", "torso", "upper_arm", origin(0.1, 0.2, 0.3, 0.4), np.array([0.0, 0, 1])),
        Joint(
            "elbow", "revolute", "upper_arm", "forearm", origin(0.3, 0, 0), np.array([0.0, 1, 0]), -2.0, 2.0
        ),
        Joint(
            "slide", "prismatic", "forearm", "tool", origin(0.25, 0, 0.05), np.array([1.0, 0, 0]), 0.0, 0.1
        ),
    ]
    return Robot("ball_arm", ["world", "torso", "upper_arm", "forearm", "tool"], joints)


def test_ball_joints_built_in_code_have_jacobians_equal_to_manifold_differences():
    """A ball joint's 3 angular columns and a floating joint's 6, body and base-axes (mixed), and
    a reversed path through the ball joint (from the tool up to the world), against central
    differences on the manifold."""
    robot = ball_robot()
    tree = robot.full_tree
    assert tree.joint_names[7:11] == ("shoulder/qx", "shoulder/qy", "shoulder/qz", "shoulder/qw")
    assert tree.tangent_names[6:9] == ("shoulder/wx", "shoulder/wy", "shoulder/wz")
    rng = np.random.default_rng(4)
    reversed_tree = robot.tree("tool", ["world", "torso"])
    for _ in range(10):
        q = random_configuration(tree, rng)
        for link in ("tool", "forearm"):
            np.testing.assert_allclose(
                tree.body_jacobian(q, link), manifold_finite_difference(tree, q, link), atol=1e-6
            )
            np.testing.assert_allclose(
                tree.mixed_jacobian(q, link),
                manifold_finite_difference(tree, q, link, base_axes=True),
                atol=1e-6,
            )
        q_up = reversed_tree.joint_vector(dict(zip(tree.joint_names, q)))
        np.testing.assert_allclose(
            reversed_tree.forward(q_up, "world"), inverse(tree.forward(q, "tool")), atol=1e-12
        )
        for link in ("world", "torso"):
            np.testing.assert_allclose(
                reversed_tree.body_jacobian(q_up, link),
                manifold_finite_difference(reversed_tree, q_up, link),
                atol=1e-6,
            )


def test_integrate_equals_pinocchio_and_keeps_quaternions_unit():
    """``q (+) dq`` of a floating joint equals pinocchio's ``integrate`` on a free flyer (the SE(3)
    exponential of the body twist), the quaternion stays unit, and ``difference`` inverts it for
    rotations."""
    robot = ball_robot()
    tree = robot.tree("world", ["torso"])
    model = pin.Model()
    model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
    rng = np.random.default_rng(5)
    for _ in range(50):
        q = random_configuration(tree, rng)
        dq = rng.normal(size=6) * rng.choice((1e-8, 0.1, 2.0))
        moved = tree.integrate(q, dq)
        expected = pin.integrate(model, q, dq)
        if np.dot(expected[3:], moved[3:]) < 0:  # q and -q: the same rotation
            expected[3:] *= -1.0
        np.testing.assert_allclose(moved, expected, atol=1e-12)
        assert abs(np.linalg.norm(moved[3:]) - 1.0) < 1e-14
        if np.linalg.norm(dq[3:]) < np.pi:  # (the rotation vector's principal range)
            np.testing.assert_allclose(tree.difference(q, moved)[3:], dq[3:], atol=1e-9)


def test_floating_bad_input_is_named():
    """A zero quaternion is refused naming the joint; a non-unit one is normalised; a root joint on
    a URDF that already has a 'world' link is refused; an unknown root joint type is refused."""
    robot = load_robot(URDF_DIR / "humanoid.urdf", root_joint="floating")
    tree = robot.tree("world", "left_hand")
    q = tree.neutral.copy()
    q[3:7] = 0.0
    with pytest.raises(TargetError, match="quaternion of joint 'root_joint'.*zero"):
        tree.forward(q)
    q[3:7] = (0.0, 0.0, 0.0, 2.0)
    np.testing.assert_allclose(tree.forward(q), tree.forward(tree.neutral))
    with pytest.raises(URDFError, match="already has a link 'world'"):
        load_robot(URDF_DIR / "arm7.urdf", root_joint="floating")  # (its root is 'world')
    with pytest.raises(URDFError, match="root_joint must be 'floating' or 'planar'"):
        load_robot(URDF_DIR / "humanoid.urdf", root_joint="ball")


def pinocchio_errors(model, data, q_pin, tips, targets) -> list[tuple[float, float]]:
    """Position [m] and rotation angle [rad] of each tip from its target, by pinocchio's FK."""
    pin.framesForwardKinematics(model, data, q_pin)
    errors = []
    for tip, target in zip(tips, targets):
        pose = data.oMf[model.getFrameId(tip)].homogeneous
        cosine = np.clip(0.5 * (np.trace(pose[:3, :3].T @ target[:3, :3]) - 1.0), -1.0, 1.0)
        errors.append((float(np.linalg.norm(pose[:3, 3] - target[:3, 3])), float(np.arccos(cosine))))
    return errors


@pytest.mark.parametrize("name", ["humanoid", "talos"])
def test_floating_base_solves_keep_the_solver_promises(name):
    """A free-floating humanoid with both feet and both hands on targets (FK of random
    configurations, the base within 0.1 m and 0.3 rad of its rest pose): every success is within
    tolerance by pinocchio's FK, every 1-DOF joint within its limits, the quaternion unit; nearly
    every target is solved in 20 ms; with a fixed attempt budget the answers are deterministic."""
    if name == "talos":
        robots = example_robot_data_dir()
        if robots is None:
            pytest.skip("example-robot-data is not installed")
        urdf = robots / LEGGED["talos"][0]
        tips = ["left_sole_link", "right_sole_link", "arm_left_7_link", "arm_right_7_link"]
    else:
        urdf = URDF_DIR / "humanoid.urdf"
        tips = ["left_foot", "right_foot", "left_hand", "right_hand"]
    with _Quiet():
        robot = load_robot(urdf, root_joint="floating")
    model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    data = model.createData()
    from ik_node import IKSolver

    solver = IKSolver(robot, "world", tips)
    tree = solver.tree
    rng = np.random.default_rng(9)
    solved, count = 0, 60
    for _ in range(count):
        q = random_configuration(tree, rng)
        q[:3] = rng.uniform(-0.1, 0.1, 3)
        rotation_vector = rng.normal(size=3)
        rotation_vector *= rng.uniform(0, 0.3) / np.linalg.norm(rotation_vector)
        q = tree.integrate(
            np.concatenate((q[:3], [0, 0, 0, 1], q[7:])),
            np.concatenate(([0, 0, 0], rotation_vector, np.zeros(len(q) - 7))),
        )
        targets = [tree.forward(q, tip) for tip in tips]
        result = solver.solve(dict(zip(tips, targets)), timeout=0.02)
        assert abs(np.linalg.norm(result.q[3:7]) - 1.0) < 1e-12
        bounded = np.isfinite(solver.lower)
        assert np.all(result.q[bounded] >= solver.lower[bounded]) and np.all(
            result.q[bounded] <= solver.upper[bounded]
        )
        if result.success:
            solved += 1
            for position, angle in pinocchio_errors(
                model, data, to_pinocchio(model, tree, result.q), tips, targets
            ):
                assert position <= 1e-5 * (1 + 1e-6) and angle <= 1.001e-5, (position, angle)
    assert solved >= count - 1, solved
    fixed_budget = {"max_attempts": 3, "seed_table_size": 256}
    first, second = (
        IKSolver(robot, "world", tips, **fixed_budget),
        IKSolver(robot, "world", tips, **fixed_budget),
    )
    answers = [s.solve(dict(zip(tips, targets)), timeout=None).q for s in (first, second)]
    np.testing.assert_array_equal(answers[0], answers[1])


def _humanoid_tips() -> list[str]:
    return ["left_foot", "right_foot", "left_hand", "right_hand", "head"]


def test_a_free_floating_humanoid_solves_from_no_seed_wherever_it_stands():
    """Five pose tasks (feet, hands, head) on a free-floating humanoid, ``seed=None``: the robot
    stands anywhere within 2 m, facing anywhere, tilted up to 0.3 rad, every joint random within
    its limits. Every success is within tolerance by pinocchio's FK, every target is solved
    within 100 attempts (the base placed from the targets, limbs restarted apart; an attempt
    budget, not a time budget, so that a loaded machine decides nothing; about 20 ms)."""
    urdf = URDF_DIR / "humanoid.urdf"
    tips = _humanoid_tips()
    with _Quiet():
        robot = load_robot(urdf, root_joint="floating")
    model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    data = model.createData()
    from ik_node import IKSolver

    solver = IKSolver(robot, "world", tips, max_attempts=100)
    tree = solver.tree
    rng = np.random.default_rng(31)
    attempts = []
    solved, count = 0, 60
    for _ in range(count):
        q = random_configuration(tree, rng)
        q[:3] = (*rng.uniform(-2.0, 2.0, 2), rng.uniform(-0.2, 0.2))
        tilt = rng.normal(size=2)
        tilt *= rng.uniform(0, 0.3) / np.linalg.norm(tilt)
        q = tree.integrate(
            np.concatenate((q[:3], [0, 0, 0, 1], q[7:])),
            np.concatenate(([0, 0, 0], tilt, [rng.uniform(-np.pi, np.pi)], np.zeros(len(q) - 7))),
        )
        targets = [tree.forward(q, tip) for tip in tips]
        result = solver.solve(dict(zip(tips, targets)), timeout=None)
        attempts.append(result.attempts)
        bounded = np.isfinite(solver.lower)
        assert np.all(result.q[bounded] >= solver.lower[bounded])
        assert np.all(result.q[bounded] <= solver.upper[bounded])
        if result.success:
            solved += 1
            for position, angle in pinocchio_errors(
                model, data, to_pinocchio(model, tree, result.q), tips, targets
            ):
                assert position <= 1e-5 * (1 + 1e-6) and angle <= 1.001e-5, (position, angle)
    assert solved == count, (solved, sorted(attempts))


def test_the_free_base_is_placed_from_the_targets_by_a_rigid_fit():
    """With no seed, the rest posture moved as a rigid body onto targets that are exactly such a
    motion of it: the placed base is that motion (the fit is exact), whatever the rotation."""
    from ik_node import IKSolver
    from ik_node.lie import matrix_to_quaternion, rpy_to_matrix

    with _Quiet():
        robot = load_robot(URDF_DIR / "humanoid.urdf", root_joint="floating")
    tips = _humanoid_tips()
    solver = IKSolver(robot, "world", tips)
    moved = solver.rest_posture.copy()
    moved[:3] = (1.5, -0.7, 0.9)
    moved[3:7] = matrix_to_quaternion(rpy_to_matrix(0.2, -0.1, 2.8))
    targets = solver.tip_poses(moved)
    placed = solver._base_placement.seed(targets, solver.problem)
    np.testing.assert_allclose(placed[:3], moved[:3], atol=1e-9)
    assert abs(abs(np.dot(placed[3:7], moved[3:7])) - 1.0) < 1e-12
    np.testing.assert_array_equal(placed[7:], solver.rest_posture[7:])


def test_each_limb_is_the_joints_that_move_its_tip_alone_seen_from_where_they_hang():
    """A fixed-pelvis humanoid with five tips: each tip's limb holds the joints on its path that
    no other tip's path holds (a hand: its arm; the head: its neck), and the seed table's limb
    features are the tip's pose seen from the link its limb hangs from (independent FK:
    ``KinematicTree.forward``)."""
    from ik_node import IKSolver
    from ik_node.solver.kernels import TIP_FEATURES

    with _Quiet():
        robot = load_robot(URDF_DIR / "humanoid.urdf")
    tips = _humanoid_tips()
    solver = IKSolver(robot, "pelvis", tips, seed_table_size=64)
    problem, tree = solver.problem, solver.tree
    names = tree.tangent_names
    limbs = {
        tip: [names[j] for j in problem.limb_coordinates[problem.limb_starts[t] : problem.limb_starts[t + 1]]]
        for t, tip in enumerate(tips)
    }
    assert limbs["head"] == ["neck_yaw_joint", "neck_pitch_joint"]
    assert limbs["left_hand"] == [
        f"left_{name}_joint"
        for name in (
            "shoulder_pitch",
            "shoulder_roll",
            "shoulder_yaw",
            "elbow",
            "wrist_yaw",
            "wrist_pitch",
            "wrist_roll",
        )
    ]
    assert limbs["left_foot"][0] == "left_hip_yaw_joint" and "torso_yaw_joint" not in limbs["left_foot"]
    features = solver.seed_table.limb_features
    assert features.shape == (len(tips), TIP_FEATURES, len(solver.seed_table.limb_q))
    parent_joint = {joint.child: joint for joint in robot.joints.values()}
    for t, tip in enumerate(tips):
        hangs_from = robot.joints[limbs[tip][0]].parent  # (or the link it is fixed to, above)
        while hangs_from != "pelvis" and not parent_joint[hangs_from].is_movable:
            hangs_from = parent_joint[hangs_from].parent
        for entry in (0, 17, 63):
            q = solver.seed_table.limb_q[entry]
            seen = inverse(tree.forward(q, hangs_from)) @ tree.forward(q, tip)
            expected = np.concatenate((seen[:3, 3], seen[:3, :3].ravel())) * problem.limb_scale[t]
            np.testing.assert_allclose(features[t, :, entry], expected, atol=1e-5)
