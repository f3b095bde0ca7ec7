"""The node's decisions without ROS (ik_node.decisions.policy): readiness, goals kept while the solver is
prepared, frames (the model's links, tf2 through a lookup, refusal without one), pause and
reset, the seed, tracking steps, and the limit guard. FK checks use the model's own full-robot FK
(not the solver's tree)."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pytest

from ik_node.decisions.motion import COLLISION
from ik_node.decisions.parameters import JOINT_PARAMETERS, NODE_PARAMETERS, NodeSettings
from ik_node.decisions.planning import build_solver, plan_model
from ik_node.decisions.policy import IKPolicy
from ik_node.decisions.replies import Command, GoalRequest
from ik_node.decisions.streams import JogRequest, TwistRequest
from ik_node.errors import IKNodeError
from ik_node.solver import TipTask

JOINTS = [f"joint{i}" for i in range(1, 8)]


def settings_for(robot, tips=("tool0",), **overrides) -> NodeSettings:
    """The node's defaults for the chain from base_link to ``tips`` (arm7's tool0 by default), as
    the node declares them (joint parameters from the URDF), with ``overrides`` by parameter name."""
    values = {spec.name: spec.default for spec in NODE_PARAMETERS}
    values.update(base_link="base_link", tip_links=list(tips))
    tree = robot.tree("base_link", list(tips))
    for index, joint in enumerate(tree.joint_names):
        lower, upper, velocity = (
            float(tree.lower[index]),
            float(tree.upper[index]),
            float(tree.max_velocity[index]),
        )
        values.update(
            {
                f"joint_limits.{joint}.has_position_limits": True,
                f"joint_limits.{joint}.min_position": lower,
                f"joint_limits.{joint}.max_position": upper,
                f"joint_limits.{joint}.has_velocity_limits": True,
                f"joint_limits.{joint}.max_velocity": velocity,
                f"joint_weights.{joint}": 1.0,
                f"rest_posture.{joint}": 0.5 * (lower + upper),
            }
        )
    values.update(overrides)
    return NodeSettings.from_values(values)


def ready_policy(robot, **overrides) -> IKPolicy:
    settings = settings_for(robot, **overrides)
    policy = IKPolicy(["tool0"], settings)
    model = plan_model(robot, settings)
    policy.install(model)
    policy.attach_solver(build_solver(model))
    return policy


def reached_error(robot, q, goal) -> float:
    reached = robot.forward(dict(zip(JOINTS, q)), "tool0", "base_link")
    cosine = (np.trace(reached[:3, :3].T @ goal[:3, :3]) - 1) / 2
    return max(float(np.linalg.norm(reached[:3, 3] - goal[:3, 3])), math.acos(min(1.0, max(-1.0, cosine))))


def test_the_typed_record_has_a_field_per_node_parameter():
    per_tip_or_joint = {
        "tip_tasks",
        "tip_task_axes",
        "tip_offsets",
        "tip_bands",
        "tip_gaze_axes",
        "tip_relative_to",
        "joint_weights",
        "rest_posture",
        "obstacles",
        "values",
    }
    names = set(NodeSettings.field_names()) - per_tip_or_joint
    assert names == {spec.name for spec in NODE_PARAMETERS}
    assert {spec.name.split(".")[0] for spec in JOINT_PARAMETERS} == {
        "joint_limits",
        "joint_weights",
        "rest_posture",
    }


def test_a_planned_model_shows_the_rest_posture_before_its_solver_exists(arm7):
    tightened = {"joint_limits.joint2.max_position": 0.5, "rest_posture.joint2": 1.0}
    settings = settings_for(arm7, **{"rest_posture.joint4": -10.0}, **tightened)  # outside: clipped
    model = plan_model(arm7, settings)
    solver = build_solver(model)
    for planned, solvers in ((model.rest_posture, solver.rest_posture), (model.lower, solver.lower)):
        np.testing.assert_array_equal(planned, solvers)  # (one rule: solver.limits_and_rest)
    np.testing.assert_array_equal(model.upper, solver.upper)
    assert model.upper[1] == 0.5 == model.rest_posture[1]
    assert solver.tree is model.tree is arm7.tree("base_link", "tool0")  # one tree per description
    assert model.rest_posture[3] == model.lower[3]
    policy = IKPolicy(["tool0"], settings)
    policy.install(model)
    assert not policy.model_state.ready
    poses = policy.tip_poses()
    np.testing.assert_allclose(
        poses["tool0"], arm7.forward(dict(zip(JOINTS, model.rest_posture)), "tool0", "base_link"), atol=1e-12
    )


def test_goals_sent_before_the_solver_is_ready_are_kept_latest_per_tip_and_answered(arm7):
    settings = settings_for(arm7)
    policy = IKPolicy(["tool0"], settings)
    model = plan_model(arm7, settings)
    policy.install(model)
    rng = np.random.default_rng(7)
    goals = [
        arm7.forward(dict(zip(JOINTS, rng.uniform(model.lower, model.upper))), "tool0", "base_link")
        for _ in range(3)
    ]
    for goal in goals:
        reply = policy.receive_goal(GoalRequest("tool0", goal), now=0.0)
        assert reply.status.reason == "queued" and reply.command is None
    waiting = policy.attach_solver(build_solver(model))
    assert policy.model_state.ready and len(waiting) == 1 and waiting[0].pose is goals[-1]
    reply = policy.receive_goal(waiting[0], now=0.0)
    assert reply.status.success and reached_error(arm7, reply.command.q, goals[-1]) < 1e-5
    assert policy.commit(reply.command) is None
    np.testing.assert_array_equal(policy.motion.state, reply.command.q)


def test_goals_kept_for_a_solver_that_could_not_be_built_are_answered_with_the_reason(arm7):
    settings = settings_for(arm7)
    policy = IKPolicy(["tool0"], settings)
    policy.install(plan_model(arm7, settings))
    policy.receive_goal(GoalRequest("tool0", np.eye(4)), now=0.0)
    replies = policy.preparation_failed(MemoryError("out of memory"))
    assert [reply.status.reason for reply in replies] == ["no_solver"]
    assert "could not be built: out of memory" in replies[0].status.message and policy.pending == {}
    assert policy.model_state.description_error is None  # the description itself was fine
    assert policy.receive_goal(GoalRequest("tool0", np.eye(4)), now=0.0).status.reason == "no_solver"
    policy.install(plan_model(arm7, settings))  # a new description: its solver is prepared again
    assert policy.receive_goal(GoalRequest("tool0", np.eye(4)), now=0.0).status.reason == "queued"


def test_a_refused_description_while_the_solver_is_prepared_still_keeps_goals(arm7):
    settings = settings_for(arm7)
    policy = IKPolicy(["tool0"], settings)
    model = plan_model(arm7, settings)
    policy.install(model)
    policy.model_state.description_error = (
        "robot description from /robot_description refused: malformed URDF XML"
    )
    assert policy.receive_goal(GoalRequest("tool0", np.eye(4)), now=0.0).status.reason == "queued"
    assert len(policy.attach_solver(build_solver(model))) == 1


def test_goals_are_refused_with_a_reason_when_paused_or_without_a_description(arm7):
    policy = IKPolicy(["tool0"], settings_for(arm7))
    reply = policy.receive_goal(GoalRequest("tool0", np.eye(4)), now=0.0)
    assert reply.status.reason == "no_robot_description" and "robot_description" in reply.status.message
    policy = ready_policy(arm7)
    message, stop = policy.set_enabled(False)
    assert "paused" in message and stop is None
    reply = policy.receive_goal(GoalRequest("tool0", np.eye(4)), now=0.0)
    assert reply.status.reason == "paused" and reply.command is None
    assert policy.set_enabled(True)[0].startswith("enabled")


def test_frames_a_link_through_the_model_another_through_tf_or_refused_naming_it(arm7):
    policy = ready_policy(arm7)
    q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
    policy.joint_states.receive(JOINTS, q, now=0.0)
    offset = np.eye(4)
    offset[2, 3] = 0.05
    goal = policy.goal_in_base(GoalRequest("tool0", offset, "tool0"), q, None)
    np.testing.assert_allclose(goal, arm7.forward(dict(zip(JOINTS, q)), "tool0", "base_link") @ offset)

    world_to_base = np.eye(4)
    world_to_base[:3, 3] = [1.0, -2.0, 0.5]
    asked = []

    def lookup(frame, base, stamp):  # as ik_node.ros.frames' tf2 lookup answers: T_base_frame
        asked.append((frame, base, stamp))
        return np.linalg.inv(world_to_base)

    target = arm7.forward(dict(zip(JOINTS, q + 0.1)), "tool0", "base_link")
    in_world = world_to_base @ target
    reply = policy.receive_goal(GoalRequest("tool0", in_world, "map", stamp="t0"), now=0.0, transform=lookup)
    assert asked == [("map", "base_link", "t0")]
    assert reply.status.success and reached_error(arm7, reply.command.q, target) < 1e-5

    reply = policy.receive_goal(GoalRequest("tool0", in_world, "map"), now=0.0, transform=None)
    assert reply.status.reason == "invalid_goal" and reply.command is None
    assert "'map'" in reply.status.message and "tf2_ros is not available" in reply.status.message

    def missing(frame, base, stamp):
        raise IKNodeError(f"no transform from frame '{frame}' to the base '{base}'")

    reply = policy.receive_goal(GoalRequest("tool0", in_world, "odom"), now=0.0, transform=missing)
    assert reply.status.reason == "invalid_goal" and "no transform from frame 'odom'" in reply.status.message


def test_seed_is_fresh_joint_states_else_the_last_command_with_one_stale_warning(arm7):
    policy = ready_policy(arm7, joint_state_timeout=0.5)
    q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
    assert policy.joint_states.receive(JOINTS, q, now=10.0) is None
    np.testing.assert_array_equal(policy.current(10.2)[0], q)
    command = Command(q + 0.05, None, q)
    assert policy.commit(command) is None
    seed, warning = policy.current(11.0)
    np.testing.assert_array_equal(seed, command.q)
    assert "older than joint_state_timeout" in warning
    assert policy.current(11.5)[1] is None  # once
    assert "names but" in policy.joint_states.receive(JOINTS, q[:3], now=12.0)


def test_track_steps_stay_within_the_velocity_limits_and_end_with_one_stop(arm7):
    policy = ready_policy(arm7, mode="track", publish_rate=50.0)
    model = policy.model_state.model
    start = model.rest_posture.copy()
    policy.commit(Command(start, None, start))
    target = arm7.forward(dict(zip(JOINTS, start + 0.4)), "tool0", "base_link")
    reply = policy.receive_goal(GoalRequest("tool0", target), now=0.0)
    assert reply.status.success and reply.command is None  # track mode: steps follow
    steps = 0
    while True:
        reply = policy.track_step(now=0.0)
        if reply.command is None:
            break
        assert np.all(np.abs(reply.command.velocity) <= model.max_velocity * (1 + 1e-9))
        assert policy.commit(reply.command) is None
        steps += 1
        assert steps < 1000
    assert not np.any(policy.motion.last_velocity)  # the last command was the stop
    assert reached_error(arm7, policy.motion.last_command, target) < 1e-5


def test_the_limit_guard_refuses_a_command_outside_the_active_limits_and_keeps_the_last(arm7):
    policy = ready_policy(arm7, **{"joint_limits.joint1.max_position": 0.5})
    good = policy.model_state.model.rest_posture.copy()
    assert policy.commit(Command(good, None, good)) is None
    bad = good.copy()
    bad[0] = 0.6
    violation = policy.commit(Command(bad, None, good))
    assert "joint 'joint1'" in violation and "outside its limits" in violation
    np.testing.assert_array_equal(policy.motion.last_command, good)


def test_reset_forgets_goals_and_the_last_command(arm7):
    policy = ready_policy(arm7)
    assert policy.reset() == (True, "goals forgotten; the next goal is seeded from /joint_states")
    target = arm7.forward(
        dict(zip(JOINTS, policy.model_state.model.rest_posture + 0.2)), "tool0", "base_link"
    )
    reply = policy.receive_goal(GoalRequest("tool0", target), now=0.0)
    policy.commit(reply.command)
    policy.reset()
    assert policy.goals == {} and policy.motion.last_command is None
    assert IKPolicy(["tool0"], policy.model_state.settings).reset()[0] is False


def test_a_run_time_change_that_widens_a_limit_beyond_the_urdf_is_refused_naming_it(arm7):
    settings = settings_for(arm7)
    wider = replace(settings, values={**settings.values, "joint_limits.joint1.max_position": 10.0})
    with pytest.raises(IKNodeError, match="joint1"):
        plan_model(arm7, wider, frozenset({"joint_limits.joint1.max_position"}))
    with pytest.raises(IKNodeError, match="command_joints"):
        plan_model(arm7, replace(settings, command_joints=("joint1", "gripper")))


def test_the_tip_parameters_make_the_solver_s_task(arm7):
    """tip_tasks (axis names too), tip_task_axes and tip_offsets become the tip's TipTask, with the
    tolerances; without them the full pose in the tip's axes at its origin."""
    model = plan_model(arm7, settings_for(arm7, position_tolerance=1e-4))
    assert model.options.tasks == {"tool0": TipTask("pose", position_tolerance=1e-4)}
    settings = settings_for(
        arm7,
        orientation_tolerance=2e-3,
        **{"tip_tasks.tool0": "vz", "tip_task_axes.tool0": "base", "tip_offsets.tool0": [0.0, 0.0, 0.1]},
    )
    task = plan_model(arm7, settings).options.tasks["tool0"]
    assert task == TipTask(axes="base", offset=(0, 0, 0.1), kind="vz", orientation_tolerance=2e-3)
    assert task.rows.tolist() == [2]


