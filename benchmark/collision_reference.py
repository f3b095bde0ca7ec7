"""An independent collision checker for benchmarks and tests: pinocchio + coal on the real meshes.

``ReferenceCollision(urdf, package_dir, srdf, obstacles, base_link, joint_names)`` loads the URDF's
``<collision>`` elements with pinocchio (its own URDF parser; meshes read by coal through assimp,
``package://`` found under ``package_dir``), checks every pair of collision geometries less the
SRDF's ``<disable_collisions>`` (``pinocchio.removeCollisionPairs``), plus every robot geometry
against every obstacle. Nothing here uses ik_node's collision model (capsules), so it can tell
whether ik_node's answers really are collision-free.

Frames and units: lengths in m, angles in rad. Obstacles (:class:`ik_node.Obstacle`) are posed in
the frame of ``base_link`` (the solver's base); they are placed in pinocchio's world (the URDF
root, ``universe``) by the base link's placement at the configuration checked, which is the
identity when ``base_link`` is the URDF root. Obstacle kinds map onto coal shapes: sphere ->
``coal.Sphere(r)``, box -> ``coal.Box(x, y, z)`` (edge lengths), capsule -> ``coal.Capsule(r,
length)``, cylinder -> ``coal.Cylinder(r, length)`` (z axis of the pose, centred on it; a real
cylinder, not the capsule ik_node checks in its place).

Configurations are mapped by JOINT NAME, never by index: ``q`` is a ``{joint: value}`` mapping or
a vector in ``joint_names`` order (given at construction, e.g. ``IKSolver.joint_names``).
Continuous joints (pinocchio's (cos, sin) pair) take an angle. Joints not given stay at their
neutral value (0 for revolute and prismatic joints) clipped into the URDF limits, the convention
ik_node uses for the joints a chain does not move.

Which pairs: with ``joint_names`` given, only pairs with at least one geometry moved by those
joints (on a link below one of them) are checked, and obstacles are checked against moved
geometries only (a link fixed to the base that touches a table would otherwise collide in every
configuration). Without ``joint_names`` every non-disabled pair is checked.

A pair "collides" when coal reports contact (penetration or touching, distance <= 0); no margin.
Import has no side effects: pinocchio and coal are imported when a checker is built.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

__all__ = ["ReferenceCollision", "coal_shape", "example_robot_data_share"]


def example_robot_data_share() -> Path | None:
    """The directory holding the ``example-robot-data`` package (its meshes are referenced as
    ``package://example-robot-data/robots/...``), or None when the PyPI package is missing."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        share = Path(distribution("example-robot-data").locate_file("cmeel.prefix/share"))
    except PackageNotFoundError:
        return None
    return share if (share / "example-robot-data").is_dir() else None


def coal_shape(obstacle):
    """The coal collision geometry of an :class:`ik_node.Obstacle` (in its own frame; sizes in m)."""
    import coal

    size = obstacle.size
    if obstacle.kind == "sphere":
        return coal.Sphere(size[0])
    if obstacle.kind == "box":
        return coal.Box(*size)  # full edge lengths, centred on the pose
    if obstacle.kind == "capsule":
        return coal.Capsule(size[0], size[1])  # radius, length between the end centres (z axis)
    if obstacle.kind == "cylinder":
        return coal.Cylinder(size[0], size[1])  # radius, height (z axis), centred
    raise ValueError(f"unknown obstacle kind {obstacle.kind!r}")


class ReferenceCollision:
    """Self-collision and obstacle checks of one robot on its real collision geometry.

    ``urdf``: path of the URDF; ``package_dir``: directory (or directories) holding the packages
    its ``package://`` meshes name; ``srdf``: path of an SRDF whose ``<disable_collisions>`` pairs
    are not checked (None: every pair); ``obstacles``: :class:`ik_node.Obstacle` in the
    ``base_link`` frame; ``base_link``: the solver's base (default: the URDF root);
    ``joint_names``: the solver's joints, the order of vector configurations and the joints whose
    subtree is "moved" (see the module docstring).
    """

    def __init__(
        self,
        urdf: str | os.PathLike,
        package_dir: str | os.PathLike | Sequence[str | os.PathLike] | None = None,
        srdf: str | os.PathLike | None = None,
        obstacles: Sequence = (),
        base_link: str | None = None,
        joint_names: Sequence[str] | None = None,
    ):
        import pinocchio as pin

        self._pin = pin
        urdf = str(urdf)
        if package_dir is None:
            package_dirs = []
        elif isinstance(package_dir, (str, os.PathLike)):
            package_dirs = [str(package_dir)]
        else:
            package_dirs = [str(entry) for entry in package_dir]
        self.model = pin.buildModelFromUrdf(urdf)
        with warnings.catch_warnings():  # "You passed package dir(s) via argument geometry_model ..."
            warnings.simplefilter("ignore", UserWarning)
            self.geometry = pin.buildGeomFromUrdf(self.model, urdf, pin.GeometryType.COLLISION, package_dirs)
        self.robot_geometries = self.geometry.ngeoms  # obstacles are appended after these
        self.geometry.addAllCollisionPairs()
        if srdf is not None:
            pin.removeCollisionPairs(self.model, self.geometry, str(srdf))
        self._self_pairs = [(pair.first, pair.second) for pair in self.geometry.collisionPairs]
        self.data = self.model.createData()
        self.neutral = self._neutral_within_limits()
        self.base_link = base_link if base_link is not None else self.model.frames[1].name
        if not self.model.existFrame(self.base_link):
            raise ValueError(f"pinocchio's model of {Path(urdf).name} has no frame {self.base_link!r}")
        self._base_frame = self.model.getFrameId(self.base_link)
        self.joint_names = None if joint_names is None else list(joint_names)
        self._slots = self._joint_slots(self.joint_names or [])
        self.moved = self._moved_geometries()
        self.obstacles: list = []
        self.set_obstacles(obstacles)

    # ------------------------------------------------------------------ set-up

    def _neutral_within_limits(self) -> np.ndarray:
        """pinocchio's neutral configuration, 1-DOF joints clipped into their URDF limits."""
        q = self._pin.neutral(self.model)
        for joint in self.model.joints[1:]:
            if joint.nq == 1:
                i = joint.idx_q
                q[i] = np.clip(q[i], self.model.lowerPositionLimit[i], self.model.upperPositionLimit[i])
        return q

    def _joint_slots(self, names: Sequence[str]) -> dict[str, tuple[int, int]]:
        """{joint name: (index in pinocchio's q, nq)}; nq 2 is a continuous joint's (cos, sin)."""
        slots = {}
        for name in names:
            if not self.model.existJointName(name):
                raise ValueError(f"pinocchio's model has no joint {name!r}")
            joint = self.model.joints[self.model.getJointId(name)]
            if joint.nq not in (1, 2):
                raise ValueError(f"joint {name!r}: pinocchio joint with nq={joint.nq} (not 1-DOF)")
            slots[name] = (joint.idx_q, joint.nq)
        return slots

    def _moved_geometries(self) -> set[int] | None:
        """Geometries whose parent joint is one of ``joint_names`` or below one (None: all)."""
        if self.joint_names is None:
            return None
        moving = {self.model.getJointId(name) for name in self.joint_names}
        below = set()
        for joint_id in range(1, self.model.njoints):
            ancestor = joint_id
            while ancestor > 0 and ancestor not in moving:
                ancestor = self.model.parents[ancestor]
            if ancestor > 0:
                below.add(joint_id)
        return {
            index
            for index in range(self.robot_geometries)
            if self.geometry.geometryObjects[index].parentJoint in below
        }

    def set_obstacles(self, obstacles: Sequence) -> None:
        """Replace the obstacles (:class:`ik_node.Obstacle`, poses in the ``base_link`` frame)."""
        pin = self._pin
        while self.geometry.ngeoms > self.robot_geometries:
            self.geometry.removeGeometryObject(self.geometry.geometryObjects[self.geometry.ngeoms - 1].name)
        self.obstacles = list(obstacles)
        for index, obstacle in enumerate(self.obstacles):
            name = f"obstacle_{index}_{obstacle.name or obstacle.kind}"
            placement = pin.SE3(np.asarray(obstacle.pose, dtype=float))
            # attached to the universe (joint 0, frame 0); re-placed per check when base is not the root
            self.geometry.addGeometryObject(pin.GeometryObject(name, 0, 0, placement, coal_shape(obstacle)))
        self.geometry.removeAllCollisionPairs()
        moved = range(self.robot_geometries) if self.moved is None else self.moved
        pairs = [
            (first, second)
            for first, second in self._self_pairs
            if self.moved is None or first in self.moved or second in self.moved
        ]
        obstacle_indices = range(self.robot_geometries, self.robot_geometries + len(self.obstacles))
        pairs += [(link, obstacle) for obstacle in obstacle_indices for link in sorted(moved)]
        for first, second in pairs:
            self.geometry.addCollisionPair(pin.CollisionPair(first, second))
        self.geometry_data = pin.GeometryData(self.geometry)

    # ------------------------------------------------------------------ queries

    def configuration(self, q) -> np.ndarray:
        """pinocchio's q from ``{joint: value}`` or a vector in ``joint_names`` order [rad, m];
        joints not given at their neutral value clipped into the limits."""
        if isinstance(q, Mapping):
            values = q
            slots = self._slots if set(q) <= set(self._slots) else self._joint_slots(list(q))
        else:
            if self.joint_names is None:
                raise ValueError("a vector configuration needs joint_names at construction; pass a mapping")
            vector = np.asarray(q, dtype=float).reshape(-1)
            if len(vector) != len(self.joint_names):
                raise ValueError(
                    f"expected {len(self.joint_names)} values ({self.joint_names}), got {len(vector)}"
                )
            values, slots = dict(zip(self.joint_names, vector)), self._slots
        configuration = self.neutral.copy()
        for name, value in values.items():
            index, nq = slots[name]
            if nq == 1:
                configuration[index] = value
            else:
                configuration[index], configuration[index + 1] = np.cos(value), np.sin(value)
        return configuration

    def _update(self, q) -> None:
        """Place every geometry at ``q``; obstacles at the base link's placement times their pose."""
        pin = self._pin
        configuration = self.configuration(q)
        pin.framesForwardKinematics(self.model, self.data, configuration)
        pin.updateGeometryPlacements(self.model, self.data, self.geometry, self.geometry_data)
        if self.obstacles:
            base = self.data.oMf[self._base_frame]
            for index, obstacle in enumerate(self.obstacles):
                placement = pin.SE3(np.asarray(obstacle.pose, dtype=float))
                self.geometry_data.oMg[self.robot_geometries + index] = base * placement

    def _pair_names(self, index: int) -> tuple[str, str]:
        pair = self.geometry.collisionPairs[index]
        objects = self.geometry.geometryObjects
        return objects[pair.first].name, objects[pair.second].name

    def in_collision(self, q, first_only: bool = False) -> tuple[bool, list[tuple[str, str]]]:
        """(any contact, the colliding pairs as geometry names) at ``q``. Geometry names are
        pinocchio's (``<link>_<k>``, ``obstacle_<i>_<name>``). ``first_only``: stop at the first
        contact (faster; the list then has one pair)."""
        self._update(q)
        collided = self._pin.computeCollisions(self.geometry, self.geometry_data, first_only)
        if not collided:
            return False, []
        results = self.geometry_data.collisionResults
        pairs = [self._pair_names(k) for k in range(len(results)) if results[k].isCollision()]
        return True, pairs

    def min_distance(self, q) -> tuple[float, tuple[str, str] | None]:
        """(smallest distance [m] over the checked pairs, that pair) at ``q``; negative when
        penetrating (coal's signed distance), ``inf`` and None when no pair is checked."""
        self._update(q)
        if not len(self.geometry.collisionPairs):
            return float("inf"), None
        self._pin.computeDistances(self.geometry, self.geometry_data)
        distances = [result.min_distance for result in self.geometry_data.distanceResults]
        index = int(np.argmin(distances))
        return float(distances[index]), self._pair_names(index)

    @property
    def pair_count(self) -> int:
        """Number of pairs checked (self pairs plus robot-obstacle pairs)."""
        return len(self.geometry.collisionPairs)
