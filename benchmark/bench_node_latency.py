"""Goal-to-command latency of the running ik_node node under a stream of goals (100, 500, 1000 Hz).

Usage: python benchmark/bench_node_latency.py [--rates HZ ...] [--seconds S] [--domain-id N]

Method: the node runs as its own process (``python -m ik_node.ros.node --ros-args --params-file
config/arm7.yaml``, solve mode); this process publishes ``geometry_msgs/PoseStamped`` goals on
``/ik_node/target_pose`` and records ``/ik_node/joint_commands`` and ``/diagnostics``. DDS stays on
this machine (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``, a domain of our own, the Fast DDS profile
in config/). After discovery and a few warm-up goals, goals follow a smooth reachable path, a 5 cm
circle with a +-0.1 rad orientation sweep around the FK pose of arm7's mid-limit configuration (the
path advances with the goals, so consecutive goals are close and the node, seeded from its last
command, re-solves from nearby). Each rate runs for ``--seconds``; goals are paced on
``time.perf_counter`` (sleep, then a short spin that yields the GIL) from the main thread while a
dedicated thread spins the subscriptions. Each goal's ``header.stamp`` is the ROS clock (system
time) just before ``publish``.

* answered: goals named by a ``goal_stamp`` in a /diagnostics status of the node (one per goal
  handled); superseded = sent - answered (the goal subscription keeps depth 1: the latest goal
  wins); failed: statuses with ``success`` false (no command is published for them).
* latency: arrival of the goal's JointState command in this process - goal stamp. Arrival is the
  DDS reception time (``MessageInfo.received_timestamp``), so the benchmark's own Python executor
  does not count. The command carries no goal id: the node publishes the command and then the
  goal's status, both stamped from its clock, so the command of a successful status is the one
  stamped between the previous status and this one; unpaired goals fall back to the status's
  arrival (counted in the output).
* breakdown (per paired goal): node = command header.stamp - goal stamp (goal transport, waiting
  in the node, conversion, solve); solve = the status's ``time_ms``; node - solve; command
  transport = reception - DDS source timestamp; bench executor = Python callback - reception.

The goal is p99 <= 5 ms at 500 Hz. Exit status 0 when the node ran and stopped cleanly on SIGINT.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from machine import cpu_model  # (benchmark/, the script's directory)

from ik_node.ros.process import NodeProcess, ros_environment

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
PARAMS_FILE = PACKAGE_ROOT / "config" / "arm7.yaml"
URDF = PACKAGE_ROOT / "urdf" / "arm7.urdf"
NODE_NAME = "ik_node"
GOAL_TOPIC = f"/{NODE_NAME}/target_pose"
COMMAND_TOPIC = f"/{NODE_NAME}/joint_commands"
DIAGNOSTICS_TOPIC = "/diagnostics"
#: The issue's goal: p99 latency at this rate [Hz] within this bound [ms].
GOAL_RATE, GOAL_P99_MS = 500.0, 5.0
#: Seconds to wait for the node's start, discovery and answers.
WAIT = 20.0
#: Seconds the node may take to be ready (its kernels compile on a first start: ~12 s here).
READY_WAIT = 300.0
#: Last part of each pacing wait spent spinning instead of sleeping [s].
SPIN_MARGIN = 150e-6
#: After the last goal of a rate, answers have stopped once none came for this long [s].
QUIET = 0.3

RADIUS, PATH_PERIOD, SWEEP = 0.05, 2.0, 0.1  # m, s (of path time), rad
WARMUP_GOALS, WARMUP_RATE = 50, 50.0


# ---------------------------------------------------------------------- set-up


def configure_environment(domain_id: int, log_dir: str) -> dict:
    """Set the ROS/DDS variables in this process (before rclpy is imported; the node process's
    environment by :func:`ik_node.ros.process.ros_environment`) and return them."""
    environment = ros_environment({**os.environ, "ROS_LOG_DIR": log_dir}, domain_id=domain_id)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(PACKAGE_ROOT), *filter(None, [environment.get("PYTHONPATH")])]
    )
    os.environ.update(environment)
    return environment


def _rotation(axis, angle: float) -> np.ndarray:
    """Rotation matrix about a unit axis (Rodrigues)."""
    x, y, z = axis
    K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * K @ K


class GoalPath:
    """Poses on a circle (radius RADIUS, horizontal, through the start pose) with an orientation
    sweep, around the FK pose of arm7's mid-limit configuration; ``pose(t)`` at path time ``t``."""

    def __init__(self):
        from ik_node import load_robot

        tree = load_robot(str(URDF)).tree("base_link", "tool0")
        self.start = tree.forward(0.5 * (tree.lower + tree.upper))

    def pose(self, t: float) -> np.ndarray:
        phase = 2.0 * math.pi * t / PATH_PERIOD
        T = self.start.copy()
        T[:3, 3] += RADIUS * np.array([math.cos(phase) - 1.0, math.sin(phase), 0.0])
        sweep = _rotation((0.0, 0.0, 1.0), SWEEP * math.sin(phase)) @ _rotation(
            (1.0, 0.0, 0.0), SWEEP * (1.0 - math.cos(phase)) / 2.0
        )
        T[:3, :3] = self.start[:3, :3] @ sweep
        return T


