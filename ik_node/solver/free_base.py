"""Where a free-floating base starts when a solve has no seed: the rest posture moved as one rigid
body onto the targets where they face another way than it does, so that the first attempt solves
the joints rather than turning the whole robot round (a mocap or VR rig's first frame, a
tracking loss).

The rigid motion ``T`` (base frame) minimises ``sum_i |T a_i - b_i|^2`` over anchor points: per
tip its controlled point, and where its task controls the rotation the three points
``ANCHOR_ARM`` along its axes, ``a_i`` at the rest posture and ``b_i`` at the target (Horn's
closed form: :func:`ik_node.compiled.fitting.rigid_fit`). The free joint's new value is
``M' = C^-1 T C M``, with ``C`` its constant origin and ``M`` its motion at rest
(``T_base_child = C M``).
"""

from __future__ import annotations

import numpy as np

from ..compiled import spatial
from ..lie import matrix_to_quaternion, quaternion_to_matrix
from .problem import Problem

__all__ = ["BasePlacement"]

#: m: anchor points this far along a tip's axes carry its rotation into the fit.
ANCHOR_ARM = 0.1
#: rad: where the fit turns the base by less, the rest posture stays as it is: the anchors of
#: limbs away from their rest posture suggest a noisy motion, which the first attempt's steps
#: beat when the turn is small (a base shifted: its steps are linear in it), while a large turn
#: (a robot facing elsewhere) takes them many (measured on Romeo, 5 tips, no seed: a base within
#: 0.1 m and 0.3 rad of 0.8 m up: 13.8 iterations from the rest posture, 14.4 moved, 14.9 moved
#: and turned, 14.2 with this rule; facing anywhere within 2 m: 38.8 from the rest posture,
#: 25.0 with this rule).
SMALL_TURN = 1.0


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
        rest_motion = np.eye(4)
        rest_motion[:3, :3] = quaternion_to_matrix(qx, qy, qz, qw)
        rest_motion[:3, 3] = (x, y, z)
        self._origin_at_rest = self._origin @ rest_motion
        self._origin_inverse = np.linalg.inv(self._origin)
        rows = problem.rows
        self._rotating = np.array(
            [bool(np.any((rows[:, 0] == tip) & (rows[:, 1] >= 3))) for tip in range(len(problem.tips))]
        )
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
        """Anchor points (N, 3) [m, base frame] of tip poses (T, 4, 4): the positions, then the
        points along the axes of the tips whose rotation counts."""
        positions = poses[:, :3, 3]
        turning = poses[self._rotating]
        along_axes = turning[:, None, :3, 3] + ANCHOR_ARM * np.swapaxes(turning[:, :3, :3], 1, 2)
        return np.concatenate((positions, along_axes.reshape(-1, 3)))

    def seed(self, targets: np.ndarray, problem: Problem) -> np.ndarray | None:
        """The rest posture with the free joint set so that the rest posture's tips lie nearest
        ``targets`` (T, 4, 4; ``T_base_tip``) as a rigid body (the module docstring's fit);
        None where the anchors turn less than ``SMALL_TURN`` (the first attempt's steps carry
        the base there sooner than a noisy fit would; measured in ``SMALL_TURN``'s comment).
        ``problem``: this one, with the kernels in use (for the rest posture's FK, once)."""
        if self._rest_anchors is None:
            self._rest_anchors = self._anchors(problem.points(self._rest))
        motion = np.empty((4, 4))
        problem.kernels.rigid_fit(self._rest_anchors, self._anchors(targets), motion)
        if motion[0, 0] + motion[1, 1] + motion[2, 2] >= 1.0 + 2.0 * np.cos(SMALL_TURN):  # (less)
            return None
        moved = self._origin_inverse @ motion @ self._origin_at_rest
        seed = self._rest.copy()
        seed[self._at : self._at + 3] = moved[:3, 3]
        seed[self._at + 3 : self._at + 7] = matrix_to_quaternion(moved[:3, :3])
        return seed
