"""MoveIt's compute_ik answered without ROS (ik_node.decisions.compute_ik): the request's robot_state
as the seed, poses for one tip or several, frames, timeouts, collisions, MoveIt's error codes
with a message naming the problem, and never a command. Solutions are checked by pinocchio's FK
of the URDF where pinocchio is importable (else the model's own full-robot FK)."""

from __future__ import annotations

import importlib.util
import math
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from test_policy import FailingSolver, ready_policy, settings_for

from ik_node import load_robot
from ik_node.decisions import compute_ik as codes
from ik_node.decisions.compute_ik import MAX_TIMEOUT, IKQuery, PoseValues, answer_query
from ik_node.decisions.conversions import pose_to_fields
from ik_node.decisions.parameters import NODE_PARAMETERS, NodeSettings, joint_parameter_defaults
from ik_node.decisions.planning import build_solver, plan_model
from ik_node.decisions.policy import IKPolicy
from ik_node.errors import IKNodeError

URDF_DIR = Path(__file__).resolve().parent.parent / "urdf"
JOINTS = [f"joint{i}" for i in range(1, 8)]
Q_START = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
HAS_PINOCCHIO = importlib.util.find_spec("pinocchio") is not None


class IndependentFK:
    """``T_base_link`` of a URDF at joint values by name: pinocchio where importable, else the
    model's own full-robot FK (not the solver's tree)."""

    def __init__(self, urdf: Path, robot, base: str = "base_link"):
        self.robot, self.base = robot, base
        if HAS_PINOCCHIO:
            import pinocchio

            self.pin = pinocchio
            self.model = pinocchio.buildModelFromUrdf(str(urdf))
            self.data = self.model.createData()

    def __call__(self, values: dict, link: str) -> np.ndarray:
        if not HAS_PINOCCHIO:
            return self.robot.forward(values, link, self.base)
        pin, model = self.pin, self.model
        q = pin.neutral(model)
        for name, value in values.items():
            joint = model.joints[model.getJointId(name)]
            if joint.nq == 2:  # (continuous: cos, sin)
                q[joint.idx_q : joint.idx_q + 2] = np.cos(value), np.sin(value)
            else:
                q[joint.idx_q] = value
        pin.framesForwardKinematics(model, self.data, q)

        def pose(frame: str) -> np.ndarray:
            return self.data.oMf[model.getFrameId(frame)].homogeneous

        return np.linalg.inv(pose(self.base)) @ pose(link)


def pose_errors(reached: np.ndarray, goal: np.ndarray) -> tuple[float, float]:
    cosine = (np.trace(reached[:3, :3].T @ goal[:3, :3]) - 1) / 2
    return float(np.linalg.norm(reached[:3, 3] - goal[:3, 3])), math.acos(min(1.0, max(-1.0, cosine)))


def pose(matrix, frame: str = "base_link") -> PoseValues:
    position, quaternion = pose_to_fields(matrix)
    return PoseValues(tuple(position), tuple(quaternion), frame)


def query(matrix=None, link: str = "", frame: str = "base_link", **fields) -> IKQuery:
    poses = () if matrix is None else (pose(matrix, frame),)
    return IKQuery(links=(link,), poses=poses, **fields)


@pytest.fixture(scope="module")
def fk(arm7):
    return IndependentFK(URDF_DIR / "arm7.urdf", arm7)


@pytest.fixture
def policy(arm7):
    return ready_policy(arm7)


def test_a_reachable_pose_is_answered_with_every_joint_by_name_reaching_it(arm7, fk, policy):
    rng = np.random.default_rng(29)
    lower, upper = policy.model_state.model.lower, policy.model_state.model.upper
    for _ in range(20):
        q = rng.uniform(lower, upper)
        goal = fk(dict(zip(JOINTS, q)), "tool0")
        answer = answer_query(policy, query(goal), time.monotonic())
        assert answer.code == codes.SUCCESS, answer.message
        assert answer.joint_names == tuple(JOINTS) and len(answer.positions) == 7
        solution = dict(zip(answer.joint_names, answer.positions))
        assert all(lower[i] <= solution[name] <= upper[i] for i, name in enumerate(JOINTS))
        position_error, rotation_error = pose_errors(fk(solution, "tool0"), goal)
        assert position_error < 1e-5 and rotation_error < 1e-5


