"""Gaze tasks (issue 50, part 1): a tip's axis points at a target point. Its two rows are the
line of sight's turn seen from the tip (checked against finite differences of pinocchio's FK);
over seeded random points that can be looked at (a 2-DOF pan/tilt head, a 6-DOF arm's tool, a
free-floating humanoid's head with its feet and hands held) the angle to the point by an
independent FK is within 1e-4 rad, within the joint limits; a cone (``orientation_tolerance``)
accepts any look within it; bad gaze input is refused naming it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_compute_ik import IndependentFK

from ik_node import IKSolver, TipTask, load_robot
from ik_node.description.catalogue import URDF_DIR
from ik_node.errors import IKNodeError, TargetError

ANGLE = 1e-4  # [rad] what a reachable gaze must meet (the default tolerance is 1e-5)


@pytest.fixture(scope="module")
def arm6():
    return load_robot(URDF_DIR / "arm6.urdf")


@pytest.fixture(scope="module")
def mobile():
    return load_robot(URDF_DIR / "mobile_manipulator.urdf")


def look_angle(pose: np.ndarray, axis, point) -> float:
    """The angle [rad] between a frame's ``axis`` (in its own frame; ``pose`` 4x4 ``T_base_frame``)
    and the line from its origin to ``point`` (base frame), by atan2 (exact near 0)."""
    direction = np.asarray(point, dtype=float) - pose[:3, 3]
    along = pose[:3, :3] @ (np.asarray(axis, dtype=float) / np.linalg.norm(axis))
    return math.atan2(np.linalg.norm(np.cross(along, direction)), float(along @ direction))


def point_ahead(pose: np.ndarray, axis, distance: float) -> np.ndarray:
    """The point ``distance`` [m] along a frame's ``axis``: one that frame looks at."""
    along = pose[:3, :3] @ (np.asarray(axis, dtype=float) / np.linalg.norm(axis))
    return pose[:3, 3] + distance * along


def random_q(solver, rng) -> np.ndarray:
    """A configuration uniform within the limits (a joint without them: within a turn)."""
    return rng.uniform(np.maximum(solver.lower, -math.pi), np.minimum(solver.upper, math.pi))


def within_limits(solver, q) -> bool:
    bounded = np.isfinite(solver.lower)
    return bool(np.all(q[bounded] >= solver.lower[bounded]) and np.all(q[bounded] <= solver.upper[bounded]))


def test_the_gaze_rows_are_the_line_of_sight_s_turn_by_finite_differences(arm6):
    """At random configurations and points, the two rows ``J_k`` are ``b_k . w_eff`` where the
    line of sight ``v`` (unit, tip axes; by pinocchio's FK of the tool and its offset) turns as
    ``dv = -w_eff x v``: ``J_k dq = -b_k . (v x dv)`` with ``b1 = (u x v) / |u x v|`` and ``b2 =
    v x b1``, by central differences of ``v``."""
    axis, offset = np.array([0.3, -0.2, 1.0]), np.array([0.01, 0.02, 0.05])
    fk = IndependentFK(URDF_DIR / "arm6.urdf", arm6)
    task = TipTask("gaze", axis=axis, offset=offset)
    solver = IKSolver(arm6, "base_link", ["tool0"], tasks={"tool0": task})
    u = axis / np.linalg.norm(axis)

    def sight(q, point):
        frame = fk(dict(zip(solver.joint_names, q)), "tool0")
        rotation, position = frame[:3, :3], frame[:3, :3] @ offset + frame[:3, 3]
        d = rotation.T @ (point - position)
        return d / np.linalg.norm(d)

    rng = np.random.default_rng(5)
    for _ in range(20):
        q = rng.uniform(solver.lower, solver.upper)
        point = rng.uniform(-1.0, 1.0, 3)
        jacobian = solver.task_jacobian(q, point)
        assert jacobian.shape == (2, 6)
        v = sight(q, point)
        b1 = np.cross(u, v) / np.linalg.norm(np.cross(u, v))
        b2 = np.cross(v, b1)
        step = 1e-6
        for j in range(6):
            dq = np.zeros(6)
            dq[j] = step
            dv = (sight(q + dq, point) - sight(q - dq, point)) / (2 * step)
            expected = -np.cross(v, dv)
            np.testing.assert_allclose(jacobian[:, j], [b1 @ expected, b2 @ expected], atol=1e-6)


