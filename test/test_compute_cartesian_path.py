"""MoveIt's compute_cartesian_path answered without ROS (ik_node.decisions.compute_cartesian_path):
the start state, waypoints in the base, a link's or the tip's own frame, the timed path (checked by
pinocchio's FK of the URDF where importable: on the line; and against the limits), paths that end
early with their fraction and reason, MoveIt's error codes for bad requests, and never a command."""

from __future__ import annotations

import time

import numpy as np
import pytest
from test_compute_ik import JOINTS, Q_START, URDF_DIR, IndependentFK, pose, pose_errors
from test_policy import ready_policy

from ik_node.decisions import compute_ik as codes
from ik_node.decisions.compute_cartesian_path import PathQuery, answer_path_query
from ik_node.lie import inverse

pytest.importorskip("toppra", reason="timing a path needs toppra (pip install toppra, the 'paths' extra)")


@pytest.fixture(scope="module")
def fk(arm7):
    return IndependentFK(URDF_DIR / "arm7.urdf", arm7)


@pytest.fixture
def policy(arm7):
    return ready_policy(arm7)


def start_fields(q=Q_START) -> dict:
    return {"joint_names": tuple(JOINTS), "joint_positions": tuple(float(value) for value in q)}


def shifted(matrix: np.ndarray, offset) -> np.ndarray:
    moved = matrix.copy()
    moved[:3, 3] += offset
    return moved


def distance_to_line(point, a, b) -> float:
    direction = (b - a) / np.linalg.norm(b - a)
    along = np.clip((point - a) @ direction, 0.0, np.linalg.norm(b - a))
    return float(np.linalg.norm(point - (a + along * direction)))


def test_a_straight_line_is_answered_as_a_timed_path_on_the_line_within_the_limits(fk, policy):
    model = policy.model_state.model
    start = fk(dict(zip(JOINTS, Q_START)), "tool0")
    goal = shifted(start, [0.0, 0.08, -0.06])
    query = PathQuery("tool0", (pose(goal),), max_step=0.005, jump_threshold=5.0, **start_fields())
    answer = answer_path_query(policy, query, time.monotonic())
    assert answer.code == codes.SUCCESS and answer.fraction == 1.0, answer.message
    assert "jump_threshold not needed" in answer.message
    assert answer.joint_names == tuple(JOINTS)
    np.testing.assert_allclose(answer.positions[0], Q_START, atol=1e-12)
    assert len(answer.positions) >= 20  # (10 cm at 5 mm steps)
    for q in answer.positions:
        reached = fk(dict(zip(JOINTS, q)), "tool0")
        assert distance_to_line(reached[:3, 3], start[:3, 3], goal[:3, 3]) < 1e-3
        assert pose_errors(reached, start)[1] < 1e-3  # (the orientation held)
    position_error, rotation_error = pose_errors(fk(dict(zip(JOINTS, answer.positions[-1])), "tool0"), goal)
    assert position_error < 1e-5 and rotation_error < 1e-5
    assert answer.times[0] == 0.0 and np.all(np.diff(answer.times) > 0.0)
    assert np.all(np.abs(answer.velocities) <= model.max_velocity * (1 + 1e-9))
    np.testing.assert_array_equal(answer.velocities[[0, -1]], 0.0)  # (from rest to rest)
    assert policy.motion.last_command is None  # (nothing commanded)


def test_scaling_factors_slow_the_path_and_bound_its_velocities(fk, policy):
    model = policy.model_state.model
    start = fk(dict(zip(JOINTS, Q_START)), "tool0")
    goal = shifted(start, [0.0, 0.2, 0.0])
    full = answer_path_query(policy, PathQuery("", (pose(goal),), max_step=0.005, **start_fields()), 0.0)
    slow = answer_path_query(
        policy,
        PathQuery(
            "",
            (pose(goal),),
            max_step=0.005,
            velocity_scaling=0.5,
            acceleration_scaling=0.25,
            **start_fields(),
        ),
        0.0,
    )
    assert full.success and slow.success and full.fraction == slow.fraction == 1.0
    np.testing.assert_allclose(slow.positions, full.positions)  # (the same path, timed slower)
    assert np.all(np.abs(slow.velocities) <= 0.5 * model.max_velocity * (1 + 1e-9))
    assert slow.times[-1] == pytest.approx(2.0 * full.times[-1], rel=0.05)  # (v/2 and a/4: time x2)


