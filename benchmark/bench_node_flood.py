"""Flood and soak of the running ik_node node: bounded memory, latest goal wins, latency recovers.

Usage: python benchmark/bench_node_flood.py [--flood N] [--soak N] [--soak-rate HZ] [--domain-id N]

Method: as in bench_node_latency.py (whose set-up, goal path, recorder and goal/command pairing
this script imports): the node runs as its own process with config/arm7.yaml (solve mode), DDS stays
on this machine (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``, a domain of our own, the Fast DDS
profile in config/), goals are ``PoseStamped`` on ``/ik_node/target_pose`` (depth 1: the latest goal
wins) stamped with the system time just before ``publish``, and each answered goal is named by the
``goal_stamp`` of its status on ``/diagnostics``; latency = arrival here (DDS reception time) of the
goal's JointState command - goal stamp. The node's memory is its resident set size, ``VmRSS`` of
``/proc/<pid>/status``, read by a sampling thread.

1. Flood. After 50 warm-up goals, a baseline of 1 s at 100 Hz (its p99 is the "normal" latency),
   then ``--flood`` goals published back to back as fast as this process can (messages built
   beforehand, only stamp + publish in the loop), then 2 s of goals at 100 Hz whose first goal
   leaves 10 ms after the burst's last one (time for the node to answer that last burst goal). RSS
   is sampled every 50 ms from the baseline to the end; growth = max RSS after the burst start -
   RSS just before it. Reported: answered / superseded (sent - answered) / failed burst goals, the
   index of the last burst goal answered (the latest wins: it should be the last one, N-1), the
   recovery goals' latency p50/p99/max in windows 0-0.5 s, 0.5-1 s, 1-2 s after the burst end
   (by send time), and the recovery time: the send time, after the burst end, of the first recovery
   goal from which latency is back at the baseline: its latency <= the baseline p99 and so is the
   median of every run of 10 consecutive answered goals (0.1 s) from it on (a lasting slow-down, not
   a lone spike; the table counts the goals above that p99 per window).
2. Soak. ``--soak`` goals at ``--soak-rate`` along the same 5 cm circle path as the latency
   benchmark (path time = goal index / rate, so consecutive goals stay close and solves are
   realistic), paced on ``time.perf_counter`` (each message is built before its wait); RSS is sampled
   every second. Reported: the achieved rate and duration, answered / superseded / failed, RSS at
   the start (after the warm-up, baseline and flood), its maximum and end (after the last answer),
   end - start, and the RSS every 10 s.

Goals: flood RSS growth < 5 MB, latency recovered within 1 s of the burst end, soak RSS growth
< 5 MB. Exit status 0 when the node ran and stopped cleanly on SIGINT (exit code 0), whatever the
verdicts; the node is killed if it does not stop.
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

from ik_node.ros.process import NodeProcess

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_node_latency import (  # noqa: E402  (the benchmark folder is not a package)
    COMMAND_TOPIC,
    DIAGNOSTICS_TOPIC,
    GOAL_TOPIC,
    NODE_NAME,
    PARAMS_FILE,
    QUIET,
    READY_WAIT,
    WAIT,
    WARMUP_GOALS,
    WARMUP_RATE,
    GoalPath,
    Recorder,
    _stamp_ns,
    analyse,
    configure_environment,
    cpu_model,
    wait_until,
)

#: Bounds of the issue: RSS growth [MB] of the flood and of the soak; latency recovery [s].
RSS_GROWTH_MB, RECOVERY_S = 5.0, 1.0
NORMAL_RATE, BASELINE_S, RECOVERY_PHASE_S = 100.0, 1.0, 2.0
#: Path time per flood goal [s]: the burst sweeps the path as a 1 kHz stream would.
FLOOD_PATH_STEP = 1e-3
WINDOWS = ((0.0, 0.5), (0.5, 1.0), (1.0, math.inf))  # s after the burst end, by send time
#: Consecutive recovery goals whose median latency must be back at the baseline p99 (0.1 s at 100 Hz).
RUN = 10
FLOOD_SAMPLE_S, SOAK_SAMPLE_S = 0.05, 1.0
#: Depth of the benchmark's command and diagnostics readers (the flood answers thousands at once).
RECORD_DEPTH = 5000


def read_rss_kb(pid: int) -> int:
    """Resident set size of a process [kB] (``VmRSS`` in /proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


class RssSampler:
    """A thread that reads a process's RSS every ``period`` seconds: ``samples`` of
    (time.perf_counter(), kB)."""

    def __init__(self, pid: int, period: float):
        self.pid, self.period = pid, period
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def _run(self) -> None:
        while True:
            try:
                self.samples.append((time.perf_counter(), read_rss_kb(self.pid)))
            except (OSError, RuntimeError):
                return  # the process is gone
            if self._stop.wait(self.period):
                return

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(2.0)


def goal_latencies(sent: dict, commands: list, statuses: list) -> tuple[dict, dict]:
    """``analyse`` of the latency benchmark, plus ``answered_goals`` / ``failed_goals`` (sets of goal
    stamps) and each successful goal's latency, {stamp_ns: ms}. ``analyse`` appends one latency per
    successful status in the order of the statuses' stamps; the same order here names the goals."""
    result = analyse(sent, commands, statuses)
    named = sorted(
        (s for s in statuses if "goal_stamp" in s[4] and _stamp_ns(s[4]["goal_stamp"]) in sent),
        key=lambda s: s[0],
    )
    outcomes = [(_stamp_ns(s[4]["goal_stamp"]), s[4].get("success") == "true") for s in named]
    goals = [stamp for stamp, success in outcomes if success]
    if len(goals) != result["latency"].size:
        raise RuntimeError("pairing of goals and latencies is inconsistent")
    result["answered_goals"] = {stamp for stamp, _ in outcomes}
    result["failed_goals"] = {stamp for stamp, success in outcomes if not success}
    return result, dict(zip(goals, result["latency"].tolist()))


def recovery_time(offsets: np.ndarray, latency: np.ndarray, threshold: float) -> float:
    """Send time of the first goal from which latency is back at ``threshold`` (see the module
    docstring); nan when never."""
    if latency.size < RUN:
        return math.nan
    medians = np.median(np.lib.stride_tricks.sliding_window_view(latency, RUN), axis=1)
    medians = np.concatenate([medians, np.full(RUN - 1, medians[-1])])  # the last run for the tail
    high_from = np.maximum.accumulate(medians[::-1])[::-1]  # worst run median from goal i on
    back = np.flatnonzero((latency <= threshold) & (high_from <= threshold))
    return float(offsets[back[0]]) if back.size else math.nan


def _stats(values) -> str:
    values = np.asarray(values, dtype=float)
    if not values.size:
        return f"{'-':>7} {'-':>7} {'-':>7}"
    p50, p99 = np.percentile(values, [50, 99])
    return f"{p50:>7.2f} {p99:>7.2f} {values.max():>7.2f}"


def _mb(kb: float) -> float:
    return kb / 1024.0


class Bench:
    """The node's process and this process's ROS entities; ``close()`` stops everything."""

    def __init__(self, args, environment: dict, log_dir: str):
        import geometry_msgs.msg
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Header

        from ik_node.decisions.conversions import pose_to_fields

        self._rclpy, self._pose_to_fields = rclpy, pose_to_fields
        self._geometry, self._header = geometry_msgs.msg, Header
        self.path = GoalPath()
        self.recorder = Recorder()
        self.process = self.node = self.executor = self._thread = None
        rclpy.init()
        self.process = NodeProcess("--params-file", str(PARAMS_FILE), environment=environment)
        self.node = rclpy.create_node(f"ik_node_flood_bench_{os.getpid()}")

        def qos(depth: int) -> QoSProfile:
            return QoSProfile(
                depth=depth, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE
            )

        self.publisher = self.node.create_publisher(geometry_msgs.msg.PoseStamped, GOAL_TOPIC, qos(1))
        for kind, topic, callback in (
            (JointState, COMMAND_TOPIC, self.recorder.on_command),
            (DiagnosticArray, DIAGNOSTICS_TOPIC, self.recorder.on_diagnostics),
        ):
            self.node.create_subscription(kind, topic, callback, qos(RECORD_DEPTH))
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self.executor.spin, name="bench-executor", daemon=True)
        self._thread.start()
        self._last_stamp = 0

    def wait_for_node(self, domain_id: int) -> None:
        """Until our goal publisher is matched and the node's command publisher is seen; exactly one."""
        deadline = time.monotonic() + WAIT
        matched = lambda: (  # noqa: E731
            self.publisher.get_subscription_count(),
            self.node.count_publishers(COMMAND_TOPIC),
        )
        while min(matched()) < 1:
            if time.monotonic() > deadline or self.process.process.poll() is not None:
                exit_code = self.process.process.poll()
                raise RuntimeError(f"node not discovered within {WAIT} s (exit code {exit_code})")
            time.sleep(0.02)
        time.sleep(0.5)
        if not self.process.wait_for_log("ready: goals", timeout=READY_WAIT):  # kernels compiled or loaded
            raise RuntimeError(f"the node was not ready within {READY_WAIT} s:\n{self.process.log()[-2000:]}")
        if matched() != (1, 1):
            raise RuntimeError(f"another {NODE_NAME} is in ROS domain {domain_id}; pick another --domain-id")

    def message(self, path_time: float):
        """The goal at ``path_time`` on the path, in base_link, not stamped yet."""
        g = self._geometry
        (x, y, z), (qx, qy, qz, qw) = self._pose_to_fields(self.path.pose(path_time))
        pose = g.Pose(position=g.Point(x=x, y=y, z=z), orientation=g.Quaternion(x=qx, y=qy, z=qz, w=qw))
        return g.PoseStamped(header=self._header(frame_id="base_link"), pose=pose)

    def send(self, goal) -> int:
        """Stamp (system time, strictly increasing) and publish; returns the stamp [ns]."""
        stamp = max(time.time_ns(), self._last_stamp + 1)
        self._last_stamp = stamp
        goal.header.stamp.sec, goal.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        self.publisher.publish(goal)
        return stamp

    def paced(self, rate: float, count: int, path_time: float, delay: float = 0.0) -> tuple[dict, float]:
        """``count`` goals at ``rate`` (the first after ``delay``); {stamp_ns: index}, achieved rate."""
        sent = {}
        start = time.perf_counter() + delay
        for index in range(count):
            goal = self.message(path_time + index / rate)
            wait_until(start + index / rate)
            sent[self.send(goal)] = index
        elapsed = time.perf_counter() - start
        return sent, (count - 1) / elapsed if elapsed > 0 else math.nan

    def drain(self) -> tuple[list, list]:
        """Wait until no answer came for QUIET seconds; take what was recorded."""
        deadline = time.monotonic() + WAIT
        while self.recorder.quiet_for() < QUIET and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.recorder.take()

    def rss_kb(self) -> int:
        if self.process.process.poll() is not None:
            raise RuntimeError(f"the node exited (code {self.process.process.returncode})")
        return read_rss_kb(self.process.pid)

    def close(self) -> int | None:
        """Stop our executor and node, then the node's process with SIGINT (killed after WAIT s);
        returns its exit code (None when it never started)."""
        if self.executor is not None:
            self.executor.shutdown(timeout_sec=2.0)
        if self._thread is not None:
            self._thread.join(2.0)
        if self.node is not None:
            self.node.destroy_node()
        self._rclpy.try_shutdown()
        return None if self.process is None else self.process.stop(timeout=WAIT)


