"""The restart search: the seed table's features and nearest entries, the ranking of attempts by
solve type, :func:`search_in` (one target: one loop, its rules named) and :func:`search_many` (a
batch, without the GIL: the entry from Python, for one target too)."""

from __future__ import annotations

import math

import numpy as np

from .attempt import attempt_workspace, run_attempt
from .bundles import (
    ATTEMPTS,
    BLOCKED_CENTROIDS,
    BLOCKED_FEATURES,
    CANDIDATE_EVALUATION,
    CELL_STARTS,
    COLLISION,
    CONTACT,
    CONVERGED,
    COORDINATES,
    DEADLINE,
    DEADLINE_REACHED,
    DISTANCE,
    EVALUATION,
    FEATURE_SCALE,
    FEATURE_SPEC,
    FRAME_LINKS,
    FRAMES,
    GRAM,
    ITERATIONS,
    ITERATIONS_USED,
    JACOBIAN,
    JOINT_MOVE,
    LIMB_COORDINATES,
    LIMB_FEATURES,
    LIMB_FRAMES,
    LIMB_Q,
    LIMB_SCALE,
    LIMB_STARTS,
    MANIPULABILITY,
    MAX_ATTEMPTS,
    MAX_ITERATIONS,
    MAX_JOINT_MOVE,
    MAX_TARGET_DISTANCE,
    MIN_DAMPING,
    NO_DEADLINE,
    ORTHONORMAL_TOLERANCE,
    OUTCOME,
    PAIRS,
    PATH_COORDINATES,
    PATH_STARTS,
    POINTS,
    POSES,
    RANDOM_SEED,
    SEED_NOT_FINITE,
    SOLUTION,
    STEP_WORK,
    STUCK,
    TABLE_Q,
    TABLE_SPACING,
    TARGET_NOT_USABLE,
    TIP_FEATURES,
    TIP_FRAMES,
    TOLERANCES,
    WEIGHT,
)
from .contacts import clear_contacts, contacts
from .context import new_context, record_fields
from .fitting import fit_workspace, floating_root, place_free_base
from .jit import allocating_kernel, batch_kernel, inline_kernel, kernel, monotonic_ns, reduction_kernel
from .joints import _usable_seed, configuration_from_draws, largest_move, nearest_turn, seed_displacement
from .linalg import manipulability
from .rotations import interpolate_pose
from .spatial import forward_kinematics
from .tasks import POSE_OK, check_poses, evaluation_workspace, jacobian_at, tip_points

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
#: Restarts around the seed when a solution moved a joint more than ``max_joint_move``.
NEAR_RESTARTS = 12
#: Solutions compared before the one with the smallest largest move is returned, when none moves
#: less than ``max_joint_move`` (the budget ends the comparison earlier).
NEAR_CANDIDATES = 16
#: The continuation (see :func:`_attempt`) cuts the step from the seed's tip poses to the targets
#: into 2 pieces, then 4, ... up to this many, before the restarts around the seed.
CONTINUATION_PIECES = 8
#: Answers in collision an attempt without the pairs may find before attempts keep them (see
#: :func:`search_in`): another start often finds another, collision-free, branch quicker.
COLLIDING_ANSWERS = 4
#: Restarts in a row that keep the joints moving the tips the last attempt reached and draw the
#: others anew (several tips: the limbs of a tree converge apart), before a full restart.
PARTIAL_RESTARTS = 2
#: A tip counts as reached for a partial restart within this many times its tolerances: an
#: attempt ended by another tip's limits or local minimum leaves the others close, not exact
#: (the damping their common step shares), and the next attempt finishes them.
SETTLED_TOLERANCES = 100.0
#: Restarts in collision passed over per search at most (each costs an FK and the pairs'
#: distances, ~1-5 us); past that, colliding restarts are tried as they come.
SKIPPED_STARTS = 1000

#: What :func:`_attempt_from_start` returns for a start it passed over (in collision): no attempt.
PASSED_OVER = -3
#: Slots of a search's state (:func:`search_workspace`'s int64 array at ``STATE``; a flag is 0 or
#: 1): what the parts of :func:`search_in` share from one start to the next.
(
    ATTEMPTS_MADE,  # attempts run (a start passed over is none)
    ITERATIONS_SPENT,  # their iterations
    BEST_OUTCOME,  # the outcome of the best end so far (see _rank_end)
    DEADLINE_HIT,  # flag: the deadline ended the search
    FOUND_IN_COLLISION,  # flag: an attempt found the tips within tolerance only in collision
    STARTS_SKIPPED,  # restarts in collision passed over (SKIPPED_STARTS at most)
    ANSWERS_IN_COLLISION,  # answers found in collision without the pairs (up to COLLIDING_ANSWERS)
    CANDIDATES_FOUND,  # solutions compared by their largest move (up to NEAR_CANDIDATES)
    SEED_PENDING,  # flag: the first start was a table entry, the seed comes next
    CONTINUATION_DUE,  # flag: the continuation comes next, before any restart
    CONTINUING,  # flag: this attempt is the continuation
    GENERATOR_SEEDED,  # flag: numba's generator is seeded (at the first draw)
    PARTIAL_RESTARTS_MADE,  # partial restarts in a row (PARTIAL_RESTARTS at most)
    NEAR_RESTARTS_MADE,  # restarts around the seed (NEAR_RESTARTS at most)
    CELLS_PROBED,  # the table's cells probed (-1: not yet)
    ENTRIES_RANKED,  # the table's nearest entries ranked (-1: not yet)
    NEXT_ENTRY,  # the next of them to start from
) = range(17)
STATE_SLOTS = 17
#: Slots of :func:`search_workspace` (the search's state at ``STATE``).
(
    CLIPPED, START, ATTEMPT_Q, TARGET_FEATURES, SEED_FEATURES, DRAWS, DISPLACEMENT, DISTANCES, NEAREST,
    NEAREST_DISTANCE, NORMS, ATTEMPT_SPACE, CELL_DISTANCES, PROBED, PROBED_DISTANCE, KEEP, LIMB_TARGET,
    LIMB_DISTANCES, LIMB_CHOSEN, PIECES_SPACE, FIT_SPACE, STATE,
) = range(22)  # fmt: skip
#: Slots of the continuation's pieces space (``PIECES_SPACE``, see :func:`_attempt`).
PIECES_SEED_POINTS, PIECES_TARGETS, PIECES_RELATIVE, PIECES_ROTATION_VECTOR = range(4)
#: Slots of ``table_search`` (see :func:`search_in`): the targets' features, :func:`probe_table`'s
#: and :func:`rank_probed`'s arrays (the workspace's of the same names).
(
    PROBE_TARGET_FEATURES, PROBE_CELL_DISTANCES, PROBE_PROBED, PROBE_PROBED_DISTANCE, PROBE_DISTANCES,
    PROBE_NEAREST, PROBE_NEAREST_DISTANCE,
) = range(7)  # fmt: skip
#: Slots of ``restart_space`` (see :func:`_next_start`).
(
    RESTART_DRAWS, RESTART_KEEP, RESTART_LIMB_TARGET, RESTART_LIMB_DISTANCES, RESTART_CHOSEN,
    RESTART_EVALUATION, RESTART_FIT,
) = range(7)  # fmt: skip


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


