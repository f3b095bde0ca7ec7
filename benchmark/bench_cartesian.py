"""Straight lines (issue 49): ``IKSolver.cartesian_path`` on every bundled arm beside a TRAC-IK
reference that walks the same line at 1 mm.

Usage: python benchmark/bench_cartesian.py [--segments N] [--arms NAME ...] [--seed N]

Segments, per arm (a random stream keyed on --seed and the arm's name, ``bench_ik.harness_rng``):
a start configuration uniform in the middle 80 % of each joint's range ([-pi, pi] for a
continuous joint), the tip's pose there by ik_node's FK, and a goal 10-40 cm away in a uniformly
random direction, turned by up to 45 deg about a uniformly random axis (base frame). The line
between them: position linear, rotation on the shortest turn, both at one rate
(``ik_node.compiled.rotations.interpolate_pose``, the library's own interpolation).

* **ours**: ``solver.cartesian_path(goal, seed=start)`` with its defaults (5 mm steps, 0.05 rad,
  1 mm from the line, 5 ms per step's solve): its ``fraction`` and ``reason``.
* **reference**: TRAC-IK (pytracik through ``benchmark/peers.py``, solve type Speed, eps
  1e-5/sqrt(3) as bench_ik's "implied", ik_node's joint limits) at every 1 mm of the same line,
  each solve seeded by the last answer; it ends at the first failed solve or the first step in
  which a joint moves more than 0.05 rad (continuous joints wrapped). Its fraction: the share of
  the line's length reached. Each solve gets 50 ms, not bench_ik's 5: on a loaded 2-core VM a
  5 ms wall-clock budget fails now and then on a step that takes 0.1 ms (the process waiting for
  a core), which would end the reference early. "as far": ours >= the reference's - 0.001;
  also counted: ours behind by more than one of its steps (5 mm).
* **jumps**, checked with the robot's own FK (``Robot.forward``, the whole robot's tree, not the
  solver's): two consecutive configurations of our path more than 0.3 rad (or m) apart in a
  joint, or the midpoint between them (joints interpolated linearly) more than 1 mm from the
  segment's line. The worst distance from the line: over the paths' points and midpoints.
  Also counted: paths whose last point is more than 1 mm from the line's point at ``fraction``
  (a fraction that does not say where the path ended), and segments on which our two calls
  (untimed, timed) gave different paths.
* **duration**: each complete path timed by ``cartesian_path(..., max_acceleration=2.0)`` (the
  URDF velocity limits, 2 rad/s^2 or m/s^2), against toppra run directly on the same joint path
  (a cubic spline through its configurations at their cumulative joint distance, 100 % of the
  same limits, ``TOPPRA(...).compute_trajectory(0, 0).duration``) with toppra's defaults (its own
  grid, spline parametrizer) and again on the path's points as the grid with constant
  acceleration between them (the library's parametrization, without its 2 % margin): the ratio,
  median and max. Goal <= 1.05. Both timings are sampled at 1 kHz: the largest share of a
  velocity or acceleration limit reached, ours and toppra's defaults'.
* **compute**: wall time of each ``cartesian_path`` call, untimed and timed (a separate call),
  median and p90 over the segments, failures included; and the fixed case of the goal, arm7's
  tip 30 cm along a straight line at 5 mm steps (the first seeded start and direction on which
  the whole line is reached; no rotation), median of 10 calls. Goal <= 2 ms.

Each arm's solver and the reference are warmed up on a few segments first (not counted). The
TRAC-IK walk runs between our two calls, so our calls find the caches as other work left them.
The load average is printed at the start and the end: the wall times depend on it.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ik_node import IKSolver, load_robot
from ik_node.compiled.rotations import interpolate_pose
from ik_node.description.catalogue import BUNDLED
from ik_node.errors import IKNodeError
from ik_node.lie import quaternion_to_matrix

BENCHMARK_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARK_DIR))

import peers as peer_adapters  # noqa: E402  (benchmark/ is not a package)
from bench_ik import PEER_EPS_SCALE, PeerRunner, harness_rng  # noqa: E402
from machine import cpu_model  # noqa: E402

#: The arms, bundled: one chain of the two-arm robot; the mobile manipulator from odom.
ARMS = ("arm6", "arm7", "dual_arm_left", "mobile_manipulator")
START_SHARE = 0.8  # the middle share of each joint's range the starts are drawn from
LENGTHS = (0.10, 0.40)  # [m] a segment's length, uniform
MAX_TURN = math.radians(45.0)  # [rad] a segment's largest rotation, uniform in [0, MAX_TURN]
WARMUP_SEGMENTS = 3  # per arm, not counted

REFERENCE_STEP = 0.001  # [m] TRAC-IK's step along the line
REFERENCE_JOINT_STEP = 0.05  # [rad or m] a larger joint change in one step ends the reference
TRAC_IK_TIMEOUT = 0.05  # [s] per solve (generous: see the docstring)
TOLERANCE = 1e-5  # [m, rad] the benchmarks' IK tolerance (TRAC-IK's eps scaled as bench_ik's "implied")
LIMIT_SLACK = 1e-6  # [rad or m] a joint this near a limit is at it
AS_FAR_SLACK = 1e-3  # ours counts as "as far" at >= the reference's fraction - this

JUMP_JOINT_STEP = 0.3  # [rad or m] two consecutive configurations further apart: a jump
LINE_TOLERANCE = 0.001  # [m] a midpoint further from the line: a jump
MAX_ACCELERATION = 2.0  # [rad/s^2, m/s^2] every joint, for the timing
ABSURD_DURATION = 1e3  # [s] a timed path of 40 cm at most takes seconds; this long: a failed timing
SAMPLE_RATE = 1000.0  # [Hz] timed paths sampled for their velocities and accelerations
STEP = 0.005  # [m] cartesian_path's default max_step: ours can end up to one short of a peer

GOAL_AS_FAR = 0.99  # share of segments on which ours gets at least as far
GOAL_DURATION_RATIO = 1.05  # our duration / toppra's at 100 % of the limits
GOAL_COMPUTE = 2e-3  # [s] one path, 30 cm at 5 mm steps on a 7-DOF arm
COMPUTE_CASE_ARM, COMPUTE_CASE_LENGTH, COMPUTE_CASE_RUNS = "arm7", 0.30, 10


# --------------------------------------------------------------------------- segments


@dataclass(frozen=True)
class Segment:
    """A straight segment: the start configuration ``q0`` and the tip's poses ``start`` (at q0)
    and ``goal`` (4x4, base frame), ``length`` [m] and ``turn`` [rad] between them."""

    q0: np.ndarray
    start: np.ndarray
    goal: np.ndarray
    length: float
    turn: float

    def at(self, fraction: float) -> np.ndarray:
        """The line's pose ``fraction`` of the way (the library's interpolation)."""
        out = np.empty((4, 4))
        interpolate_pose(self.start, self.goal, fraction, np.empty((3, 3)), np.empty(3), out)
        return out

    def distance(self, point: np.ndarray) -> float:
        """[m] from ``point`` (3,) to the segment between the start and goal positions."""
        a, b = self.start[:3, 3], self.goal[:3, 3]
        along = min(1.0, max(0.0, float((point - a) @ (b - a)) / float((b - a) @ (b - a))))
        return float(np.linalg.norm(point - (a + along * (b - a))))


def unit_vector(rng: np.random.Generator) -> np.ndarray:
    vector = rng.normal(size=3)
    return vector / np.linalg.norm(vector)


def sampling_range(solver: IKSolver) -> tuple[np.ndarray, np.ndarray]:
    """The middle ``START_SHARE`` of each joint's range (a continuous joint's: of [-pi, pi])."""
    lower = np.where(np.isfinite(solver.lower), solver.lower, -math.pi)
    upper = np.where(np.isfinite(solver.upper), solver.upper, math.pi)
    margin = 0.5 * (1.0 - START_SHARE) * (upper - lower)
    return lower + margin, upper - margin


def random_segment(
    rng: np.random.Generator, solver: IKSolver, length: float | None = None, turn: bool = True
) -> Segment:
    low, high = sampling_range(solver)
    q0 = rng.uniform(low, high)
    start = solver.tip_poses(q0)[0]
    length = rng.uniform(*LENGTHS) if length is None else length
    goal = start.copy()
    goal[:3, 3] += length * unit_vector(rng)
    angle = rng.uniform(0.0, MAX_TURN) if turn else 0.0
    x, y, z = unit_vector(rng) * math.sin(0.5 * angle)
    goal[:3, :3] = quaternion_to_matrix(x, y, z, math.cos(0.5 * angle)) @ start[:3, :3]
    return Segment(q0, start, goal, length, angle)


# --------------------------------------------------------------------------- the reference


def trac_ik_runner(case, solver: IKSolver) -> PeerRunner:
    """TRAC-IK on the case's chain with ik_node's joint limits, joints mapped by name."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eps = TOLERANCE * PEER_EPS_SCALE["implied"]["trac_ik"]
        peer = peer_adapters.TracIKPeer(case.urdf.read_text(), case.base, case.tips[0], TRAC_IK_TIMEOUT, eps)
    runner = PeerRunner(peer, solver.joint_names)
    limits = {name: (low, high) for name, low, high in zip(solver.joint_names, solver.lower, solver.upper)}
    peer.set_limits(
        [limits[name][0] for name in peer.joint_names], [limits[name][1] for name in peer.joint_names]
    )
    return runner


