"""Property tests of the IK solver over seeded random targets on every bundled robot (and
example-robot-data's when installed): solutions checked by an independent forward kinematics,
joint limits for every method, the null-space projector, locked joints, position-only and masked
tasks, several tips, unreachable goals, determinism, solve types and clear errors on bad input."""

from __future__ import annotations

import functools
import warnings
import zlib

import numpy as np
import pytest
from transforms3d.axangles import axangle2mat, mat2axangle

from ik_node import load_robot
from ik_node.compiled.jit import JIT_ENABLED, SLOWDOWN_WITHOUT_NUMBA
from ik_node.description.catalogue import BUNDLED, RobotCase, example_robot_data_cases
from ik_node.errors import IKNodeError, TargetError, UnknownJointError, UnknownLinkError
from ik_node.solver import METHODS, IKSolver, TipTask

EXAMPLE_ROBOTS = example_robot_data_cases() or [
    pytest.param(None, marks=pytest.mark.skip(reason="example-robot-data is not installed"), id="erd")
]
CASES = [*BUNDLED, *EXAMPLE_ROBOTS]
BY_NAME = {case.name: case for case in BUNDLED}
SINGLE_TIP = [case for case in BUNDLED if len(case.tips) == 1] + EXAMPLE_ROBOTS

TOLERANCE = 1e-5  # the solver's default position [m] and orientation [rad] tolerance
SLACK = 1e-9  # rounding allowed between the solver's error and the independent one
FAR = 100.0  # m: beyond the reach of every robot here (the mobile base reaches ~22 m)


# ---------------------------------------------------------------- independent reference


@functools.cache
def robot_of(urdf: str):
    """The solver's model (example-robot-data URDFs warn about tags ik_node ignores)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_robot(urdf)


@functools.cache
def reference_of(urdf: str):
    """A separately loaded model whose ``Robot.forward`` (the whole-robot tree, not the solver's
    base-to-tips tree) is the reference FK."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_robot(urdf)


def reference_pose(case: RobotCase, solver: IKSolver, q, tip: str) -> np.ndarray:
    return reference_of(case.urdf).forward(dict(zip(solver.joint_names, q)), tip, case.base)


def rotation_angle(R: np.ndarray) -> float:
    """Angle [rad] of a rotation matrix; atan2 of its sine and cosine parts (accurate near 0)."""
    sine = 0.5 * np.linalg.norm((R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]))
    cosine = 0.5 * (np.trace(R) - 1.0)
    return float(np.arctan2(sine, cosine))


def pose_errors(pose: np.ndarray, target: np.ndarray) -> tuple[float, float]:
    """(|p - p_target| [m], angle of R^T R_target [rad])."""
    position = float(np.linalg.norm(pose[:3, 3] - target[:3, 3]))
    return position, rotation_angle(pose[:3, :3].T @ target[:3, :3])


