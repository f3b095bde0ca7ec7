"""The streaming servo's cost and latency (issue 48): compute per cycle on every bundled arm, with
and without collision checking; twist-to-command latency and CPU share of the running node.

Usage: python benchmark/bench_servo.py [--cycles N] [--seconds S] [--domain-id N] [--no-node]

* **compute per cycle** (in this process, :class:`ik_node.servo.Servo`): ``Servo.step`` with a
  constant twist (0.05 m/s and 0.1 rad/s, base axes) from a well-conditioned configuration,
  ``--cycles`` periods at 500 Hz and at 1 kHz (the period only changes the step's length), timed
  one by one with ``time.perf_counter``: median and p99 [ms]. "collision": the same with
  ``self_collision`` on (the SRDF-free pairs computed as MoveIt's Setup Assistant does) and a box
  0.15 m in front of the tool (pairs within the servo's slowdown distance are measured every
  cycle). The goal: p99 <= 0.3 ms at 7 DOF.
* **latency** (the node as its own process, ``config/arm7.yaml``, ``mode:=track``,
  ``publish_rate:=500``): twists on ``/ik_node/delta_twist_cmds`` at 500 Hz whose direction flips
  every 50 ms (+x, -x in the base frame); for each flip, the time from the first twist of the new
  direction leaving this process to the arrival of the first ``~/joint_commands`` whose velocity
  points the new way (negative dot product with the last command of the old direction). It
  includes DDS both ways and the wait for the node's next period (0-2 ms). Goal: p99 <= 3 ms.
* **CPU**: the node process's user + system time (``/proc/<pid>/stat``) over the streaming
  seconds, as a share of one core. Goal: <= 30 % at 500 Hz.

DDS stays on this machine (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``, a domain of its own).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from machine import cpu_model  # (benchmark/, the script's directory)

from ik_node import IKSolver, Obstacle, load_robot
from ik_node.description.catalogue import BUNDLED
from ik_node.ros.process import NodeProcess, ros_environment
from ik_node.servo import Servo, TwistCommand

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
ARMS = [case for case in BUNDLED if case.name in ("arm6", "arm7", "dual_arm", "mobile_manipulator")]
TWIST = np.array([0.05, 0.0, 0.0, 0.0, 0.0, 0.1])
FLIP_PERIOD = 0.05  # [s] between direction flips in the latency run


def start_configuration(solver: IKSolver, seed: int = 4) -> np.ndarray:
    """The best-conditioned of 40 draws in the middle half of each joint's range."""
    rng = np.random.default_rng(seed)
    best, best_value = solver.rest_posture, -1.0
    for _ in range(40):
        q = solver.rest_posture.copy()
        for index, (low, high) in enumerate(zip(solver.lower, solver.upper)):
            if np.isfinite(low) and np.isfinite(high):
                q[index] = rng.uniform(low + 0.25 * (high - low), high - 0.25 * (high - low))
        value = min(
            np.linalg.svd(solver.tree.body_jacobian(q, tip), compute_uv=False)[-1] for tip in solver.tip_links
        )
        if value > best_value:
            best, best_value = q, value
    return best


def cycle_times(case, collision: bool, period: float, cycles: int) -> np.ndarray:
    """Seconds per ``Servo.step`` (``cycles`` of them, after 50 unmeasured)."""
    solver = IKSolver(load_robot(case.urdf), case.base, list(case.tips), self_collision=collision)
    solver.wait_for_kernels()
    q = start_configuration(solver)
    if collision:
        wall = np.eye(4)
        wall[:3, 3] = solver.tip_poses(q)[0][:3, 3] + [0.15, 0.0, 0.0]
        solver.set_obstacles([Obstacle.box((0.02, 0.4, 0.4), wall, "wall")])
    servo = Servo(solver, max_acceleration=10.0)
    state, command = servo.start(q), TwistCommand(case.tips[0], TWIST)
    times = np.empty(cycles)
    for index in range(cycles + 50):
        started = time.perf_counter()
        state = servo.step(state, command, period)
        elapsed = time.perf_counter() - started
        if index >= 50:
            times[index - 50] = elapsed
        if index % 200 == 199:  # (back and forth: stay in the workspace)
            command = TwistCommand(case.tips[0], -command.twist)
    return times


