"""Collision-aware IK in the node (issue 18): obstacles from ``visualization_msgs/MarkerArray``
(:mod:`ik_node.ros.obstacle_messages`, without ROS), and the node through real topics: obstacles on
``~/obstacles`` and by parameter avoided (each answer's clearance checked independently, with
pinocchio + coal on the URDF's own collision geometry: ``benchmark/collision_reference.py``),
the reason ``collision`` on ``/diagnostics`` with the last command kept, ``~/collision_markers``,
and a malformed SRDF refused while the node keeps serving.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys

import numpy as np
import pytest
import yaml
from rclpy.qos import DurabilityPolicy, QoSProfile
from ros_harness import PACKAGE_ROOT, Client, NodeProcess
from std_msgs.msg import String
from visualization_msgs.msg import Marker, MarkerArray

from ik_node import IKSolver, Obstacle, load_robot
from ik_node.collision.srdf import compute_disabled_pairs
from ik_node.errors import IKNodeError
from ik_node.ros.obstacle_messages import MarkerObstacles, collision_markers, marker_obstacle

ARM7 = PACKAGE_ROOT / "urdf" / "arm7.urdf"
JOINTS = [f"joint{index}" for index in range(1, 8)]
#: The test's configuration: goals are the tool's pose here, the seed is here (/joint_states).
Q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
#: pinocchio + coal for the independent check (benchmark/collision_reference.py).
HAS_REFERENCE = all(importlib.util.find_spec(name) is not None for name in ("pinocchio", "coal"))
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)

# ------------------------------------------------------------------ MarkerArray -> obstacles


def marker(ns="scene", id=0, kind=Marker.SPHERE, action=Marker.ADD, frame="base_link",
           position=(0.4, 0.0, 0.5), quaternion=(0.0, 0.0, 0.0, 1.0),
           scale=(0.2, 0.2, 0.2)) -> Marker:  # fmt: skip
    message = Marker()
    message.header.frame_id = frame
    message.ns, message.id, message.type, message.action = ns, id, kind, action
    message.pose.position.x, message.pose.position.y, message.pose.position.z = position
    o = message.pose.orientation
    o.x, o.y, o.z, o.w = quaternion
    message.scale.x, message.scale.y, message.scale.z = scale
    return message


def in_base(frame, stamp):
    """The frames of these tests: the base, and 'shelf' 1 m up the base's z."""
    if frame in ("", "base_link"):
        return np.eye(4)
    if frame == "shelf":
        pose = np.eye(4)
        pose[2, 3] = 1.0
        return pose
    raise IKNodeError(f"obstacle marker frame '{frame}' is not a link of robot 'arm7'")


def test_sphere_cube_and_cylinder_markers_become_obstacles_named_ns_id():
    half_turn_x = (1.0, 0.0, 0.0, 0.0)
    sphere = marker_obstacle(marker(scale=(0.2, 0.3, 0.1)), np.eye(4))
    assert (sphere.kind, sphere.size, sphere.name) == ("sphere", (0.15,), "scene/0")  # the enclosing sphere
    np.testing.assert_allclose(sphere.position, [0.4, 0.0, 0.5])
    cube = marker(kind=Marker.CUBE, id=3, quaternion=half_turn_x, scale=(0.5, 0.4, 0.1))
    box = marker_obstacle(cube, np.eye(4))
    assert (box.kind, box.size, box.name) == ("box", (0.5, 0.4, 0.1), "scene/3")
    np.testing.assert_allclose(box.pose[:3, :3], np.diag([1.0, -1.0, -1.0]), atol=1e-12)
    cylinder = marker_obstacle(marker(kind=Marker.CYLINDER, scale=(0.1, 0.2, 0.8)), np.eye(4))
    assert (cylinder.kind, cylinder.size) == ("cylinder", (0.1, 0.8))  # radius: half the larger of x, y
    shelf = np.eye(4)
    shelf[2, 3] = 1.0
    np.testing.assert_allclose(marker_obstacle(marker(), shelf).position, [0.4, 0.0, 1.5])


