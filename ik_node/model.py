"""Robot model: a URDF turned into a validated kinematic tree of joints and links.

:func:`load_robot` reads a URDF (file path or XML string) with ``urdf_parser_py`` and checks
everything the parser lets through (missing links, cycles, zero axes, inverted limits, dangling
mimic joints, non-finite numbers). The resulting :class:`Robot` is immutable; solvers work on a
:class:`~ik_node.kinematics.KinematicTree` cut from it between a base link and one or more tips.

Units: metres, radians, m/s and rad/s. Joint frames follow URDF: the child link frame of a joint
is ``T_parent_child(q) = origin @ motion(axis, q)``.
"""

from __future__ import annotations

import math
import os
import warnings
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from .errors import UnknownLinkError, URDFError
from .lie import inverse, pose_from_xyz_rpy

__all__ = ["Joint", "Mimic", "Robot", "load_robot", "SUPPORTED_JOINT_TYPES"]

#: Joint types ik_node models. Each moving one has a single degree of freedom.
SUPPORTED_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")
_MULTI_DOF_TYPES = ("floating", "planar")
_KINEMATIC_TAGS = ("link", "joint", "material")


@dataclass(frozen=True)
class Mimic:
    """The joint follows ``leader``: ``q_follower = multiplier * q_leader + offset``."""

    leader: str
    multiplier: float = 1.0
    offset: float = 0.0  # [rad] or [m]


@dataclass(frozen=True, eq=False)
class Joint:
    """One URDF joint, validated.

    ``origin`` is ``T_parent_jointframe`` (4x4); ``axis`` is a unit vector in the joint frame;
    ``lower``/``upper`` are position limits in rad (revolute) or m (prismatic), ``-inf``/``inf``
    for continuous joints; ``max_velocity`` in rad/s or m/s (``inf`` when the URDF gives none).
    """

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray = field(repr=False)
    axis: np.ndarray = field(repr=False)
    lower: float = -math.inf
    upper: float = math.inf
    max_velocity: float = math.inf
    mimic: Mimic | None = None

    @property
    def is_movable(self) -> bool:
        return self.type != "fixed"

    @property
    def unit_twist(self) -> np.ndarray:
        """The joint's unit twist ``[v; w]`` in its own (child) frame: ``[0; axis]`` for
        revolute/continuous, ``[axis; 0]`` for prismatic, zero for fixed."""
        twist = np.zeros(6)
        if self.type in ("revolute", "continuous"):
            twist[3:] = self.axis
        elif self.type == "prismatic":
            twist[:3] = self.axis
        return twist


