"""Which link pairs to check for self-collision: an SRDF's ``<disable_collisions>``, or the same
list computed as MoveIt's Setup Assistant computes it.

:func:`disabled_pairs` reads ``<disable_collisions link1 link2 reason/>`` from an SRDF (a path,
XML text or bytes); pairs naming links the robot does not have are warned about (one warning
listing them) and ignored. :func:`compute_disabled_pairs`, for robots without an SRDF, follows
the Setup Assistant (``moveit_setup_srdf_plugins``' ``computeDefaultCollisions``) on our
capsules (:mod:`ik_node.collision`) instead of the meshes:

* ``Adjacent``: a link and its nearest ancestor with collision geometry;
* ``Default``: in collision at the default configuration (zeros, clamped into the limits);
* ``Always``: in collision in at least 95 % of the sampled configurations;
* ``Never``: in collision in none of them.

Samples: ``samples=10000`` configurations (the Setup Assistant's default density), joint values
drawn uniformly within the limits (a continuous joint over a turn, multi-DOF joints at their
neutral value: they move the whole subtree rigidly), by ``numpy.random.default_rng(seed)`` with
``seed=0``: the same pairs every run. Since the capsules contain the meshes, they find contact
in more configurations than the meshes do: fewer pairs are ``Never`` than on the meshes (more
pairs checked, none missed that the samples would have caught).

Pairs are ``(link1, link2)`` tuples sorted by name.
"""

from __future__ import annotations

import itertools
import math
import os
import warnings
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np

from ..errors import URDFError
from .geometry import CollisionModel, collision_model, shape_distance

__all__ = ["ALWAYS_FRACTION", "collision_pairs", "compute_disabled_pairs", "disabled_pairs"]

#: a pair in contact in at least this fraction of the samples is ``Always`` (the Setup Assistant's)
ALWAYS_FRACTION = 0.95


def _pair(link1: str, link2: str) -> tuple[str, str]:
    return (link1, link2) if link1 <= link2 else (link2, link1)


def disabled_pairs(srdf: str | os.PathLike | bytes, robot) -> dict[tuple[str, str], str]:
    """``{(link1, link2): reason}`` from an SRDF's ``<disable_collisions>`` elements (reason
    ``""`` when it gives none). ``srdf``: a file path, or the XML as text or bytes. Raises
    :class:`~ik_node.errors.URDFError` for a missing file or malformed XML."""
    if isinstance(srdf, bytes):
        data = srdf
    elif isinstance(srdf, os.PathLike) or not str(srdf).lstrip().startswith("<"):
        path = Path(srdf)
        if not path.is_file():
            raise URDFError(f"SRDF file not found: '{path}' (pass a file path or the SRDF XML)")
        data = path.read_bytes()
    else:
        data = str(srdf).encode("utf-8")
    try:
        root = ElementTree.fromstring(data.strip())
    except ElementTree.ParseError as error:
        raise URDFError(f"malformed SRDF XML: {error}") from None
    known, pairs, unknown = set(robot.links), {}, []
    for element in root.iter("disable_collisions"):
        link1, link2 = element.get("link1"), element.get("link2")
        missing = [link for link in (link1, link2) if link not in known]
        if missing:
            unknown.append(f"{link1} / {link2} (unknown: {', '.join(str(link) for link in missing)})")
            continue
        pairs[_pair(link1, link2)] = element.get("reason", "")
    if unknown:
        warnings.warn(
            f"SRDF: {len(unknown)} <disable_collisions> naming links robot '{robot.name}' does not "
            f"have were ignored: {'; '.join(unknown)}",
            stacklevel=2,
        )
    return pairs


