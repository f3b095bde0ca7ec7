"""Forward kinematics and Jacobians of a base-to-tips tree, built from trimmed adjoint blocks.

A :class:`KinematicTree` is the part of a :class:`~ik_node.description.model.Robot` on the paths from a base
link to one or more tip links, as the flat arrays of :mod:`ik_node.compiled.spatial` (the one
implementation of FK and Jacobians; see there for the layout, the joint types and the
configuration manifold). The base may be any link: a path goes up the tree (joints crossed from
child to parent, e.g. from a stance foot) and down again.

Frames. The tree keeps one *frame* per joint that moves (at its child link, or at its parent link
when crossed upward), one per tip link, and the base (frame 0). Links joined by fixed joints sit at
constant offsets from the nearest frame. Memory and build time are linear in the number of links
on the paths.

Configurations and tangents: a tree is the :class:`~.configuration.ConfigurationSpace` of the
independent joints on its paths (joint names, limits, joint vectors, ``integrate``/``difference``).

Jacobians (twists ``[v; w]``, see :mod:`ik_node.lie`): the body Jacobian of a frame ``e`` stacks,
for every joint ``j`` on its path, the adjoint ``Ad(T_e_j)`` trimmed to the joint's unit twists,
``Ad(T) = [[R, hat(t) R], [0, R]]`` (PoE body Jacobian, Lynch & Park eq. 5.18); the *mixed* one
gives the velocity of the frame's origin and its angular velocity in base axes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..compiled import spatial
from ..errors import IKNodeError, TargetError, UnknownLinkError, URDFError
from ..lie import adjoint
from .configuration import ConfigurationSpace
from .frames import FrameWalk

__all__ = ["KinematicTree", "TASK_ROWS", "task_rows"]

#: Rows of a ``[v; w]`` Jacobian that each task kind controls.
TASK_ROWS = {
    "pose": (0, 1, 2, 3, 4, 5),
    "position": (0, 1, 2),
    "orientation": (3, 4, 5),
}

#: The central-difference step of :meth:`KinematicTree.jacobian_derivative` [s].
DERIVATIVE_STEP = 1e-6


def task_rows(task) -> np.ndarray:
    """Row indices for a task: ``'pose'``, ``'position'``, ``'orientation'`` or a 6-element mask
    over ``(vx, vy, vz, wx, wy, wz)`` (tip-frame axes for the body Jacobian)."""
    if isinstance(task, str):
        if task not in TASK_ROWS:
            raise IKNodeError(f"unknown task '{task}'; use one of {sorted(TASK_ROWS)} or a 6-axis mask")
        return np.array(TASK_ROWS[task])
    mask = np.asarray(task, dtype=bool)
    if mask.shape != (6,) or not mask.any():
        raise IKNodeError(f"a task mask needs 6 booleans (vx vy vz wx wy wz) with one set, got {task}")
    return np.flatnonzero(mask)


def _independent_joints(robot, paths) -> tuple:
    """The independent joints (mimic leaders) moving along ``paths``, in order of first
    appearance, each once."""
    leaders: dict[str, object] = {}
    for path in paths:
        for joint, _ in path:
            if joint.is_movable:
                leader = robot.joints[robot.leader_of(joint.name)]
                leaders.setdefault(leader.name, leader)
    return tuple(leaders.values())


class KinematicTree(ConfigurationSpace):
    """Forward kinematics and Jacobians between ``base_link`` and ``tip_links``.

    Attributes: those of :class:`~.configuration.ConfigurationSpace` over the independent joints
    (``joints``) on the paths, base to tips, each joint once even when shared by several tips
    (``joint_names``, ``tangent_names``, limits, ``neutral``); ``link_names`` (every link on the
    paths), ``frame_count``.
    """

    def __init__(self, robot, base_link: str, tip_links: str | Sequence[str]):
        tips = [tip_links] if isinstance(tip_links, str) else list(tip_links)
        if not tips:
            raise URDFError("at least one tip link is needed")
        if len(set(tips)) != len(tips):
            raise URDFError(f"tip links are repeated: {tips}")
        self.base_link = base_link
        self.tip_links = tuple(tips)
        paths = [robot.usable_path(base_link, tip) for tip in tips]
        super().__init__(robot, _independent_joints(robot, paths))
        self._tip_tangents = {
            tip: np.array(
                sorted(
                    self._tangent_at[leader.name] + column
                    for leader in _independent_joints(robot, [path])
                    for column in range(len(leader.tangent_names))
                ),
                dtype=np.int64,
            )
            for tip, path in zip(tips, paths)
        }
        walk = FrameWalk(robot, base_link, self._config_at, self._tangent_at)
        for path in paths:
            walk.add_path(path)
        walk.give_tips_frames(self.tip_links)
        self._link_frame = walk.link_frame
        self.link_names = tuple(walk.link_frame)
        self.frames, self.frame_links = walk.arrays()
        self.frame_count = len(self.frames) + 1

    def __repr__(self) -> str:
        return (
            f"KinematicTree(base={self.base_link!r}, tips={list(self.tip_links)}, "
            f"joints={list(self.joint_names)})"
        )

    # ------------------------------------------------------------------ forward kinematics

    def link_poses(self, q: np.ndarray) -> np.ndarray:
        """Poses ``T_base_frame`` (4x4) of every frame of the tree, base first, for ``q`` (nq,) in
        :attr:`joint_names` order (m, rad, unit quaternions), or a batch ``(B, nq)`` giving
        ``(B, frames, 4, 4)``. Read one link's pose with :meth:`pose_of`."""
        q = np.asarray(q, dtype=float)
        batch = np.ascontiguousarray(q.reshape((int(np.prod(q.shape[:-1])), q.shape[-1])))
        poses = np.empty((len(batch), self.frame_count, 4, 4))
        spatial.forward_kinematics_many(self.frames, self.frame_links, batch, poses)
        return poses.reshape(q.shape[:-1] + poses.shape[1:])

    def reach(self, link: str) -> tuple[np.ndarray, float]:
        """A sphere (centre in the base frame [m], radius [m]) containing every position of
        ``link`` over all joint values: centred on the first moving joint's frame on the way from
        the base (its origin does not move), its radius the sum of the offsets between the frames
        after it and the link, plus prismatic travel; infinite behind a planar or floating joint."""
        frame, offset = self.link_location(link)
        chain = [frame]  # pose indices from the link up to the base
        while chain[-1] != 0:
            chain.append(int(self.frame_links[chain[-1] - 1, spatial.PARENT]))
        moving = [
            index for index in chain[:-1] if self.frame_links[index - 1, spatial.JOINT_TYPE] != spatial.FIXED
        ]
        poses = self.link_poses(self.neutral)
        if not moving:  # nothing moves the link
            return self.pose_of(poses, link)[:3, 3], 0.0
        first = moving[-1]
        anchor = poses[int(self.frame_links[first - 1, spatial.PARENT])]
        anchor_point = (anchor @ self._constant(first))[:3, 3]
        radius = float(np.linalg.norm(offset[:3, 3]))
        for index in chain[: chain.index(first)]:
            radius += float(
                np.linalg.norm(self.frames[index - 1, spatial.TRANSLATION : spatial.TRANSLATION + 3])
            )
        for index in moving:
            kind = self.frame_links[index - 1, spatial.JOINT_TYPE]
            if kind in (spatial.PLANAR, spatial.FLOATING):
                return anchor_point, float("inf")
            if kind == spatial.PRISMATIC:
                at = self.frame_links[index - 1, spatial.Q_INDEX]
                travel = max(abs(self.lower[at]), abs(self.upper[at]))
                radius += abs(self.frames[index - 1, spatial.MULTIPLIER]) * travel + abs(
                    self.frames[index - 1, spatial.OFFSET]
                )
        return anchor_point, radius

    def _constant(self, index: int) -> np.ndarray:
        constant = np.eye(4)
        row = self.frames[index - 1]
        constant[:3, :3] = row[spatial.ROTATION : spatial.ROTATION + 9].reshape(3, 3)
        constant[:3, 3] = row[spatial.TRANSLATION : spatial.TRANSLATION + 3]
        return constant

    def tip_tangents(self, tip: str) -> np.ndarray:
        """The tangent coordinates (indices into ``tangent_names``, ascending) of the joints on
        the path from the base to ``tip``: those that move it (a mimic joint through its
        leader)."""
        if tip not in self._tip_tangents:
            raise KeyError(f"{tip!r} is not a tip of this tree; tips: {list(self.tip_links)}")
        return self._tip_tangents[tip]

    def frame_index(self, link: str) -> int:
        """Index into :meth:`link_poses` of a tip, the base or the child link of a moving joint."""
        frame, offset = self.link_location(link)
        if not np.array_equal(offset, np.eye(4)):
            raise IKNodeError(f"link '{link}' sits at an offset from a frame of the tree; use pose_of")
        return frame

    def pose_of(self, poses: np.ndarray, link: str) -> np.ndarray:
        """Pose ``T_base_link`` of any link on the tree's paths, read from :meth:`link_poses`."""
        frame, offset = self.link_location(link)
        return poses[..., frame, :, :] @ offset

    def forward(self, q, link: str | None = None) -> np.ndarray:
        """4x4 pose ``T_base_link`` of ``link`` (default: the first tip); ``q`` array or mapping."""
        return self.pose_of(self.link_poses(self.joint_vector(q)), link or self.tip_links[0])

    # ------------------------------------------------------------------ Jacobians

    def _jacobian(self, q, link: str | None, offset, base_axes: bool) -> np.ndarray:
        q = self.joint_vector(q)
        frame, link_offset = self.link_location(link or self.tip_links[0])
        jacobian = np.empty((6, len(self.tangent_names)))
        spatial.frame_jacobian(
            self.frames, self.frame_links, q, frame, np.ascontiguousarray(link_offset @ _as_offset(offset)),
            base_axes, jacobian,
        )  # fmt: skip
        return jacobian

    def body_jacobian(self, q, link: str | None = None, offset=None) -> np.ndarray:
        """Body Jacobian (6 x nv) of ``link`` (default: the first tip) or of a frame fixed to it:
        ``offset`` is a 3-vector (a point on the link, m, link axes) or a 4x4 pose ``T_link_f``."""
        return self._jacobian(q, link, offset, False)

    def mixed_jacobian(self, q, link: str | None = None, offset=None) -> np.ndarray:
        """Mixed Jacobian (6 x nv): the velocity of the frame's origin and its angular velocity,
        both in base-frame axes, ``blockdiag(R_base_f, R_base_f) J_b``."""
        return self._jacobian(q, link, offset, True)

    def spatial_jacobian(self, q, link: str | None = None) -> np.ndarray:
        """Spatial Jacobian (6 x nv) of ``link`` (default: the first tip): ``Ad(T_base_link) J_b``
        (Lynch & Park Sec. 5.1.3), columns ``[v; w]`` in base axes as the velocity of the point at
        the base origin. Its columns at ``q`` are the joints' screw axes there: a revolute joint's
        ``w`` is its unit axis and ``w × v`` the point of its axis nearest the base origin [m]."""
        q = self.joint_vector(q)
        return adjoint(self.forward(q, link)) @ self.body_jacobian(q, link)

    def jacobian(self, q, tips=None, frame: str = "body", tasks=None) -> np.ndarray:
        """Stacked Jacobian of several tips (shared joints appear once, as one column), each
        tip's rows trimmed to its task (``'pose'``, ``'position'``, ``'orientation'`` or a mask).

        ``frame`` is ``'body'`` or ``'mixed'``; ``tasks`` maps tip -> task (default ``'pose'``).
        """
        tips = self.tip_links if tips is None else tips
        tasks = tasks or {}
        compute = {"body": self.body_jacobian, "mixed": self.mixed_jacobian}.get(frame)
        if compute is None:
            raise IKNodeError(f"unknown Jacobian frame '{frame}'; use 'body' or 'mixed'")
        blocks = [compute(q, tip)[task_rows(tasks.get(tip, "pose"))] for tip in tips]
        return np.vstack(blocks)

    def jacobian_derivative(self, q, qdot, link: str | None = None, frame: str = "body") -> np.ndarray:
        """Time derivative (6 x nv) of the body or mixed Jacobian of ``link`` along the tangent
        velocity ``qdot`` (nv,): the central difference ``(J(q (+) h qdot) - J(q (+) -h qdot)) / 2h``
        on the configuration manifold (``h = DERIVATIVE_STEP``; error O(h^2), ~1e-10 here)."""
        if frame not in ("body", "mixed"):
            raise IKNodeError(f"unknown Jacobian frame '{frame}'; use 'body' or 'mixed'")
        q = self.joint_vector(q)
        qdot = np.asarray(qdot, dtype=float).reshape(-1)
        if qdot.shape != (len(self.tangent_names),):
            raise TargetError(
                f"qdot has {qdot.size} values; expected {len(self.tangent_names)} {list(self.tangent_names)}"
            )
        compute = self.body_jacobian if frame == "body" else self.mixed_jacobian
        plus = compute(self.integrate(q, DERIVATIVE_STEP * qdot), link)
        minus = compute(self.integrate(q, -DERIVATIVE_STEP * qdot), link)
        return (plus - minus) / (2.0 * DERIVATIVE_STEP)

    # ------------------------------------------------------------------ helpers

    def link_location(self, link: str) -> tuple[int, np.ndarray]:
        """Where ``link`` sits on the tree: ``(frame, T_frame_link)``, the index of a pose of
        :meth:`link_poses` and the link's constant 4x4 pose in that frame (translation [m]).
        Raises :class:`UnknownLinkError` for a link off the paths from the base to the tips."""
        try:
            return self._link_frame[link]
        except KeyError:
            self.robot.check_link(link)
            raise UnknownLinkError(
                link, self.link_names, what=f"link on the paths from '{self.base_link}' to the tips"
            ) from None


def _as_offset(offset) -> np.ndarray:
    if offset is None:
        return np.eye(4)
    offset = np.asarray(offset, dtype=float)
    if offset.shape == (3,):
        pose = np.eye(4)
        pose[:3, 3] = offset
        return pose
    if offset.shape != (4, 4):
        raise TargetError(f"offset must be a 3-vector or a 4x4 pose, got shape {offset.shape}")
    return offset