def test_the_request_s_robot_state_seeds_and_left_out_joints_come_from_the_current_state(arm7, fk, policy):
    """A goal at FK(q) seeded at q is answered with q itself, which happens only when the seed
    is q: every joint from the request, or some from it and the others from /joint_states."""
    q = Q_START + 0.2
    goal = fk(dict(zip(JOINTS, q)), "tool0")
    answer = answer_query(policy, query(goal, joint_names=tuple(JOINTS), joint_positions=tuple(q)), 0.0)
    assert answer.code == codes.SUCCESS
    np.testing.assert_allclose(answer.positions, q, atol=1e-9)
    policy.joint_states.receive(JOINTS, q, now=100.0)  # fresh /joint_states: joint4..7 from them
    partial = query(goal, joint_names=("joint1", "joint2", "joint3", "finger_joint1"),
                    joint_positions=(*q[:3], 0.01))  # fmt: skip
    assert "finger_joint1" in arm7.joint_names  # (a joint of the robot outside the chain is accepted)
    answer = answer_query(policy, partial, 100.1)
    np.testing.assert_allclose(answer.positions, q, atol=1e-9)


def test_nothing_is_commanded_and_the_policy_is_left_as_it_was(arm7, fk, policy):
    from ik_node.decisions.replies import GoalRequest

    first = fk(dict(zip(JOINTS, Q_START)), "tool0")
    reply = policy.receive_goal(GoalRequest("tool0", first), 0.0)
    policy.commit(reply.command)
    before = (
        policy.motion.last_command.copy(),
        {k: v.copy() for k, v in policy.goals.items()},
        policy.motion.state.copy(),
    )
    answer = answer_query(policy, query(fk(dict(zip(JOINTS, Q_START + 0.3)), "tool0")), 0.0)
    assert answer.code == codes.SUCCESS
    np.testing.assert_array_equal(policy.motion.last_command, before[0])
    assert policy.goals.keys() == before[1].keys()
    np.testing.assert_array_equal(policy.goals["tool0"], before[1]["tool0"])
    np.testing.assert_array_equal(policy.motion.state, before[2])
    assert policy.pending == {} and policy.motion.joint_goal is None


def test_a_pose_in_a_link_frame_is_resolved_at_the_seed_and_in_a_tf_frame_by_the_lookup(arm7, fk, policy):
    target = fk(dict(zip(JOINTS, Q_START + 0.1)), "tool0")
    link3 = fk(dict(zip(JOINTS, Q_START)), "link3")  # at the request's robot_state
    request = query(np.linalg.inv(link3) @ target, frame="link3", joint_names=tuple(JOINTS),
                    joint_positions=tuple(Q_START))  # fmt: skip
    answer = answer_query(policy, request, 0.0)
    assert answer.code == codes.SUCCESS
    assert max(pose_errors(fk(dict(zip(JOINTS, answer.positions)), "tool0"), target)) < 1e-5
    map_to_base = np.eye(4)
    map_to_base[:3, 3] = [1.0, 0.0, 0.0]

    def lookup(frame, base, stamp):
        if frame != "map":
            raise IKNodeError(f"no transform from frame '{frame}' to the base '{base}'")
        return np.linalg.inv(map_to_base)  # T_base_map

    answer = answer_query(policy, query(map_to_base @ target, frame="map"), 0.0, lookup)
    assert answer.code == codes.SUCCESS
    assert max(pose_errors(fk(dict(zip(JOINTS, answer.positions)), "tool0"), target)) < 1e-5
    refused = answer_query(policy, query(target, frame="nowhere"), 0.0, lookup)
    assert refused.code == codes.FRAME_TRANSFORM_FAILURE and "'nowhere'" in refused.message


NAN = float("nan")


@pytest.mark.parametrize(
    ("fields", "code", "named"),
    [
        ({"link": "elbow"}, codes.INVALID_LINK_NAME, "link 'elbow' is not a tip of the node"),
        ({"frame": "nowhere"}, codes.FRAME_TRANSFORM_FAILURE, "frame 'nowhere' is not a link"),
        ({"joint_names": ("joint1", "wheel"), "joint_positions": (0.0, 0.0)}, codes.INVALID_ROBOT_STATE,
         "joint 'wheel', which robot 'arm7' does not have"),
        ({"joint_names": ("joint2",), "joint_positions": (NAN,)}, codes.INVALID_ROBOT_STATE,
         "'joint2' is nan"),
        ({"joint_names": ("joint2",), "joint_positions": (math.inf,)}, codes.INVALID_ROBOT_STATE,
         "is inf"),
        ({"joint_names": ("joint2", "joint2"), "joint_positions": (0.0, 0.1)}, codes.INVALID_ROBOT_STATE,
         "names joint 'joint2' twice"),
        ({"joint_names": ("joint2",), "joint_positions": ()}, codes.INVALID_ROBOT_STATE,
         "1 names but 0 positions"),
        ({"has_constraints": True}, codes.INVALID_GOAL_CONSTRAINTS, "constraints are not supported"),
        ({"timeout": -1.0}, codes.FAILURE, "timeout must be 0"),
    ],
)  # fmt: skip
def test_bad_requests_get_moveit_s_code_and_a_message_naming_the_problem(fk, policy, fields, code, named):
    goal = fk(dict(zip(JOINTS, Q_START)), "tool0")
    answer = answer_query(policy, query(goal, **fields), 0.0)
    assert answer.code == code and named in answer.message, answer.message
    assert answer.joint_names == () and answer.positions == ()
    assert answer_query(policy, query(goal), 0.0).code == codes.SUCCESS  # (the next one is answered)