def test_an_untouched_goal_marker_is_a_goal_the_robot_already_meets(arm7):
    """With ``tip_offsets`` a goal is the pose of the offset point (the tip's axes, moved by the
    offset in the tip's frame). The goal marker is shown at ``tip_poses`` of the current state
    (as the node does), and so is the reached arrow: releasing the marker untouched sends a goal
    the current joints meet, and the robot stays."""
    offset = [0.02, -0.03, 0.15]  # [m] in tool0's frame
    policy = ready_policy(arm7, **{"tip_offsets.tool0": offset})
    q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
    policy.joint_states.receive(JOINTS, q, now=0.0)
    marker = policy.tip_poses(policy.current(0.0)[0])["tool0"]
    point = np.eye(4)
    point[:3, 3] = offset
    np.testing.assert_allclose(
        marker, arm7.forward(dict(zip(JOINTS, q)), "tool0", "base_link") @ point, atol=1e-12
    )
    reply = policy.receive_goal(GoalRequest("tool0", marker), now=0.0)
    assert reply.status.success and reply.command is not None
    np.testing.assert_allclose(reply.command.q, q, atol=1e-9)


@pytest.mark.parametrize(
    "name, value, refusal",
    [
        ("tip_tasks.tool0", "vz up", "parameter tip_tasks.tool0 must be one of ['pose', 'position', "),
        ("tip_task_axes.tool0", "world", "parameter tip_task_axes.tool0 must be one of ['tip', 'base']"),
        ("tip_offsets.tool0", [0.0, 0.1], "parameter tip_offsets.tool0 must have 3 values [m]"),
        ("tip_offsets.tool0", [0.0, math.nan, 0.1], "parameter tip_offsets.tool0 must be finite numbers [m]"),
    ],
)
def test_a_bad_tip_parameter_is_refused_naming_it(arm7, name, value, refusal):
    """By the planned model and by a run-time change (the policy's candidate)."""
    with pytest.raises(IKNodeError) as refused:
        plan_model(arm7, settings_for(arm7, **{name: value}))
    assert str(refused.value).startswith(refusal), str(refused.value)
    policy = IKPolicy(["tool0"], settings_for(arm7))
    policy.install(plan_model(arm7, policy.model_state.settings))
    with pytest.raises(IKNodeError) as refused:
        policy.model_state.candidate({**policy.model_state.settings.values, name: value}, frozenset({name}))
    assert str(refused.value).startswith(refusal), str(refused.value)


