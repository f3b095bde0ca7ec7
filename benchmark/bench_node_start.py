"""The node's start-up, as a newcomer meets it: from spawning ``python -m ik_node.ros.node`` (bundled
arm7, config/arm7.yaml) to its first ``~/joint_states`` message (the stamp the node put on it:
its clock is wall time) and to ``~/ready`` (received), with an empty numba cache (the first start
after an install: the kernels compile in the background) and with the cache warm.

Usage: python benchmark/bench_node_start.py [--repeats N]

DDS stays on this machine (``ik_node.ros.process.ros_environment``). Prints one row per start and
the minimum per case.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time

import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool

from ik_node.description.resources import share_directory
from ik_node.ros.process import NodeProcess, ros_environment

#: Seconds to wait for readiness (a cold compile on a loaded machine included).
READY_WAIT = 300.0


def one_start(node, environment: dict) -> tuple[float, float]:
    """(spawn -> first state stamp, spawn -> ready received) [s] of one node process."""
    states, ready = [], []
    state_subscription = node.create_subscription(
        JointState,
        "/ik_node/joint_states",
        lambda message: states.append(message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec),
        10,
    )
    ready_subscription = node.create_subscription(
        Bool,
        "/ik_node/ready",
        lambda message: ready.append((message.data, time.monotonic())),
        QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL),
    )
    began, began_wall = time.monotonic(), time.time()
    process = NodeProcess(
        "--params-file", str(share_directory() / "config" / "arm7.yaml"), environment=environment
    )
    try:
        deadline = began + READY_WAIT
        while time.monotonic() < deadline and not (states and any(data for data, _ in ready)):
            rclpy.spin_once(node, timeout_sec=0.01)
        if not states or not any(data for data, _ in ready):
            raise RuntimeError(f"the node did not start within {READY_WAIT} s:\n{process.log()[-2000:]}")
        return states[0] - began_wall, next(when for data, when in ready if data) - began
    finally:
        process.stop()
        node.destroy_subscription(state_subscription)
        node.destroy_subscription(ready_subscription)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="starts per case (3)")
    repeats = parser.parse_args().repeats
    environment = ros_environment()
    rclpy.init()
    node = rclpy.create_node("bench_node_start")
    rows = {"cold (empty kernel cache)": [], "warm": []}
    try:
        for _ in range(repeats):
            cache = tempfile.mkdtemp(prefix="ik_node_bench_cache_")
            try:
                rows["cold (empty kernel cache)"].append(
                    one_start(node, {**environment, "NUMBA_CACHE_DIR": cache})
                )
                rows["warm"].append(one_start(node, {**environment, "NUMBA_CACHE_DIR": cache}))
            finally:
                shutil.rmtree(cache, ignore_errors=True)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    print(f"{'start':<28} {'first ~/joint_states [s]':>25} {'~/ready [s]':>12}")
    for case, starts in rows.items():
        for state, ready in starts:
            print(f"{case:<28} {state:>25.2f} {ready:>12.2f}")
        print(f"{case + ' (min)':<28} {min(s for s, _ in starts):>25.2f} {min(r for _, r in starts):>12.2f}")


if __name__ == "__main__":
    main()
