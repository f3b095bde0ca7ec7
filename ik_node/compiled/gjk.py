"""The distance between two convex hulls of points (Gilbert, Johnson & Keerthi 1988), with its witness
points: the links' convex hulls in :mod:`.contacts`, a tighter stand-in for their meshes than capsules.

Each hull is given by its vertices (V, 3) in a frame and that frame's pose ``T_base_frame``; its
support point along a direction ``d`` (base axes) is the vertex maximising ``v . (R^T d)``. The
search keeps a simplex (up to 4 points) of the Minkowski difference ``A - B`` and moves to the
point of its convex hull closest to the origin, found among its faces (every subset of 1-4 points
whose affine projection of the origin has positive barycentric weights; the nearest of those).
It stops when the support point no longer brings the distance down by more than ``GJK_TOLERANCE``
of its square (or after ``GJK_ITERATIONS``); a simplex that encloses the origin means the hulls
overlap.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import allocating_kernel, inline_kernel, inner_kernel, kernel

#: Relative tolerance on the squared distance, and the iterations at most.
GJK_TOLERANCE, GJK_ITERATIONS = 1e-10, 64
#: Below this distance [m] the hulls count as touching.
TOUCHING = 1e-9
#: :func:`_gjk_stop`'s answers: no rule holds; the distance is at least ``far``; the nearest
#: point is found (to ``GJK_TOLERANCE``).
GJK_GOING_ON, BEYOND_FAR, CLOSEST = 0, 1, 2


@inner_kernel
def _support(points, start, end, pose, dx, dy, dz, out):
    """The vertex of ``points[start:end]`` (frame axes) farthest along the base-axes direction
    ``(dx, dy, dz)``, placed in the base frame into ``out``; returns its index."""
    lx = pose[0, 0] * dx + pose[1, 0] * dy + pose[2, 0] * dz
    ly = pose[0, 1] * dx + pose[1, 1] * dy + pose[2, 1] * dz
    lz = pose[0, 2] * dx + pose[1, 2] * dy + pose[2, 2] * dz
    best, best_value = start, -math.inf
    for index in range(start, end):
        value = points[index, 0] * lx + points[index, 1] * ly + points[index, 2] * lz
        if value > best_value:
            best, best_value = index, value
    x, y, z = points[best, 0], points[best, 1], points[best, 2]
    for i in range(3):
        out[i] = pose[i, 0] * x + pose[i, 1] * y + pose[i, 2] * z + pose[i, 3]
    return best


@inner_kernel
def _closest_on_simplex(simplex, size, required, weights, gram, rhs, trial, others):
    """The point of the convex hull of ``simplex[:size]`` (rows: points) nearest the origin: its
    barycentric ``weights`` (size,), the rest 0; returns the squared distance (``inf`` when no
    subset qualifies). The subsets holding every point of the bit mask ``required`` are tried:
    the origin's projection onto a subset's affine hull counts when its weights are all positive.
    ``gram`` (3, 3), ``rhs`` (3,), ``trial`` (4,) and ``others`` (3,) are work space."""
    best = math.inf
    for mask in range(1, 1 << size):
        if mask & required != required:
            continue
        members = 0
        first = -1
        for k in range(size):
            if mask >> k & 1:
                if first < 0:
                    first = k
                members += 1
        m = members - 1
        # edges e_i = y_i - y_first for the other members: G mu = -E, G_ij = e_i.e_j, E_i = e_i.y_first
        count = 0
        for k in range(size):
            if mask >> k & 1 and k != first:
                others[count] = k
                count += 1
        for i in range(m):
            a = int(others[i])
            value = 0.0
            for c in range(3):
                value += (simplex[a, c] - simplex[first, c]) * simplex[first, c]
            rhs[i] = -value
            for j in range(m):
                b = int(others[j])
                value = 0.0
                for c in range(3):
                    value += (simplex[a, c] - simplex[first, c]) * (simplex[b, c] - simplex[first, c])
                gram[i, j] = value
        if not _solve_small(gram, rhs, m):
            continue
        total = 0.0
        valid = True
        for i in range(m):
            if not rhs[i] > 0.0:
                valid = False
            total += rhs[i]
        if not valid or not 1.0 - total > 0.0:
            continue
        for k in range(size):
            trial[k] = 0.0
        trial[first] = 1.0 - total
        for i in range(m):
            trial[int(others[i])] = rhs[i]
        distance2 = 0.0
        for c in range(3):
            value = 0.0
            for k in range(size):
                value += trial[k] * simplex[k, c]
            distance2 += value * value
        if distance2 < best:
            best = distance2
            for k in range(size):
                weights[k] = trial[k]
    return best


@inner_kernel
def _solve_small(matrix, rhs, size):
    """Gaussian elimination with partial pivoting of ``matrix[:size, :size] x = rhs[:size]`` in
    place (``x`` into ``rhs``); False when singular to working precision."""
    scale = 0.0
    for i in range(size):
        for j in range(size):
            scale = max(scale, abs(matrix[i, j]))
    for column in range(size):
        pivot = column
        for row in range(column + 1, size):
            if abs(matrix[row, column]) > abs(matrix[pivot, column]):
                pivot = row
        if not abs(matrix[pivot, column]) > 1e-12 * max(scale, 1e-300):
            return False
        if pivot != column:
            for j in range(size):
                matrix[column, j], matrix[pivot, j] = matrix[pivot, j], matrix[column, j]
            rhs[column], rhs[pivot] = rhs[pivot], rhs[column]
        for row in range(column + 1, size):
            factor = matrix[row, column] / matrix[column, column]
            for j in range(column, size):
                matrix[row, j] -= factor * matrix[column, j]
            rhs[row] -= factor * rhs[column]
    for row in range(size - 1, -1, -1):
        value = rhs[row]
        for j in range(row + 1, size):
            value -= matrix[row, j] * rhs[j]
        rhs[row] = value / matrix[row, row]
    return True


#: The views of :func:`hull_distance`'s work space, each from its offset to the next one's, and
#: its length ``GJK_WORK``: three (4, 3) simplices (the Minkowski difference's points and their
#: two ends; 12 each), weights and previous weights (4 each), the support points and the direction
#: (3 each), and :func:`_closest_on_simplex`'s gram (3, 3), right-hand side (3), trial weights (4)
#: and other points (3).
(
    SIMPLEX, FROM_A, FROM_B, WEIGHTS, PREVIOUS, SUPPORT_A, SUPPORT_B, DIRECTION, SIMPLEX_GRAM, SIMPLEX_RHS,
    TRIAL, OTHERS, GJK_WORK,
) = (0, 12, 24, 36, 40, 44, 47, 50, 53, 62, 65, 69, 72)  # fmt: skip


@allocating_kernel
def gjk_workspace():
    """Work space for :func:`hull_distance` (``GJK_WORK`` floats)."""
    return np.empty(GJK_WORK)


@inline_kernel
def _add_point(a, b, size, simplex, from_a, from_b):
    """The support point ``w = a - b`` (and its ends) joins the simplex's ``size`` points;
    returns the new size."""
    for c in range(3):
        from_a[size, c], from_b[size, c] = a[c], b[c]
        simplex[size, c] = a[c] - b[c]
    return size + 1


@inline_kernel
def _gjk_stop(distance2, along, far, size):
    """GJK's stop rules once the support point ``w`` of ``A - B`` along ``-v`` is known
    (``along = v . w`` [m^2], ``distance2 = |v|^2`` [m^2]), else ``GJK_GOING_ON``:
    ``BEYOND_FAR`` when ``w``'s support plane proves the distance at least ``far`` (``v . w /
    |v| >= far``: ``v . w / |v|`` is a lower bound of the distance); ``CLOSEST`` when ``w``
    brings ``|v|^2`` down by at most ``GJK_TOLERANCE`` of itself (``|v|^2 - v . w``, an upper
    bound of ``|v| (|v| - d)``: van den Bergen 1999's termination), or the simplex is full."""
    if along > 0.0 and along * along >= far * far * distance2:
        return BEYOND_FAR
    if distance2 - along <= GJK_TOLERANCE * distance2 or size == 4:
        return CLOSEST
    return GJK_GOING_ON


@inline_kernel
def _nearest_on_simplex(simplex, size, weights, previous, gram, rhs, trial, others):
    """The point of the convex hull of ``simplex[:size]`` nearest the origin, its weights into
    ``weights`` (the former ones into ``previous``): among the faces holding the newest point (it
    brought the distance down), among all when none qualifies (rounding). Returns its squared
    distance [m^2] (``inf``: none qualifies; :func:`_closest_on_simplex`)."""
    for k in range(4):
        previous[k] = weights[k]
        weights[k] = 0.0
    found = _closest_on_simplex(simplex, size, 1 << (size - 1), weights, gram, rhs, trial, others)
    if found == math.inf:
        found = _closest_on_simplex(simplex, size, 0, weights, gram, rhs, trial, others)
    return found


@inline_kernel
def _reduce_to_face(simplex, from_a, from_b, weights, size, v):
    """The next start: the simplex keeps the points of the face its nearest point lies on (those
    of positive weight, in order) and ``v`` becomes that point, ``sum_k w_k y_k`` [m]; returns the
    points kept."""
    kept = 0
    for k in range(size):
        if weights[k] > 0.0:
            for c in range(3):
                simplex[kept, c], from_a[kept, c], from_b[kept, c] = simplex[k, c], from_a[k, c], from_b[k, c]
            weights[kept] = weights[k]
            kept += 1
    for k in range(kept, 4):
        weights[k] = 0.0
    for c in range(3):
        v[c] = 0.0
        for k in range(kept):
            v[c] += weights[k] * simplex[k, c]
    return kept


@inline_kernel
def _witnesses(weights, from_a, from_b, size, witness_a, witness_b):
    """The closest points [m, base frame]: on A ``sum_k w_k a_k``, on B ``sum_k w_k b_k`` over
    the simplex's ``size`` points (the nearest point's weights and ends)."""
    for c in range(3):
        witness_a[c], witness_b[c] = 0.0, 0.0
        for k in range(size):
            witness_a[c] += weights[k] * from_a[k, c]
            witness_b[c] += weights[k] * from_b[k, c]


@kernel
def hull_distance(
    points, start_a, end_a, pose_a, start_b, end_b, pose_b, guess, far, witness_a, witness_b, work
):
    """The distance [m] between the convex hulls of ``points[start_a:end_a]`` at ``pose_a`` and
    ``points[start_b:end_b]`` at ``pose_b`` (base frame), with the closest points on each into
    ``witness_a`` and ``witness_b``; 0 when they overlap or touch (witnesses then undefined).
    ``guess`` (3,): a direction from B toward A to start from (the last answer's, or a centre
    difference: a few iterations fewer than an arbitrary one), replaced by the answer's direction
    when the hulls are apart; ``work``: :func:`gjk_workspace`.
    Once the distance is known to be at least ``far`` [m] (:func:`_gjk_stop`), that bound is
    returned and the witnesses are undefined: a pair farther than the margin needs no more.

    Each iteration (Gilbert, Johnson & Keerthi 1988): ``v``, the point of the simplex nearest the
    origin, ends the search when it is within ``TOUCHING`` of it (the hulls touch or overlap);
    else the support point ``w = a - b`` along ``-v`` (:func:`_support`: ``a`` of A along ``-v``,
    ``b`` of B along ``v``) ends it by :func:`_gjk_stop`, or joins the simplex
    (:func:`_add_point`), whose nearest point (:func:`_nearest_on_simplex`) is kept only if
    nearer than ``v`` (else a degenerate simplex: ``v`` stands) and becomes the next ``v`` on
    the face it lies on (:func:`_reduce_to_face`); a full simplex (4 points) holding the nearest
    point encloses the origin: overlap. The answer's witnesses: :func:`_witnesses`."""
    simplex = work[SIMPLEX:FROM_A].reshape((4, 3))
    from_a = work[FROM_A:FROM_B].reshape((4, 3))
    from_b = work[FROM_B:WEIGHTS].reshape((4, 3))
    weights, previous = work[WEIGHTS:PREVIOUS], work[PREVIOUS:SUPPORT_A]
    a, b, v = work[SUPPORT_A:SUPPORT_B], work[SUPPORT_B:DIRECTION], work[DIRECTION:SIMPLEX_GRAM]
    gram = work[SIMPLEX_GRAM:SIMPLEX_RHS].reshape((3, 3))
    rhs, trial, others = work[SIMPLEX_RHS:TRIAL], work[TRIAL:OTHERS], work[OTHERS:GJK_WORK]
    for k in range(4):
        weights[k] = 0.0
    _support(points, start_a, end_a, pose_a, -guess[0], -guess[1], -guess[2], a)
    _support(points, start_b, end_b, pose_b, guess[0], guess[1], guess[2], b)
    size = _add_point(a, b, 0, simplex, from_a, from_b)
    weights[0] = 1.0
    for c in range(3):
        v[c] = simplex[0, c]
    distance2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    for _ in range(GJK_ITERATIONS):
        if distance2 <= TOUCHING * TOUCHING:
            return 0.0
        _support(points, start_a, end_a, pose_a, -v[0], -v[1], -v[2], a)
        _support(points, start_b, end_b, pose_b, v[0], v[1], v[2], b)
        along = v[0] * (a[0] - b[0]) + v[1] * (a[1] - b[1]) + v[2] * (a[2] - b[2])
        stop = _gjk_stop(distance2, along, far, size)
        if stop == BEYOND_FAR:
            for c in range(3):
                guess[c] = v[c]
            return along / math.sqrt(distance2)
        if stop == CLOSEST:
            break
        size = _add_point(a, b, size, simplex, from_a, from_b)
        found = _nearest_on_simplex(simplex, size, weights, previous, gram, rhs, trial, others)
        if found == math.inf or found >= distance2:  # (no progress: a degenerate simplex, v stands)
            size -= 1
            for k in range(4):
                weights[k] = previous[k]
            break
        distance2 = found
        size = _reduce_to_face(simplex, from_a, from_b, weights, size, v)
        if size == 4:  # the origin is inside the tetrahedron: overlap
            return 0.0
    _witnesses(weights, from_a, from_b, size, witness_a, witness_b)
    for c in range(3):
        guess[c] = v[c]
    return math.sqrt(max(distance2, 0.0))


@allocating_kernel
def simplified_hull(points, count, tolerance, chosen):
    """A subset of ``points`` (V, 3) whose hull approximates theirs, as indices into ``chosen``:
    the extreme points along the axes first, then, one at a time, the point farthest from the hull
    of those chosen so far, until none is farther than ``tolerance`` [m] or ``count`` are chosen.
    Returns (the largest distance [m] of any point from the subset's hull, bounded from above by
    each point's distance when last measured (distances only fall as the subset grows), and the
    subset's size): the subset's hull grown by that distance contains the points' hull."""
    size = points.shape[0]
    identity = np.eye(4)
    work = np.empty((count + 1, 3))
    witness_a, witness_b, guess = np.empty(3), np.empty(3), np.empty(3)
    gjk_work = gjk_workspace()
    used = 0
    for axis in range(3):
        for sign in (1.0, -1.0):
            best = 0
            for index in range(size):
                if sign * points[index, axis] > sign * points[best, axis]:
                    best = index
            fresh = True
            for k in range(used):
                if chosen[k] == best:
                    fresh = False
            if fresh and used < count:
                chosen[used] = best
                for c in range(3):
                    work[used, c] = points[best, c]
                used += 1
    # a point's distance only falls as the subset grows: one within the tolerance stays so
    distances = np.full(size, math.inf)
    while True:
        worst, farthest = 0.0, -1
        for index in range(size):
            if distances[index] <= tolerance:
                continue
            for c in range(3):
                work[count, c] = points[index, c]
            for c in range(3):
                guess[c] = points[index, c] - work[0, c]
            distance = hull_distance(
                work,
                count,
                count + 1,
                identity,
                0,
                used,
                identity,
                guess,
                math.inf,
                witness_a,
                witness_b,
                gjk_work,
            )
            distances[index] = distance
            if distance > worst:
                worst, farthest = distance, index
        if used == count or farthest < 0 or worst <= tolerance:
            # (a point passed over as within the tolerance may still lie up to it outside)
            largest = 0.0
            for index in range(size):
                largest = max(largest, distances[index])
            return largest, used
        chosen[used] = farthest
        distances[farthest] = 0.0
        for c in range(3):
            work[used, c] = points[farthest, c]
        used += 1
