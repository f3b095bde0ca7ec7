"""Fuzzed input, property-based: the URDF loader on mutated URDFs and the solver on hostile
targets, seeds and limits. Only ik_node's own clear errors may escape; every result is finite
and within the limits. (The node's handlers are fuzzed through real topics in test_node_fuzz.py.)

Case counts are fixed (``max_examples``) so the README's figures are what CI runs.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ik_node import IKNodeError, IKSolver, load_robot
from ik_node.description.catalogue import URDF_DIR

URDF_CASES = 2500
SOLVER_CASES = 2500
#: Seed-table entries of each fuzzed solver: what is fuzzed is input and limit handling, which a
#: table of any size exercises; the default (16384 entries, ~95 ms to build) made this test
#: ~250 s of the suite (a solver per example), 256 entries ~4 ms.
FUZZ_TABLE = 256

SOURCE_URDFS = {
    name: (URDF_DIR / f"{name}.urdf").read_text() for name in ("arm6", "arm7", "mobile_manipulator")
}
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")
ABSURD = ["nan", "inf", "-inf", "1e308", "-1e308", "1e-320", "0", "-1", "", "abc", "1 2", "0x10"]


@st.composite
def mutated_urdfs(draw):
    """A bundled URDF after 1-4 mutations: absurd numbers, deleted attributes or elements,
    duplicated elements, swapped parent/child, truncation, stray bytes."""
    text = SOURCE_URDFS[draw(st.sampled_from(sorted(SOURCE_URDFS)))]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(["number", "attribute", "element", "duplicate", "swap", "truncate", "bytes"])
        )
        if kind == "number":
            matches = list(NUMBER.finditer(text))
            if not matches:
                continue
            match = matches[draw(st.integers(0, len(matches) - 1))]
            text = text[: match.start()] + draw(st.sampled_from(ABSURD)) + text[match.end() :]
        elif kind == "attribute":
            matches = list(re.finditer(r'\s\w+="[^"]*"', text))
            if not matches:
                continue
            match = matches[draw(st.integers(0, len(matches) - 1))]
            text = text[: match.start()] + text[match.end() :]
        elif kind in ("element", "duplicate"):
            matches = list(re.finditer(r"<(link|joint|limit|axis|origin|mimic|parent|child)\b[^>]*/>", text))
            if not matches:
                continue
            match = matches[draw(st.integers(0, len(matches) - 1))]
            replacement = "" if kind == "element" else match.group(0) * 2
            text = text[: match.start()] + replacement + text[match.end() :]
        elif kind == "swap":
            matches = list(re.finditer(r'<parent link="([^"]+)"/>\s*<child link="([^"]+)"/>', text))
            if not matches:
                continue
            match = matches[draw(st.integers(0, len(matches) - 1))]
            swapped = f'<parent link="{match.group(2)}"/><child link="{match.group(1)}"/>'
            text = text[: match.start()] + swapped + text[match.end() :]
        elif kind == "truncate":
            text = text[: draw(st.integers(0, len(text)))]
        else:
            position = draw(st.integers(0, len(text)))
            text = text[:position] + draw(st.text(max_size=5)) + text[position:]
    return text


@settings(max_examples=URDF_CASES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(mutated_urdfs())
def test_loader_raises_only_its_own_clear_errors(urdf):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # urdf_parser_py's noise is summarised as a UserWarning
        try:
            robot = load_robot(urdf.encode())
        except IKNodeError as error:
            assert str(error), "an error without a message"
            return
    leaves = [link for link in robot.links if not robot.child_joints[link]]
    with np.errstate(all="ignore"):  # absurd but finite origins may overflow in FK: not an error
        for leaf in leaves:
            try:  # a leaf behind a joint that cannot be used is refused, naming the joint
                robot.forward({}, leaf)
            except IKNodeError as error:
                assert "cannot be used" in str(error), error


NON_KINEMATIC_CASES = 500
NON_KINEMATIC_BLOCK = re.compile(r"<(visual|collision|inertial)>.*?</\1>", re.DOTALL)
STRAY_ELEMENTS = ["<capsule radius='1' length='2'/>", "<texture/>", "<plane normal='0 0 1'/>", "<cdf/>",
                  "<material name='m'><color rgba='1 0'/></material>", "<geometry/>", "<mass/>"]  # fmt: skip


@st.composite
def urdfs_with_mutated_non_kinematic_content(draw):
    """A bundled URDF after 1-6 mutations inside <visual>, <collision> and <inertial> blocks
    only (absurd numbers, deleted attributes or elements, duplicates, stray elements): content IK
    never reads. Returns (name, mutated text)."""
    name = draw(st.sampled_from(sorted(SOURCE_URDFS)))
    text = SOURCE_URDFS[name]
    for _ in range(draw(st.integers(1, 6))):
        blocks = list(NON_KINEMATIC_BLOCK.finditer(text))
        block = blocks[draw(st.integers(0, len(blocks) - 1))]
        inner = block.group(0)
        kind = draw(st.sampled_from(["number", "attribute", "element", "duplicate", "stray"]))
        if kind == "number":
            matches = list(NUMBER.finditer(inner))
            if matches:
                match = matches[draw(st.integers(0, len(matches) - 1))]
                inner = inner[: match.start()] + draw(st.sampled_from(ABSURD)) + inner[match.end() :]
        elif kind == "attribute":
            matches = list(re.finditer(r'\s\w+="[^"]*"', inner))
            if matches:
                match = matches[draw(st.integers(0, len(matches) - 1))]
                inner = inner[: match.start()] + inner[match.end() :]
        elif kind in ("element", "duplicate"):
            matches = list(re.finditer(r"<\w+\b[^>]*/>", inner))
            if matches:
                match = matches[draw(st.integers(0, len(matches) - 1))]
                replacement = "" if kind == "element" else match.group(0) * 2
                inner = inner[: match.start()] + replacement + inner[match.end() :]
        else:
            position = inner.index(">") + 1
            inner = inner[:position] + draw(st.sampled_from(STRAY_ELEMENTS)) + inner[position:]
        text = text[: block.start()] + inner + text[block.end() :]
    return name, text


@settings(
    max_examples=NON_KINEMATIC_CASES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)
@given(urdfs_with_mutated_non_kinematic_content())
def test_mutations_of_what_ik_never_reads_never_refuse_the_robot(case):
    """Visual, collision and inertial content is not kinematics: whatever it holds, the robot
    loads without a warning and its FK is the unmutated robot's."""
    name, text = case
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot = load_robot(text)
    reference = REFERENCE_ROBOTS[name]
    assert robot.joint_names == reference.joint_names
    q = np.linspace(-0.5, 0.5, len(robot.joint_names))
    for link in reference.links:
        np.testing.assert_array_equal(robot.forward(q, link), reference.forward(q, link))


