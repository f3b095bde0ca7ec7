"""Where a free-floating base starts when a solve has no seed: the rest posture moved as one rigid
body onto the targets where they face another way than it does, so that the first attempt solves
the joints rather than turning the whole robot round (a mocap or VR rig's first frame, a
tracking loss).

The rigid motion ``T'`` (seen from the free joint's origin ``C``) minimises ``sum_i |T' a_i -
b_i|^2`` over anchor points: per tip its controlled point, and where its task controls the
rotation the three points ``ANCHOR_ARM`` along its axes, ``a_i`` at the rest posture and ``b_i``
at the target (Horn's closed form; the rule is the kernel
:func:`ik_node.compiled.fitting.place_free_base`, which the search's restarts use too). The free
joint's new motion is ``M' = T' M``, with ``M`` its motion at rest (``T_base_child = C M``).
"""

from __future__ import annotations

import math

import numpy as np

from ..compiled import spatial
from .problem import Problem

__all__ = ["BasePlacement"]

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

    def __init__(self, rest: np.ndarray):
        self._rest = rest
        self._spaces = None  # (the fit's work arrays, made at the first seed)

    @classmethod
    def for_problem(cls, problem: Problem, rest: np.ndarray) -> BasePlacement | None:
        links = problem.tree.frame_links  # (the kernels' floating_root, without calling one)
        at_base = (links[:, spatial.PARENT] == 0) & (links[:, spatial.JOINT_TYPE] == spatial.FLOATING)
        return cls(rest) if np.any(at_base) else None

    def seed(self, targets: np.ndarray, problem: Problem) -> np.ndarray | None:
        """The rest posture with the free joint set so that the rest posture's tips lie nearest
        ``targets`` (T, 4, 4; ``T_base_tip``) as a rigid body (the module docstring's fit);
        None where the fit turns less than ``SMALL_TURN`` (the first attempt's steps carry
        the base there sooner than a noisy fit would; measured in ``SMALL_TURN``'s comment).
        ``problem``: this one, with the kernels in use."""
        kernels, tree, task, seed = problem.kernels, problem.tree_arrays, problem.task, self._rest.copy()
        if self._spaces is None:
            self._spaces = (
                kernels.evaluation_workspace(tree, task, np.int64(len(problem.joints)), None),
                kernels.fit_workspace(np.int64(len(problem.tips))),
            )
        targets = np.ascontiguousarray(targets, dtype=float)
        half_turn_cosine = kernels.place_free_base(tree, task, targets, *self._spaces, seed)
        if half_turn_cosine >= math.cos(0.5 * SMALL_TURN):  # (less)
            return None
        return seed
