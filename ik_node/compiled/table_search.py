"""The seed table inside a search: the features that rank poses by closeness
(:func:`pose_features`; of a table's configurations, :func:`table_features`), the table's entries
nearest a target through its index (:func:`probe_table`: the nearest cells' entries measured,
:func:`table_distances`; :func:`rank_probed`, :func:`rank_nearest`: the nearest of them, in
order), and its limbs (several tips): each tip's pose seen from the frame its limb hangs from
(:func:`relative_features`, :func:`limb_table_features`) and the limbs of a start taken from the
limb table's nearest entries (:func:`place_limbs`). The table and its index are built in Python
(:class:`~ik_node.solver.seed_table.SeedTable`); :mod:`.restarts` starts attempts from them."""

from __future__ import annotations

import math

import numpy as np

from .bundles import (
    BLOCKED_CENTROIDS,
    BLOCKED_FEATURES,
    CELL_STARTS,
    COORDINATES,
    FRAME_LINKS,
    FRAMES,
    LIMB_COORDINATES,
    LIMB_FEATURES,
    LIMB_FRAMES,
    LIMB_Q,
    LIMB_SCALE,
    LIMB_STARTS,
    POINTS,
    POSES,
    TIP_FEATURES,
)
from .jit import allocating_kernel, inner_kernel, kernel, reduction_kernel
from .spatial import forward_kinematics
from .tasks import evaluation_workspace, tip_points

#: The first entry, cell or slot, typed int64: numba types a literal ``0`` argument as
#: ``Literal[int](0)`` and compiles the callee once more for it (see ``bundles.FIRST_ROW``).
FIRST = np.int64(0)
#: Nearest seed-table entries tried as restarts before random configurations.
TABLE_RESTARTS = 64
#: Cells of the seed table's index whose entries a search measures (those with the nearest
#: centroids; see :func:`probe_table`), and the table size up to which it measures every cell
#: (a tree's table: measuring its 2048 entries costs a few µs of a ~0.2 ms solve, and its
#: restarts from the exact nearest entries solved a little more with a capped attempt count).
PROBED_CELLS, EVERY_CELL_UP_TO = 4, 2048


