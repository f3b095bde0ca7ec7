"""An IK problem as the kernels see it: the tree, the task rows of each tip (trimmed to what the
tip's task controls, weighted, in the tip's or the base's axes, at a point of the tip), the
tolerances, the joint limits, weights and rest posture, and the seed-table feature layout. Plain
arrays in the named bundles of :mod:`ik_node.solver.kernels`, inspectable in tests."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import numpy as np

from ..compiled import bundles, spatial
from ..errors import IKNodeError, TargetError
from ..lie import inverse
from . import kernels
from .options import TipTask

__all__ = ["Problem"]

#: m: the rotation weight in the seed table's distance for tips whose position does not move.
MIN_ROTATION_SCALE = 0.1
#: Restarts and seed-table entries place a planar or floating joint this far [m] and this much
#: turned [rad] from the seed (the rest posture for the table) at most, per coordinate: its
#: configuration has no limits to sample within.
FREE_TRANSLATION_SAMPLE, FREE_ROTATION_SAMPLE = 0.25, np.pi / 4
#: A target this much (relative) beyond a tip's reach sphere still counts as within reach: on a
#: sphere whose radius is constant (a leg at full stretch), rounding puts exact targets outside.
REACH_TOLERANCE = 1e-6
_AXES = {"tip": kernels.TIP_AXES, "base": kernels.BASE_AXES}
#: m: a gaze tip left out of a solve's targets looks at the point this far along its axis (its
#: line of sight held as it is at the seed).
GAZE_HOLD_DISTANCE = 1.0


def free_coordinate_is_angular(kind: int, column: int) -> bool:
    """Whether tangent column ``column`` of a multi-DOF joint of type ``kind`` turns it."""
    if kind == spatial.PLANAR:
        return column == 2
    return kind == spatial.BALL or column >= 3


class Problem:
    """The arrays of :mod:`ik_node.solver.kernels` for ``tips`` of ``tree`` (in that order).

    ``lower``/``upper``: limits per configuration coordinate (nq), kept as
    ``configuration_lower``/``configuration_upper`` (the properties :attr:`lower`/:attr:`upper`
    are per tangent coordinate); ``weights`` and ``posture_gains`` per tangent coordinate (nv);
    ``rest`` a configuration (nq), kept as ``rest_posture``. A problem is not changed after it is
    made: :meth:`with_kernels`, :meth:`for_tips` and :meth:`with_collision` make new ones.

    Attributes: ``tree_arrays`` and ``task`` (the kernels' bundles), ``joints`` (nv,
    ``JOINT_COLUMNS``), the feature switches ``posture`` (the posture gains (nv,), None when all
    are 0) and ``collision`` (None without pairs; see :meth:`with_collision`), ``reach`` per tip
    (centre [m] in the base frame, radius [m]),
    ``feature_spec`` (F, 2) and ``feature_scale`` (F,): per tip its position (3 components) when
    the task controls a linear row and its rotation matrix (9) when it controls an angular one,
    the rotation scaled by ``r / pi`` (``r`` the tip's reach: ``|R - R'|`` is about ``sqrt(2)``
    times the angle, so one radian weighs ~0.45 of the reach), all times the task weight.
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
        posture_gains: np.ndarray,
    ):
        self.tree = tree
        self.configuration_lower, self.configuration_upper, self.rest_posture = lower, upper, rest
        dof = len(tree.tangent_names)
        coordinates = np.full(dof, -1, dtype=np.int64)
        tangent_lower, tangent_upper = np.full(dof, -np.inf), np.full(dof, np.inf)
        sample_lower, sample_upper = np.empty(dof), np.empty(dof)
        tangent_rest, wraps = np.zeros(dof), np.zeros(dof)
        for joint, (kind, at, v) in zip(tree.joints, tree.spans):
            if joint.is_multi_dof:
                for column in range(spatial.TANGENT_SIZE[kind]):
                    angular = free_coordinate_is_angular(kind, column)
                    full_turn = kind == spatial.PLANAR and angular
                    bound = (
                        np.pi if full_turn else FREE_ROTATION_SAMPLE if angular else FREE_TRANSLATION_SAMPLE
                    )
                    sample_lower[v + column], sample_upper[v + column] = -bound, bound
                continue
            coordinates[v] = at
            low, high = lower[at], upper[at]
            tangent_lower[v], tangent_upper[v], tangent_rest[v] = low, high, rest[at]
            # A joint that turns freely (continuous, or revolute over more than a turn) is sampled
            # over (-pi, pi] around the seed; other bounded joints within their limits, a joint
            # bounded on one side over a full turn next to its bound.
            turns = joint.type in ("revolute", "continuous") and not high - low <= 2 * np.pi
            wraps[v] = float(turns)
            if turns:
                sample_lower[v], sample_upper[v] = -np.pi, np.pi
            else:
                sample_lower[v] = (
                    low if np.isfinite(low) else (high - 2 * np.pi if np.isfinite(high) else -np.pi)
                )
                sample_upper[v] = (
                    high if np.isfinite(high) else (low + 2 * np.pi if np.isfinite(low) else np.pi)
                )
        self.tree_arrays = bundles.tree_bundle(
            frames=tree.frames, frame_links=tree.frame_links, spans=tree.spans, coordinates=coordinates
        )
        self.joints = np.ascontiguousarray(
            np.stack(
                (
                    tangent_lower,
                    tangent_upper,
                    weights,
                    tangent_rest,
                    sample_lower,
                    sample_upper,
                    wraps,
                ),
                axis=1,
            ),
            dtype=float,
        )
        self._tasks = dict(tasks)
        gains = np.ascontiguousarray(posture_gains, dtype=float)
        self.posture = gains if np.any(gains > 0.0) else None
        self.collision = None
        self.kernels = kernels  # (what its methods call: see with_kernels)
        self._tip_frame = {tip: tree.frame_index(tip) for tip in tips}
        self._reach = {tip: tree.reach(tip) for tip in tips}
        self._select_tips(tips)

    def __copy__(self) -> Problem:
        """A shallow copy calling the same kernel set (the pickling rule below would give it the
        compiled kernels: a copy made while they compile would compile them in this process)."""
        problem = object.__new__(Problem)
        problem.__dict__.update(self.__dict__)
        return problem

    def __getstate__(self) -> dict:
        """Pickled without its kernel set (a module): the copy calls the compiled kernels."""
        state = self.__dict__.copy()
        del state["kernels"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.kernels = kernels

    def with_kernels(self, kernel_set) -> Problem:
        """The same problem calling ``kernel_set`` (:mod:`.kernels`, or its plain-Python copy:
        :func:`kernels.python_kernels`) from its methods."""
        problem = copy.copy(self)
        problem.kernels = kernel_set
        return problem

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
        tip_frames = np.array([self._tip_frame[tip] for tip in self.tips], dtype=np.int64)
        tip_offsets = np.array([tasks[tip].offset for tip in self.tips], dtype=float).reshape(-1, 3)
        tip_axes = np.array(
            [kernels.GAZE if tasks[tip].kind == "gaze" else _AXES[tasks[tip].axes] for tip in self.tips],
            dtype=np.int64,
        )
        gaze_axes = np.array([tasks[tip].axis or (0.0, 0.0, 0.0) for tip in self.tips], dtype=float)
        #: The tips whose target is a point to look at (their tasks' kind ``'gaze'``).
        self.gaze_tips = frozenset(tip for tip in self.tips if tasks[tip].kind == "gaze")
        #: ``{tip: reference}`` of the tips whose target is in another tip's frame (``relative_to``).
        self.relative_tips = {tip: tasks[tip].relative_to for tip in self.tips if tasks[tip].relative_to}
        references = self.relative_tips
        missing = {tip: other for tip, other in references.items() if other not in self.tips}
        if missing:
            raise IKNodeError(f"tips {missing} are relative to tips left out of {list(self.tips)}")
        relative_to = np.array(
            [self.tips.index(references[tip]) if tip in references else -1 for tip in self.tips],
            dtype=np.int64,
        )
        self.reach = [
            (centre, radius + float(np.linalg.norm(offset)))
            for (centre, radius), offset in zip((self._reach[tip] for tip in self.tips), tip_offsets)
        ]
        rows = [(index, axis) for index, tip in enumerate(self.tips) for axis in tasks[tip].rows]
        self.rows = np.array(rows, dtype=np.int64).reshape(-1, 2)
        # float whatever the tasks' number types (an int array would compile the kernels again)
        row_weights = np.array([tasks[self.tips[tip]].weight for tip, _ in rows], dtype=float)
        row_bands = np.array([tasks[self.tips[tip]].bands[axis] for tip, axis in rows], dtype=float)
        #: How far a target may lie beyond a tip's reach and still be met: its position band [m].
        self._reach_slack = [float(np.linalg.norm(tasks[tip].bands[:3])) for tip in self.tips]
        tolerances = np.array(
            [[tasks[tip].position_tolerance, tasks[tip].orientation_tolerance] for tip in self.tips],
            dtype=float,
        )
        paths = [self.tree.tip_tangents(tip) for tip in self.tips]
        path_starts = np.cumsum([0] + [len(path) for path in paths], dtype=np.int64)
        path_coordinates = np.concatenate(paths + [np.zeros(0, dtype=np.int64)])
        self.task = bundles.task_bundle(
            tip_frames=tip_frames,
            tip_offsets=tip_offsets,
            tip_axis_kinds=tip_axes,
            rows=self.rows,
            row_weights=row_weights,
            tolerances=tolerances,
            path_starts=path_starts,
            path_coordinates=path_coordinates,
            row_bands=row_bands,
            gaze_axes=gaze_axes.reshape(-1, 3),
            relative_to=relative_to,
        )
        spec, scale = [], []
        for index, tip in enumerate(self.tips):
            if tip in self.gaze_tips or tip in self.relative_tips:  # (no pose of the tip in the base's)
                continue
            axes, weight, radius = tasks[tip].rows, tasks[tip].weight, self.reach[index][1]
            if np.any(axes < 3):
                spec += [(index, component) for component in range(3)]
                scale += [weight] * 3
            if np.any(axes >= 3):
                spec += [(index, component) for component in range(3, kernels.TIP_FEATURES)]
                rotation_scale = radius if np.isfinite(radius) else 1.0
                scale += [weight * max(rotation_scale, MIN_ROTATION_SCALE) / np.pi] * 9
        self.feature_spec = np.array(spec, dtype=np.int64).reshape(-1, 2)
        self.feature_scale = np.array(scale, dtype=float)
        self._select_limbs(paths)

    def _select_limbs(self, paths: list[np.ndarray]) -> None:
        """Each tip's limb: the joints on its path that move no other tip (their tangent
        coordinates, compressed rows over the tips: ``limb_starts``, ``limb_coordinates``), the
        pose index of the frame they hang from (``limb_frames``; -1 without such joints), and the
        scale of its pose features there (``limb_scale`` (T, 12): the seed table's, 0 for the
        components the task leaves free). A restart can then take a limb's joints from the table
        entry whose pose of the tip, seen from that frame, is nearest the target's."""
        frame_links, dof = self.tree.frame_links, len(self.joints)
        tips_moved = np.bincount(np.concatenate(paths + [np.zeros(0, dtype=np.int64)]), minlength=dof)
        moving_rows = np.flatnonzero(frame_links[:, spatial.JOINT_TYPE] != spatial.FIXED)
        first_row = np.full(dof, len(frame_links), dtype=np.int64)  # (each coordinate's first frame)
        np.minimum.at(first_row, frame_links[moving_rows, spatial.V_INDEX], moving_rows)
        frames, limbs = [], []
        for path in paths:  # (linear in the paths' lengths: a tree of many tips builds at once)
            own = path[tips_moved[path] == 1]
            frames.append(int(frame_links[first_row[own].min(), spatial.PARENT]) if len(own) else -1)
            limbs.append(own)
        self.limb_frames = np.array(frames, dtype=np.int64)
        self.limb_starts = np.cumsum([0] + [len(limb) for limb in limbs], dtype=np.int64)
        self.limb_coordinates = np.concatenate(limbs + [np.zeros(0, dtype=np.int64)])
        self.limb_scale = np.zeros((len(self.tips), kernels.TIP_FEATURES))
        for (tip, component), scale in zip(self.feature_spec, self.feature_scale):
            self.limb_scale[tip, component] = scale

    def with_tasks(self, tasks: Mapping[str, TipTask]) -> Problem:
        """The same problem with some tips' tasks replaced (``tasks``: ``{tip: TipTask}``; cheap:
        the tree, joints and reach are shared)."""
        problem = copy.copy(self)
        problem._tasks = {**self._tasks, **tasks}
        problem._select_tips(self.tips)
        return problem

    def with_collision(self, collision: tuple) -> Problem:
        """The same problem keeping the pairs ``collision`` apart: (shapes, pairs, owners, groups,
        margin [m], hull points, hull paddings) (see ``contacts``); kept as None when it has no
        pairs (no collision checks: the kernels without them)."""
        problem = copy.copy(self)
        problem.collision = collision if len(collision[bundles.PAIRS]) > 0 else None
        return problem

    @property
    def tip_frames(self) -> np.ndarray:
        return self.task[bundles.TIP_FRAMES]

    @property
    def row_weights(self) -> np.ndarray:
        return self.task[bundles.ROW_WEIGHTS]

    @property
    def tolerances(self) -> np.ndarray:
        return self.task[bundles.TOLERANCES]

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
        holding every position of the tip's controlled point, by more than ``REACH_TOLERANCE``
        of its radius and the tip's position tolerance (only tips whose task controls the whole
        position: three linear rows)."""
        out = []
        for index, (tip, (centre, radius)) in enumerate(zip(self.tips, self.reach)):
            if tip in self.relative_tips:  # (its target is in another tip's frame)
                continue
            linear_rows = np.count_nonzero((self.rows[:, 0] == index) & (self.rows[:, 1] < 3))
            margin = radius * (1.0 + REACH_TOLERANCE) + self.tolerances[index, 0] + self._reach_slack[index]
            if linear_rows == 3 and np.linalg.norm(targets[index, :3, 3] - centre) > margin:
                out.append(tip)
        return out

    def features_of(self, q: np.ndarray) -> np.ndarray:
        """Seed-table features (S, F) of configurations (S, nq)."""
        return self.kernels.table_features(
            self.tree_arrays,
            self.task,
            self.feature_spec,
            self.feature_scale,
            np.ascontiguousarray(q, dtype=float),
        )

    def limb_features_of(self, q: np.ndarray) -> np.ndarray:
        """Each tip's pose features seen from its limb's frame (T, 12, S) at configurations
        (S, nq)."""
        return self.kernels.limb_table_features(
            self.tree_arrays,
            self.task,
            self.limb_frames,
            self.limb_scale,
            np.ascontiguousarray(q, dtype=float),
        )

    def _evaluated(self, q: np.ndarray, targets: np.ndarray | None = None) -> tuple:
        """The kernels' workspace after :func:`kernels.evaluate` at ``q`` (nq,) toward ``targets``
        (T, 4, 4; None: the base's origin): FK, the tips' controlled points (slot ``POINTS``),
        ready for :func:`kernels.jacobian_at`."""
        space = self.kernels.evaluation_workspace(
            self.tree_arrays, self.task, np.int64(len(self.joints)), None
        )
        error, norms = np.empty(len(self.rows)), np.empty((len(self.tips), 2))
        if targets is None:
            targets = np.repeat(np.eye(4)[None], len(self.tips), axis=0)
        self.kernels.evaluate(
            self.tree_arrays,
            self.task,
            None,
            targets,
            np.ascontiguousarray(q, dtype=float),
            space,
            error,
            norms,
        )
        return space

    def held_targets(self, q: np.ndarray) -> np.ndarray:
        """The targets (T, 4, 4) that hold the tips where they are at ``q`` (nq,): each controlled
        point's pose; for a gaze tip the point ``GAZE_HOLD_DISTANCE`` along its axis (it keeps
        looking the way it looks); for a relative tip its pose in its reference's frame."""
        points = self.points(q)
        held = points.copy()
        gaze_axes, relative_to = self.task[bundles.GAZE_AXES], self.task[bundles.RELATIVE_TO]
        for index, tip in enumerate(self.tips):
            if tip in self.gaze_tips:
                held[index, :3, 3] += GAZE_HOLD_DISTANCE * (points[index, :3, :3] @ gaze_axes[index])
            if relative_to[index] >= 0:
                held[index] = inverse(points[relative_to[index]]) @ points[index]
        return held

    def check_gaze_targets(self, targets: np.ndarray, q: np.ndarray) -> None:
        """Raise :class:`TargetError` naming the gaze tip whose target (``targets`` (T, 4, 4))
        lies at its controlled point at ``q`` (nq,): no line of sight there (asked after a solve
        from ``q`` failed: a tip that moves away from the point may still look at it)."""
        points = self.points(q)
        for index, tip in enumerate(self.tips):
            if tip in self.gaze_tips:
                if np.linalg.norm(targets[index, :3, 3] - points[index, :3, 3]) < kernels.GAZE_MIN_DISTANCE:
                    raise TargetError(
                        f"gaze target for tip '{tip}' is at the tip's own point "
                        f"{points[index, :3, 3].tolist()} [m]: there is no direction to look in"
                    )

    def points(self, q: np.ndarray) -> np.ndarray:
        """Poses (T, 4, 4) ``T_base_point`` of each tip's controlled point at ``q`` (nq,)."""
        return self._evaluated(q)[bundles.POINTS].copy()

    def jacobian(self, q: np.ndarray, targets: np.ndarray | None = None) -> np.ndarray:
        """The stacked, trimmed, weighted task Jacobian (m, nv) the solver inverts at ``q`` (nq,)
        toward ``targets`` (T, 4, 4; what a gaze tip's rows and a banded row depend on; None: the
        base's origin)."""
        jacobian = np.empty((len(self.rows), len(self.joints)))
        self.kernels.jacobian_at(self.tree_arrays, self.task, self._evaluated(q, targets), jacobian)
        return jacobian

    def random_configurations(self, center: np.ndarray, draws: np.ndarray) -> np.ndarray:
        """Configurations (S, nq) from uniform draws (S, nv) around ``center`` (nq,), as the
        search's random restarts make them (one call of :func:`kernels.configurations_from_draws`)."""
        out = np.empty((len(draws), len(center)))
        draws = np.array(draws, dtype=float, order="C")  # (a copy: the kernel overwrites it)
        self.kernels.configurations_from_draws(self.tree_arrays, self.joints, center, draws, -1.0, out)
        return out
