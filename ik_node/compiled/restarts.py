"""Where each attempt of a search starts (:func:`first_start`, then :func:`next_start` after
each attempt): the seed, or first the seed table's entry nearest the targets; the continuation
from the seed; partial restarts that keep the limbs already settled and draw the others anew
(several tips); restarts around the seed (``max_joint_move``); the table's nearest entries; random
configurations; a free base and its limbs placed onto the targets. The rules share the search's
``state`` (:mod:`.bundles`' ``STATE_SLOTS``) with :func:`~.search.search_in`, which runs the
attempts and ranks their ends."""

from __future__ import annotations

import math

import numpy as np

from .bundles import (
    BEST_OUTCOME,
    CELLS_PROBED,
    CONTINUATION_DUE,
    CONTINUING,
    CONVERGED,
    COORDINATES,
    ENTRIES_RANKED,
    FEATURE_SCALE,
    FEATURE_SPEC,
    FRAME_LINKS,
    GENERATOR_SEEDED,
    ITERATIONS,
    LIMB_COORDINATES,
    LIMB_STARTS,
    MAX_JOINT_MOVE,
    NEAR_RESTARTS_MADE,
    NEXT_ENTRY,
    PARTIAL_RESTARTS_MADE,
    PASSED_OVER,
    PATH_COORDINATES,
    PATH_STARTS,
    POSES,
    PROBE_CELL_DISTANCES,
    PROBE_DISTANCES,
    PROBE_NEAREST,
    PROBE_NEAREST_DISTANCE,
    PROBE_PROBED,
    PROBE_PROBED_DISTANCE,
    PROBE_TARGET_FEATURES,
    RANDOM_SEED,
    RESTART_CHOSEN,
    RESTART_DRAWS,
    RESTART_EVALUATION,
    RESTART_FIT,
    RESTART_KEEP,
    RESTART_LIMB_DISTANCES,
    RESTART_LIMB_TARGET,
    SEED_PENDING,
    STATE_SLOTS,
    TABLE_Q,
    TABLE_SPACING,
    TIP_FRAMES,
    TOLERANCES,
    WEIGHT,
)
from .fitting import floating_root, place_free_base
from .jit import inline_kernel, inner_kernel
from .joints import configuration_from_draws
from .table_search import (
    FIRST,
    fk_features,
    place_limbs,
    pose_features,
    probe_table,
    rank_probed,
    squared_distance,
)

#: Restarts around the seed when a solution moved a joint more than ``max_joint_move``.
NEAR_RESTARTS = 12
#: Restarts in a row that keep the joints moving the tips the last attempt reached and draw the
#: others anew (several tips: the limbs of a tree converge apart), before a full restart.
PARTIAL_RESTARTS = 2
#: A tip counts as reached for a partial restart within this many times its tolerances: an
#: attempt ended by another tip's limits or local minimum leaves the others close, not exact
#: (the damping their common step shares), and the next attempt finishes them.
SETTLED_TOLERANCES = 100.0


@inner_kernel
def _settled(norms, tolerances, tip):
    """Whether ``tip`` lies within ``SETTLED_TOLERANCES`` times its tolerances (``norms`` (T, 2))."""
    near = SETTLED_TOLERANCES
    return norms[tip, 0] <= near * tolerances[tip, 0] and norms[tip, 1] <= near * tolerances[tip, 1]


@inner_kernel
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


@inline_kernel
def first_start(
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
        fk_features(tree, task, feature_spec, feature_scale, seed, evaluation_space, seed_features)
        seed_distance = squared_distance(seed_features, target_features)
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
    better kept than drawn anew. ``restart_space``: see :func:`next_start`."""
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
    a table of at most ``EVERY_CELL_UP_TO``; these three: :mod:`.table_search`'s), nearest
    first, each once. They are ranked (:func:`rank_probed`; ``ENTRIES_RANKED``) when a restart
    first needs them. ``table_search``: see :func:`~.search.search_in`."""
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
    :func:`next_start`, its coordinates kept all False (every limb placed)."""
    evaluation = restart_space[RESTART_EVALUATION]
    place_free_base(tree, task, targets, evaluation, restart_space[RESTART_FIT], start)
    limb_distances = restart_space[RESTART_LIMB_DISTANCES]
    if floating_root(tree[FRAME_LINKS]) >= 0 and limb_distances.shape[0] > 1:
        place_limbs(
            tree, task, table, targets, restart_space[RESTART_KEEP], FIRST, evaluation[POSES],
            restart_space[RESTART_LIMB_TARGET], limb_distances, restart_space[RESTART_CHOSEN], start,
        )  # fmt: skip


@inline_kernel
def next_start(
    tree, task, joints, table, targets, seed, tuning, solve_type, outcome, q, norms, restart_space,
    table_search, state, start,
):  # fmt: skip
    """The next start (into ``start``), after an attempt that ended with ``outcome`` (``q``,
    ``norms``): the seed after a table entry tried first (``SEED_PENDING``, see
    :func:`first_start`); the continuation (``CONTINUATION_DUE``: with ``max_joint_move`` > 0
    and no task priority, after the attempt from the seed and before any restart; from the seed,
    see :func:`~.continuation.attempt_in_pieces`). Else a restart, from draws of numba's
    generator (seeded with ``random_seed`` at the first draw: 1 us a search saved otherwise), the
    first that applies of:
    a partial restart (:func:`_partial_restart`); with ``speed`` and ``max_joint_move`` > 0, up
    to ``NEAR_RESTARTS`` around the seed, within a box that doubles from ``max_joint_move``
    every second one (:func:`configuration_from_draws`); the table's nearest entries
    (:func:`_table_start`); random configurations around the seed. The last two place a free
    base and its limbs onto the targets (:func:`_onto_targets`).

    ``restart_space``: the draws (nv,), the coordinates a restart keeps (nv,) bool, a limb's
    features (12,), the limb table's distances from them (S,) and :func:`place_limbs`'s ranked
    entries, an evaluation workspace (its poses and points), :func:`~.fitting.fit_workspace`."""
    draws, keep = restart_space[RESTART_DRAWS], restart_space[RESTART_KEEP]
    max_joint_move = tuning[MAX_JOINT_MOVE]
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
        np.random.seed(tuning[RANDOM_SEED])
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