# ---------------------------------------------------------------------- phases


def flood_phase(bench: Bench, count: int, path_time: float) -> dict:
    bench.recorder.take()
    with RssSampler(bench.process.pid, FLOOD_SAMPLE_S) as sampler:
        sent, _ = bench.paced(NORMAL_RATE, round(NORMAL_RATE * BASELINE_S), path_time)
        path_time += BASELINE_S
        baseline, _ = goal_latencies(sent, *bench.drain())
        messages = [bench.message(path_time + index * FLOOD_PATH_STEP) for index in range(count)]
        path_time += count * FLOOD_PATH_STEP
        rss_before = bench.rss_kb()
        burst_start = time.perf_counter()
        burst = {bench.send(goal): index for index, goal in enumerate(messages)}
        burst_end = time.perf_counter()
        burst_end_ns = max(burst)
        recovery, _ = bench.paced(NORMAL_RATE, round(NORMAL_RATE * RECOVERY_PHASE_S), path_time, 0.01)
        result, latencies = goal_latencies({**burst, **recovery}, *bench.drain())
        time.sleep(0.5)
        rss_after = bench.rss_kb()
    after_start = [kb for t, kb in sampler.samples if t >= burst_start] + [rss_after]
    during = [kb for t, kb in sampler.samples if burst_start <= t <= burst_end]
    answered_burst = [burst[stamp] for stamp in result["answered_goals"] if stamp in burst]
    failed_burst = sum(1 for stamp in result["failed_goals"] if stamp in burst)
    goals = sorted(stamp for stamp in recovery)
    offsets = np.array([(stamp - burst_end_ns) / 1e9 for stamp in goals if stamp in latencies])
    recovery_latency = np.array([latencies[stamp] for stamp in goals if stamp in latencies])
    threshold = float(np.percentile(baseline["latency"], 99)) if baseline["latency"].size else math.nan
    return {
        "path_time": path_time,
        "baseline": baseline,
        "threshold": threshold,
        "sent": count,
        "rate": (count - 1) / (burst_end - burst_start),
        "duration": burst_end - burst_start,
        "answered": len(answered_burst),
        "failed": failed_burst,
        "last_answered": max(answered_burst, default=-1),
        "recovery_sent": len(recovery),
        "recovery_missed": sorted(
            recovery[stamp] for stamp in recovery if stamp not in result["answered_goals"]
        ),
        "offsets": offsets,
        "recovery_latency": recovery_latency,
        "recovered_at": recovery_time(offsets, recovery_latency, threshold),
        "rss_before": rss_before,
        "rss_during_max": max(during, default=rss_before),
        "rss_during_samples": len(during),
        "rss_max": max(after_start),
        "rss_after": rss_after,
    }


