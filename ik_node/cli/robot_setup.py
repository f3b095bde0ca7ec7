"""Setting the node up for your own robot, without ROS: what ``ik_node info`` and ``ik_node config``
compute and write.

* :func:`robot_summary` describes a loaded robot as plain data (movable joints with their limits
  or, for multi-DOF joints such as a floating base, their coordinates; the chains from the root
  to each leaf link; suggested base and tip links), and :func:`print_summary` prints it as
  ``info`` shows it;
* :func:`parameter_file` writes the node's ROS 2 parameter file for a chain: comment lines saying
  how it was written and how to run the node with it, then the robot, the chain, the mode, the
  tuning parameters at their defaults, each tip's task parameters (``tip_tasks``,
  ``tip_task_axes``, ``tip_offsets``) at theirs, and the chain's joint limits from the URDF, with
  the defaults the node itself declares (:func:`ik_node.decisions.parameters.joint_parameter_defaults`:
  1-DOF joints only; a floating or planar joint is named in a comment: it has no limits);
* :func:`yaml_scalar` writes a value as YAML that ROS's parameter parser reads with the same type.

Degrees of freedom are counted as tangent (velocity) coordinates: a floating joint has 6 (its
configuration has 7: x y z and a quaternion qx qy qz qw), a planar one 3 (x, y, theta). Units: rad
or m (by joint type), velocities per second. Never imports rclpy.
"""

from __future__ import annotations

import json
import math
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path

from ..decisions.control import JointLayout
from ..decisions.parameters import JOINT_PARAMETERS, TIP_PARAMETERS, joint_parameter_defaults, spec_of

__all__ = [
    "CONFIG_TUNING_PARAMETERS",
    "parameter_file",
    "print_summary",
    "robot_summary",
    "xacro_options",
    "yaml_scalar",
]

# ------------------------------------------------------------------ info: the robot summary


def robot_summary(robot) -> dict:
    """What ``info`` shows, as plain data: limits in rad or m (by ``unit``), velocities per
    second, ``None`` where the URDF gives no limit; each joint's ``coordinates`` (its own name for
    a 1-DOF joint; ``free/x`` ... ``free/qw`` for a floating joint ``free``); the degrees of
    freedom (the tangent coordinates of the movable joints that can be used and mimic no other:
    6 per floating joint); the joints that cannot be used, with the reason.

    Suggested base links: the lowest link above every usable movable joint (no joint there moves
    the whole robot, so every chain can start from it); when a multi-DOF joint (a floating base)
    moves the robot, also the lowest link above every usable 1-DOF joint (the robot held fixed
    there); and the root. Suggested tips: the leaf links below the first base with at least one
    movable joint on the way, most joints first (``joints``, and ``degrees_of_freedom``).
    """
    movable = [joint for joint in robot.joints.values() if joint.is_movable]
    chains = []
    for leaf in _leaves(robot):
        path = robot.path_joints(robot.root, leaf)
        blocked = next((joint.name for joint in path if joint.problem is not None), None)
        chains.append({"leaf": leaf, "joints": [j.name for j in path if j.is_movable], "blocked_by": blocked})
    usable = [joint for joint in movable if joint.problem is None]
    base = _lowest_common_ancestor(robot, [joint.parent for joint in usable]) if usable else robot.root
    one_dof = [joint.parent for joint in usable if not joint.is_multi_dof]
    fixed_base = _lowest_common_ancestor(robot, one_dof) if one_dof else base
    tips = []
    for leaf in _leaves(robot):
        if base in _ancestry(robot, leaf):
            path = robot.path_joints(base, leaf)
            joints = [joint for joint in path if joint.is_movable]
            if joints and all(joint.problem is None for joint in path):
                freedom = sum(len(joint.tangent_names) for joint in joints if joint.mimic is None)
                tips.append({"link": leaf, "joints": len(joints), "degrees_of_freedom": freedom})
    tips.sort(key=lambda tip: -tip["joints"])  # (stable: URDF order among equals)
    return {
        "name": robot.name,
        "root": robot.root,
        "links": list(robot.links),
        "movable_joints": [_joint_summary(joint) for joint in movable],
        "degrees_of_freedom": [
            name for joint in usable if joint.mimic is None for name in joint.tangent_names
        ],
        "unusable_joints": {joint.name: joint.problem for joint in robot.joints.values() if joint.problem},
        "chains": chains,
        "suggested_base_links": list(dict.fromkeys([base, fixed_base, robot.root])),
        "suggested_tip_links": tips,
    }


