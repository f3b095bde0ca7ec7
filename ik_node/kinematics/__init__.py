"""Kinematic trees: the part of a robot between a base link and its tips, with forward kinematics
and Jacobians over :mod:`ik_node.compiled.spatial` (:mod:`.tree`), over the configurations of its
joints (:mod:`.configuration`) and the frames of its paths (:mod:`.frames`)."""

from .tree import TASK_ROWS, KinematicTree, task_rows

__all__ = ["KinematicTree", "TASK_ROWS", "task_rows"]
