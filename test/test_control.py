"""The node's rclpy-free command logic: joint-limit parameters merged with the URDF, the
velocity-limited tracking step (on a floating base's manifold too), the singularity slow-down,
the command guard, the joints the messages carry, and pose conversions between ROS messages and
matrices."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from transforms3d.euler import euler2mat

from ik_node.decisions.control import (
    JointLayout,
    command_violation,
    current_state,
    effective_joint_limits,
    merge_joint_limits,
    singularity_scale,
    singularity_scale_toward,
    trajectory_duration,
)
from ik_node.decisions.conversions import pose_from_message, pose_to_fields
from ik_node.errors import IKNodeError, TargetError
from ik_node.servo import MotionLimits, goal_velocity, scaled_velocity, velocity_bounds


def limits(**overrides):
    values = dict(
        has_position_limits=True,
        min_position=-1.0,
        max_position=1.0,
        has_velocity_limits=True,
        max_velocity=1.0,
    )
    values.update(overrides)
    return effective_joint_limits("elbow", -2.0, 2.0, 3.0, **values)


def test_tighter_parameter_limits_win():
    merged = limits()
    assert (merged.lower, merged.upper, merged.max_velocity) == (-1.0, 1.0, 1.0)
    assert merged.warnings == ()


def test_wider_parameter_limits_are_refused_with_a_warning():
    merged = limits(min_position=-5.0, max_position=1.5, max_velocity=10.0)
    assert (merged.lower, merged.upper, merged.max_velocity) == (-2.0, 1.5, 3.0)
    assert len(merged.warnings) == 2
    assert "joint_limits.elbow.min_position -5.0 is below the URDF's lower limit -2.0" in merged.warnings[0]
    assert "max_velocity 10.0 is above the URDF's 3.0" in merged.warnings[1]
    unlimited = limits(has_position_limits=False, has_velocity_limits=False)
    assert (unlimited.lower, unlimited.upper, unlimited.max_velocity) == (-2.0, 2.0, 3.0)
    assert "has_position_limits is false" in unlimited.warnings[0]


def test_continuous_joint_gains_limits_from_parameters():
    merged = effective_joint_limits(
        "wheel",
        -math.inf,
        math.inf,
        math.inf,
        has_position_limits=True,
        min_position=-3.0,
        max_position=3.0,
        has_velocity_limits=False,
        max_velocity=0.0,
    )
    assert (merged.lower, merged.upper, merged.max_velocity, merged.warnings) == (-3.0, 3.0, math.inf, ())


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"min_position": 0.5, "max_position": -0.5}, "min_position 0.5 is above max_position -0.5"),
        ({"min_position": math.nan}, "must be finite"),
        ({"min_position": 2.5, "max_position": 3.0}, "does not overlap the URDF limits"),
        ({"max_velocity": 0.0}, "max_velocity must be a positive number"),
    ],
)
def test_unusable_parameter_limits_raise_naming_the_joint(overrides, message):
    with pytest.raises(IKNodeError, match="elbow") as error:
        limits(**overrides)
    assert message in str(error.value)


vectors = st.lists(st.floats(-3, 3), min_size=1, max_size=8)


def _goal_step(q, goal, max_velocity, period, scale, space=None):
    """Track mode's step toward a joint goal without acceleration limits, as the servo takes it
    (:class:`ik_node.servo.Servo`, :mod:`ik_node.servo.limits`): ``(q_next, velocity)``."""
    difference = goal - q if space is None else space.difference(q, goal)
    unbounded = np.full(len(difference), np.inf)
    limits = MotionLimits(-unbounded, unbounded, max_velocity, unbounded)
    low, high, _, _ = velocity_bounds(
        np.zeros(len(difference)), np.zeros(len(difference)), limits, period, difference
    )
    velocity, _, kept = scaled_velocity(
        goal_velocity(difference, max_velocity, period, scale), 0.0 * difference, low, high
    )
    assert kept
    return (q + velocity * period if space is None else space.integrate(q, velocity * period)), velocity


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_tracking_step_respects_every_velocity_limit_and_keeps_direction(data):
    q = np.array(data.draw(vectors))
    goal = np.array(data.draw(st.lists(st.floats(-3, 3), min_size=len(q), max_size=len(q))))
    max_velocity = np.array(data.draw(st.lists(st.floats(0.01, 5), min_size=len(q), max_size=len(q))))
    period = data.draw(st.floats(1e-3, 0.1))
    scale = data.draw(st.floats(0, 1))
    q_next, velocity = _goal_step(q, goal, max_velocity, period, scale)
    assert np.all(np.abs(velocity) <= max_velocity * (1 + 1e-12))
    np.testing.assert_allclose((q_next - q) / period, velocity, atol=1e-9)
    # One scale for all joints: the step is a non-negative multiple (<= 1) of goal - q.
    difference = goal - q
    moving = np.abs(difference) > 1e-9
    if moving.any():
        ratios = (q_next - q)[moving] / difference[moving]
        assert np.all(ratios >= -1e-12) and np.all(ratios <= 1 + 1e-12)
        np.testing.assert_allclose(ratios, ratios[0], rtol=1e-6, atol=1e-12)
    if scale == 1 and np.all(np.abs(difference) <= max_velocity * period):
        np.testing.assert_allclose(q_next, goal, atol=1e-12)  # within reach: arrives


def test_singularity_scale_slows_only_toward_the_singularity():
    assert singularity_scale(10, 12, 17, 30) == 1.0  # far from it
    assert singularity_scale(23.5, 24, 17, 30) == pytest.approx(0.5)  # halfway, approaching
    assert singularity_scale(31, 32, 17, 30) == 0.0  # past the hard stop, approaching
    assert singularity_scale(31, 29, 17, 30) == 1.0  # moving away is never slowed


def test_command_guard_fires_on_positions_and_velocities():
    names, lower, upper, max_velocity = ["a", "b"], [-1.0, 0.0], [1.0, 0.5], [2.0, 0.1]
    assert command_violation(names, [0.5, 0.2], lower, upper) is None
    assert command_violation(names, [0.5, 0.2], lower, upper, [1.9, -0.1], max_velocity) is None
    assert "joint 'b' position 0.6 is outside its limits [0.0, 0.5]" in command_violation(
        names, [0.5, 0.6], lower, upper
    )
    assert "joint 'a' position nan" in command_violation(names, [math.nan, 0.2], lower, upper)
    assert "joint 'b' velocity -0.2 exceeds its limit 0.1" in command_violation(
        names, [0.5, 0.2], lower, upper, [0.0, -0.2], max_velocity
    )


def message(position, quaternion):
    return SimpleNamespace(
        position=SimpleNamespace(x=position[0], y=position[1], z=position[2]),
        orientation=SimpleNamespace(x=quaternion[0], y=quaternion[1], z=quaternion[2], w=quaternion[3]),
    )


def test_message_quaternions_are_xyzw_and_normalised():
    # 90 degrees about z: (x y z w) = (0 0 sin45 cos45), given at twice unit length.
    s = math.sqrt(0.5)
    pose = pose_from_message(message([1, 2, 3], [0, 0, 2 * s, 2 * s]))
    np.testing.assert_allclose(pose[:3, :3], euler2mat(0, 0, math.pi / 2), atol=1e-12)
    np.testing.assert_allclose(pose[:3, 3], [1, 2, 3])
    position, quaternion = pose_to_fields(pose)
    np.testing.assert_allclose(quaternion, [0, 0, s, s], atol=1e-12)
    assert position == [1.0, 2.0, 3.0]
    # components near the largest double (their norm overflows to inf: found by test_node_fuzz)
    huge = pose_from_message(message([0, 0, 0], [0, 0, -1.7e308, -1.7e308]))
    np.testing.assert_allclose(huge[:3, :3], euler2mat(0, 0, math.pi / 2), atol=1e-12)


@pytest.mark.parametrize(
    "position, quaternion, text",
    [
        ([math.nan, 0, 0], [0, 0, 0, 1], "position must be finite"),
        ([0, math.inf, 0], [0, 0, 0, 1], "position must be finite"),
        ([0, 0, 0], [0, 0, 0, 0], "zero quaternion"),
        ([0, 0, 0], [math.nan, 0, 0, 1], "orientation must be finite"),
    ],
)
def test_unusable_goal_messages_are_refused(position, quaternion, text):
    with pytest.raises(TargetError, match=text):
        pose_from_message(message(position, quaternion))


# ---------------------------------------------------------------- the node's policies, directly

CHAIN = ("shoulder", "elbow")
URDF = (np.array([-2.0, -1.0]), np.array([2.0, 1.0]), np.array([3.0, 4.0]))


def limit_values(**overrides) -> dict:
    """joint_limits.* parameter values equal to the URDF's, with ``overrides`` ({name: value})."""
    values = {"mode": "solve"}
    for index, joint in enumerate(CHAIN):
        values.update(
            {
                f"joint_limits.{joint}.has_position_limits": True,
                f"joint_limits.{joint}.min_position": float(URDF[0][index]),
                f"joint_limits.{joint}.max_position": float(URDF[1][index]),
                f"joint_limits.{joint}.has_velocity_limits": True,
                f"joint_limits.{joint}.max_velocity": float(URDF[2][index]),
            }
        )
    values.update(overrides)
    return values