def test_a_marker_without_orientation_is_unrotated_and_a_quaternion_is_normalised():
    unset = marker_obstacle(marker(kind=Marker.CUBE, quaternion=(0.0, 0.0, 0.0, 0.0)), np.eye(4))
    np.testing.assert_array_equal(unset.pose[:3, :3], np.eye(3))  # RViz's rule: all zero is the identity
    scaled = marker_obstacle(marker(kind=Marker.CUBE, quaternion=(0.0, 0.0, 2.0, 2.0)), np.eye(4))
    np.testing.assert_allclose(scaled.pose[:3, 0], [0.0, 1.0, 0.0], atol=1e-12)  # a quarter turn about z


@pytest.mark.parametrize(
    "bad, refusal",
    [
        (dict(position=(math.nan, 0.0, 0.0)), "marker ns 'scene' id 7: the pose has NaN or infinite values"),
        (dict(quaternion=(0.0, math.inf, 0.0, 1.0)), "the pose has NaN or infinite values"),
        (dict(scale=(0.2, 0.0, 0.2)), "marker ns 'scene' id 7: scale must be positive and finite [m]"),
        (dict(scale=(0.2, math.nan, 0.2)), "scale must be positive and finite"),
        (dict(kind=Marker.ARROW), "marker ns 'scene' id 7: type ARROW is not an obstacle (SPHERE, CUBE or "
         "CYLINDER)"),
        (dict(kind=Marker.MESH_RESOURCE), "type MESH_RESOURCE is not an obstacle"),
    ],
)  # fmt: skip
def test_a_marker_that_cannot_be_an_obstacle_is_refused_naming_ns_and_id(bad, refusal):
    with pytest.raises(IKNodeError) as raised:
        marker_obstacle(marker(id=7, **bad), np.eye(4))
    assert refusal in str(raised.value)


def test_add_modify_delete_and_deleteall_as_rviz_keeps_markers():
    obstacles = MarkerObstacles()
    added = [marker(id=0), marker(id=1, kind=Marker.CUBE), marker(ns="b", id=0)]
    changed, warnings = obstacles.apply(added, in_base)
    assert changed and warnings == [] and list(obstacles.by_name()) == ["scene/0", "scene/1", "b/0"]
    first = obstacles.by_name()["scene/0"]
    changed, _ = obstacles.apply([marker(id=0, action=Marker.MODIFY, position=(0.1, 0.2, 0.3))], in_base)
    assert changed and obstacles.by_name()["scene/0"] is not first  # replaced (moves to the end)
    np.testing.assert_allclose(obstacles.by_name()["scene/0"].position, [0.1, 0.2, 0.3])
    deleted = [marker(id=1, action=Marker.DELETE), marker(id=9, action=Marker.DELETE)]
    changed, _ = obstacles.apply(deleted, in_base)
    assert changed and sorted(obstacles.by_name()) == ["b/0", "scene/0"]
    assert obstacles.apply([marker(id=9, action=Marker.DELETE)], in_base) == (False, [])  # (unknown: nothing)
    cleared = [marker(action=Marker.DELETEALL), marker(ns="c", id=2, frame="shelf")]
    changed, _ = obstacles.apply(cleared, in_base)
    assert changed and list(obstacles.by_name()) == ["c/2"]
    np.testing.assert_allclose(obstacles.by_name()["c/2"].position, [0.4, 0.0, 1.5])  # (in the shelf frame)


def test_a_refused_marker_is_named_and_changes_nothing_the_others_are_kept():
    obstacles = MarkerObstacles()
    obstacles.apply([marker(id=0)], in_base)
    kept = obstacles.by_name()["scene/0"]
    changed, warnings = obstacles.apply(
        [
            marker(id=0, position=(math.nan, 0.0, 0.0)),  # a bad replacement: the old one stays
            marker(id=1, frame="map"),  # a frame that cannot be resolved
            marker(id=2, action=5),
            marker(id=3, kind=Marker.CUBE),
        ],
        in_base,
    )
    assert changed and list(obstacles.by_name()) == ["scene/0", "scene/3"]
    assert obstacles.by_name()["scene/0"] is kept
    assert len(warnings) == 3
    assert "marker ns 'scene' id 0: the pose has NaN" in warnings[0]
    assert "frame 'map' is not a link" in warnings[1]
    assert "marker ns 'scene' id 2: unknown action 5" in warnings[2]


