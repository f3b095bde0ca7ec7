"""The named bundles the compiled solver passes around, and the codes it shares with Python.

Named bundles: tuples of arrays whose every slot is read by name, ``task[ROWS]`` (numba freezes a
module-level int as a compile-time constant: the same code as ``task[3]``), and built in slot order
by a builder taking keyword arguments (:func:`tree_bundle`, :func:`task_bundle`,
:func:`table_bundle`, :func:`collision_bundle`, :func:`tuning_bundle`; called by
:class:`ik_node.solver.problem.Problem`, :func:`ik_node.solver.search_call.search_arguments` and
the solver's collision task). Each layout is one ordered list of slot constants below:

* ``tree`` (``FRAMES``, ``FRAME_LINKS``, ``SPANS``, ``COORDINATES``): the tree's arrays (see
  ``spatial``) and, per tangent coordinate, the configuration index of a 1-DOF joint's value (-1:
  a coordinate of a multi-DOF joint, which has no limits).
* ``task`` (``TIP_FRAMES``, ``TIP_OFFSETS``, ``TIP_AXIS_KINDS``, ``ROWS``, ``ROW_WEIGHTS``,
  ``TOLERANCES``, ``PATH_STARTS``, ``PATH_COORDINATES``, ``ROW_BANDS``, ``GAZE_AXES``,
  ``RELATIVE_TO``): what to reach. Per tip its pose index, the controlled point (3,) [m, tip
  axes], ``TIP_AXES``, ``BASE_AXES`` or ``GAZE`` (the tip's axis pointing at a target point); per
  task row
  its tip and axis 0-5 of ``[v; w]``, its weight; per tip the position [m] and orientation [rad]
  tolerances; the tangent coordinates that move tip ``t`` (those on its path from the base) are
  ``path_coordinates[path_starts[t]:path_starts[t + 1]]``; per task row the half-width of its
  tolerance band [m or rad] (0: a point target); per tip the unit axis (3,) [tip axes] a gaze
  tip points at its target (zeros for the other tips), and the index of the tip whose
  controlled point's frame its target is in (-1: the base's).
* ``joints`` (nv, ``JOINT_COLUMNS``), per tangent coordinate: ``LOWER``, ``UPPER`` [rad or m;
  infinite for multi-DOF coordinates], ``WEIGHT`` (0 locks), ``REST``, ``SAMPLE_LOWER`` and
  ``SAMPLE_UPPER`` (restart sampling bounds; for multi-DOF coordinates a box around the seed),
  ``WRAPS`` (1.0 for a joint that turns freely: continuous, or revolute over more than a turn:
  sampled over a turn around the seed, returned as the equivalent angle nearest the seed).
* ``table`` (``FEATURE_SPEC``, ``FEATURE_SCALE``, ``TABLE_Q``, ``BLOCKED_FEATURES``,
  ``TABLE_SPACING``, ``BLOCKED_CENTROIDS``, ``CELL_STARTS``, ``LIMB_FRAMES``, ``LIMB_STARTS``,
  ``LIMB_COORDINATES``, ``LIMB_SCALE``, ``LIMB_Q``, ``LIMB_FEATURES``): the seed table, stored
  cell by cell, and its index (see :class:`~ik_node.solver.seed_table.SeedTable` and
  ``table_search.table_distances``); then each tip's limb: the pose index of the frame its own joints
  hang from (-1: every joint on its path moves another tip too), those joints' tangent
  coordinates ``limb_coordinates[limb_starts[t]:limb_starts[t + 1]]``, the scale of its 12 pose
  features; some of the table's entries (L, nq) and the features of each tip's pose in its
  limb's frame at them (T, 12, L; float32).
* ``tuning`` (``MIN_DAMPING``, ``MAX_ITERATIONS``, ``MAX_ATTEMPTS``, ``RANDOM_SEED``,
  ``MAX_JOINT_MOVE``), floats and ints.
* ``collision`` (``SHAPES``, ``PAIRS``, ``OWNERS``, ``GROUPS``, ``MARGIN``, ``HULL_POINTS``,
  ``HULL_PADS``): see ``contacts``.

The work spaces the kernels make and pass between modules are read by name too: an evaluation's
(``POSES`` ... ``CONTACT``, ``tasks.evaluation_workspace``), a contact work space
(``CONTACT_BUFFER``, ``NEAR_PAIRS``; the buffer's ``NEAR_COUNT`` and ``PENETRATION``), a step's
(``GRAM`` ... ``PINNED``, ``linalg.step_workspace``) and an attempt's (``EVALUATION`` ...
``CONSTRAINT``, ``attempt.attempt_workspace``), and a search's state and the arrays its restarts
take (``STATE_SLOTS``, ``PROBE_*``, ``RESTART_*``: ``search``'s and ``restarts``'). Those private
to one module have their slots there (``search``'s workspace, ``continuation``'s pieces,
``contacts``' views, ``gjk``'s work space).

Feature switches: ``method``, ``solve_type``, ``posture`` and ``collision`` are arguments of
their own, None when a problem does not use the feature (``dls``, ``speed``, no posture gain, no
collision pairs) and otherwise its code (``PINV``, ``TRANSPOSE``, ``CCD``; ``DISTANCE``,
``MANIPULABILITY``, as ``np.int64``) or its arrays (the posture gains (nv,); ``collision``). numba
prunes a branch ``if switch is None`` / ``is not None`` on an argument typed None before it
types the function (its dead-branch pruning), so the kernels a feature needs are compiled (or
loaded from the cache) only for the problems that use it: one Python source, a compiled
specialisation per combination of switches in use.

Conventions: twists ``[v; w]``; per tip either the body Jacobian with body-frame errors (tip axes)
or the mixed Jacobian with base-frame errors (base axes) at the controlled point; poses are
``T_base_frame``. Configurations ``q`` (nq,) and steps ``dq`` (nv,) are apart: a step is applied
as ``q (+) dq`` (:func:`apply_step`). Small-matrix algebra is written as loops (numba's
``np.linalg`` and ``@`` need SciPy's BLAS, which we do not depend on; loops are faster at these
sizes anyway), and so are copies and clips: numba compiles an array-to-array slice assignment
with a shape-mismatch error message (its string formatting took ~3 s of the cold compile) and a
ufunc with its broadcasting (see benchmark/bench_compile.py).
"""

