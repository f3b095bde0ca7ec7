"""Collision-aware IK benchmark (issue 18): ik_node with and without collision checking beside
TRAC-IK followed by a collision check, on collision-free targets.

Usage: python benchmark/bench_collision.py [--robots NAME ...] [--scenes NAME ...] [--samples N]
           [--timeout S] [--tolerance TOL] [--margin M] [--seed N] [--no-peers]

Protocol, per robot chain (and per obstacle scene): configurations drawn uniformly within ik_node's
limits, kept only when the reference checker (benchmark/collision_reference.py: pinocchio + coal
on the URDF's real collision meshes, SRDF <disable_collisions> pairs left out, obstacles as coal
shapes) finds them collision-free; their tip poses by ik_node's FK are the targets. Every solve is
seeded at the rest posture (mid-limits), with a 5 ms budget and 1e-5 tolerance (m and rad). A
solve counts as solved when the solver says so and the harness agrees (pinocchio FK and limits,
bench_ik's check); an answer is "in collision" when the reference checker finds contact
(distance <= 0; no margin). Joints the chain does not move stay at 0 clipped into their limits.

Rows:
  (a) ik_node plain: no collision checking. solved %, % of the solved answers in collision.
  (b) ik_node with self_collision=True (and the scene's obstacles): solved collision-free %,
      answers claimed solved but in collision (goal 0), mean time and its ratio to (a) (goal <= 2).
  (c) TRAC-IK then the reference check, restarting from uniform random seeds while the same
      budget lasts (how CPU solvers are used with a collision checker, e.g. MoveIt's IK callback):
      solved collision-free %, mean time (the checks included). TRAC-IK's timeout is fixed when it
      is built, so the first call gets the whole budget and each retry the largest of TRAC-IK
      instances with budget / 2^k (k = 0..4) that fits in what is left.

Robots (example-robot-data, each with an SRDF; chosen because the arm can reach its own body):
  panda            panda_link0 -> panda_hand (fingers below the tip are checked too)
  talos_left_arm   torso_2_link -> gripper_left_base_link (7 DOF; torso, head, legs fixed)
  talos_right_arm  torso_2_link -> gripper_right_base_link
  baxter_left_arm  base -> left_gripper (the other arm, head and pedestal fixed)
Scenes (Panda, obstacles in panda_link0's frame): table (a top at z = -1 mm under the whole
reach), shelf (the table plus a four-board shelf 0.72 m in front of the robot, 1 m wide and high).
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import ik_node
from ik_node import IKSolver, Obstacle, load_robot
from ik_node.description.catalogue import RobotCase

BENCHMARK_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARK_DIR))

import bench_ik  # noqa: E402  (benchmark/ is not a package)
import peers as peer_adapters  # noqa: E402
from collision_reference import ReferenceCollision, example_robot_data_share  # noqa: E402
from machine import cpu_model  # noqa: E402

WARMUP_SOLVES = 5  # untimed solves per solver before the timed ones
MAX_DRAWS_PER_TARGET = 200  # give up drawing collision-free configurations after this many per target
TRAC_IK_LADDER = 5  # TRAC-IK instances with budget / 2^k, k = 0 .. TRAC_IK_LADDER - 1
GOAL_TIME_RATIO = 2.0  # (b)'s mean time at most this times (a)'s
NOT_AVAILABLE = "n/a (IKSolver has no self_collision option)"


# --------------------------------------------------------------------------- robots and scenes


@dataclass(frozen=True)
class CollisionCase:
    """A chain of an example-robot-data robot with its SRDF (paths relative to its robots/)."""

    name: str
    urdf: str
    srdf: str
    base: str
    tip: str
    scenes: tuple[str, ...] = ("none",)


CASES = (
    CollisionCase(
        "panda",
        "panda_description/urdf/panda.urdf",
        "panda_description/srdf/panda.srdf",
        "panda_link0",
        "panda_hand",
        ("none", "table", "shelf"),
    ),
    CollisionCase(
        "talos_left_arm",
        "talos_data/robots/talos_reduced.urdf",
        "talos_data/srdf/talos.srdf",
        "torso_2_link",
        "gripper_left_base_link",
    ),
    CollisionCase(
        "talos_right_arm",
        "talos_data/robots/talos_reduced.urdf",
        "talos_data/srdf/talos.srdf",
        "torso_2_link",
        "gripper_right_base_link",
    ),
    CollisionCase(
        "baxter_left_arm",
        "baxter_description/urdf/baxter.urdf",
        "baxter_description/srdf/baxter_manipulation.srdf",
        "base",
        "left_gripper",
    ),
)
DEFAULT_ROBOTS = ("panda", "talos_left_arm", "baxter_left_arm")


def _box(size, centre, name) -> Obstacle:
    pose = np.eye(4)
    pose[:3, 3] = centre
    return Obstacle.box(size, pose, name=name)


def scene(name: str) -> list[Obstacle]:
    """The obstacles of a scene, in the Panda's base frame (panda_link0; z up, x forward) [m]."""
    if name == "none":
        return []
    thickness = 0.05
    table = _box((1.8, 1.8, thickness), (0.2, 0.0, -0.001 - thickness / 2), "table")  # top at z = -1 mm
    if name == "table":
        return [table]
    if name == "shelf":
        # boards 0.3 m deep, 1 m wide, their front edge 0.72 m ahead of the base: just clear of the
        # hand at the rest posture (x = 0.58 m, z = 0.65 m), the compartments within reach
        depth, width, height, board, front = 0.3, 1.0, 1.0, 0.02, 0.72
        x = front + depth / 2
        boards = [
            _box((depth, width, board), (x, 0.0, level), f"shelf_board_{index}")
            for index, level in enumerate((0.15, 0.45, 0.75, height))
        ]
        sides = [
            _box((depth, board, height), (x, side * width / 2, height / 2), f"shelf_side_{index}")
            for index, side in enumerate((-1, 1))
        ]
        back = _box((board, width, height), (front + depth, 0.0, height / 2), "shelf_back")
        return [table, *boards, *sides, back]
    raise ValueError(f"unknown scene {name!r}; choose from ['none', 'table', 'shelf']")


