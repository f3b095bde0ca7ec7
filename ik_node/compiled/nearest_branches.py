"""The solution nearest a seed for each of many targets, from a decomposition's branches, compiled.

What ``IKSolver.solve_many`` does with ``solve_type='distance'`` on a 6R chain whose axes decompose
(:mod:`.decompositions`): per target, every branch of the nominal geometry, checked by FK, each
at its variant inside the limits nearest the target's seed in the solver's metric
``Σ (q_j − s_j)² / w_j``; the nearest of them is the answer (the whole set is not built). Units:
rad, m; configurations in the solver's joint order; poses ``T_base_point`` (4x4) in the base frame.
"""

from __future__ import annotations

import math

import numpy as np

from .decompositions import MAX_BRANCHES, as_solved, branches_of
from .jit import batch_kernel, inner_kernel
from .solution_sets import LIMIT_SLACK, TWO_PI, pose_error
from .spatial import forward_kinematics, point_pose

__all__ = ["nearest_branches"]


@inner_kernel
def _nearest_turn(value, seed, lower, upper, periodic, continuous):
    """Joint value ``value`` [rad, m] as the candidate nearest ``seed``: for a continuous joint
    ``θ + 2πk`` nearest it; for a bounded revolute joint the nearest of the ``θ + 2πk`` inside
    the limits (within :data:`~.solution_sets.LIMIT_SLACK`, clipped into them), NaN where none
    fits; other joints as they are (as :func:`~.solution_sets.solution_set`'s variants)."""
    if not periodic:
        return value
    if continuous:
        return value - TWO_PI * math.floor((value - seed) / TWO_PI + 0.5)
    first = math.ceil((lower - LIMIT_SLACK - value) / TWO_PI)
    last = math.floor((upper + LIMIT_SLACK - value) / TWO_PI)
    if first > last:
        return math.nan
    turns = min(max(math.floor((seed - value) / TWO_PI + 0.5), first), last)
    return min(max(value + TWO_PI * turns, lower), upper)


@batch_kernel
def nearest_branches(
    kind, inverted, axes, offsets, tool_rotation, reference, joints, frames, frame_links, tip_frame,
    point_offset, tolerances, lower, upper, periodic, continuous, weights, targets, seeds, q_out, errors_out,
    found_out,
):  # fmt: skip
    """For each target ``targets[t]`` (N, 4, 4) and seed ``seeds[t]`` (N, n): the solution nearest
    the seed (``q_out[t]``) in ``Σ w_j (q_j − s_j)² `` (``weights``) and its (position [m],
    orientation [rad]) error (``errors_out[t]``) among the branches of decomposition ``kind``
    (:data:`~.decompositions.DECOMPOSITION_CODES`) with the arguments of
    :class:`~ik_node.solver.closed_form.ClosedForm` (``inverted``, ``axes``,
    ``offsets``, ``tool_rotation``, ``reference``, ``joints``; a singularity's free joint at the
    seed's value; an ``inverted`` chain solved for the target's inverse)
    that reach the target within ``tolerances`` at ``tip_frame``'s point ``point_offset`` by the
    tree's FK (``frames``, ``frame_links``), each joint at its ``θ + 2πk`` nearest the seed inside
    the limits (:func:`_nearest_turn`: the metric is a sum over joints, so the nearest variant of
    a branch is each joint's nearest; the same answer as the first of
    :func:`~.solution_sets.solution_set`'s ordered set). The FK check runs on the branches
    nearest first, until one reaches the target (one FK for most targets). ``found_out[t]``:
    whether one reached the target (else ``q_out[t]`` is the seed and the errors infinite)."""
    angles = np.empty((MAX_BRANCHES, 6))
    status = np.empty(MAX_BRANCHES, dtype=np.int64)
    branch = np.empty(MAX_BRANCHES, dtype=np.int64)
    nearest, costs = np.empty((MAX_BRANCHES, reference.shape[0])), np.empty(MAX_BRANCHES)
    hint = np.empty(6)
    poses, point, seen = np.empty((frames.shape[0] + 1, 4, 4)), np.empty((4, 4)), np.empty((4, 4))
    for t in range(targets.shape[0]):
        seed, target = seeds[t], targets[t]
        for i in range(6):
            hint[i] = seed[joints[i]] - reference[joints[i]]
        as_solved(target, inverted, seen)
        count = branches_of(kind, axes, offsets, tool_rotation, seen, hint, angles, status, branch)
        for r in range(count):
            candidate = nearest[r]
            for j in range(reference.shape[0]):
                candidate[j] = reference[j]
            for i in range(6):
                candidate[joints[i]] += angles[r, i]
            cost = 0.0
            for j in range(reference.shape[0]):
                value = _nearest_turn(candidate[j], seed[j], lower[j], upper[j], periodic[j], continuous[j])
                candidate[j] = value
                cost += weights[j] * (value - seed[j]) ** 2
            costs[r] = math.inf if math.isnan(cost) else cost  # (NaN: a joint with no turn inside its limits)
        found_out[t] = False
        errors_out[t, 0] = errors_out[t, 1] = math.inf
        for _ in range(count):  # (the nearest first: the first that reaches the target is the answer)
            r = np.argmin(costs[:count])
            if costs[r] == math.inf:
                break
            costs[r] = math.inf
            forward_kinematics(frames, frame_links, nearest[r], poses)
            point_pose(poses, tip_frame, point_offset, point)
            position_error, orientation_error = pose_error(point, target)
            if position_error <= tolerances[0] and orientation_error <= tolerances[1]:
                found_out[t] = True
                for j in range(reference.shape[0]):
                    q_out[t, j] = nearest[r, j]
                errors_out[t, 0], errors_out[t, 1] = position_error, orientation_error
                break
        if not found_out[t]:
            for j in range(reference.shape[0]):
                q_out[t, j] = seed[j]
