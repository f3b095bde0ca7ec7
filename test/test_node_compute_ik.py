"""The node's ``compute_ik`` (``moveit_msgs/srv/GetPositionIK``) through real service calls: answers
reaching the pose (pinocchio's FK where importable, else the model's own), the request's
robot_state as the seed, MoveIt's error codes with a message for bad requests while the node
keeps serving, the name from ``compute_ik_service_name``, and never a command.

moveit_msgs is not on PyPI: where it is not importable these tests skip (CI), except the one
checking that the node then starts without the service and says why. The answer's logic is
tested everywhere in test_compute_ik.py.
"""

from __future__ import annotations

import importlib.util
import time

import numpy as np
import pytest
from ros_harness import CONFIG_DIR, WAIT, running_node
from test_compute_ik import IndependentFK, pose_errors
from test_node import parameter_limits

from ik_node.decisions import compute_ik as codes
from ik_node.decisions.conversions import pose_to_fields

JOINTS = [f"joint{i}" for i in range(1, 8)]
Q_START = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
ARM7 = ("--params-file", str(CONFIG_DIR / "arm7.yaml"))
HAS_MOVEIT_MSGS = importlib.util.find_spec("moveit_msgs") is not None
NO_MOVEIT_MSGS = (
    "moveit_msgs is not importable (it comes with MoveIt, apt install ros-$ROS_DISTRO-moveit-msgs; "
    "PyPI does not have it): the compute_ik service is not served"
)

pytestmark = pytest.mark.usefixtures("ros_context")  # (conftest.py)


def moveit_srv():
    return pytest.importorskip("moveit_msgs.srv", reason=NO_MOVEIT_MSGS)


def request_for(matrix=None, link="", frame="base_link", names=(), positions=(), timeout=0.0, **more):
    """A GetPositionIK request for ``matrix`` (4x4) of ``link`` in ``frame``."""
    request = moveit_srv().GetPositionIK.Request()
    ik = request.ik_request
    ik.group_name = "arm"
    ik.ik_link_name = link
    if matrix is not None:
        ik.pose_stamped.header.frame_id = frame
        position, quaternion = pose_to_fields(matrix)
        p, o = ik.pose_stamped.pose.position, ik.pose_stamped.pose.orientation
        p.x, p.y, p.z = position
        o.x, o.y, o.z, o.w = quaternion
    ik.robot_state.joint_state.name = list(names)
    ik.robot_state.joint_state.position = [float(v) for v in positions]
    ik.timeout.sec, ik.timeout.nanosec = int(timeout), int(round((timeout % 1.0) * 1e9))
    for name, value in more.items():
        setattr(ik, name, value)
    return request


class IKClient:
    """A GetPositionIK client on the test's client node."""

    def __init__(self, client, name="/ik_node/compute_ik"):
        self.node = client.node
        self.service = self.node.create_client(moveit_srv().GetPositionIK, name)
        assert self.service.wait_for_service(timeout_sec=WAIT), f"no {name} service"

    def call(self, request, timeout=WAIT):
        future = self.service.call_async(request)
        deadline = time.monotonic() + timeout
        import rclpy

        while not future.done() and time.monotonic() < deadline:
            rclpy.spin_once(self.node, timeout_sec=0.01)
        assert future.done(), "compute_ik did not answer"
        return future.result()


@pytest.fixture(scope="module")
def fk(arm7):
    return IndependentFK(CONFIG_DIR.parent / "urdf" / "arm7.urdf", arm7)


@pytest.fixture(scope="module")
def arm7_service():
    moveit_srv()
    with running_node(*ARM7) as (process, client):
        yield process, client, IKClient(client)


def test_error_codes_are_moveit_s():
    error_codes = pytest.importorskip("moveit_msgs.msg", reason=NO_MOVEIT_MSGS).MoveItErrorCodes
    names = [name for name in codes.__all__ if name.isupper() and name != "MAX_TIMEOUT"]
    assert len(names) == 9
    for name in names:
        assert getattr(codes, name) == getattr(error_codes, name), name