# --------------------------------------------------------------------------- measuring


@dataclass
class Row:
    """Outcomes of one solver over the targets of one robot and scene."""

    times: list = field(default_factory=list)  # s per call, failures included
    solved: int = 0  # claimed and confirmed by the FK/limits check
    colliding: int = 0  # ... of which in collision by the reference
    failures: dict = field(default_factory=dict)  # {reason: count} of the unsolved (ik_node)
    note: str = ""  # instead of figures when the row could not run

    def add(self, elapsed: float, solved: bool, colliding: bool, reason: str = "") -> None:
        self.times.append(elapsed)
        self.solved += solved
        self.colliding += solved and colliding
        if not solved and reason:
            self.failures[reason] = self.failures.get(reason, 0) + 1

    @property
    def count(self) -> int:
        return len(self.times)

    @property
    def free(self) -> int:
        return self.solved - self.colliding

    def mean(self) -> float:
        return float(np.mean(self.times)) if self.times else float("nan")

    def median(self) -> float:
        return float(np.median(self.times)) if self.times else float("nan")


class TracIKWithCheck:
    """TRAC-IK, each answer checked by the reference; restarts from uniform random seeds (within
    ik_node's limits) until a collision-free answer or the end of the budget."""

    name = "trac_ik+check"

    def __init__(self, case: CollisionCase, urdf: Path, solver: IKSolver, reference, timeout, tolerance):
        xml = urdf.read_text()
        eps = tolerance * bench_ik.PEER_EPS_SCALE["implied"]["trac_ik"]
        self.timeout = timeout
        self.ladder = []  # (timeout [s], PeerRunner), longest first
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k in range(TRAC_IK_LADDER):
                budget = timeout / 2**k
                peer = peer_adapters.TracIKPeer(xml, case.base, case.tip, budget, eps)
                runner = bench_ik.PeerRunner(peer, solver.joint_names)
                limits = [dict(zip(solver.joint_names, bound)) for bound in (solver.lower, solver.upper)]
                peer.set_limits(*([bound[name] for name in peer.joint_names] for bound in limits))
                self.ladder.append((budget, runner))
        self.reference = reference
        self.lower, self.upper = solver.lower, solver.upper
        self.rng = np.random.default_rng(0)
        self.attempts = 0  # TRAC-IK calls, all solves
        self.rejected = 0  # TRAC-IK answers refused by the collision check

    def solve(self, target: np.ndarray, seed: np.ndarray) -> np.ndarray | None:
        deadline = time.perf_counter() + self.timeout
        current = seed
        fitting = [self.ladder[0][1]]  # the first call gets the whole budget
        while True:
            if not fitting:
                return None
            self.attempts += 1
            q, found = fitting[0].solve([target], current)
            if found:
                if not self.reference.in_collision(q, first_only=True)[0]:
                    return q
                self.rejected += 1
            current = self.rng.uniform(self.lower, self.upper)
            remaining = deadline - time.perf_counter()
            fitting = [runner for budget, runner in self.ladder if budget <= remaining]


