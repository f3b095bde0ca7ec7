"""The streaming servo (ik_node.servo) without ROS: twists realised on every bundled arm (the tip's
velocity from FK of consecutive commands), every command within the position, velocity and
acceleration limits, rest when the stream stops, full extension without a branch flip, joint
limits, collisions, joint goals and bad commands.

References: the tree's FK (independent of the servo's kernels' evaluation path: its own
``forward_kinematics_many``), finite differences of consecutive commands, the limits given.
"""

from __future__ import annotations

import numpy as np
import pytest

from ik_node import IKSolver, Obstacle, load_robot
from ik_node.description.catalogue import BUNDLED
from ik_node.servo import (
    COLLISION,
    HALTED,
    JOINT_LIMIT,
    OK,
    REACHED,
    JointGoalCommand,
    JointJogCommand,
    MotionLimits,
    Servo,
    ServoCommandError,
    TwistCommand,
    braking_speed,
    scaled_velocity,
    velocity_bounds,
)

PERIOD = 0.002  # [s]: 500 Hz
ACCELERATION = 20.0  # [rad/s^2, m/s^2]
#: The bundled arms (the humanoid is a whole body; arm7_gripper's two fingertips share the arm, so
#: one cannot move while the other holds).
ARMS = [case for case in BUNDLED if case.name not in ("humanoid", "arm7_gripper")]
#: Slack of the limit checks: float rounding of ``x + u T`` and ``(u - v) / T``.
SLACK = 1e-9


def _solver(case, **options) -> IKSolver:
    solver = IKSolver(load_robot(case.urdf), case.base, list(case.tips), **options)
    solver.wait_for_kernels()
    return solver


def well_conditioned(tree, seed: int) -> np.ndarray:
    """A configuration away from singularities and limits: of 40 draws in the middle half of each
    joint's range (unbounded joints: around 0), the one whose tips' Jacobians are best
    conditioned (largest smallest singular value)."""
    rng = np.random.default_rng(seed)
    bounded = np.isfinite(tree.lower) & np.isfinite(tree.upper)
    low, high = np.where(bounded, tree.lower, -0.5), np.where(bounded, tree.upper, 0.5)
    best, best_value = None, -1.0
    for _ in range(40):
        q = rng.uniform(low + 0.25 * (high - low), high - 0.25 * (high - low))
        value = min(np.linalg.svd(tree.body_jacobian(q, tip), compute_uv=False)[-1] for tip in tree.tip_links)
        if value > best_value:
            best, best_value = q, value
    return best


def _start(solver: IKSolver, seed: int) -> np.ndarray:
    return well_conditioned(solver.tree, seed)


def _check_limits(servo: Servo, states) -> None:
    """Every state within the position limits, velocities and the accelerations between them."""
    limits = servo.limits
    single = servo.single
    for before, after in zip(states, states[1:]):
        position = after.q[servo.single_coordinates]
        assert np.all(position >= limits.lower[single] - SLACK) and np.all(
            position <= limits.upper[single] + SLACK
        )
        assert np.all(np.abs(after.velocity) <= limits.max_velocity * (1 + 1e-9))
        acceleration = np.abs(after.velocity - before.velocity) / PERIOD
        assert np.all(acceleration <= limits.max_acceleration * (1 + 1e-6) + 1e-6)


def _run(servo, state, command, steps):
    states = [state]
    for _ in range(steps):
        states.append(servo.step(states[-1], command, PERIOD))
    return states


# ------------------------------------------------------------------ the limit filter