REFERENCE_ROBOTS = {name: load_robot(text) for name, text in SOURCE_URDFS.items()}


def rotation(draw_values) -> np.ndarray:
    quaternion = np.array(draw_values, dtype=float)
    quaternion /= np.linalg.norm(quaternion)
    w, x, y, z = quaternion
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


ARM7 = load_robot(URDF_DIR / "arm7.urdf")
HOSTILE = [math.nan, math.inf, -math.inf, 1e12, -1e12, 1e300]


@st.composite
def hostile_problems(draw):
    """A target (sane, far, NaN/inf, non-orthonormal, a reflection), a seed (in or out of the
    limits, NaN, wrong length) and tightened limits (possibly inverted)."""
    kind = draw(st.sampled_from(["sane", "far", "nonfinite", "skewed", "reflection", "huge"]))
    target = np.eye(4)
    target[:3, :3] = rotation(draw(st.lists(st.floats(0.1, 1), min_size=4, max_size=4)))
    target[:3, 3] = draw(st.lists(st.floats(-1, 1), min_size=3, max_size=3))
    if kind == "far":
        target[:3, 3] *= 50
    elif kind == "nonfinite":
        target[draw(st.integers(0, 2)), draw(st.integers(0, 3))] = draw(st.sampled_from(HOSTILE[:3]))
    elif kind == "skewed":
        target[:3, :3] += draw(st.floats(1e-4, 1.0)) * np.ones((3, 3))
    elif kind == "reflection":
        target[:3, 0] *= -1
    elif kind == "huge":
        target[:3, 3] = draw(st.sampled_from(HOSTILE[3:]))
    seed_kind = draw(st.sampled_from(["none", "inside", "outside", "nan", "short"]))
    seed = None
    if seed_kind != "none":
        length = 6 if seed_kind == "short" else 7
        seed = np.array(draw(st.lists(st.floats(-10, 10), min_size=length, max_size=length)))
        if seed_kind == "inside":
            seed = np.clip(seed, -1.5, -0.1)
        elif seed_kind == "nan":
            seed[draw(st.integers(0, 6))] = math.nan
    joint = f"joint{draw(st.integers(1, 7))}"
    low = draw(st.floats(-3, 3))
    high = low + draw(st.floats(-0.5, 3))
    method = draw(st.sampled_from(["dls", "dls", "dls", "pinv", "transpose", "ccd"]))
    return target, seed, {joint: low}, {joint: high}, method


@settings(max_examples=SOLVER_CASES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(hostile_problems())
def test_solver_gives_finite_in_limit_results_or_a_clear_error(problem):
    target, seed, lower, upper, method = problem
    try:
        solver = IKSolver(
            ARM7, "base_link", "tool0", lower=lower, upper=upper, method=method, seed_table_size=FUZZ_TABLE
        )
    except IKNodeError as error:
        assert "limit" in str(error)
        return
    try:
        result = solver.solve({"tool0": target}, seed=seed, timeout=0.001)
    except IKNodeError as error:
        assert str(error)
        return
    assert np.all(np.isfinite(result.q))
    assert np.all(result.q >= solver.lower) and np.all(result.q <= solver.upper)
    assert math.isfinite(result.position_error) and math.isfinite(result.orientation_error)
    assert result.reason in ("success", "unreachable", "timeout", "iterations")