def collision_targets(rng, solver: IKSolver, reference, count: int) -> tuple[list[np.ndarray], int]:
    """``count`` configurations uniform within the limits that the reference finds collision-free
    (self and obstacles), and how many were drawn to find them."""
    kept, drawn = [], 0
    while len(kept) < count:
        if drawn >= MAX_DRAWS_PER_TARGET * count:
            raise RuntimeError(f"only {len(kept)} collision-free configurations in {drawn} draws")
        q = rng.uniform(solver.lower, solver.upper)
        drawn += 1
        if not reference.in_collision(q, first_only=True)[0]:
            kept.append(q)
    return kept, drawn


@dataclass
class CaseResult:
    case: CollisionCase
    scene: str
    dof: int
    rows: dict
    kept_fraction: float  # collision-free share of the uniform draws
    notes: list


def build_collision_solver(robot, case: CollisionCase, srdf: Path, obstacles, margin, tolerance):
    """ik_node's IKSolver with collision checking, or the reason it cannot be built (a string).

    An IKSolver without ``set_obstacles`` counts as having no collision checking (the options
    were accepted before the checking was written)."""
    if not hasattr(IKSolver, "set_obstacles"):
        return NOT_AVAILABLE
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return IKSolver(
                robot,
                case.base,
                case.tip,
                position_tolerance=tolerance,
                orientation_tolerance=tolerance,
                self_collision=True,
                collision_margin=margin,
                srdf=str(srdf),
                obstacles=list(obstacles),
            )
    except (TypeError, ik_node.IKNodeError) as error:
        if "self_collision" in str(error) or "unknown solver option" in str(error):
            return NOT_AVAILABLE
        return f"n/a ({type(error).__name__}: {error})"


