"""Collision model: a conservative approximation of each link's ``<collision>`` geometry.

Each link with collision geometry gets **one capsule** (a segment ``a``-``b`` and a radius ``r``,
in the link frame; a sphere when ``a = b``) that contains every one of its ``<collision>``
elements: a distance between two approximations is never more than the distance between the
real shapes, so a pair found apart here is apart on the robot.

How it is fitted (:func:`enclosing_capsule`): each element becomes points and a padding radius
whose Minkowski sum contains it — a mesh its vertices (the mesh lies in their convex hull), a box
its 8 corners, a cylinder the corners of 16-gons circumscribed around its two end circles, a
sphere its centre padded by its radius, a capsule its two end centres padded by its radius. The
axis is the points' principal axis (largest eigenvector of their covariance); the radius is the
largest distance of a padded point from the axis line (the axis passes through the centre of the
points' bounding box across it); the end points are the tightest along the axis that keep every
padded point inside the end caps. Convex capsules contain the convex hull of what they contain,
so each element lies inside. A 1e-6 m allowance covers rounding.

Meshes (STL, DAE, OBJ) are read with ``trimesh`` (the ``collision`` extra), found through
``package://`` (``robot.package_paths``, then the ament index; see
:func:`ik_node.resources.resolve_path`) or relative to the URDF file; a mesh that cannot be read
is warned about (naming link and path) and that element is left out. Models are cached in memory
per description (its SHA-256, the package paths): built once per process.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .resources import resolve_path

__all__ = [
    "SPHERE",
    "CAPSULE",
    "CollisionModel",
    "collision_model",
    "enclosing_capsule",
    "segment_distances",
    "shape_distance",
]

#: ``CollisionModel.kind`` values
SPHERE, CAPSULE = 0, 1
#: [m] added to every fitted radius so that rounding never leaves a point outside
ALLOWANCE = 1e-6
_POLYGON_SIDES = 16


@dataclass(frozen=True, eq=False)
class CollisionModel:
    """Per-link shapes as flat arrays (one row a shape, ready for compiled kernels).

    ``link_names[i]`` owns shape ``i``: ``kind[i]`` (:data:`SPHERE` or :data:`CAPSULE`),
    ``radius[i]`` [m], end points ``point_a[i]``, ``point_b[i]`` [m] in the link's frame (equal
    for a sphere). ``volume[i]``: the shape's volume [m³]; ``geometry_volume[i]``: the volume of
    the geometry it encloses (a mesh's own volume when it is watertight, else its convex hull's;
    primitives exactly; the sum over the link's elements), ``nan`` when unknown.
    """

    link_names: tuple[str, ...]
    kind: np.ndarray = field(repr=False)
    radius: np.ndarray = field(repr=False)
    point_a: np.ndarray = field(repr=False)
    point_b: np.ndarray = field(repr=False)
    volume: np.ndarray = field(repr=False)
    geometry_volume: np.ndarray = field(repr=False)

    def overshoot(self) -> dict[str, float]:
        """{link: shape volume / geometry volume} (1 is a perfect fit)."""
        return {
            link: float(self.volume[i] / self.geometry_volume[i]) for i, link in enumerate(self.link_names)
        }

    def shapes_of(self, link: str) -> list[int]:
        return [i for i, name in enumerate(self.link_names) if name == link]


_cache: dict[tuple, CollisionModel] = {}


def collision_model(robot, package_paths: Sequence[str] | None = None) -> CollisionModel:
    """The :class:`CollisionModel` of ``robot`` (a :class:`~ik_node.model.Robot`), built once per
    description and package paths (``package_paths`` default: the ones given to ``load_robot``).
    Needs ``trimesh`` when the description has meshes."""
    paths = tuple(str(entry) for entry in (robot.package_paths if package_paths is None else package_paths))
    key = (robot.description_hash, paths)
    if robot.description_hash is not None and key in _cache:
        return _cache[key]
    for problem in robot.collision_problems:
        warnings.warn(f"URDF: {problem}", stacklevel=2)
    rows = []
    for link in robot.links:
        padded, geometry_volume = [], 0.0
        for geometry in robot.collision_geometry.get(link, ()):
            found = _padded_points(geometry, paths)
            if found is not None:
                padded.append(found[:2])
                geometry_volume += found[2]
        if padded:
            points = np.concatenate([points for points, _ in padded])
            pads = np.concatenate([np.full(len(points), pad) for points, pad in padded])
            a, b, radius = enclosing_capsule(points, pads)
            rows.append((link, a, b, radius, geometry_volume))
    count = len(rows)
    radius = np.array([row[3] for row in rows], dtype=float).reshape(count)
    point_a = np.array([row[1] for row in rows], dtype=float).reshape(count, 3)
    point_b = np.array([row[2] for row in rows], dtype=float).reshape(count, 3)
    length = np.linalg.norm(point_b - point_a, axis=1)
    model = CollisionModel(
        link_names=tuple(row[0] for row in rows),
        kind=np.where(length > 0.0, CAPSULE, SPHERE).astype(np.int64),
        radius=radius,
        point_a=point_a,
        point_b=point_b,
        volume=math.pi * radius**2 * length + 4.0 / 3.0 * math.pi * radius**3,
        geometry_volume=np.array([row[4] for row in rows], dtype=float).reshape(count),
    )
    if robot.description_hash is not None:
        _cache[key] = model
    return model


def load_mesh(geometry, package_paths: Sequence[str] = ()):
    """The ``trimesh.Trimesh`` of a mesh element, scaled, in its own frame (before ``origin``).
    Raises ``OSError`` (or ``ValueError``) when the file cannot be found or read."""
    import trimesh

    path = _mesh_path(geometry, package_paths)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    mesh = trimesh.load(str(path), force="mesh", process=False)
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.vertices) == 0:
        raise ValueError(f"no triangles in {path}")
    mesh.apply_scale(np.asarray(geometry.scale, dtype=float))
    return mesh


def _mesh_path(geometry, package_paths: Sequence[str]) -> Path:
    path = resolve_path(geometry.filename, package_paths)
    if not path.is_absolute() and geometry.directory is not None:
        path = geometry.directory / path
    return path


def _padded_points(geometry, package_paths: Sequence[str]) -> tuple[np.ndarray, float, float] | None:
    """(points in the link frame, padding radius, enclosed volume) containing ``geometry``; None
    (warned, naming the link and the path) for a mesh that cannot be read."""
    kind, size = geometry.kind, geometry.size
    if kind == "mesh":
        try:
            mesh = load_mesh(geometry, package_paths)
        except (OSError, ValueError) as error:
            warnings.warn(
                f"collision mesh of link '{geometry.link}' not loaded, the element is left out: "
                f"'{geometry.filename}' ({error})",
                stacklevel=4,
            )
            return None
        volume = abs(mesh.volume) if mesh.is_watertight else mesh.convex_hull.volume
        local, pad = np.asarray(mesh.vertices, dtype=float), 0.0
    elif kind == "box":
        signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
        local, pad, volume = signs * (np.asarray(size) / 2.0), 0.0, float(np.prod(size))
    elif kind == "cylinder":
        radius, length = size
        angles = np.arange(_POLYGON_SIDES) * 2.0 * math.pi / _POLYGON_SIDES
        ring = (
            radius / math.cos(math.pi / _POLYGON_SIDES) * np.stack([np.cos(angles), np.sin(angles)], axis=1)
        )
        local = np.concatenate(
            [np.column_stack([ring, np.full(len(ring), z)]) for z in (-length / 2.0, length / 2.0)]
        )
        pad, volume = 0.0, math.pi * radius**2 * length
    elif kind == "sphere":
        local, pad, volume = np.zeros((1, 3)), size[0], 4.0 / 3.0 * math.pi * size[0] ** 3
    else:  # capsule
        radius, length = size
        local = np.array([[0.0, 0.0, -length / 2.0], [0.0, 0.0, length / 2.0]])
        pad, volume = radius, math.pi * radius**2 * length + 4.0 / 3.0 * math.pi * radius**3
    origin = geometry.origin
    return local @ origin[:3, :3].T + origin[:3, 3], float(pad), float(volume)


def enclosing_capsule(points: np.ndarray, pads: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """End points ``a``, ``b`` and radius ``r`` of a capsule containing every ball
    ``(points[i], pads[i])`` (see the module's docstring for the fit)."""
    points = np.asarray(points, dtype=float)
    pads = np.asarray(pads, dtype=float)
    centre = points.mean(axis=0)
    if len(points) > 1 and np.ptp(points, axis=0).max() > 0.0:
        _, vectors = np.linalg.eigh(np.cov((points - centre).T))
        axis = vectors[:, -1]
        across = vectors[:, :2]
    else:
        axis, across = np.array([0.0, 0.0, 1.0]), np.eye(3)[:, :2]
    sideways = (points - centre) @ across
    centre = centre + across @ ((sideways.min(axis=0) + sideways.max(axis=0)) / 2.0)
    along = (points - centre) @ axis
    radial = np.linalg.norm((points - centre) - np.outer(along, axis), axis=1)
    radius = float(np.max(radial + pads)) + ALLOWANCE
    # a padded point at (along t, radial ρ) lies in the cap round end b at s when
    # (t - s)² + ρ² <= (r - pad)²: s >= t - sqrt((r - pad)² - ρ²), and likewise for end a
    room = np.sqrt(np.maximum((radius - pads) ** 2 - radial**2, 0.0))
    end, start = float(np.max(along - room)), float(np.min(along + room))
    if start > end:  # every point fits in one sphere on the axis
        start = end = (start + end) / 2.0
    return centre + start * axis, centre + end * axis, radius


def segment_distances(p1: np.ndarray, q1: np.ndarray, p2: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """Distances between segments ``p1q1`` and ``p2q2`` (arrays ``(..., 3)``, a segment may be a
    point), by their closest points (Ericson, *Real-Time Collision Detection*, 5.1.9)."""
    eps = 1e-15
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e = np.sum(d1 * d1, axis=-1), np.sum(d2 * d2, axis=-1)
    b, c, f = np.sum(d1 * d2, axis=-1), np.sum(d1 * r, axis=-1), np.sum(d2 * r, axis=-1)
    safe_a, safe_e = np.where(a > eps, a, 1.0), np.where(e > eps, e, 1.0)
    denominator = a * e - b * b
    s = np.where(
        denominator > eps, np.clip((b * f - c * e) / np.where(denominator > eps, denominator, 1.0), 0, 1), 0.0
    )
    t = np.where(e > eps, (b * s + f) / safe_e, 0.0)
    s = np.where(
        t < 0.0, np.clip(-c / safe_a, 0.0, 1.0), np.where(t > 1.0, np.clip((b - c) / safe_a, 0.0, 1.0), s)
    )
    t = np.clip(t, 0.0, 1.0)
    s = np.where(e > eps, s, np.clip(-c / safe_a, 0.0, 1.0))  # p2q2 a point
    s = np.where(a > eps, s, 0.0)  # p1q1 a point
    t = np.where(a > eps, t, np.clip(f / safe_e, 0.0, 1.0) * (e > eps))
    closest_1 = p1 + s[..., None] * d1
    closest_2 = p2 + t[..., None] * d2
    return np.linalg.norm(closest_1 - closest_2, axis=-1)


def placed(model: CollisionModel, shape: int, poses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """End points of ``shape`` at its link's poses ``(..., 4, 4)``: two arrays ``(..., 3)``."""
    rotation, translation = poses[..., :3, :3], poses[..., :3, 3]
    return rotation @ model.point_a[shape] + translation, rotation @ model.point_b[shape] + translation


def shape_distance(model: CollisionModel, i: int, pose_i: np.ndarray, j: int, pose_j: np.ndarray):
    """Distance [m] between shapes ``i`` and ``j`` placed at their links' poses (``(..., 4, 4)``,
    one frame): segment distance minus both radii, negative when they overlap."""
    distance = segment_distances(*placed(model, i, pose_i), *placed(model, j, pose_j))
    return distance - model.radius[i] - model.radius[j]