# ---------------------------------------------------------------- a floating base (issue 17)

HUMANOID_TIPS = ["left_foot", "right_foot", "left_hand"]


@pytest.fixture(scope="module")
def floating_humanoid():
    from ik_node import load_robot
    from ik_node.description.catalogue import URDF_DIR

    return load_robot(URDF_DIR / "humanoid.urdf", root_joint="floating")


def floating_policy(robot, **overrides) -> IKPolicy:
    """A ready policy for the humanoid's floating base (world) to both feet and the left hand,
    with the per-joint parameters the node declares (joint_parameter_defaults: 1-DOF joints)."""
    from ik_node.decisions.parameters import joint_parameter_defaults

    values = {spec.name: spec.default for spec in NODE_PARAMETERS}
    values.update(root_joint="floating", base_link="world", tip_links=HUMANOID_TIPS)
    values.update(joint_parameter_defaults(robot.tree("world", HUMANOID_TIPS)))
    values.update(overrides)
    settings = NodeSettings.from_values(values)
    policy = IKPolicy(HUMANOID_TIPS, settings)
    model = plan_model(robot, settings)
    policy.install(model)
    policy.attach_solver(build_solver(model))
    return policy


def test_a_floating_base_has_no_per_joint_parameters_unit_rest_and_the_base_velocity_limits(
    floating_humanoid,
):
    policy = floating_policy(floating_humanoid, base_max_linear_velocity=0.5, base_max_angular_velocity=2.0)
    model = policy.model_state.model
    tree = model.tree
    assert model.joint_names[:7] == tuple(f"root_joint/{s}" for s in ("x", "y", "z", "qx", "qy", "qz", "qw"))
    assert model.layout.names == tuple(name for name in tree.joint_names if "/" not in name)
    assert [joint.name for joint in model.layout.multi_dof] == ["root_joint"]
    np.testing.assert_array_equal(model.rest_posture[:7], [0, 0, 0, 0, 0, 0, 1])  # the origin, unit
    assert np.all(np.isinf(model.lower[:7])) and np.all(np.isinf(model.upper[:7]))
    np.testing.assert_array_equal(model.max_velocity[:6], [0.5, 0.5, 0.5, 2.0, 2.0, 2.0])  # vx..vz, wx..wz
    assert len(model.max_velocity) == len(tree.tangent_names) == len(tree.joint_names) - 1
    assert set(model.options.joint_weights) == set(model.layout.names)
    assert list(model.command_order) == list(model.layout.configuration)  # command_joints: 1-DOF ones
    with pytest.raises(IKNodeError, match="command_joints must name each joint of the chain"):
        plan_model(floating_humanoid, replace(policy.model_state.settings, command_joints=("root_joint/x",)))