def run_case(case: CollisionCase, scene_name: str, arguments) -> CaseResult:
    share = example_robot_data_share()
    robots = share / "example-robot-data" / "robots"
    urdf, srdf = robots / case.urdf, robots / case.srdf
    obstacles = scene(scene_name)
    tolerance, timeout = arguments.tolerance, arguments.timeout
    with warnings.catch_warnings():  # URDF "unknown attribute" noise
        warnings.simplefilter("ignore")
        robot = load_robot(urdf, package_paths=[share])
        plain = IKSolver(
            robot, case.base, case.tip, position_tolerance=tolerance, orientation_tolerance=tolerance
        )
    names = list(plain.joint_names)
    reference = ReferenceCollision(urdf, share, srdf, obstacles, base_link=case.base, joint_names=names)
    notes = []
    rest_collides, rest_pairs = reference.in_collision(plain.rest_posture)
    if rest_collides:
        notes.append(f"{case.name}/{scene_name}: the rest posture (the seed) collides: {rest_pairs[:3]}")

    fk = bench_ik.ReferenceFK(RobotCase(case.name, urdf, case.base, (case.tip,)), names)
    check = bench_ik.Checker(fk, plain.lower, plain.upper, tolerance)
    rng = bench_ik.harness_rng(arguments.seed, f"{case.name}/{scene_name}")
    configurations, drawn = collision_targets(rng, plain, reference, arguments.samples + WARMUP_SOLVES)
    targets = [plain.tree.forward(q, case.tip) for q in configurations]
    seed = plain.rest_posture

    solvers = {"ik_node plain": plain}
    collision_solver = build_collision_solver(robot, case, srdf, obstacles, arguments.margin, tolerance)
    rows = {"ik_node plain": Row(), "ik_node collision": Row(), "trac_ik+check": Row()}
    if isinstance(collision_solver, str):
        rows["ik_node collision"].note = collision_solver
    else:
        solvers["ik_node collision"] = collision_solver
    peer = None
    if arguments.no_peers:
        rows["trac_ik+check"].note = "n/a (--no-peers)"
    elif (reason := peer_adapters.TracIKPeer.unavailable_reason()) is not None:
        rows["trac_ik+check"].note = f"n/a ({reason})"
    else:
        peer = TracIKWithCheck(case, urdf, plain, reference, timeout, tolerance)

    def solve_all(target, record: bool) -> None:
        for label, solver in solvers.items():
            start = time.perf_counter()
            result = solver.solve(target, seed, timeout=timeout)
            elapsed = time.perf_counter() - start
            if record:
                solved = bool(result.success) and check(result.q, [target])[0]
                colliding = solved and reference.in_collision(result.q, first_only=True)[0]
                rows[label].add(elapsed, solved, colliding, result.reason)
        if peer is not None:
            start = time.perf_counter()
            q = peer.solve(target, seed)
            elapsed = time.perf_counter() - start
            if record:
                solved = q is not None and check(q, [target])[0]
                colliding = solved and reference.in_collision(q, first_only=True)[0]
                rows["trac_ik+check"].add(elapsed, solved, colliding)

    for target in targets[:WARMUP_SOLVES]:
        solve_all(target, record=False)
    if peer is not None:
        peer.attempts = peer.rejected = 0
    for target in targets[WARMUP_SOLVES:]:
        solve_all(target, record=True)
    if peer is not None and arguments.samples:
        notes.append(
            f"{case.name}/{scene_name}: TRAC-IK {peer.attempts / arguments.samples:.2f} calls per solve, "
            f"{peer.rejected} answers rejected by the collision check"
        )
    notes.append(
        f"{case.name}/{scene_name}: {reference.pair_count} pairs checked by the reference "
        f"({len(obstacles)} obstacles); {len(configurations) / drawn * 100:.0f} % of uniform "
        "configurations collision-free"
    )
    return CaseResult(case, scene_name, len(names), rows, len(configurations) / drawn, notes)


# --------------------------------------------------------------------------- reporting


def header(arguments, started: datetime.datetime) -> str:
    from importlib.metadata import PackageNotFoundError, version

    import coal
    import pinocchio

    versions = [f"Python {platform.python_version()}", f"numpy {np.__version__}"]
    versions += [f"pinocchio {pinocchio.__version__}", f"coal {coal.__version__}"]
    try:
        versions.append(f"pytracik {version('pytracik')}")
    except PackageNotFoundError:
        pass
    return "\n".join(
        [
            f"date: {started.isoformat(timespec='seconds')}",
            f"machine: {cpu_model()}, {platform.system()} {platform.release()}",
            "versions: " + ", ".join(versions),
            f"ik_node: {bench_ik.IK_NODE_DIR} (sources sha256 {bench_ik.source_digest()})",
            f"protocol: {arguments.samples} collision-free random in-limit configurations per robot and "
            f"scene (seed {arguments.seed}), seeded at the rest posture (mid-limits), timeout "
            f"{arguments.timeout * 1e3:g} ms, tolerance {arguments.tolerance:g} m / rad, "
            f"ik_node collision_margin {arguments.margin:g} m",
            "collision check: pinocchio + coal on the URDF collision meshes, SRDF pairs disabled, "
            "contact = distance <= 0",
        ]
    )


TABLE_HEADER = (
    "| robot | scene | DOF | solver | solved % | solved in collision % | solved collision-free % "
    "| mean ms | median ms | mean / plain |"
)


def table_rows(result: CaseResult) -> list[str]:
    lines = []
    plain_mean = result.rows["ik_node plain"].mean()
    for label, row in result.rows.items():
        start = f"| {result.case.name} | {result.scene} | {result.dof} | {label} |"
        if row.note:
            lines.append(f"{start} {row.note} | | | | | |")
            continue
        solved = 100.0 * row.solved / row.count
        colliding = 100.0 * row.colliding / row.solved if row.solved else float("nan")
        free = 100.0 * row.free / row.count
        ratio = row.mean() / plain_mean
        lines.append(
            f"{start} {solved:.1f} | {colliding:.1f} ({row.colliding}) | {free:.1f} | "
            f"{row.mean() * 1e3:.3f} | {row.median() * 1e3:.3f} | {ratio:.2f} |"
        )
    return lines