# ------------------------------------------------------------------ collision shapes -> markers


def test_collision_markers_draw_capsules_as_cylinders_between_spheres_and_boxes_as_cubes():
    pose = np.eye(4)
    pose[:3, 3] = [1.0, 2.0, 3.0]
    shapes = [
        ("link1", "capsule", 0.05, np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.3, 0.0])),
        ("ball", "capsule", 0.1, np.array([0.5, 0.0, 0.5]), np.array([0.5, 0.0, 0.5])),
        ("table", "box", 0.0, pose, np.array([1.0, 0.6, 0.05])),
    ]
    array = collision_markers("base_link", shapes, ["ball", "table"])
    first, *markers = array.markers
    assert first.action == Marker.DELETEALL
    assert all(m.header.frame_id == "base_link" and m.action == Marker.ADD for m in markers)
    kinds = [(m.ns, m.type, m.text) for m in markers]
    assert kinds == [
        ("robot", Marker.SPHERE, "link1"),
        ("robot", Marker.SPHERE, "link1"),
        ("robot", Marker.CYLINDER, "link1"),
        ("obstacles", Marker.SPHERE, "ball"),  # a sphere: its ends coincide
        ("obstacles", Marker.CUBE, "table"),
    ]
    assert len({(m.ns, m.id) for m in markers}) == len(markers)
    ends, cylinder = markers[:2], markers[2]
    assert [m.pose.position.y for m in ends] == [0.0, 0.3] and ends[0].scale.x == pytest.approx(0.1)
    assert (cylinder.scale.x, cylinder.scale.y, cylinder.scale.z) == pytest.approx((0.1, 0.1, 0.3))
    assert cylinder.pose.position.y == pytest.approx(0.15)
    # the cylinder's z axis turned onto +y (the capsule's axis)
    o = cylinder.pose.orientation
    from ik_node.lie import quaternion_to_matrix

    np.testing.assert_allclose(quaternion_to_matrix(o.x, o.y, o.z, o.w)[:, 2], [0.0, 1.0, 0.0], atol=1e-12)
    cube = markers[4]
    assert (cube.pose.position.x, cube.pose.position.y, cube.pose.position.z) == (1.0, 2.0, 3.0)
    assert (cube.scale.x, cube.scale.y, cube.scale.z) == (1.0, 0.6, 0.05)


@pytest.mark.parametrize("direction", [(0.0, 0.0, 1.0), (0.0, 0.0, -1.0), (1.0, -2.0, 0.5)])
def test_a_capsule_s_cylinder_lies_along_its_axis(direction):
    from ik_node.lie import quaternion_to_matrix

    direction = np.array(direction) / np.linalg.norm(direction)
    shape = ("l", "capsule", 0.1, np.zeros(3), 0.4 * direction)
    (_, _, _, cylinder) = collision_markers("b", [shape]).markers
    o = cylinder.pose.orientation
    assert math.isclose(math.hypot(o.x, o.y, o.z, o.w), 1.0)
    np.testing.assert_allclose(quaternion_to_matrix(o.x, o.y, o.z, o.w)[:, 2], direction, atol=1e-12)


# ------------------------------------------------------------------ the node through real topics


@pytest.fixture(scope="module")
def arm7_tree():
    robot = load_robot(ARM7)
    return robot, robot.tree("base_link", ["tool0"])


def link_position(tree, q, link: str) -> np.ndarray:
    return tree.pose_of(tree.link_poses(q), link)[:3, 3]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """``clearance(q, obstacles)``: the smallest distance [m] between arm7's own collision
    geometry (the URDF's boxes and cylinders, placed by pinocchio) and the obstacles (coal's
    shapes), independently of ik_node's capsules; link pairs are left out (an SRDF disabling
    them all: arm7 has no SRDF, and its neighbours touch)."""
    if not HAS_REFERENCE:
        pytest.skip("pinocchio and coal are not importable: no independent collision check")
    sys.path.insert(0, str(PACKAGE_ROOT / "benchmark"))
    from collision_reference import ReferenceCollision

    links = sorted(load_robot(ARM7).links)
    srdf = tmp_path_factory.mktemp("srdf") / "all_pairs.srdf"
    srdf.write_text(
        '<robot name="arm7">'
        + "".join(
            f'<disable_collisions link1="{a}" link2="{b}"/>' for a, b in itertools.combinations(links, 2)
        )
        + "</robot>"
    )

    def clearance(q, obstacles) -> float:
        checker = ReferenceCollision(
            ARM7, srdf=srdf, obstacles=obstacles, base_link="base_link", joint_names=JOINTS
        )
        return checker.min_distance(q)[0]

    return clearance