def at_limits(solver: IKSolver, q: np.ndarray) -> list[str]:
    """The joints of ``q`` at one of their limits (within ``LIMIT_SLACK``)."""
    at = (q >= solver.upper - LIMIT_SLACK) | (q <= solver.lower + LIMIT_SLACK)
    return [name for name, held in zip(solver.joint_names, at) if held]


def joint_change(solver: IKSolver, a: np.ndarray, b: np.ndarray) -> float:
    """The largest joint change [rad or m] from ``a`` to ``b``, continuous joints wrapped."""
    change = b - a
    change[solver.continuous] = (change[solver.continuous] + math.pi) % (2.0 * math.pi) - math.pi
    return float(np.max(np.abs(change)))


def reference_fraction(runner: PeerRunner, solver: IKSolver, segment: Segment) -> float:
    """How far TRAC-IK gets along the line in ``REFERENCE_STEP`` steps, each seeded by the last
    answer, before a solve fails or a joint moves more than ``REFERENCE_JOINT_STEP``."""
    steps = math.ceil(segment.length / REFERENCE_STEP)
    q = segment.q0
    for index in range(1, steps + 1):
        answer, solved = runner.solve([segment.at(index / steps)], q)
        if not solved or joint_change(solver, q, answer) > REFERENCE_JOINT_STEP:
            return (index - 1) / steps
        q = answer
    return 1.0


