"""The command-line options that name a robot description, and the robot they load: one
definition for every command that reads a URDF (``ik_node info/config/solve/fk``,
``ik_node reach``)."""

from __future__ import annotations

import argparse

from ..errors import IKNodeError
from .model import Robot
from .urdf_parsing import ROOT_JOINT_TYPES, load_robot
from .xacro_expansion import xacro_arguments

__all__ = ["add_robot_arguments", "robot_from_arguments"]


def add_robot_arguments(command: argparse.ArgumentParser, root_joint: bool = True) -> None:
    """``--urdf``, ``--xacro-arg``, ``--package-path`` and (with ``root_joint``) ``--root-joint``,
    in a group of their own."""
    robot = command.add_argument_group("robot description")
    robot.add_argument(
        "--urdf", required=True, metavar="FILE", help="URDF file, or xacro file (robot.urdf.xacro)"
    )
    robot.add_argument(
        "--xacro-arg",
        action="append",
        default=[],
        metavar="NAME:=VALUE",
        help="a xacro argument (repeatable)",
    )
    robot.add_argument(
        "--package-path",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory holding ROS packages, where $(find PKG) and package://PKG look (repeatable)",
    )
    if root_joint:
        robot.add_argument(
            "--root-joint",
            choices=ROOT_JOINT_TYPES,
            help="add a joint of this type from a new link 'world' to the URDF's root link: a "
            "free-flying base (floating: x y z [m], quaternion qx qy qz qw) or one moving in "
            "world's xy plane (planar: x y [m], theta [rad]), for whole-body IK from --base world "
            "(the node's root_joint)",
        )


def robot_from_arguments(arguments: argparse.Namespace) -> Robot:
    """The robot of ``--urdf`` (a xacro file expanded with ``--xacro-arg``/``--package-path``,
    with ``--root-joint`` where the command has it); an unreadable file is an
    :class:`~ik_node.errors.IKNodeError` naming it."""
    options = {}
    if arguments.package_path:
        options["package_paths"] = list(arguments.package_path)
    if arguments.xacro_arg:
        options["xacro_args"] = xacro_arguments(arguments.xacro_arg)
    if getattr(arguments, "root_joint", None):
        options["root_joint"] = arguments.root_joint
    try:
        return load_robot(arguments.urdf, **options)
    except OSError as error:
        raise IKNodeError(
            f"--urdf '{arguments.urdf}' cannot be read ({error.strerror or error}); check the path "
            "and its permissions"
        ) from None