def test_a_floating_base_is_seeded_from_the_last_command_never_from_joint_states(floating_humanoid):
    policy = floating_policy(floating_humanoid)
    model = policy.model_state.model
    q = model.rest_posture.copy()
    q[:7] = [0.2, -0.1, 0.8, 0.0, 0.0, math.sin(0.3), math.cos(0.3)]
    assert policy.commit(Command(q, None, q)) is None
    names = [*model.layout.names, "root_joint/x", "root_joint/qw"]
    values = [*(q[model.layout.configuration] + 0.01), 5.0, 0.0]
    assert policy.joint_states.receive(names, values, now=1.0) is None
    seed, _ = policy.current(1.1)
    np.testing.assert_array_equal(seed[:7], q[:7])  # the base: the last command's
    np.testing.assert_allclose(seed[model.layout.configuration], q[model.layout.configuration] + 0.01)
    policy.reset()
    np.testing.assert_array_equal(policy.current(1.2)[0][:7], model.rest_posture[:7])  # then the rest


def test_track_steps_of_a_floating_base_keep_the_quaternion_unit_and_every_velocity_limit(floating_humanoid):
    policy = floating_policy(floating_humanoid, mode="track", publish_rate=50.0)
    model, tree = policy.model_state.model, policy.model_state.model.tree
    start = model.rest_posture.copy()
    start[:7] = [0.0, 0.0, 0.8, 0.0, 0.0, 0.0, 1.0]
    policy.commit(Command(start, None, start))
    target = start.copy()
    target[:7] = [0.3, 0.1, 0.9, math.sin(0.4), 0.0, math.sin(0.3), math.cos(0.5)]
    target = tree.normalized(target)
    target[model.layout.configuration] += 0.1
    goals = {tip: tree.forward(target, tip) for tip in HUMANOID_TIPS}
    for tip, goal in goals.items():
        reply = policy.receive_goal(GoalRequest(tip, goal), now=0.0)
        assert reply.status.success, reply.status
    steps = 0
    while (reply := policy.track_step(now=0.0)).command is not None:
        command = reply.command
        assert command.velocity.shape == (len(tree.tangent_names),)
        assert np.all(np.abs(command.velocity) <= model.max_velocity * (1 + 1e-9))
        assert abs(np.linalg.norm(command.q[3:7]) - 1) < 1e-12
        # the step is the velocity integrated over the period, on the manifold
        np.testing.assert_allclose(
            tree.integrate(command.previous, command.velocity / 50.0), command.q, atol=1e-12
        )
        assert policy.commit(command) is None
        steps += 1
        assert steps < 2000
    assert steps > 20 and not np.any(policy.motion.last_velocity)  # many steps, then the stop
    for tip, goal in goals.items():
        reached = tree.forward(policy.motion.last_command, tip)
        assert np.linalg.norm(reached[:3, 3] - goal[:3, 3]) < 1e-5, tip


