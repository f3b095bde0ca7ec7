"""The joint table's rules: steps applied on the manifold within the limits, which joints are held
at a limit, the displacement from the seed (joints that turn freely at the nearest turn), and
restart configurations."""

from __future__ import annotations

import math

import numpy as np

from .bundles import COORDINATES, LOWER, SAMPLE_LOWER, SAMPLE_UPPER, SPANS, UPPER, WEIGHT, WRAPS
from .jit import allocating_kernel, inner_kernel, kernel
from .manifold import difference, integrate


@inner_kernel
def apply_step(tree, joints, q, step, out):
    """``out = q (+) step`` (:func:`integrate`), 1-DOF joints clipped to their limits."""
    coordinates = tree[COORDINATES]
    integrate(tree[SPANS], q, step, out)
    for j in range(coordinates.shape[0]):
        c = coordinates[j]
        if c >= 0:
            out[c] = min(max(out[c], joints[j, LOWER]), joints[j, UPPER])


@inner_kernel
def pushes_against_limit(q, coordinates, joints, j, direction):
    """Whether joint ``j`` sits at a limit that motion in ``direction``'s sign would pass."""
    if coordinates[j] < 0:
        return False
    value = q[coordinates[j]]
    return (value <= joints[j, LOWER] and direction < 0.0) or (value >= joints[j, UPPER] and direction > 0.0)


@kernel
def nearest_turn(value, reference, joint):
    """For a joint that turns freely (``WRAPS``: continuous, or revolute over more than a turn),
    the 2 pi-equivalent of ``value`` (same pose) within the joint's limits nearest
    ``reference``; other joints' values as they are. ``joint`` is the joint's row of ``joints``."""
    if joint[WRAPS] <= 0.0:
        return value
    wrapped = reference + (value - reference + math.pi) % (2.0 * math.pi) - math.pi
    if wrapped < joint[LOWER]:  # (a range over 2 pi holds the next turn)
        wrapped += 2.0 * math.pi
    elif wrapped > joint[UPPER]:
        wrapped -= 2.0 * math.pi
    return wrapped


@inner_kernel
def seed_displacement(tree, joints, seed, q, out):
    """The tangent displacement (nv,) from ``seed`` to ``q`` (:func:`difference`), joints that turn
    freely compared at the turn nearest the seed."""
    coordinates = tree[COORDINATES]
    difference(tree[SPANS], seed, q, out)
    for j in range(coordinates.shape[0]):
        c = coordinates[j]
        if c >= 0 and joints[j, WRAPS] > 0.0:
            out[j] = nearest_turn(q[c], seed[c], joints[j]) - seed[c]


@kernel
def largest_move(tree, joints, q, seed, displacement):
    """``max_j |d_j|`` [rad or m] of the :func:`seed_displacement` from ``seed`` to ``q``."""
    seed_displacement(tree, joints, seed, q, displacement)
    largest = 0.0
    for j in range(joints.shape[0]):
        largest = max(largest, abs(displacement[j]))
    return largest


@inner_kernel
def configuration_from_draws(tree, joints, center, draws, box, out, keep):
    """A restart configuration (into ``out``) from uniform draws in [0, 1) per tangent coordinate
    (nv,): with ``box < 0``, each 1-DOF joint uniform within its sampling bounds (a joint that
    turns freely: a turn around ``center``), each multi-DOF coordinate ``center (+)`` a uniform
    displacement within its sampling bounds; with ``box >= 0``, every coordinate displaced from
    ``center`` by up to ``box`` [rad or m] either way. Locked joints, and the coordinates ``j``
    with ``keep[j]`` (``keep`` (nv,) bool), stay at ``center``; 1-DOF joints are clipped
    to their limits. ``draws`` is overwritten with the displacement."""
    coordinates = tree[COORDINATES]
    dof = joints.shape[0]
    displacement = draws  # (each draw read once, before its coordinate's displacement is written)
    for j in range(dof):
        if joints[j, WEIGHT] <= 0.0 or keep[j]:
            displacement[j] = 0.0
            continue
        if box >= 0.0:
            displacement[j] = box * (2.0 * draws[j] - 1.0)
            continue
        low, high = joints[j, SAMPLE_LOWER], joints[j, SAMPLE_UPPER]
        value = low + (high - low) * draws[j]
        c = coordinates[j]
        if c < 0 or joints[j, WRAPS] > 0.0:
            displacement[j] = value  # around the center
        else:
            displacement[j] = value - center[c]
    apply_step(tree, joints, center, displacement, out)


@allocating_kernel
def configurations_from_draws(tree, joints, center, draws, box, out):
    """:func:`configuration_from_draws` for each row of ``draws`` (S, nv) into ``out`` (S, nq)
    (the rows of ``draws`` are overwritten): the seed table's configurations in one call."""
    keep = np.zeros(joints.shape[0], dtype=np.bool_)
    for index in range(draws.shape[0]):
        configuration_from_draws(tree, joints, center, draws[index], box, out[index], keep)


@inner_kernel
def _usable_seed(tree, joints, seed, step, out):
    """The seed with its quaternions normalised and 1-DOF joints clipped into the limits (into
    ``out``; ``step`` (nv,) is work space); False for NaN or infinite values or a zero
    quaternion."""
    for i in range(seed.shape[0]):
        if not math.isfinite(seed[i]):
            return False
    for j in range(step.shape[0]):
        step[j] = 0.0
    apply_step(tree, joints, seed, step, out)
    for i in range(out.shape[0]):
        if not math.isfinite(out[i]):
            return False
    return True