def compute_disabled_pairs(
    robot, model: CollisionModel | None = None, samples: int = 10000, seed: int = 0
) -> dict[tuple[str, str], str]:
    """``{(link1, link2): reason}`` as the Setup Assistant computes it (see the module's
    docstring), over the links of ``model`` (default: :func:`~ik_node.collision.collision_model`)
    that the robot's full tree reaches."""
    model = collision_model(robot) if model is None else model
    tree = robot.full_tree
    links = []
    for link in dict.fromkeys(model.link_names):
        try:
            tree.pose_of(tree.link_poses(tree.neutral), link)
        except Exception:  # behind a joint that cannot be used: never placed, never paired
            continue
        links.append(link)
    disabled = {pair: "Adjacent" for pair in _adjacent_pairs(robot, set(links))}
    configurations = _samples(robot, samples, np.random.default_rng(seed))
    default = np.clip(tree.neutral, tree.lower, tree.upper)[None]
    poses, default_poses = tree.link_poses(configurations), tree.link_poses(default)
    link_poses = {link: tree.pose_of(poses, link) for link in links}
    default_link_poses = {link: tree.pose_of(default_poses, link) for link in links}
    for link1, link2 in itertools.combinations(links, 2):
        pair = _pair(link1, link2)
        if pair in disabled:
            continue
        if _in_contact(model, link1, default_link_poses[link1], link2, default_link_poses[link2])[0]:
            disabled[pair] = "Default"
            continue
        contact = _in_contact(model, link1, link_poses[link1], link2, link_poses[link2])
        if contact.mean() >= ALWAYS_FRACTION:
            disabled[pair] = "Always"
        elif not contact.any():
            disabled[pair] = "Never"
    return disabled


def collision_pairs(
    robot, srdf=None, model: CollisionModel | None = None, samples: int = 10000, seed: int = 0
) -> list[tuple[str, str]]:
    """The link pairs to check: every pair of links with collision geometry, less the SRDF's
    disabled pairs (``srdf`` given) or the computed ones (:func:`compute_disabled_pairs`)."""
    model = collision_model(robot) if model is None else model
    if srdf is not None:
        disabled = disabled_pairs(srdf, robot)
    else:
        disabled = compute_disabled_pairs(robot, model, samples, seed)
    links = dict.fromkeys(model.link_names)
    return [_pair(*pair) for pair in itertools.combinations(links, 2) if _pair(*pair) not in disabled]


def _in_contact(model: CollisionModel, link1: str, poses1, link2: str, poses2) -> np.ndarray:
    contact = np.zeros(poses1.shape[:-2], dtype=bool)
    for i, j in itertools.product(model.shapes_of(link1), model.shapes_of(link2)):
        contact |= shape_distance(model, i, poses1, j, poses2) <= 0.0
    return contact


def _adjacent_pairs(robot, with_geometry: set[str]) -> set[tuple[str, str]]:
    """Each link with geometry and its nearest ancestor with geometry (links without geometry
    are skipped, as the Setup Assistant's link graph does)."""
    pairs = set()
    for link in with_geometry:
        joint = robot.parent_joint.get(link)
        while joint is not None and joint.parent not in with_geometry:
            joint = robot.parent_joint.get(joint.parent)
        if joint is not None:
            pairs.add(_pair(link, joint.parent))
    return pairs


def _samples(robot, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` configurations of the full tree: uniform within the limits, a turn for
    unlimited 1-DOF joints, multi-DOF joints at their neutral value."""
    tree = robot.full_tree
    lower, upper = tree.lower.copy(), tree.upper.copy()
    multi_dof = {
        name for joint in robot.joints.values() if joint.is_multi_dof for name in joint.coordinate_names
    }
    fixed = np.array([name in multi_dof for name in tree.joint_names], dtype=bool)
    lower = np.where(np.isfinite(lower), lower, -math.pi)
    upper = np.where(np.isfinite(upper), upper, math.pi)
    upper = np.minimum(upper, lower + 2.0 * math.pi)
    configurations = rng.uniform(lower, upper, size=(count, len(lower)))
    configurations[:, fixed] = tree.neutral[fixed]
    return configurations
