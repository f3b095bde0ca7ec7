"""Collision model: a conservative approximation of each link's ``<collision>`` geometry, built
once per description and package paths and cached in memory (its SHA-256, the package paths).

Each link with collision geometry gets **one to three capsules** (``MAX_SHAPES_PER_LINK``;
each a segment ``a``-``b`` and a radius ``r`` in the link frame, a sphere when ``a = b``) whose
union contains every one of its ``<collision>`` elements (:class:`CollisionModel`): a distance
between two approximations is never more than the distance between the real shapes, so a pair
found apart here is apart on the robot. The solver also checks a link's convex hull
(:func:`link_hulls`), its oriented box (:func:`link_boxes`) and, for a big concave link, convex
pieces of it (:func:`link_pieces`). How the elements are read: :mod:`.elements`; how the shapes
are fitted: :mod:`.shape_fitting`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .elements import Element, cache_key, link_elements, link_points
from .shape_fitting import (
    SPLIT_GAIN,
    best_cuts,
    enclosing_box,
    enclosing_hull,
    hull_volume,
    link_capsules,
    principal_axes,
    slab_pieces,
    tight_capsule,
)

__all__ = [
    "SPHERE",
    "CAPSULE",
    "CollisionModel",
    "Piece",
    "collision_model",
    "link_boxes",
    "link_hulls",
    "link_pieces",
    "segment_distances",
    "shape_distance",
]

#: ``CollisionModel.kind`` values
SPHERE, CAPSULE = 0, 1


@dataclass(frozen=True, eq=False)
class CollisionModel:
    """Per-link shapes as flat arrays (one row a shape, ready for compiled kernels).

    ``link_names[i]`` owns shape ``i`` (a link's shapes are consecutive rows, at most
    ``MAX_SHAPES_PER_LINK``): ``kind[i]`` (:data:`SPHERE` or :data:`CAPSULE`), ``radius[i]``
    [m], end points ``point_a[i]``, ``point_b[i]`` [m] in the link's frame (equal for a sphere).
    ``volume[i]``: the shape's volume [m³]; ``geometry_volume[i]``: shape ``i``'s share of the
    volume of its link's geometry (a mesh's own volume when it is watertight once its vertices are
    welded, else its convex hull's; primitives exactly; summed over the link's elements), shared in
    proportion to the shapes' volumes, so that it sums over a link's shapes to the link's.
    """

    link_names: tuple[str, ...]
    kind: np.ndarray = field(repr=False)
    radius: np.ndarray = field(repr=False)
    point_a: np.ndarray = field(repr=False)
    point_b: np.ndarray = field(repr=False)
    volume: np.ndarray = field(repr=False)
    geometry_volume: np.ndarray = field(repr=False)

    def overshoot(self) -> dict[str, float]:
        """{link: its shapes' volume / its geometry's volume} (1 is a perfect fit; shapes that
        overlap count their overlap twice)."""
        return {
            link: float(self.volume[shapes].sum() / self.geometry_volume[shapes].sum())
            for link in dict.fromkeys(self.link_names)
            for shapes in [self.shapes_of(link)]
        }

    def shapes_of(self, link: str) -> list[int]:
        return [i for i, name in enumerate(self.link_names) if name == link]


_cache: dict[tuple, CollisionModel] = {}


def collision_model(robot, package_paths: Sequence[str] | None = None) -> CollisionModel:
    """The :class:`CollisionModel` of ``robot`` (a :class:`~ik_node.description.model.Robot`), built once per
    description and package paths (``package_paths`` default: the ones given to ``load_robot``).
    Needs ``trimesh`` when the description has meshes."""
    key = cache_key(robot, package_paths)
    if robot.description_hash is not None and key in _cache:
        return _cache[key]
    for problem in robot.collision_problems:
        warnings.warn(f"URDF: {problem}", stacklevel=2)
    rows = []
    for link, elements in link_elements(robot, key).items():
        shapes = link_capsules(elements)
        geometry_volume = sum(element.volume for element in elements)
        shapes_volume = sum(shape[3] for shape in shapes)
        for a, b, radius, volume in shapes:
            rows.append((link, a, b, radius, volume, geometry_volume * volume / shapes_volume))
    count = len(rows)
    point_a = np.array([row[1] for row in rows], dtype=float).reshape(count, 3)
    point_b = np.array([row[2] for row in rows], dtype=float).reshape(count, 3)
    length = np.linalg.norm(point_b - point_a, axis=1)
    model = CollisionModel(
        link_names=tuple(row[0] for row in rows),
        kind=np.where(length > 0.0, CAPSULE, SPHERE).astype(np.int64),
        radius=np.array([row[3] for row in rows], dtype=float).reshape(count),
        point_a=point_a,
        point_b=point_b,
        volume=np.array([row[4] for row in rows], dtype=float).reshape(count),
        geometry_volume=np.array([row[5] for row in rows], dtype=float).reshape(count),
    )
    if robot.description_hash is not None:
        _cache[key] = model
    return model


_box_cache: dict[tuple, dict] = {}
_hull_cache: dict[tuple, dict] = {}


def link_hulls(robot, package_paths: Sequence[str] | None = None) -> dict[str, tuple[np.ndarray, float]]:
    """``{link: (vertices (V, 3) [m, link frame], padding [m])}``: for each link with collision
    geometry, the convex hull of all its elements' points, grown by the largest padding radius of
    its elements (spheres, capsules): a convex set containing the geometry, which the solver
    checks with GJK (:mod:`ik_node.compiled.gjk`) where the capsules overlap. At most
    ``HULL_VERTICES`` vertices (this and ``HULL_TOLERANCE``: :mod:`.shape_fitting`'s): a larger
    hull keeps its farthest-point subset (to within ``HULL_TOLERANCE``) and grows the padding by
    the largest distance of the others from that subset's hull (still containing).
    Built once per description and package paths."""
    key = cache_key(robot, package_paths)
    if robot.description_hash is not None and key in _hull_cache:
        return _hull_cache[key]
    elements = link_elements(robot, key)
    hulls = {link: enclosing_hull(*link_points(found)) for link, found in elements.items()}
    if robot.description_hash is not None:
        _hull_cache[key] = hulls
    return hulls


def link_boxes(robot, package_paths: Sequence[str] | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{link: (T_link_box (4, 4), size (3,) [m])}``: for each link with collision geometry, an
    oriented box containing all of it (the smallest-volume box around the elements' points,
    trimesh's ``oriented_bounds``, each side grown by the elements' padding radius; contains the
    convex hull, hence the geometry). A tighter stand-in than capsules for big, boxy links that
    the solve does not move (a torso, a pedestal): see :mod:`ik_node.solver.collision_task`.
    Built once per description and package paths."""
    key = cache_key(robot, package_paths)
    if robot.description_hash is not None and key in _box_cache:
        return _box_cache[key]
    elements = link_elements(robot, key)
    boxes = {link: enclosing_box(*link_points(found)) for link, found in elements.items()}
    if robot.description_hash is not None:
        _box_cache[key] = boxes
    return boxes


#: most slabs a link (or one of its slabs) is cut into by :func:`link_pieces`
MAX_PIECES = 3
#: [m³] links whose hull holds less are not cut (an arm's links, grippers: their hulls' excess
#: is millimetres to a few centimetres; trying the cuts takes 0.3-2 s a link): Baxter's torso
#: holds 0.135, its pedestal 0.43; TALOS's torso 0.045 (its mesh is convex)
PIECES_FROM_VOLUME = 0.05
_PIECE_CUTS = 5  # positions tried for a cut between its neighbours
_piece_cache: dict[tuple, list] = {}


@dataclass(frozen=True, eq=False)
class Piece:
    """A convex piece of a link's geometry, in the link frame: its hull (``vertices`` (V, 3) [m],
    grown by ``pad`` [m]; ``hull_volume`` [m³], without the padding), the capsule
    :func:`tight_capsule` fits around it (``capsule``: a, b, radius [m], volume [m³]) and its
    oriented box (``box``: T_link_box (4, 4), size (3,) [m])."""

    vertices: np.ndarray = field(repr=False)
    pad: float
    hull_volume: float
    capsule: tuple = field(repr=False)
    box: tuple = field(repr=False)


def link_pieces(robot, link: str, package_paths: Sequence[str] | None = None) -> list[Piece]:
    """The geometry of ``link`` as convex pieces whose union contains it, for a link the solve
    does not move (:mod:`ik_node.solver.collision_task` checks each piece apart): a concave link's
    hull (a pedestal, a post on wide feet) fills the space beside the post.

    A link whose hull holds :data:`PIECES_FROM_VOLUME` or more is cut (:func:`_split`) into
    slabs across one axis, and each slab again across another, into cells (:mod:`.shape_fitting`:
    each cell's hull contains the geometry's part in it); a split is kept only where its hulls
    hold :data:`SPLIT_GAIN` less volume than the whole. Empty when no split gains that much (the
    link is one convex piece: :func:`link_hulls`) or it has no readable geometry; built once per
    description, package paths and link."""
    key = cache_key(robot, package_paths)
    if robot.description_hash is not None and (key, link) in _piece_cache:
        return _piece_cache[key, link]
    elements = link_elements(robot, key).get(link, [])
    cells = []
    if elements:
        points = np.concatenate([element.points for element in elements])
        axes = np.concatenate([np.eye(3), principal_axes(points)[1].T])
        split = _split(elements, axes, ()) if hull_volume(points) >= PIECES_FROM_VOLUME else None
        if split is not None:
            axis, cuts, slabs = split
            bounds = [-math.inf, *cuts, math.inf]
            across = axes[np.abs(axes @ axis) < 0.99]
            for slab, lower, upper in zip(slabs, bounds[:-1], bounds[1:], strict=True):
                inner = _split(elements, across, ((axis, lower, upper),))
                cells.extend([slab] if inner is None else inner[2])
    pieces = []
    for cell_points, cell_pads in cells:
        pad = float(cell_pads.max())
        vertices, hull_pad = enclosing_hull(cell_points, pad)
        pieces.append(
            Piece(
                vertices=vertices,
                pad=hull_pad,
                hull_volume=hull_volume(cell_points),
                capsule=tight_capsule(cell_points, cell_pads),
                box=enclosing_box(cell_points, pad),
            )
        )
    if robot.description_hash is not None:
        _piece_cache[key, link] = pieces
    return pieces


def _split(elements: list[Element], axes: np.ndarray, within):
    """The cut of the geometry inside the slabs ``within`` into 2 to :data:`MAX_PIECES` slabs
    across one of ``axes`` (:func:`best_cuts`, to the least total hull volume): ``(axis, cuts,
    pieces)`` with the fewest slabs that more would not shrink by :data:`SPLIT_GAIN` (more are
    tried only while fewer gained); None when no cut shrinks the hull volume of the whole by
    that much."""
    whole = slab_pieces(elements, axes[0], [], within)
    if not whole:
        return None
    chosen, chosen_volume = None, hull_volume(whole[0][0])
    for count in range(2, MAX_PIECES + 1):
        best, best_volume = None, math.inf
        for axis in axes:
            found = best_cuts(elements, axis, count, hull_volume, _PIECE_CUTS, within)
            if found is not None:
                volume = sum(hull_volume(piece_points) for piece_points, _ in found[1])
                if volume < best_volume:
                    best, best_volume = (axis, *found), volume
        if best is None or best_volume >= (1.0 - SPLIT_GAIN) * chosen_volume:
            break  # (more slabs are tried only when fewer gained)
        chosen, chosen_volume = best, best_volume
    return chosen


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