# ------------------------------------------------------------------ collisions (issue 18)

SRDF = """<robot name="arm7"><disable_collisions link1="link1" link2="link2" reason="Adjacent"/></robot>"""
#: A sphere and a box by parameter (``obstacle_names``, ``obstacles.<name>.*``).
OBSTACLE_PARAMETERS = {
    "obstacle_names": ["ball", "table"],
    "obstacles.ball.type": "sphere",
    "obstacles.ball.size": [0.1],
    "obstacles.ball.pose": [0.5, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0],
    "obstacles.table.type": "box",
    "obstacles.table.size": [1.0, 1.0, 0.02],
    "obstacles.table.pose": [0.0, 0.0, -0.3, 0.0, 0.0, 0.0, 1.0],
}


class FailingSolver:
    """A real solver whose every answer is reported failed with ``reason`` (e.g. 'collision', as
    the solver reports a goal reached only in collision; 'timeout')."""

    def __init__(self, solver, reason: str):
        self.solver, self.reason = solver, reason

    def __getattr__(self, name):
        return getattr(self.solver, name)

    def solve(self, targets, seed=None, timeout=None):
        result = self.solver.solve(targets, seed=seed, timeout=timeout)
        return replace(result, success=False, reason=self.reason)


@pytest.mark.parametrize("mode", ["solve", "track"])
def test_a_goal_without_a_collision_free_answer_publishes_nothing_even_best_effort(arm7, mode):
    """The status says 'collision'; no command (solve mode) and no new joint goal (track mode):
    the last command stays, although publish_best_effort would publish other failures."""
    policy = ready_policy(arm7, publish_best_effort=True, mode=mode)
    policy.model_state.model = replace(
        policy.model_state.model, solver=FailingSolver(policy.model_state.model.solver, COLLISION)
    )
    q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
    goal = arm7.forward(dict(zip(JOINTS, q)), "tool0", "base_link")
    reply = policy.receive_goal(GoalRequest("tool0", goal), 0.0)
    assert (reply.status.success, reply.status.reason) == (False, "collision")
    assert reply.command is None and policy.motion.joint_goal is None
    assert "no collision-free solution" in reply.warning and "the last one stays" in reply.warning


def test_the_collision_parameters_reach_the_solver_s_options(arm7):
    settings = settings_for(arm7, self_collision=True, collision_margin=0.02, robot_description_semantic=SRDF,
                            **OBSTACLE_PARAMETERS)  # fmt: skip
    options = plan_model(arm7, settings, semantic=SRDF).options
    assert (options.self_collision, options.collision_margin, options.srdf) == (True, 0.02, SRDF)
    assert [(o.name, o.kind) for o in options.obstacles] == [("ball", "sphere"), ("table", "box")]
    off = plan_model(arm7, settings_for(arm7, robot_description_semantic=SRDF), semantic=SRDF).options
    assert off.self_collision is False and off.srdf is None  # (no SRDF to read without self-collision)
    assert off.obstacles == ()