@kernel
def _fk_features(tree, task, feature_spec, feature_scale, q, space, out):
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
        _fk_features(tree, task, feature_spec, feature_scale, table_q[s], space, features[s])
    return features


@kernel
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


@kernel
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


@kernel
def penetration_at(tree, collision, q, space):
    """The collision pairs' penetration (summed overlap [m], 0 when collision-free) at ``q``, in
    ``space`` (an :func:`~ik_node.compiled.tasks.evaluation_workspace`), measured at margin 0
    (the same value, less work); 0 without pairs, at no cost (``collision=None``: nothing
    compiled)."""
    if collision is None:
        return 0.0
    if collision[PAIRS].shape[0] == 0:
        return 0.0
    forward_kinematics(tree[FRAMES], tree[FRAME_LINKS], q, space[POSES])
    clear_contacts(collision, space[CONTACT])
    return contacts(collision, 0.0, space[POSES], space[CONTACT])


@kernel
def _has_pairs(collision):
    """Whether ``collision`` (a feature switch: None without collision checks) has pairs."""
    if collision is None:
        return False
    return collision[PAIRS].shape[0] > 0


@kernel
def _settled(norms, tolerances, tip):
    """Whether ``tip`` lies within ``SETTLED_TOLERANCES`` times its tolerances (``norms`` (T, 2))."""
    near = SETTLED_TOLERANCES
    return norms[tip, 0] <= near * tolerances[tip, 0] and norms[tip, 1] <= near * tolerances[tip, 1]


@kernel
def keep_settled_paths(tree, task, table, joints, norms, free_base, keep):
    """Mark in ``keep`` (nv,) the coordinates a partial restart keeps: those on the path of a tip
    settled (:func:`_settled`; ``norms`` (T, 2): an attempt's end) and those of multi-DOF joints
    (a free base moves every tip); with ``free_base`` (a floating joint at the tree's base),
    every coordinate but the limbs' (``table``'s ``LIMB_*``) of the tips not settled. Returns
    how many coordinates a partial restart would draw anew (unmarked and not locked); without
    ``free_base``, 0 when no tip is settled."""
    tolerances, path_starts, path_coordinates = task[TOLERANCES], task[PATH_STARTS], task[PATH_COORDINATES]
    limb_starts, limb_coordinates = table[LIMB_STARTS], table[LIMB_COORDINATES]
    coordinates = tree[COORDINATES]
    settled = free_base
    for j in range(keep.shape[0]):
        keep[j] = free_base or coordinates[j] < 0
    for tip in range(norms.shape[0]):
        if free_base and not _settled(norms, tolerances, tip):
            for k in range(limb_starts[tip], limb_starts[tip + 1]):
                keep[limb_coordinates[k]] = False
        elif not free_base and _settled(norms, tolerances, tip):
            settled = True
            for k in range(path_starts[tip], path_starts[tip + 1]):
                keep[path_coordinates[k]] = True
    if not settled:
        return 0
    drawn = 0
    for j in range(keep.shape[0]):
        if not keep[j] and joints[j, WEIGHT] > 0.0:
            drawn += 1
    return drawn


@kernel
def _squared_distance(a, b):
    value = 0.0
    for i in range(a.shape[0]):
        value += (a[i] - b[i]) * (a[i] - b[i])
    return value


@kernel
def _score(tree, task, joints, q, seed, norms, converged, penetration, solve_type, displacement, workspace):
    """Rank of an attempt's end (lower is better): converged ones first (``(0, x)``), by solve
    type (``speed``, ``solve_type=None``: 0, and nothing else compiled; ``distance``: the
    weighted norm of the move, see below;
    ``manipulability``: ``-sqrt(det(J J^T))``, Yoshikawa 1985); unconverged ones by their summed
    error norms, collision-free ones (``(1, x)``) before those in collision (``(1.5, x)``).

    ``distance`` is ``sum_j d_j^2 / w_j`` over the tangent coordinates with ``w_j > 0``
    (:func:`seed_displacement` ``d`` from the seed): the norm ``dq^T W^-1 dq`` that the damped step
    ``dq = W J^T (J W J^T + lambda^2 I)^-1 e`` minimises among the moves with ``J dq = e`` (as
    ``lambda -> 0``; the weighted least-norm solution), so a stronger joint (larger ``w``, which
    the step moves more) costs less to move. A locked joint (``w = 0``) stays at the seed: no
    term. ``workspace``: an :func:`~ik_node.compiled.attempt.attempt_workspace` not in use."""
    if not converged:
        return (1.0 if penetration <= 0.0 else 1.5), norms.sum()
    if solve_type is None:
        return 0.0, 0.0
    if solve_type == DISTANCE:
        seed_displacement(tree, joints, seed, q, displacement)
        value = 0.0
        for j in range(joints.shape[0]):
            weight = joints[j, WEIGHT]
            if weight > 0.0:
                value += displacement[j] * displacement[j] / weight
        return 0.0, value
    if solve_type == MANIPULABILITY:
        space, jacobian, work = workspace[EVALUATION], workspace[JACOBIAN], workspace[STEP_WORK]
        forward_kinematics(tree[FRAMES], tree[FRAME_LINKS], q, space[POSES])
        tip_points(space[POSES], task, space[POINTS])
        jacobian_at(tree, task, space, jacobian)
        return 0.0, -manipulability(jacobian, work[GRAM], work[SOLUTION])
    return 0.0, 0.0


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