# --------------------------------------------------------------------------- our path, checked


class RobotFK:
    """The tip's controlled point by the robot's own FK (``Robot.forward``: the whole robot's
    tree, built apart from the solver's), for configurations in the solver's joint order."""

    def __init__(self, robot, solver: IKSolver):
        self.robot, self.base, self.tip = robot, solver.tree.base_link, solver.tip_links[0]
        self.names = solver.joint_names
        self.offset = np.asarray(solver.tasks[self.tip].offset, dtype=float)

    def point(self, q: np.ndarray) -> np.ndarray:
        pose = self.robot.forward(dict(zip(self.names, q)), self.tip, self.base)
        return pose[:3, 3] + pose[:3, :3] @ self.offset


@dataclass(frozen=True)
class PathCheck:
    """``jumps``: consecutive configurations apart by more than ``JUMP_JOINT_STEP`` or with a
    midpoint more than ``LINE_TOLERANCE`` off the line; ``deviation`` [m]: the largest distance of
    a point or midpoint from the line; ``end_error`` [m]: the last point from the line's point at
    the path's fraction."""

    jumps: int
    deviation: float
    end_error: float


def check_path(fk: RobotFK, solver: IKSolver, segment: Segment, q: np.ndarray, fraction: float) -> PathCheck:
    jumps, deviation = 0, 0.0
    points = [fk.point(configuration) for configuration in q]
    for a, b, point in zip(q, q[1:], points[1:]):
        middle = segment.distance(fk.point(0.5 * (a + b)))
        deviation = max(deviation, middle, segment.distance(point))
        if joint_change(solver, a, b) > JUMP_JOINT_STEP or middle > LINE_TOLERANCE:
            jumps += 1
    end_error = float(np.linalg.norm(points[-1] - segment.at(fraction)[:3, 3]))
    return PathCheck(jumps, deviation, end_error)