@kernel
def pose_features(tip_poses, feature_spec, feature_scale, out):
    """Seed-table features of tip poses (T, 4, 4) (into ``out``): feature ``f`` is
    ``feature_scale[f]`` times component ``feature_spec[f, 1]`` (0-2 position [m], 3-11 rotation
    matrix, row-major) of tip ``feature_spec[f, 0]``. Squared distances between features rank
    poses by closeness."""
    for f in range(feature_spec.shape[0]):
        pose = tip_poses[feature_spec[f, 0]]
        component = feature_spec[f, 1]
        value = pose[component, 3] if component < 3 else pose[(component - 3) // 3, (component - 3) % 3]
        out[f] = feature_scale[f] * value


@inner_kernel
def fk_features(tree, task, feature_spec, feature_scale, q, space, out):
    """:func:`pose_features` of the tips' controlled points at ``q`` (``space``:
    :func:`evaluation_workspace`)."""
    poses, points = space[POSES], space[POINTS]
    forward_kinematics(tree[FRAMES], tree[FRAME_LINKS], q, poses)
    tip_points(poses, task, points)
    pose_features(points, feature_spec, feature_scale, out)


@allocating_kernel
def table_features(tree, task, feature_spec, feature_scale, table_q):
    """Features (S, F) of the configurations ``table_q`` (S, nq)."""
    space = evaluation_workspace(tree, task, np.int64(0), None)
    features = np.empty((table_q.shape[0], feature_spec.shape[0]))
    for s in range(table_q.shape[0]):
        fk_features(tree, task, feature_spec, feature_scale, table_q[s], space, features[s])
    return features


@inner_kernel
def squared_distance(a, b):
    """The squared distance between feature vectors ``a`` and ``b`` (F,)."""
    value = 0.0
    for i in range(a.shape[0]):
        value += (a[i] - b[i]) * (a[i] - b[i])
    return value


@reduction_kernel
def table_distances(blocked_features, target_features, start, stop, out):
    """Squared feature distance of the entries ``start:stop`` from ``target_features`` (F,),
    into ``out[:stop - start]``; returns the position in ``out`` of the nearest (the first among
    equals; -1 for an empty range). ``blocked_features`` (S * F,) holds the entries' features
    with the range as one block, feature by feature: feature ``f`` of entry ``s`` at
    ``start * F + f * (stop - start) + (s - start)``, so that the sums run over many entries at
    once in vector registers (rows indexed through views from 0: an index with an offset keeps
    numba's negative-index wraparound, which stops LLVM from vectorising the loop)."""
    features, count = target_features.shape[0], stop - start
    block = blocked_features[start * features : stop * features]
    for i in range(count):
        out[i] = 0.0
    for f in range(features):
        target, row = target_features[f], block[f * count : (f + 1) * count]
        for i in range(count):
            difference = row[i] - target
            out[i] += difference * difference
    least = math.inf
    for i in range(count):  # (the least value first: a loop LLVM vectorises, then its index)
        least = min(least, out[i])
    for i in range(count):
        if out[i] == least:
            return i
    return -1


@kernel
def rank_nearest(distances, start, stop, shift, found, chosen, chosen_distance):
    """Rank ``distances[start:stop]`` (:func:`table_distances`; position ``s`` stands for entry
    ``s + shift``) into the ``found`` entries already in ``chosen`` (nearest first, their
    distances in ``chosen_distance``), keeping the ``chosen.shape[0]`` nearest; returns how
    many are kept. Equal distances: the entry ranked earlier first. One pass, each entry nearer
    than the farthest kept so far inserted in order (loops: ``np.partition`` and ``np.argsort``
    would compile numba's selection and sorting code, ~4 s)."""
    capacity = chosen.shape[0]
    for s in range(start, stop):
        distance = distances[s]
        if found == capacity and distance >= chosen_distance[capacity - 1]:
            continue
        slot = min(found, capacity - 1)  # the next free slot, or the farthest kept (dropped)
        while slot > 0 and chosen_distance[slot - 1] > distance:
            chosen_distance[slot], chosen[slot] = chosen_distance[slot - 1], chosen[slot - 1]
            slot -= 1
        chosen_distance[slot], chosen[slot] = distance, s + shift
        found = min(found + 1, capacity)
    return found


@kernel
def probe_table(table, target_features, cell_distances, probed, probed_distance, distances):
    """The seed table's entries near ``target_features`` through its index (see
    :class:`~ik_node.solver.seed_table.SeedTable`; the features blocked by cell, the centroids as
    one block, (S * F,) and (C * F,)): the ``probed.shape[0]`` cells whose centroids lie nearest
    (into ``probed``, nearest first; ``cell_distances`` (C,) and ``probed_distance`` are work
    space) and the squared distances of their entries, cell after cell, into ``distances``
    (:func:`table_distances`; at least the probed cells' entries long). Returns (the nearest entry
    measured, -1 for an empty table; its squared distance; the cells probed). An inverted-file
    search (Jegou et al. 2011): the nearest entry is found unless it lies in a cell whose
    centroid is farther than the probed cells'. :func:`rank_probed` ranks what it measured."""
    features, centroids, cell_starts = table[BLOCKED_FEATURES], table[BLOCKED_CENTROIDS], table[CELL_STARTS]
    cells = cell_starts.shape[0] - 1
    table_distances(centroids, target_features, FIRST, cells, cell_distances)
    count = rank_nearest(cell_distances, FIRST, cells, FIRST, FIRST, probed, probed_distance)
    nearest, least, at = -1, math.inf, FIRST
    for p in range(count):
        first, stop = cell_starts[probed[p]], cell_starts[probed[p] + 1]
        entry = table_distances(features, target_features, first, stop, distances[at:])
        if entry >= 0 and distances[at + entry] < least:
            nearest, least = first + entry, distances[at + entry]
        at += stop - first
    return nearest, least, count


@kernel
def rank_probed(table, probed, count, distances, chosen, chosen_distance):
    """The ``chosen.shape[0]`` entries nearest the target among those of the ``count`` cells
    :func:`probe_table` measured into ``distances`` (nearest first, into ``chosen``, their
    distances into ``chosen_distance``); returns how many."""
    cell_starts = table[CELL_STARTS]
    found, at = FIRST, FIRST
    for p in range(count):
        first, stop = cell_starts[probed[p]], cell_starts[probed[p] + 1]
        found = rank_nearest(distances, at, at + stop - first, first - at, found, chosen, chosen_distance)
        at += stop - first
    return found


@inner_kernel
def relative_features(frame_pose, tip_pose, scale, out):
    """Pose features (12,) of ``tip_pose`` seen from ``frame_pose`` (both ``T_base_*``): of
    ``T_frame_tip = T_base_frame^-1 T_base_tip``, its position (3) [m] then its rotation matrix
    (9, row-major), each component times ``scale`` (12,)."""
    for i in range(3):
        value = 0.0
        for k in range(3):
            value += frame_pose[k, i] * (tip_pose[k, 3] - frame_pose[k, 3])
        out[i] = scale[i] * value
    for i in range(3):
        for j in range(3):
            value = 0.0
            for k in range(3):
                value += frame_pose[k, i] * tip_pose[k, j]
            out[3 + 3 * i + j] = scale[3 + 3 * i + j] * value


@allocating_kernel
def limb_table_features(tree, task, limb_frames, limb_scale, table_q):
    """The features (T, 12, S) of each tip's controlled point seen from its limb's frame
    (:func:`relative_features`; zeros for a tip without a limb) at the configurations
    ``table_q`` (S, nq)."""
    space = evaluation_workspace(tree, task, np.int64(0), None)
    tips, size = limb_frames.shape[0], table_q.shape[0]
    features = np.zeros((tips, TIP_FEATURES, size))
    relative = np.empty(TIP_FEATURES)
    poses, points = space[POSES], space[POINTS]
    for s in range(size):
        forward_kinematics(tree[FRAMES], tree[FRAME_LINKS], table_q[s], poses)
        tip_points(poses, task, points)
        for tip in range(tips):
            if limb_frames[tip] >= 0:
                relative_features(poses[limb_frames[tip]], points[tip], limb_scale[tip], relative)
                for c in range(TIP_FEATURES):
                    features[tip, c, s] = relative[c]
    return features


@inner_kernel
def place_limbs(tree, task, table, targets, keep, rank, poses, relative, distances, chosen, start):
    """Each limb whose joints ``keep`` leaves free (a tip not reached) takes its joints from the
    limb table's entry ``rank`` (0: the nearest, 1: the next, ...) by distance from its target
    seen from the limb's frame at ``start`` (those joints in ``start``; :func:`relative_features`,
    squared distance over the 12 features, ranked by :func:`rank_nearest`): the limb's pose
    relative to where it hangs does not depend on the joints above it, so the entries of every
    limb count, not only those whose whole pose is near (a table of S entries holds S^T
    combinations of T limbs). ``poses`` (F, 4, 4), ``relative`` (12,), ``distances`` (S,),
    ``chosen``: (entries (K,) int, their distances (K,)), ``K > rank``: work space."""
    table_q, limb_frames, limb_starts = table[LIMB_Q], table[LIMB_FRAMES], table[LIMB_STARTS]
    limb_coordinates, limb_scale, limb_features = (
        table[LIMB_COORDINATES],
        table[LIMB_SCALE],
        table[LIMB_FEATURES],
    )
    coordinates, size = tree[COORDINATES], table_q.shape[0]
    # (the limbs' frames: no limb joint moves them)
    forward_kinematics(tree[FRAMES], tree[FRAME_LINKS], start, poses)
    for tip in range(limb_frames.shape[0]):
        first, stop = limb_starts[tip], limb_starts[tip + 1]
        if limb_frames[tip] < 0 or keep[limb_coordinates[first]]:
            continue
        relative_features(poses[limb_frames[tip]], targets[tip], limb_scale[tip], relative)
        for s in range(size):
            distances[s] = 0.0
        for c in range(TIP_FEATURES):
            target, row = relative[c], limb_features[tip, c]
            for s in range(size):
                difference = row[s] - target
                distances[s] += difference * difference
        entries, entry_distances = chosen[0][: rank + 1], chosen[1][: rank + 1]
        found = rank_nearest(distances, FIRST, size, FIRST, FIRST, entries, entry_distances)
        entry = entries[min(rank, found - 1)]
        for k in range(first, stop):
            c = coordinates[limb_coordinates[k]]
            if c >= 0:
                start[c] = table_q[entry, c]