def test_limit_parameters_at_start_up_warn_and_keep_the_urdf_where_unusable():
    values = limit_values(
        **{"joint_limits.shoulder.min_position": -0.5, "joint_limits.elbow.max_position": 5.0}
    )
    lower, upper, velocity, warnings = merge_joint_limits(CHAIN, *URDF, values)
    np.testing.assert_array_equal(lower, [-0.5, -1.0])  # tighter wins
    np.testing.assert_array_equal(upper, [2.0, 1.0])  # wider refused: the URDF's stays
    assert len(warnings) == 1 and "elbow" in warnings[0] and "1.0" in warnings[0]


def test_limit_parameters_at_run_time_raise_only_for_the_joint_changed():
    values = limit_values(**{"joint_limits.elbow.max_position": 5.0})  # refused at start-up already
    changed = frozenset({"joint_limits.shoulder.max_position"})
    lower, upper, _, warnings = merge_joint_limits(
        CHAIN, *URDF, {**values, "joint_limits.shoulder.max_position": 0.5}, changed
    )
    assert upper[0] == 0.5 and upper[1] == 1.0 and warnings == []
    with pytest.raises(IKNodeError, match="elbow"):
        merge_joint_limits(CHAIN, *URDF, values, frozenset({"joint_limits.elbow.max_position"}))