def test_answers_reach_the_pose_from_the_request_s_seed_and_nothing_is_commanded(arm7_service, fk):
    process, client, service = arm7_service
    rng = np.random.default_rng(29)
    limits = parameter_limits()
    for _ in range(10):
        q = [rng.uniform(limits[name][0], limits[name][1]) for name in JOINTS]
        goal = fk(dict(zip(JOINTS, q)), "tool0")
        response = service.call(request_for(goal, names=JOINTS, positions=Q_START))
        assert response.error_code.val == codes.SUCCESS, response.error_code
        solution = response.solution.joint_state
        assert list(solution.name) == JOINTS
        assert max(pose_errors(fk(dict(zip(solution.name, solution.position)), "tool0"), goal)) < 1e-5
        for name, value in zip(solution.name, solution.position):
            assert limits[name][0] <= value <= limits[name][1], name
    goal = fk(dict(zip(JOINTS, Q_START + 0.1)), "tool0")
    response = service.call(request_for(goal, names=JOINTS, positions=Q_START + 0.1))
    np.testing.assert_allclose(response.solution.joint_state.position, Q_START + 0.1, atol=1e-9)  # the seed
    client.spin_for(0.3)
    assert client.commands == [], "compute_ik must never command the robot"


@pytest.mark.parametrize(
    ("change", "code", "named"),
    [
        ({"link": "elbow"}, codes.INVALID_LINK_NAME, "link 'elbow' is not a tip"),
        ({"frame": "nowhere"}, codes.FRAME_TRANSFORM_FAILURE, "frame 'nowhere'"),
        ({"nan": True}, codes.INVALID_GOAL_CONSTRAINTS, "position must be finite"),
        ({"empty": True}, codes.INVALID_GOAL_CONSTRAINTS, "holds no pose"),
        ({"names": ["joint1", "wheel"], "positions": [0.0, 0.0]}, codes.INVALID_ROBOT_STATE, "joint 'wheel'"),
        ({"names": ["joint3"], "positions": [float("nan")]}, codes.INVALID_ROBOT_STATE, "'joint3' is nan"),
    ],
)  # fmt: skip
def test_bad_requests_get_moveit_s_code_and_message_and_the_node_keeps_serving(arm7_service, fk, change,
                                                                              code, named):  # fmt: skip
    process, client, service = arm7_service
    goal = fk(dict(zip(JOINTS, Q_START)), "tool0")
    matrix = goal.copy()
    if change.pop("nan", False):
        matrix[0, 3] = np.nan
    if change.pop("empty", False):
        matrix = None
    fields = {"link": "", "frame": "base_link", "names": (), "positions": ()} | change
    response = service.call(request_for(matrix, **fields))
    assert response.error_code.val == code, response.error_code
    if "message" in type(response.error_code).get_fields_and_field_types():  # (not Humble's 2.2)
        assert named in response.error_code.message and response.error_code.source == "ik_node"
    assert list(response.solution.joint_state.name) == []
    response = service.call(request_for(goal))
    assert response.error_code.val == codes.SUCCESS, "the node stopped serving after a bad request"


def test_timeout_zero_is_the_node_s_own_and_an_unreachable_pose_is_no_ik_solution(arm7_service, fk):
    process, client, service = arm7_service
    goal = fk(dict(zip(JOINTS, Q_START)), "tool0")
    response = service.call(request_for(goal, timeout=0.0))
    assert response.error_code.val == codes.SUCCESS
    assert "timeout 0: the node's timeout parameter (0.05 s)" in response.error_code.message
    far = np.eye(4)
    far[:3, 3] = [3.0, 0.0, 0.0]
    response = service.call(request_for(far, timeout=0.01))
    assert response.error_code.val == codes.NO_IK_SOLUTION and "position error" in response.error_code.message


def test_the_service_name_follows_the_parameter():
    moveit_srv()
    with running_node(*ARM7, "-p", "compute_ik_service_name:=/compute_ik") as (process, client):
        service = IKClient(client, "/compute_ik")
        # (the module's node, named ik_node too, may still run: its ~/ready is not this one's)
        assert process.wait_for_log("ready: goals for", WAIT), process.log()
        goal = np.eye(4)
        goal[:3, 3] = [0.4, 0.1, 0.5]
        response = service.call(request_for(goal))
        assert response.error_code.val in (codes.SUCCESS, codes.NO_IK_SOLUTION)
        assert "serving moveit_msgs/srv/GetPositionIK on /compute_ik" in process.log()