@kernel
def _piece_targets(seed_points, targets, fraction, relative, rotation_vector, out):
    """The targets (T, 4, 4) of a piece of the step from ``seed_points`` to ``targets`` ending
    ``fraction`` of the way (:func:`interpolate_pose`; at 1, ``targets`` themselves), into
    ``out``."""
    for tip in range(targets.shape[0]):
        if fraction >= 1.0:
            for i in range(4):
                for j in range(4):
                    out[tip, i, j] = targets[tip, i, j]
        else:
            interpolate_pose(seed_points[tip], targets[tip], fraction, relative, rotation_vector, out[tip])


@inline_kernel
def _attempt(
    continuing, attempt_space, pieces_space, tree, task, joints, targets, settings, method, posture,
    collision, seed, primary_rows, max_joint_move, deadline, q, norms, displacement,
):  # fmt: skip
    """One attempt of :func:`search_in`: :func:`run_attempt` from ``q``, or with ``continuing``
    the continuation from ``seed``. Returns (outcome, iterations) as :func:`run_attempt`, ``q``
    and ``norms`` those of its last attempt.

    The continuation follows the step from ``seed`` to ``targets`` in pieces, so that the answer
    stays on the seed's branch where one attempt over the whole step lands on another
    (natural-parameter continuation, Allgower & Georg 1990, ch. 1): the tips' controlled points
    go from their poses at the seed to the targets along :func:`interpolate_pose`, cut into 2,
    4, ... up to ``CONTINUATION_PIECES`` equal pieces; each piece's end is solved by one attempt
    from the previous piece's answer (the first from the seed), the last one's being ``targets``.
    A cut is given up at the first piece that does not converge or moves a joint farther than
    ``max_joint_move`` [rad or m] from the seed (:func:`largest_move`), and the next, finer,
    begins from the seed again; it ends ``CONVERGED`` within ``max_joint_move`` once a cut
    succeeds; else not converged (``q`` and ``norms`` may be a piece's: :func:`search_in` keeps
    no failed continuation as its answer). One call of :func:`run_attempt` for both, inlined
    at one call site of :func:`search_in` (the default problem's cold compile: +3 s; a copy at
    each of its three sites had cost +10 s, see docs/solver.md). ``pieces_space``: the seed's
    tip points and the pieces' targets (T, 4, 4) each, a relative rotation (3, 3), a rotation
    vector (3,); ``displacement`` (nv,): work space."""
    seed_points, piece_targets = pieces_space[PIECES_SEED_POINTS], pieces_space[PIECES_TARGETS]
    relative, rotation_vector = pieces_space[PIECES_RELATIVE], pieces_space[PIECES_ROTATION_VECTOR]
    cut, finest = 1, 1
    if continuing:
        poses = attempt_space[EVALUATION][POSES]
        forward_kinematics(tree[FRAMES], tree[FRAME_LINKS], seed, poses)
        tip_points(poses, task, seed_points)
        cut, finest = 2, CONTINUATION_PIECES
    outcome, iterations, final = ITERATIONS, 0, True
    while cut <= finest:
        if continuing:
            for i in range(seed.shape[0]):
                q[i] = seed[i]
        for piece in range(1, cut + 1):
            final = piece == cut
            _piece_targets(seed_points, targets, piece / cut, relative, rotation_vector, piece_targets)
            outcome, used = run_attempt(
                attempt_space, tree, task, joints, piece_targets, settings, method, posture, collision, seed,
                primary_rows, deadline, q, norms,
            )  # fmt: skip
            iterations += used
            if outcome != CONVERGED or (
                continuing and largest_move(tree, joints, q, seed, displacement) > max_joint_move
            ):
                break
        if not continuing or outcome == DEADLINE:
            break
        if (
            final
            and outcome == CONVERGED
            and largest_move(tree, joints, q, seed, displacement) <= max_joint_move
        ):
            break
        cut *= 2
    if not final and outcome != DEADLINE:  # (stopped at a piece: q and norms are that piece's)
        outcome = STUCK
    return outcome, iterations


