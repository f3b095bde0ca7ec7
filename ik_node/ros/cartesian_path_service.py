"""The ``compute_cartesian_path`` service (``moveit_msgs/srv/GetCartesianPath``) where moveit_msgs is
importable: messages only. The request becomes a
:class:`~ik_node.decisions.compute_cartesian_path.PathQuery`, the answer
(:func:`~ik_node.decisions.compute_cartesian_path.answer_path_query`, free of ROS) fills the
response: ``start_state``, ``solution`` (a timed ``RobotTrajectory``: positions, velocities,
accelerations, ``time_from_start``), ``fraction`` and ``error_code``. The request's fields that
not every moveit_msgs has (the scaling factors: Jazzy's and later) are read where present.

Quaternions: messages carry ``(x, y, z, w)``, as :mod:`ik_node.decisions.compute_ik` takes them.
"""

from __future__ import annotations

from ..decisions.compute_cartesian_path import PathAnswer, PathQuery
from ..decisions.compute_ik import PoseValues
from . import messages
from .compute_ik_service import fill_error_code, has_constraints, moveit_service

__all__ = ["cartesian_path_service", "path_query_of", "respond_path"]


def cartesian_path_service(node, name: str, answer):
    """:func:`~.compute_ik_service.moveit_service` ``GetCartesianPath``, each request answered by
    ``answer(query) -> PathAnswer``."""
    return moveit_service(node, "GetCartesianPath", name, path_query_of, respond_path, answer)


def path_query_of(request) -> PathQuery:
    """A ``GetCartesianPath`` request as a :class:`PathQuery` (every waypoint in ``header``)."""
    header = request.header
    waypoints = tuple(
        PoseValues(
            (pose.position.x, pose.position.y, pose.position.z),
            (pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w),
            header.frame_id,
            header.stamp,
        )
        for pose in request.waypoints
    )
    constraints = request.path_constraints
    state = request.start_state.joint_state
    return PathQuery(
        link=request.link_name,
        waypoints=waypoints,
        joint_names=tuple(state.name),
        joint_positions=tuple(float(value) for value in state.position),
        max_step=float(request.max_step),
        jump_threshold=float(request.jump_threshold),
        avoid_collisions=bool(request.avoid_collisions),
        has_constraints=has_constraints(constraints),
        velocity_scaling=float(getattr(request, "max_velocity_scaling_factor", 0.0)),
        acceleration_scaling=float(getattr(request, "max_acceleration_scaling_factor", 0.0)),
        group_name=request.group_name,
    )


def respond_path(answer: PathAnswer, response, stamp, source: str) -> None:
    """Fill a ``GetCartesianPath`` response: ``error_code`` (:func:`fill_error_code`); the start
    state's 1-DOF joints by name; on success ``fraction`` and ``solution.joint_trajectory`` (the
    timed path from the start, stamped ``stamp``)."""
    fill_error_code(response.error_code, answer.code, answer.message, source)
    if answer.start_positions:
        response.start_state.joint_state.header.stamp = stamp
        response.start_state.joint_state.name = list(answer.joint_names)
        response.start_state.joint_state.position = list(answer.start_positions)
    if not answer.success:
        return
    response.fraction = float(answer.fraction)
    trajectory = messages.timed_trajectory(
        answer.joint_names, answer.positions, answer.velocities, answer.accelerations, answer.times
    )
    trajectory.header.stamp = stamp
    response.solution.joint_trajectory = trajectory