@pytest.mark.skipif(HAS_MOVEIT_MSGS, reason="moveit_msgs is importable: the service itself is tested")
def test_without_moveit_msgs_the_node_starts_without_the_service_and_says_why_once(arm7):
    with running_node(*ARM7) as (process, client):
        goal = arm7.forward(dict(zip(JOINTS, Q_START)), "tool0", "base_link")
        assert client.send_goal_until(goal, lambda: client.commands), process.log()  # serving goals
        log = process.log()
        assert log.count("moveit_msgs is not importable") == 1, log
        assert "apt install ros-$ROS_DISTRO-moveit-msgs" in log
        assert ("/ik_node/compute_ik", ["moveit_msgs/srv/GetPositionIK"]) not in [
            (name, list(types)) for name, types in client.node.get_service_names_and_types()
        ]


def test_several_tips_and_a_floating_base_convert_both_ways():
    """query_of reads pose_stamped_vector with ik_link_names; respond writes a floating base's
    T_parent_child into multi_dof_joint_state (quaternion x y z w)."""
    srv = moveit_srv()
    from ik_node.decisions.compute_ik import IKAnswer
    from ik_node.ros.compute_ik_service import query_of, respond

    first, second = np.eye(4), np.eye(4)
    first[:3, 3], second[:3, 3] = [0.1, 0.2, 0.3], [-0.1, 0.2, 0.3]
    vector = request_for().ik_request
    vector.ik_link_names = ["left_tool0", "right_tool0"]
    for matrix in (first, second):
        stamped = request_for(matrix, frame="torso").ik_request.pose_stamped
        vector.pose_stamped_vector.append(stamped)
    query = query_of(vector)
    assert query.links == ("left_tool0", "right_tool0") and [p.frame for p in query.poses] == ["torso"] * 2
    assert [p.position for p in query.poses] == [(0.1, 0.2, 0.3), (-0.1, 0.2, 0.3)]
    base = np.eye(4)
    base[:3, :3] = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]  # a quarter turn about z
    base[:3, 3] = [0.2, -0.1, 0.8]
    answer = IKAnswer(codes.SUCCESS, "", ("joint1",), (0.5,), (("root_joint", "world", "pelvis", base),))
    response = srv.GetPositionIK.Response()
    respond(answer, response, response.solution.joint_state.header.stamp, "ik_node")
    multi_dof = response.solution.multi_dof_joint_state
    assert list(multi_dof.joint_names) == ["root_joint"] and multi_dof.header.frame_id == "world"
    transform = multi_dof.transforms[0]
    assert (transform.translation.x, transform.translation.y, transform.translation.z) == (0.2, -0.1, 0.8)
    rotation = transform.rotation
    np.testing.assert_allclose([rotation.x, rotation.y, rotation.z, rotation.w], [0, 0, 2**-0.5, 2**-0.5])
    assert list(response.solution.joint_state.name) == ["joint1"]


# --------------------------------------------------------------------------- compute_cartesian_path


def cartesian_request(waypoints, frame="base_link", link="tool0", names=JOINTS, positions=Q_START, **more):
    """A GetCartesianPath request through ``waypoints`` (4x4 each) of ``link`` in ``frame``."""
    from geometry_msgs.msg import Pose

    request = moveit_srv().GetCartesianPath.Request()
    request.header.frame_id = frame
    request.group_name = "arm"
    request.link_name = link
    request.start_state.joint_state.name = list(names)
    request.start_state.joint_state.position = [float(v) for v in positions]
    for matrix in waypoints:
        pose = Pose()
        position, quaternion = pose_to_fields(matrix)
        pose.position.x, pose.position.y, pose.position.z = position
        pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = quaternion
        request.waypoints.append(pose)
    request.max_step = 0.005
    for name, value in more.items():
        setattr(request, name, value)
    return request


def call(client, service_type, name: str, request):
    import rclpy

    caller = client.node.create_client(service_type, name)
    assert caller.wait_for_service(timeout_sec=WAIT), f"no {name} service"
    future = caller.call_async(request)
    deadline = time.monotonic() + WAIT
    while not future.done() and time.monotonic() < deadline:
        rclpy.spin_once(client.node, timeout_sec=0.01)
    assert future.done(), f"{name} did not answer"
    return future.result()