def wait_until(deadline: float) -> None:
    """Sleep until shortly before ``deadline`` (perf_counter), then spin, yielding the GIL."""
    while True:
        remaining = deadline - time.perf_counter()
        if remaining <= 0.0:
            return
        time.sleep(remaining - SPIN_MARGIN if remaining > SPIN_MARGIN else 0)


# ---------------------------------------------------------------------- recording


class Recorder:
    """Callbacks of the benchmark's subscriptions (run on the executor thread). Times in ns of
    the system clock: header stamp (node clock), DDS source and reception, Python callback."""

    def __init__(self):
        self._lock = threading.Lock()
        self.commands: list[tuple] = []  # (stamp, source, received, callback)
        self.statuses: list[tuple] = []  # (stamp, source, received, callback, values)
        self.last_arrival = time.monotonic()

    @staticmethod
    def _stamp(header) -> int:
        return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec

    def on_command(self, message, info) -> None:
        now = time.time_ns()
        entry = (self._stamp(message.header), info["source_timestamp"], info["received_timestamp"], now)
        with self._lock:
            self.commands.append(entry)
            self.last_arrival = time.monotonic()

    def on_diagnostics(self, message, info) -> None:
        now = time.time_ns()
        stamp = self._stamp(message.header)
        with self._lock:
            for status in message.status:
                if status.name.startswith(f"{NODE_NAME}:"):
                    values = {item.key: item.value for item in status.values}
                    entry = (stamp, info["source_timestamp"], info["received_timestamp"], now, values)
                    self.statuses.append(entry)
            self.last_arrival = time.monotonic()

    def take(self) -> tuple[list, list]:
        with self._lock:
            commands, statuses = self.commands, self.statuses
            self.commands, self.statuses = [], []
        return commands, statuses

    def quiet_for(self) -> float:
        with self._lock:
            return time.monotonic() - self.last_arrival


def _stamp_ns(text: str) -> int:
    seconds, _, nanoseconds = text.partition(".")
    return int(seconds) * 1_000_000_000 + int(nanoseconds or 0)


def analyse(sent: dict, commands: list, statuses: list) -> dict:
    """Match statuses to the goals sent (by goal_stamp) and commands to successful statuses (by
    the node's stamps); latencies in ms."""
    statuses = sorted(
        (s for s in statuses if "goal_stamp" in s[4] and _stamp_ns(s[4]["goal_stamp"]) in sent),
        key=lambda s: s[0],
    )
    command_stamps = sorted(commands, key=lambda c: c[0])
    stamps = np.array([c[0] for c in command_stamps], dtype=np.int64)
    answered, failed, unpaired = set(), 0, 0
    latency, status_latency, solve, node, node_minus_solve, transport, executor, iterations = (
        [] for _ in range(8)
    )
    previous = -1
    for stamp, _, received, callback, values in statuses:
        goal = _stamp_ns(values["goal_stamp"])
        answered.add(goal)
        status_arrival = received or callback
        status_latency.append((status_arrival - goal) / 1e6)
        solve_ms = float(values.get("time_ms", "nan"))
        solve.append(solve_ms)
        iterations.append(float(values.get("iterations", "nan")))
        if values.get("success") != "true":
            failed += 1
            previous = stamp
            continue
        # the command published for this goal: stamped after the previous status, not after this one
        low, high = np.searchsorted(stamps, previous, "right"), np.searchsorted(stamps, stamp, "right")
        previous = stamp
        if high - low != 1:
            unpaired += 1
            latency.append((status_arrival - goal) / 1e6)
            continue
        c_stamp, c_source, c_received, c_callback = command_stamps[low]
        arrival = c_received or c_callback
        latency.append((arrival - goal) / 1e6)
        node.append((c_stamp - goal) / 1e6)
        node_minus_solve.append((c_stamp - goal) / 1e6 - solve_ms)
        if c_received and c_source:
            transport.append((c_received - c_source) / 1e6)
            executor.append((c_callback - c_received) / 1e6)
    return {
        "sent": len(sent),
        "answered": len(answered),
        "failed": failed,
        "unpaired": unpaired,
        "latency": np.array(latency),
        "status_latency": np.array(status_latency),
        "solve": np.array(solve),
        "node": np.array(node),
        "node_minus_solve": np.array(node_minus_solve),
        "transport": np.array(transport),
        "executor": np.array(executor),
        "iterations": np.array(iterations),
    }


