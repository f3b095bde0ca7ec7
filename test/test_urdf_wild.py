"""URDFs as they are found in the wild: each quirk that urdfdom (and pinocchio, KDL, TRAC-IK)
accept loads in ik_node, with its minimal URDF, FK checked against pinocchio where it builds the
robot; and every URDF shipped in example-robot-data loads, matches pinocchio's FK on every link,
and gives a solver on a chain."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from ik_node import IKSolver, load_robot
from ik_node.description.catalogue import URDF_DIR, example_robot_data_dir
from ik_node.errors import URDFError

REVOLUTE = '<limit lower="-2" upper="2" effort="1" velocity="1"/>'


def chain(body: str = "", name: str = "r", root_attributes: str = "") -> str:
    """base -j1(rev, z)-> a -j2(rev, y)-> b -tool(fixed)-> tool, plus ``body`` joints/links."""
    return (
        f'<robot name="{name}"{root_attributes}><link name="base"/><link name="a"/><link name="b"/>'
        '<link name="tool"/>'
        '<joint name="j1" type="revolute"><parent link="base"/><child link="a"/>'
        f'<origin xyz="0 0 0.3"/><axis xyz="0 0 1"/>{REVOLUTE}</joint>'
        '<joint name="j2" type="revolute"><parent link="a"/><child link="b"/>'
        f'<origin xyz="0.2 0 0" rpy="0.1 0 0"/><axis xyz="0 1 0"/>{REVOLUTE}</joint>'
        '<joint name="tool" type="fixed"><parent link="b"/><child link="tool"/>'
        '<origin xyz="0.25 0 0.05" rpy="0 0.3 0"/></joint>'
        f"{body}</robot>"
    )


@pytest.fixture(scope="module")
def pinocchio():
    """The pinocchio module; only the tests that compare with it skip where it is missing."""
    return pytest.importorskip("pinocchio", reason="pinocchio (PyPI 'pin') is a test extra")


def pinocchio_q(pinocchio, model, robot, values: dict) -> np.ndarray:
    """Our joint values as pinocchio's q (mimic followers from their leaders as ik_node reads
    them; joints ik_node cannot use at pinocchio's neutral)."""
    q = pinocchio.neutral(model)
    for joint_id in range(1, model.njoints):
        joint = robot.joints.get(model.names[joint_id])
        if joint is None or joint.problem is not None or not joint.is_movable:
            continue
        leader, multiplier, offset = robot.mimic_map(joint.name)
        value = multiplier * values.get(leader, 0.0) + offset
        start, size = model.joints[joint_id].idx_q, model.joints[joint_id].nq
        if size == 2:
            q[start : start + 2] = [np.cos(value), np.sin(value)]
        elif size == 1:
            q[start] = value
    return q


def usable_links(robot) -> list[str]:
    """Links whose path from the root crosses no joint that cannot be used."""
    return [
        link for link in robot.links if all(j.problem is None for j in robot.path_joints(robot.root, link))
    ]


def assert_fk_matches_pinocchio(pinocchio, robot, model, configurations: int = 3, seed: int = 0) -> int:
    """FK of every usable link equals pinocchio's at random configurations; returns the link count."""
    data = model.createData()
    rng = np.random.default_rng(seed)
    tree = robot.full_tree
    lower = np.clip(np.where(np.isfinite(tree.lower), tree.lower, -np.pi), -np.pi, np.pi)
    upper = np.clip(np.where(np.isfinite(tree.upper), tree.upper, np.pi), -np.pi, np.pi)
    body = pinocchio.FrameType.BODY
    links = [link for link in usable_links(robot) if model.existFrame(link, body)]
    for _ in range(configurations):
        values = dict(zip(robot.joint_names, rng.uniform(lower, np.maximum(lower, upper))))
        pinocchio.framesForwardKinematics(model, data, pinocchio_q(pinocchio, model, robot, values))
        for link in links:
            expected = data.oMf[model.getFrameId(link, body)].homogeneous
            np.testing.assert_allclose(robot.forward(values, link), expected, atol=1e-9, err_msg=link)
    return len(links)


def load_quietly(urdf):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_robot(urdf)


# ---------------------------------------------------------------- 1. nothing moves


ALL_FIXED = (
    '<robot name="r"><link name="a"/><link name="b"/><link name="camera"/>'
    '<joint name="f" type="fixed"><parent link="a"/><child link="b"/>'
    '<origin xyz="1 2 3" rpy="0.1 0.2 0.3"/></joint>'
    '<joint name="g" type="fixed"><parent link="b"/><child link="camera"/><origin xyz="0 0 1"/></joint>'
    "</robot>"
)