class Robot:
    """A validated kinematic tree read from a URDF.

    Attributes: ``name``; ``root`` (the URDF root link); ``links`` (link names); ``joints``
    (name -> :class:`Joint`); ``joint_names`` (the independent degrees of freedom of the whole
    robot — movable, non-mimic joints — in depth-first order from the root).
    """

    def __init__(self, name: str, links: Sequence[str], joints: Sequence[Joint]):
        self.name = name
        self.links = tuple(links)
        self.joints = {joint.name: joint for joint in joints}
        self.parent_joint = {joint.child: joint for joint in joints}
        self.child_joints: dict[str, list[Joint]] = {link: [] for link in self.links}
        for joint in joints:
            self.child_joints[joint.parent].append(joint)
        roots = [link for link in self.links if link not in self.parent_joint]
        self.root = roots[0]
        self.joint_names = self.full_tree.joint_names

    def __repr__(self) -> str:
        return (
            f"Robot({self.name!r}, root={self.root!r}, {len(self.links)} links, "
            f"{len(self.joint_names)} degrees of freedom)"
        )

    def check_link(self, link: str) -> None:
        """Raise :class:`UnknownLinkError` (listing the known links) unless ``link`` exists."""
        if link not in self.child_joints:
            raise UnknownLinkError(link, self.links)

    def path_joints(self, base_link: str, tip_link: str) -> list[Joint]:
        """Joints from ``base_link`` down to ``tip_link`` (base first).

        Raises when either link is unknown or ``tip_link`` is not below ``base_link``.
        """
        self.check_link(base_link)
        self.check_link(tip_link)
        joints = []
        link = tip_link
        while link != base_link:
            joint = self.parent_joint.get(link)
            if joint is None:
                raise URDFError(
                    f"tip link '{tip_link}' is not below base link '{base_link}' "
                    f"(the path from '{tip_link}' up to the root '{self.root}' does not pass "
                    f"through '{base_link}'); choose a base that is an ancestor of the tip"
                )
            joints.append(joint)
            link = joint.parent
        return joints[::-1]

    def leader_of(self, joint_name: str) -> str:
        """The independent joint that drives ``joint_name`` (itself unless it is a mimic joint)."""
        joint = self.joints[joint_name]
        while joint.mimic is not None:
            joint = self.joints[joint.mimic.leader]
        return joint.name

    def mimic_map(self, joint_name: str) -> tuple[str, float, float]:
        """``(leader, multiplier, offset)`` with ``q_joint = multiplier * q_leader + offset``,
        composed through chains of mimic joints."""
        joint = self.joints[joint_name]
        multiplier, offset = 1.0, 0.0
        while joint.mimic is not None:
            # q = m1 * (m2 * q_leader + o2) + o1
            offset = multiplier * joint.mimic.offset + offset
            multiplier *= joint.mimic.multiplier
            joint = self.joints[joint.mimic.leader]
        return joint.name, multiplier, offset

    def tree(self, base_link: str, tip_links: str | Sequence[str]):
        """The :class:`~ik_node.kinematics.KinematicTree` between ``base_link`` and the tips."""
        from .kinematics import KinematicTree

        return KinematicTree(self, base_link, tip_links)

    @cached_property
    def full_tree(self):
        """The whole robot as one tree from the root to every leaf link."""
        leaves = [link for link in self.links if not self.child_joints[link]]
        return self.tree(self.root, leaves)

    def joint_vector(self, q) -> np.ndarray:
        """``q`` as an array in :attr:`joint_names` order; a mapping may name any subset of the
        degrees of freedom (others sit at 0) and must not name unknown or mimic joints."""
        return self.full_tree.joint_vector(q)

    def forward(self, q, link: str, base: str | None = None) -> np.ndarray:
        """4x4 pose of ``link`` in the frame of ``base`` (default: the URDF root).

        ``q`` is a mapping ``{joint_name: value}`` (joints not named sit at 0, mimic joints follow
        their leader) or an array in :attr:`joint_names` order. Units: m, rad.
        """
        tree = self.full_tree
        poses = tree.link_poses(self.joint_vector(q))
        pose = tree.pose_of(poses, link)
        if base is None or base == self.root:
            return pose
        return inverse(tree.pose_of(poses, base)) @ pose


def load_robot(urdf: str | os.PathLike | bytes) -> Robot:
    """Load and validate a URDF given as a file path, an XML string or XML bytes.

    Raises :class:`~ik_node.errors.URDFError` naming the offending link or joint for anything
    the kinematics cannot use; unsupported joint types (``floating``, ``planar``) are refused.
    """
    xml_bytes = _read_urdf_bytes(urdf)
    try:
        raw = ElementTree.fromstring(xml_bytes)
    except ElementTree.ParseError as error:
        raise URDFError(f"malformed URDF XML: {error}") from None
    if raw.tag != "robot":
        raise URDFError(f"URDF root element must be <robot>, found <{raw.tag}>")
    _check_unique_names(raw)
    # Only links and joints matter to kinematics: transmissions, gazebo and ros2_control blocks
    # (often in formats urdf_parser_py rejects, e.g. PR2's old transmissions) are left out.
    for element in list(raw):
        if element.tag not in _KINEMATIC_TAGS:
            raw.remove(element)
    parsed = _parse_with_urdf_parser_py(ElementTree.tostring(raw))
    present_soft_limits = {
        element.get("name"): element.find("safety_controller").attrib
        for element in raw.iter("joint")
        if element.find("safety_controller") is not None
    }
    link_names = [link.name for link in parsed.links]
    joints = [_convert_joint(joint, set(link_names), present_soft_limits) for joint in parsed.joints]
    _check_tree(link_names, joints)
    _check_mimics(joints)
    return Robot(parsed.name or "robot", link_names, joints)