def test_waypoints_in_the_tip_s_own_frame_move_it_along_its_own_axes(fk, policy):
    """MoveIt's "link" reference frame: ``header.frame_id`` the link itself, at the start state."""
    start = fk(dict(zip(JOINTS, Q_START)), "tool0")
    waypoints = (
        pose(shifted(np.eye(4), [0, 0, 0.03]), "tool0"),
        pose(shifted(np.eye(4), [0.03, 0, 0.03]), "tool0"),
    )
    answer = answer_path_query(policy, PathQuery("tool0", waypoints, max_step=0.01, **start_fields()), 0.0)
    assert answer.success and answer.fraction == 1.0, answer.message
    reached = fk(dict(zip(JOINTS, answer.positions[-1])), "tool0")
    in_start_frame = inverse(start) @ reached
    np.testing.assert_allclose(in_start_frame[:3, 3], [0.03, 0.0, 0.03], atol=1e-5)


def test_a_path_out_of_reach_ends_early_with_its_fraction_and_reason(fk, policy):
    start = fk(dict(zip(JOINTS, Q_START)), "tool0")
    direction = start[:3, 3] / np.linalg.norm(start[:3, 3])
    goal = shifted(start, 3.0 * direction)  # (3 m outward: far past the arm's reach)
    answer = answer_path_query(policy, PathQuery("", (pose(goal),), max_step=0.01, **start_fields()), 0.0)
    assert answer.code == codes.SUCCESS  # (MoveIt's: the fraction says how far)
    assert 0.0 < answer.fraction < 0.5, answer.fraction
    assert "the path ends at" in answer.message
    assert any(reason in answer.message for reason in ("unreachable", "singularity", "jump", "deviation"))
    reached = fk(dict(zip(JOINTS, answer.positions[-1])), "tool0")
    expected = start[:3, 3] + answer.fraction * 3.0 * direction
    assert np.linalg.norm(reached[:3, 3] - expected) < 0.01  # (the fraction says where it ended)


@pytest.mark.parametrize(
    "fields, code, words",
    [
        ({"max_step": 0.0}, codes.FAILURE, "max_step must be > 0"),
        ({"waypoints": ()}, codes.FAILURE, "waypoints is empty"),
        ({"waypoints": "nan"}, codes.INVALID_GOAL_CONSTRAINTS, "waypoint 0"),
        ({"waypoints": "frame"}, codes.FRAME_TRANSFORM_FAILURE, "nowhere_frame"),
        ({"link": "link3"}, codes.INVALID_LINK_NAME, "link 'link3' is not a tip"),
        ({"joint_positions": (9.0,) + tuple(Q_START[1:])}, codes.INVALID_ROBOT_STATE, "joint1"),
        ({"joint_names": ("nope",) + tuple(JOINTS[1:])}, codes.INVALID_ROBOT_STATE, "'nope'"),
        ({"has_constraints": True}, codes.INVALID_GOAL_CONSTRAINTS, "path_constraints"),
        ({"velocity_scaling": 2.0}, codes.FAILURE, "max_velocity_scaling_factor"),
    ],
)
def test_a_bad_request_is_refused_with_moveit_s_code_naming_the_problem_and_nothing_moves(
    fk, policy, fields, code, words
):
    start = fk(dict(zip(JOINTS, Q_START)), "tool0")
    goal = shifted(start, [0.0, 0.05, 0.0])
    waypoints = {
        "nan": (pose(np.full((4, 4), np.nan)),),
        "frame": (pose(goal, "nowhere_frame"),),
    }.get(fields.get("waypoints"), fields.get("waypoints", (pose(goal),)))
    values = {"link": "tool0", "max_step": 0.005, **start_fields(), **fields, "waypoints": waypoints}
    answer = answer_path_query(policy, PathQuery(**values), 0.0)
    assert answer.code == code and words in answer.message, answer.message
    assert answer.positions is None and policy.motion.last_command is None
