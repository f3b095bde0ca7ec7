"""Forward kinematics and Jacobians of a base-to-tips tree, built from trimmed adjoint blocks.

A :class:`KinematicTree` is the part of a :class:`~ik_node.model.Robot` on the paths from a base
link to one or more tip links, compiled to numpy arrays once so that each evaluation is a handful
of vectorised calls.

Frames. The tree keeps one *frame* per link that moves relative to its parent (the child link of a
movable joint), one per tip link, and the base (frame 0). Links joined by fixed joints are folded
into constant offsets. Frame ``i`` sits at ``T_parent_i(q) = C_i @ M_i(theta_i)`` where ``C_i`` is
constant (fixed joints and the joint origin) and ``M_i`` is the joint motion about / along its unit
axis ``a``:  ``M = (I + sin(theta) hat(a) + (1 - cos(theta)) hat(a)^2, 0)`` for revolute joints
(Rodrigues) and ``(I, theta a)`` for prismatic ones, with ``theta = m q_leader + o`` for mimic
joints (``m = 1, o = 0`` otherwise).

Jacobians (twists ``[v; w]``, see :mod:`ik_node.lie`). The body Jacobian of a tip frame ``e``
stacks, for every joint ``j`` on the path to ``e``, the joint's unit twist ``S_j`` (in its own
frame) mapped by the adjoint of ``T_e_j = T_base_e^-1 T_base_j``:

    J_b[:, j] = Ad(T_e_j) S_j,     Ad(T) = [[R, hat(t) R], [0, R]]          (PoE body Jacobian)

``S_j`` trims the 6x6 block ``Ad(T_e_j)`` to the joint's motion: its angular columns along the
axis for revolute joints, its linear columns for prismatic ones. A mimic follower's column is
added, times its multiplier, to its leader's column. Joints off the path give zero columns. The
*mixed* Jacobian ``blockdiag(R_be, R_be) J_b`` gives the tip-origin velocity in base-aligned axes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .errors import IKNodeError, TargetError, UnknownJointError, UnknownLinkError, URDFError
from .lie import adjoint, hat, inverse

__all__ = ["KinematicTree", "TASK_ROWS", "task_rows"]

#: Rows of a ``[v; w]`` Jacobian that each task kind controls.
TASK_ROWS = {
    "pose": (0, 1, 2, 3, 4, 5),
    "position": (0, 1, 2),
    "orientation": (3, 4, 5),
}


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


class KinematicTree:
    """Forward kinematics and Jacobians between ``base_link`` and ``tip_links``.

    Attributes: ``joint_names`` (the degrees of freedom, base to tips, each once even when shared
    by several tips), ``lower``/``upper`` (position limits, rad or m, ``-inf``/``inf`` for
    continuous joints), ``max_velocity`` (rad/s or m/s), ``link_names`` (every link on the paths),
    ``frame_count`` (poses one :meth:`link_poses` call computes: the base, every movable joint's
    child, every tip).
    """

    def __init__(self, robot, base_link: str, tip_links: str | Sequence[str]):
        tips = [tip_links] if isinstance(tip_links, str) else list(tip_links)
        if not tips:
            raise URDFError("at least one tip link is needed")
        if len(set(tips)) != len(tips):
            raise URDFError(f"tip links are repeated: {tips}")
        self.robot = robot
        self.base_link = base_link
        self.tip_links = tuple(tips)
        paths = [robot.usable_path_joints(base_link, tip) for tip in tips]

        # Links on the paths in topological order (parents first) and the joints reaching them.
        link_joint: dict[str, object] = {base_link: None}
        for path in paths:
            for joint in path:
                link_joint.setdefault(joint.child, joint)
        self.link_names = tuple(link_joint)

        # Frames: the base, every child of a movable joint, every tip.
        frame_links = [
            link
            for link, joint in link_joint.items()
            if joint is None or joint.is_movable or link in self.tip_links
        ]
        frame_index = {link: index for index, link in enumerate(frame_links)}
        # Every link on the paths sits at a constant offset from its nearest frame (at or above it).
        self._link_frame: dict[str, tuple[int, np.ndarray]] = {}
        for link, joint in link_joint.items():
            if link in frame_index:
                self._link_frame[link] = (frame_index[link], np.eye(4))
            else:
                parent_frame, parent_offset = self._link_frame[joint.parent]
                self._link_frame[link] = (parent_frame, parent_offset @ joint.origin)

        # Degrees of freedom: the leaders of the movable joints, in order of first appearance.
        dof_names: list[str] = []
        for link in frame_links[1:]:
            joint = link_joint[link]
            if joint.is_movable:
                leader = robot.leader_of(joint.name)
                if leader not in dof_names:
                    dof_names.append(leader)
        self.joint_names = tuple(dof_names)
        self._dof_index = {name: index for index, name in enumerate(dof_names)}
        leaders = [robot.joints[name] for name in dof_names]
        self.lower = np.array([joint.lower for joint in leaders])
        self.upper = np.array([joint.upper for joint in leaders])
        self.max_velocity = np.array([joint.max_velocity for joint in leaders])
        self.continuous = np.array([joint.type == "continuous" for joint in leaders], dtype=bool)

        count = len(frame_links) - 1  # frames other than the base
        self._parent = np.zeros(count, dtype=int)
        constant = np.zeros((count, 4, 4))
        self._twist = np.zeros((count, 6))
        self._dof = np.zeros(count, dtype=int)
        self._multiplier = np.zeros(count)
        self._offset = np.zeros(count)
        for index, link in enumerate(frame_links[1:]):
            joint = link_joint[link]
            parent_frame, parent_offset = self._link_frame[joint.parent]
            self._parent[index] = parent_frame
            constant[index] = parent_offset @ joint.origin
            if joint.is_movable:
                leader, multiplier, offset = robot.mimic_map(joint.name)
                self._twist[index] = joint.unit_twist
                self._dof[index] = self._dof_index[leader]
                self._multiplier[index], self._offset[index] = multiplier, offset
        self._constant_rotation = constant[:, :3, :3].copy()
        self._axis_hat = hat(self._twist[:, 3:])
        self._rotation_sine_term = self._constant_rotation @ self._axis_hat
        self._rotation_cosine_term = self._rotation_sine_term @ self._axis_hat
        self._translation_term = np.einsum("nij,nj->ni", self._constant_rotation, self._twist[:, :3])
        self._has_prismatic = bool(np.any(self._twist[:, :3]))
        self._has_offsets = bool(np.any(self._offset))
        self._pose_template = np.concatenate((np.eye(4)[None], constant))
        ancestor = np.concatenate(([0], self._parent))  # the base is its own parent
        self._jump_ancestors = []
        while np.any(ancestor):
            self._jump_ancestors.append(ancestor)
            ancestor = ancestor[ancestor]
        self.frame_count = len(frame_links)
        self._frame_links = tuple(frame_links)

        # Per frame: the movable frames on its path from the base (base first) and the matrix that
        # folds their columns into degree-of-freedom columns (mimic multipliers included).
        self._ancestors: list[np.ndarray] = [np.zeros(0, dtype=int)]
        self._fold: list[np.ndarray] = [np.zeros((0, len(dof_names)))]
        for index in range(count):
            chain = [index] if self._twist[index].any() else []
            parent = self._parent[index]
            ancestors = np.concatenate((self._ancestors[parent], chain)).astype(int)
            fold = np.zeros((len(ancestors), len(dof_names)))
            fold[np.arange(len(ancestors)), self._dof[ancestors]] = self._multiplier[ancestors]
            self._ancestors.append(ancestors)
            self._fold.append(fold)
        # The same paths as pose indices (a slice where contiguous, the common case of a chain),
        # and the joint twists and axis hats indexed by pose (row 0, the base, is zero).
        self._path_index = [_as_slice_if_contiguous(ancestors + 1) for ancestors in self._ancestors]
        pose_twist = np.vstack((np.zeros((1, 6)), self._twist))
        self._pose_twist_columns = np.stack((pose_twist[:, :3], pose_twist[:, 3:]), axis=2)
        self._pose_axis_hat_t = np.concatenate((np.zeros((1, 3, 3)), self._axis_hat)).transpose(0, 2, 1)

    def __repr__(self) -> str:
        return (
            f"KinematicTree(base={self.base_link!r}, tips={list(self.tip_links)}, "
            f"joints={list(self.joint_names)})"
        )

    def frame_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The tree as flat arrays for the compiled kernels (:mod:`ik_node.solver.kernels`):
        ``frames`` (K, 20) per frame after the base: constant rotation (9, row-major) and
        translation (3) from its parent frame, unit twist ``[a_lin; a_rot]`` (6), mimic multiplier
        and offset; ``frame_links`` (K, 2): parent pose index, degree of freedom (-1: fixed)."""
        constant = self._pose_template[1:]
        frames = np.concatenate(
            (
                constant[:, :3, :3].reshape(-1, 9),
                constant[:, :3, 3],
                self._twist,
                self._multiplier[:, None],
                self._offset[:, None],
            ),
            axis=1,
        )
        movable = self._twist.any(axis=1)
        frame_links = np.stack((self._parent, np.where(movable, self._dof, -1)), axis=1).astype(np.int64)
        return np.ascontiguousarray(frames), np.ascontiguousarray(frame_links)

    # ------------------------------------------------------------------ joint vectors

    def joint_vector(self, q, what: str = "joint vector") -> np.ndarray:
        """``q`` as an array in :attr:`joint_names` order.

        A mapping may name any subset of the degrees of freedom (the rest sit at 0); an array must
        have one finite value per degree of freedom. ``what`` names ``q`` in error messages.
        """
        if isinstance(q, Mapping):
            vector = np.zeros(len(self.joint_names))
            for name, value in q.items():
                index = self._dof_index.get(name)
                if index is None:
                    joint = self.robot.joints.get(name)
                    if joint is not None and joint.mimic is not None:
                        raise TargetError(
                            f"joint '{name}' mimics '{self.robot.leader_of(name)}'; set the leader"
                        )
                    raise UnknownJointError(name, self.joint_names, what="joint of this tree")
                vector[index] = value
        else:
            vector = np.asarray(q, dtype=float).reshape(-1)
            if vector.shape != (len(self.joint_names),):
                raise TargetError(
                    f"{what} has {vector.size} values; expected {len(self.joint_names)} "
                    f"for joints {list(self.joint_names)}"
                )
        if not np.all(np.isfinite(vector)):
            bad = [self.joint_names[i] for i in np.flatnonzero(~np.isfinite(vector))]
            raise TargetError(f"{what} contains NaN or infinity for joints {bad}")
        return vector

    # ------------------------------------------------------------------ forward kinematics

    def link_poses(self, q: np.ndarray) -> np.ndarray:
        """Poses ``T_base_frame`` (4x4) of every frame of the tree in one pass, base first.

        ``q`` is an array in :attr:`joint_names` order (m, rad), or a batch ``(B, dof)`` giving
        ``(B, frames, 4, 4)``. Read one link's pose with :meth:`pose_of`. With ``C = (C_R, C_t)``
        the constant part and Rodrigues' formula for the motion, the local rotation is
        ``C_R + sin(theta) C_R hat(a) + (1 - cos(theta)) C_R hat(a)^2`` and the local translation
        ``C_t + theta C_R a_lin`` (both products precomputed).
        """
        if self.joint_names:
            theta = q[..., self._dof] * self._multiplier
        else:  # nothing moves: every frame at its constant offset
            theta = np.zeros(q.shape[:-1] + self._multiplier.shape)
        if self._has_offsets:
            theta += self._offset
        batch = q.shape[:-1]
        poses = np.empty(batch + self._pose_template.shape)
        poses[...] = self._pose_template
        poses[..., 1:, :3, :3] = (
            self._constant_rotation
            + np.sin(theta)[..., None, None] * self._rotation_sine_term
            + (1.0 - np.cos(theta))[..., None, None] * self._rotation_cosine_term
        )
        if self._has_prismatic:
            poses[..., 1:, :3, 3] += theta[..., None] * self._translation_term
        # Pointer jumping: after level k every pose is the product of up to 2^(k+1) local
        # transforms ending at it; log2(depth) batched products instead of one per frame.
        for ancestor in self._jump_ancestors:
            poses = poses[..., ancestor, :, :] @ poses
        return poses

    def reach(self, link: str) -> tuple[np.ndarray, float]:
        """A sphere (centre in the base frame [m], radius [m]) containing every position of
        ``link`` over all joint values: centred on the first moving joint's origin (fixed in the
        base frame), its radius the sum of the frame offsets after it plus the prismatic travel."""
        frame, offset = self._link_location(link)
        chain = [frame]  # frames from the link up to the first movable one (pose indices)
        while chain[-1] != 0 and not (
            len(self._ancestors[chain[-1]]) == 1 and self._twist[chain[-1] - 1].any()
        ):
            chain.append(int(self._parent[chain[-1] - 1]))
        poses_at_zero = self.link_poses(np.zeros(len(self.joint_names)))
        first = chain[-1]
        if first == 0:  # nothing moves the link
            return self.pose_of(poses_at_zero, link)[:3, 3], 0.0
        anchor = (poses_at_zero[int(self._parent[first - 1])] @ self._pose_template[first])[:3, 3]
        radius = float(np.linalg.norm(offset[:3, 3]))
        radius += sum(float(np.linalg.norm(self._pose_template[index, :3, 3])) for index in chain[:-1])
        for index in chain:
            if self._twist[index - 1, :3].any():  # a prismatic joint adds its travel
                dof = self._dof[index - 1]
                travel = max(abs(self.lower[dof]), abs(self.upper[dof]))
                radius += abs(self._multiplier[index - 1]) * travel + abs(self._offset[index - 1])
        return anchor, radius

    def frame_index(self, link: str) -> int:
        """Index into :meth:`link_poses` of a tip or of the child link of a movable joint."""
        frame, offset = self._link_location(link)
        if not np.array_equal(offset, np.eye(4)):
            raise IKNodeError(f"link '{link}' is fixed to frame '{self._frame_links[frame]}'; use pose_of")
        return frame

    def pose_of(self, poses: np.ndarray, link: str) -> np.ndarray:
        """Pose ``T_base_link`` of any link on the tree's paths, read from :meth:`link_poses`."""
        frame, offset = self._link_location(link)
        return poses[frame] @ offset

    def forward(self, q, link: str | None = None) -> np.ndarray:
        """4x4 pose ``T_base_link`` of ``link`` (default: the first tip); ``q`` array or mapping."""
        return self.pose_of(self.link_poses(self.joint_vector(q)), link or self.tip_links[0])

    # ------------------------------------------------------------------ Jacobians

    def _path_columns(self, poses: np.ndarray, frame: int) -> np.ndarray:
        """Body-Jacobian columns (6, m) of the m movable frames ``j`` on the path to frame ``e``.

        Each is the adjoint block ``Ad(T_e_j)`` trimmed to the joint's unit twist
        ``S_j = [a_lin; a_rot]``. With ``T_j_e = (R, d)`` (the tip seen from joint ``j``), ``T_e_j``
        is its inverse and ``Ad(T_e_j) S_j = [R^T (a_lin + hat(a_rot) d); R^T a_rot]``, evaluated
        with ``R^T = R_base_e^T R_base_j`` and ``d = R_base_j^T (t_base_e - t_base_j)``.
        """
        path = self._path_index[frame]
        path_poses = poses[..., path, :, :]
        rotations = path_poses[..., :3, :3]
        offsets = poses[..., frame, None, :3, 3] - path_poses[..., :3, 3]
        tip_in_joint = offsets[..., None, :] @ rotations  # d^T = (R_base_j^T offset)^T, (m, 1, 3)
        twist_columns = np.empty(rotations.shape[:-2] + (3, 2))  # (m, 3, 2): [a_lin, a_rot]
        twist_columns[...] = self._pose_twist_columns[path]
        twist_columns[..., 0] += (tip_in_joint @ self._pose_axis_hat_t[path])[..., 0, :]  # + hat(a) d
        tip_rotation_t = np.swapaxes(poses[..., frame, None, :3, :3], -1, -2)
        columns = tip_rotation_t @ (rotations @ twist_columns)  # (m, 3, 2), tip axes
        return np.swapaxes(columns, -1, -3).reshape(columns.shape[:-3] + (6, -1))

    def frame_body_jacobian(self, poses: np.ndarray, frame: int) -> np.ndarray:
        """Body Jacobian (6 x dof, or (B, 6, dof) for batched poses) of frame index ``frame`` from
        precomputed :meth:`link_poses`: the path columns folded into degree-of-freedom columns
        (the solver's hot path)."""
        return self._path_columns(poses, frame) @ self._fold[frame]

    def body_jacobian(self, q, link: str | None = None, offset=None) -> np.ndarray:
        """Body Jacobian (6 x dof) of ``link`` (default: the first tip) or of a frame fixed to it.

        ``offset`` is a 3-vector (a point on the link, m, link axes) or a 4x4 pose ``T_link_f``;
        the Jacobian of frame ``f`` is ``Ad(T_f_link) J_link`` (the seed's point Jacobian: for a
        pure point offset the adjoint has an identity rotation).
        """
        q = self.joint_vector(q)
        frame, link_offset = self._link_location(link or self.tip_links[0])
        jacobian = self.frame_body_jacobian(self.link_poses(q), frame)
        total_offset = link_offset @ _as_offset(offset)
        if np.allclose(total_offset, np.eye(4), rtol=0.0, atol=0.0):
            return jacobian
        return adjoint(inverse(total_offset)) @ jacobian

    def mixed_jacobian(self, q, link: str | None = None, offset=None) -> np.ndarray:
        """Mixed Jacobian (6 x dof): the velocity of the frame's origin and its angular velocity,
        both in base-frame axes, ``blockdiag(R_base_f, R_base_f) J_b``."""
        q = self.joint_vector(q)
        rotation = self.forward(q, link)[:3, :3] @ _as_offset(offset)[:3, :3]
        return _rotate_twists(rotation, self.body_jacobian(q, link, offset))

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
        """Time derivative (6 x dof) of the body or mixed Jacobian of ``link`` along ``qdot``.

        From the adjoint derivative ``d/dt Ad(T_e_j) = -ad(V_j->e) Ad(T_e_j)``: column ``j`` of the
        body Jacobian changes as ``dJ_j/dt = ad(J_j) sum_{i after j} J_i qdot_i`` (joints after
        ``j`` on the path to the tip), with ``ad([v; w]) = [[hat(w), hat(v)], [0, hat(w)]]``.
        The mixed one adds the rotation of the axes: ``blockdiag(R hat(w_b), R hat(w_b)) J_b``.
        """
        q = self.joint_vector(q)
        qdot = self.joint_vector(qdot)
        frame_index, offset = self._link_location(link or self.tip_links[0])
        poses = self.link_poses(q)
        fold = self._fold[frame_index]
        columns = self._path_columns(poses, frame_index).T
        rates = fold @ qdot  # joint rate of each frame on the path
        weighted = columns * rates[:, None]
        after = np.cumsum(weighted[::-1], axis=0)[::-1] - weighted  # sum over later joints
        derivative_columns = np.concatenate(
            (
                np.cross(columns[:, 3:], after[:, :3]) + np.cross(columns[:, :3], after[:, 3:]),
                np.cross(columns[:, 3:], after[:, 3:]),
            ),
            axis=1,
        )
        body_derivative = derivative_columns.T @ fold
        body = columns.T @ fold
        if not np.allclose(offset, np.eye(4), rtol=0.0, atol=0.0):
            offset_adjoint = adjoint(inverse(offset))
            body_derivative = offset_adjoint @ body_derivative
            body = offset_adjoint @ body
        if frame == "body":
            return body_derivative
        if frame != "mixed":
            raise IKNodeError(f"unknown Jacobian frame '{frame}'; use 'body' or 'mixed'")
        rotation = (poses[frame_index] @ offset)[:3, :3]
        angular_velocity = body[3:] @ qdot
        return _rotate_twists(rotation @ hat(angular_velocity), body) + _rotate_twists(
            rotation, body_derivative
        )

    # ------------------------------------------------------------------ helpers

    def _link_location(self, link: str) -> tuple[int, np.ndarray]:
        try:
            return self._link_frame[link]
        except KeyError:
            self.robot.check_link(link)
            raise UnknownLinkError(
                link, self.link_names, what=f"link on the paths from '{self.base_link}' to the tips"
            ) from None


def _as_slice_if_contiguous(indices: np.ndarray):
    """A basic slice for a run of consecutive indices (numpy returns views, no copies)."""
    if len(indices) and np.array_equal(indices, np.arange(indices[0], indices[-1] + 1)):
        return slice(int(indices[0]), int(indices[-1]) + 1)
    return indices


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


def _rotate_twists(rotation: np.ndarray, twists: np.ndarray) -> np.ndarray:
    """``blockdiag(R, R) @ twists`` for a (6, n) array of ``[v; w]`` columns."""
    return np.vstack((rotation @ twists[:3], rotation @ twists[3:]))