@pytest.mark.parametrize(
    "case", [("head", "camera_link", (1.0, 0.0, 0.0)), ("arm", "tool0", (0.0, 0.0, 1.0))], ids=lambda c: c[0]
)
def test_points_that_can_be_looked_at_are_within_a_tenth_of_a_milliradian(case, arm6, mobile):
    """Seeded random points that the tip can look at (a random configuration's line of sight, 0.3
    to 3 m out), solved from the rest posture: every one solved, the angle between the tip's
    axis and the point by an independent FK at most 1e-4 rad, the joints within their limits.
    The head has two joints (pan, tilt) and its seed table no pose features; the arm's tool
    has three to spare."""
    name, tip, axis = case
    robot, urdf = (mobile, "mobile_manipulator.urdf") if name == "head" else (arm6, "arm6.urdf")
    solver = IKSolver(robot, "base_link", [tip], tasks={tip: TipTask("gaze", axis=axis)})
    fk = IndependentFK(URDF_DIR / urdf, robot)
    rng = np.random.default_rng(11)
    for _ in range(40):
        q = rng.uniform(solver.lower, solver.upper)
        point = point_ahead(fk(dict(zip(solver.joint_names, q)), tip), axis, rng.uniform(0.3, 3.0))
        result = solver.solve(point, timeout=0.2)
        assert result.success, result.reason
        assert within_limits(solver, result.q)
        reached = fk(dict(zip(solver.joint_names, result.q)), tip)
        assert look_angle(reached, axis, point) <= ANGLE
        assert result.orientation_error <= 1e-5 and result.position_error == 0.0


def test_a_cone_accepts_any_look_within_its_angle(arm6):
    """``orientation_tolerance`` is the gaze's cone: a seed already looking within it is the
    answer as it is; from farther, the answer looks within the cone (by an independent FK), and
    no farther in than the cone's edge needs (fewer iterations than a 1e-5 rad gaze)."""
    cone = 0.2
    cone_task = TipTask("gaze", orientation_tolerance=cone)
    wide = IKSolver(arm6, "base_link", ["tool0"], tasks={"tool0": cone_task})
    narrow = IKSolver(arm6, "base_link", ["tool0"], tasks={"tool0": TipTask("gaze")})
    fk = IndependentFK(URDF_DIR / "arm6.urdf", arm6)
    rng = np.random.default_rng(2)
    iterations = [0, 0]
    for _ in range(30):
        seed = rng.uniform(wide.lower, wide.upper)
        frame = fk(dict(zip(wide.joint_names, seed)), "tool0")
        inside = point_ahead(frame, (0.0, 0.0, 1.0), 1.0) + 0.5 * math.tan(0.5 * cone) * frame[:3, 0]
        held = wide.solve(inside, seed=seed, timeout=0.1)
        assert held.success and np.array_equal(held.q, seed)
        point = rng.uniform(-1.0, 1.0, 3)
        answers = [solver.solve(point, seed=seed, timeout=0.2) for solver in (wide, narrow)]
        if not all(answer.success for answer in answers):
            continue
        angle = look_angle(fk(dict(zip(wide.joint_names, answers[0].q)), "tool0"), (0, 0, 1), point)
        assert angle <= cone + 1e-9
        iterations[0] += answers[0].iterations
        iterations[1] += answers[1].iterations
    assert 0 < iterations[0] < iterations[1], iterations


def test_a_gaze_beside_a_pose_task_and_a_gaze_left_out_holds_its_line_of_sight(mobile):
    """The head looks at a point while the arm's tool reaches a pose, both met by FK; a solve
    that leaves the head's target out moves the tool and keeps the head looking where it looked
    at the seed; ``solve_many`` takes points (N, 3) and meets each."""
    solver = IKSolver(
        mobile, "base_link", ["camera_link", "tool0"], tasks={"camera_link": TipTask("gaze", axis=(1, 0, 0))}
    )
    fk = IndependentFK(URDF_DIR / "mobile_manipulator.urdf", mobile)
    rng = np.random.default_rng(7)
    points, poses = [], []
    for _ in range(15):
        q = random_q(solver, rng)
        values = dict(zip(solver.joint_names, q))
        point = point_ahead(fk(values, "camera_link"), (1, 0, 0), rng.uniform(0.5, 2.0))
        pose = fk(values, "tool0")
        points.append(point)
        poses.append(pose)
        result = solver.solve({"camera_link": point, "tool0": pose}, timeout=0.2)
        assert result.success, result.reason
        reached = dict(zip(solver.joint_names, result.q))
        assert look_angle(fk(reached, "camera_link"), (1, 0, 0), point) <= ANGLE
        assert np.linalg.norm(fk(reached, "tool0")[:3, 3] - pose[:3, 3]) <= 1e-5
        seed = random_q(solver, rng)
        looked = fk(dict(zip(solver.joint_names, seed)), "camera_link")
        tool_only = solver.solve({"tool0": pose}, seed=seed, timeout=0.2)
        assert tool_only.success, tool_only.reason
        now = fk(dict(zip(solver.joint_names, tool_only.q)), "camera_link")
        assert np.allclose(now[:3, 0], looked[:3, 0], atol=1e-4)  # (the pan/tilt head: its axis held)
    batch = solver.solve_many({"camera_link": np.array(points), "tool0": np.array(poses)}, timeout=0.2)
    assert batch.success.all()
    for q, point in zip(batch.q, points):
        assert look_angle(fk(dict(zip(solver.joint_names, q)), "camera_link"), (1, 0, 0), point) <= ANGLE


