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