@pytest.mark.parametrize(
    ("poses", "named"),
    [
        ((PoseValues((NAN, 0.2, 0.5), (0.0, 0.0, 0.0, 1.0), "base_link"),), "position must be finite"),
        ((PoseValues((0.4, 0.2, 0.5), (0.0, NAN, 0.0, 1.0), "base_link"),), "orientation must be finite"),
        ((PoseValues((0.4, 0.2, 0.5), (0.0, 0.0, 0.0, 0.0), "base_link"),), "zero quaternion"),
        ((PoseValues((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)),), "holds no pose"),  # the message's default
        ((PoseValues((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0)),), "holds no pose"),
        ((), "holds no pose"),
    ],
)
def test_nan_poses_and_empty_requests_are_invalid_goal_constraints(policy, poses, named):
    answer = answer_query(policy, IKQuery(links=("",) * len(poses), poses=poses), 0.0)
    assert answer.code == codes.INVALID_GOAL_CONSTRAINTS and named in answer.message, answer.message


def test_the_base_origin_is_a_pose_when_the_base_frame_is_named(arm7, fk, policy):
    """Only the default pose with an empty frame means "no pose"; naming the base asks for it
    (arm7 folds its tool onto its base's origin)."""
    answer = answer_query(policy, query(np.eye(4), frame="base_link"), 0.0)
    assert answer.code == codes.SUCCESS, answer.message
    assert max(pose_errors(fk(dict(zip(JOINTS, answer.positions)), "tool0"), np.eye(4))) < 1e-5


def test_timeouts_zero_is_the_node_s_default_and_long_ones_are_cut(arm7, fk, policy):
    goal = fk(dict(zip(JOINTS, Q_START)), "tool0")
    answer = answer_query(policy, query(goal, timeout=0.0), 0.0)
    assert answer.code == codes.SUCCESS
    assert "timeout 0: the node's timeout parameter (0.05 s)" in answer.message
    answer = answer_query(policy, query(goal, timeout=3600.0), 0.0)
    assert answer.code == codes.SUCCESS and f"cut to {MAX_TIMEOUT:g} s" in answer.message
    far = np.eye(4)
    far[:3, 3] = [3.0, 0.0, 0.0]  # (beyond the arm's reach: the whole budget is searched)
    start = time.perf_counter()
    answer = answer_query(policy, query(far, timeout=0.02), 0.0)
    assert time.perf_counter() - start < 0.5
    assert answer.code == codes.NO_IK_SOLUTION and "position error" in answer.message


def test_a_budget_spent_while_the_search_progresses_is_timed_out(arm7, fk, policy):
    policy.model_state.model = replace(
        policy.model_state.model, solver=FailingSolver(policy.model_state.model.solver, "timeout")
    )
    answer = answer_query(policy, query(fk(dict(zip(JOINTS, Q_START)), "tool0"), timeout=0.001), 0.0)
    assert answer.code == codes.TIMED_OUT and "the timeout (0.001 s) ran out" in answer.message


def test_collisions_the_node_s_solver_checks_them_whatever_avoid_collisions_says(arm7, fk, policy):
    goal = fk(dict(zip(JOINTS, Q_START)), "tool0")
    unchecked = answer_query(policy, query(goal, avoid_collisions=True), 0.0)
    assert unchecked.code == codes.SUCCESS and "collisions not checked" in unchecked.message
    assert "collision" not in answer_query(policy, query(goal, avoid_collisions=False), 0.0).message
    # the policy checks collisions (an obstacle; the stand-in solver reports every answer colliding)
    policy.model_state.topic_obstacles = {"scene/0": object()}
    policy.model_state.model = replace(
        policy.model_state.model, solver=FailingSolver(policy.model_state.model.solver, "collision")
    )
    for avoid in (True, False):
        answer = answer_query(policy, query(goal, avoid_collisions=avoid), 0.0)
        assert answer.code == codes.GOAL_IN_COLLISION and "every answer found collides" in answer.message


