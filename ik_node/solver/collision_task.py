"""The collision part of a solver's task: the links' shapes fixed to the tree's frames, the
obstacles in the base frame, and the pairs to keep apart, as the arrays of
:mod:`ik_node.compiled.contacts`.

Links: each link's capsules (:func:`ik_node.collision.collision_model`), or for a link the solve
does not move its convex pieces when it is concave (:func:`ik_node.collision.link_pieces`, each
piece an owner of its own with its hull and its capsule or box: a pedestal, a post on wide feet),
else its oriented box when that fits tightly (:func:`ik_node.collision.link_boxes`,
``BOX_FIT``: a torso), are fixed to the frame of the solve's tree that carries the link: the
link's own frame when it lies on the tree's paths, else the last link of the tree on the path
from the base to it, through joints the solve does not move, held at their neutral value clipped
into their limits (a gripper's fingers, the other arm, the head). Pairs:

* self-collision (``self_collision``): the link pairs that the SRDF leaves enabled, or the
  pairs :func:`ik_node.collision.srdf.compute_disabled_pairs` leaves (computed once per description);
* obstacles: every link shape that the solve moves, with every obstacle (whether or not
  ``self_collision`` is on);

leaving out pairs whose frames no joint of the solve moves apart (their distance never changes:
nothing the solve could do about them). Self-collision pairs whose shapes overlap at the rest
posture (capsules are larger than links: TALOS's shoulder and torso, whose meshes are 1.4 cm
apart there) would refuse every configuration near the rest: they are left out, with a warning
naming the links (as the Setup Assistant leaves out pairs in contact at the default
configuration), and are not checked (see docs/collision.md).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence

import numpy as np

from ..collision import (
    Obstacle,
    collision_model,
    collision_pairs,
    link_boxes,
    link_hulls,
    link_pieces,
    primitive_points,
)
from ..compiled import bundles, contacts, spatial
from ..errors import IKNodeError

__all__ = ["CollisionTask"]


_NO_ROTATION = np.eye(3)
#: A link the solve does not move is checked as its oriented box when the box holds at most this
#: times the link's geometry volume and less than its capsules (TALOS's torso: 1.4; Baxter's
#: pedestal, a post on wide feet: 5.7, kept as capsules).
BOX_FIT = 1.5


def _shape_row(frame: int, kind: int, radius: float, a, b, rotation=_NO_ROTATION) -> np.ndarray:
    row = np.zeros(contacts.SHAPE_COLUMNS)
    row[contacts.FRAME], row[contacts.KIND], row[contacts.RADIUS] = frame, kind, radius
    row[contacts.A : contacts.A + 3], row[contacts.B : contacts.B + 3] = a, b
    row[contacts.ROTATION : contacts.ROTATION + 9] = np.asarray(rotation, dtype=float).reshape(9)
    return row


def obstacle_row(obstacle: Obstacle) -> np.ndarray:
    """The shape row of an obstacle (pose index 0: the base): a sphere, a capsule (a cylinder as
    the capsule of its radius and length, which contains it) or a box."""
    pose = obstacle.pose
    if obstacle.kind == "sphere":
        return _shape_row(0, contacts.SWEPT, obstacle.size[0], pose[:3, 3], pose[:3, 3])
    if obstacle.kind == "box":
        half = np.asarray(obstacle.size) / 2.0
        return _shape_row(0, contacts.BOX, 0.0, pose[:3, 3], half, pose[:3, :3])
    radius, length = obstacle.size
    axis = pose[:3, 2] * length / 2.0
    return _shape_row(0, contacts.SWEPT, radius, pose[:3, 3] - axis, pose[:3, 3] + axis)


def obstacle_hull(obstacle: Obstacle) -> tuple[np.ndarray, float]:
    """The points (base frame) and padding [m] whose hull, grown by the padding, contains the
    obstacle (:func:`ik_node.collision.primitive_points`)."""
    local, pad, _, _ = primitive_points(obstacle.kind, obstacle.size)
    pose = obstacle.pose
    return local @ pose[:3, :3].T + pose[:3, 3], pad


def _link_geometry(robot, self_collision: bool) -> tuple:
    """(the capsules' model, the links' oriented boxes (only for self-collision), their hulls);
    IKNodeError naming the extra to install without it."""
    try:
        return collision_model(robot), link_boxes(robot) if self_collision else {}, link_hulls(robot)
    except ImportError as error:
        raise IKNodeError(
            f"collision checking needs the collision extra (trimesh, scipy, pycollada): "
            f"pip install 'ik_node[collision]' ({error})"
        ) from None


class CollisionTask:
    """The shapes and pairs of one solver (see the module docstring). ``arrays(margin)``: the
    task bundle's collision part; :meth:`set_obstacles` replaces the obstacles; :meth:`distances`
    and :meth:`placed_shapes` answer the solver's collision queries."""

    def __init__(
        self,
        robot,
        tree,
        rest: np.ndarray,
        self_collision: bool,
        srdf=None,
        obstacles: Sequence[Obstacle] = (),
    ):
        self.tree = tree
        self.self_collision = bool(self_collision)
        model, boxes, hulls = _link_geometry(robot, self.self_collision)
        self._place_links(robot, model, boxes, hulls)
        self._moving = [self._moving_joints(int(row[contacts.FRAME])) for row in self.link_rows]
        self.self_pairs = np.zeros((0, 2), dtype=np.int64)
        if self.self_collision and len(self.link_owners):
            self.self_pairs = self._enabled_pairs(robot, srdf, model)
            self._leave_out_overlapping(rest)
        self.set_obstacles(obstacles)

    def _place_links(self, robot, model, boxes, hulls) -> None:
        """The links' shapes fixed to the tree's frames: ``link_rows``, each row's link
        (``link_owners``), each owner's hull in its frame (``link_hulls``)."""
        held = robot.full_tree
        held_poses = held.link_poses(np.clip(held.neutral, held.lower, held.upper))
        rows, row_owner, owner_links, self.link_hulls = [], [], [], []
        for link in dict.fromkeys(model.link_names):
            anchor = self._anchor(robot, link)
            if anchor is None:
                continue
            frame, anchor_link = anchor
            try:
                relative = np.linalg.inv(held.pose_of(held_poses, anchor_link)) @ held.pose_of(
                    held_poses, link
                )
            except IKNodeError:  # behind a joint that cannot be used: never placed
                continue
            offset = self.tree.link_location(anchor_link)[1] @ relative  # T_frame_link
            for shape_rows, (vertices, pad) in self._owners_of(
                robot, link, frame, offset, model, boxes, hulls
            ):
                self.link_hulls.append((vertices @ offset[:3, :3].T + offset[:3, 3], pad))
                rows.extend(shape_rows)
                row_owner.extend([len(owner_links)] * len(shape_rows))
                owner_links.append(link)
        self.link_rows = np.array(rows, dtype=float).reshape(-1, contacts.SHAPE_COLUMNS)
        self.link_owners = tuple(owner_links[owner] for owner in row_owner)
        self._row_owner = np.array(row_owner, dtype=np.int64)
        self._owner_links = tuple(owner_links)

    def _owners_of(self, robot, link: str, frame: int, offset: np.ndarray, model, boxes, hulls) -> list:
        """The owners ``link`` is checked as, each ``(shape rows, (hull vertices, padding))``,
        fixed to pose index ``frame`` at ``offset`` (``T_frame_link``): a static concave link's
        convex pieces, a static link's box when it fits tightly, else the link's capsules."""
        shapes = model.shapes_of(link)
        static = self.self_collision and not self._moving_joints(frame)
        pieces = link_pieces(robot, link) if static else []
        if len(pieces) > 1:  # a concave static link: its convex pieces, each its own owner
            owners = []
            for piece in pieces:
                a, b, radius, volume = piece.capsule
                box_pose, size = piece.box
                if np.prod(size) < volume:
                    placed = offset @ box_pose
                    row = _shape_row(frame, contacts.BOX, 0.0, placed[:3, 3], size / 2.0, placed[:3, :3])
                else:
                    ends = [offset[:3, :3] @ point + offset[:3, 3] for point in (a, b)]
                    row = _shape_row(frame, contacts.SWEPT, radius, *ends)
                owners.append(([row], (piece.vertices, piece.pad)))
            return owners
        if link in boxes and static:
            box_pose, size = boxes[link]
            volume = np.prod(size)  # a static link: its box when that fits tightly and better
            if (
                volume < model.volume[shapes].sum()
                and volume <= BOX_FIT * model.geometry_volume[shapes].sum()
            ):
                placed = offset @ box_pose
                row = _shape_row(frame, contacts.BOX, 0.0, placed[:3, 3], size / 2.0, placed[:3, :3])
                return [([row], hulls[link])]
        shape_rows = []
        for index in shapes:
            a = offset[:3, :3] @ model.point_a[index] + offset[:3, 3]
            b = offset[:3, :3] @ model.point_b[index] + offset[:3, 3]
            shape_rows.append(_shape_row(frame, contacts.SWEPT, model.radius[index], a, b))
        return [(shape_rows, hulls[link])]

    def _enabled_pairs(self, robot, srdf, model) -> np.ndarray:
        """The self pairs (K, 2) of shapes: those of the link pairs the SRDF (or the computed
        pairs) leaves enabled that a joint of the solve moves apart, a box second."""
        enabled = set(collision_pairs(robot, srdf, model))
        shapes_of: dict[str, list[int]] = {}
        for shape, link in enumerate(self.link_owners):
            shapes_of.setdefault(link, []).append(shape)
        boxed = [row[contacts.KIND] == contacts.BOX for row in self.link_rows]
        pairs = [
            (j, i) if boxed[i] else (i, j)  # (a box second: the kernels' order)
            for link1, link2 in sorted(enabled)
            for i, j in itertools.product(shapes_of.get(link1, ()), shapes_of.get(link2, ()))
            if self._moving[i] != self._moving[j]
        ]
        return np.array(pairs, dtype=np.int64).reshape(-1, 2)

    def _leave_out_overlapping(self, rest: np.ndarray) -> None:
        """Drop the self pairs of links whose shapes overlap at ``rest`` (warned about, naming the
        links): the approximation cannot tell them from a collision there."""
        self.set_obstacles(())
        distances = self._group_distances(rest, 0.0)
        overlapping = [tuple(self.groups[g, :2]) for g in np.flatnonzero(distances < 0.0)]
        if not overlapping:
            return
        owner_of = self._row_owners()
        dropped = {(int(a), int(b)) for a, b in overlapping}
        keep = [(owner_of[i], owner_of[j]) not in dropped for i, j in self.self_pairs]
        self.self_pairs = np.ascontiguousarray(self.self_pairs[np.array(keep, dtype=bool)])
        names = sorted({tuple(sorted((self.owners[a], self.owners[b]))) for a, b in dropped})
        warnings.warn(
            "self-collision: the shapes of these link pairs overlap at the rest posture (capsules and hulls "
            "are larger than links), so they cannot be checked and are left out (give an SRDF disabling "
            f"them to silence this): {', '.join(f'{a} / {b}' for a, b in names)}",
            stacklevel=3,
        )

    def _anchor(self, robot, link: str) -> tuple[int, str] | None:
        """(pose index, link of the tree) carrying ``link``; None when unreachable."""
        try:
            return self.tree.link_location(link)[0], link
        except IKNodeError:
            pass
        try:
            path = robot.path(self.tree.base_link, link)
        except IKNodeError:
            return None
        anchor_link = self.tree.base_link
        for joint, upward in path:
            reached = joint.parent if upward else joint.child
            if reached in self.tree.link_names:
                anchor_link = reached
        return self.tree.link_location(anchor_link)[0], anchor_link

    def _moving_joints(self, frame: int) -> frozenset:
        """The pose indices of the moving joints between the base and pose index ``frame``."""
        moving = set()
        while frame != 0:
            k = frame - 1
            if self.tree.frame_links[k, spatial.JOINT_TYPE] != spatial.FIXED:
                moving.add(frame)
            frame = int(self.tree.frame_links[k, spatial.PARENT])
        return frozenset(moving)

    def set_obstacles(self, obstacles: Sequence[Obstacle]) -> None:
        """Replace the obstacles (:class:`~ik_node.collision.obstacles.Obstacle`, base frame)."""
        obstacles = tuple(obstacles or ())
        for index, obstacle in enumerate(obstacles):
            if not isinstance(obstacle, Obstacle):
                raise IKNodeError(
                    f"obstacles[{index}] must be an ik_node.Obstacle (Obstacle.sphere/box/capsule/cylinder), "
                    f"got {type(obstacle).__name__}"
                )
        self.obstacles = obstacles
        count = len(self.link_rows)
        obstacle_rows = [obstacle_row(obstacle) for obstacle in obstacles]
        self.shapes = np.ascontiguousarray(
            np.vstack([self.link_rows] + obstacle_rows) if obstacle_rows else self.link_rows, dtype=float
        )
        moved = [shape for shape in range(count) if self._moving[shape]]
        obstacle_pairs = [(shape, count + k) for k in range(len(obstacles)) for shape in moved]
        pairs = np.vstack([self.self_pairs, np.array(obstacle_pairs, dtype=np.int64).reshape(-1, 2)])
        self.owners = self._owner_links + tuple(
            obstacle.name or f"obstacle {k}" for k, obstacle in enumerate(obstacles)
        )
        # owners: a link's (or a link piece's) shapes are consecutive rows; each obstacle its own
        starts = [
            shape
            for shape in range(count)
            if shape == 0 or self._row_owner[shape] != self._row_owner[shape - 1]
        ]
        bounds = starts + list(range(count, len(self.shapes) + 1))
        hulls = self.link_hulls + [obstacle_hull(obstacle) for obstacle in obstacles]
        hull_bounds = np.cumsum([0] + [len(vertices) for vertices, _ in hulls])
        self.hull_points = np.ascontiguousarray(
            np.concatenate([vertices for vertices, _ in hulls]) if hulls else np.zeros((0, 3)), dtype=float
        )
        self.hull_pads = np.array([pad for _, pad in hulls], dtype=float).reshape(len(hulls))
        self.owner_ranges = np.ascontiguousarray(
            np.stack([bounds[:-1], bounds[1:], hull_bounds[:-1], hull_bounds[1:]], axis=1).reshape(-1, 4),
            dtype=np.int64,
        )
        owner_of = self._row_owners()
        # pairs sorted by their owners' pair: a group per pair of owners
        keys = owner_of[pairs[:, 0]] * (len(self.owner_ranges) + 1) + owner_of[pairs[:, 1]]
        order = np.argsort(keys, kind="stable")
        self.pairs = np.ascontiguousarray(pairs[order], dtype=np.int64)
        keys = keys[order]
        group_starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, int)
        group_ends = np.r_[group_starts[1:], len(keys)] if len(keys) else np.zeros(0, int)
        self.groups = np.ascontiguousarray(
            np.stack(
                [
                    owner_of[self.pairs[group_starts, 0]],
                    owner_of[self.pairs[group_starts, 1]],
                    group_starts,
                    group_ends,
                ],
                axis=1,
            ).reshape(-1, 4),
            dtype=np.int64,
        )

    def arrays(self, margin: float) -> tuple:
        """The task bundle's collision part: (shapes, pairs, owners, groups, margin [m], hull
        points, hull paddings)."""
        return bundles.collision_bundle(
            shapes=self.shapes,
            pairs=self.pairs,
            owners=self.owner_ranges,
            groups=self.groups,
            margin=float(margin),
            hull_points=self.hull_points,
            hull_pads=self.hull_pads,
        )

    def distances(self, q: np.ndarray, margin: float) -> dict:
        """``{(owner_a, owner_b): distance [m]}`` of every checked pair of owners at configuration
        ``q`` (nq) with ``margin`` [m] (:meth:`IKSolver.collision_distances
        <ik_node.solver.IKSolver.collision_distances>`)."""
        found: dict = {}
        for (a, b, _, _), distance in zip(self.groups, self._group_distances(q, margin)):
            key = (self.owners[a], self.owners[b])
            found[key] = min(found.get(key, math.inf), float(distance))
        return found

    def _group_distances(self, q: np.ndarray, margin: float) -> np.ndarray:
        """The distance [m] of each group (pair of owners) at configuration ``q`` (nq)."""
        distances = np.empty(len(self.groups))
        contacts.group_distances(self.tree.link_poses(q), self.arrays(margin), distances)
        return distances

    def placed_shapes(self, q: np.ndarray) -> list[tuple]:
        """The checked shapes placed at configuration ``q`` (nq) in the base frame
        (:meth:`IKSolver.collision_shapes <ik_node.solver.IKSolver.collision_shapes>`)."""
        poses = self.tree.link_poses(q)
        shapes = []
        for owner, row in zip(self._row_owners(), self.shapes):
            owner = self.owners[owner]
            pose = poses[int(row[contacts.FRAME])]
            a, b = row[contacts.A : contacts.A + 3], row[contacts.B : contacts.B + 3]
            if row[contacts.KIND] == contacts.BOX:
                box = np.eye(4)
                box[:3, :3] = pose[:3, :3] @ row[contacts.ROTATION : contacts.ROTATION + 9].reshape(3, 3)
                box[:3, 3] = pose[:3, :3] @ a + pose[:3, 3]
                shapes.append((owner, "box", 0.0, box, 2.0 * b))
            else:
                placed = [pose[:3, :3] @ point + pose[:3, 3] for point in (a, b)]
                shapes.append((owner, "capsule", float(row[contacts.RADIUS]), *placed))
        return shapes

    def _row_owners(self) -> np.ndarray:
        """The owner (index into :attr:`owners`) of each row of :attr:`shapes` (a link's or a
        link piece's shapes are consecutive rows)."""
        return np.repeat(np.arange(len(self.owner_ranges)), np.diff(self.owner_ranges[:, :2], axis=1)[:, 0])
