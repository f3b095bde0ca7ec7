"""Convex shapes fitted around a link's padded points (:mod:`.elements`): capsules, the convex
hull, the oriented box, each containing every point grown by its padding; and the cuts of a link's
geometry into slabs and cells whose parts they are fitted around.

A link is cut into slabs by planes across its principal axis (largest eigenvector of the
points' covariance); a slab's capsule holds the link's vertices inside the slab **and the points
where the edges of its triangles (or of its box or prism) cross the slab's two planes**: the
corners of every triangle clipped to the slab, so it contains the slab's part of the surface (a
capsule is convex). That also holds the solid: a point inside a closed mesh lies between two of its
surface's points in the plane across the axis through it, both in its slab. (Assigning whole
triangles to the slab of their centroid would contain the surface only: a long triangle crossing
the cut leaves interior points of a thin slab outside both capsules.) A mesh that is not closed is
contained as a surface, as coal's mesh-mesh distance measures it. Spheres and capsules are never
cut: each goes whole into the slab of its centre.

How it is fitted (:func:`link_capsules`): for ``k`` = 1 to :data:`MAX_SHAPES_PER_LINK` slabs, the
cuts are moved by coordinate descent to the least total volume of :func:`enclosing_capsule` (along
each piece's principal axis; radius and ends the smallest holding every padded point); a link of
several elements also tries one piece per element, merged pairwise while more than allowed. The
best pieces of each count are refit by :func:`tight_capsule` (a compass search over the axis's
direction and position on the pieces' convex hull vertices, which shrinks the Panda's single
capsules by a third), and the link keeps the fewest capsules that more would not shrink by more
than :data:`SPLIT_GAIN`. A 1e-6 m allowance on every radius covers rounding.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from ..compiled.gjk import simplified_hull
from .elements import Element

__all__ = [
    "ALLOWANCE",
    "HULL_TOLERANCE",
    "HULL_VERTICES",
    "MAX_SHAPES_PER_LINK",
    "SPLIT_GAIN",
    "best_cuts",
    "enclosing_box",
    "enclosing_capsule",
    "enclosing_hull",
    "hull_volume",
    "link_capsules",
    "principal_axes",
    "slab_pieces",
    "tight_capsule",
]

#: [m] added to every fitted radius so that rounding never leaves a point outside
ALLOWANCE = 1e-6
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
#: A link's hull keeps this many vertices at most, fewer when the others all lie within
#: ``HULL_TOLERANCE`` [m] of their hull (the farthest-point subset, its padding grown by the largest
#: distance of a dropped vertex): GJK's support search is linear in the vertices.
HULL_VERTICES, HULL_TOLERANCE = 128, 0.001


def link_capsules(elements: list[Element]) -> list[tuple[np.ndarray, np.ndarray, float, float]]:
    """A link's capsules ``(a, b, radius, volume)``: the fewest of the candidates below whose
    volume no candidate with more shapes (up to :data:`MAX_SHAPES_PER_LINK`) undercuts by more
    than :data:`SPLIT_GAIN`.

    Candidates, each a split of the link's geometry into pieces (``(points, pads)``), compared by
    the volume of :func:`enclosing_capsule` around each piece, the best of each count then refit
    by :func:`tight_capsule`: the link cut into ``k`` slabs across its principal axis
    (:func:`slab_pieces`, the cuts placed by :func:`best_cuts`), ``k`` = 1 (every element in
    one piece) to :data:`MAX_SHAPES_PER_LINK`; and, for a link of several elements, one piece per
    element, merged pairwise (the pair whose merged capsule adds least volume first) down to one."""
    points = np.concatenate([element.points for element in elements])
    pads = np.concatenate([np.full(len(element.points), element.pad) for element in elements])
    best = {1: [(points, pads)]}  # count: pieces
    if len(points) > 1 and np.ptp(points, axis=0).max() > 0.0:
        axis = np.linalg.eigh(np.cov((points - points.mean(axis=0)).T))[1][:, -1]
        for count in range(2, MAX_SHAPES_PER_LINK + 1):
            found = best_cuts(elements, axis, count)
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
        shapes = [tight_capsule(*piece) for piece in best[count]]
        if chosen is None or _total(shapes) < (1.0 - SPLIT_GAIN) * _total(chosen):
            chosen = shapes
    return chosen


def _capsule_volume(a: np.ndarray, b: np.ndarray, radius: float) -> float:
    return math.pi * radius**2 * float(np.linalg.norm(b - a)) + 4.0 / 3.0 * math.pi * radius**3


def _fit(points: np.ndarray, pads: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """:func:`enclosing_capsule` and its volume [m³]."""
    a, b, radius = enclosing_capsule(points, pads)
    return a, b, radius, _capsule_volume(a, b, radius)


def _total(shapes) -> float:
    return sum(shape[3] for shape in shapes)


def slab_pieces(elements: list[Element], axis: np.ndarray, cuts: Sequence[float], within=()):
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


def _cell_part(element: Element, cell) -> np.ndarray:
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


def best_cuts(
    elements: list[Element],
    axis: np.ndarray,
    count: int,
    measure=None,
    candidates=_CUT_CANDIDATES,
    within=(),
):
    """The pieces of :func:`slab_pieces` in ``count`` slabs across ``axis`` (inside the slabs
    ``within``), the cuts placed by coordinate descent (each cut in turn moved to the best of
    ``candidates`` even positions between its neighbours; :data:`_CUT_ROUNDS` rounds) from even
    spacing, to the least total ``measure(points, pads)`` [m³] of the pieces (default: the
    volume of :func:`enclosing_capsule`); None when some slab is empty."""
    measure = measure or (lambda points, pads: _fit(points, pads)[3])
    inside = slab_pieces(elements, axis, [], within)
    if not inside:
        return None
    heights = inside[0][0] @ axis
    low, high = float(heights.min()), float(heights.max())
    cuts = list(np.linspace(low, high, count + 1)[1:-1])

    def volume_of(cuts):
        pieces = slab_pieces(elements, axis, cuts, within)
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
    return (cuts, slab_pieces(elements, axis, cuts, within)) if best < math.inf else None


def enclosing_capsule(points: np.ndarray, pads: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """End points ``a``, ``b`` and radius ``r`` of a capsule containing every ball
    ``(points[i], pads[i])``: along the points' principal axis (see the module's docstring)."""
    points = np.asarray(points, dtype=float)
    pads = np.asarray(pads, dtype=float)
    centre, axes = principal_axes(points)
    a, b, radius, _ = _capsules_about(points, pads, centre[None], axes[None, :, -1])
    return a[0], b[0], float(radius[0])


def principal_axes(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def tight_capsule(points: np.ndarray, pads: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """``(a, b, radius, volume)`` of a capsule containing every ball ``(points[i], pads[i])``,
    smaller than :func:`enclosing_capsule`'s: a compass search over the axis's direction and its
    offset across (each step tried both ways along two directions across the axis, halved when
    none shrinks the volume; :func:`_capsules_about` gives radius and ends), from the best of the
    points' and their convex hull's principal axes, on the hull's vertices (a capsule containing
    those contains them all)."""
    points, pads = np.asarray(points, dtype=float), np.asarray(pads, dtype=float)
    centre, axes = principal_axes(points)
    starts = [(centre, axes[:, -1])]  # enclosing_capsule's
    points, pads = _hull_points(points, pads)
    centre, axes = principal_axes(points)
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


def enclosing_hull(points: np.ndarray, pad: float) -> tuple[np.ndarray, float]:
    """(vertices (V, 3), padding [m]) of a convex set containing the balls of radius ``pad``
    around ``points``: their hull's vertices, at most ``HULL_VERTICES`` (see
    :func:`~.geometry.link_hulls`)."""
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


def enclosing_box(points: np.ndarray, pad: float) -> tuple[np.ndarray, np.ndarray]:
    """(T_frame_box (4, 4), size (3,) [m]) of an oriented box containing the balls of radius
    ``pad`` around ``points`` (see :func:`~.geometry.link_boxes`)."""
    import trimesh

    try:
        to_origin, extents = trimesh.bounds.oriented_bounds(points)
        pose = np.linalg.inv(to_origin)
    except Exception:  # (flat or too few points for a hull: the axis-aligned box)
        low, high = points.min(axis=0), points.max(axis=0)
        pose, extents = np.eye(4), high - low
        pose[:3, 3] = (low + high) / 2.0
    return pose, np.asarray(extents, dtype=float) + 2.0 * (pad + ALLOWANCE)


def hull_volume(points: np.ndarray, pads=None) -> float:
    """Volume [m³] of the points' convex hull (0 when flat)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        return float(ConvexHull(points).volume)
    except (QhullError, ValueError):
        return 0.0