def test_no_answer_before_the_robot_and_its_solver_are_ready(arm7):
    settings = settings_for(arm7)
    policy = IKPolicy(["tool0"], settings)
    answer = answer_query(policy, query(np.eye(4)), 0.0)
    assert answer.code == codes.FAILURE and "no robot description yet" in answer.message
    policy.install(plan_model(arm7, settings))
    answer = answer_query(policy, query(np.eye(4)), 0.0)
    assert answer.code == codes.FAILURE and "being built" in answer.message


@pytest.fixture(scope="module")
def dual_arm():
    return load_robot(URDF_DIR / "dual_arm.urdf")


def dual_arm_policy(dual_arm, **overrides) -> tuple[IKPolicy, object]:
    """A ready policy of the dual arm's two tools, its parameters at their defaults but
    ``overrides``, and its model."""
    tips = ["left_tool0", "right_tool0"]
    values = {spec.name: spec.default for spec in NODE_PARAMETERS}
    values.update(base_link="base_link", tip_links=tips)
    values.update(joint_parameter_defaults(dual_arm.tree("base_link", tips)))  # (as the node declares)
    values.update(overrides)
    settings = NodeSettings.from_values(values)
    policy = IKPolicy(tips, settings)
    model = plan_model(dual_arm, settings)
    policy.install(model)
    policy.attach_solver(build_solver(model))
    return policy, model


def test_a_relative_tip_s_pose_is_its_link_s_made_relative_to_its_reference_s(dual_arm):
    """With ``tip_relative_to.right_tool0: left_tool0`` the request's poses are still the links'
    (MoveIt's meaning): both given, both reached; the right's alone, reached with the left held at
    the seed (the rest posture: the goal drawn with the left arm there)."""
    policy, model = dual_arm_policy(dual_arm, **{"tip_relative_to.right_tool0": "left_tool0"})
    fk = IndependentFK(URDF_DIR / "dual_arm.urdf", dual_arm)
    names = model.layout.names
    q = np.array([0.0] * 7 + [-0.3, -0.5, 0.8, -0.2, 0.6, 0.3])  # (torso and left arm at rest)
    goals = {tip: fk(dict(zip(names, q)), tip) for tip in ("left_tool0", "right_tool0")}
    for links in (("left_tool0", "right_tool0"), ("right_tool0",)):
        answer = answer_query(
            policy, IKQuery(links=links, poses=tuple(pose(goals[tip]) for tip in links)), 0.0
        )
        assert answer.code == codes.SUCCESS, answer.message
        for tip, goal in goals.items():
            assert max(pose_errors(fk(dict(zip(names, answer.positions)), tip), goal)) < 2e-5


def test_several_tips_from_pose_stamped_vector_and_a_tip_left_out_holds_its_pose(dual_arm):
    tips = ["left_tool0", "right_tool0"]
    policy, model = dual_arm_policy(dual_arm)
    fk = IndependentFK(URDF_DIR / "dual_arm.urdf", dual_arm)
    names = model.layout.names
    rng = np.random.default_rng(7)
    q = rng.uniform(model.lower * 0.5, model.upper * 0.5)
    goals = {tip: fk(dict(zip(names, q)), tip) for tip in tips}
    both = IKQuery(links=tuple(tips), poses=tuple(pose(goals[tip]) for tip in tips))
    answer = answer_query(policy, both, 0.0)
    assert answer.code == codes.SUCCESS, answer.message
    assert answer.joint_names == tuple(names)
    for tip in tips:
        assert max(pose_errors(fk(dict(zip(names, answer.positions)), tip), goals[tip])) < 1e-5
    seed = model.rest_posture
    held = fk(dict(zip(names, seed)), "right_tool0")
    left = IKQuery(links=("left_tool0",), poses=(pose(goals["left_tool0"]),))
    answer = answer_query(policy, left, 0.0)
    assert answer.code == codes.SUCCESS
    solution = dict(zip(names, answer.positions))
    assert max(pose_errors(fk(solution, "left_tool0"), goals["left_tool0"])) < 1e-5
    assert max(pose_errors(fk(solution, "right_tool0"), held)) < 1e-5
    for bad, named in [
        (IKQuery(links=("left_tool0",), poses=(pose(goals["left_tool0"]), pose(goals["right_tool0"]))),
         "1 names for 2 poses"),
        (IKQuery(links=("",), poses=(pose(goals["left_tool0"]),)), "several tips: name one of"),
        (IKQuery(links=("left_tool0", "left_tool0"), poses=(pose(goals["left_tool0"]),) * 2), "two poses"),
    ]:  # fmt: skip
        answer = answer_query(policy, bad, 0.0)
        assert answer.code == codes.INVALID_LINK_NAME and named in answer.message, answer.message


