"""The frames of a kinematic tree, made by walking each path from the base: one frame per joint
that moves (at its child link, or at its parent link when crossed upward), one per tip, and the
rows :mod:`ik_node.compiled.spatial` reads (its layout: ``FRAME_COLUMNS``, ``LINK_COLUMNS``).

A frame's constant ``C`` and motion ``M(q)`` give ``T_parent_frame = C M(q)``. Crossed from
parent to child, a joint's frame is ``C = T_offset origin B`` (``B``: a planar joint's basis,
the identity for others) and the link sits at ``B^T`` from it. Crossed upward (from child to
parent, e.g. from a stance foot), ``T_child_parent = B M(q)^-1 B^T origin^-1``: a frame at ``B``
holding no motion where needed, then the reversed motion with ``C = I`` (its Jacobian columns act
at its parent's pose), the parent link at ``B^T origin^-1`` from it. Links joined by fixed joints
sit at constant offsets from the nearest frame."""

from __future__ import annotations

import numpy as np

from ..compiled import spatial
from ..lie import inverse

__all__ = ["FrameWalk", "TYPE_CODES", "plane_basis"]

#: URDF joint types as :mod:`ik_node.compiled.spatial` codes.
TYPE_CODES = {
    "revolute": spatial.REVOLUTE,
    "continuous": spatial.REVOLUTE,
    "prismatic": spatial.PRISMATIC,
    "planar": spatial.PLANAR,
    "ball": spatial.BALL,
    "floating": spatial.FLOATING,
}


def plane_basis(normal: np.ndarray) -> np.ndarray:
    """A rotation whose z column is the unit ``normal`` (a planar joint's axis): the joint moves
    in the xy plane of this basis. The identity for ``normal = z``; otherwise x is the unit
    vector of ``normal x e`` with ``e`` the coordinate axis least aligned with the normal."""
    normal = np.asarray(normal, dtype=float)
    if np.allclose(normal, (0.0, 0.0, 1.0)):
        return np.eye(3)
    helper = np.eye(3)[int(np.argmin(np.abs(normal)))]
    x = np.cross(helper, normal)
    x /= np.linalg.norm(x)
    return np.column_stack((x, np.cross(normal, x), normal))


class FrameWalk:
    """The frames of the paths from ``base_link`` (frame 0), added path by path
    (:meth:`add_path`); ``link_frame`` maps each link reached to ``(pose index, offset)``: where
    it sits, ``T_frame_link``. ``config_at``/``tangent_at``: each independent joint's first
    configuration and tangent coordinate, by name."""

    def __init__(self, robot, base_link: str, config_at: dict, tangent_at: dict):
        self._robot = robot
        self._config_at, self._tangent_at = config_at, tangent_at
        self._rows: list[np.ndarray] = []
        self._links: list[tuple] = []
        self.link_frame: dict[str, tuple[int, np.ndarray]] = {base_link: (0, np.eye(4))}
        self._base = base_link

    def add_path(self, path) -> None:
        """The frames of one path (``(joint, upward)`` pairs from the base) not added yet."""
        link = self._base
        for joint, upward in path:
            reached = joint.parent if upward else joint.child
            if reached not in self.link_frame:
                frame, offset = self.link_frame[link]
                self.link_frame[reached] = self._cross(joint, upward, frame, offset)
            link = reached

    def give_tips_frames(self, tips) -> None:
        """A frame of its own for every tip sitting at an offset from its frame."""
        for tip in tips:
            frame, offset = self.link_frame[tip]
            if not np.array_equal(offset, np.eye(4)):
                self.link_frame[tip] = (self._add(frame, offset, (spatial.FIXED, -1, -1, 0)), np.eye(4))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(frames (F, FRAME_COLUMNS), frame_links (F, LINK_COLUMNS))``, C-contiguous."""
        frames = np.array(self._rows, dtype=float).reshape(-1, spatial.FRAME_COLUMNS)
        links = np.array(self._links, dtype=np.int64).reshape(-1, spatial.LINK_COLUMNS)
        return np.ascontiguousarray(frames), np.ascontiguousarray(links)

    def _add(
        self, parent: int, constant: np.ndarray, link_row: tuple, axis=(0.0, 0.0, 0.0), mimic=(1.0, 0.0)
    ):
        """A frame under pose ``parent`` with constant ``constant`` (4x4); returns its pose index."""
        row = np.zeros(spatial.FRAME_COLUMNS)
        row[spatial.ROTATION : spatial.ROTATION + 9] = constant[:3, :3].reshape(-1)
        row[spatial.TRANSLATION : spatial.TRANSLATION + 3] = constant[:3, 3]
        row[spatial.AXIS : spatial.AXIS + 3] = axis
        row[spatial.MULTIPLIER], row[spatial.OFFSET] = mimic
        self._rows.append(row)
        self._links.append((parent, *link_row))
        return len(self._rows)

    def _cross(self, joint, upward: bool, frame: int, offset: np.ndarray) -> tuple[int, np.ndarray]:
        """Where the link reached across ``joint`` sits, ``(frame, offset)``, adding its frame
        (see the module docstring)."""
        if not joint.is_movable:
            return frame, offset @ (inverse(joint.origin) if upward else joint.origin)
        leader, multiplier, mimic_offset = self._robot.mimic_map(joint.name)
        kind = TYPE_CODES[joint.type]
        basis = np.eye(4)
        if joint.type == "planar":  # the motion in the xy plane of a basis whose z is the axis
            basis[:3, :3] = plane_basis(joint.axis)
        axis = joint.axis if kind in (spatial.REVOLUTE, spatial.PRISMATIC) else (0.0, 0.0, 0.0)
        link_row = (kind, self._config_at[leader], self._tangent_at[leader], int(upward))
        if not upward:  # T_parent_child = origin B M(q) B^T
            index = self._add(
                frame, offset @ joint.origin @ basis, link_row, axis, (multiplier, mimic_offset)
            )
            return index, basis.T
        anchor = offset @ basis
        if not np.array_equal(anchor, np.eye(4)):
            frame = self._add(frame, anchor, (spatial.FIXED, -1, -1, 0))
        index = self._add(frame, np.eye(4), link_row, axis, (multiplier, mimic_offset))
        return index, basis.T @ inverse(joint.origin)