@inline_kernel
def search_workspace(tree, task, joints, table, collision, nq):
    """Work arrays of :func:`search_in` for ``nq`` configuration coordinates, made once per solver
    or batch slice in its :func:`search_context` and used by every search there: (the clipped seed,
    the next start, the attempt's q (nq,) each; the target's and the seed's features (F,); draws
    and displacement (nv,); the probed cells' entries' distances (P times the largest cell); the
    nearest entries (K,) int and their distances (K,); norms (T, 2); the attempts'
    :func:`~ik_node.compiled.attempt.attempt_workspace`; the index's cell distances (C,), the
    probed cells (P,) int and their distances (P,); the coordinates a partial restart keeps (nv,)
    bool; a limb's features (12,), the table's distances from them (S,) and the entries ranked
    nearest (``PARTIAL_RESTARTS``,) int with their distances; the continuation's pieces space; the
    free base's :func:`~ik_node.compiled.fitting.fit_workspace`; the search's state
    (``STATE_SLOTS``,) int, slot ``STATE``). Their size does not grow with the table's. A search
    writes each before it reads it.

    Inlined into :func:`search_context`, its one caller, which counts references (so these arrays
    may be made there). Not for a caller without reference counting."""
    features, table_size, dof = table[FEATURE_SPEC].shape[0], table[TABLE_Q].shape[0], joints.shape[0]
    cell_starts = table[CELL_STARTS]
    tips = task[TIP_FRAMES].shape[0]
    cells = cell_starts.shape[0] - 1
    restarts = min(TABLE_RESTARTS, table_size)
    probed = cells if table_size <= EVERY_CELL_UP_TO else min(PROBED_CELLS, cells)
    largest_cell = 0
    for cell in range(cells):
        largest_cell = max(largest_cell, cell_starts[cell + 1] - cell_starts[cell])
    return (
        np.empty(nq),  # CLIPPED
        np.empty(nq),  # START
        np.empty(nq),  # ATTEMPT_Q
        np.empty(features),  # TARGET_FEATURES
        np.empty(features),  # SEED_FEATURES
        np.empty(dof),  # DRAWS
        np.empty(dof),  # DISPLACEMENT
        np.empty(probed * largest_cell),  # DISTANCES
        np.empty(restarts, dtype=np.int64),  # NEAREST
        np.empty(restarts),  # NEAREST_DISTANCE
        np.empty((tips, 2)),  # NORMS
        attempt_workspace(tree, task, collision, dof, nq),  # ATTEMPT_SPACE
        np.empty(cells),  # CELL_DISTANCES
        np.empty(probed, dtype=np.int64),  # PROBED
        np.empty(probed),  # PROBED_DISTANCE
        np.empty(dof, dtype=np.bool_),  # KEEP
        np.empty(TIP_FEATURES),  # LIMB_TARGET
        np.empty(table[LIMB_FEATURES].shape[2]),  # LIMB_DISTANCES
        (np.empty(PARTIAL_RESTARTS, dtype=np.int64), np.empty(PARTIAL_RESTARTS)),  # LIMB_CHOSEN
        (  # PIECES_SPACE
            np.empty((tips, 4, 4)),  # PIECES_SEED_POINTS
            np.empty((tips, 4, 4)),  # PIECES_TARGETS
            np.empty((3, 3)),  # PIECES_RELATIVE
            np.empty(3),  # PIECES_ROTATION_VECTOR
        ),
        fit_workspace(tips),  # FIT_SPACE
        np.empty(STATE_SLOTS, dtype=np.int64),  # STATE
    )


@inline_kernel
def _first_start(
    tree, task, table, targets, seed, evaluation_space, table_search, state, start, seed_features
):
    """The first start (into ``start``) and the search's ``state`` at its beginning.

    The first start is the seed; with one tip, when the seed's tip pose lies farther from the
    targets than the table's typical spacing (by :func:`pose_features`) and the nearest entry
    :func:`probe_table` finds lies nearer, that entry, with the seed next (``SEED_PENDING``). The
    targets' features and the cells probed are kept for the restarts from the table
    (:func:`_table_start`): in ``table_search``, their count in ``state[CELLS_PROBED]`` (-1: not
    probed yet). ``evaluation_space``: an :func:`~ik_node.compiled.tasks.evaluation_workspace`."""
    feature_spec, feature_scale = table[FEATURE_SPEC], table[FEATURE_SCALE]
    table_q, table_spacing = table[TABLE_Q], table[TABLE_SPACING]
    target_features, cell_distances = table_search[PROBE_TARGET_FEATURES], table_search[PROBE_CELL_DISTANCES]
    probed, probed_distance = table_search[PROBE_PROBED], table_search[PROBE_PROBED_DISTANCE]
    distances = table_search[PROBE_DISTANCES]
    for slot in range(STATE_SLOTS):
        state[slot] = 0
    state[BEST_OUTCOME] = ITERATIONS
    state[CELLS_PROBED] = -1
    state[ENTRIES_RANKED] = -1
    for i in range(seed.shape[0]):
        start[i] = seed[i]
    table_size = table_q.shape[0]
    if table_size > 1:
        pose_features(targets, feature_spec, feature_scale, target_features)
    if task[TIP_FRAMES].shape[0] == 1 and table_size > 1:
        _fk_features(tree, task, feature_spec, feature_scale, seed, evaluation_space, seed_features)
        seed_distance = _squared_distance(seed_features, target_features)
        if seed_distance > table_spacing * table_spacing:
            first, first_distance, cells = probe_table(
                table, target_features, cell_distances, probed, probed_distance, distances
            )  # (ranked only if a restart needs them)
            state[CELLS_PROBED] = cells
            if first_distance < seed_distance:
                for i in range(seed.shape[0]):
                    start[i] = table_q[first, i]
                state[NEXT_ENTRY] = 1
                state[SEED_PENDING] = 1


