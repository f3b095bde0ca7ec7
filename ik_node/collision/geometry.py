"""Collision model: a conservative approximation of each link's ``<collision>`` geometry.

Each link with collision geometry gets **one to three capsules** (:data:`MAX_SHAPES_PER_LINK`;
each a segment ``a``-``b`` and a radius ``r`` in the link frame, a sphere when ``a = b``) whose
union contains every one of its ``<collision>`` elements: a distance between two approximations
is never more than the distance between the real shapes, so a pair found apart here is apart on
the robot.

What is contained: every element as points padded by a radius whose convex hull contains it — a
mesh its vertices, a box its 8 corners, a cylinder the prism on 16-gons circumscribed around its
end circles, a sphere its centre padded by its radius, a capsule its two end centres padded by its
radius. A link is cut into slabs by planes across its principal axis (largest eigenvector of the
points' covariance); a slab's capsule holds the link's vertices inside the slab **and the points
where the edges of its triangles (or of its box or prism) cross the slab's two planes**: the
corners of every triangle clipped to the slab, so it contains the slab's part of the surface (a
capsule is convex). That also holds the solid: a point inside a closed mesh lies between two of its
surface's points in the plane across the axis through it, both in its slab. (Assigning whole
triangles to the slab of their centroid would contain the surface only: a long triangle crossing
the cut leaves interior points of a thin slab outside both capsules.) A mesh that is not closed is
contained as a surface, as coal's mesh-mesh distance measures it. Spheres and capsules are never
cut: each goes whole into the slab of its centre.

How it is fitted (:func:`_link_shapes`): for ``k`` = 1 to :data:`MAX_SHAPES_PER_LINK` slabs, the
cuts are moved by coordinate descent to the least total volume of :func:`enclosing_capsule` (along
each piece's principal axis; radius and ends the smallest holding every padded point); a link of
several elements also tries one piece per element, merged pairwise while more than allowed. The
best pieces of each count are refit by :func:`_tight_capsule` (a compass search over the axis's
direction and position on the pieces' convex hull vertices, which shrinks the Panda's single
capsules by a third), and the link keeps the fewest capsules that more would not shrink by more
than :data:`SPLIT_GAIN`. A 1e-6 m allowance on every radius covers rounding.

Meshes (STL, DAE, OBJ) are read with ``trimesh`` (the ``collision`` extra), found through
``package://`` (``robot.package_paths``, then the ament index; see
:func:`ik_node.description.resources.resolve_path`) or relative to the URDF file; a mesh that cannot be read
is warned about (naming link and path) and that element is left out. Models are cached in memory
per description (its SHA-256, the package paths): built once per process.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..compiled.gjk import simplified_hull
from ..description import resolve_path

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
#: most capsules a link gets: a pair of links costs up to its square in capsule-pair checks, and
#: on the Panda, TALOS and UR5 the fourth capsule takes off less than a third capsule did
MAX_SHAPES_PER_LINK = 3
#: a link gets more capsules only when they hold this fraction less volume than fewer do: each
#: extra capsule costs every pair the link is in another capsule-pair check
SPLIT_GAIN = 0.15
_CUT_CANDIDATES = 5  # positions tried for a cut between its neighbours
_CUT_ROUNDS = 1  # passes of coordinate descent over the cuts
_SEARCH_ANGLE, _SEARCH_ANGLE_END = 0.2, 2e-3  # [rad] first and last axis steps of the compass search
_SEARCH_OFFSET = 0.25  # first offset step of the compass search, a fraction of the radius


@dataclass(frozen=True, eq=False)
class CollisionModel:
    """Per-link shapes as flat arrays (one row a shape, ready for compiled kernels).

    ``link_names[i]`` owns shape ``i`` (a link's shapes are consecutive rows, at most
    :data:`MAX_SHAPES_PER_LINK`): ``kind[i]`` (:data:`SPHERE` or :data:`CAPSULE`), ``radius[i]``
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
_element_cache: dict[tuple, dict] = {}


