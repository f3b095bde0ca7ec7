"""The rigid motion that best carries one set of points onto another (absolute orientation), and
a free-floating base placed by it from its tasks' targets (``ik_node.solver.free_base`` for a
solve with no seed, :func:`~ik_node.compiled.search.search_in` for its restarts)."""

from __future__ import annotations

import math

import numpy as np

from .bundles import FRAME_LINKS, FRAMES, GAZE, POINTS, POSES, RELATIVE_TO, ROWS, TIP_AXIS_KINDS
from .jit import allocating_kernel, inner_kernel, kernel
from .spatial import FLOATING, JOINT_TYPE, PARENT, Q_INDEX, ROTATION, TRANSLATION, forward_kinematics
from .tasks import tip_points

#: Squarings of Horn's matrix (shifted to be positive semi-definite): its power ``2^k`` has
#: every column along the eigenvector of the largest eigenvalue while the two largest differ.
SQUARINGS = 40
#: m: anchor points this far along a tip's axes carry its rotation into the fit.
ANCHOR_ARM = 0.1
#: Slots of :func:`fit_workspace`: the anchors of a configuration's tips and of the targets
#: (2, N, 3) [m], and Horn's matrix and its square (2, 4, 4).
ANCHORS, HORN = 0, 1


@inner_kernel
def rigid_fit(a, b, horn):
    """The rigid motion ``(R, t)`` minimising ``sum_i |R a_i + t - b_i|^2`` over points ``a``,
    ``b`` (N, 3) [m]: Horn 1987 ("Closed-form solution of absolute orientation using unit
    quaternions", JOSA A 4(4)): with ``S = sum (a_i - a)(b_i - b)^T`` over the centred points,
    the unit quaternion ``(w, x, y, z)`` of ``R`` is the eigenvector of the largest eigenvalue
    of the symmetric 4x4 ``N`` of eq. 43 (found by repeated squaring of ``N + sI``, ``s = sum
    (|a_i - a|^2 + |b_i - b|^2) / 2`` bounding ``N``'s eigenvalues; where the largest is
    repeated, the points do not fix the turn, and one of the optimal turns is returned),
    ``t = b - R a``. Returns ``(x, y, z, w, tx, ty, tz)`` (the quaternion scalar last, unit);
    ``horn`` (2, 4, 4): work space."""
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
    matrix, square = horn[0], horn[1]
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
    w, x, y, z = 1.0, 0.0, 0.0, 0.0
    if longest > 0.0:
        norm = math.sqrt(longest)
        w, x, y, z = (matrix[0, column] / norm, matrix[1, column] / norm, matrix[2, column] / norm,
                      matrix[3, column] / norm)  # fmt: skip
    # t = b - R a (R of the unit quaternion, scalar first here)
    rax = (1.0 - 2.0 * (y * y + z * z)) * ax + 2.0 * (x * y - z * w) * ay + 2.0 * (x * z + y * w) * az
    ray = 2.0 * (x * y + z * w) * ax + (1.0 - 2.0 * (x * x + z * z)) * ay + 2.0 * (y * z - x * w) * az
    raz = 2.0 * (x * z - y * w) * ax + 2.0 * (y * z + x * w) * ay + (1.0 - 2.0 * (x * x + y * y)) * az
    return x, y, z, w, bx - rax, by - ray, bz - raz


@kernel
def floating_root(frame_links):
    """The frame row of the floating joint the tree hangs from at its base (its parent the base,
    pose 0), -1 for a tree without one."""
    for k in range(frame_links.shape[0]):
        if frame_links[k, PARENT] == 0 and frame_links[k, JOINT_TYPE] == FLOATING:
            return k
    return -1