def test_a_robot_with_no_movable_joint_has_forward_kinematics_and_no_solver():
    robot = load_robot(ALL_FIXED)
    assert robot.joint_names == ()
    np.testing.assert_allclose(robot.tree("b", ["camera"]).forward({}, "camera")[:3, 3], [0, 0, 1])
    with pytest.raises(URDFError, match=r"nothing moves the tips \['camera'\]"):
        IKSolver(robot, "a", ["camera"])


def test_a_robot_with_no_movable_joint_matches_pinocchio(pinocchio):
    assert_fk_matches_pinocchio(pinocchio, load_robot(ALL_FIXED), pinocchio.buildModelFromXML(ALL_FIXED))


def test_a_fixed_only_sub_tree_of_a_moving_robot():
    robot = load_robot(chain())
    tree = robot.tree("b", ["tool"])
    assert tree.joint_names == ()
    np.testing.assert_allclose(
        tree.forward({}, "tool"), robot.forward({"j2": 0.7}, "tool", base="b"), atol=1e-12
    )


# ---------------------------------------------------------------- 2, 3. mimic tags peers ignore

MIMIC_ON_FIXED = chain().replace(
    '<joint name="tool" type="fixed"><parent link="b"/>',
    '<joint name="tool" type="fixed"><mimic joint="j1"/><parent link="b"/>',
)
MIMIC_OF_FIXED = chain(
    '<link name="c"/><joint name="j3" type="revolute"><parent link="tool"/><child link="c"/>'
    f'<axis xyz="1 0 0"/><mimic joint="tool" multiplier="2"/>{REVOLUTE}</joint>'
)
MIMIC_OF_NOBODY = MIMIC_OF_FIXED.replace('<mimic joint="tool"', '<mimic joint="index_q1"')


MIMIC_CASES = {
    "on_fixed": (MIMIC_ON_FIXED, "mimic tag on fixed joint 'tool' ignored", ()),
    "of_fixed": (MIMIC_OF_FIXED, "'j3' mimics fixed joint 'tool': it moves on its own", ("j3",)),
    "of_missing": (MIMIC_OF_NOBODY, "'j3' mimics 'index_q1', which does not exist", ("j3",)),
}


@pytest.mark.parametrize("name", list(MIMIC_CASES))
def test_mimic_tags_peers_ignore_load_with_a_warning(name):
    xml, warning, independent = MIMIC_CASES[name]
    with pytest.warns(UserWarning, match=warning):
        robot = load_robot(xml)
    assert robot.joint_names == ("j1", "j2", *independent)


@pytest.mark.parametrize("name", list(MIMIC_CASES))
def test_mimic_tags_peers_ignore_match_pinocchio(name, pinocchio):
    xml = MIMIC_CASES[name][0]
    assert_fk_matches_pinocchio(pinocchio, load_quietly(xml), pinocchio.buildModelFromXML(xml))


# ---------------------------------------------------------------- 4, 10. what IK never reads

JUNK_LINK = (
    '<link name="b"><visual><geometry><mesh filename="m.stl" scale="1 1 1 1"/></geometry>'
    '<material name="x"><texture/><color rgba="1 0 0"/></material></visual>'
    "<visual><geometry/></visual><visual><geometry><capsule radius='1' length='2'/></geometry></visual>"
    "<collision><geometry><plane normal='0 0 1'/></geometry><material name='y'/></collision>"
    "<collision><geometry><box size='1 1 1'/><cdf/></geometry></collision>"
    "<inertial><inertia ixx='1'/></inertial><inertial><origin xyz='0 0 0'/></inertial>"
    "<contact><lateral_friction value='1'/></contact></link>"
)


def test_visual_collision_inertial_and_material_content_never_refuses_the_robot(recwarn):
    xml = (
        chain()
        .replace('<link name="b"/>', JUNK_LINK)
        .replace('<link name="base"/>', '<link name="base"/><material name="top"><texture/></material>')
    )
    xml = xml.replace("</joint>", '<dynamics damping="1" D="2" K="3"/><calibration rising="0"/></joint>', 1)
    robot = load_robot(xml)
    assert robot.joint_names == ("j1", "j2")
    np.testing.assert_allclose(
        robot.forward({"j2": 0.3}, "tool"), load_robot(chain()).forward({"j2": 0.3}, "tool")
    )
    assert not [w for w in recwarn if "URDF" in str(w.message)], [str(w.message) for w in recwarn]


def test_vendor_urdf_noise_stays_out_of_the_way(recwarn):
    """The Panda's 28 <dynamics D= K=> attributes: no warning at load (debug log only)."""
    robots = example_robot_data_dir()
    if robots is None:
        pytest.skip("example-robot-data is not installed")
    load_robot(robots / "panda_description/urdf/panda.urdf")
    assert not [w for w in recwarn if "URDF" in str(w.message)], [str(w.message) for w in recwarn]