def _joint_summary(joint) -> dict:
    def finite(value):
        return float(value) if math.isfinite(value) else None

    return {
        "name": joint.name,
        "type": joint.type,
        "parent": joint.parent,
        "child": joint.child,
        "unit": "m" if joint.type == "prismatic" else "rad",
        "coordinates": list(joint.coordinate_names),
        "lower": finite(joint.lower),
        "upper": finite(joint.upper),
        "max_velocity": finite(joint.max_velocity),
        "mimic": None if joint.mimic is None else dict(joint.mimic.__dict__),
        "problem": joint.problem,
    }


def _leaves(robot) -> list[str]:
    return [link for link in robot.links if not robot.child_joints[link]]


def _ancestry(robot, link: str) -> list[str]:
    """The links from the root down to ``link`` (both included)."""
    links = [link]
    while links[-1] in robot.parent_joint:
        links.append(robot.parent_joint[links[-1]].parent)
    return links[::-1]


def _lowest_common_ancestor(robot, links) -> str:
    paths = [_ancestry(robot, link) for link in links]
    common = robot.root
    for level in zip(*paths):
        if any(link != level[0] for link in level):
            break
        common = level[0]
    return common


def print_summary(summary: dict, robot_options: str) -> None:
    """Print a :func:`robot_summary` as ``info`` shows it: a joint table, the unusable joints,
    the chains, the suggested links and the ``ik_node config`` command to run next, with
    ``robot_options`` (``--urdf FILE`` and any xacro options) in it."""
    joints = summary["movable_joints"]
    print(f"robot: {summary['name']}")
    print(f"root link: {summary['root']}")
    print(f"links: {len(summary['links'])}")
    print(f"movable joints: {len(joints)} ({len(summary['degrees_of_freedom'])} degrees of freedom)")
    rows = [("name", "type", "position limits", "velocity limit", "")]
    rows += [(j["name"], j["type"], _position_text(j), _velocity_text(j), _joint_note(j)) for j in joints]
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[4]]
        print(("  " + "  ".join(cells)).rstrip())
    if summary["unusable_joints"]:
        print("joints that cannot be used (a chain through one is refused):")
        for name, problem in summary["unusable_joints"].items():
            print(f"  {name}: {problem}")
    print(f"chains (leaf link: movable joints from the root '{summary['root']}'):")
    width = max(len(chain["leaf"]) for chain in summary["chains"])
    for chain in summary["chains"]:
        names = ": " + ", ".join(chain["joints"]) if chain["joints"] else ""
        blocked = f"  (joint '{chain['blocked_by']}' cannot be used)" if chain["blocked_by"] else ""
        print(f"  {chain['leaf'].ljust(width)}  {len(chain['joints']):>2}{names}{blocked}")
    print(f"suggested base links: {_bases_text(summary)}")
    base = summary["suggested_base_links"][0]
    tips = summary["suggested_tip_links"]
    if not tips:
        print("suggested tip links: none (no leaf link has a usable movable joint on the way)")
        return
    listed = ", ".join(
        f"{tip['link']} ({tip['joints']} joints"
        + (f", {tip['degrees_of_freedom']} DOF)" if tip["degrees_of_freedom"] != tip["joints"] else ")")
        for tip in tips
    )
    print(f"suggested tip links (movable joints from {base}): {listed}")
    chain = f"--base {base} --tip {tips[0]['link']}"
    print(f"next: ik_node config {robot_options} {chain} --output my_robot.yaml")