class CollisionClient(Client):
    """The harness's client, also publishing ``~/obstacles`` and ``/robot_description_semantic``
    and recording ``~/collision_markers``."""

    def __init__(self, node_name: str):
        super().__init__(node_name=node_name)
        self.collision_markers: list[MarkerArray] = []
        self.obstacle_publisher = self.node.create_publisher(MarkerArray, f"/{node_name}/obstacles", 10)
        self.semantic_publisher = self.node.create_publisher(String, "/robot_description_semantic", LATCHED)
        self.node.create_subscription(
            MarkerArray, f"/{node_name}/collision_markers", self.collision_markers.append, LATCHED
        )

    def publish_obstacles(self, *markers: Marker) -> None:
        assert self.spin_until(lambda: self.obstacle_publisher.get_subscription_count() > 0)
        self.obstacle_publisher.publish(MarkerArray(markers=list(markers)))

    def drawn(self) -> set[str]:
        """The owners (links and obstacles) of the latest ``~/collision_markers``."""
        if not self.collision_markers:
            return set()
        return {m.text for m in self.collision_markers[-1].markers if m.action == Marker.ADD}

    def answer(self, goal, timeout: float = 20.0) -> tuple[dict, object]:
        """Send ``goal`` from the configuration Q (/joint_states); the status and the command (None
        when none came within a second of the status)."""
        self.send_joint_state(JOINTS, Q)
        self.spin_for(0.2)
        statuses, commands = len(self.statuses), len(self.commands)
        self.send_goal(goal)
        assert self.spin_until(lambda: len(self.statuses) > statuses, timeout), "no status for the goal"
        self.spin_until(lambda: len(self.commands) > commands, 1.0)
        return self.statuses[statuses], (self.commands[commands] if len(self.commands) > commands else None)


#: The parameter obstacle ('ball'), first far from the arm; the elbow's test moves it onto the elbow.
FAR_AWAY = [2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 1.0]


@pytest.fixture(scope="module")
def collision_node(ros_context, tmp_path_factory):
    params = tmp_path_factory.mktemp("collision") / "arm7_collision.yaml"
    params.write_text(
        yaml.safe_dump(
            {
                "collision_node": {
                    "ros__parameters": {
                        "robot_description_file": str(ARM7),
                        "tip_links": ["tool0"],
                        "self_collision": True,
                        "timeout": 0.1,
                        "obstacle_names": ["ball"],
                        "obstacles": {"ball": {"type": "sphere", "size": [0.06], "pose": FAR_AWAY}},
                        "interactive_markers": False,
                    }
                }
            }
        )
    )
    process = NodeProcess("--params-file", str(params), name="collision_node")
    client = CollisionClient("collision_node")
    try:
        client.wait_connected()
        client.wait_ready()
    except BaseException:
        client.close()
        process.stop()
        raise
    yield process, client
    client.close()
    assert process.stop() == 0, process.log()[-3000:]


def sphere_marker(position, radius: float, id: int = 0, frame: str = "base_link") -> Marker:
    return marker(id=id, frame=frame, position=tuple(float(v) for v in position), scale=(2 * radius,) * 3)