@inner_kernel
def tip_anchors(points, task, frames, root, out):
    """Anchor points [m] (into ``out`` (N, 3); returns N) of tip poses ``points`` (T, 4, 4;
    ``T_base_tip``) seen from the floating joint's origin frame ``C`` (frame row ``root``: ``C^-1
    x = R_C^T (x - t_C)``): per tip its position, and where its task controls the rotation (a
    row with axis >= 3) the three points ``ANCHOR_ARM`` along its axes; none of a gaze tip (its
    target is a point to look at, not a place to be) or a relative one (its target is in another
    tip's frame)."""
    rows, kinds, relative_to = task[ROWS], task[TIP_AXIS_KINDS], task[RELATIVE_TO]
    count = 0
    for tip in range(points.shape[0]):
        if kinds[tip] == GAZE or relative_to[tip] >= 0:
            continue
        rotating = False
        for r in range(rows.shape[0]):
            rotating = rotating or (rows[r, 0] == tip and rows[r, 1] >= 3)
        for axis in range(4 if rotating else 1):  # (the position, then the three axes)
            for i in range(3):
                value = 0.0
                for k in range(3):
                    world = points[tip, k, 3]
                    if axis > 0:
                        world += ANCHOR_ARM * points[tip, k, axis - 1]
                    value += frames[root, ROTATION + 3 * k + i] * (world - frames[root, TRANSLATION + k])
                out[count, i] = value
            count += 1
    return count


@kernel
def place_free_base(tree, task, targets, space, fit_space, q):
    """Move the floating joint at the base of ``q`` (in place) so that the tips' controlled
    points at ``q`` lie nearest ``targets`` (T, 4, 4; ``T_base_tip``) as one rigid body: the fit
    (:func:`rigid_fit`) of their anchors (:func:`tip_anchors`) seen from the joint's origin ``C``
    gives ``T'``, and the joint's motion ``M`` becomes ``T' M`` (``T_base_tip = C M X``: the
    anchors ``C^-1 a = M X a_tip`` move by ``T'``; quaternions composed, ``t_M <- R' t_M +
    t'``). Returns the cosine of half the turn ``T'`` makes (1 for a tree without a floating
    joint at its base: ``q`` unchanged). ``space``: an :func:`evaluation_workspace` (its poses
    and points overwritten); ``fit_space``: :func:`fit_workspace`."""
    frames, frame_links = tree[FRAMES], tree[FRAME_LINKS]
    root = floating_root(frame_links)
    if root < 0:
        return 1.0
    poses, points, anchors = space[POSES], space[POINTS], fit_space[ANCHORS]
    forward_kinematics(frames, frame_links, q, poses)
    tip_points(poses, task, points)
    count = tip_anchors(points, task, frames, root, anchors[0])
    if count == 0:  # (gaze or relative tips only: nothing to place the base by)
        return 1.0
    tip_anchors(targets, task, frames, root, anchors[1])
    x, y, z, w, tx, ty, tz = rigid_fit(anchors[0, :count], anchors[1, :count], fit_space[HORN])
    at = frame_links[root, Q_INDEX]
    px, py, pz = q[at], q[at + 1], q[at + 2]  # (t_M <- R' t_M + t')
    q[at] = (1.0 - 2.0 * (y * y + z * z)) * px + 2.0 * (x * y - z * w) * py + 2.0 * (x * z + y * w) * pz + tx
    q[at + 1] = 2.0 * (x * y + z * w) * px + (1.0 - 2.0 * (x * x + z * z)) * py + 2.0 * (y * z - x * w) * pz
    q[at + 1] += ty
    q[at + 2] = 2.0 * (x * z - y * w) * px + 2.0 * (y * z + x * w) * py + (1.0 - 2.0 * (x * x + y * y)) * pz
    q[at + 2] += tz
    mx, my, mz, mw = q[at + 3], q[at + 4], q[at + 5], q[at + 6]  # (Hamilton product T' M)
    q[at + 3] = w * mx + x * mw + y * mz - z * my
    q[at + 4] = w * my - x * mz + y * mw + z * mx
    q[at + 5] = w * mz + x * my - y * mx + z * mw
    q[at + 6] = w * mw - x * mx - y * my - z * mz
    return abs(w)


@allocating_kernel
def fit_workspace(tips):
    """Work arrays of :func:`place_free_base` for ``tips`` tips (slots ``ANCHORS``, ``HORN``)."""
    return np.empty((2, 4 * tips, 3)), np.empty((2, 4, 4))
