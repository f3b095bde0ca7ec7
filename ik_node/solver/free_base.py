"""Where a free-floating base starts when a solve has no seed: the rest posture moved as one rigid
body onto the targets, so that the first attempt solves the joints rather than carrying the whole
robot from the origin to where its tasks are (a mocap or VR rig's first frame, a tracking loss).

The rigid motion ``T`` (base frame) minimises ``sum_i |T a_i - b_i|^2`` over anchor points: per
tip its controlled point, and where its task controls the rotation the three points
``ANCHOR_ARM`` along its axes, ``a_i`` at the rest posture and ``b_i`` at the target (Kabsch 1976;
Umeyama 1991, eqs. 38-42: ``H = sum (a_i - a)(b_i - b)^T = U S V^T``,
``R = V diag(1, 1, det(V U^T)) U^T``, ``t = b - R a`` with ``a``, ``b`` the centroids). The
free joint's new value is ``M' = C^-1 T C M``, with ``C`` its constant origin and ``M`` its
motion at rest (``T_base_child = C M``).
"""

from __future__ import annotations

import numpy as np

from ..compiled import spatial
from ..lie import matrix_to_quaternion, quaternion_to_matrix
from .problem import Problem

__all__ = ["BasePlacement"]

#: m: anchor points this far along a tip's axes carry its rotation into the fit.
ANCHOR_ARM = 0.1


class BasePlacement:
    """The rest posture with its free base moved onto the targets (:meth:`seed`); None from
    :meth:`for_problem` where the tree hangs from no floating joint at its base."""

    def __init__(self, problem: Problem, rest: np.ndarray, frame_row: int):
        tree = problem.tree
        row = tree.frames[frame_row]
        self._origin = np.eye(4)
        self._origin[:3, :3] = row[spatial.ROTATION : spatial.ROTATION + 9].reshape(3, 3)
        self._origin[:3, 3] = row[spatial.TRANSLATION : spatial.TRANSLATION + 3]
        self._at = int(tree.frame_links[frame_row, spatial.Q_INDEX])
        self._rest = rest
        x, y, z, qx, qy, qz, qw = rest[self._at : self._at + 7]
        self._rest_motion = np.eye(4)
        self._rest_motion[:3, :3] = quaternion_to_matrix(qx, qy, qz, qw)
        self._rest_motion[:3, 3] = (x, y, z)
        rows = problem.rows
        self._rotating = [
            bool(np.any((rows[:, 0] == tip) & (rows[:, 1] >= 3))) for tip in range(len(problem.tips))
        ]
        self._rest_anchors = None  # (at the first seed: FK calls the kernels)

    @classmethod
    def for_problem(cls, problem: Problem, rest: np.ndarray) -> BasePlacement | None:
        links = problem.tree.frame_links
        for frame_row in range(len(links)):
            kind = links[frame_row, spatial.JOINT_TYPE]
            if links[frame_row, spatial.PARENT] == 0 and kind == spatial.FLOATING:
                return cls(problem, rest, frame_row)
        return None

    def _anchors(self, poses: np.ndarray) -> np.ndarray:
        """Anchor points (N, 3) [m, base frame] of tip poses (T, 4, 4)."""
        points = []
        for pose, rotating in zip(poses, self._rotating):
            points.append(pose[:3, 3])
            if rotating:
                points += [pose[:3, 3] + ANCHOR_ARM * pose[:3, axis] for axis in range(3)]
        return np.array(points)

    def seed(self, targets: np.ndarray, problem: Problem) -> np.ndarray:
        """The rest posture with the free joint set so that the rest posture's tips lie nearest
        ``targets`` (T, 4, 4; ``T_base_tip``) as a rigid body (the module docstring's fit);
        ``problem``: this one, with the kernels in use (for the rest posture's FK, once)."""
        if self._rest_anchors is None:
            self._rest_anchors = self._anchors(problem.points(self._rest))
        a, b = self._rest_anchors, self._anchors(targets)
        a_mean, b_mean = a.mean(axis=0), b.mean(axis=0)
        u, _, vt = np.linalg.svd((a - a_mean).T @ (b - b_mean))
        flip = np.diag([1.0, 1.0, np.sign(np.linalg.det(vt.T @ u.T)) or 1.0])
        motion = np.eye(4)
        motion[:3, :3] = vt.T @ flip @ u.T
        motion[:3, 3] = b_mean - motion[:3, :3] @ a_mean
        moved = np.linalg.solve(self._origin, motion @ self._origin @ self._rest_motion)
        seed = self._rest.copy()
        seed[self._at : self._at + 3] = moved[:3, 3]
        seed[self._at + 3 : self._at + 7] = matrix_to_quaternion(moved[:3, :3])
        return seed
