"""The node's commands and the state it shows, on rclpy publishers: every command leaves through
:meth:`CommandOutput.publish` (the policy's limit guard first), as ``~/joint_commands``
(``JointState``: the 1-DOF joints, with velocities in track mode), ``~/position_commands``
(``Float64MultiArray`` in ``command_joints`` order, with ``publish_position_commands``) and
``~/joint_trajectory`` (one point, with ``publish_trajectory``); the state shown, the last command
(else the rest posture), on ``~/joint_states``, and a floating or planar base's pose on
``~/base_pose`` (``PoseStamped`` in the base frame) and as a TF (parent -> child of each multi-DOF
joint) where tf2_ros is importable.

Units: rad, m; rad/s, m/s; trajectory durations in s.
"""

from __future__ import annotations

from geometry_msgs.msg import PoseStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from ..decisions.control import trajectory_duration
from ..decisions.planning import Model
from ..decisions.replies import Command, refusal
from ..lie import inverse
from . import messages
from .frames import transform_broadcaster
from .node_feedback import NodeFeedback

__all__ = ["CommandOutput"]


class CommandOutput:
    """The command and state publishers of ``node`` for ``policy``'s model; a command refused by
    the limit guard is logged and its status goes out through ``feedback``."""

    def __init__(self, node, policy, feedback: NodeFeedback):
        self._node = node
        self._policy = policy
        self._feedback = feedback
        self._command_publisher = node.create_publisher(JointState, "~/joint_commands", 10)
        self._trajectory_publisher = node.create_publisher(JointTrajectory, "~/joint_trajectory", 10)
        self._state_publisher = node.create_publisher(JointState, "~/joint_states", 10)
        self._base_pose_publisher = node.create_publisher(PoseStamped, "~/base_pose", 10)
        self._position_publisher = node.create_publisher(Float64MultiArray, "~/position_commands", 10)
        self._transform_broadcaster = None  # made for the first model with a multi-DOF joint

    def use_model(self, model: Model) -> None:
        """A new model: a TF broadcaster for its multi-DOF joints' poses (once; where tf2_ros is
        missing, said why)."""
        if model.layout.multi_dof and self._transform_broadcaster is None:
            self._transform_broadcaster, why = transform_broadcaster(self._node)
            if why:
                self._node.get_logger().info(why)

    def publish(self, command: Command) -> bool:
        """The one place commands leave the node: the policy's limit guard first (a refusal is
        logged and published as a ``limit_guard`` status; False). The joint messages carry the
        1-DOF joints (a floating base's pose goes on ``~/base_pose``)."""
        policy = self._policy
        violation = policy.commit(command)
        if violation is not None:
            self._node.get_logger().error(f"command refused by the limit guard: {violation}")
            self._feedback.publish_status(refusal(None, violation, "limit_guard").status)
            return False
        model, settings = policy.model_state.model, policy.model_state.settings
        layout = model.layout
        positions = command.q[layout.configuration]
        velocities = None if command.velocity is None else command.velocity[layout.tangent]
        stamp = self._node.get_clock().now().to_msg()
        self._command_publisher.publish(messages.joint_state(layout.names, positions, stamp, velocities))
        if settings.publish_position_commands:
            self._position_publisher.publish(
                Float64MultiArray(data=[float(command.q[i]) for i in model.command_order])
            )
        self.publish_state()
        self._feedback.collision_markers_due = True
        path = command.path
        if path is not None:  # (a straight-line goal: its timed path, whatever publish_trajectory)
            tangent = layout.tangent
            self._trajectory_publisher.publish(
                messages.timed_trajectory(
                    layout.names,
                    path.q[:, layout.configuration],
                    path.velocity[:, tangent],
                    path.acceleration[:, tangent],
                    path.time,
                )
            )
        elif settings.publish_trajectory:
            period = None if command.velocity is None else 1.0 / settings.publish_rate
            duration = trajectory_duration(  # (the base's motion too: its pose follows the joints')
                command.q,
                command.previous,
                model.max_velocity,
                settings.min_trajectory_duration,
                period,
                model.manifold,
            )
            self._trajectory_publisher.publish(
                messages.joint_trajectory(layout.names, positions, velocities, duration)
            )
        return True

    def publish_state(self) -> None:
        """``~/joint_states``: the latest command's positions (1-DOF joints), now and at
        ``joint_state_rate`` (as joint_state_publisher does), so that a robot_state_publisher or
        RViz started later shows the robot at once; with a floating or planar base its pose on
        ``~/base_pose`` (``T_base_child`` of the first multi-DOF joint) and each such joint's
        ``T_parent_child`` as a TF."""
        model, state = self._policy.model_state.model, self._policy.motion.state
        if model is None:
            return
        state = model.rest_posture if state is None else state
        stamp = self._node.get_clock().now().to_msg()
        layout = model.layout
        self._state_publisher.publish(messages.joint_state(layout.names, state[layout.configuration], stamp))
        if not layout.multi_dof:
            return
        tree = model.tree
        poses = tree.link_poses(state)
        transforms = []
        for index, joint in enumerate(layout.multi_dof):
            child = tree.pose_of(poses, joint.child)  # T_base_child
            if index == 0:
                self._base_pose_publisher.publish(messages.pose_stamped(model.base_link, child, stamp))
            parent = tree.pose_of(poses, joint.parent)
            transforms.append(
                messages.transform_stamped(joint.parent, joint.child, inverse(parent) @ child, stamp)
            )
        if self._transform_broadcaster is not None:
            self._transform_broadcaster.sendTransform(transforms)