from __future__ import annotations

import numpy as np

#: Methods, solve types and attempt outcomes (mirrored by the enums in ``options``/``results``).
DLS, PINV, TRANSPOSE, CCD = 0, 1, 2, 3
SPEED, DISTANCE, MANIPULABILITY = 0, 1, 2
CONVERGED, STUCK, STALLED, ITERATIONS, DEADLINE, COLLISION = 0, 1, 2, 3, 4, 5
#: What :func:`~ik_node.compiled.search.search_in` returns when every solution it found moves a
#: joint farther than ``max_joint_move`` from the seed (the nearest of them in ``q``).
JOINT_MOVE = 6
#: What :func:`~ik_node.compiled.search.search_in` returns for a seed with NaN, infinite values or
#: a zero quaternion, and for a target pose that :func:`~ik_node.compiled.tasks.check_poses`
#: refuses (with ``MAX_TARGET_DISTANCE`` [m] and ``ORTHONORMAL_TOLERANCE``).
SEED_NOT_FINITE, TARGET_NOT_USABLE = -1, -2
#: Target coordinates larger than this [m] are refused: no robot reaches them, and their squared
#: errors would overflow to infinity.
MAX_TARGET_DISTANCE = 1e9
#: How far a target's rotation may be from orthonormal (max |R^T R - I|).
ORTHONORMAL_TOLERANCE = 1e-6
#: A deadline that never comes [ns].
NO_DEADLINE = np.iinfo(np.int64).max
#: Row 0 (a range's start) and no priority rows, as int64 constants: numba types a literal ``0``
#: argument as ``Literal[int](0)`` and compiles the callee once more for it, beside the ``int64``
#: its other callers pass (each kernel compiled once: see benchmark/bench_compile.py).
FIRST_ROW = NO_PRIORITY = np.int64(0)