def _read_urdf_bytes(urdf) -> bytes:
    if isinstance(urdf, bytes):
        return urdf
    if isinstance(urdf, os.PathLike) or (isinstance(urdf, str) and not urdf.lstrip().startswith("<")):
        path = Path(urdf)
        if not path.is_file():
            raise URDFError(f"URDF file not found: '{path}' (pass a file path or the URDF XML)")
        return path.read_bytes()
    if isinstance(urdf, str):
        return urdf.encode("utf-8")
    raise URDFError(f"expected a URDF path or XML string, got {type(urdf).__name__}")


def _check_unique_names(raw: ElementTree.Element) -> None:
    for tag in ("link", "joint"):
        seen = set()
        for element in raw.findall(tag):
            name = element.get("name")
            if not name:
                raise URDFError(f"a <{tag}> element has no name attribute")
            if name in seen:
                raise URDFError(f"duplicate {tag} name '{name}'")
            seen.add(name)


def _parse_with_urdf_parser_py(xml_bytes: bytes):
    # urdf_parser_py prints unknown tags to stderr and raises bare exceptions on bad values;
    # turn both into something a user can act on.
    from urdf_parser_py import xml_reflection
    from urdf_parser_py.urdf import URDF

    messages: list[str] = []
    previous = xml_reflection.core.on_error
    xml_reflection.core.on_error = messages.append
    try:
        parsed = URDF.from_xml_string(xml_bytes)
    except Exception as error:  # the parser raises AssertionError, ValueError, KeyError...
        detail = str(error) or type(error).__name__
        raise URDFError(f"invalid URDF: {detail}") from None
    finally:
        xml_reflection.core.on_error = previous
    if messages:
        more = f" (and {len(messages) - 1} more)" if len(messages) > 1 else ""
        warnings.warn(f"URDF: ignored {messages[0]}{more}", stacklevel=3)
    return parsed


def _finite_vector(values, default, what: str, joint_name: str) -> np.ndarray:
    vector = np.asarray(default if values is None else values, dtype=float)
    if vector.shape != (3,) or not np.all(np.isfinite(vector)):
        raise URDFError(f"joint '{joint_name}': {what} must be 3 finite numbers, got {values}")
    return vector


def _convert_joint(parsed, link_names: set, present_soft_limits: dict) -> Joint:
    name, kind = parsed.name, parsed.type
    if kind in _MULTI_DOF_TYPES:
        raise URDFError(
            f"joint '{name}' has type '{kind}', which ik_node does not support; model it as a "
            "chain of prismatic and revolute/continuous joints (e.g. x, y, yaw for a mobile base)"
        )
    if kind not in SUPPORTED_JOINT_TYPES:
        raise URDFError(
            f"joint '{name}' has unknown type '{kind}'; supported: {', '.join(SUPPORTED_JOINT_TYPES)}"
        )
    for role, link in (("parent", parsed.parent), ("child", parsed.child)):
        if link not in link_names:
            raise URDFError(f"joint '{name}' names {role} link '{link}', which does not exist")
    xyz = _finite_vector(parsed.origin.xyz if parsed.origin else None, (0, 0, 0), "origin xyz", name)
    rpy = _finite_vector(parsed.origin.rpy if parsed.origin else None, (0, 0, 0), "origin rpy", name)
    axis = _finite_vector(parsed.axis, (1, 0, 0), "axis", name)
    if kind != "fixed":
        norm = np.linalg.norm(axis)
        if norm < 1e-12:
            raise URDFError(f"joint '{name}' ({kind}) has a zero axis; give a non-zero direction")
        axis = axis / norm
    lower, upper, max_velocity = _limits(parsed, present_soft_limits.get(name, {}))
    mimic = None
    if parsed.mimic is not None:
        multiplier = 1.0 if parsed.mimic.multiplier is None else float(parsed.mimic.multiplier)
        offset = 0.0 if parsed.mimic.offset is None else float(parsed.mimic.offset)
        if not (math.isfinite(multiplier) and math.isfinite(offset)):
            raise URDFError(f"joint '{name}': mimic multiplier and offset must be finite")
        mimic = Mimic(parsed.mimic.joint, multiplier, offset)
    return Joint(
        name=name,
        type=kind,
        parent=parsed.parent,
        child=parsed.child,
        origin=pose_from_xyz_rpy(xyz, rpy),
        axis=axis,
        lower=lower,
        upper=upper,
        max_velocity=max_velocity,
        mimic=mimic,
    )