def test_track_mode_needs_a_velocity_limit_for_every_joint():
    unknown = (URDF[0], URDF[1], np.array([3.0, math.inf]))
    values = limit_values(**{"joint_limits.elbow.has_velocity_limits": False, "mode": "track"})
    with pytest.raises(IKNodeError, match=r"track mode needs a velocity limit for joints \['elbow'\]"):
        merge_joint_limits(CHAIN, *unknown, values)
    assert merge_joint_limits(CHAIN, *unknown, {**values, "mode": "solve"})[2][1] == math.inf


def test_trajectory_duration_is_the_period_or_the_slowest_joint_at_its_limit():
    assert trajectory_duration([1.0, 0.0], [0.0, 0.0], [2.0, 1.0], 0.1, period=0.01) == 0.01
    assert trajectory_duration([1.0, 0.5], [0.0, 0.0], [2.0, 0.25], 0.1) == pytest.approx(2.0)
    assert trajectory_duration([0.0, 0.0], [0.0, 0.0], [2.0, 0.25], 0.1) == 0.1


def test_current_state_follows_fresh_joint_states_by_name_else_the_fallback():
    fallback = np.array([0.1, 0.2, 0.3])
    names = ("a", "b", "c")
    q, stale = current_state(names, {"c": 3.0, "a": 1.0, "x": 9.0}, 0.5, 1.0, fallback)
    np.testing.assert_array_equal(q, [1.0, 0.2, 3.0])
    assert not stale
    q, stale = current_state(names, {"a": 1.0}, 2.0, 1.0, fallback)
    np.testing.assert_array_equal(q, fallback)
    assert stale
    q, stale = current_state(names, {}, math.inf, 1.0, fallback)  # none ever arrived: not "stale"
    assert not stale


def test_singularity_scale_toward_a_singular_configuration_slows_down():
    def jacobian(q):  # a planar two-link arm: singular at q[1] = 0
        return np.array([[-np.sin(q[0]) - np.sin(q[0] + q[1]), -np.sin(q[0] + q[1])],
                         [np.cos(q[0]) + np.cos(q[0] + q[1]), np.cos(q[0] + q[1])]])  # fmt: skip

    toward, condition = singularity_scale_toward(
        jacobian, np.array([0.3, 0.05]), np.array([0.0, -1.0]), 17.0, 30.0
    )
    away, _ = singularity_scale_toward(jacobian, np.array([0.3, 0.05]), np.array([0.0, 1.0]), 17.0, 30.0)
    assert condition > 17.0 and toward < 1.0 and away == 1.0


