"""The ``compute_ik`` service (``moveit_msgs/srv/GetPositionIK``) where moveit_msgs is importable:
messages only. The request becomes a :class:`~ik_node.decisions.compute_ik.IKQuery`, the answer
(:func:`~ik_node.decisions.compute_ik.answer_query`, free of ROS) fills the response. moveit_msgs
comes with MoveIt (``apt install ros-$ROS_DISTRO-moveit-msgs``); PyPI does not have it.

Quaternions: messages carry ``(x, y, z, w)``, as :mod:`ik_node.decisions.compute_ik` takes them.
"""

from __future__ import annotations

import importlib

from geometry_msgs.msg import Transform

from ..decisions.compute_ik import IKAnswer, IKQuery, PoseValues
from ..decisions.conversions import pose_to_fields

__all__ = [
    "compute_ik_service",
    "fill_error_code",
    "has_constraints",
    "moveit_service",
    "query_of",
    "respond",
]


def moveit_service(node, type_name: str, name: str, read, respond_with, answer):
    """``(service, None)``: ``moveit_msgs/srv/<type_name>`` served by ``node`` at ``name``, each
    request read by ``read(request) -> query``, answered by ``answer(query)`` and its response
    filled by ``respond_with(answer, response, stamp, node name)``; or ``(None, reason)`` where
    moveit_msgs cannot be imported. Raises what ``create_service`` raises for a bad name."""
    try:
        service_type = getattr(importlib.import_module("moveit_msgs.srv"), type_name)
    except ImportError as error:
        return None, (
            f"moveit_msgs is not importable ({error}): no {name} service (moveit_msgs/srv/{type_name}). "
            "moveit_msgs comes with MoveIt: apt install ros-$ROS_DISTRO-moveit-msgs"
        )

    def serve(request, response):
        stamp = node.get_clock().now().to_msg()
        respond_with(answer(read(request)), response, stamp, node.get_name())
        return response

    return node.create_service(service_type, name, serve), None


def compute_ik_service(node, name: str, answer):
    """:func:`moveit_service` ``GetPositionIK``, each request answered by ``answer(query) ->
    IKAnswer``."""
    return moveit_service(
        node, "GetPositionIK", name, lambda request: query_of(request.ik_request), respond, answer
    )


def _pose_values(message) -> PoseValues:
    position, orientation = message.pose.position, message.pose.orientation
    return PoseValues(
        (position.x, position.y, position.z),
        (orientation.x, orientation.y, orientation.z, orientation.w),
        message.header.frame_id,
        message.header.stamp,
    )


def query_of(request) -> IKQuery:
    """A ``moveit_msgs/PositionIKRequest`` as an :class:`IKQuery`."""
    if request.pose_stamped_vector:
        links = tuple(request.ik_link_names)
        poses = tuple(_pose_values(pose) for pose in request.pose_stamped_vector)
    else:
        links, poses = (request.ik_link_name,), (_pose_values(request.pose_stamped),)
    constraints = request.constraints
    state = request.robot_state.joint_state
    return IKQuery(
        links=links,
        poses=poses,
        joint_names=tuple(state.name),
        joint_positions=tuple(float(value) for value in state.position),
        timeout=request.timeout.sec + request.timeout.nanosec * 1e-9,
        avoid_collisions=bool(request.avoid_collisions),
        has_constraints=has_constraints(constraints),
        group_name=request.group_name,
    )


def has_constraints(constraints) -> bool:
    """Whether a ``moveit_msgs/Constraints`` holds any constraint."""
    return bool(
        constraints.joint_constraints
        or constraints.position_constraints
        or constraints.orientation_constraints
        or constraints.visibility_constraints
    )


def respond(answer: IKAnswer, response, stamp, source: str) -> None:
    """Fill a ``GetPositionIK`` response: ``error_code.val`` (and ``message``, ``source`` where
    the message has them: not on Humble's moveit_msgs 2.2); on success ``solution.joint_state``
    (every 1-DOF joint of the solver, by name) and ``solution.multi_dof_joint_state`` (a floating
    or planar joint's ``T_parent_child``)."""
    fill_error_code(response.error_code, answer.code, answer.message, source)
    if not answer.success:
        return
    joint_state = response.solution.joint_state
    joint_state.header.stamp = stamp
    joint_state.name = list(answer.joint_names)
    joint_state.position = list(answer.positions)
    multi_dof = response.solution.multi_dof_joint_state
    if answer.multi_dof:
        multi_dof.header.stamp = stamp
        multi_dof.header.frame_id = answer.multi_dof[0][1]
        multi_dof.joint_names = [name for name, _parent, _child, _matrix in answer.multi_dof]
        multi_dof.transforms = [_transform(matrix) for _name, _parent, _child, matrix in answer.multi_dof]


def fill_error_code(error_code, code: int, message: str, source: str) -> None:
    """A ``moveit_msgs/MoveItErrorCodes``: ``val``, and ``message`` and ``source`` where the
    message has them (not Humble's moveit_msgs 2.2: the message is then in the node's log only)."""
    error_code.val = code
    fields = type(error_code).get_fields_and_field_types()
    if "message" in fields:
        error_code.message = message
    if "source" in fields:
        error_code.source = source


def _transform(matrix) -> Transform:
    """A ``geometry_msgs/Transform`` of a 4x4 (quaternion x y z w)."""
    position, quaternion = pose_to_fields(matrix)
    transform = Transform()
    transform.translation.x, transform.translation.y, transform.translation.z = position
    transform.rotation.x, transform.rotation.y, transform.rotation.z, transform.rotation.w = quaternion
    return transform