def _limits(parsed, soft_attributes: Mapping[str, str]) -> tuple[float, float, float]:
    """Position limits (hard limits intersected with a safety controller's soft limits, for the
    soft bounds the URDF actually states) and the velocity limit (``inf`` when absent or 0)."""
    name, kind, limit = parsed.name, parsed.type, parsed.limit
    if kind in ("revolute", "prismatic") and limit is None:
        raise URDFError(f"joint '{name}' ({kind}) has no <limit>; URDF requires one")
    max_velocity = math.inf
    if limit is not None and limit.velocity is not None:
        max_velocity = float(limit.velocity)
        if math.isnan(max_velocity) or max_velocity < 0.0:
            raise URDFError(f"joint '{name}': velocity limit must be >= 0, got {limit.velocity}")
        max_velocity = max_velocity or math.inf
    if kind not in ("revolute", "prismatic"):
        return -math.inf, math.inf, max_velocity
    lower = float(limit.lower or 0.0)
    upper = float(limit.upper or 0.0)
    if not (math.isfinite(lower) and math.isfinite(upper)):
        raise URDFError(f"joint '{name}': limits must be finite, got [{lower}, {upper}]")
    if lower > upper:
        raise URDFError(f"joint '{name}': lower limit {lower} is above upper limit {upper}")
    safety = parsed.safety_controller
    if safety is not None:
        if "soft_lower_limit" in soft_attributes:
            lower = max(lower, float(safety.soft_lower_limit))
        if "soft_upper_limit" in soft_attributes:
            upper = min(upper, float(safety.soft_upper_limit))
        if not lower <= upper:
            raise URDFError(
                f"joint '{name}': safety_controller soft limits leave no range inside the hard "
                f"limits [{limit.lower}, {limit.upper}]"
            )
    return lower, upper, max_velocity


def _check_tree(link_names: list[str], joints: list[Joint]) -> None:
    parent_of: dict[str, Joint] = {}
    for joint in joints:
        if joint.child in parent_of:
            raise URDFError(
                f"link '{joint.child}' is the child of two joints "
                f"('{parent_of[joint.child].name}' and '{joint.name}'); a URDF must be a tree"
            )
        parent_of[joint.child] = joint
    if not link_names:
        raise URDFError("the URDF has no links")
    roots = [link for link in link_names if link not in parent_of]
    if len(roots) != 1:
        if not roots:
            raise URDFError("the URDF's joints form a cycle: every link has a parent, no root")
        raise URDFError(f"the URDF has {len(roots)} root links {roots}; it must have exactly one")
    children: dict[str, list[str]] = {link: [] for link in link_names}
    for joint in joints:
        children[joint.parent].append(joint.child)
    reached, stack = {roots[0]}, [roots[0]]
    while stack:
        for child in children[stack.pop()]:
            reached.add(child)
            stack.append(child)
    unreached = [link for link in link_names if link not in reached]
    if unreached:
        raise URDFError(f"links {unreached} are not connected to the root '{roots[0]}' (a cycle)")


def _check_mimics(joints: list[Joint]) -> None:
    by_name = {joint.name: joint for joint in joints}
    followers = [joint for joint in joints if joint.mimic is not None]
    for joint in followers:
        leader = by_name.get(joint.mimic.leader)
        if leader is None:
            raise URDFError(
                f"mimic joint '{joint.name}' follows joint '{joint.mimic.leader}', which does not exist"
            )
        if not (leader.is_movable and joint.is_movable):
            raise URDFError(f"mimic joint '{joint.name}' and its leader '{leader.name}' must both move")
    for joint in followers:
        seen, leader = {joint.name}, by_name[joint.mimic.leader]
        while leader.mimic is not None:
            if leader.name in seen:
                raise URDFError(f"mimic joints form a cycle through '{joint.name}'")
            seen.add(leader.name)
            leader = by_name[leader.mimic.leader]
