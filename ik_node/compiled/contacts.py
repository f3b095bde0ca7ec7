"""Collision constraints inside the solve: distances between the task's collision shapes (the links'
capsules and the obstacles), their witness points, and the constraint rows of the step.

Shapes (the task bundle's ``shapes``, (S, ``SHAPE_COLUMNS``)), each fixed to pose index
``FRAME`` (0: the base, for obstacles):

* ``SWEPT``: the points within ``RADIUS`` [m] of the segment ``A``-``B`` (a sphere when
  ``A = B``, else a capsule), ``A`` and ``B`` in the frame's axes [m];
* ``BOX``: centre ``A`` [m], half extents ``B`` [m] along the box's axes, whose rotation in the
  frame is ``ROTATION`` (row-major).

``pairs`` (P, 2): shape indices to keep apart; a box is always second (the solver never pairs two
boxes). ``margin`` [m]: pairs closer than this are *near*.

Distance of a pair (negative when the shapes overlap, by the depth along the witness normal):
two swept shapes, the distance between the segments' closest points (Ericson, *Real-Time
Collision Detection* 5.1.9) less both radii; a swept shape and a box, the smallest signed
distance from the segment to the box (convex along the segment: a golden-section search over
the segment parameter) less the radius. The normal ``n`` points from the second shape to the
first; the witness points are the closest points on the two surfaces.

The constraint row of a near pair is ``n^T (J_a(p_a) - J_b(p_b))`` (the linear rows of the
mixed, base-aligned Jacobians at the witness points ``p_a``, ``p_b`` of the shapes' frames): the
rate at which the step ``dq`` opens the pair's distance. :func:`~ik_node.compiled.steps.
method_step` holds a near pair whose predicted distance ``d + row dq`` would fall below the
margin at the margin (the row solved first, with error ``margin - d``), exactly as a joint limit
pins a joint.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import kernel
from .bundles import IN_BASE_AXES
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
#: Golden-section iterations of the segment-box distance (the bracket shrinks to 0.618^40 ~
#: 4e-9 of the segment).
GOLDEN_ITERATIONS = 40
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@kernel
def _place(pose, shape, column, out):
    """``out`` (3,) = the point ``shape[column:column + 3]`` of a frame at ``pose``, in the base
    frame."""
    x, y, z = shape[column], shape[column + 1], shape[column + 2]
    for i in range(3):
        out[i] = pose[i, 0] * x + pose[i, 1] * y + pose[i, 2] * z + pose[i, 3]


@kernel
def _segment_parameters(p1, q1, p2, q2):
    """Parameters ``(s, t)`` in [0, 1] of the closest points ``p1 + s (q1 - p1)`` and
    ``p2 + t (q2 - p2)`` of two segments (either may be a point; Ericson 5.1.9)."""
    eps = 1e-15
    d1x, d1y, d1z = q1[0] - p1[0], q1[1] - p1[1], q1[2] - p1[2]
    d2x, d2y, d2z = q2[0] - p2[0], q2[1] - p2[1], q2[2] - p2[2]
    rx, ry, rz = p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2]
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    if a <= eps and e <= eps:
        return 0.0, 0.0
    if a <= eps:
        return 0.0, min(max(f / e, 0.0), 1.0)
    c = d1x * rx + d1y * ry + d1z * rz
    if e <= eps:
        return min(max(-c / a, 0.0), 1.0), 0.0
    b = d1x * d2x + d1y * d2y + d1z * d2z
    denominator = a * e - b * b
    s = min(max((b * f - c * e) / denominator, 0.0), 1.0) if denominator > eps else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        return min(max(-c / a, 0.0), 1.0), 0.0
    if t > 1.0:
        return min(max((b - c) / a, 0.0), 1.0), 1.0
    return s, t


@kernel
def _box_signed_distance(point, centre, rotation, half, closest, normal):
    """Signed distance [m] of ``point`` from a box (``centre``, ``rotation`` (3, 3) of its axes,
    ``half`` extents), negative inside; ``closest`` receives the nearest point of the box's
    surface and ``normal`` the unit outward direction from it toward the point (inside: the
    nearest face's normal)."""
    local = np.empty(3)
    for k in range(3):
        local[k] = (
            rotation[0, k] * (point[0] - centre[0])
            + rotation[1, k] * (point[1] - centre[1])
            + rotation[2, k] * (point[2] - centre[2])
        )
    outside, deepest, axis = 0.0, -math.inf, 0
    for k in range(3):
        gap = abs(local[k]) - half[k]
        if gap > 0.0:
            outside += gap * gap
        if gap > deepest:
            deepest, axis = gap, k
    if outside > 0.0:
        distance = math.sqrt(outside)
        clamped = np.empty(3)
        for k in range(3):
            clamped[k] = min(max(local[k], -half[k]), half[k])
        for i in range(3):
            closest[i] = centre[i] + (
                rotation[i, 0] * clamped[0] + rotation[i, 1] * clamped[1] + rotation[i, 2] * clamped[2]
            )
            normal[i] = (point[i] - closest[i]) / distance
        return distance
    sign = 1.0 if local[axis] >= 0.0 else -1.0
    for i in range(3):
        normal[i] = sign * rotation[i, axis]
        closest[i] = point[i] - deepest * normal[i]
    return deepest


@kernel
def _swept_box(a, b, centre, rotation, half, closest_a, closest_b, normal):
    """The smallest signed distance from segment ``a``-``b`` to a box (signed distance to a convex
    set is convex along a segment: golden-section search); the segment's point into
    ``closest_a``, the box surface's into ``closest_b``, the outward normal into ``normal``."""
    point = np.empty(3)
    low, high = 0.0, 1.0
    length2 = (b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2 + (b[2] - a[2]) ** 2
    if length2 > 0.0:
        inner_low, inner_high = high - _GOLDEN * (high - low), low + _GOLDEN * (high - low)
        for i in range(3):
            point[i] = a[i] + inner_low * (b[i] - a[i])
        value_low = _box_signed_distance(point, centre, rotation, half, closest_b, normal)
        for i in range(3):
            point[i] = a[i] + inner_high * (b[i] - a[i])
        value_high = _box_signed_distance(point, centre, rotation, half, closest_b, normal)
        for _ in range(GOLDEN_ITERATIONS):
            if value_low <= value_high:
                high, inner_high, value_high = inner_high, inner_low, value_low
                inner_low = high - _GOLDEN * (high - low)
                for i in range(3):
                    point[i] = a[i] + inner_low * (b[i] - a[i])
                value_low = _box_signed_distance(point, centre, rotation, half, closest_b, normal)
            else:
                low, inner_low, value_low = inner_low, inner_high, value_high
                inner_high = low + _GOLDEN * (high - low)
                for i in range(3):
                    point[i] = a[i] + inner_high * (b[i] - a[i])
                value_high = _box_signed_distance(point, centre, rotation, half, closest_b, normal)
        # the ends too: the minimum of a convex function on [0, 1] may sit at either
        best_t, best = 0.5 * (low + high), math.inf
        for t in (0.0, 0.5 * (low + high), 1.0):
            for i in range(3):
                point[i] = a[i] + t * (b[i] - a[i])
            value = _box_signed_distance(point, centre, rotation, half, closest_b, normal)
            if value < best:
                best, best_t = value, t
        low = best_t
    for i in range(3):
        closest_a[i] = a[i] + low * (b[i] - a[i])
    return _box_signed_distance(closest_a, centre, rotation, half, closest_b, normal)


@kernel
def pair_distance(poses, shapes, first, second, record):
    """Distance [m] of shapes ``first`` (swept) and ``second`` (swept or box) at the frames'
    ``poses`` (F, 4, 4), with its normal and witness points in ``record`` (``CONTACT_COLUMNS``,
    see the module docstring); returns the distance."""
    shape_a, shape_b = shapes[first], shapes[second]
    pose_a, pose_b = poses[int(shape_a[FRAME])], poses[int(shape_b[FRAME])]
    a0, a1, b0, b1 = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    closest_a, closest_b, normal = np.empty(3), np.empty(3), np.empty(3)
    _place(pose_a, shape_a, A, a0)
    _place(pose_a, shape_a, B, a1)
    radius_a = shape_a[RADIUS]
    if shape_b[KIND] == BOX:
        _place(pose_b, shape_b, A, b0)
        rotation = np.empty((3, 3))
        for i in range(3):
            for j in range(3):
                rotation[i, j] = (
                    pose_b[i, 0] * shape_b[ROTATION + j]
                    + pose_b[i, 1] * shape_b[ROTATION + 3 + j]
                    + pose_b[i, 2] * shape_b[ROTATION + 6 + j]
                )
        for k in range(3):
            b1[k] = shape_b[B + k]
        gap = _swept_box(a0, a1, b0, rotation, b1, closest_a, closest_b, normal)
        radius_b = 0.0
    else:
        _place(pose_b, shape_b, A, b0)
        _place(pose_b, shape_b, B, b1)
        s, t = _segment_parameters(a0, a1, b0, b1)
        for i in range(3):
            closest_a[i] = a0[i] + s * (a1[i] - a0[i])
            closest_b[i] = b0[i] + t * (b1[i] - b0[i])
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


@kernel
def contact_workspace(task):
    """What :func:`contacts` fills per configuration: (summary (2,): the near pairs' count and the
    penetration [m], near pairs (K,) and their records (K, ``CONTACT_COLUMNS``)), K the pairs
    kept at most."""
    kept = min(MAX_CONTACT_ROWS, task[7].shape[0])
    return np.zeros(2), np.empty(kept, dtype=np.int64), np.empty((kept, CONTACT_COLUMNS))


@kernel
def contacts(task, poses, contact):
    """Every pair's distance at ``poses``: the penetration (the sum of ``max(0, -d)`` [m]) into
    ``contact[0][1]``, and the pairs nearer than the margin, closest first (``MAX_CONTACT_ROWS``
    of them at most), into ``contact``: their count ``contact[0][0]``, indices and records."""
    shapes, pairs, margin = task[6], task[7], task[8]
    summary, near, records = contact
    kept = near.shape[0]
    count, penetration = 0, 0.0
    record = np.empty(CONTACT_COLUMNS)
    for p in range(pairs.shape[0]):
        distance = pair_distance(poses, shapes, pairs[p, 0], pairs[p, 1], record)
        if distance < 0.0:
            penetration -= distance
        if distance >= margin or (count == kept and distance >= records[kept - 1, DISTANCE]):
            continue
        slot = min(count, kept - 1)  # the next free slot, or the farthest kept (dropped)
        while slot > 0 and records[slot - 1, DISTANCE] > distance:
            near[slot] = near[slot - 1]
            for c in range(CONTACT_COLUMNS):
                records[slot, c] = records[slot - 1, c]
            slot -= 1
        near[slot] = p
        for c in range(CONTACT_COLUMNS):
            records[slot, c] = record[c]
        count = min(count + 1, kept)
    summary[0], summary[1] = count, penetration
    return penetration


@kernel
def contact_rows(tree, task, poses, contact, blocks, rows):
    """The constraint row (nv,) of each near pair of ``contact`` (see the module docstring) into
    ``rows[:count]``; ``blocks`` (2, 6, nv) is work space."""
    frames, frame_links = tree[0], tree[1]
    shapes, pairs = task[6], task[7]
    count = int(contact[0][0])
    near, records = contact[1], contact[2]
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