def test_compute_cartesian_path_answers_a_timed_straight_line_and_nothing_is_commanded(arm7_service, fk):
    pytest.importorskip("toppra", reason="timing a path needs toppra")
    process, client, _ = arm7_service
    start = fk(dict(zip(JOINTS, Q_START)), "tool0")
    goal = start.copy()
    goal[:3, 3] += [0.0, 0.06, -0.04]
    response = call(
        client,
        moveit_srv().GetCartesianPath,
        "/ik_node/compute_cartesian_path",
        cartesian_request([goal], jump_threshold=2.0, avoid_collisions=True),
    )
    assert response.error_code.val == codes.SUCCESS, response.error_code
    assert response.fraction == 1.0
    trajectory = response.solution.joint_trajectory
    assert list(trajectory.joint_names) == JOINTS
    np.testing.assert_allclose(trajectory.points[0].positions, Q_START, atol=1e-12)
    assert list(response.start_state.joint_state.name) == JOINTS
    times = [point.time_from_start.sec + 1e-9 * point.time_from_start.nanosec for point in trajectory.points]
    assert times[0] == 0.0 and np.all(np.diff(times) > 0.0)
    limits = parameter_limits()
    direction = (goal[:3, 3] - start[:3, 3]) / np.linalg.norm(goal[:3, 3] - start[:3, 3])
    for point in trajectory.points:
        reached = fk(dict(zip(JOINTS, point.positions)), "tool0")[:3, 3] - start[:3, 3]
        assert np.linalg.norm(reached - (reached @ direction) * direction) < 1e-3  # (on the line)
        for name, value in zip(JOINTS, point.positions):
            assert limits[name][0] <= value <= limits[name][1], name
        assert len(point.velocities) == len(point.accelerations) == 7
    assert max(pose_errors(fk(dict(zip(JOINTS, trajectory.points[-1].positions)), "tool0"), goal)) < 1e-5
    bad = call(
        client,
        moveit_srv().GetCartesianPath,
        "/ik_node/compute_cartesian_path",
        cartesian_request([goal], max_step=0.0),
    )
    assert bad.error_code.val == codes.FAILURE and not bad.solution.joint_trajectory.points
    if "message" in type(bad.error_code).get_fields_and_field_types():
        assert "max_step must be > 0" in bad.error_code.message
    client.spin_for(0.3)
    assert client.commands == [], "compute_cartesian_path must never command the robot"


# --------------------------------------------------------------------------- MoveIt's srv_kinematics_plugin


def plugin_request(robot, group: str, base: str, tips: dict, seed: dict):
    """The request MoveIt's ``srv_kinematics_plugin`` builds (moveit2,
    ``moveit_kinematics/srv_kinematics_plugin/src/srv_kinematics_plugin.cpp``,
    ``searchPositionIK``): ``avoid_collisions`` true, ``group_name``, the whole robot state
    (``robotStateToRobotStateMsg``: every variable of the robot, mimic joints among them, the
    joint state's frame the model frame, no stamp), the poses in the group's base frame with no
    stamp, one ``pose_stamped`` + ``ik_link_name`` for one tip, else ``pose_stamped_vector`` +
    ``ik_link_names``; ``timeout`` left at zero."""
    request = moveit_srv().GetPositionIK.Request()
    ik = request.ik_request
    ik.avoid_collisions = True
    ik.group_name = group
    state = ik.robot_state.joint_state
    state.header.frame_id = robot.root
    variables = [joint.name for joint in robot.joints.values() if joint.type != "fixed"]
    state.name = variables
    state.position = [float(seed.get(name, 0.0)) for name in variables]
    stamped = []
    for matrix in tips.values():
        pose = moveit_srv().GetPositionIK.Request().ik_request.pose_stamped
        pose.header.frame_id = base
        position, quaternion = pose_to_fields(matrix)
        pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = position
        o = pose.pose.orientation
        o.x, o.y, o.z, o.w = quaternion
        stamped.append(pose)
    if len(tips) > 1:
        ik.pose_stamped_vector = stamped
        ik.ik_link_names = list(tips)
    else:
        ik.pose_stamped = stamped[0]
        ik.ik_link_name = next(iter(tips))
    return request


def srdf_of(robot) -> str:
    """The SRDF a MoveIt user has: the Setup Assistant's disabled pairs (ik_node's copy of its
    rule, :func:`ik_node.collision.srdf.compute_disabled_pairs`)."""
    from ik_node.collision.srdf import compute_disabled_pairs

    pairs = compute_disabled_pairs(robot, samples=2000)
    elements = "".join(
        f'<disable_collisions link1="{a}" link2="{b}" reason="{why}"/>'
        for (a, b), why in sorted(pairs.items())
    )
    return f'<robot name="{robot.name}">{elements}</robot>'