def compute_table(cycles: int) -> None:
    print(f"compute per cycle [ms] (Servo.step, {cycles} cycles; median / p99)")
    print(f"{'robot':20s} {'dof':>4s} {'collision':>10s} {'500 Hz':>16s} {'1 kHz':>16s}")
    for case in ARMS:
        for collision in (False, True):
            cells = []
            for period in (0.002, 0.001):
                times = cycle_times(case, collision, period, cycles) * 1e3
                cells.append(f"{np.median(times):.3f} / {np.percentile(times, 99):.3f}")
            dof = len(load_robot(case.urdf).tree(case.base, list(case.tips)).tangent_names)
            switch = "on" if collision else "off"
            print(f"{case.name:20s} {dof:4d} {switch:>10s} {cells[0]:>16s} {cells[1]:>16s}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time [s] of process ``pid`` (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def node_run(seconds: float, domain_id: int) -> None:
    log_dir = tempfile.mkdtemp(prefix="ik_node_bench_servo_")
    environment = ros_environment({**os.environ, "ROS_LOG_DIR": log_dir}, domain_id=domain_id)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(PACKAGE_ROOT), *filter(None, [environment.get("PYTHONPATH")])]
    )
    os.environ.update(environment)
    import rclpy
    from geometry_msgs.msg import TwistStamped
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    rclpy.init()
    process = NodeProcess(
        "--params-file",
        str(PACKAGE_ROOT / "config" / "arm7.yaml"),
        "-p",
        "mode:=track",
        "-p",
        "publish_rate:=500.0",
        environment=environment,
    )
    bench = rclpy.create_node(f"ik_node_servo_bench_{os.getpid()}")
    arrivals: list[tuple[float, np.ndarray]] = []
    bench.create_subscription(
        JointState,
        "/ik_node/joint_commands",
        lambda message: arrivals.append((time.perf_counter(), np.array(message.velocity))),
        QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE),
    )
    twists = bench.create_publisher(TwistStamped, "/ik_node/delta_twist_cmds", 10)
    states = bench.create_publisher(JointState, "/joint_states", 10)
    executor = SingleThreadedExecutor()
    executor.add_node(bench)
    threading.Thread(target=executor.spin, daemon=True).start()
    try:
        deadline = time.monotonic() + 120.0
        while twists.get_subscription_count() == 0 or not process.wait_for_log("ready: goals for", 0.1):
            if time.monotonic() > deadline:
                raise RuntimeError("the node did not start: " + process.log()[-2000:])
            time.sleep(0.05)
        start = JointState(
            name=[f"joint{i}" for i in range(1, 8)], position=[0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5]
        )
        states.publish(start)
        time.sleep(0.3)
        message = TwistStamped()
        message.header.frame_id = "base_link"
        flips, sign, last_flip = [], 1.0, 0.0
        cpu_start, wall_start = cpu_seconds(process.pid), time.perf_counter()
        end = wall_start + seconds
        next_send = wall_start
        while time.perf_counter() < end:
            now = time.perf_counter()
            if now - last_flip >= FLIP_PERIOD:
                sign, last_flip = -sign, now
                flips.append((now, len(arrivals)))
            message.twist.linear.x = sign * 0.05
            twists.publish(message)
            next_send += 0.002
            while time.perf_counter() < next_send:
                time.sleep(0.0002)
        cpu_share = (cpu_seconds(process.pid) - cpu_start) / (time.perf_counter() - wall_start)
        time.sleep(0.2)
        commands = list(arrivals)
        latencies = []
        for (sent, first), (following, _) in zip(flips, flips[1:] + [(end, len(commands))]):
            if first == 0:
                continue
            before = commands[first - 1][1]
            for arrived, velocity in commands[first:]:
                if arrived > following:
                    break
                if arrived >= sent and velocity @ before < 0.0:
                    latencies.append(arrived - sent)
                    break
        rate = len(commands) / seconds
        latencies = np.array(latencies) * 1e3
        flip = FLIP_PERIOD * 1e3
        print(f"\nnode at 500 Hz, {seconds:.0f} s of twists at 500 Hz flipping every {flip:.0f} ms:")
        print(f"  commands received: {len(commands)} ({rate:.0f} /s)")
        if len(latencies):
            median, p99 = np.median(latencies), np.percentile(latencies, 99)
            print(
                f"  twist -> command latency [ms] over {len(latencies)} flips: median {median:.2f}, "
                f"p99 {p99:.2f}, max {latencies.max():.2f}"
            )
        print(f"  node CPU: {100 * cpu_share:.1f} % of one core")
    finally:
        executor.shutdown()
        bench.destroy_node()
        process.stop()
        rclpy.try_shutdown()
        shutil.rmtree(log_dir, ignore_errors=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--domain-id", type=int, default=97)
    parser.add_argument("--no-node", action="store_true", help="only the compute table")
    args = parser.parse_args(argv)
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    compute_table(args.cycles)
    if not args.no_node:
        node_run(args.seconds, args.domain_id)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
