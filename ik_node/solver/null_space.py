"""The null-space motion of a task, for callers (:meth:`IKSolver.null_space_motion`): the part
``(I − J⁺J) z`` of a joint motion ``z`` that leaves the task unchanged (``J (I − J⁺J) = 0``),
with the weighted pseudo-inverse ``J⁺ = W Jᵀ (J W Jᵀ)⁻¹`` (:func:`kernels.null_space_motion`, the
projection of the posture steps), for one Jacobian or a batch."""

from __future__ import annotations

import numpy as np

from . import kernels

__all__ = ["null_space_motion"]


def null_space_motion(jacobian, motion, weights) -> np.ndarray:
    """``(I - J^+ J) z`` for ``jacobian`` (m, n) and ``motion`` (n,), or batched (R, m, n) and
    (R, n), with ``W = diag(weights)`` (broadcast to ``motion``'s shape); the shape of
    ``motion``."""
    jacobian = np.asarray(jacobian, dtype=float)
    motion = np.asarray(motion, dtype=float)
    weights = np.broadcast_to(np.asarray(weights, dtype=float), motion.shape)
    flat_jacobian = np.ascontiguousarray(jacobian.reshape((-1,) + jacobian.shape[-2:]))
    flat_motion = np.ascontiguousarray(motion.reshape(-1, motion.shape[-1]))
    flat_weights = np.array(weights.reshape(-1, motion.shape[-1]), order="C")  # (writable: one signature)
    rows = jacobian.shape[-2]
    gram, solution, image = np.empty((rows, rows)), np.empty(rows), np.empty(rows)
    out = np.empty_like(flat_motion)
    for index in range(len(flat_motion)):
        kernels.null_space_motion(
            flat_jacobian[index], flat_motion[index], flat_weights[index], 0, rows, gram, solution, image,
            out[index],
        )  # fmt: skip
    return out.reshape(motion.shape)