def _pct(values: np.ndarray, q: float) -> str:
    return f"{np.percentile(values, q):.2f}" if values.size else "-"


# ---------------------------------------------------------------------- the benchmark


def run(args, environment: dict, log_dir: str) -> int:
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from geometry_msgs.msg import PoseStamped
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    from ik_node.decisions.conversions import pose_to_fields

    path = GoalPath()
    process = None
    executor = thread = bench = None
    status = 0
    rclpy.init()
    try:
        extra = [item for value in args.param for item in ("-p", value)]
        process = NodeProcess("--params-file", str(PARAMS_FILE), *extra, environment=environment)
        bench = rclpy.create_node(f"ik_node_latency_bench_{os.getpid()}")
        recorder = Recorder()
        goal_qos = QoSProfile(
            depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE
        )
        record_qos = QoSProfile(
            depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE
        )
        publisher = bench.create_publisher(PoseStamped, GOAL_TOPIC, goal_qos)
        bench.create_subscription(JointState, COMMAND_TOPIC, recorder.on_command, record_qos)
        bench.create_subscription(DiagnosticArray, DIAGNOSTICS_TOPIC, recorder.on_diagnostics, record_qos)
        executor = SingleThreadedExecutor()
        executor.add_node(bench)
        thread = threading.Thread(target=executor.spin, name="bench-executor", daemon=True)
        thread.start()
        clock = bench.get_clock()

        def goal_message(matrix) -> PoseStamped:
            message = PoseStamped()
            message.header.frame_id = "base_link"
            position, quaternion = pose_to_fields(matrix)
            p, o = message.pose.position, message.pose.orientation
            p.x, p.y, p.z = position
            o.x, o.y, o.z, o.w = quaternion
            return message

        def publish_goals(rate: float, count: int, path_time: float) -> tuple[dict, float]:
            """``count`` goals at ``rate``; returns {stamp_ns: index} and the achieved rate."""
            messages = [goal_message(path.pose(path_time + index / rate)) for index in range(count)]
            sent = {}
            start = time.perf_counter()
            for index, message in enumerate(messages):
                wait_until(start + index / rate)
                now = clock.now()
                message.header.stamp = now.to_msg()
                publisher.publish(message)
                sent[now.nanoseconds] = index
            elapsed = time.perf_counter() - start
            return sent, (count - 1) / elapsed if elapsed > 0 else float("nan")

        def drain() -> None:
            deadline = time.monotonic() + WAIT
            while recorder.quiet_for() < QUIET and time.monotonic() < deadline:
                time.sleep(0.05)

        # discovery: our goal publisher matched and the node's command publisher seen
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and process.process.poll() is None:
            if publisher.get_subscription_count() > 0 and bench.count_publishers(COMMAND_TOPIC) > 0:
                break
            time.sleep(0.02)
        else:
            raise RuntimeError(
                f"the node was not discovered within {WAIT} s (exit code {process.process.poll()})"
            )
        time.sleep(0.5)
        if not process.wait_for_log("ready: goals", timeout=READY_WAIT):  # kernels compiled or loaded
            raise RuntimeError(f"the node was not ready within {READY_WAIT} s:\n{process.log()[-2000:]}")
        if publisher.get_subscription_count() != 1 or bench.count_publishers(COMMAND_TOPIC) != 1:
            raise RuntimeError(
                f"another {NODE_NAME} is in ROS domain {args.domain_id}; pick another --domain-id"
            )

        path_time = 0.0
        sent, _ = publish_goals(WARMUP_RATE, WARMUP_GOALS, path_time)
        path_time += WARMUP_GOALS / WARMUP_RATE
        drain()
        warmup = analyse(sent, *recorder.take())
        if warmup["answered"] == 0 or warmup["failed"] == warmup["answered"]:
            raise RuntimeError(f"the node answered no warm-up goal: {warmup['answered']} answered")

        results = {}
        for rate in args.rates:
            count = max(2, round(rate * args.seconds))
            recorder.take()
            sent, achieved = publish_goals(rate, count, path_time)
            path_time += count / rate
            drain()
            results[rate] = {**analyse(sent, *recorder.take()), "achieved": achieved}
            time.sleep(0.3)
        report(args, results)
    except BaseException as error:
        status = 1
        print(f"benchmark failed: {error!r}", file=sys.stderr)
        if not isinstance(error, Exception):
            raise
    finally:
        if executor is not None:
            executor.shutdown(timeout_sec=2.0)
        if thread is not None:
            thread.join(2.0)
        if bench is not None:
            bench.destroy_node()
        rclpy.try_shutdown()
        if process is not None:
            code = process.stop(timeout=WAIT)
            print(f"node stopped with SIGINT: exit code {code}" + (" (ok)" if code == 0 else " (NOT 0)"))
            if code != 0:
                status = 1
            if status != 0:
                print(
                    f"--- node log ({process.log_path}), last lines:\n"
                    + "\n".join(process.log().splitlines()[-20:])
                )
    return status