def test_the_srdf_is_the_parameter_else_the_topic_s_and_a_bad_one_is_refused_naming_its_source(arm7):
    settings = settings_for(arm7, self_collision=True)
    policy = IKPolicy(["tool0"], settings)
    policy.install(plan_model(arm7, settings))
    model_state = policy.model_state
    with pytest.raises(IKNodeError, match=r"/robot_description_semantic is not well-formed SRDF XML"):
        model_state.receive_semantic("<robot><disable", "/robot_description_semantic")
    assert model_state.semantic_topic == ""
    model = model_state.receive_semantic(
        SRDF, "/robot_description_semantic"
    )  # (not ready: planned, no solver)
    assert model is not None and model.solver is None and model.options.srdf == SRDF
    assert model_state.semantic_description == SRDF
    parameter = SRDF.replace("link2", "link3")
    model_state.settings = settings_for(arm7, self_collision=True, robot_description_semantic=parameter)
    assert model_state.receive_semantic(SRDF, "/robot_description_semantic") is None  # the parameter wins
    assert model_state.semantic_description == parameter and model_state.plan(arm7).options.srdf == parameter
    model_state.settings = settings_for(arm7)  # self_collision off: kept for later, nothing rebuilt
    assert model_state.receive_semantic(SRDF, "/robot_description_semantic") is None
    assert model_state.semantic_topic == SRDF


def test_the_topic_s_obstacles_follow_the_parameters_and_collisions_are_checked_with_any(arm7):
    from ik_node import Obstacle

    settings = settings_for(arm7, **OBSTACLE_PARAMETERS)
    policy = IKPolicy(["tool0"], settings)
    policy.install(plan_model(arm7, settings))
    model_state = policy.model_state
    assert model_state.checks_collisions  # (obstacles without self_collision)
    box = Obstacle.box((0.1, 0.1, 0.1), (0.3, 0.3, 0.3), "scene/0")
    model_state.set_topic_obstacles({"scene/0": box})
    assert [o.name for o in model_state.obstacles] == ["ball", "table", "scene/0"]
    assert [o.name for o in model_state.plan(arm7).options.obstacles] == ["ball", "table", "scene/0"]
    assert not IKPolicy(["tool0"], settings_for(arm7)).model_state.checks_collisions


def test_frame_pose_of_the_base_a_link_and_a_tf_frame(arm7):
    policy = ready_policy(arm7)
    q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
    np.testing.assert_array_equal(policy.frame_pose("", None, q, None), np.eye(4))
    np.testing.assert_array_equal(policy.frame_pose("/base_link", None, q, None), np.eye(4))
    np.testing.assert_allclose(
        policy.frame_pose("link4", None, q, None), arm7.forward(dict(zip(JOINTS, q)), "link4", "base_link")
    )
    with pytest.raises(IKNodeError, match=r"obstacle marker frame 'map' is not a link"):
        policy.frame_pose("map", None, q, None, "obstacle marker")


def test_a_run_time_change_whose_solver_cannot_be_built_is_refused_saying_why(arm7, monkeypatch):
    """(e.g. self_collision without an optional package the collision model needs): the change is
    refused as a bad value is, and the solver in use stays."""
    import ik_node.decisions.planning

    policy = ready_policy(arm7)
    solver = policy.model_state.model.solver

    def missing(model):
        raise ModuleNotFoundError("No module named 'scipy'")

    monkeypatch.setattr(ik_node.decisions.planning, "build_solver", missing)
    values = dict(policy.model_state.settings.values, self_collision=True)
    with pytest.raises(IKNodeError, match=r"could not be built: ModuleNotFoundError: No module named"):
        policy.model_state.candidate(values, frozenset({"self_collision"}))
    assert policy.model_state.model.solver is solver


# ------------------------------------------------------------------ a fixed branch (issue 30)

#: A branch of arm6's closed form, its words in another order than its kernel's
#: (three_parallel_two_intersecting labels shoulder, wrist, elbow).
BRANCH = "elbow- shoulder+ wrist+"


@pytest.fixture(scope="module")
def arm6():
    from ik_node import load_robot
    from ik_node.description.catalogue import URDF_DIR

    return load_robot(URDF_DIR / "arm6.urdf")


