"""Robot model: a robot description as a validated kinematic tree of joints and links.

:class:`Robot` holds the links, the joints (:class:`Joint`, with its :class:`Mimic`) and each
link's ``<collision>`` elements as plain :class:`CollisionGeometry` records (meshes are read only
by :mod:`ik_node.collision`); :func:`~ik_node.description.urdf_parsing.load_robot` makes one from
a URDF or xacro. A joint that cannot be used carries its ``problem`` and is refused only when a
tree that contains it is built (**liberal when loading, strict when used**).

The :class:`Robot` is immutable; solvers work on a :class:`~ik_node.kinematics.KinematicTree` cut
from it between a base link and one or more tips.

Units: metres, radians, m/s and rad/s. Joint frames follow URDF: the child link frame of a joint
is ``T_parent_child(q) = origin @ motion(axis, q)``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from ..errors import UnknownLinkError, URDFError
from ..kinematics import KinematicTree
from ..lie import inverse

__all__ = ["CollisionGeometry", "Joint", "Mimic", "Robot", "SUPPORTED_JOINT_TYPES"]

#: Joint types ik_node models: URDF's, and ``ball`` (a spherical joint, for trees built in code:
#: URDF has none). Configuration coordinates per joint (see :mod:`ik_node.compiled.spatial`):
#: 1 for revolute, continuous and prismatic joints; planar ``x, y, theta``; ball ``qx, qy, qz,
#: qw``; floating ``x, y, z, qx, qy, qz, qw`` (pinocchio's order).
SUPPORTED_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "planar", "floating", "ball")
#: Suffixes of the configuration coordinates of the multi-DOF joints (``joint/x`` ...).
COORDINATE_SUFFIXES = {
    "planar": ("x", "y", "theta"),
    "ball": ("qx", "qy", "qz", "qw"),
    "floating": ("x", "y", "z", "qx", "qy", "qz", "qw"),
}
#: Suffixes of their tangent coordinates (twists ``[v; w]`` in the joint's frame).
TANGENT_SUFFIXES = {
    "planar": ("vx", "vy", "wz"),
    "ball": ("wx", "wy", "wz"),
    "floating": ("vx", "vy", "vz", "wx", "wy", "wz"),
}


@dataclass(frozen=True)
class Mimic:
    """The joint follows ``leader``: ``q_follower = multiplier * q_leader + offset``."""

    leader: str
    multiplier: float = 1.0
    offset: float = 0.0  # [rad] or [m]


@dataclass(frozen=True, eq=False)
class CollisionGeometry:
    """One ``<collision>`` element of a link, as written (nothing is read from disk at load).

    ``kind``: ``box`` (``size`` = x, y, z lengths), ``cylinder`` and ``capsule`` (``size`` =
    radius, length along the local z axis; a capsule's length excludes its caps), ``sphere``
    (``size`` = radius) or ``mesh`` (``filename`` as written, ``package://`` or a path relative
    to ``directory``, the URDF file's directory; ``scale`` per axis). ``origin``: 4x4 pose in
    the link frame. Units: m. :mod:`ik_node.collision` turns these into a collision model.
    """

    link: str
    kind: str
    origin: np.ndarray = field(repr=False)
    size: tuple[float, ...] = ()
    filename: str | None = None
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    directory: Path | None = None


@dataclass(frozen=True, eq=False)
class Joint:
    """One URDF joint, validated.

    ``origin`` is ``T_parent_jointframe`` (4x4); ``axis`` is a unit vector in the joint frame;
    ``lower``/``upper`` are position limits in rad (revolute) or m (prismatic), ``-inf``/``inf``
    for continuous joints; ``max_velocity`` in rad/s or m/s (``inf`` when the URDF gives none, 0
    or a negative one: unknown). ``problem`` says why the joint cannot be used (None: it can);
    a tree containing such a joint is refused with that reason.
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
    problem: str | None = None

    @property
    def is_movable(self) -> bool:
        return self.type != "fixed"

    @property
    def is_multi_dof(self) -> bool:
        """Planar, ball and floating joints: several coordinates, no position limits."""
        return self.type in COORDINATE_SUFFIXES

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        """Names of its configuration coordinates: its own name for a 1-DOF joint, ``name/x`` ...
        for a multi-DOF one (:data:`COORDINATE_SUFFIXES`); none for a fixed joint."""
        if not self.is_movable:
            return ()
        return tuple(f"{self.name}/{suffix}" for suffix in COORDINATE_SUFFIXES.get(self.type, ())) or (
            self.name,
        )

    @property
    def tangent_names(self) -> tuple[str, ...]:
        """Names of its tangent (velocity) coordinates, as :attr:`coordinate_names`."""
        if not self.is_movable:
            return ()
        return tuple(f"{self.name}/{suffix}" for suffix in TANGENT_SUFFIXES.get(self.type, ())) or (
            self.name,
        )


class Robot:
    """A validated kinematic tree read from a URDF.

    Attributes: ``name``; ``root`` (the URDF root link); ``links`` (link names); ``joints``
    (name -> :class:`Joint`); ``joint_names`` (the independent degrees of freedom of the whole
    robot that can be used — movable, non-mimic joints without a ``problem`` — in depth-first
    order from the root).
    """

    def __init__(
        self,
        name: str,
        links: Sequence[str],
        joints: Sequence[Joint],
        collision_geometry: Mapping[str, Sequence[CollisionGeometry]] | None = None,
        package_paths: Sequence[str | os.PathLike] | None = None,
        description_hash: str | None = None,
        collision_problems: Sequence[str] = (),
    ):
        self.name = name
        #: link -> its ``<collision>`` elements (links without any are absent)
        self.collision_geometry = {link: tuple(items) for link, items in (collision_geometry or {}).items()}
        #: where ``package://`` meshes are looked for first (see
        #: :func:`ik_node.description.resources.find_package`)
        self.package_paths = tuple(str(entry) for entry in package_paths or ())
        #: SHA-256 of the description's bytes (after xacro), or None for a robot built in code
        self.description_hash = description_hash
        #: ``<collision>`` elements left out at load, each naming its link (warned about when a
        #: collision model is built)
        self.collision_problems = tuple(collision_problems)
        self._trees: dict[tuple, KinematicTree] = {}
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

    def path(self, base_link: str, tip_link: str) -> list[tuple[Joint, bool]]:
        """The joints from ``base_link`` to ``tip_link`` in the order crossed, each with True when
        it is crossed from child to parent: up from the base to the links' nearest common
        ancestor, then down to the tip (any link can be the base: a stance foot, say). Raises when
        either link is unknown."""
        self.check_link(base_link)
        self.check_link(tip_link)
        up_from_base = self._joints_to_root(base_link)
        up_from_tip = self._joints_to_root(tip_link)
        # drop the common part (the joints above the nearest common ancestor)
        while up_from_base and up_from_tip and up_from_base[-1] is up_from_tip[-1]:
            up_from_base.pop()
            up_from_tip.pop()
        return [(joint, True) for joint in up_from_base] + [(joint, False) for joint in up_from_tip[::-1]]

    def _joints_to_root(self, link: str) -> list[Joint]:
        joints = []
        joint = self.parent_joint.get(link)
        while joint is not None:
            joints.append(joint)
            joint = self.parent_joint.get(joint.parent)
        return joints

    def path_joints(self, base_link: str, tip_link: str) -> list[Joint]:
        """The joints of :meth:`path` (base first), without their directions."""
        return [joint for joint, _ in self.path(base_link, tip_link)]

    def usable_path(self, base_link: str, tip_link: str) -> list[tuple[Joint, bool]]:
        """:meth:`path`, refusing a path through a joint that cannot be used (or whose mimic
        leader cannot): the error names the joint and its problem."""
        path = self.path(base_link, tip_link)
        for joint, _ in path:
            if joint.problem is not None:
                raise URDFError(
                    f"joint '{joint.name}' on the path from '{base_link}' to '{tip_link}' cannot be "
                    f"used: {joint.problem}"
                )
        return path

    def leader_of(self, joint_name: str) -> str:
        """The independent joint that drives ``joint_name`` (itself unless it is a mimic joint)."""
        joint = self.joints[joint_name]
        if joint.problem is not None:
            raise URDFError(f"joint '{joint_name}' cannot be used: {joint.problem}")
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

    def tree(self, base_link: str, tip_links: str | Sequence[str]) -> KinematicTree:
        """The :class:`~ik_node.kinematics.KinematicTree` between ``base_link`` and the tips, built
        once per robot and tips (trees are not changed after they are built): the node, its
        solver and the CLI ask for the same tree several times per description."""
        key = (base_link, (tip_links,) if isinstance(tip_links, str) else tuple(tip_links))
        if key not in self._trees:
            self._trees[key] = KinematicTree(self, base_link, tip_links)
        return self._trees[key]

    @cached_property
    def full_tree(self) -> KinematicTree:
        """Every usable part of the robot as one tree from the root: to each leaf link, or to
        the parent link of the first joint on the way that cannot be used."""
        tips = []
        for leaf in (link for link in self.links if not self.child_joints[link]):
            path = self._joints_to_root(leaf)[::-1]
            blocked = next((joint for joint in path if joint.problem is not None), None)
            tip = leaf if blocked is None else blocked.parent
            if tip not in tips:
                tips.append(tip)
        return self.tree(self.root, tips)

    def joint_vector(self, q) -> np.ndarray:
        """``q`` as an array in :attr:`joint_names` order; a mapping may name any subset of the
        degrees of freedom (others sit at 0) and must not name unknown or mimic joints."""
        return self.full_tree.joint_vector(q)

    def forward(self, q, link: str, base: str | None = None) -> np.ndarray:
        """4x4 pose of ``link`` in the frame of ``base`` (default: the URDF root).

        ``q`` is a mapping ``{joint_name: value}`` (joints not named sit at 0, mimic joints follow
        their leader) or an array in :attr:`joint_names` order. Units: m, rad. A link behind a
        joint that cannot be used is refused, naming the joint.
        """
        for end in (link, base):
            if end is not None:
                self.usable_path(self.root, end)
        tree = self.full_tree
        poses = tree.link_poses(self.joint_vector(q))
        pose = tree.pose_of(poses, link)
        if base is None or base == self.root:
            return pose
        return inverse(tree.pose_of(poses, base)) @ pose
