"""xacro descriptions in load_robot (ik_node.description.xacro_expansion) and ROS package lookups
(ik_node.description.resources.find_package).

The fixture package test/xacro/packages/my_robot_description holds a xacro arm: arguments,
properties with math, a macro with default and block parameters in a file included through
``$(find my_robot_description)``, which itself includes a file relative to it, and an optional
tool. test/xacro/arm_reference.urdf is the same robot written by hand: the expanded robot's FK
must equal pinocchio's FK of that plain URDF (and ours). Every error names what it is about.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from ik_node import load_robot
from ik_node.description.resources import PackageNotFoundError, find_package, resolve_path
from ik_node.errors import URDFError

xacro = pytest.importorskip("xacro", reason="xacro (PyPI 'xacro') is a test extra")

XACRO_DIR = Path(__file__).resolve().parent / "xacro"
PACKAGES = XACRO_DIR / "packages"
PACKAGE = PACKAGES / "my_robot_description"
ARM_XACRO = PACKAGE / "urdf" / "arm.urdf.xacro"
REFERENCE_URDF = XACRO_DIR / "arm_reference.urdf"
#: The arguments arm_reference.urdf was written for.
REFERENCE_ARGS = {"prefix": "left_", "upper_length": 0.5, "with_tool": True}
JOINTS = ("shoulder_pan", "shoulder_lift", "elbow", "wrist")
XACRO_NS = 'xmlns:xacro="http://www.ros.org/wiki/xacro"'
RNG_SEED = 16


@pytest.fixture(autouse=True)
def no_ament_index(monkeypatch):
    """No sourced workspace unless a test makes one: lookups go through package_paths."""
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def random_configurations(robot, count: int) -> list[dict]:
    rng = np.random.default_rng(RNG_SEED)
    configurations = []
    for _ in range(count):
        configurations.append(
            {
                name: rng.uniform(robot.joints[name].lower, robot.joints[name].upper)
                for name in robot.joint_names
            }
        )
    return configurations


# ---------------------------------------------------------------- expansion


def test_xacro_file_expands_to_the_hand_written_urdf():
    """Includes (through $(find) and relative to the including file), a macro with default and
    block parameters, properties and ${} math, $(arg) and xacro:if: the expanded robot has the
    reference's joints, limits and FK (pinocchio's, on the plain URDF) at random configurations."""
    pinocchio = pytest.importorskip("pinocchio")
    robot = load_robot(ARM_XACRO, package_paths=[PACKAGES], xacro_args=REFERENCE_ARGS)
    reference = load_robot(REFERENCE_URDF)
    assert robot.name == "xacro_arm"
    assert robot.joint_names == reference.joint_names == tuple(f"left_{name}" for name in JOINTS)
    assert sorted(robot.links) == sorted(reference.links)
    for name, joint in reference.joints.items():
        assert (robot.joints[name].lower, robot.joints[name].upper) == (joint.lower, joint.upper)
        assert robot.joints[name].max_velocity == joint.max_velocity == (2.5 if joint.is_movable else np.inf)
    model = pinocchio.buildModelFromUrdf(str(REFERENCE_URDF))
    data = model.createData()
    tool_frame = model.getFrameId("left_tool0")
    for q in random_configurations(robot, 50):
        pin_q = np.array([q[model.names[joint_id]] for joint_id in range(1, model.njoints)])
        pinocchio.framesForwardKinematics(model, data, pin_q)
        expected = data.oMf[tool_frame].homogeneous
        np.testing.assert_allclose(robot.forward(q, "left_tool0"), expected, atol=1e-12)
        np.testing.assert_allclose(reference.forward(q, "left_tool0"), expected, atol=1e-12)


def test_xacro_defaults_apply_without_arguments():
    """No xacro_args: prefix '', upper_length 0.4 (the forearm 0.75 of it), no tool."""
    robot = load_robot(ARM_XACRO, package_paths=[PACKAGES])
    assert robot.joint_names == JOINTS
    assert "tool0" not in robot.links and robot.root == "base_link"
    np.testing.assert_allclose(robot.joints["elbow"].origin[:3, 3], [0.4, 0, 0])
    np.testing.assert_allclose(robot.joints["wrist"].origin[:3, 3], [0.3, 0, 0])


def test_xacro_given_as_text_or_bytes_expands_too():
    """XML text has no file: its $(find) include is absolute; the robot is the file's."""
    text = ARM_XACRO.read_text()
    from_file = load_robot(ARM_XACRO, package_paths=[PACKAGES], xacro_args=REFERENCE_ARGS)
    for description in (text, text.encode()):
        robot = load_robot(description, package_paths=[str(PACKAGES)], xacro_args=REFERENCE_ARGS)
        assert robot.joint_names == from_file.joint_names
        q = random_configurations(robot, 1)[0]
        np.testing.assert_allclose(robot.forward(q, "left_tool0"), from_file.forward(q, "left_tool0"))


