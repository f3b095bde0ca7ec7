"""The node's solver, prepared off the executor: a description's model is shown at once and its
solver attached when built, now when the kernels are ready (milliseconds), else on
:class:`~ik_node.decisions.preparation.SolverPreparation`'s thread (the first build in a process
compiles or loads them), polled every :data:`READY_POLL` s. ``~/ready`` says when goals are solved;
the goals kept meanwhile are answered then, or refused with the reason the build failed.

Free of rclpy: the node (its timer and logger) and the feedback (``~/ready``, the collision
markers) are the shell's, passed in (:class:`ReadinessFeedback` is what is asked of the latter).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from ..solver import kernels_prepared
from .planning import Model, build_solver
from .preparation import SolverPreparation
from .replies import Reply
from .robot_state import FrameLookup

__all__ = ["READY_POLL", "ReadinessFeedback", "SolverReadiness"]

#: How often the executor looks whether the background solver build has finished [s].
READY_POLL = 0.05


class ReadinessFeedback(Protocol):
    """What readiness tells the shell (:class:`ik_node.ros.node_feedback.NodeFeedback`)."""

    collision_markers_due: bool  # draw the collision shapes at the next marker tick

    def publish_ready(self, ready: bool) -> None:
        """``~/ready``."""


class SolverReadiness:
    """Prepares ``policy``'s solver for ``node``: readiness through ``feedback``, the replies to
    the goals kept meanwhile to ``handle`` (their frames looked up through ``transform``)."""

    def __init__(
        self,
        node,
        policy,
        feedback: ReadinessFeedback,
        handle: Callable[[Reply], None],
        transform: FrameLookup | None,
    ):
        self._node = node
        self._policy = policy
        self._feedback = feedback
        self._handle = handle
        self._transform = transform
        self._preparation = SolverPreparation()
        self._timer = node.create_timer(READY_POLL, self._on_poll)

    def prepare(self, model: Model) -> None:
        """Attach ``model``'s solver now when the kernels are ready, else build it on a thread
        (the first build in a process compiles or loads them) and attach it when done."""
        if kernels_prepared() is not None:
            self._build_and_attach(model)
            return
        self._feedback.publish_ready(False)
        if self._preparation.start(model):  # (a running build prepares the kernels for this one too)
            self._node.get_logger().info(
                "preparing the IK solver in the background: the robot is shown meanwhile, and goals "
                "are kept and answered once it is ready"
            )

    def _on_poll(self) -> None:
        finished = self._preparation.take()
        if finished is None:
            return
        model, solver, error = finished
        current = self._policy.model_state.model  # parameters or the description may have changed meanwhile
        if current is None or current.solver is not None:
            return
        if current is not model:  # built for an older model: now (kernels ready) or on the thread
            self.prepare(current)
        elif error is not None:
            self._fail(error)
        else:
            self._attach(solver)

    def _build_and_attach(self, model: Model) -> None:
        try:
            solver = build_solver(model)
        except Exception as error:  # e.g. out of memory for a huge tree: said, the node serves on
            self._fail(error)
            return
        self._attach(solver)

    def _fail(self, error: Exception) -> None:
        replies = self._policy.preparation_failed(error)
        self._node.get_logger().error(self._policy.model_state.solver_error)
        for reply in replies:
            self._handle(reply)

    def _attach(self, solver) -> None:
        policy = self._policy
        waiting = policy.attach_solver(solver)
        self._feedback.collision_markers_due = True
        self._feedback.publish_ready(True)
        self._node.get_logger().info(f"ready: goals for {policy.tips} are solved")
        for request in waiting:
            self._handle(policy.receive_goal(request, time.monotonic(), self._transform))