@pytest.mark.parametrize(
    "name, group, base, tips",
    [
        ("arm7", "arm", "base_link", ("tool0",)),
        ("dual_arm", "arms", "base_link", ("left_tool0", "right_tool0")),
    ],
)
def test_the_srv_kinematics_plugin_s_requests_are_answered_collision_free_on_the_documented_set_up(
    tmp_path, name, group, base, tips
):
    """docs/node.md "MoveIt's IK solver": the node at ``/solve_ik`` (the plugin's default
    ``kinematics_solver_service_name``) with ``self_collision`` and the robot's SRDF. Every
    request the plugin would send for 20 random reachable poses is answered (SUCCESS, within the
    limits, reaching the poses by pinocchio's FK, collisions checked: free of self-collision by
    pinocchio + coal on the URDF's geometry with the SRDF's pairs left out)."""
    moveit_srv()
    for reference_library in ("pinocchio", "coal"):
        pytest.importorskip(
            reference_library, reason="the independent collision check needs pinocchio and coal"
        )
    import sys

    import yaml

    from ik_node import IKSolver, load_robot

    urdf = CONFIG_DIR.parent / "urdf" / f"{name}.urdf"
    robot = load_robot(urdf)
    srdf = srdf_of(robot)
    (tmp_path / "robot.srdf").write_text(srdf)
    parameters = tmp_path / "moveit_solver.yaml"
    parameters.write_text(
        yaml.safe_dump(
            {"/**": {"ros__parameters": {"compute_ik_service_name": "/solve_ik", "self_collision": True,
                                          "robot_description_semantic": srdf}}}
        )
    )  # fmt: skip
    fk = IndependentFK(urdf, robot)
    sys.path.insert(0, str(CONFIG_DIR.parent / "benchmark"))
    from collision_reference import ReferenceCollision

    solver = IKSolver(robot, base, list(tips), self_collision=True, srdf=srdf)  # (the node's, for the goals)
    reference = ReferenceCollision(
        urdf, srdf=tmp_path / "robot.srdf", base_link=base, joint_names=solver.joint_names
    )
    limits = parameter_limits(CONFIG_DIR / f"{name}.yaml")  # (the node's: tighter than the URDF's)
    lower = np.array([limits[joint][0] for joint in solver.joint_names])
    upper = np.array([limits[joint][1] for joint in solver.joint_names])
    rng = np.random.default_rng(7)
    config = ("--params-file", str(CONFIG_DIR / f"{name}.yaml"), "--params-file", str(parameters))
    with running_node(*config, tips=tips) as (process, client):
        service = IKClient(client, "/solve_ik")
        # (the module's node, named ik_node too, may still run: its ~/ready is not this one's)
        assert process.wait_for_log("ready: goals for", WAIT), process.log()
        answered = 0
        for _ in range(20):
            while True:  # (a reachable pose with a collision-free answer: the robot's own, sampled, clear
                # by the reference and by the solver's own, conservative capsules)
                q = rng.uniform(lower, upper)
                if reference.min_distance(q)[0] > 0.02 and solver.clearance(q) > 0.01:
                    break
            values = dict(zip(solver.joint_names, q))
            goals = {tip: fk(values, tip) for tip in tips}
            seed = dict(zip(solver.joint_names, rng.uniform(lower, upper)))
            response = service.call(plugin_request(robot, group, base, goals, seed))
            assert response.error_code.val == codes.SUCCESS, (
                answered,
                response.error_code,
                process.log()[-3000:],
            )
            if "message" in type(response.error_code).get_fields_and_field_types():
                assert "collisions not checked" not in response.error_code.message
            solution = dict(zip(response.solution.joint_state.name, response.solution.joint_state.position))
            for tip, goal in goals.items():
                assert max(pose_errors(fk(solution, tip), goal)) < 1e-5
            answer = np.array([solution[joint] for joint in solver.joint_names])
            assert np.all((lower <= answer) & (answer <= upper))
            assert reference.min_distance(answer)[0] > 0.0
            answered += 1
        assert answered == 20
        assert "serving moveit_msgs/srv/GetPositionIK on /solve_ik" in process.log()