def toppra_reference(
    q: np.ndarray, max_velocity: np.ndarray, max_acceleration: float, on_points: bool = False
) -> tuple[float, float]:
    """toppra's time-optimal timing (rest to rest) of the cubic spline through ``q`` at its
    cumulative joint distance within 100 % of the limits: ``(duration [s], the largest share of
    a limit reached at 1 kHz)``. toppra's own grid and parametrizer, or with ``on_points`` the
    path's points as the grid and constant acceleration between them (the library's choice)."""
    import toppra
    import toppra.algorithm
    import toppra.constraint

    steps = np.linalg.norm(np.diff(q, axis=0), axis=1)
    keep = np.concatenate(([True], steps > 1e-12))
    distance = np.concatenate(([0.0], np.cumsum(steps)))[keep]
    velocity = np.stack((-max_velocity, max_velocity), axis=1)
    acceleration = np.full((q.shape[1], 2), max_acceleration) * [-1.0, 1.0]
    grid = {"gridpoints": distance, "parametrizer": "ParametrizeConstAccel"} if on_points else {}
    instance = toppra.algorithm.TOPPRA(
        [
            toppra.constraint.JointVelocityConstraint(velocity),
            toppra.constraint.JointAccelerationConstraint(acceleration),
        ],
        toppra.SplineInterpolator(distance, q[keep]),
        **grid,
    )
    with warnings.catch_warnings():  # (toppra's spline parametrizer divides by a zero sdot at rest)
        warnings.simplefilter("ignore", RuntimeWarning)
        trajectory = instance.compute_trajectory(0.0, 0.0)
    if trajectory is None:
        return math.nan, math.nan
    times = np.append(np.arange(0.0, trajectory.duration, 1.0 / SAMPLE_RATE), trajectory.duration)
    return float(trajectory.duration), limit_share(
        trajectory(times, 1), trajectory(times, 2), max_velocity, max_acceleration
    )


def limit_share(velocity: np.ndarray, acceleration: np.ndarray, max_velocity, max_acceleration) -> float:
    """The largest |velocity| / its limit or |acceleration| / its limit over samples (k, nv)."""
    return float(
        max(np.max(np.abs(velocity) / max_velocity), np.max(np.abs(acceleration)) / max_acceleration)
    )


# --------------------------------------------------------------------------- one arm


@dataclass
class ArmResult:
    """One arm's figures, per segment in order where a list says so."""

    name: str
    dof: int
    ours: list = field(default_factory=list)  # fraction of each segment
    reference: list = field(default_factory=list)  # TRAC-IK's
    lengths: list = field(default_factory=list)  # [m]
    reasons: dict = field(default_factory=dict)  # how our paths ended: count
    behind: list = field(default_factory=list)  # (index, ours, reference, reason, gap [m], at limits)
    jumps: int = 0
    jump_paths: list = field(default_factory=list)
    deviation: float = 0.0  # [m]
    end_errors: list = field(default_factory=list)  # (index, [m]) over LINE_TOLERANCE
    disagreements: list = field(default_factory=list)  # (index, untimed, timed) different paths
    ratios: list = field(default_factory=list)  # our duration / toppra's (its defaults)
    ratios_on_points: list = field(default_factory=list)  # / toppra's on the path's points
    our_share: float = 0.0  # the largest share of a limit our timed paths reach at 1 kHz
    reference_share: float = 0.0  # toppra's (its defaults)
    timing_failures: list = field(default_factory=list)  # (index, message)
    untimed: list = field(default_factory=list)  # [s] per call
    timed: list = field(default_factory=list)

    @property
    def segments(self) -> int:
        return len(self.ours)

    def as_far(self) -> np.ndarray:
        return np.array(self.ours) >= np.array(self.reference) - AS_FAR_SLACK


