"""The node's services, on rclpy: ``~/enable`` (``std_srvs/SetBool``: false pauses, true
resumes), ``~/reset`` (``std_srvs/Trigger``: goals and the last command forgotten) and
``compute_ik_service_name`` (default ``~/compute_ik``: ``moveit_msgs/srv/GetPositionIK`` where
moveit_msgs is importable, :mod:`ik_node.ros.compute_ik_service` over
:mod:`ik_node.decisions.compute_ik`) and ``cartesian_path_service_name`` (default
``~/compute_cartesian_path``: ``moveit_msgs/srv/GetCartesianPath``,
:mod:`ik_node.ros.cartesian_path_service` over :mod:`ik_node.decisions.compute_cartesian_path`):
they never command. The decisions are the policy's
(:meth:`~ik_node.decisions.policy.IKPolicy.set_enabled`, :meth:`~ik_node.decisions.policy.IKPolicy.reset`).
"""

from __future__ import annotations

import time

import rclpy
from std_srvs.srv import SetBool, Trigger

from ..decisions.compute_cartesian_path import answer_path_query
from ..decisions.compute_ik import answer_query
from ..decisions.robot_state import FrameLookup
from ..errors import IKNodeError
from .cartesian_path_service import cartesian_path_service
from .compute_ik_service import compute_ik_service
from .node_commands import CommandOutput
from .node_feedback import WARNING_PERIOD

__all__ = ["NodeServices"]


class NodeServices:
    """The services of ``node`` over ``policy``: a pause's stop command goes out through
    ``commands``; a reset moves the ``goal_markers`` (None: none) to the state shown;
    ``compute_ik`` and ``compute_cartesian_path`` answers look frames outside the model up through
    ``transform`` (None: no tf2) and are served at ``compute_ik_name`` and ``cartesian_path_name``
    ('' : not served)."""

    def __init__(
        self,
        node,
        policy,
        commands: CommandOutput,
        goal_markers,
        transform: FrameLookup | None,
        compute_ik_name: str,
        cartesian_path_name: str = "",
    ):
        self._node = node
        self._policy = policy
        self._commands = commands
        self._goal_markers = goal_markers
        self._transform = transform
        node.create_service(SetBool, "~/enable", self._on_enable)
        node.create_service(Trigger, "~/reset", self._on_reset)
        self._services = []
        unserved = [
            why
            for make_service, parameter, name, answer in (
                (compute_ik_service, "compute_ik_service_name", compute_ik_name, self._on_compute_ik),
                (
                    cartesian_path_service,
                    "cartesian_path_service_name",
                    cartesian_path_name,
                    self._on_compute_cartesian_path,
                ),
            )
            if name and (why := self._serve(make_service, parameter, name, answer))
        ]
        if unserved:  # (one cause, moveit_msgs missing: said once)
            others = f" (nor the {len(unserved) - 1} other MoveIt service(s))" if len(unserved) > 1 else ""
            node.get_logger().info(unserved[0] + others)

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

    def _serve(self, make_service, parameter: str, name: str, answer) -> str | None:
        """A MoveIt service (``make_service``: :func:`compute_ik_service` or
        :func:`cartesian_path_service`) at ``name`` where moveit_msgs is importable, else why
        not; a name that is no service name stops the start (:class:`IKNodeError` naming the
        ``parameter``)."""
        node = self._node
        try:
            service, why = make_service(node, name, answer)
        except rclpy.exceptions.NameValidationException as error:
            raise IKNodeError(f"parameter {parameter} '{name}' is not a service name: {error}") from None
        if why:
            return why
        self._services.append(service)
        node.get_logger().info(
            f"serving moveit_msgs/srv/{service.srv_type.__name__} on {node.resolve_service_name(name)} "
            "(answers only; nothing is commanded)"
        )
        return None

    def _on_compute_ik(self, query):
        """A ``compute_ik`` request (:func:`answer_query`: never a command, the last one stays)."""
        answer = answer_query(self._policy, query, time.monotonic(), self._transform)
        if not answer.success:
            self._node.get_logger().warning(
                f"compute_ik: {answer.message} (code {answer.code})", throttle_duration_sec=WARNING_PERIOD
            )
        return answer

    def _on_compute_cartesian_path(self, query):
        """A ``compute_cartesian_path`` request (:func:`answer_path_query`: never a command)."""
        answer = answer_path_query(self._policy, query, time.monotonic(), self._transform)
        if not answer.success:
            self._node.get_logger().warning(
                f"compute_cartesian_path: {answer.message} (code {answer.code})",
                throttle_duration_sec=WARNING_PERIOD,
            )
        elif answer.fraction < 1.0:
            self._node.get_logger().info(f"compute_cartesian_path: {answer.message}")
        return answer
