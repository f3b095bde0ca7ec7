"""The solver's entry to its compiled core, :mod:`ik_node.compiled` (numba kernels over flat
arrays; see :mod:`ik_node.compiled.jit`), by concern:

* :mod:`~ik_node.compiled.spatial`: FK, Jacobians from trimmed adjoint blocks;
  :mod:`~ik_node.compiled.manifold`: the configuration manifold (``q ⊕ dq``);
  :mod:`~ik_node.compiled.rotations` and :mod:`~ik_node.compiled.elementary`: SO(3), sines, arc
  tangents;
* :mod:`~ik_node.compiled.bundles`: the named bundles (``tree``, ``task``, ``joints``, ``table``,
  ``tuning``) and the codes shared with Python;
* :mod:`~ik_node.compiled.tasks`: the tips' controlled points, task errors and Jacobians;
* :mod:`~ik_node.compiled.linalg`: the LDL^T solve, the damped step, the null-space projection;
* :mod:`~ik_node.compiled.joints`: steps within the limits, displacements, restart configurations;
* :mod:`~ik_node.compiled.steps`: one step per method (``dls``, ``pinv``, ``transpose``, ``ccd``);
* :mod:`~ik_node.compiled.attempt`: the one iteration loop and the null-space posture;
* :mod:`~ik_node.compiled.search`: the restart search, ``search_many`` (its restarts in
  ``restarts``, pieces toward far goals in ``continuation``);
  :mod:`~ik_node.compiled.table_search`: the seed table's features and nearest entries;
* :mod:`~ik_node.compiled.straight_lines`: a straight-line path's steps, each solved by the search
  (compiled at the first path: no solve needs it).

This module names what the Python side (the solver, its problem and seed table, the tests)
calls and reads.
"""

from __future__ import annotations

from types import SimpleNamespace

from ..compiled.attempt import STALL_ITERATIONS, STATIONARY, stationary
from ..compiled.bundles import (
    ATTEMPTS,
    BASE_AXES,
    CCD,
    COLLISION,
    CONVERGED,
    DEADLINE,
    DEADLINE_REACHED,
    DISTANCE,
    DLS,
    FIRST_ROW,
    GAZE,
    ITERATIONS,
    ITERATIONS_USED,
    JOINT_COLUMNS,
    JOINT_MOVE,
    LOWER,
    MANIPULABILITY,
    MAX_ATTEMPTS,
    MAX_ITERATIONS,
    MAX_JOINT_MOVE,
    MAX_TARGET_DISTANCE,
    NO_DEADLINE,
    NO_PRIORITY,
    ORTHONORMAL_TOLERANCE,
    OUTCOME,
    PINV,
    REST,
    RESULT_COLUMNS,
    SAMPLE_LOWER,
    SAMPLE_UPPER,
    SEED_NOT_FINITE,
    SPEED,
    STALLED,
    STUCK,
    TARGET_NOT_USABLE,
    TIP_AXES,
    TIP_FEATURES,
    TRANSPOSE,
    UPPER,
    WEIGHT,
    WRAPS,
)
from ..compiled.contacts import (
    CONTACT_COLUMNS,
    contact_rows,
    group_distances,
    near_records,
    pair_distance,
)
from ..compiled.fitting import fit_workspace, place_free_base
from ..compiled.jit import python_module
from ..compiled.joints import configurations_from_draws
from ..compiled.linalg import ldl_solve, null_space_motion, step_workspace
from ..compiled.search import search_context, search_many
from ..compiled.steps import MU_INITIAL, limited_step
from ..compiled.straight_lines import (
    COMPLETE,
    DEVIATION,
    IN_COLLISION,
    JUMP,
    SINGULARITY,
    UNREACHABLE,
    straight_line_steps,
)
from ..compiled.table_search import (
    PROBED_CELLS,
    TABLE_RESTARTS,
    limb_table_features,
    probe_table,
    rank_nearest,
    rank_probed,
    table_distances,
    table_features,
)
from ..compiled.tasks import (
    GAZE_MIN_DISTANCE,
    POSE_NOT_FINITE,
    POSE_NOT_RIGID,
    POSE_OK,
    POSE_TOO_FAR,
    check_poses,
    evaluate,
    evaluation_workspace,
    jacobian_at,
    solution_figures,
)

__all__ = [
    "python_kernels",
    "MAX_ATTEMPTS",
    "DEADLINE_REACHED",
    "ATTEMPTS",
    "ITERATIONS_USED",
    "OUTCOME",
    "RESULT_COLUMNS",
    "BASE_AXES",
    "GAZE",
    "GAZE_MIN_DISTANCE",
    "CCD",
    "COLLISION",
    "COMPLETE",
    "CONTACT_COLUMNS",
    "near_records",
    "CONVERGED",
    "DEADLINE",
    "DEVIATION",
    "DISTANCE",
    "DLS",
    "FIRST_ROW",
    "IN_COLLISION",
    "ITERATIONS",
    "JOINT_COLUMNS",
    "JOINT_MOVE",
    "JUMP",
    "LOWER",
    "MANIPULABILITY",
    "MAX_ITERATIONS",
    "MAX_JOINT_MOVE",
    "MAX_TARGET_DISTANCE",
    "MU_INITIAL",
    "NO_DEADLINE",
    "NO_PRIORITY",
    "ORTHONORMAL_TOLERANCE",
    "PINV",
    "POSE_NOT_FINITE",
    "POSE_NOT_RIGID",
    "POSE_OK",
    "POSE_TOO_FAR",
    "REST",
    "SAMPLE_LOWER",
    "SAMPLE_UPPER",
    "SEED_NOT_FINITE",
    "SINGULARITY",
    "SPEED",
    "STALLED",
    "STALL_ITERATIONS",
    "STATIONARY",
    "STUCK",
    "TARGET_NOT_USABLE",
    "PROBED_CELLS",
    "TABLE_RESTARTS",
    "TIP_AXES",
    "TIP_FEATURES",
    "TRANSPOSE",
    "UNREACHABLE",
    "UPPER",
    "WEIGHT",
    "WRAPS",
    "check_poses",
    "configurations_from_draws",
    "limb_table_features",
    "fit_workspace",
    "place_free_base",
    "contact_rows",
    "evaluate",
    "group_distances",
    "evaluation_workspace",
    "jacobian_at",
    "ldl_solve",
    "limited_step",
    "rank_nearest",
    "rank_probed",
    "pair_distance",
    "probe_table",
    "null_space_motion",
    "search_context",
    "search_many",
    "solution_figures",
    "stationary",
    "step_workspace",
    "straight_line_steps",
    "table_distances",
    "table_features",
]


def python_kernels() -> SimpleNamespace:
    """This module's names with its kernels as plain Python (:func:`~ik_node.compiled.jit.
    python_module`: the same functions, compiling nothing), for a solver to answer with while its
    compiled kernels are being compiled."""
    names = {}
    for name in __all__:
        value = globals()[name]
        function = getattr(value, "py_func", value)
        module = getattr(function, "__module__", "") if callable(value) else ""
        if module.startswith("ik_node.compiled."):
            value = getattr(python_module(module.rpartition(".")[2]), name)
        names[name] = value
    return SimpleNamespace(**names)
