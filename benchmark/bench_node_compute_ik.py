"""Latency of one ``compute_ik`` call beside one plain goal's, through the running node (arm7).

Usage: python benchmark/bench_node_compute_ik.py [--calls N] [--domain-id N]
(needs moveit_msgs importable in this process and the node's: it comes with MoveIt, not PyPI.)

Method: the node runs as its own process (``config/arm7.yaml``, solve mode, DDS on loopback, a
domain of our own). ``--calls`` random reachable poses (FK of configurations drawn uniformly
within the parameter file's limits, seeded generator), the same list for both:

* compute_ik: one ``GetPositionIK`` call at a time, ``robot_state`` the previous answer (the first:
  the rest posture), ``timeout`` 0 (the node's 0.05 s); latency = ``call_async`` -> the future
  done, in this process (``time.perf_counter``, the client's executor included).
* plain goal: one ``PoseStamped`` on ``~/target_pose`` at a time, the node seeded from its last
  command; latency = ``publish`` -> the ``~/joint_commands`` callback in this process.

Both are round trips through DDS and both Python executors; the node's solve is the same. Prints
the median, p10 and p90 [ms] of each, the answers' success count and the largest pose error of
the answers by the model's FK.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from ik_node import load_robot
from ik_node.ros.process import NodeProcess, ros_environment

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
PARAMS_FILE = PACKAGE_ROOT / "config" / "arm7.yaml"
URDF = PACKAGE_ROOT / "urdf" / "arm7.urdf"
JOINTS = [f"joint{i}" for i in range(1, 8)]
WAIT = 30.0  # [s] discovery, readiness, an answer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--domain-id", type=int, default=int(os.environ.get("ROS_DOMAIN_ID", "0")))
    arguments = parser.parse_args()
    environment = ros_environment(
        {**os.environ, "ROS_LOG_DIR": os.environ.get("ROS_LOG_DIR") or tempfile.mkdtemp()},
        domain_id=arguments.domain_id,
    )
    os.environ.update(environment)
    import rclpy
    from geometry_msgs.msg import PoseStamped
    from moveit_msgs.srv import GetPositionIK
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Bool

    from ik_node.decisions.conversions import pose_to_fields

    robot = load_robot(URDF)
    limits = yaml.safe_load(PARAMS_FILE.read_text())["/**"]["ros__parameters"]["joint_limits"]
    rng = np.random.default_rng(29)
    poses = [
        robot.forward(
            {j: rng.uniform(limits[j]["min_position"], limits[j]["max_position"]) for j in JOINTS},
            "tool0",
            "base_link",
        )
        for _ in range(arguments.calls)
    ]

    process = NodeProcess("--params-file", str(PARAMS_FILE), environment=environment)
    rclpy.init()
    node = rclpy.create_node(f"bench_compute_ik_{os.getpid()}")
    commands, ready = [], []
    node.create_subscription(JointState, "/ik_node/joint_commands", commands.append, 100)
    node.create_subscription(
        Bool,
        "/ik_node/ready",
        lambda m: ready.append(m.data),
        QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL),
    )
    goals = node.create_publisher(PoseStamped, "/ik_node/target_pose", 10)
    client = node.create_client(GetPositionIK, "/ik_node/compute_ik")

    def spin_until(condition, timeout=WAIT):
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.001)
        return condition()

    def pose_fields(target, matrix):
        (x, y, z), (qx, qy, qz, qw) = pose_to_fields(matrix)
        target.position.x, target.position.y, target.position.z = x, y, z
        target.orientation.x, target.orientation.y, target.orientation.z, target.orientation.w = (
            qx,
            qy,
            qz,
            qw,
        )

    try:
        assert client.wait_for_service(timeout_sec=WAIT), process.log()
        assert spin_until(lambda: ready and ready[-1]) and spin_until(
            lambda: goals.get_subscription_count() > 0
        )
        # compute_ik
        compute, errors, successes = [], [], 0
        seed_names, seed_positions = [], []
        for matrix in [poses[0]] * 5 + poses:  # (5 warm-up calls)
            request = GetPositionIK.Request()
            ik = request.ik_request
            ik.pose_stamped.header.frame_id = "base_link"
            pose_fields(ik.pose_stamped.pose, matrix)
            ik.robot_state.joint_state.name, ik.robot_state.joint_state.position = seed_names, seed_positions
            start = time.perf_counter()
            future = client.call_async(request)
            assert spin_until(future.done), "no answer"
            compute.append(time.perf_counter() - start)
            response = future.result()
            if response.error_code.val == 1:
                successes += 1
                solution = response.solution.joint_state
                seed_names, seed_positions = list(solution.name), list(solution.position)
                reached = robot.forward(dict(zip(solution.name, solution.position)), "tool0", "base_link")
                errors.append(float(np.linalg.norm(reached[:3, 3] - matrix[:3, 3])))
        compute, successes = compute[5:], successes - 5
        # plain goals
        plain, answered = [], 0
        for matrix in [poses[0]] * 5 + poses:
            message = PoseStamped()
            message.header.frame_id = "base_link"
            message.header.stamp = node.get_clock().now().to_msg()
            pose_fields(message.pose, matrix)
            before = len(commands)
            start = time.perf_counter()
            goals.publish(message)
            if spin_until(lambda before=before: len(commands) > before, 1.0):  # (none for a failed solve)
                plain.append(time.perf_counter() - start)
                answered += 1
        plain = plain[5:]
        for name, values, count in (
            ("compute_ik call", compute, successes),
            ("plain goal", plain, answered - 5),
        ):
            ms = np.array(values) * 1e3
            print(
                f"{name:16s}: median {np.median(ms):.3f} ms, p10 {np.percentile(ms, 10):.3f}, "
                f"p90 {np.percentile(ms, 90):.3f} ({len(ms)} timed, {count} of {arguments.calls} succeeded)"
            )
        print(f"compute_ik answers: largest position error by FK {max(errors):.2e} m")
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        code = process.stop()
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