def test_an_obstacle_on_the_topic_is_avoided_drawn_and_removed(collision_node, arm7_tree, reference):
    """Without the obstacle the answer from Q is Q itself; a sphere on the elbow at Q makes it
    collide, so the answer must move the arm around it: it still reaches the goal, and the
    independent check finds it clear of the sphere (by the margin, less rounding)."""
    process, client = collision_node
    robot, tree = arm7_tree
    goal = tree.forward(Q, "tool0")
    client.publish_obstacles(marker(action=Marker.DELETEALL))
    status, command = client.answer(goal)
    assert status["success"] == "true", (status, process.log()[-3000:])
    np.testing.assert_allclose(command.position, Q, atol=1e-6)  # (the goal is met at the seed)

    ball = Obstacle.sphere(0.06, link_position(tree, Q, "link4"), "scene/0")
    assert reference(Q, [ball]) < 0.0  # (the seed collides with it)
    client.publish_obstacles(sphere_marker(ball.position, 0.06))
    assert client.spin_until(lambda: "scene/0" in client.drawn()), client.drawn()
    assert "link4" in client.drawn()  # (the robot's shapes too)
    status, command = client.answer(goal)
    assert status["success"] == "true", (status, process.log()[-3000:])
    q = np.array([dict(zip(command.name, command.position))[joint] for joint in JOINTS])
    reached = tree.forward(q, "tool0")
    assert np.linalg.norm(reached[:3, 3] - goal[:3, 3]) < 1e-4
    assert reference(q, [ball]) > 0.0, "the answer collides with the obstacle (coal, the URDF's geometry)"
    own = IKSolver(robot, "base_link", ["tool0"], obstacles=[ball])  # the solver's own (conservative) check
    assert own.clearance(q) >= -1e-6

    client.publish_obstacles(marker(id=0, action=Marker.DELETE))
    assert client.spin_until(lambda: "scene/0" not in client.drawn()), client.drawn()
    status, command = client.answer(goal)
    np.testing.assert_allclose(command.position, Q, atol=1e-6)  # free again: the seed answers


def test_a_goal_reached_only_in_collision_gets_reason_collision_and_no_command(collision_node, arm7_tree):
    """A sphere around the tool (given in the tool's own frame: placed through the model's FK at
    the current joint state) blocks every answer: /diagnostics says 'collision' (WARN) and no
    command comes (the last one stays)."""
    process, client = collision_node
    _, tree = arm7_tree
    goal = tree.forward(Q, "tool0")
    client.publish_obstacles(marker(action=Marker.DELETEALL))
    status, command = client.answer(goal)
    assert status["success"] == "true" and command is not None
    client.send_joint_state(JOINTS, Q)
    client.spin_for(0.2)
    client.publish_obstacles(sphere_marker((0.0, 0.0, 0.0), 0.05, id=1, frame="tool0"))
    assert client.spin_until(lambda: "scene/1" in client.drawn())
    status, command = client.answer(goal)
    assert (status["success"], status["reason"]) == ("false", "collision"), status
    assert command is None, "a command was published for a goal without a collision-free answer"
    assert process.wait_for_log("no collision-free solution for the goal")
    client.publish_obstacles(marker(action=Marker.DELETEALL))
    assert client.spin_until(lambda: not {"scene/0", "scene/1"} & client.drawn())


def test_a_bad_marker_is_refused_naming_it_the_others_are_kept(collision_node):
    process, client = collision_node
    client.publish_obstacles(
        marker(action=Marker.DELETEALL),
        marker(id=5, position=(math.nan, 0.0, 0.0)),
        marker(id=6, position=(1.5, 1.5, 1.5)),
    )
    assert client.spin_until(lambda: "scene/6" in client.drawn())
    assert "scene/5" not in client.drawn()
    assert process.wait_for_log("marker ns 'scene' id 5: the pose has NaN or infinite values")
    client.publish_obstacles(marker(action=Marker.DELETEALL))
    assert client.spin_until(lambda: "scene/6" not in client.drawn())


def test_an_obstacle_by_parameter_is_avoided_and_a_nan_pose_is_refused_naming_it(
    collision_node, arm7_tree, reference
):
    process, client = collision_node
    robot, tree = arm7_tree
    assert client.spin_until(lambda: "ball" in client.drawn())  # (declared at start-up, far away)
    goal = tree.forward(Q, "tool0")
    elbow = link_position(tree, Q, "link4")
    pose = [*(float(v) for v in elbow), 0.0, 0.0, 0.0, 1.0]
    result = client.set_parameters(**{"obstacles.ball.pose": pose})
    assert result.successful, result.reason
    try:
        status, command = client.answer(goal)
        assert status["success"] == "true", status
        q = np.array([dict(zip(command.name, command.position))[joint] for joint in JOINTS])
        assert reference(q, [Obstacle.sphere(0.06, elbow, "ball")]) > 0.0
        refused = client.set_parameters(**{"obstacles.ball.pose": [math.nan, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]})
        assert not refused.successful and "obstacles.ball.pose" in refused.reason, refused.reason
    finally:
        assert client.set_parameters(**{"obstacles.ball.pose": FAR_AWAY}).successful


