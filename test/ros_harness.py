"""Real ROS 2 plumbing for the node tests: the node as a separate process, and a client node in
the test process that publishes goals and joint states and records what the node publishes (the
node process itself is :class:`ik_node.ros.process.NodeProcess`, shared with the demo and benchmarks).

DDS stays on loopback (test/conftest.py sets ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and a
``ROS_DOMAIN_ID`` per worker); ``config/fastdds_profile.xml`` makes discovery take < 0.3 s.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped
from rcl_interfaces.srv import SetParametersAtomically
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, String
from transforms3d.quaternions import mat2quat
from visualization_msgs.msg import MarkerArray

from ik_node.ros.process import NodeProcess, ros_environment

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
CONFIG_DIR = PACKAGE_ROOT / "config"
#: Seconds to wait for discovery and for an answer (generous: the machine may be loaded).
WAIT = 10.0
#: A set_parameters request is sent again after this long without an answer [s].
RESEND_AFTER = 6.0
#: A goal sent right after the node started is sent again after this long without an answer [s].
GOAL_RESEND_AFTER = 1.0


def pose_message(matrix, frame_id: str = "", stamp=None) -> PoseStamped:
    """A PoseStamped from a 4x4 (quaternion converted to ROS order x y z w)."""
    message = PoseStamped()
    message.header.frame_id = frame_id
    if stamp is not None:
        message.header.stamp = stamp
    message.pose.position.x, message.pose.position.y, message.pose.position.z = (
        float(v) for v in matrix[:3, 3]
    )
    w, x, y, z = mat2quat(matrix[:3, :3])
    orientation = message.pose.orientation
    orientation.x, orientation.y, orientation.z, orientation.w = float(x), float(y), float(z), float(w)
    return message


class Client:
    """A node in the test process talking to the ik_node under test through real topics."""

    def __init__(self, node_name: str = "ik_node", tips=("tool0",)):
        self.node = rclpy.create_node(f"ik_node_test_client_{os.getpid()}")
        self.node_name = node_name
        self.commands: list[JointState] = []
        self.command_times: list[float] = []
        self.statuses: list = []
        self.markers: list[MarkerArray] = []
        self.ready: list[bool] = []
        node = self.node
        self.goal_publishers = {
            tip: node.create_publisher(
                PoseStamped,
                f"/{node_name}/target_pose" if len(tips) == 1 else f"/{node_name}/{tip}/target_pose",
                10,
            )
            for tip in tips
        }
        self.joint_state_publisher = node.create_publisher(JointState, "/joint_states", 10)
        self.description_publisher = node.create_publisher(
            String, "/robot_description", QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        )
        node.create_subscription(JointState, f"/{node_name}/joint_commands", self._on_command, 100)
        node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 100)
        node.create_subscription(MarkerArray, f"/{node_name}/markers", self.markers.append, 100)
        node.create_subscription(
            Bool,
            f"/{node_name}/ready",
            lambda message: self.ready.append(message.data),
            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL),
        )
        self.parameter_client = node.create_client(
            SetParametersAtomically, f"/{node_name}/set_parameters_atomically"
        )

    def _on_command(self, message: JointState) -> None:
        self.commands.append(message)
        self.command_times.append(time.monotonic())

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:  # (the goals' statuses; the servo's ": servo" ones aside)
            if status.name == f"{self.node_name}: ik":
                self.statuses.append(
                    {"message": status.message, **{kv.key: kv.value for kv in status.values}}
                )

    def spin_until(self, condition, timeout: float = WAIT) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            rclpy.spin_once(self.node, timeout_sec=0.02)
        return bool(condition())

    def spin_for(self, seconds: float) -> None:
        self.spin_until(lambda: False, timeout=seconds)

    def wait_connected(self, timeout: float = 30.0) -> None:
        """Until the node's goal and /joint_states subscriptions and its command and status
        (/diagnostics) publishers are matched with ours (a message sent before that is lost)."""
        connected = self.spin_until(
            lambda: (
                all(p.get_subscription_count() > 0 for p in self.goal_publishers.values())
                and self.joint_state_publisher.get_subscription_count() > 0
                and self.node.count_publishers(f"/{self.node_name}/joint_commands") > 0
                and self.node.count_publishers("/diagnostics") > 0
            ),
            timeout,
        )
        assert connected, "the ik_node process was not discovered"

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until the node says (``~/ready``) that it solves goals: at once with a warm kernel
        cache, after the kernels' compile with a cold one."""
        assert self.spin_until(lambda: self.ready and self.ready[-1], timeout), "the node never became ready"

    def send_goal(self, matrix, tip: str | None = None, frame_id: str = "") -> None:
        publisher = self.goal_publishers[tip] if tip else next(iter(self.goal_publishers.values()))
        publisher.publish(pose_message(matrix, frame_id, self.node.get_clock().now().to_msg()))

    def send_goal_until(self, matrix, answered, timeout: float = WAIT, **where) -> bool:
        """:meth:`send_goal` again every ``GOAL_RESEND_AFTER`` [s] until ``answered()`` (within
        ``timeout`` [s]), for a goal sent right after the node started: its goal subscription is
        best effort, and discovery is not symmetric, so a goal can be dropped while the node's
        reader has not matched this publisher yet, though the publisher has matched the reader."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.send_goal(matrix, **where)
            if self.spin_until(answered, min(GOAL_RESEND_AFTER, deadline - time.monotonic())):
                return True
        return False

    def send_joint_state(self, names, positions) -> None:
        message = JointState()
        message.header.stamp = self.node.get_clock().now().to_msg()
        message.name = list(names)
        message.position = [float(value) for value in positions]
        self.joint_state_publisher.publish(message)

    def wait_command(self, count_before: int, timeout: float = WAIT) -> JointState | None:
        if self.spin_until(lambda: len(self.commands) > count_before, timeout):
            return self.commands[count_before]
        return None

    def set_parameters(self, **values):
        """Set parameters on the node all at once; returns the SetParametersResult.

        The request goes again when no answer came within ``RESEND_AFTER`` [s] (``WAIT`` in all,
        twice over): right after discovery, a request or its response can be dropped while the
        service's reader and the client's are still being matched (rmw_fastrtps PR #238 and #467;
        seen under a loaded CI run). Setting the same values again changes nothing more."""
        assert self.parameter_client.wait_for_service(timeout_sec=WAIT), "no set_parameters service"
        request = SetParametersAtomically.Request()
        request.parameters = [
            Parameter(name, value=value).to_parameter_msg() for name, value in values.items()
        ]
        futures = []
        deadline = time.monotonic() + 2 * WAIT
        while time.monotonic() < deadline:
            futures.append(self.parameter_client.call_async(request))
            if self.spin_until(lambda: any(f.done() for f in futures), RESEND_AFTER):
                break
        answered = [future for future in futures if future.done()]
        assert answered, "set_parameters did not answer"
        return answered[0].result().result

    def close(self) -> None:
        self.node.destroy_node()


__all__ = ["Client", "NodeProcess", "running_node", "pose_message", "ros_environment"]  # (re-exported)


@contextmanager
def running_node(*ros_arguments: str, tips=("tool0",), wait_ready: bool = True):
    """The node started with ``ros_arguments`` and a client discovered with it (and, with
    ``wait_ready``, the node ready to solve); on leaving, the client closes and the node must
    stop with exit code 0 on SIGINT."""
    process = NodeProcess(*ros_arguments)
    client = Client(tips=tips)
    try:
        client.wait_connected()
        if wait_ready:
            client.wait_ready()
        yield process, client
    finally:
        client.close()
        assert process.stop() == 0, process.log()[-2000:]