def test_braking_speed_stops_within_the_distance():
    """From the braking speed, one period at it and then decelerating at ``a`` per period ends
    within the distance (simulated), and a little faster would not."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        distance, acceleration, period = (
            rng.uniform(0, 0.5),
            rng.uniform(0.5, 50),
            rng.choice([0.001, 0.002, 0.01]),
        )
        speed = float(braking_speed(np.array([distance]), np.array([acceleration]), period)[0])
        for start, fits in ((speed, True), (speed * 1.05 + 1e-6, False)):
            travelled, velocity = 0.0, start
            while velocity > 0:
                travelled += velocity * period
                velocity -= acceleration * period
            # (the continuous-time bound u T + u^2/2a is an upper bound of the discrete travel)
            if fits:
                assert travelled <= distance + 1e-12
    assert braking_speed(np.array([0.1]), np.array([np.inf]), 0.01)[0] == pytest.approx(10.0)
    assert braking_speed(np.array([-0.1]), np.array([5.0]), 0.01)[0] == 0.0


def test_filter_keeps_every_bound_over_random_streams():
    """Random desired velocities, positions and limits, 300 periods each: positions inside the
    limits, velocities and accelerations within theirs, at every step; where the filter keeps the
    direction (``kept``), the velocity is a non-negative multiple of the desired one."""
    rng = np.random.default_rng(7)
    for trial in range(40):
        n = int(rng.integers(1, 8))
        lower = rng.uniform(-2, -0.2, n)
        upper = rng.uniform(0.2, 2, n)
        limits = MotionLimits(lower, upper, rng.uniform(0.3, 3, n), rng.uniform(1, 30, n), margin=0.01)
        period = float(rng.choice([0.001, 0.002, 0.01]))
        x, v = rng.uniform(lower + 0.02, upper - 0.02), np.zeros(n)
        desired = rng.normal(size=n) * 2
        for step in range(300):
            if step % 50 == 0:
                desired = rng.normal(size=n) * rng.choice([0.1, 2.0, 10.0])
            low, high, _, _ = velocity_bounds(x, v, limits, period)
            u, scale, kept = scaled_velocity(desired, v, low, high)
            assert np.all(u >= low - 1e-12) and np.all(u <= high + 1e-12)
            if kept:
                assert scale >= 0 and np.allclose(u, scale * desired)
            assert np.all(np.abs(u) <= limits.max_velocity + 1e-12)
            assert np.all(np.abs(u - v) <= limits.max_acceleration * period * (1 + 1e-9) + 1e-12)
            x, v = x + u * period, u
            assert np.all(x >= lower - 1e-12) and np.all(x <= upper + 1e-12), trial


# ------------------------------------------------------------------ twists on every arm


@pytest.mark.parametrize("case", ARMS, ids=lambda case: case.name)
@pytest.mark.parametrize("axes", ["base", "tip"])
def test_constant_twist_is_realised(case, axes):
    """A constant twist (0.05 m/s along a skew direction, 0.1 rad/s about another) for 0.2 s from
    rest: after the acceleration ramp, the tip's point velocity measured by FK of consecutive
    commands is the command within 1 % in magnitude and 1 degree in direction, the angular one
    likewise; during the ramp the direction holds already; other tips hold their poses (<= 0.1 mm);
    every command within the limits."""
    solver = _solver(case)
    servo = Servo(solver, max_acceleration=ACCELERATION)
    state = servo.start(_start(solver, 11))
    tip = solver.tip_links[0]
    linear, angular = np.array([0.03, -0.02, 0.035]), np.array([0.05, 0.08, -0.03])
    command = TwistCommand(tip, np.concatenate((linear, angular)), axes=axes)
    states = _run(servo, state, command, 100)
    _check_limits(servo, states)
    offset = np.asarray(solver.tasks[tip].offset)
    poses = [solver.tree.forward(s.q, tip) for s in states]
    points = [pose[:3, 3] + pose[:3, :3] @ offset for pose in poses]
    ramp_done = False
    for k in range(1, len(states) - 1):
        rotation = poses[k][:3, :3]
        expected_v = linear if axes == "base" else rotation @ linear
        expected_w = angular if axes == "base" else rotation @ angular
        measured_v = (points[k + 1] - points[k]) / PERIOD
        delta = poses[k][:3, :3].T @ poses[k + 1][:3, :3]
        angle = np.arccos(np.clip((np.trace(delta) - 1) / 2, -1, 1))
        axis = np.array([delta[2, 1] - delta[1, 2], delta[0, 2] - delta[2, 0], delta[1, 0] - delta[0, 1]])
        measured_w = rotation @ (axis / (2 * np.sin(angle)) * angle / PERIOD) if angle > 0 else np.zeros(3)
        assert states[k + 1].status.code == OK, states[k + 1].status
        for measured, expected in ((measured_v, expected_v), (measured_w, expected_w)):
            cosine = measured @ expected / np.linalg.norm(measured) / np.linalg.norm(expected)
            assert np.degrees(np.arccos(min(1.0, cosine))) <= 1.0, (k, measured, expected)
        ratio = np.linalg.norm(measured_v) / np.linalg.norm(expected_v)
        if ramp_done:  # (after the acceleration ramp: the twist's speed)
            assert ratio == pytest.approx(1.0, rel=0.01), k
            assert np.linalg.norm(measured_w) == pytest.approx(np.linalg.norm(expected_w), rel=0.01), k
        ramp_done = ramp_done or ratio >= 0.995
        assert ratio <= 1.01
    assert ramp_done, "the speed never reached the twist's"
    for other in solver.tip_links[1:]:
        start, end = solver.tree.forward(states[0].q, other), solver.tree.forward(states[-1].q, other)
        assert np.linalg.norm(end[:3, 3] - start[:3, 3]) <= 1e-4


@pytest.fixture(scope="module")
def arm7_solver():
    return _solver(next(case for case in ARMS if case.name == "arm7"))


def test_stream_stop_comes_to_rest_within_the_deceleration(arm7_solver):
    """Moving at speed, no command: at rest within ``max |v_i| / a_i`` plus a period, along the
    same joint-space direction, every step within the limits."""
    servo = Servo(arm7_solver, max_acceleration=ACCELERATION)
    moving = _run(
        servo, servo.start(_start(arm7_solver, 2)), TwistCommand("tool0", [0.1, 0, 0, 0, 0, 0.2]), 60
    )
    last = moving[-1]
    allowed = int(np.ceil(np.max(np.abs(last.velocity)) / ACCELERATION / PERIOD)) + 1
    stopping = _run(servo, last, None, allowed)
    _check_limits(servo, moving + stopping[1:])
    assert stopping[-1].at_rest and stopping[-1].status.code == HALTED
    for state in [state for state in stopping[1:] if not state.at_rest]:
        cosine = (
            state.velocity @ last.velocity / np.linalg.norm(state.velocity) / np.linalg.norm(last.velocity)
        )
        assert cosine == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("name", ["arm6", "arm7"])
def test_push_to_full_extension_ends_at_rest_on_its_branch(name):
    """A tool position (its orientation free) pushed at 0.2 m/s away from the shoulder for 3 s
    stretches the arm to the boundary of its reach (smallest singular value of the linear rows
    below 0.01), then pushed along the boundary's normal there (the Jacobian's singular direction,
    base axes; a push with a part along the boundary slides the tip along it, as a part of the
    motion that is still achievable) for 3 s: it comes to rest, the tip's speed below 1 % of the
    push and falling, the joints' below 0.02 rad/s and falling; the elbow never crosses straight
    (no branch flip); every command within the limits; no hard stop (the tip's speed never falls
    by more than 0.05 m/s in a period)."""
    case = next(case for case in ARMS if case.name == name)
    solver = _solver(case, tasks={case.tips[0]: "position"})
    servo = Servo(solver, max_acceleration=ACCELERATION)
    q = _start(solver, 1)
    point = solver.tip_poses(q)[0][:3, 3]
    shoulder = solver.tree.link_poses(q)[2][:3, 3]
    away = (point - shoulder) / np.linalg.norm(point - shoulder)
    elbow = 3 if name == "arm7" else 2
    states = _run(
        servo, servo.start(q), TwistCommand("tool0", np.concatenate((0.2 * away, np.zeros(3)))), 1500
    )
    reached = states[-1].q
    linear = solver.tree.mixed_jacobian(reached, "tool0", solver.tasks["tool0"].offset)[:3]
    assert np.linalg.svd(linear, compute_uv=False)[-1] < 0.01
    normal = np.linalg.svd(linear)[0][:, -1]
    normal *= np.sign(normal @ away)
    states += _run(
        servo, states[-1], TwistCommand("tool0", np.concatenate((0.2 * normal, np.zeros(3)))), 1500
    )[1:]
    _check_limits(servo, states)
    assert len({np.sign(s.q[elbow]) for s in states}) == 1, "the elbow crossed straight: a branch flip"
    linear = solver.tree.body_jacobian(states[-1].q, "tool0")[:3]
    assert np.linalg.svd(linear, compute_uv=False)[-1] < 0.01
    points = np.array([solver.tip_poses(s.q)[0][:3, 3] for s in states])
    speeds = np.linalg.norm(np.diff(points, axis=0), axis=1) / PERIOD
    assert speeds[-1] < 0.002 and speeds[-1] <= speeds[-500]
    assert np.max(np.abs(states[-1].velocity)) < 0.02
    assert np.max(np.abs(states[-1].velocity)) <= np.max(np.abs(states[-500].velocity))
    assert np.max(-np.diff(speeds)) < 0.05


def test_jog_into_a_joint_limit_stops_at_the_margin(arm7_solver):
    """Jogging joint2 toward its upper limit: it decelerates within its acceleration and stops at
    the limit less the margin, status joint_limit; jogging back moves at once."""
    servo = Servo(arm7_solver, max_acceleration=ACCELERATION, position_margin=0.05)
    state = servo.start(arm7_solver.rest_posture)
    states = _run(servo, state, JointJogCommand({"joint2": 1.0}), 1500)
    _check_limits(servo, states)
    upper = servo.limits.upper[1]
    assert states[-1].q[1] == pytest.approx(upper - 0.05, abs=1e-3)
    assert states[-1].q[1] <= upper - 0.05 + 1e-9 and states[-1].at_rest
    assert states[-1].status.code == JOINT_LIMIT
    back = servo.step(states[-1], JointJogCommand({"joint2": -1.0}), PERIOD)
    assert back.velocity[1] < 0 and back.status.code == OK


def test_collision_slows_only_while_closing(arm7_solver):
    """A box in front of the tool: a twist into it slows as the clearance shrinks and ends at
    rest with the clearance above the margin; from there, a twist away is not slowed (status ok,
    full speed after the ramp)."""
    case = next(case for case in ARMS if case.name == "arm7")
    solver = _solver(case, collision_margin=0.02)
    q = _start(solver, 5)
    point = solver.tip_poses(q)[0][:3, 3]
    direction = np.array([1.0, 0.0, 0.0])
    wall = np.eye(4)
    wall[:3, 3] = point + 0.15 * direction
    solver.set_obstacles([Obstacle.box((0.02, 0.4, 0.4), wall, "wall")])
    assert solver.clearance(q) > 0.05
    servo = Servo(solver, max_acceleration=ACCELERATION)
    states = _run(
        servo, servo.start(q), TwistCommand("tool0", np.concatenate((0.1 * direction, np.zeros(3)))), 1500
    )
    _check_limits(servo, states)
    clearances = [solver.clearance(s.q) for s in states]
    assert min(clearances) >= 0.02 - 1e-4
    assert states[-1].status.code == COLLISION and np.max(np.abs(states[-1].velocity)) < 1e-2
    away = _run(
        servo, states[-1], TwistCommand("tool0", np.concatenate((-0.1 * direction, np.zeros(3)))), 100
    )
    assert all(s.status.code == OK for s in away[1:])
    last_points = [solver.tip_poses(state.q)[0][:3, 3] for state in away[-2:]]
    assert np.linalg.norm(last_points[1] - last_points[0]) / PERIOD == pytest.approx(0.1, rel=0.01)


def test_joint_goal_is_reached_at_rest(arm7_solver):
    """A joint goal 0.5 rad away per joint: reached exactly, at rest, every step within the
    limits, the joint-space direction kept while moving."""
    servo = Servo(arm7_solver, max_acceleration=ACCELERATION)
    start = arm7_solver.rest_posture
    goal = np.clip(start + 0.5, arm7_solver.lower, arm7_solver.upper)
    states = _run(servo, servo.start(start), JointGoalCommand(goal), 1500)
    _check_limits(servo, states)
    assert states[-1].status.code == REACHED
    assert np.allclose(states[-1].q, goal, atol=1e-9) and states[-1].at_rest
    direction = (goal - start) / np.linalg.norm(goal - start)
    for state in states[1:]:
        if not state.at_rest:
            assert state.velocity @ direction == pytest.approx(np.linalg.norm(state.velocity), rel=1e-9)


def test_bad_commands_are_refused_naming_the_problem(arm7_solver):
    servo = Servo(arm7_solver)
    state = servo.start(arm7_solver.rest_posture)
    with pytest.raises(ServoCommandError, match="not finite"):
        TwistCommand("tool0", [np.nan, 0, 0, 0, 0, 0])
    with pytest.raises(ServoCommandError, match="6 components"):
        TwistCommand("tool0", [0, 0, 0])
    with pytest.raises(ServoCommandError, match="not a tip"):
        servo.step(state, TwistCommand("link3", [0.1, 0, 0, 0, 0, 0]), PERIOD)
    with pytest.raises(ServoCommandError, match="unknown joint 'elbow'"):
        servo.step(state, JointJogCommand({"elbow": 0.1}), PERIOD)
    with pytest.raises(ServoCommandError, match="not finite"):
        JointJogCommand({"joint1": float("inf")})
    with pytest.raises(ServoCommandError, match="period"):
        servo.step(state, None, 0.0)