def goal_lines(results: list[CaseResult]) -> list[str]:
    lines = []
    measured = [r for r in results if not r.rows["ik_node collision"].note]
    if not measured:
        return ["ik_node with collision checking: " + NOT_AVAILABLE]
    misses = [
        f"{r.case.name}/{r.scene} {r.rows['ik_node collision'].colliding}"
        for r in measured
        if r.rows["ik_node collision"].colliding
    ]
    lines.append(
        "collision-checked answers in collision = 0: "
        + ("met" if not misses else "NOT met: " + ", ".join(misses))
    )
    ratios = [(r, r.rows["ik_node collision"].mean() / r.rows["ik_node plain"].mean()) for r in measured]
    misses = [f"{r.case.name}/{r.scene} {ratio:.2f}" for r, ratio in ratios if ratio > GOAL_TIME_RATIO]
    lines.append(
        f"mean time <= {GOAL_TIME_RATIO:g} x plain: "
        + ("met" if not misses else "NOT met: " + ", ".join(misses))
        + f" (ratios {min(x for _, x in ratios):.2f}-{max(x for _, x in ratios):.2f})"
    )
    misses = []
    for r in measured:
        ours, theirs = r.rows["ik_node collision"], r.rows["trac_ik+check"]
        if not theirs.note and ours.free < theirs.free:
            misses.append(f"{r.case.name}/{r.scene} {ours.free} vs {theirs.free}")
    lines.append(
        "solved collision-free never below TRAC-IK + check: "
        + ("met" if not misses else "NOT met: " + ", ".join(misses))
    )
    return lines


def main() -> None:
    known = {case.name: case for case in CASES}
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--robots",
        nargs="+",
        metavar="NAME",
        default=list(DEFAULT_ROBOTS),
        help=f"subset of {list(known)} (default: {' '.join(DEFAULT_ROBOTS)})",
    )
    parser.add_argument(
        "--scenes",
        nargs="+",
        metavar="NAME",
        default=None,
        help="obstacle scenes of the robots that have them: none table shelf (default: all)",
    )
    parser.add_argument("--samples", type=int, default=500, help="targets per robot and scene (500)")
    parser.add_argument("--timeout", type=float, default=0.005, help="budget per solve, s (0.005)")
    parser.add_argument("--tolerance", type=float, default=1e-5, help="m and rad (1e-5)")
    parser.add_argument("--margin", type=float, default=0.01, help="ik_node's collision_margin, m (0.01)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the targets (0)")
    parser.add_argument("--no-peers", action="store_true", help="ik_node only")
    arguments = parser.parse_args()
    unknown = [name for name in arguments.robots if name not in known]
    if unknown:
        parser.error(f"unknown robot(s) {unknown}; choose from {list(known)}")
    if arguments.samples < 1:
        parser.error("--samples must be at least 1")
    if example_robot_data_share() is None:
        sys.exit("example-robot-data is not installed: pip install example-robot-data")

    started = datetime.datetime.now().astimezone()
    print(header(arguments, started))
    print()
    print(TABLE_HEADER)
    print("|" + "---|" * TABLE_HEADER.count(" | ") + "---|")
    results = []
    for name in arguments.robots:
        case = known[name]
        scenes = [s for s in case.scenes if arguments.scenes is None or s in arguments.scenes]
        for scene_name in scenes:
            result = run_case(case, scene_name, arguments)
            results.append(result)
            for line in table_rows(result):
                print(line, flush=True)
    print()
    print(
        "solved: claimed and confirmed (pinocchio FK within tolerance, joints within limits); solved in "
        "collision: share (count) of the solved answers the reference finds in contact; solved "
        "collision-free: of all targets; times per call, failures included"
    )
    print()
    print("Goals")
    for line in goal_lines(results):
        print(f"  {line}")
    notes = [note for result in results for note in result.notes]
    for result in results:
        for label in ("ik_node plain", "ik_node collision"):
            failures = result.rows[label].failures
            if failures:
                counts = ", ".join(f"{reason} {count}" for reason, count in sorted(failures.items()))
                notes.append(f"{result.case.name}/{result.scene}: {label} failures by reason: {counts}")
    if notes:
        print()
        print("Notes")
        for note in notes:
            print(f"  - {note}")


if __name__ == "__main__":
    main()