def body_error(pose: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The 6-vector [R^T (p_target - p); rotation vector of R^T R_target] (tip-frame axes), the
    rotation vector from transforms3d."""
    rotation = pose[:3, :3]
    axis, angle = mat2axangle(rotation.T @ target[:3, :3], unit_thresh=1e-5)
    return np.concatenate((rotation.T @ (target[:3, 3] - pose[:3, 3]), np.asarray(axis) * angle))


def sampling_bounds(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The limits, continuous joints in [-pi, pi]."""
    return np.where(np.isfinite(lower), lower, -np.pi), np.where(np.isfinite(upper), upper, np.pi)


def random_configurations(solver: IKSolver, count: int, rng) -> np.ndarray:
    return rng.uniform(*sampling_bounds(solver.lower, solver.upper), size=(count, len(solver.joint_names)))


def random_rotation(rng) -> np.ndarray:
    """Uniform over SO(3) (a normalised Gaussian quaternion)."""
    w, x, y, z = (quaternion := rng.normal(size=4)) / np.linalg.norm(quaternion)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def random_direction(rng) -> np.ndarray:
    direction = rng.normal(size=3)
    return direction / np.linalg.norm(direction)


def rng_for(*keys) -> np.random.Generator:
    """A random stream keyed on the test's parameters (stable across runs and xdist workers)."""
    return np.random.default_rng(zlib.crc32(repr(keys).encode()))


def make_solver(case: RobotCase, **options) -> IKSolver:
    return IKSolver(robot_of(case.urdf), case.base, case.tips, **options)


def fk_targets(case: RobotCase, solver: IKSolver, q) -> dict:
    return {tip: reference_pose(case, solver, q, tip) for tip in case.tips}


def assert_valid(result, solver: IKSolver) -> None:
    """Finite, the right size, within the solver's limits exactly (no slack)."""
    q = np.asarray(result.q)
    assert q.shape == (len(solver.joint_names),)
    assert np.all(np.isfinite(q)), q
    below, above = q < solver.lower, q > solver.upper
    assert not (below.any() or above.any()), (
        f"joints outside limits: {[solver.joint_names[i] for i in np.flatnonzero(below | above)]}"
    )
    assert np.isfinite(result.position_error) and np.isfinite(result.orientation_error)
    assert result.reason in ("success", "unreachable", "timeout", "iterations", "joint_move")
    assert result.success == (result.reason == "success")


def assert_pose_solution(case, solver, result, targets, tolerance=TOLERANCE) -> None:
    """Every targeted tip within tolerance by the reference FK."""
    for tip, target in targets.items():
        position, orientation = pose_errors(reference_pose(case, solver, result.q, tip), target)
        assert position <= tolerance + SLACK, (tip, position)
        assert orientation <= tolerance + SLACK, (tip, orientation)


# ---------------------------------------------------------------- 1. random reachable targets

REACHABLE_TARGETS = 30
#: Time budgets scale with the kernels' speed: plain Python (the NUMBA_DISABLE_JIT run of the tests
#: marked plain_python) is this many times slower.
BUDGET_SCALE = 1 if JIT_ENABLED else SLOWDOWN_WITHOUT_NUMBA
REACHABLE_TIMEOUT = 0.1 * BUDGET_SCALE  # s; measured: 29-30 of 30 solved per robot (99-100% of 100 at 50 ms)
MIN_SUCCESS_RATE = 0.9


@pytest.mark.parametrize("case", CASES, ids=str)
def test_random_reachable_targets_are_solved_and_verified(case):
    """FK targets of random in-limit configurations, solved from the mid-limit seed: q always finite
    and within limits, a success is within tolerance by the reference FK, the reported errors are the
    reference's, and the success rate is high."""
    solver = make_solver(case)
    rng = rng_for("reachable", case.name)
    successes = 0
    for q in random_configurations(solver, REACHABLE_TARGETS, rng):
        targets = fk_targets(case, solver, q)
        result = solver.solve(targets, timeout=REACHABLE_TIMEOUT)
        assert_valid(result, solver)
        for tip, target in targets.items():
            errors = pose_errors(reference_pose(case, solver, result.q, tip), target)
            np.testing.assert_allclose(result.tip_errors[tip], errors, rtol=1e-6, atol=1e-9)
        if result.success:
            successes += 1
            assert_pose_solution(case, solver, result, targets)
    assert successes >= MIN_SUCCESS_RATE * REACHABLE_TARGETS, f"{successes}/{REACHABLE_TARGETS} solved"


@pytest.mark.plain_python
def test_single_tip_solver_accepts_a_bare_pose_and_a_mapping_seed():
    """A bare 4x4 target for a one-tip solver, and a {joint: value} seed (others at the rest)."""
    case = BY_NAME["arm7"]
    solver = make_solver(case)
    q = random_configurations(solver, 1, rng_for("bare"))[0]
    target = reference_pose(case, solver, q, "tool0")
    result = solver.solve(target, seed={"joint1": q[0], "joint4": q[3]}, timeout=REACHABLE_TIMEOUT)
    assert_valid(result, solver)
    assert result.success
    assert_pose_solution(case, solver, result, {"tool0": target})


@pytest.mark.plain_python
def test_seed_outside_limits_is_clipped_into_them():
    """A seed past the limits is clipped (README): a target at the clipped seed is met at once, there."""
    case = BY_NAME["arm7"]
    solver = make_solver(case)
    seed = solver.rest_posture.copy()
    seed[0], seed[3] = solver.upper[0] + 1.0, solver.lower[3] - 2.0
    clipped = np.clip(seed, solver.lower, solver.upper)
    target = reference_pose(case, solver, clipped, "tool0")
    result = solver.solve(target, seed=seed, timeout=REACHABLE_TIMEOUT)
    assert_valid(result, solver)
    assert result.success and result.iterations == 0
    np.testing.assert_array_equal(result.q, clipped)


# ---------------------------------------------------------------- 2. limits for every method


def tightened_limits(solver: IKSolver, rng) -> tuple[dict, dict]:
    """A random sub-interval of at least a quarter of each joint's range (continuous: of [-pi, pi])."""
    low, high = sampling_bounds(solver.lower, solver.upper)
    span = high - low
    width = rng.uniform(0.25, 0.75, size=span.shape) * span
    start = low + rng.uniform(0.0, 1.0, size=span.shape) * (span - width)
    names = solver.joint_names
    return dict(zip(names, start)), dict(zip(names, start + width))


LIMIT_VARIANTS = ("urdf", "tightened", "tightened_posture")


@pytest.mark.plain_python
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_method_returns_q_within_limits(case, method):
    """For each method, with the URDF limits, tightened lower/upper options (and a posture pull):
    q finite and within the solver's limits for random reachable targets, targets 10 m away and
    targets of configurations outside the tightened limits."""
    rng = rng_for("limits", case.name, method)
    urdf_solver = make_solver(case)
    for variant in LIMIT_VARIANTS:
        options = {"method": method}
        if variant != "urdf":
            options["lower"], options["upper"] = tightened_limits(urdf_solver, rng)
        if variant == "tightened_posture":
            options["posture_gain"] = 0.5
        solver = make_solver(case, **options)
        if variant != "urdf":  # the options tighten: the solver's limits are the given ones
            np.testing.assert_array_equal(solver.lower, [options["lower"][n] for n in solver.joint_names])
            np.testing.assert_array_equal(solver.upper, [options["upper"][n] for n in solver.joint_names])
        configurations = random_configurations(urdf_solver, 4, rng)
        for index, q in enumerate(configurations):
            targets = fk_targets(case, solver, q)
            if index >= 2:  # one tip 10 m away
                tip = case.tips[index % len(case.tips)]
                targets[tip] = targets[tip].copy()
                targets[tip][:3, 3] += 10.0 * random_direction(rng)
            seed = random_configurations(urdf_solver, 1, rng)[0]  # often outside tightened limits
            result = solver.solve(targets, seed=seed, timeout=0.01)
            assert_valid(result, solver)
            if result.success:
                assert_pose_solution(case, solver, result, targets)


# ---------------------------------------------------------------- 3. null space


NULL_SPACE_SAMPLES = 20


def task_jacobian(solver: IKSolver, q, kind: str) -> np.ndarray:
    """The stacked body Jacobian the solver inverts (body-frame errors, unit task weights)."""
    return solver.tree.jacobian(q, frame="body", tasks={tip: kind for tip in solver.tip_links})


def tip_motion(case, solver, q, step, kind: str) -> float:
    """How far the controlled part of the tips moves under ``step`` (reference FK): position [m]
    plus rotation angle [rad] for 'pose', position only for 'position'."""
    total = 0.0
    for tip in case.tips:
        position, angle = pose_errors(
            reference_pose(case, solver, q, tip), reference_pose(case, solver, q + step, tip)
        )
        total += position + (angle if kind == "pose" else 0.0)
    return total


@pytest.mark.plain_python
@pytest.mark.parametrize("kind", ["pose", "position"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_null_space_motion_leaves_the_task_unchanged(case, kind):
    """J (I - J^+ J) z = 0 for random q, z and joint weights (also batched), and a small step along
    it moves the controlled tip coordinates only to second order (O(eps^2), checked by FK)."""
    solver = make_solver(case, tasks={tip: kind for tip in case.tips})
    rng = rng_for("null space", case.name, kind)
    configurations = random_configurations(solver, NULL_SPACE_SAMPLES, rng)
    motions = rng.normal(size=configurations.shape)
    weights = rng.uniform(0.2, 2.0, size=configurations.shape)
    jacobians = np.array([task_jacobian(solver, q, kind) for q in configurations])
    rows, dof = jacobians.shape[1:]
    batched = solver.null_space_motion(jacobians, motions, weights)
    for J, q, z, w, projected in zip(jacobians, configurations, motions, weights, batched):
        for motion in (solver.null_space_motion(J, z, w), solver.null_space_motion(J, z)):
            assert np.linalg.norm(J @ motion) <= 1e-7 * np.linalg.norm(J) * np.linalg.norm(z)
        np.testing.assert_allclose(projected, solver.null_space_motion(J, z, w), atol=1e-12)
        if dof <= rows:
            continue  # no null space to move in (checked above: the projection is ~0)
        direction = solver.null_space_motion(J, z, w)
        assert np.linalg.norm(direction) > 1e-6 * np.linalg.norm(z)  # a real null-space motion
        direction /= np.linalg.norm(direction)
        for eps in (1e-3, 1e-4):
            moved = tip_motion(case, solver, q, eps * direction, kind)
            assert moved <= 20.0 * eps**2, (eps, moved)
        # Contrast: a generic unit step moves the task to first order.
        generic = rng.normal(size=dof)
        generic /= np.linalg.norm(generic)
        assert tip_motion(case, solver, q, 1e-4 * generic, kind) > 1e-3 * 1e-4


# ---------------------------------------------------------------- 4. locked joints


@pytest.mark.plain_python
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", BUNDLED, ids=str)
def test_zero_weight_joints_stay_at_the_seed(case, method):
    """joint_weights 0 locks a joint: it equals the (in-limit) seed exactly in every result, success
    or not, for targets reachable with the locks, random targets and targets 10 m away."""
    rng = rng_for("locked", case.name, method)
    names = make_solver(case).joint_names
    locked = rng.permutation(len(names))[: max(1, len(names) // 3)]
    weights = {name: (0.0 if index in locked else rng.uniform(0.5, 2.0)) for index, name in enumerate(names)}
    solver = make_solver(case, method=method, joint_weights=weights, posture_gain=0.2)
    for index in range(4):
        seed = random_configurations(solver, 1, rng)[0]
        q = random_configurations(solver, 1, rng)[0]
        if index < 2:
            q[locked] = seed[locked]  # reachable with the locks
        targets = fk_targets(case, solver, q)
        if index == 3:
            targets[case.tips[0]][:3, 3] += 10.0 * random_direction(rng)
        result = solver.solve(targets, seed=seed, timeout=0.01)
        assert_valid(result, solver)
        np.testing.assert_array_equal(result.q[locked], seed[locked])


# ---------------------------------------------------------------- 5. position-only tasks


@pytest.mark.parametrize("case", CASES, ids=str)
def test_position_only_task_ignores_orientation(case):
    """tasks={tip: 'position'}: targets with random orientations are solved, the position within
    tolerance by the reference FK, however far the orientation is from the target's."""
    solver = make_solver(case, tasks={tip: "position" for tip in case.tips})
    rng = rng_for("position", case.name)
    count, successes, orientation_misses = 20, 0, []
    for q in random_configurations(solver, count, rng):
        targets = fk_targets(case, solver, q)
        for target in targets.values():
            target[:3, :3] = random_rotation(rng)
        result = solver.solve(targets, timeout=REACHABLE_TIMEOUT)
        assert_valid(result, solver)
        assert result.orientation_error == 0.0  # not controlled, not reported
        if result.success:
            successes += 1
            for tip, target in targets.items():
                position, angle = pose_errors(reference_pose(case, solver, result.q, tip), target)
                assert position <= TOLERANCE + SLACK
                orientation_misses.append(angle)
    assert successes >= MIN_SUCCESS_RATE * count, f"{successes}/{count} solved"
    assert np.median(orientation_misses) > 0.1  # success although the orientation is way off


# ---------------------------------------------------------------- 6. several tips


def test_dual_arm_both_tips_reachable():
    """Both arms' targets from one random configuration: solved, each tip within tolerance by the
    reference FK and tip_errors equal to the reference's."""
    case = BY_NAME["dual_arm"]
    solver = make_solver(case)
    rng = rng_for("dual both")
    count, successes = 15, 0
    for q in random_configurations(solver, count, rng):
        targets = fk_targets(case, solver, q)
        result = solver.solve(targets, seed=random_configurations(solver, 1, rng)[0], timeout=0.1)
        assert_valid(result, solver)
        assert set(result.tip_errors) == set(case.tips)
        if result.success:
            successes += 1
            assert_pose_solution(case, solver, result, targets)
    assert successes >= 0.8 * count, f"{successes}/{count} solved"


def far_right_targets(case, solver, rng, distance=10.0):
    q = random_configurations(solver, 1, rng)[0]
    targets = fk_targets(case, solver, q)
    targets["right_tool0"][:3, 3] += distance * random_direction(rng)
    return targets


def test_dual_arm_one_tip_unreachable_is_a_clean_miss():
    """Right tip 10 m away: success False, reason 'unreachable', q finite and within limits, and the
    reported per-tip errors are the reference FK's (the far tip's is metres)."""
    case = BY_NAME["dual_arm"]
    solver = make_solver(case)
    rng = rng_for("dual far")
    for _ in range(5):
        targets = far_right_targets(case, solver, rng)
        result = solver.solve(targets, timeout=0.02)
        assert_valid(result, solver)
        assert not result.success and result.reason == "unreachable"
        for tip, target in targets.items():
            errors = pose_errors(reference_pose(case, solver, result.q, tip), target)
            np.testing.assert_allclose(result.tip_errors[tip], errors, rtol=1e-6, atol=1e-9)
        assert result.tip_errors["right_tool0"][0] > 8.0
        assert result.position_error == result.tip_errors["right_tool0"][0]


@pytest.mark.plain_python
def test_dual_arm_reachable_tip_is_met_when_the_other_is_not():
    """A tip whose target is out of reach does not keep the other from its goal: the reachable
    tip is met within tolerance (by an independent FK) in every one of 10 random cases. Bounded by
    attempts, not time, so that a loaded machine cannot cut the search short."""
    case = BY_NAME["dual_arm"]
    solver = make_solver(case, max_attempts=64)
    rng = rng_for("dual met")
    misses = []
    for _ in range(10):
        targets = far_right_targets(case, solver, rng)
        result = solver.solve(targets, timeout=None)
        assert not result.success and result.reason == "unreachable"
        left = reference_pose(case, solver, result.q, "left_tool0")
        misses.append(max(pose_errors(left, targets["left_tool0"])))
    assert max(misses) <= 1e-5 + 1e-9, misses


def test_tips_without_target_are_held_at_their_seed_pose():
    """solve() with only the left tip's target: the right tip stays where it is at the seed."""
    case = BY_NAME["dual_arm"]
    solver = make_solver(case)
    rng = rng_for("held")
    count, successes = 10, 0
    for q in random_configurations(solver, count, rng):
        seed = q.copy()
        left_arm = [i for i, name in enumerate(solver.joint_names) if name.startswith("left_")]
        seed[left_arm] = random_configurations(solver, 1, rng)[0][left_arm]  # the left arm elsewhere
        left = reference_pose(case, solver, q, "left_tool0")
        result = solver.solve({"left_tool0": left}, seed=seed, timeout=0.1)
        assert_valid(result, solver)
        if result.success:
            successes += 1
            assert_pose_solution(
                case,
                solver,
                result,
                {"left_tool0": left, "right_tool0": reference_pose(case, solver, seed, "right_tool0")},
            )
    assert successes >= 0.8 * count, f"{successes}/{count} solved"


# ---------------------------------------------------------------- 7. unreachable goals


@pytest.mark.parametrize("case", CASES, ids=str)
def test_far_target_is_unreachable_not_an_error(case):
    """A tip 100 m away: success False, reason 'unreachable', q finite and within limits."""
    solver = make_solver(case)
    rng = rng_for("far", case.name)
    for index in range(3):
        q = random_configurations(solver, 1, rng)[0]
        targets = fk_targets(case, solver, q)
        tip = case.tips[index % len(case.tips)]
        targets[tip][:3, 3] += FAR * random_direction(rng)
        result = solver.solve(targets, timeout=0.01)
        assert_valid(result, solver)
        assert not result.success and result.reason == "unreachable"
        assert result.position_error > FAR / 2


@pytest.mark.parametrize("method", METHODS)
def test_missed_goal_reason_is_one_of_the_documented(method):
    """Budgets too small to converge (one iteration of one attempt; 2 ms): q finite and within
    limits, success consistent with a documented reason."""
    case = BY_NAME["arm6"]
    rng = rng_for("miss", method)
    for options, timeout in (({"max_iterations": 1, "max_attempts": 1}, None), ({}, 0.002)):
        solver = make_solver(case, method=method, **options)
        for q in random_configurations(solver, 3, rng):
            targets = fk_targets(case, solver, q)
            result = solver.solve(targets, timeout=timeout)
            assert_valid(result, solver)
            if timeout is None:  # no deadline: the budget that ran out is the iterations
                assert result.reason != "timeout"


# ---------------------------------------------------------------- 8. determinism


@pytest.mark.plain_python
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", [BY_NAME["arm7"], BY_NAME["dual_arm"]], ids=str)
def test_fixed_random_seed_without_timeout_is_deterministic(case, method):
    """timeout=None with max_attempts and one random_seed: identical q (and result fields) from two
    solver instances and repeated calls, for reachable and unreachable targets."""
    options = {"method": method, "random_seed": 7, "max_attempts": 6, "max_iterations": 30}
    if method == "ccd":  # a sweep per joint: keep the deterministic budget small
        options.update(max_attempts=3, max_iterations=15)
    first, second = make_solver(case, **options), make_solver(case, **options)
    rng = rng_for("determinism", case.name, method)
    for index, q in enumerate(random_configurations(first, 3, rng)):
        targets = fk_targets(case, first, q)
        if index == 2:
            targets[case.tips[0]][:3, 3] += 10.0 * random_direction(rng)
        results = [first.solve(targets, timeout=None), second.solve(targets, timeout=None)]
        results.append(first.solve(targets, timeout=None))
        for result in results:
            assert_valid(result, first)
        for other in results[1:]:
            np.testing.assert_array_equal(other.q, results[0].q)
            assert (other.success, other.reason, other.attempts, other.iterations) == (
                results[0].success,
                results[0].reason,
                results[0].attempts,
                results[0].iterations,
            )


# ---------------------------------------------------------------- 8b. the seed table

SEED_TABLE_TARGETS = 40


def solved_with_and_without_table(case, key: str, **options) -> dict:
    """FK targets solved with the default seed table (2048) and with none (0), same targets and
    options (deterministic: no timeout); every result valid, every success checked by the
    reference FK."""
    solved = {}
    for size in (2048, 0):
        solver = make_solver(case, seed_table_size=size, **options)
        rng = rng_for(key, case.name)
        solved[size] = 0
        for q in random_configurations(solver, SEED_TABLE_TARGETS, rng):
            targets = fk_targets(case, solver, q)
            result = solver.solve(targets, timeout=None)
            assert_valid(result, solver)
            if result.success:
                assert_pose_solution(case, solver, result, targets)
                solved[size] += 1
    return solved


def test_seed_table_restarts_solve_more_within_the_same_attempts():
    """Restarts from the seed-table entries whose tip poses lie nearest the goal beat random ones:
    on the two-arm tree (13 joints, both tips), with the attempts bounded, more FK targets are
    solved."""
    solved = solved_with_and_without_table(
        BY_NAME["dual_arm"], "seed table", max_attempts=17, max_iterations=12
    )
    # measured: 38 of 40 with the table, 31 without
    assert solved[2048] >= solved[0] + 4, solved


def test_one_tip_first_attempt_starts_at_the_nearest_table_entry_when_the_seed_is_far():
    """For one tip and a goal far from the seed, the first attempt starts at the table entry
    nearest the goal: on arm6 more FK targets are solved by the first attempt alone than from the
    mid-limit seed."""
    solved = solved_with_and_without_table(BY_NAME["arm6"], "first attempt", max_attempts=1, max_iterations=8)
    # measured: 25 of 40 from the nearest entry, 16 from the seed
    assert solved[2048] >= solved[0] + 5, solved


def test_goal_near_the_seed_is_first_attempted_from_the_seed():
    """Tracking: for a goal moved 1 cm / 1 degree from the seed's pose the first attempt starts at
    the seed, as with no table at all (identical q and iterations with one attempt)."""
    case = BY_NAME["arm7"]
    with_table = make_solver(case, max_attempts=1)
    without = make_solver(case, max_attempts=1, seed_table_size=0)
    rng = rng_for("tracking", case.name)
    solved = 0
    for q in random_configurations(with_table, 10, rng):
        nudge = rigid(axangle2mat(random_direction(rng), np.radians(1.0)), 0.01 * random_direction(rng))
        goal = {"tool0": with_table.tree.forward(q, "tool0") @ nudge}
        first = with_table.solve(goal, seed=q, timeout=None)
        second = without.solve(goal, seed=q, timeout=None)
        np.testing.assert_array_equal(first.q, second.q)
        assert (first.iterations, first.success) == (second.iterations, second.success)
        solved += first.success
    assert solved >= 8, solved


def test_seed_table_lies_within_the_limits_and_follows_the_random_seed():
    """The table is sampled at construction within the solver's (tightened) limits, the same for
    the same random_seed and different for another."""
    case = BY_NAME["arm7"]
    solver = make_solver(case, upper={"joint2": 0.5}, seed_table_size=256)
    q = solver.seed_table.q
    assert q.shape == (256, len(solver.joint_names))
    assert np.all(q >= solver.lower) and np.all(q <= solver.upper)
    assert q[:, solver.joint_names.index("joint2")].max() <= 0.5
    same = make_solver(case, upper={"joint2": 0.5}, seed_table_size=256)
    other = make_solver(case, upper={"joint2": 0.5}, seed_table_size=256, random_seed=1)
    np.testing.assert_array_equal(same.seed_table.q, q)
    assert not np.array_equal(other.seed_table.q, q)
    # the spacing gate: the median distance from the first 64 entries (in sampling order; the
    # table stores them cell by cell) to their nearest neighbour
    table = solver.seed_table
    assert sorted(table.sampled) == list(range(256))
    features = table.features[np.argsort(table.sampled)]
    distance = np.linalg.norm(features[:64, None] - features[None], axis=-1)
    distance[np.arange(64), np.arange(64)] = np.inf
    assert solver.seed_table.spacing == pytest.approx(np.median(distance.min(axis=1)), rel=1e-9)
    # a locked joint: the table's poses would not hold at the seed, so none is sampled
    locked = make_solver(case, joint_weights={"joint3": 0.0}, seed_table_size=256)
    assert len(locked.seed_table) == 0


def test_seed_table_index_holds_every_entry_and_finds_near_ones_through_the_nearest_cells():
    """The table's index (k-d tree leaves as cells, searched through the cells whose centroids
    lie nearest): every entry in exactly one cell of at most CELL_ENTRIES, stored cell by cell
    with its features, centroids the cells' means, the kernels' blocked layout equal to the
    features; ``probe_table`` probes the PROBED_CELLS cells with the nearest centroids (numpy)
    and returns the nearest entry among theirs; over random goals that entry is the table's
    nearest of all for most goals (an approximate search) and never much farther."""
    from ik_node.solver import kernels
    from ik_node.solver.options import SEED_TABLE_ONE_TIP
    from ik_node.solver.seed_table import CELL_ENTRIES

    solver = make_solver(BY_NAME["arm7"])
    table = solver.seed_table
    size, starts = len(table.q), table.cell_starts
    assert size == SEED_TABLE_ONE_TIP and starts[0] == 0 and starts[-1] == size
    cells = np.diff(starts)
    assert np.all(cells >= CELL_ENTRIES // 2) and np.all(cells <= CELL_ENTRIES)
    assert sorted(table.sampled) == list(range(size))
    np.testing.assert_allclose(table.features, solver.problem.features_of(table.q), atol=1e-12)
    for cell, (start, stop) in enumerate(zip(starts[:-1], starts[1:])):
        np.testing.assert_allclose(table.centroids[cell], table.features[start:stop].mean(axis=0), atol=1e-12)
        block = table.blocked_features[start * 12 : stop * 12].reshape(12, stop - start)
        np.testing.assert_allclose(block, table.features[start:stop].T, rtol=1e-6, atol=1e-6)
    rng = np.random.default_rng(11)
    goals = solver.problem.features_of(rng.uniform(solver.lower, solver.upper, (300, 7)))
    cell_distances, distances = np.empty(len(cells)), np.empty(kernels.PROBED_CELLS * cells.max())
    probed, probed_distance = np.empty(kernels.PROBED_CELLS, dtype=np.int64), np.empty(kernels.PROBED_CELLS)
    exact_found, ratios = 0, []
    for goal in goals:
        found, found_distance, count = kernels.probe_table(
            solver.core.arguments.table, goal, cell_distances, probed, probed_distance, distances
        )
        nearest_cells = np.argsort(np.sum((table.centroids - goal) ** 2, axis=1))[: kernels.PROBED_CELLS]
        assert count == kernels.PROBED_CELLS and set(probed) == set(nearest_cells)
        everything = np.sum((table.features - goal) ** 2, axis=1)
        candidates = np.concatenate([np.arange(starts[c], starts[c + 1]) for c in probed])
        assert found == candidates[np.argmin(everything[candidates])]
        assert found_distance == pytest.approx(everything[found], rel=1e-5)
        chosen, chosen_distance = np.empty(64, dtype=np.int64), np.empty(64)
        bundle = solver.core.arguments.table
        ranked = kernels.rank_probed(bundle, probed, count, distances, chosen, chosen_distance)
        expected = candidates[np.argsort(everything[candidates], kind="stable")[:64]]
        assert ranked == 64 and len(set(chosen) & set(expected)) >= 60  # (single-precision ties)
        exact_found += found == np.argmin(everything)
        ratios.append(np.sqrt(everything[found] / everything.min()))
    assert exact_found >= 0.75 * len(goals), exact_found
    assert np.percentile(ratios, 95) < 1.5, np.percentile(ratios, 95)


def test_task_priority_table_is_the_parents_restricted_to_the_reachable_tips():
    """The search for the reachable tips (task priority) takes the parent's table: the same
    configurations, and features equal to those its own problem computes from its FK there."""
    case = BY_NAME["dual_arm"]
    parent = make_solver(case, seed_table_size=256)
    for tips in (("left_tool0",), ("right_tool0",)):
        problem, table, _, _ = parent.core.priority.problems(tips)
        by_sample = parent.seed_table.q[np.argsort(parent.seed_table.sampled)]
        np.testing.assert_array_equal(table.q, by_sample[table.sampled])
        np.testing.assert_allclose(table.features, problem.features_of(table.q), atol=1e-12)
        assert table.features.shape == (256, 12) and np.isfinite(table.spacing)


# ---------------------------------------------------------------- 9. bad input


def rigid(rotation=None, translation=(0.3, 0.1, 0.5)) -> np.ndarray:
    pose = np.eye(4)
    if rotation is not None:
        pose[:3, :3] = rotation
    pose[:3, 3] = translation
    return pose


def solve_with(target=None, seed=None, timeout=0.005, tips=None, **options):
    case = BY_NAME["arm7"] if tips is None else BY_NAME["dual_arm"]
    solver = make_solver(case, **options)
    targets = {"tool0": rigid()} if target is None else target
    return solver.solve(targets, seed=seed, timeout=timeout)


NAN_POSE = rigid(translation=(np.nan, 0.0, 0.0))
INF_POSE = rigid(rotation=[[1, 0, 0], [0, 1, 0], [0, 0, np.inf]])
SCALED = rigid(rotation=np.diag([1.0, 1.0, 1.001]))
SHEARED = rigid(rotation=[[1, 0.01, 0], [0, 1, 0], [0, 0, 1]])
REFLECTION = rigid(rotation=np.diag([1.0, 1.0, -1.0]))
BAD_LAST_ROW = rigid()
BAD_LAST_ROW[3, 0] = 0.1

BAD_INPUTS = {
    "nan_target": (lambda: solve_with({"tool0": NAN_POSE}), TargetError, "NaN"),
    "negative_max_joint_move": (lambda: solve_with(max_joint_move=-0.1), IKNodeError, "max_joint_move"),
    "inf_target": (lambda: solve_with({"tool0": INF_POSE}), TargetError, "infinity"),
    "scaled_rotation": (lambda: solve_with({"tool0": SCALED}), TargetError, "orthonormal"),
    "sheared_rotation": (lambda: solve_with({"tool0": SHEARED}), TargetError, "orthonormal"),
    "reflection": (lambda: solve_with({"tool0": REFLECTION}), TargetError, "determinant"),
    "last_row": (lambda: solve_with({"tool0": BAD_LAST_ROW}), TargetError, "0 0 0 1"),
    "target_shape": (lambda: solve_with({"tool0": np.eye(3)}), TargetError, "4x4"),
    # a bare 4x4 array: checked by the search itself (TARGET_NOT_USABLE), then named in Python
    "bare_nan_target": (lambda: solve_with(NAN_POSE), TargetError, "NaN"),
    "bare_far_target": (lambda: solve_with(rigid(translation=(2e9, 0.0, 0.0))), TargetError, "refused"),
    "bare_sheared_rotation": (lambda: solve_with(SHEARED), TargetError, "orthonormal"),
    "bare_last_row": (lambda: solve_with(BAD_LAST_ROW), TargetError, "0 0 0 1"),
    "bare_target_shape": (lambda: solve_with(np.eye(3)), TargetError, "4x4"),
    "bare_integer_reflection": (lambda: solve_with(REFLECTION.astype(int)), TargetError, "determinant"),
    "unknown_target_tip": (lambda: solve_with({"tool9": rigid()}), UnknownLinkError, "tool9"),
    "bare_pose_for_two_tips": (lambda: solve_with(rigid(), tips="two"), TargetError, "mapping"),
    "unknown_solver_tip": (
        lambda: IKSolver(robot_of(BY_NAME["arm7"].urdf), "base_link", ["tool9"]),
        UnknownLinkError,
        "tool9",
    ),
    "unknown_task_tip": (lambda: solve_with(tasks={"tool9": "pose"}), UnknownLinkError, "tool9"),
    "unknown_task_kind": (lambda: solve_with(tasks={"tool0": "wrench"}), ValueError, "wrench"),
    "empty_task_mask": (lambda: solve_with(tasks={"tool0": (0, 0, 0, 0, 0, 0)}), ValueError, "mask"),
    "seed_length": (lambda: solve_with(seed=np.zeros(3)), TargetError, "seed has 3 values"),
    "seed_nan": (lambda: solve_with(seed=[0, 0, 0, -1, 0, np.nan, 0]), TargetError, "NaN"),
    "seed_unknown_joint": (lambda: solve_with(seed={"elbow9": 0.0}), UnknownJointError, "elbow9"),
    "unknown_method": (lambda: solve_with(method="newton"), IKNodeError, "newton"),
    "unknown_solve_type": (lambda: solve_with(solve_type="fastest"), IKNodeError, "fastest"),
    "negative_joint_weight": (lambda: solve_with(joint_weights={"joint2": -1.0}), IKNodeError, ">= 0"),
    "joint_weights_length": (lambda: solve_with(joint_weights=[1.0, 2.0]), IKNodeError, "7 values"),
    "unknown_weight_joint": (lambda: solve_with(joint_weights={"elbow9": 1.0}), UnknownJointError, "elbow9"),
    "negative_task_weight": (lambda: TipTask("pose", weight=-1.0), IKNodeError, "weight"),
    "zero_tolerance": (lambda: TipTask("pose", position_tolerance=0.0), IKNodeError, "tolerance"),
    "posture_gain": (lambda: solve_with(posture_gain=1.5), IKNodeError, "posture_gain"),
    "crossed_limits": (
        lambda: solve_with(lower={"joint1": 1.0}, upper={"joint1": 0.5}),
        IKNodeError,
        "joint1",
    ),
    "nan_limit": (lambda: solve_with(lower={"joint1": np.nan}), IKNodeError, "joint1"),
    "unknown_limit_joint": (lambda: solve_with(upper={"elbow9": 1.0}), UnknownJointError, "elbow9"),
    "no_timeout_no_attempts": (lambda: solve_with(timeout=None), IKNodeError, "max_attempts"),
    "negative_timeout": (lambda: solve_with(timeout=-1.0), IKNodeError, "timeout"),
    "nan_timeout": (lambda: solve_with(timeout=np.nan), IKNodeError, "timeout"),
    "zero_max_iterations": (lambda: solve_with(max_iterations=0), IKNodeError, "max_iterations"),
    "unknown_option": (lambda: solve_with(batch_size=16), IKNodeError, "batch_size"),
    "zero_table_size": (lambda: solve_with(seed_table_size=-1), IKNodeError, "seed_table_size"),
    "negative_seed_table_size": (lambda: solve_with(seed_table_size=-1), IKNodeError, "seed_table_size"),
}


@pytest.mark.plain_python
@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_bad_input_raises_a_clear_error(name):
    """Bad targets, seeds and options raise the documented ValueError subclass naming the problem."""
    call, error, fragment = BAD_INPUTS[name]
    with pytest.raises(error) as raised:
        call()
    assert isinstance(raised.value, ValueError)
    assert fragment.lower() in str(raised.value).lower(), str(raised.value)


# ---------------------------------------------------------------- 10. solve types


def weighted_distance(solver: IKSolver, q, seed) -> float:
    """The distance solve type's metric: the step's weighted norm, sum (q - seed)^2 / w over the
    joints that move (w > 0)."""
    moving = solver.joint_weights > 0
    return float(np.sum((np.asarray(q) - seed)[moving] ** 2 / solver.joint_weights[moving]))


def manipulability(solver: IKSolver, q) -> float:
    J = task_jacobian(solver, q, "pose")
    return float(np.sqrt(max(np.linalg.det(J @ J.T), 0.0)))


@pytest.mark.parametrize("case", [BY_NAME[name] for name in ("arm6", "arm7", "mobile_manipulator")], ids=str)
def test_distance_and_manipulability_improve_on_speed(case):
    """Same deterministic budget and random_seed: 'distance' is at least as close to the seed as
    'speed', 'manipulability' at least as manipulable; all within tolerance by the reference FK."""
    options = {"random_seed": 3, "max_attempts": 12, "max_iterations": 60}
    solvers = {kind: make_solver(case, solve_type=kind, **options) for kind in ("speed", "distance")}
    solvers["manipulability"] = make_solver(case, solve_type="manipulability", **options)
    rng = rng_for("solve types", case.name)
    compared = 0
    for q in random_configurations(solvers["speed"], 6, rng):
        targets = fk_targets(case, solvers["speed"], q)
        seed = random_configurations(solvers["speed"], 1, rng)[0]
        results = {kind: solver.solve(targets, seed=seed, timeout=None) for kind, solver in solvers.items()}
        for kind, result in results.items():
            assert_valid(result, solvers[kind])
            if result.success:
                assert_pose_solution(case, solvers[kind], result, targets)
        if all(result.success for result in results.values()):
            compared += 1
            speed = results["speed"].q
            assert weighted_distance(solvers["distance"], results["distance"].q, seed) <= (
                weighted_distance(solvers["speed"], speed, seed) + 1e-12
            )
            assert manipulability(solvers["speed"], results["manipulability"].q) >= (
                manipulability(solvers["speed"], speed) - 1e-12
            )
    assert compared >= 4


NEARBY_SEEDS = 10


@pytest.mark.parametrize("case", SINGLE_TIP, ids=str)
def test_distance_resolve_from_a_nearby_seed_stays_near_it(case):
    """Tracking: target moved <= 5 mm and <= 0.5 deg from the pose at the seed; 'distance' (8
    attempts, deterministic) solves most within tolerance, never farther from the seed than 'speed',
    typically within 0.1 rad (median) and mostly within 0.5 rad (near-singular seeds may jump)."""
    options = {"random_seed": 1, "max_attempts": 8}
    solver = make_solver(case, solve_type="distance", **options)
    speed = make_solver(case, solve_type="speed", **options)
    rng = rng_for("nearby", case.name)
    distances = []
    for seed in random_configurations(solver, NEARBY_SEEDS, rng):
        target = reference_pose(case, solver, seed, case.tips[0])
        angle = np.radians(rng.uniform(0.0, 0.5))
        target[:3, :3] = target[:3, :3] @ axangle2mat(random_direction(rng), angle)
        target[:3, 3] += rng.uniform(0.0, 0.005) * random_direction(rng)
        result = solver.solve(target, seed=seed, timeout=None)
        assert_valid(result, solver)
        if not result.success:
            continue
        assert_pose_solution(case, solver, result, {case.tips[0]: target})
        distances.append(np.linalg.norm(result.q - seed))
        fast = speed.solve(target, seed=seed, timeout=None)
        if fast.success:  # (an answer within the tolerance lies up to ~1e-5 from an exact one,
            # which on a closed-form chain 'distance' returns: their distances differ by that much)
            assert weighted_distance(solver, result.q, seed) <= weighted_distance(speed, fast.q, seed) + 1e-4
    distances = np.array(distances)
    assert len(distances) >= 0.8 * NEARBY_SEEDS
    assert np.median(distances) < 0.1, np.round(distances, 3)
    assert np.mean(distances < 0.5) >= 0.8, np.round(distances, 3)


# ---------------------------------------------------------------- 11. per-axis masks


MASKS = [(1, 1, 1, 0, 0, 1), (1, 0, 1, 1, 1, 0)]


@pytest.mark.parametrize("mask", MASKS, ids=lambda mask: "".join(map(str, mask)))
@pytest.mark.parametrize("case", SINGLE_TIP, ids=str)
def test_masked_task_success_meets_the_selected_axes(case, mask):
    """A 6-axis mask over the tip-frame error [v; w]: on success the selected components of the
    reference error are within tolerance (the others are free); most random targets are solved."""
    tip = case.tips[0]
    solver = make_solver(case, tasks={tip: mask})
    rng = rng_for("mask", case.name, mask)
    selected = np.flatnonzero(mask)
    linear, angular = selected[selected < 3], selected[selected >= 3]
    count, successes = 15, 0
    for q in random_configurations(solver, count, rng):
        target = reference_pose(case, solver, q, tip)
        target[:3, :3] = target[:3, :3] @ random_rotation(rng)  # unselected rotation axes free
        result = solver.solve({tip: target}, timeout=REACHABLE_TIMEOUT)
        assert_valid(result, solver)
        if result.success:
            successes += 1
            error = body_error(reference_pose(case, solver, result.q, tip), target)
            assert np.linalg.norm(error[linear]) <= TOLERANCE + SLACK, error
            assert np.linalg.norm(error[angular]) <= TOLERANCE + SLACK, error
    assert successes >= 0.8 * count, f"{successes}/{count} solved"


# ---------------------------------------------------------------- found bugs


DEFAULT_SEED_OUTSIDE_LIMITS = {
    "arm7_rest_posture": ("arm7", {"rest_posture": {"joint1": 5.0}}),  # upper limit 2.8973
    "continuous_lower_bound": ("mobile_manipulator", {"lower": {"arm_joint4": 0.5}}),  # rest: 0
}


@pytest.mark.parametrize("name", list(DEFAULT_SEED_OUTSIDE_LIMITS))
def test_default_seed_outside_limits_still_gives_q_within_them(name):
    """q within limits when the default seed (the rest posture) lies outside them: the solver clips
    the rest posture into the limits (it is also the default seed) and solves for the pose there."""
    robot_name, options = DEFAULT_SEED_OUTSIDE_LIMITS[name]
    case = BY_NAME[robot_name]
    solver = IKSolver(robot_of(case.urdf), case.base, case.tips, **options)
    assert np.all(solver.rest_posture >= solver.lower) and np.all(solver.rest_posture <= solver.upper)
    (joint,) = next(iter(options.values()))  # the joint whose rest or bound was given outside
    index = solver.joint_names.index(joint)
    assert solver.rest_posture[index] in (solver.lower[index], solver.upper[index])  # clipped to a bound
    target = reference_pose(case, solver, solver.rest_posture, case.tips[0])
    assert_valid(solver.solve(target, timeout=0.05), solver)


@pytest.mark.parametrize(
    "bound", [{"lower": {"arm_joint4": 4.0}}, {"upper": {"arm_joint4": -4.0}}], ids=["lower_4", "upper_-4"]
)
def test_one_sided_bound_beyond_pi_on_a_continuous_joint(bound):
    """A bound beyond pi on one side of a continuous joint is accepted as given (the joint then
    lives on [4, inf) or (-inf, -4] rad): goals reached with the joint past the bound are solved
    within it, and a far target (restarts needed) from an in-limit seed is a clean miss within
    the limits."""
    case = BY_NAME["mobile_manipulator"]
    solver = make_solver(case, **bound)
    joint = solver.joint_names.index("arm_joint4")
    side = 1.0 if "lower" in bound else -1.0
    assert (solver.lower[joint], solver.upper[joint]) == ((4.0, np.inf) if side > 0 else (-np.inf, -4.0))
    rng = rng_for("one-sided bound", side)
    bounds = sampling_bounds(np.minimum(solver.lower, 0.0), np.maximum(solver.upper, 0.0))
    for q in rng.uniform(*bounds, size=(8, len(solver.joint_names))):
        q[joint] = side * rng.uniform(4.0, 4.0 + np.pi)
        targets = fk_targets(case, solver, q)
        result = solver.solve(targets, timeout=0.05)
        assert_valid(result, solver)
        assert result.success, result.reason
        assert_pose_solution(case, solver, result, targets)
    seed = np.clip(solver.rest_posture, solver.lower, solver.upper)
    seed[joint] = side * 4.5
    result = solver.solve(rigid(translation=(FAR, 0.0, 0.0)), seed=seed, timeout=0.05)
    assert_valid(result, solver)
    assert result.reason == "unreachable"


def test_max_joint_move_returns_the_nearest_of_the_solutions_compared():
    """Goals whose generating configuration lies up to 0.6 rad from the seed: the plain ``speed``
    solve returns its first solution, often on another branch several rad away; with
    ``max_joint_move`` (nothing within 0.1 rad exists) the nearest of the solutions compared
    comes back, reaching the goal though not counted a success (``max_joint_move`` is a
    guarantee: reason ``joint_move``): never farther than the plain one's, and within the
    generating configuration's distance almost always (measured: 28 of 30 nearer than the plain
    solve)."""
    case = BY_NAME["arm6"]
    plain = make_solver(case, max_attempts=40)
    near = make_solver(case, max_attempts=40, max_joint_move=0.1)
    rng = rng_for("max joint move")
    nearer = within = 0
    for seed in random_configurations(plain, 30, rng):
        q = np.clip(seed + rng.uniform(-0.6, 0.6, len(seed)), plain.lower, plain.upper)
        targets = fk_targets(case, plain, q)
        moves = []
        for solver in (plain, near):
            result = solver.solve(targets, seed=seed, timeout=None)
            assert_valid(result, solver)
            assert result.success or (solver is near and result.reason == "joint_move")
            assert_pose_solution(case, solver, result, targets)
            moves.append(np.abs(result.q - seed).max())
        assert moves[1] <= moves[0] + 1e-12, moves
        nearer += moves[1] < moves[0] - 1e-9
        within += moves[1] <= np.abs(q - seed).max() + 1e-6
    assert nearer >= 10 and within >= 27, (nearer, within)


def _unaligned(array: np.ndarray) -> np.ndarray:
    """A C-contiguous, writable float64 copy of ``array`` at an address 8 bytes off a multiple of
    16 (numba types such an array apart from an aligned one)."""
    buffer = np.zeros(array.size * 8 + 8, dtype=np.uint8)
    start = 8 if buffer.ctypes.data % 16 == 0 else 0
    copy = np.frombuffer(buffer.data, dtype=np.float64, count=array.size, offset=start).reshape(array.shape)
    copy[...] = array
    return copy


def test_solve_takes_targets_and_seeds_of_any_layout_as_a_c_array():
    """``solve`` calls its compiled search without numba's type dispatch once it has run (the
    types of its arguments are fixed): a target or seed that is read-only, Fortran-ordered,
    unaligned, strided or integer must come out exactly as the same values in a plain C array
    do (copied first), never read as another layout."""
    solver = make_solver(BY_NAME["arm7"], max_attempts=3)
    rng = np.random.default_rng(4)
    q_goal = rng.uniform(solver.lower, solver.upper)
    target = solver.tree.forward(q_goal, "tool0")
    seed = np.clip(q_goal + 0.2, solver.lower, solver.upper)
    reference = solver.solve(target, seed, timeout=None)
    assert reference.success
    read_only = target.copy()
    read_only.flags.writeable = False
    strided = np.zeros((4, 8))
    strided[:, ::2] = target
    variants = [
        (read_only, seed),
        (np.asfortranarray(target), seed),
        (_unaligned(target), _unaligned(seed)),
        (strided[:, ::2], np.repeat(seed, 2)[::2]),
    ]
    for variant_target, variant_seed in variants:
        result = solver.solve(variant_target, variant_seed, timeout=None)
        np.testing.assert_array_equal(result.q, reference.q)
        assert result.success
    integer = solver.solve(np.eye(4, dtype=np.int64), seed, timeout=None)
    np.testing.assert_array_equal(integer.q, solver.solve(np.eye(4), seed, timeout=None).q)
