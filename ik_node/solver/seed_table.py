"""The seed table: configurations sampled once within the limits, with the features of their tip
poses, whose entries nearest a goal are the search's first restarts (database-seeded IK), and the
table's index: cells of nearby entries, so that a search measures the entries of the few cells
whose centroids lie nearest its goal instead of every entry (an inverted-file index, as FAISS's
IVF; the cells are a k-d tree's leaves).

Measured on the TRAC-IK protocol with the numpy solver: starting at the nearest entry doubled the
goals solved in the first attempt on the single arms (arm6 27 -> 53 %)."""

from __future__ import annotations

import math

import numpy as np

from .kernels import TIP_FEATURES
from .problem import Problem

__all__ = ["SeedTable"]

#: The table's random stream, apart from the restarts'.
TABLE_STREAM = 1
#: Entries whose nearest-neighbour distances give the table's typical spacing.
SPACING_SAMPLE = 64
#: Entries (the first sampled) whose limbs' features a search measures for a limb's restart
#: (:meth:`Problem._select_limbs`): a limb has few joints, and a scan of these costs ~10 µs.
LIMB_ENTRIES = 1024
#: A cell of the index is split in two while it holds more entries than this.
CELL_ENTRIES = 128


class SeedTable:
    """``size`` configurations ``q`` (S, nq) uniform within the problem's sampling bounds around
    the rest posture ``center`` (a stream keyed on ``random_seed``; joints that turn freely over
    (-pi, pi] around it, multi-DOF joints within a box around it), their tip-pose ``features``
    (S, F, see :class:`Problem`), and ``spacing``: the median distance from an entry to its
    nearest neighbour (feature metres, over the first ``SPACING_SAMPLE`` entries in sampling
    order; a seed nearer its goal than this is not improved on by the table). ``size`` 0: an
    empty table.

    The index: the entries are stored cell by cell, cell ``c`` holding rows
    ``cell_starts[c]:cell_starts[c + 1]`` with the mean of their features in ``centroids[c]``
    (C, F). The cells are the leaves of a k-d tree over the features: a cell of more than
    ``CELL_ENTRIES`` entries is split in two halves at the median of its widest feature
    (:meth:`_cells`). ``sampled`` (S,): each row's index in sampling order.

    ``limb_q`` (L, nq), the first ``LIMB_ENTRIES`` entries sampled, and ``limb_features``
    (T, 12, L), float32: each tip's pose seen from its limb's frame at each of them (see
    :meth:`Problem._select_limbs`), with several tips; L = 0 otherwise."""

    def __init__(self, problem: Problem, size: int, random_seed: int, center: np.ndarray):
        generator = np.random.default_rng((random_seed, TABLE_STREAM))
        if size:
            q = problem.random_configurations(center, generator.random((size, len(problem.joints))))
            features = problem.features_of(q)
        else:  # (no kernel called)
            q, features = np.zeros((0, len(center))), np.zeros((0, len(problem.feature_spec)))
        self.spacing = self._typical_spacing(features)
        self._index(q, features, np.arange(size))
        self.limb_q, self.limb_features = self._no_limbs(problem)
        if size > 1 and np.any(problem.limb_frames >= 0) and len(problem.tips) > 1:
            self.limb_q = q[:LIMB_ENTRIES]  # (in sampling order: uniform)
            self.limb_features = problem.limb_features_of(self.limb_q).astype(np.float32)

    def __len__(self) -> int:
        return len(self.q)

    def for_tips(self, problem: Problem, parent: Problem) -> SeedTable:
        """This table for ``problem``, whose tips are a subset of ``parent``'s (same joints,
        limits and task weights): the same configurations, the feature columns of those tips."""
        table = SeedTable.__new__(SeedTable)
        position = {tip: index for index, tip in enumerate(problem.tips)}
        keep = [position.get(parent.tips[tip]) is not None for tip, _ in parent.feature_spec]
        in_sampling_order = np.argsort(self.sampled)
        features = self.features[in_sampling_order][:, keep]
        table.spacing = self._typical_spacing(features)
        table._index(self.q[in_sampling_order], features, self.sampled[in_sampling_order])
        table.limb_q, table.limb_features = self._no_limbs(problem)  # (its limbs differ: none)
        return table

    @staticmethod
    def _no_limbs(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
        return (
            np.zeros((0, len(problem.tree.joint_names))),
            np.zeros((len(problem.tips), TIP_FEATURES, 0), dtype=np.float32),
        )

    def _index(self, q: np.ndarray, features: np.ndarray, sampled: np.ndarray) -> None:
        """Store the entries cell by cell (:meth:`_cells`), with the cells' centroids."""
        order, starts = self._cells(features)
        self.q = np.ascontiguousarray(q[order])
        self.features = np.ascontiguousarray(features[order])
        self.sampled = sampled[order]
        self.cell_starts = np.asarray(starts, dtype=np.int64)
        self.centroids = np.array(
            [self.features[start:stop].mean(axis=0) for start, stop in zip(starts[:-1], starts[1:])]
        ).reshape(len(starts) - 1, features.shape[1])
        # the kernels' layout: each cell's features, and the centroids, feature by feature
        # (see kernels.table_distances), in single precision (half the memory a search reads;
        # they only rank entries)
        self.blocked_features = np.concatenate(
            [self.features[start:stop].T.ravel() for start, stop in zip(starts[:-1], starts[1:])]
            + [np.zeros(0)]
        ).astype(np.float32)
        self.blocked_centroids = np.ascontiguousarray(self.centroids.T).ravel().astype(np.float32)

    @staticmethod
    def _cells(features: np.ndarray) -> tuple[np.ndarray, list[int]]:
        """The leaves of a k-d tree over ``features`` (S, F): the entries' order (cell by cell)
        and the cells' first rows (C + 1, the last ``S``). A cell of more than ``CELL_ENTRIES``
        entries is split into two halves at the median of the feature whose values spread
        widest in it (``np.argpartition``: deterministic, the order within a half arbitrary).
        Without features (tips that only look at points: gaze tasks) the cells are the entries
        in their order, ``CELL_ENTRIES`` each: every entry as near as another."""
        order = np.arange(len(features))
        if len(features) == 0:
            return order, [0]
        if features.shape[1] == 0:
            return order, list(range(0, len(features), CELL_ENTRIES)) + [len(features)]
        pending, starts = [(0, len(features))], []
        while pending:
            start, stop = pending.pop()
            if stop - start <= CELL_ENTRIES:
                starts.append(start)
                continue
            block = features[order[start:stop]]
            widest = int(np.argmax(block.max(axis=0) - block.min(axis=0)))
            middle = (start + stop) // 2
            order[start:stop] = order[start:stop][np.argpartition(block[:, widest], middle - start)]
            pending += [(middle, stop), (start, middle)]
        return order, sorted(starts) + [len(features)]

    @staticmethod
    def _typical_spacing(features: np.ndarray) -> float:
        if len(features) < 2:
            return math.inf
        sample = features[:SPACING_SAMPLE]
        norms = (features * features).sum(axis=1)
        # |a - b|^2 = |a|^2 + |b|^2 - 2 a.b: one matrix product, not a (64, S, F) difference
        distance = norms[: len(sample), None] + norms - 2.0 * sample @ features.T
        distance[np.arange(len(sample)), np.arange(len(sample))] = math.inf
        return float(np.median(np.sqrt(np.maximum(distance.min(axis=1), 0.0))))