def test_cli_prints_warnings_as_plain_lines(tmp_path):
    path = tmp_path / "mimic.urdf"
    path.write_text(MIMIC_OF_NOBODY)
    run = subprocess.run(
        [sys.executable, "-m", "ik_node.cli", "fk", "--urdf", str(path), "--base", "base", "--tip", "tool"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr.startswith("warning: URDF: joint 'j3' mimics 'index_q1'"), run.stderr
    assert "cli/main.py" not in run.stderr and "UserWarning" not in run.stderr


# ---------------------------------------------------------------- 5, 6, 7, 9. XML strictness

DECLARATION = '<?xml version="1.0" encoding="utf-8"?>'


@pytest.mark.parametrize(
    "text",
    [
        "\n  " + DECLARATION + "\n" + chain(),
        "\ufeff" + DECLARATION + chain(),
        "\ufeff" + chain(body="<!--" + "x" * 400 + "/" + "-->"),  # long, with a '/' far in
        chain(root_attributes=' xmlns="http://www.ros.org"'),
        chain() + "\x00",
    ],
    ids=[
        "whitespace_before_declaration",
        "byte_order_mark",
        "long_bom_string",
        "default_namespace",
        "trailing_nul",
    ],
)
def test_xml_quirks_load_from_a_string_and_from_a_file(text, tmp_path):
    path = tmp_path / "robot.urdf"
    path.write_bytes(text.encode("utf-8"))
    for source in (text, path, str(path)):
        robot = load_robot(source)
        assert robot.joint_names == ("j1", "j2")
        np.testing.assert_allclose(
            robot.forward({"j1": 0.4}, "tool"), load_robot(chain()).forward({"j1": 0.4}, "tool")
        )


def test_unprocessed_xacro_is_expanded_even_with_an_undeclared_prefix():
    """(test_xacro.py tests the expansion itself.)"""
    pytest.importorskip("xacro")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot = load_robot(chain(body='<xacro:property name="p" value="1"/>'))
    assert robot.joint_names == ("j1", "j2")
    with pytest.raises(URDFError, match="xacro could not expand.*x.xacro"):
        load_robot(chain(body='<xacro:include filename="x.xacro"/>'))


#: Run in a fresh interpreter where ``import xacro`` fails (a finder ahead of every other on
#: sys.meta_path), whether or not xacro is installed here: loads each URDF given in argv and prints
#: one line per file, its joint names or the error.
WITHOUT_XACRO = """
import importlib.abc, json, sys, warnings

class NoXacro(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "xacro":
            raise ImportError("xacro is not installed (blocked by the test)")

sys.meta_path.insert(0, NoXacro())
try:
    import xacro  # noqa: F401
    sys.exit("xacro is still importable")
except ImportError:
    pass
warnings.simplefilter("ignore")
from ik_node import load_robot

for path in sys.argv[1:]:
    try:
        print(json.dumps(list(load_robot(path).joint_names)))
    except Exception as error:
        print(json.dumps(f"{type(error).__name__}: {error}"))
"""


def load_without_xacro(paths) -> list:
    """What :data:`WITHOUT_XACRO` prints for each of ``paths``: joint names, or an error string."""
    run = subprocess.run(
        [sys.executable, "-c", WITHOUT_XACRO, *map(str, paths)], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    return [json.loads(line) for line in run.stdout.splitlines()]


def test_a_declared_but_unused_xacro_namespace_needs_no_xacro(tmp_path):
    """URDFs that xacro generated keep ``xmlns:xacro`` on <robot> (both URIs in use): without
    xacro they load like the same URDF without the declaration; real markup still needs xacro."""
    declared = tmp_path / "declared.urdf"
    declared.write_text(chain(root_attributes=' xmlns:xacro="http://www.ros.org/wiki/xacro"'))
    wiki = tmp_path / "wiki.urdf"
    wiki.write_text(DECLARATION + chain(root_attributes=' xmlns:xacro="http://wiki.ros.org/xacro"'))
    markup = tmp_path / "markup.urdf"
    markup.write_text(chain(body='<xacro:property name="p" value="1"/>'))
    loaded = load_without_xacro([declared, wiki, markup])
    assert loaded[:2] == [["j1", "j2"], ["j1", "j2"]]
    assert "is a xacro document, but the 'xacro' Python package is not installed" in loaded[2]
    np.testing.assert_allclose(
        load_robot(declared).forward({"j1": 0.4}, "tool"), load_robot(chain()).forward({"j1": 0.4}, "tool")
    )


def test_a_string_declaring_another_encoding_keeps_its_names(tmp_path):
    text = '<?xml version="1.0" encoding="ISO-8859-1"?>' + chain().replace('"tool"', '"schädel"')
    assert "schädel" in load_robot(text).links
    path = tmp_path / "latin.urdf"
    path.write_bytes(text.encode("iso-8859-1"))
    assert "schädel" in load_robot(path).links


# ---------------------------------------------------------------- 8. "unlimited" revolute joints


@pytest.mark.parametrize("bound", ["100", "1e6", "1e16"])
def test_revolute_joints_with_huge_ranges_solve_like_continuous_ones(bound):
    """arm6 with every revolute range +-bound (how SDF-derived URDFs write "unlimited"): every
    reachable goal solved at 5 ms, each angle the equivalent nearest the seed (within pi)."""
    text = (URDF_DIR / "arm6.urdf").read_text()
    text = text.replace('lower="-3.14159265" upper="3.14159265"', f'lower="-{bound}" upper="{bound}"')
    text = text.replace('lower="-6.28318531" upper="6.28318531"', f'lower="-{bound}" upper="{bound}"')
    robot = load_robot(text)
    solver = IKSolver(robot, "base_link", ["tool0"])
    wide = np.flatnonzero(solver.upper - solver.lower > 2 * np.pi)
    assert len(wide) >= 3
    rng = np.random.default_rng(8)
    seed = solver.rest_posture
    solved = 0
    for _ in range(40):
        q = rng.uniform(np.maximum(solver.lower, -np.pi), np.minimum(solver.upper, np.pi))
        target = solver.tree.forward(q, "tool0")
        result = solver.solve(target, seed=seed, timeout=0.005)
        solved += result.success
        assert np.all(np.abs(result.q[wide] - seed[wide]) <= np.pi + 1e-9), result.q
        if result.success:
            reached = load_robot(text).forward(dict(zip(solver.joint_names, result.q)), "tool0", "base_link")
            assert np.linalg.norm(reached[:3, 3] - target[:3, 3]) <= 1e-5 + 1e-9
    assert solved >= 39, solved


# ---------------------------------------------------------------- example-robot-data, whole

ERD = example_robot_data_dir()
ERD_URDFS = sorted(ERD.rglob("*.urdf")) if ERD is not None else []


@pytest.mark.skipif(ERD is None, reason="example-robot-data is not installed")
def test_every_example_robot_data_urdf_that_pinocchio_builds_loads_and_matches_it(pinocchio):
    """Walks the whole package: each URDF pinocchio builds loads in ik_node, FK of every link
    equals pinocchio's, and a solver builds on the longest chain (>= 2 movable joints)."""
    checked, links, solvers, skipped = 0, 0, 0, []
    for path in ERD_URDFS:
        try:
            model = pinocchio.buildModelFromUrdf(str(path))
        except Exception as error:  # pinocchio (urdfdom) refuses it too: not ours to load
            skipped.append(f"{path.name}: {str(error).splitlines()[0][:80]}")
            continue
        robot = load_quietly(path)
        links += assert_fk_matches_pinocchio(pinocchio, robot, model, seed=checked)
        checked += 1
        leaves = [link for link in usable_links(robot) if not robot.child_joints[link]]
        movable = {leaf: sum(j.is_movable for j in robot.path_joints(robot.root, leaf)) for leaf in leaves}
        tip = max(movable, key=movable.get) if movable else None
        if tip is not None and movable[tip] >= 2:
            solver = IKSolver(robot, robot.root, [tip])
            assert len(solver.joint_names) >= 2
            solvers += 1
    assert checked >= 60, (checked, skipped)
    assert solvers >= 55 and links >= 2000, (solvers, links)
    assert len(skipped) <= 2, skipped


def test_the_bundled_urdfs_match_their_generator():
    run = subprocess.run(
        [sys.executable, str(URDF_DIR / "generate.py"), "--check"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.skipif(ERD is None, reason="example-robot-data is not installed")
def test_example_robot_data_urdfs_that_declare_xacro_load_without_it(pinocchio):
    """Its URDFs with ``xmlns:xacro`` and no markup (38 in 4.x: Panda, UR, Talos, TIAGo...): each
    one pinocchio (urdfdom) builds loads without xacro, the same robot as here (FK against
    pinocchio: the test above)."""
    declaring = [path for path in ERD_URDFS if b"xmlns:xacro" in path.read_bytes()]
    built = []
    for path in declaring:
        try:
            pinocchio.buildModelFromUrdf(str(path))
        except Exception:  # pinocchio refuses it too (ur3.urdf has no links): not ours to load
            continue
        built.append(path)
    assert len(built) >= 30, len(built)
    for path, names in zip(built, load_without_xacro(built)):
        assert names == list(load_quietly(path).joint_names), f"{path.name}: {names}"
