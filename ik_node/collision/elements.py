"""A link's ``<collision>`` elements as padded points: each element's points (and a padding radius)
whose convex hull, grown by the padding, contains it, with its triangles' edges and faces where
slabs may cut it (:mod:`.shape_fitting`) and its volume. A mesh its vertices, a box its 8
corners, a cylinder the prism on 16-gons circumscribed around its end circles, a sphere its centre
padded by its radius, a capsule its two end centres padded by its radius.

Meshes (STL, DAE, OBJ) are read with ``trimesh`` (the ``collision`` extra), found through
``package://`` (``robot.package_paths``, then the ament index; see
:func:`ik_node.description.resources.resolve_path`) or relative to the URDF file; a mesh that
cannot be read is warned about (naming link and path) and that element is left out. A
description's elements are read once per process (:func:`link_elements`, by :func:`cache_key`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..description import resolve_path

__all__ = ["Element", "cache_key", "link_elements", "link_points", "load_mesh", "primitive_points"]

_POLYGON_SIDES = 16
_element_cache: dict[tuple, dict] = {}


def cache_key(robot, package_paths: Sequence[str] | None) -> tuple:
    """(description hash, package paths): what a model, box or hull of ``robot`` is cached by
    (``package_paths`` default: the ones given to ``load_robot``)."""
    paths = tuple(str(entry) for entry in (robot.package_paths if package_paths is None else package_paths))
    return robot.description_hash, paths


def link_elements(robot, key: tuple) -> dict[str, list]:
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


def link_points(elements: list) -> tuple[np.ndarray, float]:
    """The points of a link's elements and the largest padding radius among them [m]: the
    padding grown around the points' convex hull contains every element."""
    return np.concatenate([element.points for element in elements]), max(element.pad for element in elements)


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
class Element:
    """One ``<collision>`` element in the link frame: ``points`` [m] each padded by ``pad`` [m],
    whose convex hull contains it; ``edges`` (index pairs into ``points``) when it is a surface of
    triangles or a convex polytope that slabs may cut (mesh, box, the cylinder's prism), ``None``
    for a sphere or a capsule (kept whole); ``volume`` [m³] of the real element; ``faces``
    (triangles of indices into ``points``) of that surface or polytope, which cells cut
    (:mod:`.shape_fitting`)."""

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


def _element(geometry, package_paths: Sequence[str]) -> Element | None:
    """The :class:`Element` of ``geometry``; None (warned, naming the link and the path) for a
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
    return Element(points=points, pad=float(pad), edges=edges, volume=float(volume), faces=faces)