def report(args, results: dict) -> None:
    now = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    print(f"ik_node goal-to-command latency, {now}")
    print(f"CPU: {cpu_model()} ({os.cpu_count()} logical CPUs); load average {os.getloadavg()[0]:.2f}")
    print(
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}; node: arm7, "
        f"solve mode; {args.seconds:g} s per rate, ROS domain {args.domain_id}"
    )
    print(
        "latency = arrival of the goal's JointState command here (DDS reception time) - goal header.stamp;\n"
        "commands paired to goals through the /diagnostics goal_stamp (unpaired: the status's arrival)"
    )
    header = (
        f"{'rate Hz':>8} {'achieved':>8} {'sent':>6} {'answered':>8} {'superseded':>14} {'failed':>6} "
        f"{'unpaired':>8} | {'lat p50':>7} {'p99':>7} {'mean':>7} {'max':>7} ms | "
        f"{'solve p50':>9} {'p99':>6} ms"
    )
    print(header)
    print("-" * len(header))
    for rate, r in results.items():
        superseded = r["sent"] - r["answered"]
        share = 100.0 * superseded / r["sent"] if r["sent"] else 0.0
        latency = r["latency"]
        mean = f"{latency.mean():.2f}" if latency.size else "-"
        worst = f"{latency.max():.2f}" if latency.size else "-"
        print(
            f"{rate:>8g} {r['achieved']:>8.1f} {r['sent']:>6} {r['answered']:>8} "
            f"{f'{superseded} ({share:.1f}%)':>14} {r['failed']:>6} {r['unpaired']:>8} | "
            f"{_pct(latency, 50):>7} {_pct(latency, 99):>7} {mean:>7} {worst:>7}    | "
            f"{_pct(r['solve'], 50):>9} {_pct(r['solve'], 99):>6}"
        )
    print("\nwhere the time goes, p50 / p99 [ms] per paired goal (iterations: all answered goals):")
    parts = (
        ("node", "goal stamp -> command stamped in the node"),
        ("solve", "solve time (status time_ms)"),
        ("iterations", "solver iterations per goal (status iterations; a count, not ms)"),
        ("node_minus_solve", "node - solve: goal transport, waiting, conversion"),
        ("transport", "command: DDS source -> reception here"),
        ("executor", "command: reception -> Python callback here (not in latency)"),
        ("status_latency", "goal stamp -> status arrival here"),
    )
    print(f"{'rate Hz':>8} " + " ".join(f"{name[:16]:>16}" for name, _ in parts))
    for rate, r in results.items():
        print(
            f"{rate:>8g} "
            + " ".join(f"{_pct(r[name], 50) + ' / ' + _pct(r[name], 99):>16}" for name, _ in parts)
        )
    for name, text in parts:
        print(f"  {name}: {text}")
    if GOAL_RATE in results:
        p99 = (
            np.percentile(results[GOAL_RATE]["latency"], 99)
            if results[GOAL_RATE]["latency"].size
            else math.inf
        )
        verdict = "met" if p99 <= GOAL_P99_MS else "not met"
        print(f"\np99 <= {GOAL_P99_MS:g} ms at {GOAL_RATE:g} Hz: {verdict} (p99 {p99:.2f} ms)")
    else:
        print(f"\np99 <= {GOAL_P99_MS:g} ms at {GOAL_RATE:g} Hz: not measured (rate not in --rates)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rates", type=float, nargs="+", default=[100.0, 500.0, 1000.0], help="goal rates [Hz]"
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of each rate [s] (default 3)")
    parser.add_argument("--domain-id", type=int, default=90, help="ROS_DOMAIN_ID of the run (default 90)")
    parser.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="NAME:=VALUE",
        help="extra node parameter, passed on as -p NAME:=VALUE (repeatable)",
    )
    args = parser.parse_args(argv)
    log_dir = tempfile.mkdtemp(prefix="ik_node_bench_log_")
    environment = configure_environment(args.domain_id, log_dir)
    status = run(args, environment, log_dir)
    if status == 0:
        shutil.rmtree(log_dir, ignore_errors=True)
    else:
        print(f"logs kept in {log_dir}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
