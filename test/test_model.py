"""URDF loading: joint conversion, limits, tree selection, and clear errors for bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ik_node import UnknownJointError, UnknownLinkError, URDFError, load_robot
from ik_node.errors import IKNodeError, TargetError


def robot_xml(joints: str, links=("a", "b", "c")) -> str:
    link_xml = "".join(f'<link name="{name}"/>' for name in links)
    return f'<robot name="t">{link_xml}{joints}</robot>'


def joint_xml(name="j", kind="revolute", parent="a", child="b", body="", limit=None) -> str:
    if limit is None:
        limit = (
            '<limit lower="-1" upper="1" effort="1" velocity="2"/>'
            if kind in ("revolute", "prismatic")
            else ""
        )
    links = f'<parent link="{parent}"/><child link="{child}"/>'
    return f'<joint name="{name}" type="{kind}">{links}{body}{limit}</joint>'


TWO_JOINTS = joint_xml("j1", child="b") + joint_xml("j2", "prismatic", "b", "c", '<axis xyz="0 0 1"/>')


def test_defaults_follow_the_urdf_spec():
    robot = load_robot(robot_xml(joint_xml("j1") + joint_xml("j2", "continuous", "b", "c")))
    first, second = robot.joints["j1"], robot.joints["j2"]
    np.testing.assert_allclose(first.origin, np.eye(4))
    np.testing.assert_allclose(first.axis, [1, 0, 0])
    assert (first.lower, first.upper, first.max_velocity) == (-1, 1, 2)
    assert (second.lower, second.upper) == (-math.inf, math.inf)


def test_axis_of_any_length_is_normalised():
    robot = load_robot(robot_xml(joint_xml(body='<axis xyz="0 3 4"/>'), links=("a", "b")))
    np.testing.assert_allclose(robot.joints["j"].axis, [0, 0.6, 0.8])


def test_safety_controller_soft_limits_intersect_the_hard_limits():
    body = '<safety_controller soft_lower_limit="-2" soft_upper_limit="0.5" k_position="1" k_velocity="1"/>'
    joint = load_robot(robot_xml(joint_xml(body=body), links=("a", "b"))).joints["j"]
    assert (joint.lower, joint.upper) == (-1, 0.5)
    # A safety controller without soft limits leaves the hard limits alone.
    only_gain = '<safety_controller k_velocity="1"/>'
    joint = load_robot(robot_xml(joint_xml(body=only_gain), links=("a", "b"))).joints["j"]
    assert (joint.lower, joint.upper) == (-1, 1)


def test_tree_selection_excludes_joints_off_the_paths():
    links = ("a", "b", "c", "d")
    xml = robot_xml(TWO_JOINTS + joint_xml("side", parent="a", child="d"), links)
    robot = load_robot(xml)
    assert robot.joint_names == ("j1", "j2", "side")
    assert robot.tree("a", "c").joint_names == ("j1", "j2")
    assert robot.tree("b", "c").joint_names == ("j2",)
    assert robot.tree("a", ["c", "d"]).joint_names == ("j1", "j2", "side")


def test_load_from_path_and_from_bytes(tmp_path):
    xml = robot_xml(TWO_JOINTS)
    path = tmp_path / "robot.urdf"
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n' + xml)
    assert load_robot(path).joint_names == load_robot(str(path)).joint_names == ("j1", "j2")
    assert load_robot(path.read_bytes()).joint_names == ("j1", "j2")


def test_transmissions_and_unknown_tags_do_not_break_loading():
    xml = robot_xml(TWO_JOINTS).replace(
        "</robot>", "<transmission name='t'><joint name='j1'/></transmission><gazebo/></robot>"
    )
    assert load_robot(xml).joint_names == ("j1", "j2")


@pytest.mark.parametrize(
    "xml, fragments",
    [
        ("<robot name='t'><link name='a'>", ["malformed URDF XML"]),
        ("<robt/>", ["<robot>"]),
        (robot_xml(joint_xml(child="ghost"), ("a", "b")), ["'j'", "'ghost'", "does not exist"]),
        (robot_xml(TWO_JOINTS + joint_xml("j3", parent="c", child="b")), ["'b'", "two joints"]),
        (robot_xml(joint_xml("j1") + joint_xml("j2", parent="b", child="a"), ("a", "b")), ["cycle"]),
        (robot_xml(joint_xml("j1"), ("a", "b", "c")), ["root links", "'c'"]),
        (robot_xml(TWO_JOINTS, ("a", "b", "c", "b")), ["duplicate link name 'b'"]),
        (robot_xml(TWO_JOINTS + joint_xml("j1", parent="a", child="c")), ["duplicate joint name 'j1'"]),
    ],
    ids=lambda value: value[0] if isinstance(value, list) else None,
)
def test_broken_structure_is_refused_at_load_with_a_clear_error(xml, fragments):
    """What breaks the tree itself (or the XML) cannot be loaded at all."""
    with pytest.raises(URDFError) as error:
        load_robot(xml)
    for fragment in fragments:
        assert fragment in str(error.value)


MIMIC_CYCLE = (
    joint_xml("j1", body='<mimic joint="j2"/>')
    + joint_xml("j2", parent="b", child="c", body='<mimic joint="j1"/>')
    + joint_xml("side", parent="a", child="d")
)


@pytest.mark.parametrize(
    "joints, fragments",
    [
        (joint_xml(kind="screw"), ["screw"]),
        (joint_xml(body='<axis xyz="0 0 0"/>'), ["zero axis"]),
        (joint_xml(limit=""), ["no <limit>"]),
        (joint_xml(body='<origin xyz="nan 0 0"/>'), ["origin xyz", "finite"]),
        (
            joint_xml(body='<safety_controller soft_lower_limit="2" soft_upper_limit="3" k_velocity="1"/>'),
            ["safety_controller", "no range"],
        ),
    ],
    ids=["screw", "zero_axis", "no_limit", "nan_origin", "safety"],
)
def test_a_bad_joint_warns_at_load_and_refuses_only_the_trees_through_it(joints, fragments):
    """Liberal loading, strict use: the robot loads with a warning naming the joint; a tree or
    FK through it is refused with the same reason; the rest of the robot works."""
    xml = robot_xml(joints + joint_xml("ok", parent="a", child="c"))
    with pytest.warns(UserWarning, match="joint 'j' cannot be used"):
        robot = load_robot(xml)
    assert robot.joint_names == ("ok",)
    assert robot.tree("a", "c").joint_names == ("ok",)
    np.testing.assert_allclose(robot.forward({"ok": 0.0}, "c"), np.eye(4))
    for use in (
        lambda: robot.tree("a", "b"),
        lambda: robot.forward({}, "b"),
        lambda: robot.tree("a", ["c", "b"]),
    ):
        with pytest.raises(URDFError) as error:
            use()
        message = str(error.value)
        assert "joint 'j'" in message and "cannot be used" in message
        for fragment in fragments:
            assert fragment in message


@pytest.mark.parametrize("kind", ["prismatic", "revolute"])
def test_inverted_limits_read_as_unlimited_as_peers_do(kind):
    """Bullet writes lower 1 > upper -1 for "no limit": the joint loads unlimited, with a warning
    naming it, and FK through it works (it used to refuse every tree through the joint)."""
    limit = '<limit lower="1" upper="-1" effort="1" velocity="1"/>'
    with pytest.warns(
        UserWarning, match="joint 'j' has lower limit 1.0 above upper limit -1.0; read as unlimited"
    ):
        robot = load_robot(robot_xml(joint_xml(kind=kind, limit=limit), ("a", "b")))
    joint = robot.joints["j"]
    assert joint.problem is None and joint.lower == -math.inf and joint.upper == math.inf
    assert robot.forward({"j": 0.5}, "b").shape == (4, 4)


def test_mimic_cycle_refuses_only_the_trees_through_it():
    with pytest.warns(UserWarning, match="cycle"):
        robot = load_robot(robot_xml(MIMIC_CYCLE, ("a", "b", "c", "d")))
    assert robot.tree("a", "d").joint_names == ("side",)
    with pytest.raises(URDFError, match="mimic joints form a cycle"):
        robot.tree("a", "c")


def test_negative_or_zero_velocity_limit_is_unknown_not_an_error():
    """SDF-derived URDFs write velocity="-1" for "unlimited": read as no known limit."""
    for velocity in ("-1", "0"):
        limit = f'<limit lower="-1" upper="1" effort="1" velocity="{velocity}"/>'
        joint = load_robot(robot_xml(joint_xml(limit=limit), ("a", "b"))).joints["j"]
        assert joint.problem is None and joint.max_velocity == math.inf


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(URDFError, match="file not found"):
        load_robot(tmp_path / "nope.urdf")


def test_bad_tree_selection_names_the_links():
    robot = load_robot(robot_xml(TWO_JOINTS))
    with pytest.raises(UnknownLinkError, match="unknown link 'nowhere'; known: \\[a, b, c\\]"):
        robot.tree("a", "nowhere")
    with pytest.raises(UnknownLinkError, match="'ghost'"):
        robot.tree("ghost", "c")
    tree = robot.tree("b", "c")
    with pytest.raises(UnknownLinkError, match="link on the paths from 'b'"):
        tree.forward([0.0], "a")


def test_bad_joint_values_name_the_joint():
    robot = load_robot(robot_xml(TWO_JOINTS))
    with pytest.raises(UnknownJointError, match="'elbow'"):
        robot.forward({"elbow": 1.0}, "c")
    with pytest.raises(TargetError, match="expected 2"):
        robot.forward([1.0], "c")
    with pytest.raises(TargetError, match="j2"):
        robot.forward([0.0, math.nan], "c")
    assert issubclass(TargetError, IKNodeError) and issubclass(IKNodeError, ValueError)


def test_kinematics_errors_are_ik_node_errors():
    """Every error the kinematics layer raises derives from IKNodeError and names the problem."""
    from ik_node import TipTask

    tree = load_robot(robot_xml(TWO_JOINTS)).tree("a", "c")
    with pytest.raises(IKNodeError, match="unknown task 'bogus'"):
        TipTask("bogus")
    with pytest.raises(IKNodeError, match="6 booleans"):
        TipTask((1, 0))
    with pytest.raises(IKNodeError, match="unknown Jacobian frame 'spatial'"):
        tree.jacobian([0.0, 0.0], frame="spatial")
    with pytest.raises(TargetError, match="offset must be a 3-vector or a 4x4 pose"):
        tree.body_jacobian([0.0, 0.0], offset=[1.0, 2.0])
