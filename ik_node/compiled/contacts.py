"""Collision constraints inside the solve: distances between the task's collision shapes (the links'
capsules and the obstacles), their witness points, and the constraint rows of the step.

The ``collision`` bundle is ``(shapes, pairs, owners, groups, margin, hull_points, hull_pads)``,
or None for a problem without collision checks: a feature switch (see :mod:`.bundles`), so that
such a problem compiles none of this module's kernels nor :mod:`.gjk`'s.
Shapes (``shapes``, (S, ``SHAPE_COLUMNS``)), each fixed to pose index ``FRAME`` (0: the base,
for obstacles):

* ``SWEPT``: the points within ``RADIUS`` [m] of the segment ``A``-``B`` (a sphere when
  ``A = B``, else a capsule), ``A`` and ``B`` in the frame's axes [m];
* ``BOX``: centre ``A`` [m], half extents ``B`` [m] along the box's axes, whose rotation in the
  frame is ``ROTATION`` (row-major).

``pairs`` (P, 2): shape indices to keep apart; a box is always second (the solver never pairs two
boxes). ``owners`` (O, 4): each owner's (a link's or an obstacle's) shapes ``[start, end)`` and its
convex hull's points ``hull_points[start:end]`` (in its shapes' frame), grown by ``hull_pads[o]``;
``groups`` (G, 4): two owners and their pairs ``pairs[start:end]`` (the broad phase: a group is
passed over when its owners' bounding spheres are ``margin`` or more apart, then each pair when its
shapes' are). ``margin`` [m]: pairs closer than this are *near*.

A group whose shapes come nearer than the margin is measured again between the owners' hulls
(:mod:`.gjk`); the geometry lies in both the shapes and the hull, so its distance is at least the
larger of the two: when the hulls are apart and farther than the shapes, the group counts as one
near pair at the hulls' distance (witness points on the hulls), and as collision-free.

Distance of a pair (negative when the shapes overlap, by the depth along the witness normal):
two swept shapes, the distance between the segments' closest points (Ericson, *Real-Time
Collision Detection* 5.1.9) less both radii; a swept shape and a box, the smallest signed
distance from the segment to the box (convex along the segment: a golden-section search over
the segment parameter) less the radius. The normal ``n`` points from the second shape to the
first; the witness points are the closest points on the two surfaces.

The constraint row of a near pair is ``n^T (J_a(p_a) - J_b(p_b))`` (the linear rows of the
mixed, base-aligned Jacobians at the witness points ``p_a``, ``p_b`` of the shapes' frames): the
rate at which the step ``dq`` opens the pair's distance. :func:`~ik_node.compiled.steps.
method_step` stacks it above the task when the step would close the pair by more than half its
distance (a velocity damper; see :func:`~ik_node.compiled.steps.constrained_step`), as a joint
limit pins a joint.
"""

from __future__ import annotations

import math

import numpy as np

from .bundles import (
    CONTACT_BUFFER,
    FRAME_LINKS,
    FRAMES,
    GROUPS,
    HULL_PADS,
    HULL_POINTS,
    IN_BASE_AXES,
    NEAR_COUNT,
    NEAR_PAIRS,
    OWNERS,
    PAIRS,
    PENETRATION,
    SHAPES,
)
from .gjk import GJK_WORK, gjk_workspace, hull_distance
from .jit import allocating_kernel, inline_kernel, inner_allocating_kernel, inner_kernel, kernel
from .shapes import segment_box_gap, segment_parameters, swept_box_distance
from .spatial import point_jacobian

#: Columns of ``shapes``.
FRAME, KIND, RADIUS, A, B, ROTATION = 0, 1, 2, 3, 6, 9
SHAPE_COLUMNS = 18
#: Shape kinds.
SWEPT, BOX = 0, 1
#: Columns of a near pair's record: its distance [m], the normal (3), the witness points on the
#: first and second shapes (3 each) [m], base frame.
DISTANCE, NORMAL, POINT_A, POINT_B = 0, 1, 4, 7
CONTACT_COLUMNS = 10
#: Near pairs kept per configuration (the closest ones): constraint rows of a step at most.
MAX_CONTACT_ROWS = 8
#: Slots of :func:`_contact_views`' views.
RECORDS, RECORD, PLACED, RADII, SCRATCH, SPHERES, GJK_SPACE, DIRECTIONS = range(8)
#: Where the near pairs' records start in the buffer of :func:`contact_workspace` (after the
#: count and the penetration).
RECORDS_START = 2