def _bases_text(summary: dict) -> str:
    """The suggested base links, each with why: the lowest above every movable joint; with a
    floating (or planar) joint, the lowest above every 1-DOF joint (the robot held fixed there);
    the root."""
    root = summary["root"]
    floating = [
        joint["name"]
        for joint in summary["movable_joints"]
        if len(joint["coordinates"]) > 1 and joint["problem"] is None
    ]
    texts = []
    for index, link in enumerate(summary["suggested_base_links"]):
        why = []
        if index == 0:
            why.append("the lowest above every movable joint")
            if floating:
                names = ", ".join(f"'{name}'" for name in floating)
                why.append(f"whole-body IK: {names} moves the robot")
        elif link != root:
            why.append("the lowest above every 1-DOF joint: the robot held fixed there")
        if link == root:
            why.append("the root")
        texts.append(f"{link} ({'; '.join(why)})")
    return ", ".join(texts)


def _position_text(joint: dict) -> str:
    if len(joint["coordinates"]) > 1:
        return "none"
    if joint["problem"] is not None and joint["type"] not in ("revolute", "prismatic", "continuous"):
        return "-"
    if joint["lower"] is None and joint["upper"] is None:
        return "none"
    return f"[{_number(joint['lower'])}, {_number(joint['upper'])}] {joint['unit']}"


def _velocity_text(joint: dict) -> str:
    if joint["max_velocity"] is None:
        return "none"
    return f"{_number(joint['max_velocity'])} {joint['unit']}/s"


def _joint_note(joint: dict) -> str:
    notes = []
    if len(joint["coordinates"]) > 1:
        suffixes = " ".join(name.rsplit("/", 1)[-1] for name in joint["coordinates"])
        notes.append(f"coordinates {joint['name']}/{{{suffixes}}}")
    if joint["mimic"] is not None:
        mimic = joint["mimic"]
        notes.append(f"mimics {mimic['leader']} (x{_number(mimic['multiplier'])} {mimic['offset']:+g})")
    if joint["problem"] is not None:
        notes.append("cannot be used (see below)")
    return "; ".join(notes)


def _number(value) -> str:
    return "-inf" if value is None else f"{value:.6g}"


# ------------------------------------------------------------------ config: the parameter file

#: The node's tuning parameters the generated file shows with their defaults (the rest keep theirs).
CONFIG_TUNING_PARAMETERS = (
    "method",
    "solve_type",
    "timeout",
    "position_tolerance",
    "orientation_tolerance",
    "publish_rate",
    "max_joint_move",
    "publish_best_effort",
    "publish_trajectory",
)
#: The per-joint limit parameters the file writes, in the node's order (``{}``: the joint).
_JOINT_LIMIT_PATTERNS = tuple(
    spec.name for spec in JOINT_PARAMETERS if spec.name.startswith("joint_limits.{}.")
)
_PLAIN_STRING = re.compile(r"[A-Za-z_/][\w./-]*\Z")
#: Plain words a YAML or ROS parameter parser reads as something other than a string.
_NOT_STRINGS = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", "inf", "infinity", "nan"}