def build_solver(case) -> IKSolver:
    with warnings.catch_warnings():  # URDF "unknown attribute" noise
        warnings.simplefilter("ignore")
        solver = IKSolver(load_robot(case.urdf), case.base, case.tips)
    solver.wait_for_kernels()
    return solver


def timed_path(result: ArmResult, solver: IKSolver, segment: Segment, **timing):
    """``cartesian_path`` from the segment's start to its goal, its wall time appended to
    ``result.timed`` with ``timing`` (``max_acceleration``), else to ``result.untimed``."""
    started = time.perf_counter()
    try:
        with warnings.catch_warnings():  # (toppra's division by a zero speed: reported below)
            warnings.simplefilter("ignore", RuntimeWarning)
            path = solver.cartesian_path(segment.goal, seed=segment.q0, **timing)
    except IKNodeError as error:  # (only the timing can refuse a path of a valid start)
        result.timing_failures.append((len(result.ours), str(error)))
        path = None
    (result.timed if timing else result.untimed).append(time.perf_counter() - started)
    if path is not None and timing and not path.duration < ABSURD_DURATION:
        message = f"duration {path.duration:.3g} s for a path of {len(path.q)} points ({path.reason})"
        result.timing_failures.append((len(result.ours), message))
    return path


def measure_segment(result: ArmResult, solver: IKSolver, runner, fk: RobotFK, segment: Segment) -> None:
    index = len(result.ours)
    path = timed_path(result, solver, segment)
    reference = reference_fraction(runner, solver, segment)
    timed = timed_path(result, solver, segment, max_acceleration=MAX_ACCELERATION)
    result.ours.append(path.fraction)
    result.reference.append(reference)
    result.lengths.append(segment.length)
    result.reasons[path.reason] = result.reasons.get(path.reason, 0) + 1
    if path.fraction < reference - AS_FAR_SLACK:
        gap = (reference - path.fraction) * segment.length
        held = at_limits(solver, path.q[-1])
        result.behind.append((index, path.fraction, reference, path.reason, gap, held))
    check = check_path(fk, solver, segment, path.q, path.fraction)
    result.jumps += check.jumps
    if check.jumps:
        result.jump_paths.append(index)
    result.deviation = max(result.deviation, check.deviation)
    if check.end_error > LINE_TOLERANCE:
        result.end_errors.append((index, check.end_error))
    if timed is None:
        return
    if len(timed.q) != len(path.q) or not np.array_equal(timed.q, path.q):
        result.disagreements.append(
            (index, f"{path.fraction:.3f} {path.reason}", f"{timed.fraction:.3f} {timed.reason}")
        )
    if timed.reason != "complete" or len(timed.q) < 2:
        return
    limits = solver.tree.max_velocity, MAX_ACCELERATION
    _, _, velocity, acceleration = timed.sample(SAMPLE_RATE)
    result.our_share = max(result.our_share, limit_share(velocity, acceleration, *limits))
    duration, share = toppra_reference(timed.q, *limits)
    result.ratios.append(timed.duration / duration)
    result.reference_share = max(result.reference_share, share)
    duration, _ = toppra_reference(timed.q, *limits, on_points=True)
    result.ratios_on_points.append(timed.duration / duration)


def run_arm(case, segments: int, seed: int) -> ArmResult:
    """``segments`` measured segments of ``case`` (after ``WARMUP_SEGMENTS`` not counted);
    ValueError when TRAC-IK cannot take the chain."""
    solver = build_solver(case)
    runner = trac_ik_runner(case, solver)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fk = RobotFK(load_robot(case.urdf), solver)  # (a model of its own)
    rng = harness_rng(seed, case.name)
    for _ in range(WARMUP_SEGMENTS):
        measure_segment(ArmResult(case.name, 0), solver, runner, fk, random_segment(rng, solver))
    result = ArmResult(case.name, len(solver.joint_names))
    for _ in range(segments):
        measure_segment(result, solver, runner, fk, random_segment(rng, solver))
    return result