@kernel
def _place(pose, shape, column, out):
    """``out`` (3,) = the point ``shape[column:column + 3]`` of a frame at ``pose``, in the base
    frame."""
    x, y, z = shape[column], shape[column + 1], shape[column + 2]
    for i in range(3):
        out[i] = pose[i, 0] * x + pose[i, 1] * y + pose[i, 2] * z + pose[i, 3]


@kernel
def _bounds(pose, shape, out):
    """The shape at ``pose`` in the base frame into ``out`` (7, 3): a swept shape's end points
    (rows 0-1), or a box's centre, its rotation's rows and its half extents (rows 0-4); row 6 the
    centre of a sphere containing it, whose radius [m] is returned."""
    if shape[KIND] == BOX:
        _place(pose, shape, A, out[0])
        for i in range(3):
            for j in range(3):
                out[1 + i, j] = (
                    pose[i, 0] * shape[ROTATION + j]
                    + pose[i, 1] * shape[ROTATION + 3 + j]
                    + pose[i, 2] * shape[ROTATION + 6 + j]
                )
            out[4, i] = shape[B + i]
            out[6, i] = out[0, i]
        return math.sqrt(shape[B] ** 2 + shape[B + 1] ** 2 + shape[B + 2] ** 2)
    _place(pose, shape, A, out[0])
    _place(pose, shape, B, out[1])
    half = 0.0
    for i in range(3):
        out[6, i] = 0.5 * (out[0, i] + out[1, i])
        half += (out[1, i] - out[0, i]) ** 2
    return 0.5 * math.sqrt(half) + shape[RADIUS]


@allocating_kernel
def pair_distance(poses, shapes, first, second, record):
    """Distance [m] of shapes ``first`` (swept) and ``second`` (swept or box) at the frames'
    ``poses`` (F, 4, 4), with its normal and witness points in ``record`` (``CONTACT_COLUMNS``,
    see the module docstring); returns the distance."""
    placed, radii = np.empty((2, 7, 3)), np.empty(2)
    radii[0] = _bounds(poses[int(shapes[first, FRAME])], shapes[first], placed[0])
    radii[1] = _bounds(poses[int(shapes[second, FRAME])], shapes[second], placed[1])
    return _placed_distance(placed[0], radii[0], placed[1], radii[1], shapes[first], shapes[second],
                            math.inf, np.empty((3, 3)), record)  # fmt: skip


@inner_kernel
def _placed_distance(placed_a, bound_a, placed_b, bound_b, shape_a, shape_b, far, scratch, record):
    """The distance of two shapes placed by :func:`_bounds` (as :func:`pair_distance`), with
    work space ``scratch`` (3, 3); when their bounding spheres are ``far`` [m] or more apart, or
    a box's separating axes (:func:`~.shapes.segment_box_gap`) put them that far, only that lower
    bound of the distance is returned (``record`` untouched)."""
    centres = 0.0
    for i in range(3):
        centres += (placed_a[6, i] - placed_b[6, i]) ** 2
    bound = math.sqrt(centres) - bound_a - bound_b
    if bound >= far:
        return bound
    closest_a, closest_b, normal = scratch[0], scratch[1], scratch[2]
    radius_a = shape_a[RADIUS]
    if shape_b[KIND] == BOX:
        bound = segment_box_gap(placed_a, placed_b) - radius_a
        if bound >= far:
            return bound
        gap = swept_box_distance(placed_a, placed_b, closest_a, closest_b, normal)
        radius_b = 0.0
    else:
        s, t = segment_parameters(placed_a[0], placed_a[1], placed_b[0], placed_b[1])
        for i in range(3):
            closest_a[i] = placed_a[0, i] + s * (placed_a[1, i] - placed_a[0, i])
            closest_b[i] = placed_b[0, i] + t * (placed_b[1, i] - placed_b[0, i])
            normal[i] = closest_a[i] - closest_b[i]
        gap = math.sqrt(normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2])
        if gap > 1e-12:
            for i in range(3):
                normal[i] /= gap
        else:  # the segments meet: any direction is a normal
            normal[0], normal[1], normal[2] = 0.0, 0.0, 1.0
        radius_b = shape_b[RADIUS]
    distance = gap - radius_a - radius_b
    record[DISTANCE] = distance
    for i in range(3):
        record[NORMAL + i] = normal[i]
        record[POINT_A + i] = closest_a[i] - radius_a * normal[i]
        record[POINT_B + i] = closest_b[i] + radius_b * normal[i]
    return distance