@inline_kernel
def _attempt_from_start(
    attempt_space, pieces_space, tree, task, joints, targets, settings, method, solve_type, posture,
    collision, seed, primary_rows, deadline, start, state, q, norms, displacement,
):  # fmt: skip
    """One attempt from ``start`` (:func:`_attempt`: the continuation while
    ``state[CONTINUING]``), its end into ``q`` and ``norms``, counted in ``state``. Returns
    (outcome, the penetration of its end: :func:`penetration_at`, 0 when converged), or
    (``PASSED_OVER``, 0) for a start passed over. Inlined at its one call site, with the one
    inlined copy of :func:`_attempt`.

    With collision pairs, restarts in collision (table entries and random configurations, not
    the first start nor the continuation) are passed over (``SKIPPED_STARTS`` per search at most),
    and attempts are first run without the pairs (``collision=None``: an IK search's path need
    not be collision-free, only its answer), their answers measured. A collision-free answer
    counts as converged; one in collision ends its attempt as ``COLLISION`` (``FOUND_IN_COLLISION``),
    until ``COLLIDING_ANSWERS`` such answers: that attempt runs again from its start with the
    collision rows and the acceptance rule of :func:`run_attempt` (counted once, its iterations
    both times), as do all after it. ``displacement`` (nv,): work space."""
    max_joint_move = settings[MAX_JOINT_MOVE]
    attempt_settings = (  # (settings, with run_attempt's posture bound: with speed only)
        settings[MIN_DAMPING],  # MIN_DAMPING
        settings[MAX_ITERATIONS],  # MAX_ITERATIONS
        settings[MAX_ATTEMPTS],  # MAX_ATTEMPTS
        settings[RANDOM_SEED],  # RANDOM_SEED
        max_joint_move if solve_type is None else 0.0,  # MAX_JOINT_MOVE
    )
    continuing = state[CONTINUING] == 1
    if (
        state[ATTEMPTS_MADE] > 0
        and not continuing
        and state[STARTS_SKIPPED] < SKIPPED_STARTS
        and penetration_at(tree, collision, start, attempt_space[CANDIDATE_EVALUATION]) > 0.0
    ):
        state[STARTS_SKIPPED] += 1
        return PASSED_OVER, 0.0
    # (the continuation keeps the pairs apart: one inlined copy of it, for the compile's sake)
    unchecked = _has_pairs(collision) and state[ANSWERS_IN_COLLISION] < COLLIDING_ANSWERS and not continuing
    for i in range(seed.shape[0]):
        q[i] = start[i]
    if unchecked:
        outcome, used = run_attempt(
            attempt_space, tree, task, joints, targets, attempt_settings, method, posture, None, seed,
            primary_rows, deadline, q, norms,
        )  # fmt: skip
    else:
        outcome, used = _attempt(
            continuing, attempt_space, pieces_space, tree, task, joints, targets, attempt_settings, method,
            posture, collision, seed, primary_rows, max_joint_move, deadline, q, norms, displacement,
        )  # fmt: skip
    state[ITERATIONS_SPENT] += used
    penetration = -1.0  # (not measured yet)
    if unchecked and outcome == CONVERGED:
        penetration = penetration_at(tree, collision, q, attempt_space[CANDIDATE_EVALUATION])
    if penetration > 0.0:
        state[ANSWERS_IN_COLLISION] += 1
        state[FOUND_IN_COLLISION] = 1
        outcome = COLLISION
        if state[ANSWERS_IN_COLLISION] == COLLIDING_ANSWERS:  # again, keeping the pairs apart
            for i in range(seed.shape[0]):
                q[i] = start[i]
            outcome, used = run_attempt(
                attempt_space, tree, task, joints, targets, attempt_settings, method, posture, collision,
                seed, primary_rows, deadline, q, norms,
            )  # fmt: skip
            state[ITERATIONS_SPENT] += used
            penetration = -1.0
    state[ATTEMPTS_MADE] += 1
    if outcome == COLLISION:
        state[FOUND_IN_COLLISION] = 1
    if outcome == CONVERGED:
        return outcome, 0.0
    if penetration < 0.0:
        penetration = penetration_at(tree, collision, q, attempt_space[CANDIDATE_EVALUATION])
    return outcome, penetration


@inline_kernel
def _rank_end(
    tree, task, joints, seed, q, norms, outcome, penetration, solve_type, max_joint_move, attempt_space,
    state, displacement,
):  # fmt: skip
    """Acceptance: the (rank, value) of an attempt's end (``q``, ``norms``, ``outcome``,
    ``penetration``: :func:`_attempt_from_start`); the search keeps the least, the first among
    equals. :func:`_score`'s, except: a continuation that did not converge never counts (rank 3:
    its q and norms may be a piece's, not the targets'); a start passed over neither (infinite).

    With ``max_joint_move`` > 0 [rad or m] and ``speed``, a solution's value is its largest
    move from the seed (:func:`largest_move`; ``CANDIDATES_FOUND`` counts them), so that the
    search keeps the solution with the smallest largest move (ssik's criterion); with other solve
    types, a solution beyond ``max_joint_move`` ranks 0.5: after every solution within it, before
    any unconverged end. ``attempt_space``: an attempt workspace not in use; ``displacement``
    (nv,): work space."""
    if outcome == PASSED_OVER:
        return math.inf, 0.0
    converged = outcome == CONVERGED
    rank, value = _score(
        tree, task, joints, q, seed, norms, converged, penetration, solve_type, displacement, attempt_space
    )
    if state[CONTINUING] == 1 and not converged:
        rank = 3.0
    if converged and solve_type is None and max_joint_move > 0.0:
        value = largest_move(tree, joints, q, seed, displacement)
        state[CANDIDATES_FOUND] += 1
    elif (
        converged
        and max_joint_move > 0.0
        and largest_move(tree, joints, q, seed, displacement) > max_joint_move
    ):
        rank = 0.5
    return rank, value


@inline_kernel
def _stops(outcome, value, solve_type, max_joint_move, max_attempts, deadline, state):
    """The stop rule, after each start (``outcome`` and ``value``: its end's, see
    :func:`_rank_end`): an attempt ended by the deadline [ns], or the clock past it
    (``DEADLINE_HIT``); with ``speed``, a solution within ``max_joint_move`` (when > 0), or
    ``NEAR_CANDIDATES`` solutions beyond it; ``max_attempts`` attempts (< 0: unbounded). Other
    solve types compare every solution until the deadline or ``max_attempts``."""
    if outcome != PASSED_OVER:
        if outcome == DEADLINE:
            state[DEADLINE_HIT] = 1
            return True
        solution = outcome == CONVERGED and solve_type is None
        if solution and (max_joint_move <= 0.0 or value <= max_joint_move):
            return True
        if solution and max_joint_move > 0.0 and state[CANDIDATES_FOUND] >= NEAR_CANDIDATES:
            return True
        if max_attempts >= 0 and state[ATTEMPTS_MADE] >= max_attempts:
            return True
    if deadline != NO_DEADLINE and monotonic_ns() >= deadline:
        state[DEADLINE_HIT] = 1
        return True
    return False