def test_a_floating_base_comes_back_as_its_transform_beside_the_joints():
    """The humanoid with ``root_joint: floating`` (base ``world``): the answer's joints by name and
    the base as ``T_world_pelvis`` (``multi_dof``) place every tip at its pose, by pinocchio's FK
    of the fixed-base URDF (pelvis -> tip) after that transform."""
    tips = ["left_foot", "right_foot", "left_hand"]
    robot = load_robot(URDF_DIR / "humanoid.urdf", root_joint="floating")
    values = {spec.name: spec.default for spec in NODE_PARAMETERS}
    values.update(base_link="world", tip_links=tips, root_joint="floating")
    values.update(joint_parameter_defaults(robot.tree("world", tips)))
    settings = NodeSettings.from_values(values)
    policy = IKPolicy(tips, settings)
    model = plan_model(robot, settings)
    policy.install(model)
    policy.attach_solver(build_solver(model))
    tree = model.tree
    q = tree.neutral.copy()
    bounded = np.isfinite(tree.lower)
    rng = np.random.default_rng(17)
    middle, half = 0.5 * (tree.lower + tree.upper), 0.5 * (tree.upper - tree.lower)
    q[bounded] = middle[bounded] + 0.3 * half[bounded] * rng.uniform(-1, 1, bounded.sum())
    q[:3] = [0.2, -0.1, 0.8]
    goals = {tip: tree.forward(q, tip) for tip in tips}
    request = IKQuery(links=tuple(tips), poses=tuple(pose(goals[tip], "world") for tip in tips))
    answer = answer_query(policy, request, 0.0)
    assert answer.code == codes.SUCCESS, answer.message
    ((joint, parent, child, world_to_root),) = answer.multi_dof
    assert (joint, parent, child) == ("root_joint", "world", "pelvis")
    fixed = IndependentFK(URDF_DIR / "humanoid.urdf", load_robot(URDF_DIR / "humanoid.urdf"), base=child)
    solution = dict(zip(answer.joint_names, answer.positions))
    for tip in tips:
        assert max(pose_errors(world_to_root @ fixed(solution, tip), goals[tip])) < 1e-5, tip


def test_the_node_s_branch_decides_the_answer_from_the_closed_form():
    """On arm6 (a closed form) with ``branch`` set to a label, each request is answered with the
    solution on that branch nearest its robot_state (the complete set, by brute force), or
    NO_IK_SOLUTION saying so where none is on it; with ``nearest`` and ``solve_type`` distance,
    the nearest of the whole set. On arm7 (no closed form) a label set at start-up is FAILURE
    naming the parameter."""
    from test_policy import BRANCH

    from ik_node.description.catalogue import URDF_DIR as BUNDLED_URDFS

    arm6 = load_robot(BUNDLED_URDFS / "arm6.urdf")
    on_branch, nearest = ready_policy(arm6, branch=BRANCH), ready_policy(arm6, solve_type="distance")
    solver = on_branch.model_state.model.solver
    names = tuple(on_branch.model_state.model.joint_names)
    low, high = np.maximum(solver.lower, -math.pi), np.minimum(solver.upper, math.pi)
    rng = np.random.default_rng(37)
    answered = refused = 0
    for _ in range(30):
        q, seed = rng.uniform(low, high), rng.uniform(low, high)
        goal = solver.tree.forward(q)
        request = query(goal, joint_names=names, joint_positions=tuple(seed))
        every = solver.solve_all(goal, seed=seed)
        rows = [row for row, labels in enumerate(every.labels) if set(labels) == set(BRANCH.split())]
        answer = answer_query(on_branch, request, 0.0)
        if not rows:
            assert answer.code == codes.NO_IK_SOLUTION and f"none on branch '{BRANCH}'" in answer.message
            refused += 1
        else:
            assert answer.code == codes.SUCCESS, answer.message
            np.testing.assert_allclose(answer.positions, every.q[rows[0]], atol=1e-9)
            answered += 1
        closest = answer_query(nearest, request, 0.0)
        assert closest.code == codes.SUCCESS, closest.message
        np.testing.assert_allclose(closest.positions, every.q[0], atol=1e-9)
    assert answered >= 10 and refused >= 1, (answered, refused)
    arm7 = load_robot(URDF_DIR / "arm7.urdf")
    labelled = ready_policy(arm7, branch=BRANCH)
    answer = answer_query(labelled, query(np.eye(4)), 0.0)
    assert answer.code == codes.FAILURE and f"parameter branch '{BRANCH}'" in answer.message