def soak_phase(bench: Bench, count: int, rate: float, path_time: float) -> dict:
    bench.recorder.take()
    rss_start = bench.rss_kb()
    with RssSampler(bench.process.pid, SOAK_SAMPLE_S) as sampler:
        start = time.perf_counter()
        sent, achieved = bench.paced(rate, count, path_time)
        duration = time.perf_counter() - start
        result, _ = goal_latencies(sent, *bench.drain())
        rss_end = bench.rss_kb()
    trace = [(max(t - start, 0.0), kb) for t, kb in sampler.samples]
    return {
        **result,
        "achieved": achieved,
        "duration": duration,
        "rss_start": rss_start,
        "rss_max": max([kb for _, kb in trace] + [rss_start, rss_end]),
        "rss_end": rss_end,
        "trace": trace,
    }


# ---------------------------------------------------------------------- report


def _counts(r: dict) -> str:
    superseded = r["sent"] - r["answered"]
    share = 100.0 * superseded / r["sent"]
    return f"answered {r['answered']}, superseded {superseded} ({share:.1f}%), failed {r['failed']}"


def _verdict(ok: bool) -> str:
    return "goal met" if ok else "goal NOT met"


def report(args, flood: dict, soak: dict) -> None:
    now = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    print(f"ik_node flood and soak, {now}")
    print(f"CPU: {cpu_model()} ({os.cpu_count()} logical CPUs); load average {os.getloadavg()[0]:.2f}")
    print(
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}; node: arm7, "
        f"solve mode; ROS domain {args.domain_id}"
    )
    print("latency = arrival of the goal's JointState command here (DDS reception) - goal header.stamp [ms]")

    b = flood["baseline"]
    print(
        f"\nbaseline, {BASELINE_S:g} s at {NORMAL_RATE:g} Hz: {b['answered']}/{b['sent']} answered, "
        f"{b['failed']} failed; latency p50 / p99 / max {_stats(b['latency'])} ms"
    )
    print(
        f"\nflood: {flood['sent']} goals back to back in {flood['duration']:.3f} s "
        f"({flood['rate']:.0f} goals/s)\n  {_counts(flood)}\n"
        f"  last burst goal answered: index {flood['last_answered']} of 0..{flood['sent'] - 1}"
        + (
            " (the last one: the latest wins)"
            if flood["last_answered"] == flood["sent"] - 1
            else " (NOT the last)"
        )
    )
    flood_growth = _mb(flood["rss_max"] - flood["rss_before"])
    print(
        f"  node RSS [MB]: before {_mb(flood['rss_before']):.2f}, max during the burst "
        f"{_mb(flood['rss_during_max']):.2f} ({flood['rss_during_samples']} samples), "
        f"max from the burst start on {_mb(flood['rss_max']):.2f}, "
        f"after recovery {_mb(flood['rss_after']):.2f}; max growth {flood_growth:+.2f}"
    )
    print(
        f"  recovery, {RECOVERY_PHASE_S:g} s at {NORMAL_RATE:g} Hz from 10 ms after the burst end: "
        f"{flood['recovery_sent'] - len(flood['recovery_missed'])}/{flood['recovery_sent']} answered"
        + (f" (not answered: goals {flood['recovery_missed']})" if flood["recovery_missed"] else "")
    )
    print(f"  {'window s':>10} {'> p99':>6} {'goals':>5} {'p50':>7} {'p99':>7} {'max':>7} ms")
    for low, high in WINDOWS:
        inside = (flood["offsets"] >= low) & (flood["offsets"] < high)
        label = f"{low:g}-{min(high, RECOVERY_PHASE_S):g}"
        over = int(np.sum(flood["recovery_latency"][inside] > flood["threshold"]))
        print(f"  {label:>10} {over:>6} {int(inside.sum()):>5} {_stats(flood['recovery_latency'][inside])}")
    recovered = flood["recovered_at"]
    print(
        f"  latency back at the baseline p99 ({flood['threshold']:.2f} ms) from "
        + (f"{recovered:.3f} s after the burst end" if math.isfinite(recovered) else "never (within the 2 s)")
    )

    s = soak
    print(
        f"\nsoak: {s['sent']} goals at {args.soak_rate:g} Hz requested, {s['achieved']:.1f} Hz achieved, "
        f"{s['duration']:.1f} s\n  {_counts(s)}; latency p50 / p99 / max {_stats(s['latency'])} ms"
    )
    growth = s["rss_end"] - s["rss_start"]
    print(
        f"  node RSS [MB]: start {_mb(s['rss_start']):.2f}, max {_mb(s['rss_max']):.2f}, "
        f"end {_mb(s['rss_end']):.2f}; growth end - start {_mb(growth):+.2f}"
    )
    every = s["trace"][:: round(10.0 / SOAK_SAMPLE_S)]
    print("  RSS every 10 s [s: MB]: " + ", ".join(f"{t:.0f}: {_mb(kb):.2f}" for t, kb in every))

    bounded = _verdict(flood_growth < RSS_GROWTH_MB)
    print(f"\nflood memory bounded (max growth < {RSS_GROWTH_MB:g} MB): {bounded}")
    print(f"latency recovered within {RECOVERY_S:g} s: {_verdict(recovered <= RECOVERY_S)}")
    print(f"soak RSS growth < {RSS_GROWTH_MB:g} MB: {_verdict(_mb(growth) < RSS_GROWTH_MB)}")