def _cache_key(robot, package_paths: Sequence[str] | None) -> tuple:
    """(description hash, package paths): what a model, box or hull of ``robot`` is cached by
    (``package_paths`` default: the ones given to ``load_robot``)."""
    paths = tuple(str(entry) for entry in (robot.package_paths if package_paths is None else package_paths))
    return robot.description_hash, paths


def _link_elements(robot, key: tuple) -> dict[str, list]:
    """``{link: [its readable elements]}`` (links with none left out), each mesh read once per
    description and package paths (a mesh that cannot be read is warned about once)."""
    if robot.description_hash is not None and key in _element_cache:
        return _element_cache[key]
    found = {}
    for link in robot.links:
        elements = [_element(geometry, key[1]) for geometry in robot.collision_geometry.get(link, ())]
        elements = [element for element in elements if element is not None]
        if elements:
            found[link] = elements
    if robot.description_hash is not None:
        _element_cache[key] = found
    return found


def _link_points(elements: list) -> tuple[np.ndarray, float]:
    """The points of a link's elements and the largest padding radius among them [m]: the
    padding grown around the points' convex hull contains every element."""
    return np.concatenate([element.points for element in elements]), max(element.pad for element in elements)


def collision_model(robot, package_paths: Sequence[str] | None = None) -> CollisionModel:
    """The :class:`CollisionModel` of ``robot`` (a :class:`~ik_node.description.model.Robot`), built once per
    description and package paths (``package_paths`` default: the ones given to ``load_robot``).
    Needs ``trimesh`` when the description has meshes."""
    key = _cache_key(robot, package_paths)
    if robot.description_hash is not None and key in _cache:
        return _cache[key]
    for problem in robot.collision_problems:
        warnings.warn(f"URDF: {problem}", stacklevel=2)
    rows = []
    for link, elements in _link_elements(robot, key).items():
        shapes = _link_shapes(elements)
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
#: A link's hull keeps this many vertices at most, fewer when the others all lie within
#: ``HULL_TOLERANCE`` [m] of their hull (the farthest-point subset, its padding grown by the largest
#: distance of a dropped vertex): GJK's support search is linear in the vertices.
HULL_VERTICES, HULL_TOLERANCE = 128, 0.001


def link_hulls(robot, package_paths: Sequence[str] | None = None) -> dict[str, tuple[np.ndarray, float]]:
    """``{link: (vertices (V, 3) [m, link frame], padding [m])}``: for each link with collision
    geometry, the convex hull of all its elements' points, grown by the largest padding radius of
    its elements (spheres, capsules): a convex set containing the geometry, which the solver
    checks with GJK (:mod:`ik_node.compiled.gjk`) where the capsules overlap. At most
    ``HULL_VERTICES`` vertices: a larger hull keeps its farthest-point subset (to within
    ``HULL_TOLERANCE``) and grows the padding by the largest distance of the others from that
    subset's hull (still containing).
    Built once per description and package paths."""
    key = _cache_key(robot, package_paths)
    if robot.description_hash is not None and key in _hull_cache:
        return _hull_cache[key]
    hulls = {link: _hull(*_link_points(elements)) for link, elements in _link_elements(robot, key).items()}
    if robot.description_hash is not None:
        _hull_cache[key] = hulls
    return hulls


def _hull(points: np.ndarray, pad: float) -> tuple[np.ndarray, float]:
    """(vertices (V, 3), padding [m]) of a convex set containing the balls of radius ``pad``
    around ``points``: their hull's vertices, at most ``HULL_VERTICES`` (see :func:`link_hulls`)."""
    import trimesh

    pad += ALLOWANCE
    try:
        vertices = np.asarray(trimesh.convex.convex_hull(points).vertices, dtype=float)
    except Exception:  # (flat or too few points for a hull: the points themselves)
        vertices = np.unique(points, axis=0)
    vertices = np.ascontiguousarray(vertices)
    if len(vertices) > HULL_VERTICES:  # fewer vertices, the padding grown to cover the rest
        chosen = np.empty(HULL_VERTICES, dtype=np.int64)
        error, used = simplified_hull(vertices, HULL_VERTICES, HULL_TOLERANCE, chosen)
        pad += error
        vertices = np.ascontiguousarray(vertices[chosen[:used]])
    return vertices, float(pad)