def test_markup_alone_makes_a_document_xacro(tmp_path):
    """A .urdf file or text with xacro markup (${}, an undeclared xacro: prefix) is expanded; a
    .xacro file is expanded whatever it holds; ${ in a comment of a plain URDF is left alone."""
    plain_links = '<link name="base"/><link name="tip"/>'
    joint = '<joint name="j" type="{kind}"><parent link="base"/><child link="tip"/>{extra}</joint>'
    revolute = joint.format(
        kind="revolute", extra='<limit lower="${-l}" upper="${l}" effort="1" velocity="1"/>'
    )
    with_property = (
        f'<robot name="r" {XACRO_NS}><xacro:property name="l" value="0.5"/>{plain_links}{revolute}</robot>'
    )
    undeclared = with_property.replace(f" {XACRO_NS}", "")
    as_file = write(tmp_path / "robot.urdf", with_property)
    undeclared_file = write(tmp_path / "undeclared.urdf", undeclared)
    for description in (with_property, undeclared, as_file, undeclared_file):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            robot = load_robot(description)
        assert (robot.joints["j"].lower, robot.joints["j"].upper) == (-0.5, 0.5)
    fixed = joint.format(kind="fixed", extra="")
    plain = f'<robot name="r"><!-- ${{not xacro}} $(neither) -->{plain_links}{fixed}</robot>'
    xacro_named = write(tmp_path / "plain.urdf.xacro", plain)
    assert load_robot(plain).links == load_robot(xacro_named).links == ("base", "tip")


def test_xacro_elements_left_after_expansion_are_named_in_the_warning():
    """xacro expands only the 'xacro:' prefix: its namespace under another prefix is ignored with
    a warning saying so."""
    other_prefix = (
        '<robot name="r" xmlns:x="http://www.ros.org/wiki/xacro"><x:property name="p" value="1"/>'
        '<link name="base"/></robot>'
    )
    with pytest.warns(UserWarning, match=r"\(property\): xacro elements left after the expansion"):
        robot = load_robot(other_prefix)
    assert robot.links == ("base",)


# ---------------------------------------------------------------- $(find) and package lookups


def test_find_goes_through_package_paths_or_the_package_directory_itself():
    direct = find_package("my_robot_description", [PACKAGES])
    assert direct == PACKAGE and direct.is_absolute()
    assert find_package("my_robot_description", [XACRO_DIR, PACKAGE]) == PACKAGE  # (its package.xml)
    assert resolve_path("package://my_robot_description/urdf/arm.urdf.xacro", [PACKAGES]) == ARM_XACRO
    robot = load_robot(ARM_XACRO, package_paths=[PACKAGE])
    assert robot.joint_names == JOINTS


def test_find_goes_through_the_ament_index(tmp_path, monkeypatch):
    """A sourced workspace (an install prefix in AMENT_PREFIX_PATH) and no package_paths."""
    prefix = tmp_path / "install"
    write(prefix / "share" / "ament_index" / "resource_index" / "packages" / "my_robot_description", "")
    (prefix / "share" / "my_robot_description").symlink_to(PACKAGE, target_is_directory=True)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    assert find_package("my_robot_description") == prefix / "share" / "my_robot_description"
    robot = load_robot(ARM_XACRO, xacro_args={"with_tool": "true"})
    assert "tool0" in robot.links