@inner_allocating_kernel
def contact_workspace(collision):
    """What :func:`contacts` fills per configuration, as two arrays (few allocations: one
    workspace per attempt; views into them come from :func:`_contact_views`): a float buffer
    (the near pairs' count and the penetration [m] first, then the records and work space) and
    the near pairs' indices (K,), K the pairs kept at most (empty without pairs; the same two
    arrays, count and penetration 0, for ``collision=None``: a problem without collision checks)."""
    if collision is None:
        return np.zeros(2), np.empty(0, dtype=np.int64)  # (CONTACT_BUFFER, NEAR_PAIRS)
    kept = min(MAX_CONTACT_ROWS, collision[PAIRS].shape[0])
    shapes = collision[SHAPES].shape[0] if kept > 0 else 0
    owners = collision[OWNERS].shape[0] if kept > 0 else 0
    groups = collision[GROUPS].shape[0] if kept > 0 else 0
    size = 2 + kept * CONTACT_COLUMNS + CONTACT_COLUMNS + shapes * 22 + 18 + owners * 4
    size += GJK_WORK + groups * 3
    return np.zeros(size), np.empty(kept, dtype=np.int64)  # (CONTACT_BUFFER, NEAR_PAIRS)


@inline_kernel
def _contact_views(collision, contact):
    """Views of :func:`contact_workspace`'s buffer: (records (K, ``CONTACT_COLUMNS``), a record,
    the shapes placed (S, 7, 3) and their bounding radii (S,), work space (6, 3), the owners'
    bounding spheres (O, 4): centre, radius; GJK's work space, and each group's last direction
    between its hulls (G, 3), zero until measured: GJK's warm start): slots ``RECORDS`` ...
    ``DIRECTIONS``."""
    buffer = contact[CONTACT_BUFFER]
    kept, shapes = contact[NEAR_PAIRS].shape[0], collision[SHAPES].shape[0]
    owners, groups = collision[OWNERS].shape[0], collision[GROUPS].shape[0]
    at = RECORDS_START
    records = buffer[at : at + kept * CONTACT_COLUMNS].reshape((kept, CONTACT_COLUMNS))
    at += kept * CONTACT_COLUMNS
    record = buffer[at : at + CONTACT_COLUMNS]
    at += CONTACT_COLUMNS
    placed = buffer[at : at + shapes * 21].reshape((shapes, 7, 3))
    at += shapes * 21
    radii = buffer[at : at + shapes]
    at += shapes
    scratch = buffer[at : at + 18].reshape((6, 3))
    at += 18
    spheres = buffer[at : at + owners * 4].reshape((owners, 4))
    at += owners * 4
    gjk = buffer[at : at + GJK_WORK]
    at += GJK_WORK
    directions = buffer[at : at + groups * 3].reshape((groups, 3))
    return (records, record, placed, radii, scratch, spheres, gjk, directions)  # RECORDS ... DIRECTIONS


def near_records(contact) -> np.ndarray:
    """The near pairs' records (count, ``CONTACT_COLUMNS``) that :func:`contacts` left in
    :func:`contact_workspace`'s arrays, read from Python (a copy)."""
    buffer, kept = contact[CONTACT_BUFFER], contact[NEAR_PAIRS].shape[0]
    records = buffer[RECORDS_START : RECORDS_START + kept * CONTACT_COLUMNS].reshape((kept, CONTACT_COLUMNS))
    return records[: int(buffer[NEAR_COUNT])].copy()


@inner_kernel
def clear_contacts(collision, contact):
    """Clear the near pairs and the groups' GJK warm starts in :func:`contact_workspace` (at each
    attempt's start, so that an attempt's result never depends on the attempts or targets before
    it, and an attempt without the pairs (``collision=None``) sees no near pair)."""
    buffer = contact[CONTACT_BUFFER]
    buffer[NEAR_COUNT], buffer[PENETRATION] = 0.0, 0.0
    if collision is None:
        return
    if contact[NEAR_PAIRS].shape[0] == 0 or collision[PAIRS].shape[0] == 0:
        return
    directions = _contact_views(collision, contact)[DIRECTIONS]
    for group in range(directions.shape[0]):
        for i in range(3):
            directions[group, i] = 0.0


@inline_kernel
def contact_records(collision, contact):
    """The near pairs' records (K, ``CONTACT_COLUMNS``) in :func:`contact_workspace`."""
    return _contact_views(collision, contact)[RECORDS]