@inline_kernel
def _partial_restart(tree, task, joints, table, targets, outcome, q, norms, restart_space, state, start):
    """Whether the next start is a partial restart, and if so that start (into ``start``): with
    several tips, after an attempt that ended (``outcome``, ``q``, ``norms``) with some tips
    within ``SETTLED_TOLERANCES`` times their tolerances and others not, up to
    ``PARTIAL_RESTARTS`` in a row. Its end, with the joints that move only the others drawn anew
    (:func:`keep_settled_paths`; the draws made); at the first of a row, each such limb placed
    from the limb table (:func:`place_limbs`). The limbs of a tree converge apart, and a full
    restart would need every limb to land in a good basin at once (the chance a product over
    the limbs).

    On a free base (a floating joint at the tree's base: :func:`floating_root`), whether or not
    a tip settled: its end with only the limbs of the tips not settled placed anew, from the
    limb table's nearest entry at the first of a row, the next nearest at the second, ...: the
    limbs' joints decide the basin there (a solve from the targets' own limb joints and the rest
    posture's base, legs and torso converges where one from the rest posture does not), while
    the base and the joints the tips share, which the end has carried toward the targets, are
    better kept than drawn anew. ``restart_space``: see :func:`_next_start`."""
    draws, keep = restart_space[RESTART_DRAWS], restart_space[RESTART_KEEP]
    limb_target, limb_distances = restart_space[RESTART_LIMB_TARGET], restart_space[RESTART_LIMB_DISTANCES]
    poses, chosen = restart_space[RESTART_EVALUATION][POSES], restart_space[RESTART_CHOSEN]
    free_base = floating_root(tree[FRAME_LINKS]) >= 0
    partial = (
        outcome != PASSED_OVER
        and outcome != CONVERGED
        and task[TIP_FRAMES].shape[0] > 1
        and state[PARTIAL_RESTARTS_MADE] < PARTIAL_RESTARTS
        and keep_settled_paths(tree, task, table, joints, norms, free_base, keep) > 0
    )
    if not partial:
        return False
    configuration_from_draws(tree, joints, q, draws, -1.0, start, keep)
    rank = state[PARTIAL_RESTARTS_MADE]
    if (rank == 0 or free_base) and limb_distances.shape[0] > 1:
        place_limbs(tree, task, table, targets, keep, rank, poses, limb_target, limb_distances, chosen, start)
    state[PARTIAL_RESTARTS_MADE] += 1
    return True


@inline_kernel
def _table_start(table, table_search, state, start):
    """Whether a seed-table entry is the next start, and if so that start (into ``start``): the
    ``TABLE_RESTARTS`` entries nearest the targets (by :func:`pose_features`) among those of the
    ``PROBED_CELLS`` cells of the table's index nearest them (:func:`probe_table`; every cell for
    a table of at most ``EVERY_CELL_UP_TO``), nearest first, each once. They are ranked
    (:func:`rank_probed`; ``ENTRIES_RANKED``) when a restart first needs them. ``table_search``:
    see :func:`search_in`."""
    table_q = table[TABLE_Q]
    target_features, cell_distances = table_search[PROBE_TARGET_FEATURES], table_search[PROBE_CELL_DISTANCES]
    probed, probed_distance = table_search[PROBE_PROBED], table_search[PROBE_PROBED_DISTANCE]
    distances, nearest = table_search[PROBE_DISTANCES], table_search[PROBE_NEAREST]
    nearest_distance = table_search[PROBE_NEAREST_DISTANCE]
    if table_q.shape[0] > 1 and state[ENTRIES_RANKED] < 0:
        if state[CELLS_PROBED] < 0:
            _, _, cells = probe_table(
                table, target_features, cell_distances, probed, probed_distance, distances
            )
            state[CELLS_PROBED] = cells
        state[ENTRIES_RANKED] = rank_probed(
            table, probed, state[CELLS_PROBED], distances, nearest, nearest_distance
        )
    entry = state[NEXT_ENTRY]
    if entry >= state[ENTRIES_RANKED]:
        return False
    for i in range(start.shape[0]):
        start[i] = table_q[nearest[entry], i]
    state[NEXT_ENTRY] = entry + 1
    return True


@inline_kernel
def _onto_targets(tree, task, table, targets, restart_space, start):
    """A full restart (``start``: a table entry or a random draw) on a free base (a floating
    joint at the tree's base) moved onto the targets: the base by the rigid fit of the tips
    (:func:`place_free_base`), as the table and the draws hold it around the rest posture's or
    the seed's, which a robot with no seed may stand far from; then, where the table has limbs,
    every limb from the limb table's nearest entry seen from where it now hangs
    (:func:`place_limbs`), as the entry's or the draw's limbs reach for where their trunk put the
    targets, not where the moved trunk puts them (TALOS, 5 tips, no seed, 2000 targets: attempts
    beyond 100 iterations 25 -> 15, iterations a solve 14.8 -> 14.2). ``restart_space``: see
    :func:`_next_start`, its coordinates kept all False (every limb placed)."""
    evaluation = restart_space[RESTART_EVALUATION]
    place_free_base(tree, task, targets, evaluation, restart_space[RESTART_FIT], start)
    limb_distances = restart_space[RESTART_LIMB_DISTANCES]
    if floating_root(tree[FRAME_LINKS]) >= 0 and limb_distances.shape[0] > 1:
        place_limbs(
            tree, task, table, targets, restart_space[RESTART_KEEP], FIRST, evaluation[POSES],
            restart_space[RESTART_LIMB_TARGET], limb_distances, restart_space[RESTART_CHOSEN], start,
        )  # fmt: skip