def compute_case(seed: int) -> tuple[np.ndarray, int] | None:
    """[s] ``COMPUTE_CASE_RUNS`` calls on the fixed 30 cm line of arm7 (the first of the seeded
    draws whose path is complete) and the path's number of points."""
    solver = build_solver(next(case for case in BUNDLED if case.name == COMPUTE_CASE_ARM))
    rng = harness_rng(seed, "compute_case")
    for _ in range(100):
        segment = random_segment(rng, solver, COMPUTE_CASE_LENGTH, turn=False)
        path = solver.cartesian_path(segment.goal, seed=segment.q0)
        if path.reason == "complete":
            break
    else:
        return None
    times = []
    for _ in range(COMPUTE_CASE_RUNS):
        started = time.perf_counter()
        solver.cartesian_path(segment.goal, seed=segment.q0)
        times.append(time.perf_counter() - started)
    return np.array(times), len(path.q)


# --------------------------------------------------------------------------- report


def milliseconds(times) -> str:
    times = np.array(times) * 1e3
    return f"{np.median(times):.1f} ({np.percentile(times, 90):.1f})"


def arm_report(result: ArmResult) -> None:
    ours, reference = np.array(result.ours), np.array(result.reference)
    as_far = int(np.sum(result.as_far()))
    far_behind = [entry for entry in result.behind if entry[4] > STEP]
    reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(result.reasons.items()))
    print(f"\n{result.name} ({result.dof} DOF), {result.segments} segments")
    print(f"  fraction, mean: ours {ours.mean():.3f}, TRAC-IK at 1 mm {reference.mean():.3f}")
    print(f"  complete: ours {result.reasons.get('complete', 0)}, TRAC-IK {int(np.sum(reference >= 1.0))}")
    print(
        f"  ours at least as far: {as_far}/{result.segments} ({100.0 * as_far / result.segments:.1f} %); "
        f"behind by more than one step ({STEP * 1e3:g} mm): {len(far_behind)}"
    )
    print(f"  how ours ended: {reasons}")
    for index, fraction, reference, reason, gap, held in sorted(result.behind, key=lambda e: -e[4])[:8]:
        print(
            f"    behind: segment {index}: ours {fraction:.3f} ({reason}), TRAC-IK {reference:.3f}: "
            f"{gap * 1e3:.1f} mm" + (f"; at a limit: {', '.join(held)}" if held else "")
        )
    print(f"  jumps: {result.jumps}" + (f" (segments {result.jump_paths[:10]})" if result.jumps else ""))
    print(
        "  worst distance from the line (points and midpoints, Robot.forward): "
        f"{result.deviation * 1e3:.3f} mm"
    )
    if result.end_errors:
        print(f"  the last point off the line's point at its fraction by > 1 mm: {result.end_errors[:10]}")
    for index, untimed, timed in result.disagreements[:5]:
        print(f"  the same segment twice, different paths: segment {index}: {untimed}, then {timed}")
    if len(result.disagreements) > 5:
        print(f"  the same segment twice, different paths: {len(result.disagreements)} segments in all")
    if result.ratios:
        ratios, on_points = np.array(result.ratios), np.array(result.ratios_on_points)
        print(
            f"  duration / toppra's, {len(ratios)} complete paths: median {np.median(ratios):.3f}, "
            f"max {ratios.max():.3f} (toppra on the path's points: median {np.median(on_points):.3f}, "
            f"max {on_points.max():.3f})"
        )
        print(
            f"  largest share of a limit at 1 kHz: ours {result.our_share:.3f}, toppra's "
            f"{result.reference_share:.3f}"
        )
    for index, message in result.timing_failures[:5]:
        print(f"  timing failed on segment {index}: {message}")
    if len(result.timing_failures) > 5:
        print(f"  timing failed on {len(result.timing_failures)} segments in all")
    print(
        f"  compute per path [ms], median (p90): untimed {milliseconds(result.untimed)}, "
        f"timed {milliseconds(result.timed)}"
    )


