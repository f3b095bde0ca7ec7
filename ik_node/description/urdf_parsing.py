"""URDF or xacro into a :class:`~ik_node.description.model.Robot`: :func:`load_robot`.

The description (file path, XML string or bytes; xacro is expanded first, see
:mod:`ik_node.description.xacro_expansion`) is read with ``urdf_parser_py``, and what the parser
lets through is checked. **Liberal when loading, strict when used**: what IK never reads (visual,
inertial, materials, transmissions, gazebo blocks, dynamics, elements of other XML namespaces) is
dropped before parsing; ``<collision>`` elements are kept as plain
:class:`~ik_node.description.model.CollisionGeometry` records. A problem in one joint (an
unsupported type, a zero axis, inverted or non-overlapping limits, a mimic cycle) is a warning at
load time and the joint's ``problem``, an error only when a tree that contains the joint is
built. The tree's structure itself (links named by joints, one parent per link, one root) must
hold for anything to load.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import warnings
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..errors import URDFError
from ..lie import pose_from_xyz_rpy
from .model import COORDINATE_SUFFIXES, SUPPORTED_JOINT_TYPES, CollisionGeometry, Joint, Mimic, Robot
from .xacro_expansion import XACRO_NAMESPACE, expand_xacro, is_xacro

__all__ = ["ROOT_JOINT_TYPES", "load_robot"]

#: The name and parent link of the joint ``load_robot(..., root_joint=...)`` adds, and its types.
ROOT_JOINT, ROOT_LINK = "root_joint", "world"
ROOT_JOINT_TYPES = ("floating", "planar")
#: The children of a ``<joint>`` that kinematics reads; the rest (dynamics, calibration, ...) is
#: dropped before parsing.
_JOINT_CHILDREN = ("origin", "parent", "child", "axis", "limit", "mimic", "safety_controller")
_BYTE_ORDER_MARK = "\ufeff"
_XML_DECLARATION = re.compile(r"^<\?xml[^>]*\?>")
_PREFIXED_TAG = re.compile(rb"</?\s*([A-Za-z_][\w.-]*):[A-Za-z_]")
_DECLARED_PREFIX = re.compile(rb"xmlns:([A-Za-z_][\w.-]*)\s*=")
_log = logging.getLogger("ik_node.model")


def load_robot(
    description: str | os.PathLike | bytes,
    package_paths: Sequence[str | os.PathLike] | None = None,
    xacro_args: Mapping[str, object] | None = None,
    root_joint: str | None = None,
) -> Robot:
    """Load a robot description: a URDF or xacro file path, or URDF/xacro XML as a string or bytes.

    A ``.xacro`` file, or XML holding xacro markup (``xmlns:xacro``, ``<xacro:...>``, ``${...}``,
    ``$(...)``), is expanded first with the ``xacro`` package, as ``xacro FILE name:=value`` does
    (see :func:`ik_node.description.xacro_expansion.expand_xacro`): ``xacro_args`` maps argument names to
    values (``$(arg name)``); ``$(find PKG)`` resolves through ``package_paths`` (directories
    holding ROS packages, ``DIR/PKG/package.xml``) first, then the ament index of a sourced
    workspace. Pass a file by its path so that includes relative to it work.

    Raises :class:`~ik_node.errors.URDFError` when the XML, its xacro expansion (naming the file,
    the package not found, or how to install xacro) or the tree's structure is broken; a joint
    that cannot be used is warned about (``UserWarning``) and refused only when a tree
    containing it is built. Content IK never reads is dropped silently (logged at debug level).

    ``root_joint="floating"`` (or ``"planar"``) adds a joint ``root_joint`` of that type from a new
    root link ``world`` to the URDF's root link (pinocchio's free-flyer convention: the robot's
    base pose becomes part of the configuration, ``root_joint/x`` ... ``root_joint/qw``).
    """
    data, path = _read_description(description)
    if is_xacro(data, path):
        data = expand_xacro(data, path, package_paths=package_paths, xacro_args=xacro_args)
    raw = _parse_xml(data)
    if raw.tag != "robot":
        raise URDFError(f"URDF root element must be <robot>, found <{raw.tag}>")
    _check_unique_names(raw)
    collision_geometry, collision_problems = _collision_geometry(
        raw, None if path is None else path.resolve().parent
    )
    _keep_kinematics_only(raw)
    unknown_types = _neutralise_unknown_joint_types(raw)
    if not raw.get("name"):
        raw.set("name", "robot")
    parsed = _parse_with_urdf_parser_py(ElementTree.tostring(raw))
    present_soft_limits = {
        element.get("name"): element.find("safety_controller").attrib
        for element in raw.iter("joint")
        if element.find("safety_controller") is not None
    }
    link_names = [link.name for link in parsed.links]
    known_links = set(link_names)
    joints = [
        _convert_joint(joint, known_links, present_soft_limits, unknown_types.get(joint.name))
        for joint in parsed.joints
    ]
    if root_joint is not None:
        link_names, joints = _with_root_joint(root_joint, link_names, joints)
    _check_tree(link_names, joints)
    joints = _resolve_mimics(joints)
    for joint in joints:
        if joint.problem is not None:
            warnings.warn(
                f"URDF: joint '{joint.name}' cannot be used ({joint.problem}); trees through it are refused",
                stacklevel=2,
            )
    return Robot(
        parsed.name,
        link_names,
        joints,
        collision_geometry=collision_geometry,
        package_paths=package_paths,
        description_hash=hashlib.sha256(data).hexdigest(),
        collision_problems=collision_problems,
    )


# ------------------------------------------------------------------ reading the XML


def _read_description(urdf) -> tuple[bytes, Path | None]:
    """The document's bytes, and its file's path (None for XML text): a file's bytes as stored;
    a string's as UTF-8 with its XML declaration dropped (a declared encoding described the
    string's source, not these bytes) and a leading byte-order mark or whitespace removed;
    trailing NUL bytes and whitespace removed."""
    path = None
    if isinstance(urdf, bytes):
        data = urdf
    elif isinstance(urdf, os.PathLike) or (
        isinstance(urdf, str) and not urdf.lstrip(_BYTE_ORDER_MARK + " \t\r\n").startswith("<")
    ):
        path = Path(urdf)
        try:
            found = path.is_file()
        except OSError:  # e.g. a name too long for the file system
            found = False
        if not found:
            shown = str(path) if len(str(path)) <= 200 else str(path)[:200] + "..."
            raise URDFError(f"URDF file not found: '{shown}' (pass a file path or the URDF XML)")
        data = path.read_bytes()
    elif isinstance(urdf, str):
        text = _XML_DECLARATION.sub("", urdf.lstrip(_BYTE_ORDER_MARK + " \t\r\n"), count=1)
        data = text.encode("utf-8")
    else:
        raise URDFError(f"expected a URDF path or XML string, got {type(urdf).__name__}")
    if data.startswith(_BYTE_ORDER_MARK.encode("utf-8")):
        data = data[3:]
    return data.strip(b" \t\r\n\x00"), path


def _parse_xml(data: bytes) -> ElementTree.Element:
    """The XML tree, tags without namespaces. Prefixes used but never declared (``xacro:`` in
    a file that skipped xacro) are declared first so that the document parses; the root's
    default namespace is dropped from every tag."""
    used = set(_PREFIXED_TAG.findall(data)) - set(_DECLARED_PREFIX.findall(data)) - {b"xml", b"xmlns"}
    if used:
        declarations = b"".join(
            b' xmlns:%s="urn:ik-node:undeclared:%s"' % (prefix, prefix) for prefix in sorted(used)
        )
        data = re.sub(rb"<robot\b", b"<robot" + declarations, data, count=1)
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as error:
        raise URDFError(f"malformed URDF XML: {error}") from None
    if root.tag.startswith("{"):
        default = root.tag[: root.tag.index("}") + 1]
        for element in root.iter():
            if isinstance(element.tag, str) and element.tag.startswith(default):
                element.tag = element.tag[len(default) :]
    return root


_GEOMETRY_SIZES = {"box": ("size",), "cylinder": ("radius", "length"), "capsule": ("radius", "length"),
                   "sphere": ("radius",)}  # fmt: skip


def _collision_geometry(raw: ElementTree.Element, directory: Path | None) -> tuple[dict, list[str]]:
    """Each link's ``<collision>`` elements as :class:`CollisionGeometry` records (plain numbers
    and file names: meshes are read only when a collision model is asked for), and the problems
    of the elements left out (unknown shape, missing, non-finite or negative sizes), each naming
    its link: loading stays silent about them, :mod:`ik_node.collision` warns."""
    found: dict[str, list[CollisionGeometry]] = {}
    problems = []
    for link in raw.findall("link"):
        name = link.get("name")
        for element in link.findall("collision"):
            try:
                found.setdefault(name, []).append(_collision_record(name, element, directory))
            except ValueError as error:
                problems.append(f"link '{name}': <collision> left out ({error})")
                _log.debug("URDF: %s", problems[-1])
    return found, problems


def _numbers(text: str | None, count: int, what: str) -> tuple[float, ...]:
    try:
        values = tuple(float(word) for word in (text or "").split())
    except ValueError:
        values = ()
    if len(values) != count or not all(math.isfinite(value) for value in values):
        raise ValueError(f"{what} must be {count} finite numbers, got {text!r}")
    return values


def _collision_record(link: str, element: ElementTree.Element, directory: Path | None) -> CollisionGeometry:
    origin_element = element.find("origin")
    xyz, rpy = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    if origin_element is not None:
        if origin_element.get("xyz") is not None:
            xyz = _numbers(origin_element.get("xyz"), 3, "origin xyz")
        if origin_element.get("rpy") is not None:
            rpy = _numbers(origin_element.get("rpy"), 3, "origin rpy")
    geometry = element.find("geometry")
    shapes = [child for child in (geometry if geometry is not None else ()) if isinstance(child.tag, str)]
    if not shapes:
        raise ValueError("no geometry")
    shape = shapes[0]
    origin = pose_from_xyz_rpy(np.array(xyz), np.array(rpy))
    if shape.tag == "mesh":
        if not shape.get("filename"):
            raise ValueError("a mesh without a filename")
        scale = _numbers(shape.get("scale"), 3, "mesh scale") if shape.get("scale") else (1.0, 1.0, 1.0)
        return CollisionGeometry(link, "mesh", origin, (), shape.get("filename"), scale, directory)
    if shape.tag not in _GEOMETRY_SIZES:
        raise ValueError(f"unknown shape <{shape.tag}>; known: mesh, {', '.join(_GEOMETRY_SIZES)}")
    if shape.tag == "box":
        size = _numbers(shape.get("size"), 3, "box size")
    else:
        keys = _GEOMETRY_SIZES[shape.tag]
        size = tuple(_numbers(shape.get(key), 1, f"{shape.tag} {key}")[0] for key in keys)
    if any(value < 0.0 for value in size):
        raise ValueError(f"{shape.tag} sizes must not be negative, got {size}")
    return CollisionGeometry(link, shape.tag, origin, size, directory=directory)


def _keep_kinematics_only(raw: ElementTree.Element) -> None:
    """Drop what IK never reads: top-level elements other than links and joints, every child of
    a link (visual, collision, inertial), joint children other than ``_JOINT_CHILDREN``, and
    elements of other XML namespaces (warned about; xacro elements left after the expansion,
    e.g. under a prefix other than ``xacro:``, are named as such)."""
    foreign = []
    for element in list(raw):
        if not isinstance(element.tag, str) or element.tag not in ("link", "joint"):
            if isinstance(element.tag, str) and element.tag.startswith("{"):
                foreign.append(element.tag)
            raw.remove(element)
            continue
        keep = () if element.tag == "link" else _JOINT_CHILDREN
        for child in list(element):
            if isinstance(child.tag, str) and child.tag.startswith("{"):
                foreign.append(child.tag)
            if child.tag not in keep:
                element.remove(child)
    if foreign:
        names = sorted({tag.split("}")[-1] for tag in foreign})
        xacro_namespaces = (XACRO_NAMESPACE, "urn:ik-node:undeclared:xacro")
        xacro_left = any(tag[1:].startswith(xacro_namespaces) for tag in foreign)
        advice = ": xacro elements left after the expansion (bound to a prefix other than 'xacro:'?)"
        warnings.warn(
            f"URDF: ignored {len(foreign)} elements of another XML namespace ({', '.join(names)})"
            + (advice if xacro_left else ""),
            stacklevel=3,
        )


def _neutralise_unknown_joint_types(raw: ElementTree.Element) -> dict[str, str]:
    """Joints of a type urdf_parser_py rejects (``screw``, a typo) are parsed as fixed so that
    the rest of the robot loads; returns {joint: its type} to refuse them when used."""
    known = tuple(kind for kind in SUPPORTED_JOINT_TYPES if kind != "ball")
    unknown = {}
    for element in raw.findall("joint"):
        if element.get("type") not in known:
            unknown[element.get("name")] = element.get("type")
            element.set("type", "fixed")
    return unknown


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
    # urdf_parser_py prints unknown tags and attributes to stderr and raises bare exceptions on
    # bad values: the former are logged at debug level (kinematics never reads them), the
    # latter become a URDFError a user can act on.
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
    for message in messages:
        _log.debug("URDF: ignored %s", message)
    return parsed


# ------------------------------------------------------------------ joints


def _finite_vector(values, default, what: str) -> tuple[np.ndarray, str | None]:
    """A 3-vector (``default`` where the URDF gives none), and a problem when it is unusable."""
    try:
        vector = np.asarray(default if values is None else values, dtype=float)
    except (TypeError, ValueError):
        return np.asarray(default, dtype=float), f"{what} must be 3 numbers, got {values}"
    if vector.shape != (3,) or not np.all(np.isfinite(vector)):
        return np.asarray(default, dtype=float), f"{what} must be 3 finite numbers, got {values}"
    return vector, None


def _convert_joint(parsed, link_names: set, present_soft_limits: dict, unknown_type: str | None) -> Joint:
    """A :class:`Joint`; what makes it unusable becomes its ``problem``. A joint naming a link
    that does not exist breaks the tree itself and is refused at once. ``unknown_type``: the type
    the URDF gave a joint parsed as fixed (see :func:`_neutralise_unknown_joint_types`)."""
    name, kind = parsed.name, parsed.type
    for role, link in (("parent", parsed.parent), ("child", parsed.child)):
        if link not in link_names:
            raise URDFError(f"joint '{name}' names {role} link '{link}', which does not exist")
    problems = []
    if unknown_type is not None:
        problems.append(f"unknown type '{unknown_type}'; supported: {', '.join(SUPPORTED_JOINT_TYPES)}")
    xyz, xyz_problem = _finite_vector(parsed.origin.xyz if parsed.origin else None, (0, 0, 0), "origin xyz")
    rpy, rpy_problem = _finite_vector(parsed.origin.rpy if parsed.origin else None, (0, 0, 0), "origin rpy")
    axis, axis_problem = _finite_vector(parsed.axis, (1, 0, 0), "axis")
    problems += [problem for problem in (xyz_problem, rpy_problem, axis_problem) if problem]
    if kind not in ("fixed", "floating") and axis_problem is None:
        norm = np.linalg.norm(axis)
        if norm < 1e-12:
            problems.append(f"{kind} joint with a zero axis; give a non-zero direction")
        else:
            axis = axis / norm
    lower, upper, max_velocity, limit_problem = _limits(parsed, present_soft_limits.get(name, {}))
    if limit_problem:
        problems.append(limit_problem)
    mimic = None
    if parsed.mimic is not None and kind in COORDINATE_SUFFIXES:
        problems.append(f"a {kind} joint cannot mimic another joint")
    elif parsed.mimic is not None:
        multiplier = 1.0 if parsed.mimic.multiplier is None else float(parsed.mimic.multiplier)
        offset = 0.0 if parsed.mimic.offset is None else float(parsed.mimic.offset)
        if not (math.isfinite(multiplier) and math.isfinite(offset)):
            problems.append("mimic multiplier and offset must be finite")
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
        problem="; ".join(problems) or None,
    )


def _limits(parsed, soft_attributes: Mapping[str, str]) -> tuple[float, float, float, str | None]:
    """Position limits (hard limits intersected with a safety controller's soft limits, for the
    soft bounds the URDF actually states), the velocity limit (``inf`` when absent, 0 or
    negative: unknown, as SDF writes "unlimited"), and a problem that makes them unusable."""
    kind, limit = parsed.type, parsed.limit
    max_velocity = math.inf
    if limit is not None and limit.velocity is not None:
        velocity = float(limit.velocity)
        if velocity > 0.0:  # (NaN, 0 and negative values are unknown)
            max_velocity = velocity
    if kind not in ("revolute", "prismatic"):
        return -math.inf, math.inf, max_velocity, None
    if limit is None:
        return -math.inf, math.inf, max_velocity, f"{kind} joint with no <limit>; URDF requires one"
    lower = float(limit.lower or 0.0)
    upper = float(limit.upper or 0.0)
    if not (math.isfinite(lower) and math.isfinite(upper)):
        return -math.inf, math.inf, max_velocity, f"limits must be finite, got [{lower}, {upper}]"
    if lower > upper:  # Bullet's (and peers') way of saying "no limit": read as peers do
        warnings.warn(
            f"URDF: joint '{parsed.name}' has lower limit {lower} above upper limit {upper}; read as "
            "unlimited (as Bullet and KDL read it)",
            stacklevel=4,
        )
        return -math.inf, math.inf, max_velocity, None
    safety = parsed.safety_controller
    if safety is not None:
        if "soft_lower_limit" in soft_attributes and safety.soft_lower_limit is not None:
            lower = max(lower, float(safety.soft_lower_limit))
        if "soft_upper_limit" in soft_attributes and safety.soft_upper_limit is not None:
            upper = min(upper, float(safety.soft_upper_limit))
        if not lower <= upper:
            problem = (
                f"safety_controller soft limits leave no range inside the hard limits "
                f"[{limit.lower}, {limit.upper}]"
            )
            return lower, upper, max_velocity, problem
    return lower, upper, max_velocity, None


def _with_root_joint(kind: str, link_names: list[str], joints: list[Joint]) -> tuple[list[str], list[Joint]]:
    """The links and joints with a ``kind`` joint ``root_joint`` from a new link ``world`` to the
    root link (see :func:`load_robot`)."""
    if kind not in ROOT_JOINT_TYPES:
        choices = " or ".join(f"'{choice}'" for choice in ROOT_JOINT_TYPES)
        raise URDFError(f"root_joint must be {choices} (or None), got {kind!r}")
    children = {joint.child for joint in joints}
    roots = [link for link in link_names if link not in children]
    if ROOT_LINK in link_names or any(joint.name == ROOT_JOINT for joint in joints):
        raise URDFError(
            f"cannot add root_joint='{kind}': the URDF already has a link '{ROOT_LINK}' or a joint "
            f"'{ROOT_JOINT}' (its root is {roots}); load it without root_joint, its own root joint "
            "is used as it is"
        )
    if len(roots) != 1:
        return link_names, joints  # (the tree check names the problem)
    added = Joint(ROOT_JOINT, kind, ROOT_LINK, roots[0], np.eye(4), np.array([0.0, 0.0, 1.0]))
    return [ROOT_LINK, *link_names], [added, *joints]


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


def _resolve_mimics(joints: list[Joint]) -> list[Joint]:
    """Mimic tags as peers read them: ignored on a fixed joint, and a follower of a fixed or
    missing leader moves on its own (each warned about, since it changes the kinematics). A
    follower in a mimic cycle, or whose leader cannot be used, cannot be used either."""
    by_name = {joint.name: joint for joint in joints}
    for joint in joints:
        if joint.mimic is None:
            continue
        leader = by_name.get(joint.mimic.leader)
        reason = None
        if not joint.is_movable:
            reason = f"mimic tag on fixed joint '{joint.name}' ignored"
        elif leader is None:
            reason = (
                f"joint '{joint.name}' mimics '{joint.mimic.leader}', which does not exist: "
                "it moves on its own"
            )
        elif not leader.is_movable:
            reason = f"joint '{joint.name}' mimics fixed joint '{leader.name}': it moves on its own"
        if reason:
            warnings.warn(f"URDF: {reason}", stacklevel=4)
            by_name[joint.name] = _replace(joint, mimic=None)
    for name, joint in list(by_name.items()):
        seen, current = {name}, joint
        while current.mimic is not None and current.problem is None:
            current = by_name[current.mimic.leader]
            if current.name in seen:
                by_name[name] = _replace(joint, problem=f"mimic joints form a cycle through '{name}'")
                break
            seen.add(current.name)
        else:
            if current is not joint and current.problem is not None and joint.problem is None:
                by_name[name] = _replace(
                    joint, problem=f"its mimic leader '{current.name}': {current.problem}"
                )
    return [by_name[joint.name] for joint in joints]


def _replace(joint: Joint, **changes) -> Joint:
    return Joint(**{**joint.__dict__, **changes})