def link_boxes(robot, package_paths: Sequence[str] | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{link: (T_link_box (4, 4), size (3,) [m])}``: for each link with collision geometry, an
    oriented box containing all of it (the smallest-volume box around the elements' points,
    trimesh's ``oriented_bounds``, each side grown by the elements' padding radius; contains the
    convex hull, hence the geometry). A tighter stand-in than capsules for big, boxy links that
    the solve does not move (a torso, a pedestal): see :mod:`ik_node.solver.collision_task`.
    Built once per description and package paths."""
    key = _cache_key(robot, package_paths)
    if robot.description_hash is not None and key in _box_cache:
        return _box_cache[key]
    boxes = {link: _box(*_link_points(elements)) for link, elements in _link_elements(robot, key).items()}
    if robot.description_hash is not None:
        _box_cache[key] = boxes
    return boxes


def _box(points: np.ndarray, pad: float) -> tuple[np.ndarray, np.ndarray]:
    """(T_frame_box (4, 4), size (3,) [m]) of an oriented box containing the balls of radius
    ``pad`` around ``points`` (see :func:`link_boxes`)."""
    import trimesh

    try:
        to_origin, extents = trimesh.bounds.oriented_bounds(points)
        pose = np.linalg.inv(to_origin)
    except Exception:  # (flat or too few points for a hull: the axis-aligned box)
        low, high = points.min(axis=0), points.max(axis=0)
        pose, extents = np.eye(4), high - low
        pose[:3, 3] = (low + high) / 2.0
    return pose, np.asarray(extents, dtype=float) + 2.0 * (pad + ALLOWANCE)


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
    :func:`_tight_capsule` fits around it (``capsule``: a, b, radius [m], volume [m³]) and its
    oriented box (``box``: T_link_box (4, 4), size (3,) [m])."""

    vertices: np.ndarray = field(repr=False)
    pad: float
    hull_volume: float
    capsule: tuple = field(repr=False)
    box: tuple = field(repr=False)


def _hull_volume(points: np.ndarray, pads=None) -> float:
    """Volume [m³] of the points' convex hull (0 when flat)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        return float(ConvexHull(points).volume)
    except (QhullError, ValueError):
        return 0.0


def link_pieces(robot, link: str, package_paths: Sequence[str] | None = None) -> list[Piece]:
    """The geometry of ``link`` as convex pieces whose union contains it, for a link the solve
    does not move (:mod:`ik_node.solver.collision_task` checks each piece apart): a concave link's
    hull (a pedestal, a post on wide feet) fills the space beside the post.

    A link whose hull holds :data:`PIECES_FROM_VOLUME` or more is cut (:func:`_split`) into
    slabs across one axis, and each slab again across another, into cells (:func:`_cell_part`:
    each cell's hull contains the geometry's part in it); a split is kept only where its hulls
    hold :data:`SPLIT_GAIN` less volume than the whole. Empty when no split gains that much (the
    link is one convex piece: :func:`link_hulls`) or it has no readable geometry; built once per
    description, package paths and link."""
    key = _cache_key(robot, package_paths)
    if robot.description_hash is not None and (key, link) in _piece_cache:
        return _piece_cache[key, link]
    elements = _link_elements(robot, key).get(link, [])
    cells = []
    if elements:
        points = np.concatenate([element.points for element in elements])
        axes = np.concatenate([np.eye(3), _principal_axes(points)[1].T])
        split = _split(elements, axes, ()) if _hull_volume(points) >= PIECES_FROM_VOLUME else None
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
        vertices, hull_pad = _hull(cell_points, pad)
        pieces.append(
            Piece(
                vertices=vertices,
                pad=hull_pad,
                hull_volume=_hull_volume(cell_points),
                capsule=_tight_capsule(cell_points, cell_pads),
                box=_box(cell_points, pad),
            )
        )
    if robot.description_hash is not None:
        _piece_cache[key, link] = pieces
    return pieces


def _split(elements: list[_Element], axes: np.ndarray, within):
    """The cut of the geometry inside the slabs ``within`` into 2 to :data:`MAX_PIECES` slabs
    across one of ``axes`` (:func:`_best_cuts`, to the least total hull volume): ``(axis, cuts,
    pieces)`` with the fewest slabs that more would not shrink by :data:`SPLIT_GAIN` (more are
    tried only while fewer gained); None when no cut shrinks the hull volume of the whole by
    that much."""
    whole = _slab_pieces(elements, axes[0], [], within)
    if not whole:
        return None
    chosen, chosen_volume = None, _hull_volume(whole[0][0])
    for count in range(2, MAX_PIECES + 1):
        best, best_volume = None, math.inf
        for axis in axes:
            found = _best_cuts(elements, axis, count, _hull_volume, _PIECE_CUTS, within)
            if found is not None:
                volume = sum(_hull_volume(piece_points) for piece_points, _ in found[1])
                if volume < best_volume:
                    best, best_volume = (axis, *found), volume
        if best is None or best_volume >= (1.0 - SPLIT_GAIN) * chosen_volume:
            break  # (more slabs are tried only when fewer gained)
        chosen, chosen_volume = best, best_volume
    return chosen


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


@dataclass(frozen=True, eq=False)
class _Element:
    """One ``<collision>`` element in the link frame: ``points`` [m] each padded by ``pad`` [m],
    whose convex hull contains it; ``edges`` (index pairs into ``points``) when it is a surface of
    triangles or a convex polytope that slabs may cut (mesh, box, the cylinder's prism), ``None``
    for a sphere or a capsule (kept whole); ``volume`` [m³] of the real element; ``faces``
    (triangles of indices into ``points``) of that surface or polytope, which cells cut
    (:func:`_cell_part`)."""

    points: np.ndarray
    pad: float
    edges: np.ndarray | None
    volume: float
    faces: np.ndarray | None = None


#: the 12 edges of the box whose corners are ``_BOX_SIGNS``: corners differing in one sign
_BOX_SIGNS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
_BOX_EDGES = np.array([(i, j) for i in range(8) for j in range(i + 1, 8) if bin(i ^ j).count("1") == 1])


def primitive_points(kind: str, size) -> tuple[np.ndarray, float, float, np.ndarray | None]:
    """(points (P, 3) [m, the shape's frame], padding radius [m], volume [m³], edges or None) of a
    primitive centred on its frame, its axis z (URDF's and RViz's conventions): the points' hull
    grown by the padding contains the shape. ``box`` (x, y, z): its corners; ``cylinder``
    (radius, length): the prism on 16-gons circumscribed around its end circles; ``sphere``
    (radius,): its centre; ``capsule`` (radius, length): its end centres. Edges (index pairs)
    where slabs may cut the points' polytope (box, cylinder)."""
    if kind == "box":
        return _BOX_SIGNS * (np.asarray(size) / 2.0), 0.0, float(np.prod(size)), _BOX_EDGES
    if kind == "cylinder":
        radius, length = size
        angles = np.arange(_POLYGON_SIDES) * 2.0 * math.pi / _POLYGON_SIDES
        ring = (
            radius / math.cos(math.pi / _POLYGON_SIDES) * np.stack([np.cos(angles), np.sin(angles)], axis=1)
        )
        local = np.concatenate(
            [np.column_stack([ring, np.full(len(ring), z)]) for z in (-length / 2.0, length / 2.0)]
        )
        around = np.arange(_POLYGON_SIDES)
        following = (around + 1) % _POLYGON_SIDES
        edges = np.concatenate(
            [
                np.column_stack([around, following]),  # bottom ring
                np.column_stack([around, following]) + _POLYGON_SIDES,  # top ring
                np.column_stack([around, around + _POLYGON_SIDES]),  # sides
            ]
        )
        return local, 0.0, math.pi * radius**2 * length, edges
    if kind == "sphere":
        return np.zeros((1, 3)), float(size[0]), 4.0 / 3.0 * math.pi * size[0] ** 3, None
    radius, length = size  # capsule
    local = np.array([[0.0, 0.0, -length / 2.0], [0.0, 0.0, length / 2.0]])
    return local, float(radius), math.pi * radius**2 * length + 4.0 / 3.0 * math.pi * radius**3, None


def _element(geometry, package_paths: Sequence[str]) -> _Element | None:
    """The :class:`_Element` of ``geometry``; None (warned, naming the link and the path) for a
    mesh that cannot be read."""
    kind, size = geometry.kind, geometry.size
    if kind == "mesh":
        try:
            mesh = load_mesh(geometry, package_paths)
        except (OSError, ValueError) as error:
            warnings.warn(
                f"collision mesh of link '{geometry.link}' not loaded, the element is left out: "
                f"'{geometry.filename}' ({error})",
                stacklevel=5,
            )
            return None
        local, inverse = np.unique(np.asarray(mesh.vertices, dtype=float), axis=0, return_inverse=True)
        faces = inverse.reshape(-1)[np.asarray(mesh.faces)]
        edges = np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
        edges = np.unique(edges[edges[:, 0] != edges[:, 1]], axis=0)
        welded = mesh.copy()
        welded.merge_vertices()  # an STL repeats each triangle's vertices: never watertight as read
        volume = abs(welded.volume) if welded.is_watertight else welded.convex_hull.volume
        pad = 0.0
    else:
        local, pad, volume, edges = primitive_points(kind, size)
        faces = None
        if edges is not None:  # a box or a prism: convex, its hull's triangles are its faces
            from scipy.spatial import ConvexHull

            faces = ConvexHull(local).simplices
    origin = geometry.origin
    points = local @ origin[:3, :3].T + origin[:3, 3]
    return _Element(points=points, pad=float(pad), edges=edges, volume=float(volume), faces=faces)


def _capsule_volume(a: np.ndarray, b: np.ndarray, radius: float) -> float:
    return math.pi * radius**2 * float(np.linalg.norm(b - a)) + 4.0 / 3.0 * math.pi * radius**3


def _fit(points: np.ndarray, pads: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """:func:`enclosing_capsule` and its volume [m³]."""
    a, b, radius = enclosing_capsule(points, pads)
    return a, b, radius, _capsule_volume(a, b, radius)


def _link_shapes(elements: list[_Element]) -> list[tuple[np.ndarray, np.ndarray, float, float]]:
    """A link's capsules ``(a, b, radius, volume)``: the fewest of the candidates below whose
    volume no candidate with more shapes (up to :data:`MAX_SHAPES_PER_LINK`) undercuts by more
    than :data:`SPLIT_GAIN`.

    Candidates, each a split of the link's geometry into pieces (``(points, pads)``), compared by
    the volume of :func:`enclosing_capsule` around each piece, the best of each count then refit
    by :func:`_tight_capsule`: the link cut into ``k`` slabs across its principal axis
    (:func:`_slab_pieces`, the cuts placed by :func:`_best_cuts`), ``k`` = 1 (every element in
    one piece) to :data:`MAX_SHAPES_PER_LINK`; and, for a link of several elements, one piece per
    element, merged pairwise (the pair whose merged capsule adds least volume first) down to one."""
    points = np.concatenate([element.points for element in elements])
    pads = np.concatenate([np.full(len(element.points), element.pad) for element in elements])
    best = {1: [(points, pads)]}  # count: pieces
    if len(points) > 1 and np.ptp(points, axis=0).max() > 0.0:
        axis = np.linalg.eigh(np.cov((points - points.mean(axis=0)).T))[1][:, -1]
        for count in range(2, MAX_SHAPES_PER_LINK + 1):
            found = _best_cuts(elements, axis, count)
            if found is not None:
                best[count] = found[1]
    if len(elements) > 1:
        pieces = [(element.points, np.full(len(element.points), element.pad)) for element in elements]
        volumes = [_fit(*piece)[3] for piece in pieces]
        while len(pieces) > 1:
            if len(pieces) <= MAX_SHAPES_PER_LINK and (
                len(pieces) not in best or sum(volumes) < sum(_fit(*piece)[3] for piece in best[len(pieces)])
            ):
                best[len(pieces)] = list(pieces)
            merged = {}
            for i, j in itertools.combinations(range(len(pieces)), 2):
                union = tuple(np.concatenate([pieces[i][k], pieces[j][k]]) for k in (0, 1))
                merged[i, j] = (union, _fit(*union)[3])
            i, j = min(merged, key=lambda pair: merged[pair][1] - volumes[pair[0]] - volumes[pair[1]])
            pieces = [piece for k, piece in enumerate(pieces) if k not in (i, j)] + [merged[i, j][0]]
            volumes = [volume for k, volume in enumerate(volumes) if k not in (i, j)] + [merged[i, j][1]]
    chosen = None
    for count in sorted(best):
        shapes = [_tight_capsule(*piece) for piece in best[count]]
        if chosen is None or _total(shapes) < (1.0 - SPLIT_GAIN) * _total(chosen):
            chosen = shapes
    return chosen


def _total(shapes) -> float:
    return sum(shape[3] for shape in shapes)


def _slab_pieces(elements: list[_Element], axis: np.ndarray, cuts: Sequence[float], within=()):
    """The link's geometry between consecutive planes ``x · axis = cut`` (and inside the slabs
    ``within``: ``(axis, low, high)`` triples), as ``(points, pads)`` per cell
    (:func:`_cell_part`; an empty cell left out)."""
    bounds = [-math.inf, *cuts, math.inf]
    pieces = []
    for lower, upper in zip(bounds[:-1], bounds[1:], strict=True):
        cell = (*within, (axis, lower, upper))
        parts = [(_cell_part(element, cell), element.pad) for element in elements]
        parts = [(points, pad) for points, pad in parts if len(points)]
        if parts:
            pads = [np.full(len(points), pad) for points, pad in parts]
            pieces.append((np.concatenate([points for points, _ in parts]), np.concatenate(pads)))
    return pieces


def _cell_part(element: _Element, cell) -> np.ndarray:
    """Points (P, 3) whose hull contains ``element``'s part in ``cell`` (one or two slabs
    ``(axis, low, high)``: ``low <= x · axis <= high``): a sphere or a capsule whole when its
    centre lies in the cell (half-open slabs, so in one cell only); a polytope or triangle
    surface by the corners of its triangles clipped to the cell: its vertices inside, its edges'
    crossings of the cell's planes inside, and, with two slabs, where the lines along which two
    of their planes meet cross its triangles. The cell is unbounded across its (at most two)
    axes, so a point of a closed mesh's solid inside it lies between two points of its surface
    inside it, on the line through it along that direction: the hull holds the solid too."""
    heights = [element.points @ axis for axis, _, _ in cell]
    if element.edges is None:
        return (
            element.points
            if all(
                low <= float(height.mean()) < high or (high == math.inf and float(height.mean()) >= low)
                for height, (_, low, high) in zip(heights, cell, strict=True)
            )
            else np.empty((0, 3))
        )

    def inside(points, skip=-1):
        keep = np.ones(len(points), dtype=bool)
        for k, (axis, low, high) in enumerate(cell):
            if k != skip:
                height = points @ axis
                keep &= (height >= low - 1e-12) & (height <= high + 1e-12)
        return points[keep]

    found = [inside(element.points)]
    for k, (_, low, high) in enumerate(cell):
        first, second = heights[k][element.edges[:, 0]], heights[k][element.edges[:, 1]]
        for plane in (low, high):
            if not math.isfinite(plane):
                continue
            crossing = (first - plane) * (second - plane) < 0.0
            fraction = ((plane - first[crossing]) / (second[crossing] - first[crossing]))[:, None]
            ends = element.points[element.edges[crossing]]  # (crossing edges, 2, 3)
            found.append(inside(ends[:, 0] + fraction * (ends[:, 1] - ends[:, 0]), skip=k))
    if len(cell) == 2 and element.faces is not None:
        (axis_1, low_1, high_1), (axis_2, low_2, high_2) = cell
        along_1, along_2 = heights[0][element.faces], heights[1][element.faces]  # (F, 3)
        for plane_1 in (low_1, high_1):
            for plane_2 in (low_2, high_2):
                if not (math.isfinite(plane_1) and math.isfinite(plane_2)):
                    continue
                straddling = (
                    (along_1.min(axis=1) <= plane_1) & (along_1.max(axis=1) >= plane_1)
                    & (along_2.min(axis=1) <= plane_2) & (along_2.max(axis=1) >= plane_2)
                )  # fmt: skip
                # p = c0 + a (c1 - c0) + b (c2 - c0) on both planes: a 2x2 system per triangle
                h1, h2 = along_1[straddling], along_2[straddling]
                m11, m12, m21, m22 = (
                    h1[:, 1] - h1[:, 0],
                    h1[:, 2] - h1[:, 0],
                    h2[:, 1] - h2[:, 0],
                    h2[:, 2] - h2[:, 0],
                )
                determinant = m11 * m22 - m12 * m21
                regular = np.abs(determinant) > 1e-15
                r1, r2 = (plane_1 - h1[:, 0])[regular], (plane_2 - h2[:, 0])[regular]
                determinant = determinant[regular]
                a = (r1 * m22[regular] - m12[regular] * r2) / determinant
                b = (m11[regular] * r2 - r1 * m21[regular]) / determinant
                hit = (a >= 0.0) & (b >= 0.0) & (a + b <= 1.0)
                corner = element.points[element.faces[straddling][regular][hit]]  # (H, 3, 3)
                a, b = a[hit, None], b[hit, None]
                found.append(
                    corner[:, 0] + a * (corner[:, 1] - corner[:, 0]) + b * (corner[:, 2] - corner[:, 0])
                )
    return np.concatenate(found)


def _best_cuts(
    elements: list[_Element],
    axis: np.ndarray,
    count: int,
    measure=None,
    candidates=_CUT_CANDIDATES,
    within=(),
):
    """The pieces of :func:`_slab_pieces` in ``count`` slabs across ``axis`` (inside the slabs
    ``within``), the cuts placed by coordinate descent (each cut in turn moved to the best of
    ``candidates`` even positions between its neighbours; :data:`_CUT_ROUNDS` rounds) from even
    spacing, to the least total ``measure(points, pads)`` [m³] of the pieces (default: the
    volume of :func:`enclosing_capsule`); None when some slab is empty."""
    measure = measure or (lambda points, pads: _fit(points, pads)[3])
    inside = _slab_pieces(elements, axis, [], within)
    if not inside:
        return None
    heights = inside[0][0] @ axis
    low, high = float(heights.min()), float(heights.max())
    cuts = list(np.linspace(low, high, count + 1)[1:-1])

    def volume_of(cuts):
        pieces = _slab_pieces(elements, axis, cuts, within)
        return sum(measure(*piece) for piece in pieces) if len(pieces) == count else math.inf

    best = volume_of(cuts)
    for _ in range(_CUT_ROUNDS):
        for index in range(len(cuts)):
            below = low if index == 0 else cuts[index - 1]
            above = high if index == len(cuts) - 1 else cuts[index + 1]
            for candidate in np.linspace(below, above, candidates + 2)[1:-1]:
                trial = cuts[:index] + [float(candidate)] + cuts[index + 1 :]
                volume = volume_of(trial)
                if volume < best:
                    best, cuts = volume, trial
    return (cuts, _slab_pieces(elements, axis, cuts, within)) if best < math.inf else None


def enclosing_capsule(points: np.ndarray, pads: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """End points ``a``, ``b`` and radius ``r`` of a capsule containing every ball
    ``(points[i], pads[i])``: along the points' principal axis (see the module's docstring)."""
    points = np.asarray(points, dtype=float)
    pads = np.asarray(pads, dtype=float)
    centre, axes = _principal_axes(points)
    a, b, radius, _ = _capsules_about(points, pads, centre[None], axes[None, :, -1])
    return a[0], b[0], float(radius[0])


def _principal_axes(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The centre of the points' bounding box in their principal frame, and that frame's axes
    (columns, the largest spread last; the identity for a single point)."""
    centre = points.mean(axis=0)
    if len(points) > 1 and np.ptp(points, axis=0).max() > 0.0:
        axes = np.linalg.eigh((points - centre).T @ (points - centre))[1]
    else:
        axes = np.eye(3)
    spread = (points - centre) @ axes
    return centre + axes @ ((spread.min(axis=0) + spread.max(axis=0)) / 2.0), axes


def _capsules_about(points, pads, centres, axes):
    """For each line through ``centres[k]`` along the unit vector ``axes[k]`` (arrays ``(m, 3)``):
    the smallest capsule on it containing every ball ``(points[i], pads[i])``, as arrays ``a``,
    ``b`` ``(m, 3)``, ``radius`` and ``volume`` ``(m,)``."""
    offsets = points[None, :, :] - centres[:, None, :]
    along = np.einsum("mnk,mk->mn", offsets, axes)
    radial = np.linalg.norm(offsets - along[..., None] * axes[:, None, :], axis=2)
    radius = np.max(radial + pads, axis=1) + ALLOWANCE
    # a padded point at (along t, radial ρ) lies in the cap round end b at s when
    # (t - s)² + ρ² <= (r - pad)²: s >= t - sqrt((r - pad)² - ρ²), and likewise for end a
    room = np.sqrt(np.maximum((radius[:, None] - pads) ** 2 - radial**2, 0.0))
    end, start = np.max(along - room, axis=1), np.min(along + room, axis=1)
    middle = (start + end) / 2.0  # when start > end every point fits in one sphere on the axis
    start, end = np.where(start > end, middle, start), np.where(start > end, middle, end)
    volume = math.pi * radius**2 * (end - start) + 4.0 / 3.0 * math.pi * radius**3
    return centres + start[:, None] * axes, centres + end[:, None] * axes, radius, volume


def _tight_capsule(points: np.ndarray, pads: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """``(a, b, radius, volume)`` of a capsule containing every ball ``(points[i], pads[i])``,
    smaller than :func:`enclosing_capsule`'s: a compass search over the axis's direction and its
    offset across (each step tried both ways along two directions across the axis, halved when
    none shrinks the volume; :func:`_capsules_about` gives radius and ends), from the best of the
    points' and their convex hull's principal axes, on the hull's vertices (a capsule containing
    those contains them all)."""
    points, pads = np.asarray(points, dtype=float), np.asarray(pads, dtype=float)
    centre, axes = _principal_axes(points)
    starts = [(centre, axes[:, -1])]  # enclosing_capsule's
    points, pads = _hull_points(points, pads)
    centre, axes = _principal_axes(points)
    starts += [(centre, axes[:, k]) for k in (2, 1, 0)]
    centres, directions = np.array([s[0] for s in starts]), np.array([s[1] for s in starts])
    a, b, radius, volume = _capsules_about(points, pads, centres, directions)
    best = int(np.argmin(volume))
    centre, axis = centres[best], directions[best]
    result = (a[best], b[best], float(radius[best]), float(volume[best]))
    angle, offset = _SEARCH_ANGLE, _SEARCH_OFFSET * result[2]
    while angle > _SEARCH_ANGLE_END:
        across = np.linalg.svd(axis[None, :])[2][1:]  # two unit vectors across the axis
        steps = np.concatenate([across, -across])
        turned = axis + angle * steps
        turned /= np.linalg.norm(turned, axis=1, keepdims=True)
        trial_axes = np.concatenate([turned, np.tile(axis, (4, 1))])
        trial_centres = np.concatenate([np.tile(centre, (4, 1)), centre + offset * steps])
        a, b, radius, volume = _capsules_about(points, pads, trial_centres, trial_axes)
        best = int(np.argmin(volume))
        if volume[best] < result[3]:
            axis, centre = trial_axes[best], trial_centres[best]
            result = (a[best], b[best], float(radius[best]), float(volume[best]))
        else:
            angle, offset = angle / 2.0, offset / 2.0
    return result


def _hull_points(points: np.ndarray, pads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points (and their pads) on the convex hull of the points of each pad: a ball centred
    inside the hull of balls of its radius is inside their hull. All of them if qhull fails."""
    from scipy.spatial import ConvexHull, QhullError

    kept_points, kept_pads = [], []
    for pad in np.unique(pads):
        group = points[pads == pad]
        if len(group) > 4:
            try:
                group = group[ConvexHull(group).vertices]
            except (QhullError, ValueError):  # flat or degenerate: keep them all
                pass
        kept_points.append(group)
        kept_pads.append(np.full(len(group), pad))
    return np.concatenate(kept_points), np.concatenate(kept_pads)


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