def test_a_malformed_srdf_is_refused_naming_the_parameter_and_the_node_keeps_serving(
    collision_node, arm7_tree
):
    process, client = collision_node
    robot, tree = arm7_tree
    goal = tree.forward(Q, "tool0")
    pairs = compute_disabled_pairs(robot)
    pair_elements = "".join(
        f'<disable_collisions link1="{a}" link2="{b}" reason="{why}"/>' for (a, b), why in pairs.items()
    )
    # the topic's SRDF (MoveIt's convention: transient local), while the parameter is empty
    client.semantic_publisher.publish(String(data=f'<robot name="arm7">{pair_elements}</robot>'))
    assert process.wait_for_log("SRDF from /robot_description_semantic: the self-collision pairs follow it")
    status, command = client.answer(goal)
    assert status["success"] == "true" and command is not None
    malformed = '<robot name="arm7"><disable_collisions link1='
    refused = client.set_parameters(robot_description_semantic=malformed)
    assert not refused.successful
    assert "parameter robot_description_semantic is not well-formed SRDF XML" in refused.reason
    status, command = client.answer(goal)
    assert status["success"] == "true" and command is not None
    # an SRDF (as the Setup Assistant writes it: here its pairs as ik_node computes them) naming a
    # link the robot does not have: that entry is warned about and ignored, the rest is used
    srdf = (
        f'<robot name="arm7">{pair_elements}'
        '<disable_collisions link1="link1" link2="elbow_of_another_robot" reason="Never"/></robot>'
    )
    accepted = client.set_parameters(robot_description_semantic=srdf)
    assert accepted.successful, accepted.reason
    assert process.wait_for_log("elbow_of_another_robot"), process.log()[-3000:]
    status, command = client.answer(goal)
    assert status["success"] == "true" and command is not None
    # the topic's SRDF is not used while the parameter is set; a malformed one is refused
    client.semantic_publisher.publish(String(data="<robot><oops"))
    assert process.wait_for_log("/robot_description_semantic is not well-formed SRDF XML")
    status, command = client.answer(goal)
    assert status["success"] == "true" and command is not None
    assert client.set_parameters(robot_description_semantic="").successful


def test_obstacles_are_avoided_with_self_collision_off(collision_node, arm7_tree, reference):
    """Obstacles are checked whether or not self_collision is on; the robot's shapes are drawn
    with them (they are what is checked against them)."""
    process, client = collision_node
    _, tree = arm7_tree
    elbow = link_position(tree, Q, "link4")
    pose = [*(float(v) for v in elbow), 0.0, 0.0, 0.0, 1.0]
    markers = len(client.collision_markers)  # (before the change: its markers may come with the reply)
    result = client.set_parameters(self_collision=False, **{"obstacles.ball.pose": pose})
    assert result.successful, result.reason
    try:
        assert client.spin_until(lambda: len(client.collision_markers) > markers)
        assert {"ball", "link4"} <= client.drawn()
        status, command = client.answer(tree.forward(Q, "tool0"))
        assert status["success"] == "true", status
        q = np.array([dict(zip(command.name, command.position))[joint] for joint in JOINTS])
        assert reference(q, [Obstacle.sphere(0.06, elbow, "ball")]) > 0.0
    finally:
        assert client.set_parameters(self_collision=True, **{"obstacles.ball.pose": FAR_AWAY}).successful


def test_a_malformed_srdf_parameter_at_start_up_stops_the_node_naming_it():
    process = NodeProcess(
        "-p", f"robot_description_file:={ARM7}", "-p", "tip_links:=[tool0]", "-p", "self_collision:=true",
        "-p", "robot_description_semantic:=<robot><disable",
    )  # fmt: skip
    assert process.process.wait(timeout=60) == 2, process.log()
    assert "parameter robot_description_semantic is not well-formed SRDF XML" in process.log()
    process.stop()


# --------------------------------------------------------------------------- MoveIt's planning scene