def test_a_fixed_branch_answers_each_goal_with_its_solution_on_it_nearest_the_current_joints(arm6):
    """On arm6 (a closed form: UR geometry): every goal with a solution on ``BRANCH`` is answered
    with it (by the model's FK, the label of its row in the complete set), the nearest of the
    branch's solutions (the 2π variants of the last joint share its label) to the joint state;
    a goal whose solutions are all on other branches publishes nothing, even best effort."""
    policy = ready_policy(arm6, branch=BRANCH, publish_best_effort=True)
    model, solver = policy.model_state.model, policy.model_state.model.solver
    names = list(model.joint_names)
    wanted = set(BRANCH.split())
    low, high = np.maximum(model.lower, -math.pi), np.minimum(model.upper, math.pi)
    rng = np.random.default_rng(30)
    answered = off_branch = 0
    for trial in range(30):
        current, q = rng.uniform(low, high), rng.uniform(low, high)
        goal = arm6.forward(dict(zip(names, q)), "tool0", "base_link")
        policy.joint_states.receive(names, current, now=float(trial))
        reply = policy.receive_goal(GoalRequest("tool0", goal), now=float(trial))
        every = solver.solve_all(goal, seed=current)
        rows = [row for row, labels in enumerate(every.labels) if set(labels) == wanted]
        if not rows:
            assert (reply.status.reason, reply.command) == ("off_branch", None), reply.status
            assert f"no solution on branch '{BRANCH}'" in reply.warning
            off_branch += 1
            continue
        assert reply.status.success and reply.command is not None, reply.status
        command = reply.command.q
        reached = arm6.forward(dict(zip(names, command)), "tool0", "base_link")
        assert np.abs(reached - goal).max() < 1e-5
        same = [row for row in range(len(every.q)) if np.abs(every.q[row] - command).max() < 1e-9]
        assert same and set(every.labels[same[0]]) == wanted
        distances = [np.sum((every.q[row] - current) ** 2) for row in rows]  # (joint weights 1)
        assert np.sum((command - current) ** 2) <= min(distances) + 1e-12
        assert policy.commit(reply.command) is None
        answered += 1
    assert answered >= 10 and off_branch >= 1, (answered, off_branch)


def test_a_fixed_branch_needs_a_closed_form_else_it_is_refused_naming_the_parameter(arm6, arm7):
    """arm7 (seven joints) has no closed form: setting ``branch`` to a label is refused naming the
    parameter, the value and the valid values, the model in use staying; set at start-up, each
    goal is refused with the same words, other changes are accepted, and 'nearest' answers
    again. A value that is no label is refused by its spec, listing the labels; on arm6, a change
    that leaves the chain without its closed form (a position-only task) is refused."""
    policy = ready_policy(arm7)
    model = policy.model_state.model
    with pytest.raises(IKNodeError) as refused:
        policy.model_state.candidate(
            {**policy.model_state.settings.values, "branch": BRANCH}, frozenset({"branch"})
        )
    message = str(refused.value)
    assert f"parameter branch '{BRANCH}'" in message and "closed form" in message, message
    assert "the only valid value is 'nearest'" in message and policy.model_state.model is model
    listed = (
        r"parameter branch must be 'nearest' or a branch label.*'shoulder\+ elbow\+ wrist\+'.*got 'elbow_up'"
    )
    closed_form = ready_policy(arm6)
    with pytest.raises(IKNodeError, match=listed):
        closed_form.model_state.candidate(
            {**closed_form.model_state.settings.values, "branch": "elbow_up"}, frozenset({"branch"})
        )
    closed_form = ready_policy(arm6, branch=BRANCH)  # a change that takes the closed form away: refused
    with pytest.raises(
        IKNodeError, match=re.escape(f"parameter branch '{BRANCH}' needs a chain with a closed form")
    ):
        closed_form.model_state.candidate(
            {**closed_form.model_state.settings.values, "tip_tasks.tool0": "position"},
            frozenset({"tip_tasks.tool0"}),
        )

    policy = ready_policy(arm7, branch=BRANCH)  # (as from a parameter file)
    target = arm7.forward(
        dict(zip(JOINTS, policy.model_state.model.rest_posture + 0.2)), "tool0", "base_link"
    )
    reply = policy.receive_goal(GoalRequest("tool0", target), now=0.0)
    assert (reply.status.success, reply.status.reason, reply.command) == (False, "invalid_goal", None)
    assert f"parameter branch '{BRANCH}'" in reply.status.message and "closed form" in reply.status.message
    values = {**policy.model_state.settings.values, "timeout": 0.02}
    policy.apply(*policy.model_state.candidate(values, frozenset({"timeout"})))
    policy.apply(*policy.model_state.candidate({**values, "branch": "nearest"}, frozenset({"branch"})))
    reply = policy.receive_goal(GoalRequest("tool0", target), now=0.0)
    assert reply.status.success and reached_error(arm7, reply.command.q, target) < 1e-5