@inline_kernel
def _next_start(
    tree, task, joints, table, targets, seed, settings, solve_type, outcome, q, norms, restart_space,
    table_search, state, start,
):  # fmt: skip
    """The next start (into ``start``), after an attempt that ended with ``outcome`` (``q``,
    ``norms``): the seed after a table entry tried first (``SEED_PENDING``, see
    :func:`_first_start`); the continuation (``CONTINUATION_DUE``: with ``max_joint_move`` > 0
    and no task priority, after the attempt from the seed and before any restart; from the seed,
    see :func:`_attempt`). Else a restart, from draws of numba's generator (seeded with
    ``random_seed`` at the first draw: 1 us a search saved otherwise), the first that applies of:
    a partial restart (:func:`_partial_restart`); with ``speed`` and ``max_joint_move`` > 0, up
    to ``NEAR_RESTARTS`` around the seed, within a box that doubles from ``max_joint_move``
    every second one (:func:`configuration_from_draws`); the table's nearest entries
    (:func:`_table_start`); random configurations around the seed. The last two place a free
    base and its limbs onto the targets (:func:`_onto_targets`).

    ``restart_space``: the draws (nv,), the coordinates a restart keeps (nv,) bool, a limb's
    features (12,), the limb table's distances from them (S,) and :func:`place_limbs`'s ranked
    entries, an evaluation workspace (its poses and points), :func:`fit_workspace`."""
    draws, keep = restart_space[RESTART_DRAWS], restart_space[RESTART_KEEP]
    max_joint_move = settings[MAX_JOINT_MOVE]
    state[CONTINUING] = 0
    if state[SEED_PENDING] == 1 or state[CONTINUATION_DUE] == 1:
        if state[SEED_PENDING] == 1:
            state[SEED_PENDING] = 0
        else:
            state[CONTINUATION_DUE] = 0
            state[CONTINUING] = 1
        for i in range(seed.shape[0]):
            start[i] = seed[i]
        return
    if state[GENERATOR_SEEDED] == 0:
        np.random.seed(settings[RANDOM_SEED])
        state[GENERATOR_SEEDED] = 1
    for j in range(joints.shape[0]):
        draws[j] = np.random.random()
    if _partial_restart(tree, task, joints, table, targets, outcome, q, norms, restart_space, state, start):
        return
    state[PARTIAL_RESTARTS_MADE] = 0
    for j in range(joints.shape[0]):  # (every coordinate drawn)
        keep[j] = False
    near_restarts = state[NEAR_RESTARTS_MADE]
    if solve_type is None and max_joint_move > 0.0 and near_restarts < NEAR_RESTARTS:
        box = min(max_joint_move * 2.0 ** (near_restarts // 2), math.pi)
        configuration_from_draws(tree, joints, seed, draws, box, start, keep)
        state[NEAR_RESTARTS_MADE] = near_restarts + 1
        return
    if not _table_start(table, table_search, state, start):
        configuration_from_draws(tree, joints, seed, draws, -1.0, start, keep)
    _onto_targets(tree, task, table, targets, restart_space, start)


@inline_kernel
def _report(tree, joints, seed, max_joint_move, state, displacement, q_out):
    """The search's outcome, from its best end (``q_out``; ``state[BEST_OUTCOME]``), whose joints
    that turn freely are put at the turn nearest the seed (:func:`nearest_turn`): ``COLLISION``
    when none converged and some attempt found the tips within tolerance only in collision
    (``FOUND_IN_COLLISION``); ``JOINT_MOVE`` for a solution that moves a joint farther than
    ``max_joint_move`` (> 0) from the seed (:func:`largest_move`: none within it was found).
    ``displacement`` (nv,): work space."""
    coordinates = tree[COORDINATES]
    for j in range(joints.shape[0]):
        c = coordinates[j]
        if c >= 0:
            q_out[c] = nearest_turn(q_out[c], seed[c], joints[j])
    outcome = state[BEST_OUTCOME]
    if state[FOUND_IN_COLLISION] == 1 and outcome != CONVERGED:
        return COLLISION
    if outcome == CONVERGED and max_joint_move > 0.0:
        if largest_move(tree, joints, q_out, seed, displacement) > max_joint_move:
            return JOINT_MOVE
    return outcome


@kernel
def search_in(
    context, targets, seed, deadline, primary_rows, q_out, norms_out, settings, method, solve_type, posture,
    collision,
):  # fmt: skip
    """Attempts (:func:`~ik_node.compiled.attempt.run_attempt`) from restarts until the stop rule
    ends the search; the best end goes to ``q_out`` and ``norms_out``. Returns (outcome,
    iterations, attempts, deadline reached): the outcome is :func:`_report`'s, or
    ``TARGET_NOT_USABLE`` for a target that is no rigid pose (:func:`check_poses`: one check for
    every caller, without a call of its own), ``SEED_NOT_FINITE`` for a seed with NaN, infinity
    or a zero quaternion. The seed is clipped into the limits, its quaternions normalised.

    One loop (the shape of Robotics Toolbox's ``_IK_loop``), its rules named: the first start
    (:func:`_first_start`); from each start an attempt (:func:`_attempt_from_start`), its
    acceptance (:func:`_rank_end`; the least (rank, value) so far is kept), the stop rule
    (:func:`_stops`: a solution with ``speed``, the deadline [ns], ``max_attempts``) and the next
    start (:func:`_next_start`); the report. They share ``state`` (slots ``ATTEMPTS_MADE`` ...
    ``NEXT_ENTRY``) and are inlined, one call site each (a kernel of its own would compile its
    callees once more), given the arrays they use rather than the whole ``workspace``;
    ``table_search``: the targets' features (F,), :func:`probe_table`'s and :func:`rank_probed`'s
    arrays.

    ``primary_rows`` > 0: task priority in every attempt (see :func:`run_attempt`; with
    ``max_attempts`` 1, one attempt from the seed). ``max_joint_move`` > 0 [rad or m] (no branch
    flips): a solution that moves a joint farther from the seed never counts as converged.
    ``method``, ``solve_type``, ``posture``, ``collision``: the feature switches (see
    :mod:`.bundles`; None: ``dls``, ``speed``, no posture, no collision checks). ``context``:
    :func:`search_context`'s (the bundles and the :func:`search_workspace`), its fields borrowed
    (:func:`~.context.record_fields`: no reference counted per call).
    """
    tree, task, joints, table, workspace = record_fields(context)
    max_attempts, max_joint_move = settings[MAX_ATTEMPTS], settings[MAX_JOINT_MOVE]
    clipped, start, q = workspace[CLIPPED], workspace[START], workspace[ATTEMPT_Q]
    target_features, seed_features = workspace[TARGET_FEATURES], workspace[SEED_FEATURES]
    draws, displacement, distances = workspace[DRAWS], workspace[DISPLACEMENT], workspace[DISTANCES]
    nearest, nearest_distance, norms = workspace[NEAREST], workspace[NEAREST_DISTANCE], workspace[NORMS]
    attempt_space, cell_distances = workspace[ATTEMPT_SPACE], workspace[CELL_DISTANCES]
    probed, probed_distance = workspace[PROBED], workspace[PROBED_DISTANCE]
    keep, limb_target, limb_distances = workspace[KEEP], workspace[LIMB_TARGET], workspace[LIMB_DISTANCES]
    limb_chosen = workspace[LIMB_CHOSEN]
    pieces_space, fit_space, state = workspace[PIECES_SPACE], workspace[FIT_SPACE], workspace[STATE]
    if check_poses(targets, MAX_TARGET_DISTANCE, ORTHONORMAL_TOLERANCE) != POSE_OK:
        return TARGET_NOT_USABLE, 0, 0, False
    if not _usable_seed(tree, joints, seed, displacement, clipped):
        return SEED_NOT_FINITE, 0, 0, False
    seed = clipped
    table_search = (  # (PROBE_TARGET_FEATURES ... PROBE_NEAREST_DISTANCE)
        target_features, cell_distances, probed, probed_distance, distances, nearest, nearest_distance,
    )  # fmt: skip
    evaluation = attempt_space[EVALUATION]
    restart_space = (  # (RESTART_DRAWS ... RESTART_FIT)
        draws, keep, limb_target, limb_distances, limb_chosen, evaluation, fit_space,
    )  # fmt: skip
    _first_start(tree, task, table, targets, seed, evaluation, table_search, state, start, seed_features)
    if max_joint_move > 0.0 and primary_rows == 0:
        state[CONTINUATION_DUE] = 1
    best_rank, best_value = 2.0, 0.0  # (above every end's rank but a failed continuation's)
    while True:
        outcome, penetration = _attempt_from_start(
            attempt_space, pieces_space, tree, task, joints, targets, settings, method, solve_type, posture,
            collision, seed, primary_rows, deadline, start, state, q, norms, displacement,
        )  # fmt: skip
        rank, value = _rank_end(
            tree, task, joints, seed, q, norms, outcome, penetration, solve_type, max_joint_move,
            attempt_space, state, displacement,
        )  # fmt: skip
        if rank < best_rank or (rank == best_rank and value < best_value):
            best_rank, best_value = rank, value
            state[BEST_OUTCOME] = outcome
            for i in range(seed.shape[0]):
                q_out[i] = q[i]
            for tip in range(norms.shape[0]):
                norms_out[tip, 0], norms_out[tip, 1] = norms[tip, 0], norms[tip, 1]
        if _stops(outcome, value, solve_type, max_joint_move, max_attempts, deadline, state):
            break
        _next_start(
            tree, task, joints, table, targets, seed, settings, solve_type, outcome, q, norms, restart_space,
            table_search, state, start,
        )  # fmt: skip
    outcome = _report(tree, joints, seed, max_joint_move, state, displacement, q_out)
    return outcome, state[ITERATIONS_SPENT], state[ATTEMPTS_MADE], state[DEADLINE_HIT] == 1


@allocating_kernel
def search_context(tree, task, joints, table, collision, nq):
    """A :mod:`~.context` record of the bundles ``tree``, ``task``, ``joints``, ``table`` and a
    :func:`search_workspace` for ``nq`` configuration coordinates (and ``collision``'s pairs):
    what :func:`search_many` takes, made once per solver (and per batch slice) and used by every
    call, the work arrays included."""
    workspace = search_workspace(tree, task, joints, table, collision, nq)
    return new_context(tree, task, joints, table, workspace)


@batch_kernel
def search_many(
    context, targets, seeds, timeout_ns, deadline, primary_rows, q_out, norms_out, results, settings, method,
    solve_type, posture, collision,
):  # fmt: skip
    """:func:`search_in` for each of N targets (N, T, 4, 4) from its seed (N, nq), in turn, in
    ``context`` (:func:`search_context`: the bundles and the work arrays, one context per thread),
    without the GIL (:meth:`IKSolver.solve_many` runs slices of a batch on several threads, each
    with a context of its own; :meth:`IKSolver.solve` one target: one compiled entry for both).
    Each target's deadline [ns] is ``deadline`` (``NO_DEADLINE``: none), or ``timeout_ns`` after
    its own start when that comes first (< 0: none). ``results`` (N, ``RESULT_COLUMNS``) receives
    each search's outcome, iterations, attempts and whether the deadline ended it; the other
    arguments are :func:`search_in`'s."""
    for index in range(targets.shape[0]):
        target_deadline = deadline
        if timeout_ns >= 0:
            target_deadline = min(deadline, monotonic_ns() + timeout_ns)
        outcome, iterations, attempts, deadline_reached = search_in(
            context, targets[index], seeds[index], target_deadline, primary_rows, q_out[index],
            norms_out[index], settings, method, solve_type, posture, collision,
        )  # fmt: skip
        results[index, OUTCOME] = outcome
        results[index, ITERATIONS_USED] = iterations
        results[index, ATTEMPTS] = attempts
        results[index, DEADLINE_REACHED] = deadline_reached