@inner_kernel
def _near_pair(p, pairs, shapes, placed, radii, margin, scratch, record):
    """:func:`_placed_distance` of pair ``p`` (a lower bound when it is ``margin`` or more)."""
    first, second = pairs[p, 0], pairs[p, 1]
    return _placed_distance(
        placed[first], radii[first], placed[second], radii[second], shapes[first], shapes[second], margin,
        scratch, record,
    )  # fmt: skip


@inner_kernel
def _keep_near(near, records, count, pair, record):
    """Insert ``record`` (of ``pair``) among the near ones, closest first, ``near.shape[0]`` kept
    at most (the farthest dropped); returns the new count."""
    kept = near.shape[0]
    distance = record[DISTANCE]
    if count == kept and distance >= records[kept - 1, DISTANCE]:
        return count
    slot = min(count, kept - 1)  # the next free slot, or the farthest kept (dropped)
    while slot > 0 and records[slot - 1, DISTANCE] > distance:
        near[slot] = near[slot - 1]
        for c in range(CONTACT_COLUMNS):
            records[slot, c] = records[slot - 1, c]
        slot -= 1
    near[slot] = pair
    for c in range(CONTACT_COLUMNS):
        records[slot, c] = record[c]
    return min(count + 1, kept)


@inner_kernel
def _group_distance(group, poses, collision, placed, radii, far, scratch, record, gjk, directions):
    """A group's distance [m] (a lower bound once it is ``far`` or more), the penetration of its
    shapes [m], and whether the hulls gave it (``record`` then holds their near pair's record):
    the least of its pairs' distances, or the owners' hulls' (grown by their paddings) where
    those are apart and farther (see the module docstring). ``gjk``: GJK's work space;
    ``directions[group]``: the direction between the hulls GJK last found (B toward A, base
    axes; zero: none yet, the centres' difference is used), updated."""
    shapes, pairs, owners, groups = collision[SHAPES], collision[PAIRS], collision[OWNERS], collision[GROUPS]
    hull_points, hull_pads = collision[HULL_POINTS], collision[HULL_PADS]
    a, b = groups[group, 0], groups[group, 1]
    least, depth = math.inf, 0.0
    for p in range(groups[group, 2], groups[group, 3]):
        distance = _near_pair(p, pairs, shapes, placed, radii, far, scratch, record)
        least = min(least, distance)
        if distance < 0.0:
            depth -= distance
    if least >= far or owners[a, 2] == owners[a, 3] or owners[b, 2] == owners[b, 3]:
        return least, depth, False
    witness_a, witness_b, guess = scratch[3], scratch[4], directions[group]
    if guess[0] == 0.0 and guess[1] == 0.0 and guess[2] == 0.0:
        for i in range(3):
            guess[i] = placed[owners[a, 0], 6, i] - placed[owners[b, 0], 6, i]
    pads = hull_pads[a] + hull_pads[b]
    gap = hull_distance(
        hull_points, owners[a, 2], owners[a, 3], poses[int(shapes[owners[a, 0], FRAME])],
        owners[b, 2], owners[b, 3], poses[int(shapes[owners[b, 0], FRAME])], guess, far + pads,
        witness_a, witness_b, gjk,
    )  # fmt: skip
    distance = gap - pads
    if distance >= far:  # (GJK stopped at a bound: apart by the margin at least, no witnesses)
        return distance, 0.0, True
    if not gap > 0.0 or distance <= 0.0 or distance <= least:
        return least, depth, False
    record[DISTANCE] = distance
    for i in range(3):
        normal = (witness_a[i] - witness_b[i]) / gap
        record[NORMAL + i] = normal
        record[POINT_A + i] = witness_a[i] - hull_pads[a] * normal
        record[POINT_B + i] = witness_b[i] + hull_pads[b] * normal
    return distance, 0.0, True


@allocating_kernel
def group_distances(poses, collision, out):
    """Each group's distance [m] at the frames' ``poses`` into ``out`` (G,) (see
    :func:`_group_distance`): for callers (the solver's pairs at the rest posture, clearance)."""
    shapes, groups = collision[SHAPES], collision[GROUPS]
    placed, radii = np.empty((shapes.shape[0], 7, 3)), np.empty(shapes.shape[0])
    for shape in range(shapes.shape[0]):
        radii[shape] = _bounds(poses[int(shapes[shape, FRAME])], shapes[shape], placed[shape])
    scratch, record = np.empty((6, 3)), np.empty(CONTACT_COLUMNS)
    gjk, directions = gjk_workspace(), np.zeros((groups.shape[0], 3))
    for group in range(groups.shape[0]):
        distance, _, _ = _group_distance(
            group, poses, collision, placed, radii, math.inf, scratch, record, gjk, directions
        )
        out[group] = distance