def test_a_package_not_found_names_it_where_it_looked_and_what_to_do(tmp_path, monkeypatch):
    empty = tmp_path / "workspace" / "src"
    empty.mkdir(parents=True)
    with pytest.raises(URDFError) as raised:
        load_robot(ARM_XACRO, package_paths=[empty, tmp_path / "missing"])
    message = str(raised.value)
    for part in (
        str(ARM_XACRO),
        "$(find my_robot_description)",
        "ROS package 'my_robot_description' not found",
        str(empty / "my_robot_description"),
        f"{tmp_path / 'missing'} does not exist",
        "AMENT_PREFIX_PATH is not set",
        "package_paths",
        "source the workspace",
    ):
        assert part in message, (part, message)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    with pytest.raises(URDFError, match=r"package_paths \(none given\).*AMENT_PREFIX_PATH=" + str(tmp_path)):
        load_robot(ARM_XACRO)
    with pytest.raises(PackageNotFoundError, match="cannot resolve 'package://nowhere/a.stl'") as raised:
        resolve_path("package://nowhere/a.stl", [PACKAGES])
    assert raised.value.package == "nowhere" and isinstance(raised.value, FileNotFoundError)


def test_xacros_find_is_restored_after_an_expansion():
    """The $(find) hook lasts one expansion, failed or not."""
    from xacro import substitution_args

    original = substitution_args._eval_find
    load_robot(ARM_XACRO, package_paths=[PACKAGES])
    with pytest.raises(URDFError):
        load_robot(ARM_XACRO)
    assert substitution_args._eval_find is original
    assert substitution_args._eval_dict["find"] is original


# ---------------------------------------------------------------- errors


def test_a_failed_expansion_names_the_file_and_xacros_message(tmp_path):
    robot = f'<robot name="r" {XACRO_NS}>{{}}<link name="base"/></robot>'
    undefined = write(tmp_path / "undefined.urdf.xacro", robot.format('<link name="${no_such_property}"/>'))
    with pytest.raises(URDFError, match=rf"xacro could not expand '{undefined}'.*no_such_property"):
        load_robot(undefined)
    missing_include = write(tmp_path / "top.xacro", robot.format('<xacro:include filename="parts/x.xacro"/>'))
    with pytest.raises(
        URDFError, match=rf"'{missing_include}'.*cannot read '{tmp_path / 'parts' / 'x.xacro'}'"
    ):
        load_robot(missing_include)
    write(tmp_path / "parts" / "broken.xacro", f"<robot {XACRO_NS}><link></robot>")
    includes_broken = write(
        tmp_path / "outer.xacro", robot.format('<xacro:include filename="parts/broken.xacro"/>')
    )
    with pytest.raises(URDFError, match=rf"\(in '{tmp_path / 'parts' / 'broken.xacro'}'\).*mismatched tag"):
        load_robot(includes_broken)
    macro = '<xacro:macro name="leg" params="side"><link name="${side}_${length}"/></xacro:macro>'
    macro += '<xacro:leg side="l"/>'
    in_macro = write(tmp_path / "macro.xacro", robot.format(macro))
    with pytest.raises(URDFError, match=r"\(in macro 'leg'\).*length"):
        load_robot(in_macro)
    with pytest.raises(URDFError, match=r"xacro could not expand the xacro XML text: .*no_such_property"):
        load_robot(undefined.read_text())


def test_an_undefined_argument_is_named_with_the_arguments_given(tmp_path):
    needs_argument = write(
        tmp_path / "arg.xacro", f'<robot name="r" {XACRO_NS}><link name="$(arg base_name)"/></robot>'
    )
    with pytest.raises(
        URDFError, match=r"Undefined substitution argument base_name.*xacro_args.*given: other"
    ):
        load_robot(needs_argument, xacro_args={"other": 1})
    assert load_robot(needs_argument, xacro_args={"base_name": "torso"}).links == ("torso",)
    with pytest.raises(URDFError, match="xacro_args must map argument names to values, got list"):
        load_robot(needs_argument, xacro_args=["base_name:=torso"])


def test_without_the_xacro_package_xacro_content_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "xacro", None)  # import xacro raises ImportError
    with pytest.raises(URDFError) as raised:
        load_robot(ARM_XACRO, package_paths=[PACKAGES])
    message = str(raised.value)
    assert str(ARM_XACRO) in message and "is a xacro document" in message
    assert "pip install xacro" in message and "apt install ros-$ROS_DISTRO-xacro" in message
    plain = write(tmp_path / "plain.urdf.xacro", '<robot name="r"><link name="base"/></robot>')
    assert load_robot(plain).links == ("base",)  # nothing to expand: xacro not needed