#: Slots of ``tree`` (:func:`tree_bundle`).
FRAMES, FRAME_LINKS, SPANS, COORDINATES = range(4)
#: Slots of ``task`` (:func:`task_bundle`); ``TIP_AXIS_KINDS`` holds ``TIP_AXES``, ``BASE_AXES`` or
#: ``GAZE`` per tip. ``PATH_STARTS``, ``PATH_COORDINATES``: each tip's tangent coordinates, compressed rows
#: (CSR) over the tips.
(
    TIP_FRAMES, TIP_OFFSETS, TIP_AXIS_KINDS, ROWS, ROW_WEIGHTS, TOLERANCES, PATH_STARTS, PATH_COORDINATES,
    ROW_BANDS, GAZE_AXES, RELATIVE_TO,
) = range(11)  # fmt: skip
#: Slots of ``table`` (:func:`table_bundle`): the seed table and its index, then the tips' limbs.
(
    FEATURE_SPEC, FEATURE_SCALE, TABLE_Q, BLOCKED_FEATURES, TABLE_SPACING, BLOCKED_CENTROIDS, CELL_STARTS,
    LIMB_FRAMES, LIMB_STARTS, LIMB_COORDINATES, LIMB_SCALE, LIMB_Q, LIMB_FEATURES,
) = range(13)  # fmt: skip
#: Slots of ``collision`` (:func:`collision_bundle`; see ``contacts``).
SHAPES, PAIRS, OWNERS, GROUPS, MARGIN, HULL_POINTS, HULL_PADS = range(7)
#: Columns of ``joints``.
LOWER, UPPER, WEIGHT, REST, SAMPLE_LOWER, SAMPLE_UPPER, WRAPS = range(7)
JOINT_COLUMNS = 7
#: Columns of ``search_many``'s ``results``: the best outcome, the iterations and attempts used,
#: whether the deadline ended the search (0 or 1).
OUTCOME, ITERATIONS_USED, ATTEMPTS, DEADLINE_REACHED = range(4)
RESULT_COLUMNS = 4
#: Slots of ``tuning`` (:func:`tuning_bundle`).
MIN_DAMPING, MAX_ITERATIONS, MAX_ATTEMPTS, RANDOM_SEED, MAX_JOINT_MOVE = range(5)

#: Slots of an evaluation's work space (``tasks.evaluation_workspace``): poses (F, 4, 4), the
#: tips' controlled points (T, 4, 4), Jacobian blocks (T, 6, nv), full errors (T, 6), a relative
#: rotation (3, 3), the collision pairs' contact work space (``CONTACT_*`` below), the gaze tips'
#: row bases (T, 7: ``b1``, ``b2``, ``1 / distance``; see ``tasks.gaze_error``), the relative tips'
#: controlled points in their reference's frame (T, 4, 4; see ``tasks.relative_points``).
POSES, POINTS, BLOCKS, FULL_ERRORS, RELATIVE, CONTACT, GAZE_BASES, RELATIVE_POINTS = range(8)
#: Slots of a contact work space (``contacts.contact_workspace``): the float buffer and the near
#: pairs' indices (K,); the buffer's first two values: the near pairs' count and the penetration [m].
CONTACT_BUFFER, NEAR_PAIRS = range(2)
NEAR_COUNT, PENETRATION = range(2)
#: Slots of a step's work space (``linalg.step_workspace``): gram (m, m), solution, image and
#: remaining (m,); projected, secondary, weights, pinned motion (nv,); pinned (nv,) bool.
GRAM, SOLUTION, IMAGE, REMAINING, PROJECTED, SECONDARY, STEP_WEIGHTS, PINNED_MOTION, PINNED = range(9)
#: Slots of an attempt's work space (``attempt.attempt_workspace``): the evaluations at ``q`` and
#: at the candidate (``POSES`` ... above), jacobian (m, nv), error and candidate error (m,),
#: candidate norms (T, 2), candidate (nq,), step (nv,), the step's work space (``GRAM`` ...), the
#: constraint work space (``steps.constraint_workspace``).
(
    EVALUATION, CANDIDATE_EVALUATION, JACOBIAN, ERROR, CANDIDATE_ERROR, CANDIDATE_NORMS, CANDIDATE, STEP,
    STEP_WORK, CONSTRAINT,
) = range(10)  # fmt: skip