@kernel
def contacts(collision, margin, poses, contact):
    """Every pair's distance at ``poses``: the penetration (the sum of ``max(0, -d)`` [m]) into
    the buffer's ``PENETRATION``, and the pairs nearer than ``margin`` [m] (the bundle's, or 0:
    the same penetration, measuring less, as no pair is near unless it overlaps and GJK stops
    once the hulls are apart), closest first (``MAX_CONTACT_ROWS`` of them at most), into
    ``contact`` (:func:`contact_workspace`): their count (the buffer's ``NEAR_COUNT``), indices
    (``NEAR_PAIRS``) and records. Returns the penetration; without pairs, 0 at no cost."""
    shapes, pairs, owners, groups = collision[SHAPES], collision[PAIRS], collision[OWNERS], collision[GROUPS]
    buffer, near = contact[CONTACT_BUFFER], contact[NEAR_PAIRS]
    buffer[NEAR_COUNT], buffer[PENETRATION] = 0.0, 0.0
    if pairs.shape[0] == 0:
        return 0.0
    views = _contact_views(collision, contact)
    records, record, placed, radii = views[RECORDS], views[RECORD], views[PLACED], views[RADII]
    scratch, spheres, gjk, directions = views[SCRATCH], views[SPHERES], views[GJK_SPACE], views[DIRECTIONS]
    count, penetration = 0, 0.0
    for shape in range(shapes.shape[0]):
        radii[shape] = _bounds(poses[int(shapes[shape, FRAME])], shapes[shape], placed[shape])
    for owner in range(owners.shape[0]):  # a sphere around the owner's shapes' spheres
        start, end = owners[owner, 0], owners[owner, 1]
        for i in range(3):
            value = 0.0
            for shape in range(start, end):
                value += placed[shape, 6, i]
            spheres[owner, i] = value / (end - start)
        reach = 0.0
        for shape in range(start, end):
            gap = 0.0
            for i in range(3):
                gap += (placed[shape, 6, i] - spheres[owner, i]) ** 2
            reach = max(reach, math.sqrt(gap) + radii[shape])
        spheres[owner, 3] = reach
    for group in range(groups.shape[0]):
        a, b = groups[group, 0], groups[group, 1]
        gap = 0.0
        for i in range(3):
            gap += (spheres[a, i] - spheres[b, i]) ** 2
        if math.sqrt(gap) - spheres[a, 3] - spheres[b, 3] >= margin:
            continue
        least, depth, on_hulls = _group_distance(
            group, poses, collision, placed, radii, margin, scratch, record, gjk, directions
        )
        if on_hulls:
            if least < margin:
                count = _keep_near(near, records, count, groups[group, 2], record)
            continue
        penetration += depth
        if least >= margin:
            continue
        for p in range(groups[group, 2], groups[group, 3]):
            if _near_pair(p, pairs, shapes, placed, radii, margin, scratch, record) < margin:
                count = _keep_near(near, records, count, p, record)
    buffer[NEAR_COUNT], buffer[PENETRATION] = count, penetration
    return penetration


@allocating_kernel
def contact_rows(tree, collision, poses, contact, blocks, rows):
    """The constraint row (nv,) of each near pair of ``contact`` (see the module docstring) into
    ``rows[:count]``; ``blocks`` (2, 6, nv) is work space."""
    frames, frame_links = tree[FRAMES], tree[FRAME_LINKS]
    shapes, pairs = collision[SHAPES], collision[PAIRS]
    count = int(contact[CONTACT_BUFFER][NEAR_COUNT])
    near, records = contact[NEAR_PAIRS], contact_records(collision, contact)
    point = np.zeros((4, 4))
    for i in range(4):
        point[i, i] = 1.0
    for c in range(count):
        pair = near[c]
        for side in range(2):
            column = POINT_A if side == 0 else POINT_B
            for i in range(3):
                point[i, 3] = records[c, column + i]
            frame = int(shapes[pairs[pair, side], FRAME])
            point_jacobian(frames, frame_links, poses, frame, point, IN_BASE_AXES, blocks[side])
        for j in range(rows.shape[1]):
            value = 0.0
            for i in range(3):
                value += records[c, NORMAL + i] * (blocks[0, i, j] - blocks[1, i, j])
            rows[c, j] = value
