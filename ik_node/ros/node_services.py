"""The node's services, on rclpy: ``~/enable`` (``std_srvs/SetBool``: false pauses, true
resumes), ``~/reset`` (``std_srvs/Trigger``: goals and the last command forgotten) and
``compute_ik_service_name`` (default ``~/compute_ik``: ``moveit_msgs/srv/GetPositionIK`` where
moveit_msgs is importable, :mod:`ik_node.ros.compute_ik_service` over
:mod:`ik_node.decisions.compute_ik`; it never commands). The decisions are the policy's
(:meth:`~ik_node.decisions.policy.IKPolicy.set_enabled`, :meth:`~ik_node.decisions.policy.IKPolicy.reset`).
"""

from __future__ import annotations

import time

import rclpy
from std_srvs.srv import SetBool, Trigger

from ..decisions.compute_ik import answer_query
from ..decisions.robot_state import FrameLookup
from ..errors import IKNodeError
from .compute_ik_service import compute_ik_service
from .node_commands import CommandOutput
from .node_feedback import WARNING_PERIOD

__all__ = ["NodeServices"]


class NodeServices:
    """The services of ``node`` over ``policy``: a pause's stop command goes out through
    ``commands``; a reset moves the ``goal_markers`` (None: none) to the state shown;
    ``compute_ik`` answers look frames outside the model up through ``transform`` (None: no tf2)
    and are served at ``compute_ik_name`` ('' : not served)."""

    def __init__(
        self,
        node,
        policy,
        commands: CommandOutput,
        goal_markers,
        transform: FrameLookup | None,
        compute_ik_name: str,
    ):
        self._node = node
        self._policy = policy
        self._commands = commands
        self._goal_markers = goal_markers
        self._transform = transform
        node.create_service(SetBool, "~/enable", self._on_enable)
        node.create_service(Trigger, "~/reset", self._on_reset)
        self._compute_ik_service = None
        if compute_ik_name:
            self._serve_compute_ik(compute_ik_name)

    def _on_enable(self, request, response):
        """``~/enable`` (std_srvs/SetBool): false pauses, true resumes (see IKPolicy.set_enabled)."""
        response.message, stop = self._policy.set_enabled(bool(request.data))
        if stop is not None:
            self._commands.publish(stop)
        response.success = True
        self._node.get_logger().info(response.message)
        return response

    def _on_reset(self, request, response):
        """``~/reset`` (std_srvs/Trigger): forget goals and the last command (IKPolicy.reset)."""
        response.success, response.message = self._policy.reset()
        if response.success:
            self._node.get_logger().info(response.message)
            if self._goal_markers is not None:
                self._goal_markers.move(self._policy.tip_poses())
        return response

    def _serve_compute_ik(self, name: str) -> None:
        """``GetPositionIK`` at ``name`` where moveit_msgs is importable (else said once); a name
        that is no service name stops the start (:class:`IKNodeError` naming the parameter)."""
        node = self._node
        try:
            self._compute_ik_service, why = compute_ik_service(node, name, self._on_compute_ik)
        except rclpy.exceptions.NameValidationException as error:
            raise IKNodeError(
                f"parameter compute_ik_service_name '{name}' is not a service name: {error}"
            ) from None
        if why:
            node.get_logger().info(why)
        else:
            node.get_logger().info(
                f"serving moveit_msgs/srv/GetPositionIK on {node.resolve_service_name(name)} (IK answers; "
                "nothing is commanded)"
            )

    def _on_compute_ik(self, query):
        """A ``compute_ik`` request (:func:`answer_query`: never a command, the last one stays)."""
        answer = answer_query(self._policy, query, time.monotonic(), self._transform)
        if not answer.success:
            self._node.get_logger().warning(
                f"compute_ik: {answer.message} (code {answer.code})", throttle_duration_sec=WARNING_PERIOD
            )
        return answer