# ---------------------------------------------------------------- a floating base (issue 17)

FLYER = """<robot name="flyer">
  <link name="world"/><link name="body"/><link name="arm"/>
  <joint name="free" type="floating"><parent link="world"/><child link="body"/></joint>
  <joint name="shoulder" type="revolute"><parent link="body"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" velocity="2" effort="1"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def flyer_tree():
    from ik_node import load_robot

    return load_robot(FLYER).tree("world", "arm")


def test_the_joint_layout_names_the_1_dof_joints_and_their_indices_and_the_multi_dof_ones(flyer_tree):
    layout = JointLayout.of(flyer_tree)
    assert layout.names == ("shoulder",)
    assert layout.configuration.tolist() == [7] and layout.tangent.tolist() == [6]
    assert [joint.name for joint in layout.multi_dof] == ["free"]


def test_a_tracking_step_on_a_floating_base_is_taken_on_the_manifold(flyer_tree):
    tree = flyer_tree
    q = tree.joint_vector({"free": [0.1, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0], "shoulder": 0.0})
    half = 0.6  # [rad]: a turn of 1.2 rad about z, and 1 m along x
    goal = tree.joint_vector(
        {"free": [1.1, 0.0, 0.5, 0.0, 0.0, math.sin(half), math.cos(half)], "shoulder": 0.5}
    )
    max_velocity = np.array([0.5, 0.5, 0.5, 1.0, 1.0, 1.0, 2.0])  # per tangent coordinate
    period = 0.1
    q_next, velocity = _goal_step(q, goal, max_velocity, period, 1.0, tree)
    assert velocity.shape == (7,) and np.all(np.abs(velocity) <= max_velocity * (1 + 1e-12))
    assert abs(np.linalg.norm(q_next[3:7]) - 1) < 1e-12
    np.testing.assert_allclose(tree.integrate(q, velocity * period), q_next, atol=1e-12)
    difference = tree.difference(q, goal)  # one scale: the step is along the tangent displacement
    np.testing.assert_allclose(velocity / np.linalg.norm(velocity), difference / np.linalg.norm(difference))
    for _ in range(100):  # arrives
        q_next, velocity = _goal_step(q_next, goal, max_velocity, period, 1.0, tree)
    np.testing.assert_allclose(tree.difference(q_next, goal), 0.0, atol=1e-12)
    # a trajectory point's time: the base's motion at its limits counts too (1 m at 0.5 m/s)
    assert trajectory_duration(goal, q, max_velocity, 0.1, space=tree) == pytest.approx(
        max(np.abs(difference) / max_velocity)
    )
    assert trajectory_duration(goal, q, max_velocity, 0.1, space=tree) >= 2.0


def test_the_singularity_look_ahead_steps_on_the_manifold(flyer_tree):
    tree = flyer_tree
    seen = []

    def jacobian(q):
        seen.append(np.array(q))
        return np.eye(2)

    q = tree.neutral.copy()
    singularity_scale_toward(jacobian, q, np.array([0, 0, 0, 0, 0, 1.0, 0]), 17.0, 30.0, tree.integrate)
    assert abs(np.linalg.norm(seen[1][3:7]) - 1) < 1e-12 and seen[1][5] > 0  # turned about z, unit


def test_joint_states_set_only_the_readable_coordinates():
    q, stale = current_state(
        ("b/x", "b/qw", "j"), {"b/x": 5.0, "j": 0.3}, 0.1, 1.0, [0.1, 1.0, 0.0], [False, False, True]
    )
    np.testing.assert_array_equal(q, [0.1, 1.0, 0.3])
    assert not stale


def test_the_guard_checks_tangent_velocities_by_their_names():
    names, lower, upper = ["b/x", "b/qw", "j"], [-math.inf, -math.inf, -1.0], [math.inf, math.inf, 1.0]
    tangent = ["b/vx", "j"]
    assert command_violation(names, [3.0, 1.0, 0.5], lower, upper, [0.4, 0.1], [0.5, 1.0], tangent) is None
    assert "joint 'b/vx' velocity 0.6 exceeds its limit 0.5" in command_violation(
        names, [3.0, 1.0, 0.5], lower, upper, [0.6, 0.1], [0.5, 1.0], tangent
    )