NO_MOVEIT_MSGS = (
    "moveit_msgs is not importable (it comes with MoveIt; PyPI does not have it): no planning scene"
)


def scene_with(object_id: str, operation: bytes, position=(0.0, 0.0, 0.0), radius: float = 0.06, diff=True):
    """A ``PlanningScene`` (a diff, or the full scene) with one collision object: a sphere at
    ``position`` (base_link) given as the object's pose with the shape at its origin."""
    moveit = pytest.importorskip("moveit_msgs.msg", reason=NO_MOVEIT_MSGS)
    from shape_msgs.msg import SolidPrimitive

    collision_object = moveit.CollisionObject()
    collision_object.header.frame_id = "base_link"
    collision_object.id = object_id
    collision_object.operation = operation
    p = collision_object.pose.position
    p.x, p.y, p.z = (float(v) for v in position)
    collision_object.pose.orientation.w = 1.0
    if operation != moveit.CollisionObject.REMOVE:
        collision_object.primitives = [SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[radius])]
        shape_pose = type(collision_object.pose)()
        shape_pose.orientation.w = 1.0
        collision_object.primitive_poses = [shape_pose]
    scene = moveit.PlanningScene(is_diff=diff)
    scene.world.collision_objects = [collision_object]
    return scene


def test_the_planning_scene_s_objects_are_obstacles_added_moved_and_removed(
    collision_node, arm7_tree, reference
):
    """move_group's ``/monitored_planning_scene``: a full scene with a sphere on the elbow at Q
    makes the answer move around it (clear of it by pinocchio and coal); a diff MOVE far away and
    a REMOVE give the seed back as the answer."""
    moveit = pytest.importorskip("moveit_msgs.msg", reason=NO_MOVEIT_MSGS)
    from shape_msgs.msg import SolidPrimitive

    from ik_node.ros import scene_messages

    for name in ("ADD", "REMOVE", "APPEND", "MOVE"):  # (a byte field: bytes in rclpy)
        assert bytes([getattr(scene_messages, name)]) == getattr(moveit.CollisionObject, name), name
    for name in ("BOX", "SPHERE", "CYLINDER", "CONE"):
        assert getattr(scene_messages, name) == getattr(SolidPrimitive, name), name
    process, client = collision_node
    robot, tree = arm7_tree
    goal = tree.forward(Q, "tool0")
    publisher = client.node.create_publisher(moveit.PlanningScene, "/monitored_planning_scene", 10)
    assert client.spin_until(lambda: publisher.get_subscription_count() > 0)
    center = link_position(tree, Q, "link4")
    ball = Obstacle.sphere(0.06, center, "planning_scene/ball/0")
    publisher.publish(scene_with("ball", moveit.CollisionObject.ADD, center, diff=False))
    assert client.spin_until(lambda: "planning_scene/ball/0" in client.drawn()), client.drawn()
    status, command = client.answer(goal)
    assert status["success"] == "true", (status, process.log()[-3000:])
    q = np.array([dict(zip(command.name, command.position))[joint] for joint in JOINTS])
    assert np.linalg.norm(tree.forward(q, "tool0")[:3, 3] - goal[:3, 3]) < 1e-4
    assert reference(q, [ball]) > 0.0, (
        "the answer collides with the scene's object (coal, the URDF's geometry)"
    )
    publisher.publish(scene_with("ball", moveit.CollisionObject.MOVE, (2.0, 2.0, 2.0)))
    for _ in range(20):  # (moved away: the seed answers, once the diff has arrived)
        client.spin_for(0.1)
        status, command = client.answer(goal)
        if np.allclose(command.position, Q, atol=1e-6):
            break
    np.testing.assert_allclose(command.position, Q, atol=1e-6)
    publisher.publish(scene_with("ball", moveit.CollisionObject.REMOVE))
    assert client.spin_until(lambda: "planning_scene/ball/0" not in client.drawn()), client.drawn()


def test_scene_objects_follow_move_group_s_operations_and_bad_objects_are_named():
    """:class:`SceneObstacles` on real messages: shapes at the object's pose times their own,
    APPEND relative to the object's pose, MOVE carrying the shapes, a full scene replacing every
    object, REMOVE of '' clearing; a mesh left out and a NaN pose refused, both named."""
    moveit = pytest.importorskip("moveit_msgs.msg", reason=NO_MOVEIT_MSGS)
    from geometry_msgs.msg import Pose
    from shape_msgs.msg import Mesh, SolidPrimitive

    from ik_node.lie import quaternion_to_matrix
    from ik_node.ros.scene_messages import SceneObstacles

    def pose(x, y, z, quaternion=(0.0, 0.0, 0.0, 1.0)) -> Pose:
        value = Pose()
        value.position.x, value.position.y, value.position.z = x, y, z
        o = value.orientation
        o.x, o.y, o.z, o.w = quaternion
        return value

    def matrix(x, y, z, quaternion=(0.0, 0.0, 0.0, 1.0)) -> np.ndarray:
        value = np.eye(4)
        value[:3, :3] = quaternion_to_matrix(*quaternion)
        value[:3, 3] = x, y, z
        return value

    def thing(object_id, operation, object_pose, shapes=(), meshes=0):
        message = moveit.CollisionObject(id=object_id, operation=operation, pose=object_pose)
        message.header.frame_id = "base_link"
        message.primitives = [primitive for primitive, _ in shapes]
        message.primitive_poses = [shape_pose for _, shape_pose in shapes]
        message.meshes = [Mesh() for _ in range(meshes)]
        message.mesh_poses = [Pose() for _ in range(meshes)]
        return message

    def scene(*objects, diff=True):
        message = moveit.PlanningScene(is_diff=diff)
        message.world.collision_objects = list(objects)
        return message

    def identity(frame, stamp):
        assert frame == "base_link"
        return np.eye(4)

    quarter = (0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4))  # (90 deg about z)
    box = SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.2, 0.1, 0.05])
    ball = SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[0.03])
    obstacles = SceneObstacles()
    changed, warnings = obstacles.apply(
        scene(
            thing("table", moveit.CollisionObject.ADD, pose(1, 0, 0, quarter), [(box, pose(0.5, 0, 0))]),
            diff=False,
        ),
        identity,
    )
    assert changed and not warnings
    table = obstacles.by_name()["planning_scene/table/0"]
    np.testing.assert_allclose(
        table.pose, matrix(1, 0, 0, quarter) @ matrix(0.5, 0, 0), atol=1e-12
    )  # (1, .5, 0)
    changed, warnings = obstacles.apply(
        scene(
            thing("table", moveit.CollisionObject.APPEND, pose(0, 0, 1), [(ball, pose(0, 0, 0))], meshes=1)
        ),
        identity,
    )
    assert changed and len(warnings) == 1 and "object 'table'" in warnings[0] and "meshes" in warnings[0]
    np.testing.assert_allclose(obstacles.by_name()["planning_scene/table/1"].position, [0, 0, 1], atol=1e-12)
    changed, _ = obstacles.apply(scene(thing("table", moveit.CollisionObject.MOVE, pose(2, 0, 0))), identity)
    by_name = obstacles.by_name()
    np.testing.assert_allclose(
        by_name["planning_scene/table/0"].pose, matrix(2, 0, 0) @ matrix(0.5, 0, 0), atol=1e-12
    )
    # (carried along: it was at (-1, 0, 1) from the object in the base's axes, (0, 1, 1) in the
    # object's turned ones; the object now at (2, 0, 0), unturned)
    np.testing.assert_allclose(by_name["planning_scene/table/1"].position, [2, 1, 1], atol=1e-12)
    changed, warnings = obstacles.apply(
        scene(thing("bad", moveit.CollisionObject.ADD, pose(float("nan"), 0, 0), [(ball, pose(0, 0, 0))])),
        identity,
    )
    assert not changed and "object 'bad'" in warnings[0] and "NaN" in warnings[0]
    changed, _ = obstacles.apply(
        scene(thing("post", moveit.CollisionObject.ADD, pose(0, 1, 0), [(ball, pose(0, 0, 0))]), diff=False),
        identity,
    )
    assert changed and list(obstacles.by_name()) == ["planning_scene/post/0"]  # (a full scene replaces)
    changed, _ = obstacles.apply(scene(thing("", moveit.CollisionObject.REMOVE, pose(0, 0, 0))), identity)
    assert changed and obstacles.by_name() == {}