# ---------------------------------------------------------------------- main


def run(args, environment: dict, log_dir: str) -> int:
    bench = None
    status = 0
    try:
        bench = Bench(args, environment, log_dir)
        bench.wait_for_node(args.domain_id)
        sent, _ = bench.paced(WARMUP_RATE, WARMUP_GOALS, 0.0)
        warmup = analyse(sent, *bench.drain())
        if warmup["answered"] == 0 or warmup["failed"] == warmup["answered"]:
            raise RuntimeError(f"the node answered no warm-up goal: {warmup['answered']} answered")
        flood = flood_phase(bench, args.flood, WARMUP_GOALS / WARMUP_RATE)
        time.sleep(0.5)
        soak = soak_phase(bench, args.soak, args.soak_rate, flood["path_time"])
        report(args, flood, soak)
    except Exception as error:  # Ctrl-C propagates, after the finally
        status = 1
        print(f"benchmark failed: {error!r}", file=sys.stderr)
    finally:
        if bench is not None:
            code = bench.close()
            print(f"node stopped with SIGINT: exit code {code}" + (" (ok)" if code == 0 else " (NOT 0)"))
            if code != 0:
                status = 1
            if status != 0 and bench.process is not None:
                tail = "\n".join(bench.process.log().splitlines()[-20:])
                print(f"--- node log ({bench.process.log_path}), last lines:\n{tail}")
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--flood", type=int, default=10000, help="goals in the burst (default 10000)")
    parser.add_argument("--soak", type=int, default=100000, help="goals of the soak (default 100000)")
    parser.add_argument("--soak-rate", type=float, default=1500.0, help="soak goal rate [Hz] (default 1500)")
    parser.add_argument("--domain-id", type=int, default=91, help="ROS_DOMAIN_ID of the run (default 91)")
    args = parser.parse_args(argv)
    if args.flood < 1 or args.soak < 2 or args.soak_rate <= 0:
        parser.error("--flood >= 1, --soak >= 2 and --soak-rate > 0 are required")
    log_dir = tempfile.mkdtemp(prefix="ik_node_flood_log_")
    status = run(args, configure_environment(args.domain_id, log_dir), log_dir)
    if status:
        print(f"logs kept in {log_dir}", file=sys.stderr)
    else:
        shutil.rmtree(log_dir, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
