"""An IK problem as the kernels see it: the tree, the task rows of each tip (trimmed to what the
tip's task controls, weighted), the tolerances, the joint limits, weights and rest posture, and
the seed-table feature layout. Plain arrays, inspectable in tests."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import numpy as np

from . import kernels
from .options import TipTask

__all__ = ["Problem"]

#: m: the rotation weight in the seed table's distance for tips whose position does not move.
MIN_ROTATION_SCALE = 0.1


class Problem:
    """The arrays of :mod:`ik_node.solver.kernels` for ``tips`` of ``tree`` (in that order).

    Attributes: ``frames``, ``frame_links`` (:meth:`KinematicTree.frame_arrays`),
    ``tip_frames`` (T,), ``rows`` (m, 2) (tip, axis), ``row_weights`` (m,), ``tolerances``
    (T, 2) [m, rad], ``joints`` (n, 7) (see ``kernels``), ``reach`` per tip (centre [m] in the
    base frame, radius [m]), ``feature_spec`` (F, 2) and ``feature_scale`` (F,): per tip its
    position (3 components) when the task controls a linear row and its rotation matrix (9) when
    it controls an angular one, the rotation scaled by ``r / pi`` (``r`` the tip's reach: ``|R -
    R'|`` is about ``sqrt(2)`` times the angle, so one radian weighs ~0.45 of the reach), all
    times the task weight.
    """

    def __init__(
        self,
        tree,
        tips: Sequence[str],
        tasks: Mapping[str, TipTask],
        lower: np.ndarray,
        upper: np.ndarray,
        weights: np.ndarray,
        rest: np.ndarray,
    ):
        self.frames, self.frame_links = tree.frame_arrays()
        # A joint that turns freely (continuous, or revolute over more than a turn) is sampled
        # over (-pi, pi] around the seed; other bounded joints within their limits, a joint
        # bounded on one side over a full turn next to its bound.
        revolute = np.array(
            [tree.robot.joints[name].type in ("revolute", "continuous") for name in tree.joint_names],
            dtype=bool,
        )
        wraps = revolute & ~(upper - lower <= 2 * np.pi)
        finite_lower, finite_upper = np.isfinite(lower), np.isfinite(upper)
        sample_lower = np.where(finite_lower, lower, np.where(finite_upper, upper - 2 * np.pi, -np.pi))
        sample_upper = np.where(finite_upper, upper, np.where(finite_lower, lower + 2 * np.pi, np.pi))
        sample_lower, sample_upper = (
            np.where(wraps, -np.pi, sample_lower),
            np.where(wraps, np.pi, sample_upper),
        )
        self.joints = np.ascontiguousarray(
            np.stack((lower, upper, weights, rest, sample_lower, sample_upper, wraps.astype(float)), axis=1)
        )
        self._tasks = dict(tasks)
        self._tip_frame = {tip: tree.frame_index(tip) for tip in tips}
        self._reach = {tip: tree.reach(tip) for tip in tips}
        self._select_tips(tips)

    def for_tips(self, tips: Sequence[str]) -> Problem:
        """The same problem for some of the tips, in the order given (cheap: the tree, joints and
        reach are shared)."""
        problem = copy.copy(self)
        problem._select_tips(tips)
        return problem

    def _select_tips(self, tips: Sequence[str]) -> None:
        """The per-tip arrays for ``tips``, in that order."""
        tasks = self._tasks
        self.tips = tuple(tips)
        self.tip_frames = np.array([self._tip_frame[tip] for tip in self.tips], dtype=np.int64)
        self.reach = [self._reach[tip] for tip in self.tips]
        rows = [(index, axis) for index, tip in enumerate(self.tips) for axis in tasks[tip].rows]
        self.rows = np.array(rows, dtype=np.int64).reshape(-1, 2)
        # float whatever the tasks' number types (an int array would compile the kernels again)
        self.row_weights = np.array([tasks[self.tips[tip]].weight for tip, _ in rows], dtype=float)
        self.tolerances = np.array(
            [[tasks[tip].position_tolerance, tasks[tip].orientation_tolerance] for tip in self.tips],
            dtype=float,
        )
        spec, scale = [], []
        for index, tip in enumerate(self.tips):
            axes, weight, radius = tasks[tip].rows, tasks[tip].weight, self.reach[index][1]
            if np.any(axes < 3):
                spec += [(index, component) for component in range(3)]
                scale += [weight] * 3
            if np.any(axes >= 3):
                spec += [(index, component) for component in range(3, kernels.TIP_FEATURES)]
                scale += [weight * max(radius, MIN_ROTATION_SCALE) / np.pi] * 9
        self.feature_spec = np.array(spec, dtype=np.int64).reshape(-1, 2)
        self.feature_scale = np.array(scale, dtype=float)

    @property
    def lower(self) -> np.ndarray:
        return self.joints[:, kernels.LOWER]

    @property
    def upper(self) -> np.ndarray:
        return self.joints[:, kernels.UPPER]

    @property
    def weights(self) -> np.ndarray:
        return self.joints[:, kernels.WEIGHT]

    def tips_out_of_reach(self, targets: np.ndarray) -> list[str]:
        """Tips whose target position (targets (T, 4, 4), base frame) lies outside the sphere
        holding every position of the tip (only tips whose task controls a linear row)."""
        return [
            tip
            for index, (tip, (centre, radius)) in enumerate(zip(self.tips, self.reach))
            if np.any((self.rows[:, 0] == index) & (self.rows[:, 1] < 3))
            and np.linalg.norm(targets[index, :3, 3] - centre) > radius
        ]

    def features_of(self, q: np.ndarray) -> np.ndarray:
        """Seed-table features (S, F) of configurations (S, n)."""
        return kernels.table_features(
            self.frames, self.frame_links, self.tip_frames, self.feature_spec, self.feature_scale,
            np.ascontiguousarray(q, dtype=float),
        )  # fmt: skip

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """The stacked, trimmed, weighted body Jacobian (m, n) the solver inverts at ``q``."""
        poses = np.empty((len(self.frames) + 1, 4, 4))
        blocks = np.empty((len(self.tips), 6, len(q)))
        jacobian = np.empty((len(self.rows), len(q)))
        kernels.forward_kinematics(self.frames, self.frame_links, np.ascontiguousarray(q, dtype=float), poses)
        kernels.task_jacobian(
            self.frames,
            self.frame_links,
            poses,
            self.tip_frames,
            self.rows,
            self.row_weights,
            blocks,
            jacobian,
        )
        return jacobian