def test_solve_all_of_a_gaze_returns_looks_found_by_restarts(arm6):
    """A gaze has no closed form (a manifold of answers, not a set): ``solve_all`` returns the
    distinct answers its restarts found (``complete=False``), each looking at the point by an
    independent FK, within the limits."""
    solver = IKSolver(arm6, "base_link", ["tool0"], tasks={"tool0": TipTask("gaze")})
    fk = IndependentFK(URDF_DIR / "arm6.urdf", arm6)
    point = np.array([0.5, 0.2, 0.3])
    found = solver.solve_all(point, timeout=0.02)
    assert found.success and not found.complete and len(found.q) > 1
    for q in found.q:
        assert within_limits(solver, q)
        assert look_angle(fk(dict(zip(solver.joint_names, q)), "tool0"), (0, 0, 1), point) <= ANGLE


def test_a_free_floating_humanoid_looks_at_a_point_standing_with_its_hands_placed():
    """The bundled humanoid, free-floating: feet and hands at poses and the head's x axis at a
    point, all from one random configuration (so every goal can be met), no seed (the base placed
    from the feet and hands: the gaze point is no place for the head): every goal met by
    pinocchio's FK with a free flyer, within the limits."""
    pin = pytest.importorskip("pinocchio")
    from test_whole_body import _Quiet, random_configuration, to_pinocchio

    urdf = URDF_DIR / "humanoid.urdf"
    with _Quiet():
        robot = load_robot(urdf, root_joint="floating")
    limbs = ["left_foot", "right_foot", "left_hand", "right_hand"]
    solver = IKSolver(
        robot, "world", limbs + ["head"], tasks={"head": TipTask("gaze", axis=(1, 0, 0))}, max_attempts=100
    )
    model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    data = model.createData()
    tree = solver.tree
    rng = np.random.default_rng(13)

    def frames(q):
        pin.framesForwardKinematics(model, data, to_pinocchio(model, tree, q))
        return {link: data.oMf[model.getFrameId(link)].homogeneous for link in limbs + ["head"]}

    for _ in range(20):
        q = random_configuration(tree, rng)
        q[:3] = (*rng.uniform(-1.0, 1.0, 2), rng.uniform(-0.1, 0.1))
        goals = frames(q)
        point = point_ahead(goals["head"], (1, 0, 0), rng.uniform(0.5, 3.0))
        result = solver.solve({**{limb: goals[limb] for limb in limbs}, "head": point}, timeout=None)
        assert result.success, result.reason
        assert within_limits(solver, result.q)
        reached = frames(result.q)
        assert look_angle(reached["head"], (1, 0, 0), point) <= ANGLE
        for limb in limbs:
            assert np.linalg.norm(reached[limb][:3, 3] - goals[limb][:3, 3]) <= 1e-5 * (1 + 1e-6)


@pytest.mark.parametrize(
    "task, words",
    [
        (dict(kind="gaze", axis=(0, 0, 0)), "a gaze axis must not be of zero length"),
        (dict(kind="gaze", axis=(1, 0)), "a gaze axis must be 3 finite numbers"),
        (dict(kind="gaze", axis=(1, math.nan, 0)), "a gaze axis must be 3 finite numbers"),
        (dict(kind="pose", axis=(0, 0, 1)), "a task axis is for gaze tasks"),
        (dict(kind="gaze", axes="base"), "a gaze task is in the tip's axes"),
        (dict(kind="gaze", bands=(0, 0, 0, 0.1, 0, 0)), "a gaze task takes no bands"),
    ],
)
def test_bad_gaze_tasks_are_refused_saying_what_is_wrong(task, words):
    with pytest.raises(IKNodeError, match=words.replace("(", r"\(")):
        TipTask(**task)


def test_bad_gaze_use_is_refused_naming_the_tip(arm6, mobile):
    """A target at the tip's own point (no direction to look in), a target of another shape, a
    cyclic-coordinate-descent solver (it turns joints toward poses) and a straight-line path:
    each refused with a clear error naming the tip."""
    look = TipTask("gaze", axis=(1, 0, 0))
    head = IKSolver(mobile, "base_link", ["camera_link"], tasks={"camera_link": look})
    own = head.tip_poses(head.rest_posture)[0][:3, 3]
    with pytest.raises(TargetError, match="gaze target for tip 'camera_link' is at the tip's own point"):
        head.solve(own)
    with pytest.raises(TargetError, match="target for gaze tip 'camera_link' must be a point x y z"):
        head.solve(np.zeros(2))
    with pytest.raises(TargetError, match="contains NaN"):
        head.solve(np.array([1.0, math.nan, 0.0]))
    both = IKSolver(mobile, "base_link", ["camera_link", "tool0"], tasks={"camera_link": look})
    with pytest.raises(TargetError, match="targets must be a mapping"):
        both.solve(np.array([1.0, 0.0, 1.0]))  # (whose point: the tips are two)
    with pytest.raises(IKNodeError, match="method 'ccd'.*gaze or relative tasks of tips \\['tool0'\\]"):
        IKSolver(arm6, "base_link", ["tool0"], tasks={"tool0": TipTask("gaze")}, method="ccd")
    arm = IKSolver(arm6, "base_link", ["tool0"], tasks={"tool0": TipTask("gaze")})
    with pytest.raises(IKNodeError, match="tips \\['tool0'\\] have gaze or relative tasks"):
        arm.cartesian_path([np.eye(4)])
