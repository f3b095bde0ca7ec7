"""Distances between the primitive shapes of :mod:`.contacts`: segments (the axes of capsules and
spheres) and oriented boxes, in the base frame [m]."""

from __future__ import annotations

import math

from .jit import inner_kernel, kernel

#: Golden-section iterations of the segment-box distance (the bracket shrinks to 0.618^40 ~
#: 4e-9 of the segment).
GOLDEN_ITERATIONS = 40
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@inner_kernel
def segment_parameters(p1, q1, p2, q2):
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


@inner_kernel
def box_signed_distance(px, py, pz, box, closest, normal):
    """Signed distance [m] of the point ``(px, py, pz)`` from a box (``box`` (5, 3): centre, the
    rotation's rows, half extents; base frame), negative inside; ``closest`` receives the nearest
    point of the box's surface and ``normal`` the unit outward direction from it toward the point
    (inside: the nearest face's normal)."""
    dx, dy, dz = px - box[0, 0], py - box[0, 1], pz - box[0, 2]
    outside, deepest, axis = 0.0, -math.inf, 0
    clamped0, clamped1, clamped2 = 0.0, 0.0, 0.0
    for k in range(3):
        local = box[1, k] * dx + box[2, k] * dy + box[3, k] * dz  # (R^T d)_k
        half = box[4, k]
        gap = abs(local) - half
        if gap > 0.0:
            outside += gap * gap
        if gap > deepest:
            deepest, axis = gap, k
        value = min(max(local, -half), half)
        if k == 0:
            clamped0 = value
        elif k == 1:
            clamped1 = value
        else:
            clamped2 = value
        normal[k] = local  # (kept until the sign of the deepest face is known)
    if outside > 0.0:
        distance = math.sqrt(outside)
        point = (px, py, pz)
        for i in range(3):
            closest[i] = (
                box[0, i] + box[i + 1, 0] * clamped0 + box[i + 1, 1] * clamped1 + box[i + 1, 2] * clamped2
            )
        for i in range(3):
            normal[i] = (point[i] - closest[i]) / distance
        return distance
    sign = 1.0 if normal[axis] >= 0.0 else -1.0
    point = (px, py, pz)
    for i in range(3):
        normal[i] = sign * box[i + 1, axis]
    for i in range(3):
        closest[i] = point[i] - deepest * normal[i]
    return deepest


@kernel
def segment_box_gap(segment, box):
    """A lower bound [m] of the distance from the segment ``segment[0]``-``segment[1]`` to a box
    (``box`` as in :func:`box_signed_distance`; base frame): the largest gap between the
    segment's and the box's extents along the box's three axes (separating axes: a projection
    never lengthens a distance); 0 when every extent overlaps. A few flops, against
    :func:`swept_box_distance`'s search: it lets far pairs (a link above a table) go unmeasured."""
    gap = 0.0
    for k in range(3):
        start = box[1, k] * (segment[0, 0] - box[0, 0]) + box[2, k] * (segment[0, 1] - box[0, 1])
        start += box[3, k] * (segment[0, 2] - box[0, 2])
        end = box[1, k] * (segment[1, 0] - box[0, 0]) + box[2, k] * (segment[1, 1] - box[0, 1])
        end += box[3, k] * (segment[1, 2] - box[0, 2])
        half = box[4, k]
        gap = max(gap, min(start, end) - half, -half - max(start, end))
    return gap


@inner_kernel
def swept_box_distance(segment, box, closest_a, closest_b, normal):
    """The smallest signed distance from the segment ``segment[0]``-``segment[1]`` to a box (see
    :func:`box_signed_distance`; signed distance to a convex set is convex along a segment:
    golden-section search, then the ends); the segment's point into ``closest_a``, the box
    surface's into ``closest_b``, the outward normal into ``normal``."""
    ax, ay, az = segment[0, 0], segment[0, 1], segment[0, 2]
    ux, uy, uz = segment[1, 0] - ax, segment[1, 1] - ay, segment[1, 2] - az
    best_t = 0.0
    if ux * ux + uy * uy + uz * uz > 0.0:
        low, high = 0.0, 1.0
        inner_low, inner_high = high - _GOLDEN, _GOLDEN
        value_low = box_signed_distance(
            ax + inner_low * ux, ay + inner_low * uy, az + inner_low * uz, box, closest_b, normal
        )
        value_high = box_signed_distance(
            ax + inner_high * ux, ay + inner_high * uy, az + inner_high * uz, box, closest_b, normal
        )
        for _ in range(GOLDEN_ITERATIONS):
            if value_low <= value_high:
                high, inner_high, value_high = inner_high, inner_low, value_low
                inner_low = high - _GOLDEN * (high - low)
                value_low = box_signed_distance(
                    ax + inner_low * ux, ay + inner_low * uy, az + inner_low * uz, box, closest_b, normal
                )
            else:
                low, inner_low, value_low = inner_low, inner_high, value_high
                inner_high = low + _GOLDEN * (high - low)
                value_high = box_signed_distance(
                    ax + inner_high * ux, ay + inner_high * uy, az + inner_high * uz, box, closest_b, normal
                )
        # the ends too: the minimum of a convex function on [0, 1] may sit at either
        best_t, best = 0.5 * (low + high), min(value_low, value_high)
        for t in (0.0, 1.0):
            value = box_signed_distance(ax + t * ux, ay + t * uy, az + t * uz, box, closest_b, normal)
            if value < best:
                best, best_t = value, t
    closest_a[0], closest_a[1], closest_a[2] = ax + best_t * ux, ay + best_t * uy, az + best_t * uz
    return box_signed_distance(closest_a[0], closest_a[1], closest_a[2], box, closest_b, normal)
