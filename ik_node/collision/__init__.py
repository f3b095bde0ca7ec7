"""Collision checking's geometry: each link's collision model (:mod:`.geometry`: capsules fitted
around its ``<collision>`` elements, boxes, hulls and pieces for the solver; the elements read by
:mod:`.elements`, the shapes fitted by :mod:`.shape_fitting`), static obstacles in
the base frame (:mod:`.obstacles`) and the link pairs checked for self-collision (:mod:`.srdf`).
Meshes are read (trimesh, the ``collision`` extra) only when a model is built."""

from .elements import load_mesh, primitive_points
from .geometry import (
    CAPSULE,
    SPHERE,
    CollisionModel,
    collision_model,
    link_boxes,
    link_hulls,
    link_pieces,
    segment_distances,
    shape_distance,
)
from .obstacles import OBSTACLE_KINDS, Obstacle
from .shape_fitting import HULL_TOLERANCE, HULL_VERTICES, MAX_SHAPES_PER_LINK, enclosing_capsule
from .srdf import collision_pairs

__all__ = [
    "CAPSULE",
    "HULL_TOLERANCE",
    "HULL_VERTICES",
    "MAX_SHAPES_PER_LINK",
    "OBSTACLE_KINDS",
    "Obstacle",
    "SPHERE",
    "CollisionModel",
    "collision_model",
    "collision_pairs",
    "enclosing_capsule",
    "link_boxes",
    "link_hulls",
    "link_pieces",
    "load_mesh",
    "primitive_points",
    "segment_distances",
    "shape_distance",
]
