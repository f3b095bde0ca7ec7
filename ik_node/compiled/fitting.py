"""The rigid motion that best carries one set of points onto another (absolute orientation), for
placing a free-floating base from its tasks' targets (``ik_node.solver.free_base``)."""

from __future__ import annotations

import numpy as np

from .jit import allocating_kernel
from .spatial import quaternion_matrix

#: Squarings of Horn's matrix (shifted to be positive semi-definite): its power ``2^k`` has
#: every column along the eigenvector of the largest eigenvalue while the two largest differ.
SQUARINGS = 40


@allocating_kernel
def rigid_fit(a, b, out):
    """The rigid motion ``T`` (into ``out`` (4, 4); base frame) minimising ``sum_i |R a_i + t - b_i|^2`` over
    points ``a``, ``b`` (N, 3) [m]: Horn 1987 ("Closed-form solution of absolute orientation using
    unit quaternions", JOSA A 4(4)): with ``S = sum (a_i - a)(b_i - b)^T`` over the centred
    points, the unit quaternion ``(w, x, y, z)`` of ``R`` is the eigenvector of the largest
    eigenvalue of the symmetric 4x4 ``N`` of eq. 43 (found by repeated squaring of ``N + sI``,
    ``s = sum (|a_i - a|^2 + |b_i - b|^2) / 2`` bounding ``N``'s eigenvalues; where the largest
    is repeated, the points do not fix the turn, and one of the optimal turns is returned),
    ``t = b - R a``."""
    count = a.shape[0]
    ax = ay = az = bx = by = bz = 0.0
    for i in range(count):
        ax, ay, az = ax + a[i, 0] / count, ay + a[i, 1] / count, az + a[i, 2] / count
        bx, by, bz = bx + b[i, 0] / count, by + b[i, 1] / count, bz + b[i, 2] / count
    sxx = sxy = sxz = syx = syy = syz = szx = szy = szz = shift = 0.0
    for i in range(count):
        pa, qa, ra = a[i, 0] - ax, a[i, 1] - ay, a[i, 2] - az
        pb, qb, rb = b[i, 0] - bx, b[i, 1] - by, b[i, 2] - bz
        sxx, sxy, sxz = sxx + pa * pb, sxy + pa * qb, sxz + pa * rb
        syx, syy, syz = syx + qa * pb, syy + qa * qb, syz + qa * rb
        szx, szy, szz = szx + ra * pb, szy + ra * qb, szz + ra * rb
        shift += 0.5 * (pa * pa + qa * qa + ra * ra + pb * pb + qb * qb + rb * rb)
    matrix, square = np.empty((4, 4)), np.empty((4, 4))
    matrix[0, 0], matrix[0, 1], matrix[0, 2], matrix[0, 3] = sxx + syy + szz, syz - szy, szx - sxz, sxy - syx
    matrix[1, 1], matrix[1, 2], matrix[1, 3] = sxx - syy - szz, sxy + syx, szx + sxz
    matrix[2, 2], matrix[2, 3] = -sxx + syy - szz, syz + szy
    matrix[3, 3] = -sxx - syy + szz
    for r in range(4):
        matrix[r, r] += shift
        for c in range(r):
            matrix[r, c] = matrix[c, r]
    for _ in range(SQUARINGS):  # (N + sI)^(2^k), scaled: its columns turn to the eigenvector
        largest = 0.0
        for r in range(4):
            for c in range(4):
                value = 0.0
                for k in range(4):
                    value += matrix[r, k] * matrix[k, c]
                square[r, c] = value
                largest = max(largest, abs(value))
        if largest == 0.0:  # (no points spread: no turn)
            break
        for r in range(4):
            for c in range(4):
                matrix[r, c] = square[r, c] / largest
    column, longest = 0, -1.0
    for c in range(4):
        length = matrix[0, c] ** 2 + matrix[1, c] ** 2 + matrix[2, c] ** 2 + matrix[3, c] ** 2
        if length > longest:
            column, longest = c, length
    w, x, y, z = matrix[0, column], matrix[1, column], matrix[2, column], matrix[3, column]
    if longest <= 0.0:
        w, x, y, z = 1.0, 0.0, 0.0, 0.0
    rotation = quaternion_matrix(x, y, z, w)
    centroid = (ax, ay, az)
    target = (bx, by, bz)
    for i in range(3):
        moved = 0.0
        for k in range(3):
            out[i, k] = rotation[3 * i + k]
            moved += rotation[3 * i + k] * centroid[k]
        out[i, 3] = target[i] - moved
        out[3, i] = 0.0
    out[3, 3] = 1.0