def parameter_file(
    robot,
    tree,
    urdf: Path,
    *,
    mode: str = "solve",
    node_name: str = "ik_node",
    xacro_args: Sequence[str] = (),
    package_paths: Sequence[str] = (),
    output: Path | None = None,
    root_joint: str | None = None,
) -> str:
    """The node's parameter file: how to run it, then the robot, the chain, the mode, the tuning
    parameters at their defaults, every tip's task parameters at theirs (the full pose, in the
    tip's axes, at its origin) and the chain's joint limits from the URDF (as the node declares
    them).

    ``urdf`` is the (absolute) robot description file, ``tree`` the chain's kinematic tree,
    ``xacro_args`` ``NAME:=VALUE`` items, ``package_paths`` directories (written absolute),
    ``output`` where the file goes (None: the header's commands name ``my_robot.yaml``), and
    ``root_joint`` the joint ``load_robot`` added to the URDF's root (``'floating'``,
    ``'planar'``; the node's ``root_joint`` parameter), if any.
    """
    params_file = str(output) if output is not None else "my_robot.yaml"
    options = (f" --root-joint {root_joint}" if root_joint else "") + xacro_options(xacro_args, package_paths)
    lines = _header_lines(
        robot, tree, urdf, params_file, mode=mode, name=node_name, options=options, xacro_args=xacro_args
    )
    lines += [
        f"{yaml_scalar(node_name)}:",
        "  ros__parameters:",
        f"    robot_description_file: {yaml_scalar(str(urdf))}",
        *_xacro_lines(xacro_args, package_paths),
        *([f"    root_joint: {yaml_scalar(root_joint)}"] if root_joint else []),
        f"    base_link: {yaml_scalar(tree.base_link)}",
        f"    tip_links: {yaml_scalar(list(tree.tip_links))}",
        f"    mode: {mode}",
    ]
    for parameter in CONFIG_TUNING_PARAMETERS:
        spec = spec_of(parameter)
        lines += textwrap.wrap(spec.described, width=96, initial_indent="    # ", subsequent_indent="    # ")
        lines.append(f"    {parameter}: {yaml_scalar(spec.default)}")
    for spec in TIP_PARAMETERS:  # tip_tasks: {tip: pose}, ...
        lines += textwrap.wrap(
            f"Per tip: {spec.described}", width=96, initial_indent="    # ", subsequent_indent="    # "
        )
        lines.append(f"    {spec.name.removesuffix('.{}')}:")
        lines += [f"      {yaml_scalar(tip)}: {yaml_scalar(spec.default)}" for tip in tree.tip_links]
    lines += _multi_dof_lines(tree)
    lines += [
        "    # The URDF's limits (MoveIt's joint_limits convention): tighter values here win, wider",
        "    # ones are refused. Positions in rad (revolute) or m (prismatic), velocities per second.",
        "    joint_limits:",
    ]
    defaults = joint_parameter_defaults(tree)
    for joint in JointLayout.of(tree).names:
        lines.append(f"      {yaml_scalar(joint)}:  # {robot.joints[joint].type}")
        for pattern in _JOINT_LIMIT_PATTERNS:
            key = pattern.removeprefix("joint_limits.{}.")
            lines.append(f"        {key}: {yaml_scalar(defaults[pattern.format(joint)])}")
    return "\n".join(lines) + "\n"


def _multi_dof_lines(tree) -> list[str]:
    """Comments naming the chain's multi-DOF joints (a floating or planar base): no limits, no
    per-joint parameters, and where their pose goes."""
    lines = []
    for joint in JointLayout.of(tree).multi_dof:
        text = (
            f"Joint '{joint.name}' ({joint.type}, {joint.parent} -> {joint.child}; coordinates "
            f"{', '.join(joint.coordinate_names)}) has no limits and no per-joint parameters "
            "(joint_limits, joint_weights, rest_posture): it moves freely, rests at the origin, and "
            "its pose is published on ~/base_pose (and as a TF) instead of in the joint messages."
        )
        lines += textwrap.wrap(text, width=96, initial_indent="    # ", subsequent_indent="    # ")
    return lines