def test_one_tips_goal_is_checked_once_and_refused_as_a_mapping_of_it_is(arm7):
    """``solve_goal`` hands one tip's pose to the solver as it is (the search kernel checks it):
    the same answer as ``{tip: pose}`` and, for a pose the kernels cannot use (beyond 1e9 m, not
    a rigid transform), the same error naming the tip."""
    from ik_node.decisions.branch_choice import solve_goal
    from ik_node.errors import TargetError

    solver = build_solver(plan_model(arm7, settings_for(arm7)))
    rest = solver.rest_posture
    goal = solver.tip_poses(rest + 0.1)[0]
    direct = solve_goal(solver, {"tool0": goal}, rest, 0.05, "nearest")
    mapped = solver.solve({"tool0": goal}, seed=rest, timeout=0.05)
    assert direct.success and np.array_equal(direct.q, mapped.q)
    far, sheared = np.eye(4), np.eye(4)
    far[0, 3], sheared[0, 1] = 2e9, 0.5
    for bad in (far, sheared):
        with pytest.raises(TargetError) as from_goal:
            solve_goal(solver, {"tool0": bad}, rest, 0.05, "nearest")
        with pytest.raises(TargetError) as from_mapping:
            solver.solve({"tool0": bad}, seed=rest)
        assert str(from_goal.value) == str(from_mapping.value) and "tool0" in str(from_goal.value)


# ---------------------------------------------------------------- twists and jogs (the servo)


def test_streams_are_refused_in_solve_mode_and_wait_while_the_kernels_are_prepared(arm7):
    """Solve mode: a twist is refused saying to switch (no motion). Track mode before the solver
    is attached: the arm holds (status waiting_for_kernels); once attached, the twist moves it."""
    solve = ready_policy(arm7)
    reply = solve.receive_stream(TwistRequest((0.05, 0, 0, 0, 0, 0)), now=0.0)
    assert reply.servo_status.code == "refused" and "track mode" in reply.servo_status.text
    assert solve.motion.stream is None and solve.track_step(now=0.0).command is None
    settings = settings_for(arm7, mode="track")
    policy = IKPolicy(["tool0"], settings)
    model = plan_model(arm7, settings)
    policy.install(model)
    reply = policy.receive_stream(TwistRequest((0.05, 0, 0, 0, 0, 0)), now=0.0)
    assert reply.servo_status.code == "waiting_for_kernels" and policy.motion.stream is None
    policy.attach_solver(build_solver(model))
    assert policy.receive_stream(TwistRequest((0.05, 0, 0, 0, 0, 0)), now=0.0).servo_status is None
    step = policy.track_step(now=0.0)
    assert step.command is not None and step.servo_status.code == "ok"


def test_a_twist_stream_moves_then_times_out_to_rest_and_a_jog_wins_over_it(arm7):
    """At 100 Hz: a twist moves the tip along the base x at 5 cm/s (FK of consecutive commands);
    a jog that comes later wins; after incoming_command_timeout without messages the arm comes to
    rest (status stream_timeout) and no command follows at rest."""
    policy = ready_policy(arm7, mode="track", publish_rate=100.0)
    start = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
    policy.commit(Command(start, None, start))
    policy.receive_stream(TwistRequest((0.05, 0, 0, 0, 0, 0), "base_link"), now=0.0)
    commands = []
    for k in range(10):
        commands.append(policy.track_step(now=0.01 * k).command)
        assert policy.commit(commands[-1]) is None
    points = [arm7.forward(dict(zip(JOINTS, c.q)), "tool0", "base_link")[:3, 3] for c in commands]
    np.testing.assert_allclose((points[-1] - points[-2]) * 100.0, [0.05, 0, 0], atol=5e-4)
    policy.receive_stream(JogRequest(("joint1",), (0.2,)), now=0.1)
    jog = policy.track_step(now=0.1).command
    assert jog.velocity[0] == pytest.approx(0.2) and not np.any(jog.velocity[1:])
    policy.commit(jog)
    timed_out = policy.track_step(now=0.25)
    assert timed_out.servo_status.code == "stream_timeout" and not np.any(timed_out.command.velocity)
    policy.commit(timed_out.command)
    assert policy.track_step(now=0.26).command is None and policy.motion.stream is None


def test_a_step_later_than_its_period_is_replaced_by_a_step_to_rest_and_counted(floating_humanoid):
    """The solver's kernels as plain Python (as right after an install, several hundred times
    slower) on the floating humanoid at 1 kHz: a twist step cannot meet its 1 ms period, so a step
    to rest is published instead (status late, counted); the commands stay within the limits."""
    from ik_node.solver import kernels

    policy = floating_policy(floating_humanoid, mode="track", publish_rate=1000.0)
    solver = policy.model_state.model.solver
    solver._install(kernels.python_kernels(), solver.problem)  # (what serves while the kernels compile)
    start = policy.model_state.model.rest_posture
    moving = np.zeros(policy.model_state.model.tangent_size)
    moving[-1] = 0.1
    policy.commit(Command(start, moving, start))
    policy.receive_stream(TwistRequest((0.05, 0, 0, 0, 0, 0)), now=0.0)
    reply = policy.track_step(now=0.0)
    assert reply.servo_status.code == "late" and policy.motion.missed_deadlines == 1
    np.testing.assert_allclose(reply.command.velocity, 0.0)  # (no acceleration limit: at rest at once)
    assert policy.commit(reply.command) is None