#: What a search's attempt from a start passed over (in collision) ends with: no attempt
#: (``search._attempt_from_start``; the restart rules read it).
PASSED_OVER = -3
#: Slots of a search's state (``search.search_workspace``'s int64 array at its ``STATE``; a flag is
#: 0 or 1): what the parts of ``search.search_in`` and the restart rules (``restarts``) share from
#: one start to the next.
(
    ATTEMPTS_MADE,  # attempts run (a start passed over is none)
    ITERATIONS_SPENT,  # their iterations
    BEST_OUTCOME,  # the outcome of the best end so far (see search._rank_end)
    DEADLINE_HIT,  # flag: the deadline ended the search
    FOUND_IN_COLLISION,  # flag: an attempt found the tips within tolerance only in collision
    STARTS_SKIPPED,  # restarts in collision passed over (search.SKIPPED_STARTS at most)
    ANSWERS_IN_COLLISION,  # answers found in collision without the pairs (search.COLLIDING_ANSWERS at most)
    CANDIDATES_FOUND,  # solutions compared by their largest move (search.NEAR_CANDIDATES at most)
    SEED_PENDING,  # flag: the first start was a table entry, the seed comes next
    CONTINUATION_DUE,  # flag: the continuation comes next, before any restart
    CONTINUING,  # flag: this attempt is the continuation
    GENERATOR_SEEDED,  # flag: numba's generator is seeded (at the first draw)
    PARTIAL_RESTARTS_MADE,  # partial restarts in a row (restarts.PARTIAL_RESTARTS at most)
    NEAR_RESTARTS_MADE,  # restarts around the seed (restarts.NEAR_RESTARTS at most)
    CELLS_PROBED,  # the table's cells probed (-1: not yet)
    ENTRIES_RANKED,  # the table's nearest entries ranked (-1: not yet)
    NEXT_ENTRY,  # the next of them to start from
) = range(17)
STATE_SLOTS = 17
#: Slots of a search's ``table_search`` (see ``search.search_in``): the targets' features,
#: ``table_search.probe_table``'s and ``rank_probed``'s arrays (the search workspace's of the same
#: names).
(
    PROBE_TARGET_FEATURES, PROBE_CELL_DISTANCES, PROBE_PROBED, PROBE_PROBED_DISTANCE, PROBE_DISTANCES,
    PROBE_NEAREST, PROBE_NEAREST_DISTANCE,
) = range(7)  # fmt: skip
#: Slots of a search's ``restart_space`` (see ``restarts.next_start``).
(
    RESTART_DRAWS, RESTART_KEEP, RESTART_LIMB_TARGET, RESTART_LIMB_DISTANCES, RESTART_CHOSEN,
    RESTART_EVALUATION, RESTART_FIT,
) = range(7)  # fmt: skip


#: A tip's task rows in its own axes (the body Jacobian) or in the base's (the mixed Jacobian), or
#: its two gaze rows (in its own axes: ``tasks.gaze_error``; held in its rows' axes 3 and 4).
TIP_AXES, BASE_AXES, GAZE = 0, 1, 2
#: ``point_jacobian``'s flag for base axes, typed ``bool`` (a literal ``True`` would compile the
#: Jacobian once more, for ``Literal[bool]``).
IN_BASE_AXES = np.bool_(True)
#: Feature components per tip in the seed table: position (3), rotation matrix (9, row-major).
TIP_FEATURES = 12


def tree_bundle(*, frames, frame_links, spans, coordinates) -> tuple:
    """``tree``, its slots in order."""
    return (frames, frame_links, spans, coordinates)


def task_bundle(
    *, tip_frames, tip_offsets, tip_axis_kinds, rows, row_weights, tolerances, path_starts, path_coordinates,
    row_bands, gaze_axes, relative_to,
) -> tuple:  # fmt: skip
    """``task``, its slots in order."""
    return (
        tip_frames, tip_offsets, tip_axis_kinds, rows, row_weights, tolerances, path_starts, path_coordinates,
        row_bands, gaze_axes, relative_to,
    )  # fmt: skip


def table_bundle(
    *, feature_spec, feature_scale, table_q, blocked_features, table_spacing, blocked_centroids, cell_starts,
    limb_frames, limb_starts, limb_coordinates, limb_scale, limb_q, limb_features,
) -> tuple:  # fmt: skip
    """``table``, its slots in order."""
    return (
        feature_spec, feature_scale, table_q, blocked_features, table_spacing, blocked_centroids, cell_starts,
        limb_frames, limb_starts, limb_coordinates, limb_scale, limb_q, limb_features,
    )  # fmt: skip


def collision_bundle(*, shapes, pairs, owners, groups, margin, hull_points, hull_pads) -> tuple:
    """``collision``, its slots in order."""
    return (shapes, pairs, owners, groups, margin, hull_points, hull_pads)


def tuning_bundle(*, min_damping, max_iterations, max_attempts, random_seed, max_joint_move) -> tuple:
    """``tuning``, its slots in order."""
    return (min_damping, max_iterations, max_attempts, random_seed, max_joint_move)
