"""The solution nearest a seed for each of many targets, from a decomposition's branches, compiled.

What ``IKSolver.solve_many`` does with ``solve_type='distance'`` on a 6R chain whose axes decompose
(:mod:`.decompositions`): per target, every branch of the nominal geometry
(:func:`~.solution_sets.branch_configurations`), then the set inside the limits ordered by the
solver's metric ``Σ (q_j − s_j)² / w_j`` from the target's seed (:func:`~.solution_sets.solution_set`),
of which the first is the answer. Units: rad, m; configurations in the solver's joint order; poses
``T_base_point`` (4x4) in the base frame.
"""

from __future__ import annotations

import math

import numpy as np

from .decompositions import (
    MAX_BRANCHES,
    spherical_two_intersecting,
    spherical_two_parallel,
    three_parallel_two_intersecting,
)
from .jit import batch_kernel, kernel
from .solution_sets import branch_configurations, solution_set

__all__ = ["DECOMPOSITION_CODES", "nearest_branches"]

#: The decomposition kernels' codes (``nearest_branches``' ``kind``), by name.
DECOMPOSITION_CODES = {
    "spherical_two_parallel": 0,
    "spherical_two_intersecting": 1,
    "three_parallel_two_intersecting": 2,
}


@kernel
def _branches(kind, axes, offsets, tool_rotation, target, hint, angles, status, branch):
    """The branches (count returned) of decomposition ``kind`` (:data:`DECOMPOSITION_CODES`) for
    ``target``, as its kernel writes them."""
    if kind == 0:
        return spherical_two_parallel(axes, offsets, tool_rotation, target, hint, angles, status, branch)
    if kind == 1:
        return spherical_two_intersecting(axes, offsets, tool_rotation, target, hint, angles, status, branch)
    return three_parallel_two_intersecting(axes, offsets, tool_rotation, target, hint, angles, status, branch)


@batch_kernel
def nearest_branches(
    kind, axes, offsets, tool_rotation, reference, joints, frames, frame_links, tip_frame, point_offset,
    tolerances, lower, upper, periodic, continuous, weights, targets, seeds, q_out, errors_out, found_out,
):  # fmt: skip
    """For each target ``targets[t]`` (N, 4, 4) and seed ``seeds[t]`` (N, n): the solution nearest
    the seed (``q_out[t]``) and its (position [m], orientation [rad]) error (``errors_out[t]``)
    among the branches of decomposition ``kind`` with the arguments of
    :class:`~ik_node.solver.closed_form.ClosedForm` (``axes``, ``offsets``, ``tool_rotation``,
    ``reference``, ``joints``; a singularity's free joint at the seed's value), within
    ``tolerances`` of the target at ``tip_frame``'s point ``point_offset`` by the tree's FK
    (``frames``, ``frame_links``), fitted into the limits (the rest as
    :func:`~.solution_sets.solution_set`). ``found_out[t]``: whether one reached the target
    (else ``q_out[t]`` is the seed and the errors infinite)."""
    angles = np.empty((MAX_BRANCHES, 6))
    status = np.empty(MAX_BRANCHES, dtype=np.int64)
    branch = np.empty(MAX_BRANCHES, dtype=np.int64)
    hint = np.empty(6)
    for t in range(targets.shape[0]):
        seed = seeds[t]
        for i in range(6):
            hint[i] = seed[joints[i]] - reference[joints[i]]
        count = _branches(kind, axes, offsets, tool_rotation, targets[t], hint, angles, status, branch)
        candidates = branch_configurations(angles, count, reference, joints)
        q, origin, errors, success = solution_set(
            frames, frame_links, tip_frame, point_offset, targets[t], candidates, status[:count], tolerances,
            lower, upper, periodic, continuous, seed, weights,
        )  # fmt: skip
        found_out[t] = success and q.shape[0] > 0
        for j in range(seed.shape[0]):
            q_out[t, j] = q[0, j] if found_out[t] else seed[j]
        errors_out[t, 0] = errors[origin[0], 0] if found_out[t] else math.inf
        errors_out[t, 1] = errors[origin[0], 1] if found_out[t] else math.inf
