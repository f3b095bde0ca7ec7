"""The reachability map's one compiled kernel: the tip pose and Yoshikawa's manipulability of
every solution of a chunk, in one call (a Python loop over :meth:`IKSolver.task_jacobian` costs
~38 us a solution on arm7, as much as the solve itself).

Its numba cache stamp covers the solver's kernel sources (:data:`ik_node.jit.KERNEL_SOURCES`,
whose kernels it calls) and this file: an edit in either compiles it again.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np

from . import jit
from .solver import kernels

__all__ = ["solution_figures"]

_STAMP = hashlib.sha256(
    b"".join(path.read_bytes() for path in (*jit.KERNEL_SOURCES, Path(__file__)))
).hexdigest()


def _kernel(function):
    """:func:`ik_node.jit.kernel`, with the stamp of the kernel sources and this file."""
    dispatcher = jit.kernel(function)
    try:
        dispatcher._cache._cache_file._source_stamp = _STAMP  # as ik_node.jit does
    except AttributeError:  # plain Python, no cache, or another numba's internals
        pass
    return dispatcher


@_kernel
def solution_figures(tree, task, dof, q, points_out, manipulability_out):
    """For each configuration ``q[k]`` (K, nq): the pose (4, 4) of the first tip's controlled
    point in the base frame into ``points_out[k]``, and Yoshikawa's manipulability
    ``sqrt(det(J J^T))`` of the task Jacobian ``J`` (m, nv: the rows the task controls, body
    frame, weighted; Yoshikawa 1985, "Manipulability of robotic mechanisms") into
    ``manipulability_out[k]``: the product of the diagonal of the Cholesky factor of ``J J^T``,
    0 where ``J`` loses rank (a pivot <= 0). Invariant to the frame the rows are expressed in
    (``det Ad = 1``); linear rows in m, angular in rad."""
    space = kernels.evaluation_workspace(tree, task, dof)
    rows = task[3].shape[0]
    targets = np.zeros((task[0].shape[0], 4, 4))
    for tip in range(targets.shape[0]):
        for i in range(4):
            targets[tip, i, i] = 1.0
    error, norms = np.empty(rows), np.empty((targets.shape[0], 2))
    jacobian, gram = np.empty((rows, dof)), np.empty((rows, rows))
    for k in range(q.shape[0]):
        kernels.evaluate(tree, task, targets, q[k], space, error, norms)
        kernels.jacobian_at(tree, task, space, jacobian)
        points = space[1]
        for i in range(4):
            for j in range(4):
                points_out[k, i, j] = points[0, i, j]
        for i in range(rows):
            for j in range(i + 1):
                value = 0.0
                for c in range(dof):
                    value += jacobian[i, c] * jacobian[j, c]
                gram[i, j] = value
        product = 1.0
        for j in range(rows):  # Cholesky, column by column, in place (lower triangle)
            pivot = gram[j, j]
            for c in range(j):
                pivot -= gram[j, c] * gram[j, c]
            if pivot <= 0.0:
                product = 0.0
                break
            root = math.sqrt(pivot)
            gram[j, j] = root
            product *= root
            for i in range(j + 1, rows):
                value = gram[i, j]
                for c in range(j):
                    value -= gram[i, c] * gram[j, c]
                gram[i, j] = value / root
        manipulability_out[k] = product