def summary(results: list[ArmResult], compute) -> None:
    print(
        "\n| arm (DOF) | ours as far as TRAC-IK (behind > 5 mm) | complete, ours / TRAC-IK | jumps "
        "| worst off the line | duration ÷ toppra, median / max | compute untimed / timed, median (p90) |"
    )
    print("|---|---|---|---|---|---|---|")
    for result in results:
        reference = np.array(result.reference)
        far_behind = sum(entry[4] > STEP for entry in result.behind)
        ratios = np.array(result.ratios) if result.ratios else np.array([math.nan])
        print(
            f"| {result.name} ({result.dof}) | {100.0 * result.as_far().mean():.1f} % ({far_behind}) "
            f"| {result.reasons.get('complete', 0)} / {int(np.sum(reference >= 1.0))} "
            f"| {result.jumps} | {result.deviation * 1e3:.2f} mm "
            f"| {np.median(ratios):.3f} / {ratios.max():.3f} "
            f"| {milliseconds(result.untimed)} / {milliseconds(result.timed)} ms |"
        )
    print("\ngoals:")
    as_far = min(result.as_far().mean() for result in results)
    verdict = "met" if as_far >= GOAL_AS_FAR else "NOT met"
    print(f"  ours at least as far on >= {GOAL_AS_FAR:.0%} of segments: {verdict} (least {as_far:.1%})")
    within_step = min(
        1.0 - sum(entry[4] > STEP for entry in result.behind) / result.segments for result in results
    )
    print(f"    (ours within one step, {STEP * 1e3:g} mm, of TRAC-IK or further: least {within_step:.1%})")
    jumps = sum(result.jumps for result in results)
    print("  0 jumps: " + ("met" if jumps == 0 else f"NOT met ({jumps})"))
    for label, attribute in (
        ("toppra's defaults", "ratios"),
        ("toppra on the path's points", "ratios_on_points"),
    ):
        ratios = [max(getattr(result, attribute)) for result in results if getattr(result, attribute)]
        if ratios:
            verdict = "met" if max(ratios) <= GOAL_DURATION_RATIO else "NOT met"
            print(f"  duration <= {GOAL_DURATION_RATIO}x {label}: {verdict} (max {max(ratios):.3f})")
    if compute is not None:
        times, points = compute
        median = float(np.median(times))
        verdict = "met" if median <= GOAL_COMPUTE else "NOT met"
        print(
            f"  compute <= {GOAL_COMPUTE * 1e3:g} ms for {COMPUTE_CASE_LENGTH * 100:g} cm at 5 mm on "
            f"{COMPUTE_CASE_ARM}: {verdict} (median {median * 1e3:.2f} ms, least {times.min() * 1e3:.2f} ms "
            f"of {len(times)} calls; {points} points)"
        )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--segments", type=int, default=200)
    parser.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    from importlib.metadata import version

    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"machine: {cpu_model()}, {os.cpu_count()} logical CPUs ({affinity} usable), "
        f"{platform.system()} {platform.release()}"
    )
    print("load average at the start: " + ", ".join(f"{value:.2f}" for value in os.getloadavg()))
    print(
        f"versions: Python {platform.python_version()}, numpy {np.__version__}, "
        f"pytracik {version('pytracik')}, toppra {version('toppra')}"
    )
    print(
        f"protocol: {args.segments} segments per arm (seed {args.seed}), {LENGTHS[0] * 100:g}-"
        f"{LENGTHS[1] * 100:g} cm, up to {math.degrees(MAX_TURN):g} deg, from starts in the middle "
        f"{START_SHARE:.0%} of the joint ranges; TRAC-IK at {REFERENCE_STEP * 1e3:g} mm, ended by a "
        f"joint change over {REFERENCE_JOINT_STEP} rad"
    )
    reason = peer_adapters.TracIKPeer.unavailable_reason()
    if reason is not None:
        print(f"TRAC-IK unavailable: {reason}")
        return 1
    cases = {case.name: case for case in BUNDLED}
    results = []
    for name in args.arms:
        try:
            result = run_arm(cases[name], args.segments, args.seed)
        except ValueError as error:  # a chain TRAC-IK cannot take (peers.py's refusal)
            print(f"\n{name}: skipped: TRAC-IK cannot take its chain ({error})")
            continue
        arm_report(result)
        results.append(result)
    compute = compute_case(args.seed) if COMPUTE_CASE_ARM in args.arms else None
    if results:
        summary(results, compute)
    print("load average at the end: " + ", ".join(f"{value:.2f}" for value in os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