def _header_lines(
    robot, tree, urdf: Path, params_file: str, *, mode: str, name: str, options: str, xacro_args=()
) -> list[str]:
    """Comments: what the file is, the command that wrote it, how to run the node with it, and
    its topics."""
    tips = list(tree.tip_links)
    written = f"ik_node config --urdf {urdf} --base {tree.base_link}"
    written += "".join(f" --tip {tip}" for tip in tips) + options
    rename = "" if name == "ik_node" else f" -r __node:={name}"
    topics = [f"/{name}/{tip}/target_pose" for tip in tips] if len(tips) > 1 else [f"/{name}/target_pose"]
    joints = f"{len(tree.joints)} joints"
    if len(tree.tangent_names) != len(tree.joints):
        joints += f" ({len(tree.tangent_names)} degrees of freedom)"
    lines = [
        f"# ik_node parameters for robot '{robot.name}': {tree.base_link} -> {', '.join(tips)}, "
        f"{joints}. Written by:",
        f"#   {written} --mode {mode} --name {name}",
        "# Run the node with it:",
        f"#   ik_node --ros-args --params-file {params_file}{rename}",
        f"#   ros2 launch ik_node ik_node.launch.py urdf_file:={urdf} params_file:={params_file}"
        + (f' xacro_args:="{" ".join(xacro_args)}"' if xacro_args else ""),
        "#   (beside the robot's own bringup; add demo:=true for robot_state_publisher and RViz without one)",
    ]
    if urdf.name.endswith(".xacro"):
        lines.append(
            "#   (the launch file runs xacro, which finds packages through the ament index: source them)"
        )
    if name != "ik_node":
        lines.append("#   (the launch file's node is ik_node: use --name ik_node there)")
    for tip in tips:  # the joints each path crosses: up from a base below them, then down
        path = [(joint.name, upward) for joint, upward in robot.path(tree.base_link, tip) if joint.is_movable]
        up = ", ".join(joint for joint, upward in path if upward)
        down = ", ".join(joint for joint, upward in path if not upward)
        if up:  # (a joint crossed upward moves its parent relative to its child)
            text = f"Joints {tree.base_link} -> {tip}: up through {up}" + (
                f"; down through {down}" if down else ""
            )
        else:
            text = f"Joints {tree.base_link} -> {tip}: {down}"
        lines += textwrap.wrap(text, width=98, initial_indent="# ", subsequent_indent="#   ")
    return lines + [
        f"# Goals (geometry_msgs/PoseStamped, in {tree.base_link}'s frame when frame_id is empty): "
        + ", ".join(topics),
        f"# Commands (sensor_msgs/JointState): /{name}/joint_commands",
        *(
            [f"# Base pose (geometry_msgs/PoseStamped, in {tree.base_link}'s frame): /{name}/base_pose"]
            if JointLayout.of(tree).multi_dof
            else []
        ),
        "# Every parameter is described in ik_node's docs/node.md (Parameters) and by:",
        f"#   ros2 param describe /{name} NAME",
    ]


def _xacro_lines(xacro_args: Sequence[str], package_paths: Sequence[str]) -> list[str]:
    """The node's ``xacro_args`` (``NAME:=VALUE``) and ``package_paths`` (absolute), when given
    (ROS's parameter parser cannot type an empty list: none is written)."""
    lines = []
    if xacro_args:
        lines.append(f"    xacro_args: {yaml_scalar(list(xacro_args))}")
    if package_paths:
        lines.append(f"    package_paths: {yaml_scalar(_absolute(package_paths))}")
    return lines


def _absolute(directories: Sequence[str]) -> list[str]:
    return [str(Path(directory).resolve()) for directory in directories]


def xacro_options(xacro_args: Sequence[str], package_paths: Sequence[str]) -> str:
    """``--xacro-arg``/``--package-path`` as given on the command line (directories absolute),
    each with a leading space; empty without them."""
    options = "".join(f" --xacro-arg {item}" for item in xacro_args)
    return options + "".join(f" --package-path {directory}" for directory in _absolute(package_paths))


def yaml_scalar(value) -> str:
    """``value`` as YAML the ROS parameter parser reads with the same type: doubles always with a
    decimal point (``1.0e-05``, not ``1e-05``), strings quoted unless plainly strings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)  # the shortest text that reads back as the same double
        mantissa, exponent, power = text.partition("e")
        if "." not in mantissa and mantissa.lstrip("-").isdigit():
            mantissa += ".0"
        return mantissa + exponent + power
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_scalar(item) for item in value) + "]"
    text = str(value)
    if _PLAIN_STRING.match(text) and text.lower() not in _NOT_STRINGS:
        return text
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar
