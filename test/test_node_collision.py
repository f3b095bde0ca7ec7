"""Collision-aware IK in the node (issue 18): obstacles from ``visualization_msgs/MarkerArray``
(:mod:`ik_node.obstacle_messages`, without ROS), and the node through real topics: obstacles on
``~/obstacles`` and by parameter avoided (each answer's clearance checked independently, with
pinocchio + coal on the URDF's own collision geometry: ``benchmark/collision_reference.py``),
the reason ``collision`` on ``/diagnostics`` with the last command kept, ``~/collision_markers``,
and a malformed SRDF refused while the node keeps serving.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from visualization_msgs.msg import Marker

from ik_node.errors import IKNodeError
from ik_node.obstacle_messages import MarkerObstacles, collision_markers, marker_obstacle

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
