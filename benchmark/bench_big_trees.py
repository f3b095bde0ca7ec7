"""Load time and peak memory of ik_node on big generated URDFs (chains of thousands of joints, wide trees).

Usage: python benchmark/bench_big_trees.py [--cases NAME ...] [--memory-limit GIB] [--timeout S]
           [--solve-timeout S] [--tracemalloc] [--ik-node-path DIR] [--json FILE]

Cases (``--cases``, default all, in this order): ``chain_500``, ``chain_1000``, ``chain_3000``,
``chain_10000`` (serial chains of revolute joints) and ``tree_1000x10`` (1,000 branches of 10 joints
each from one root link). Every joint is revolute, limits [-pi, pi], about a random principal axis,
its origin small and random (xyz uniform in [-ORIGIN_OFFSET, ORIGIN_OFFSET] m per axis, rpy uniform
in [-ORIGIN_TILT, ORIGIN_TILT] rad), drawn from ``default_rng(GENERATOR_SEED)``. The solver serves
one tip: the chain's last link from its first, or the tree's last branch's end from the root.

Each case runs in a fresh process (this file with ``--child``) whose address space is capped with
``resource.setrlimit(RLIMIT_AS, (limit, limit))`` (``--memory-limit``, default 4 GiB) before it
imports anything big, and which the parent kills after ``--timeout`` s (default 300): an allocation
past the cap is reported as "over memory limit" (MemoryError, or the child killed by a signal
after a phase started), the wall clock as "timeout", instead of the machine swapping or the OOM
killer choosing a victim. Cases run one after the other, never two at once. The child reports,
phase by phase (one JSON line each, so a child that dies still leaves the phases it finished):

* ``import``: ``import ik_node``;
* ``warm-up``: ``load_robot`` + ``IKSolver`` + one ``solve`` of a generated 3-joint chain, which
  loads the compiled kernels from numba's cache (``NUMBA_CACHE_DIR``) or compiles them (~15 s on
  an empty cache), so that the phases below are measured warm; its time says which happened;
* ``load``: ``robot = load_robot(urdf_string)``;
* ``build``: ``IKSolver(robot, base, [tip])`` with the default options (its seed table sized
  by ``options.default_seed_table_size``: 64 entries for a 10,000-joint chain);
* ``solve``: one ``solve`` from the all-zero seed, with ``--solve-timeout`` (default 1 s), to the
  tip pose of a configuration drawn uniformly in [-TARGET_SPREAD, TARGET_SPREAD] rad per joint;
  the returned configuration is checked by this file's own FK of the generated joints (mapped by
  name), not by ik_node's.

After each phase: its wall time, the peak resident set size so far (``ru_maxrss`` of
``getrusage(RUSAGE_SELF)``, which never decreases), the current RSS (``VmRSS``), the peak address
space (``VmPeak``) and, with ``--tracemalloc``, the peak of traced Python/numpy allocations during
the phase (those still alive from earlier phases included; tracemalloc slows everything, so it is
off by default). The tables give times in s (solve in ms) and memory in MiB. The cap is on the
address space, which runs ahead of the RSS (allocator arenas, thread stacks, numba's and numpy's
reservations): a child can be refused at 4 GiB of address space with about 3 GiB resident.

``--ik-node-path DIR`` puts DIR first on the child's PYTHONPATH, to measure another copy of ik_node
(e.g. ``git archive HEAD ik_node | tar -x -C /tmp/head`` for the committed one).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

GIB = 1024**3
MIB = 1024**2
ORIGIN_OFFSET = 0.05  # m: largest |x|, |y|, |z| of a joint origin
ORIGIN_TILT = 0.3  # rad: largest |roll|, |pitch|, |yaw| of a joint origin
TARGET_SPREAD = 0.05  # rad: the target configuration's joints are uniform in [-this, this]
GENERATOR_SEED = 0
POSITION_TOLERANCE = ORIENTATION_TOLERANCE = 1e-5  # m, rad: ik_node's defaults, checked here too
MEMORY_ERROR_EXIT = 3  # the child's exit status after a MemoryError

#: name -> (kind, size): chains of ``size`` joints, trees of ``size`` = (branches, joints per branch)
CASES = {
    "chain_500": ("chain", 500),
    "chain_1000": ("chain", 1000),
    "chain_3000": ("chain", 3000),
    "chain_10000": ("chain", 10000),
    "tree_1000x10": ("tree", (1000, 10)),
}


# --------------------------------------------------------------------------- generated robots


class GeneratedRobot:
    """A URDF string of revolute joints and, for the served path, what an FK needs.

    ``path``: (joint name, xyz, rpy, axis) of every joint from ``base`` to ``tip``.
    """

    def __init__(self, name: str, kind: str, size, seed: int = GENERATOR_SEED):
        rng = np.random.default_rng(seed)
        lines = ['<?xml version="1.0"?>', f'<robot name="{name}">']
        self.path = []
        if kind == "chain":
            self.base, links = "link_0", [f"link_{i}" for i in range(size + 1)]
            lines.append(f'<link name="{links[0]}"/>')
            for i in range(1, size + 1):
                self._joint(lines, rng, f"joint_{i}", links[i - 1], links[i], on_path=True)
            self.tip = links[-1]
        elif kind == "tree":
            branches, depth = size
            self.base = "root"
            lines.append('<link name="root"/>')
            for branch in range(branches):
                parent = "root"
                for k in range(1, depth + 1):
                    child = f"branch_{branch}_link_{k}"
                    on_path = branch == branches - 1
                    self._joint(lines, rng, f"branch_{branch}_joint_{k}", parent, child, on_path)
                    parent = child
            self.tip = parent  # the last branch's end
        else:
            raise ValueError(f"unknown kind {kind!r}: chain or tree")
        lines.append("</robot>")
        self.urdf = "\n".join(lines)
        self.joints = size if kind == "chain" else size[0] * size[1]

    def _joint(self, lines, rng, name, parent, child, on_path) -> None:
        xyz = rng.uniform(-ORIGIN_OFFSET, ORIGIN_OFFSET, 3)
        rpy = rng.uniform(-ORIGIN_TILT, ORIGIN_TILT, 3)
        axis = np.eye(3)[rng.integers(3)]
        lines.append(f'<link name="{child}"/>')
        xyz_text, rpy_text = " ".join(map(_exact, xyz)), " ".join(map(_exact, rpy))
        lines.append(
            f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz_text}" rpy="{rpy_text}"/><axis xyz="{" ".join(map(_exact, axis))}"/>'
            f'<limit lower="{_exact(-np.pi)}" upper="{_exact(np.pi)}" effort="1" velocity="1"/></joint>'
        )
        if on_path:
            self.path.append((name, xyz, rpy, axis))

    def forward(self, q_by_name: dict[str, float]) -> np.ndarray:
        """T_base_tip (4x4): URDF origin (R = Rz(yaw) Ry(pitch) Rx(roll)) then the joint rotation."""
        T = np.eye(4)
        for name, xyz, rpy, axis in self.path:
            origin = np.eye(4)
            origin[:3, :3] = _rotation_z(rpy[2]) @ _rotation_y(rpy[1]) @ _rotation_x(rpy[0])
            origin[:3, 3] = xyz
            joint = np.eye(4)
            joint[:3, :3] = _axis_angle(axis, q_by_name[name])
            T = T @ origin @ joint
        return T


def _exact(value: float) -> str:
    """The shortest decimal that reads back as the same double."""
    return repr(float(value))


def _rotation_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rotation_y(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _rotation_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _axis_angle(axis, angle):
    """Rodrigues: R = I + sin(a) K + (1 - cos(a)) K^2 for a unit axis."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _rotation_angle(R: np.ndarray) -> float:
    sine = 0.5 * np.linalg.norm((R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]))
    return float(np.arctan2(sine, 0.5 * (np.trace(R) - 1.0)))


# --------------------------------------------------------------------------- the child


def _status_mib(field: str) -> float:
    """A ``/proc/self/status`` size [MiB]: ``VmRSS`` (resident now), ``VmPeak`` (peak address space)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _rss_mib() -> float:
    return _status_mib("VmRSS")


def child(spec: dict) -> None:
    """One case in this process: cap the address space, then the phases (JSON lines on stdout)."""
    limit = int(spec["memory_limit"])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    use_tracemalloc = spec["tracemalloc"]
    if use_tracemalloc:
        import tracemalloc

    def emit(record: dict) -> None:
        print(json.dumps(record), flush=True)

    def phase(name: str, action):
        emit({"started": name})
        if use_tracemalloc:
            tracemalloc.start() if not tracemalloc.is_tracing() else tracemalloc.reset_peak()
        start = time.perf_counter()
        try:
            value = action()
        except MemoryError:
            emit({"phase": name, "error": "over memory limit (MemoryError)"})
            sys.stdout.flush()
            os._exit(MEMORY_ERROR_EXIT)
        elapsed = time.perf_counter() - start
        record = {
            "phase": name,
            "seconds": elapsed,
            "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # KiB on Linux
            "rss_mib": _rss_mib(),
            "vmpeak_mib": _status_mib("VmPeak"),  # what RLIMIT_AS caps
        }
        if use_tracemalloc:
            record["tracemalloc_peak_mib"] = tracemalloc.get_traced_memory()[1] / MIB
        emit(record)
        return value

    robot = GeneratedRobot(spec["name"], spec["kind"], spec["size"])
    tiny = GeneratedRobot("warm_up", "chain", 3, seed=1)
    emit(
        {
            "phase": "generate",
            "joints": robot.joints,
            "urdf_mib": len(robot.urdf) / MIB,
            "rss_mib": _rss_mib(),
            "vmpeak_mib": _status_mib("VmPeak"),  # what RLIMIT_AS caps
        }
    )

    modules = phase("import", lambda: __import__("ik_node"))
    emit({"ik_node": str(Path(modules.__file__).parent)})
    from ik_node import IKSolver, load_robot

    def warm_up():
        solver = IKSolver(load_robot(tiny.urdf), tiny.base, [tiny.tip])
        goal = {tiny.tip: tiny.forward(dict.fromkeys((joint[0] for joint in tiny.path), 0.3))}
        solver.solve(goal, timeout=0.05)

    phase("warm-up", warm_up)
    loaded = phase("load", lambda: load_robot(robot.urdf))
    solver = phase("build", lambda: IKSolver(loaded, robot.base, [robot.tip]))
    emit({"seed_table_size": solver.seed_table_size})

    names = list(solver.joint_names)
    path_names = [joint[0] for joint in robot.path]
    if sorted(names) != sorted(path_names):
        emit({"note": f"ik_node's joints differ from the generated path ({len(names)} vs {len(path_names)})"})
    rng = np.random.default_rng(GENERATOR_SEED + 1)
    target_q = dict(zip(path_names, rng.uniform(-TARGET_SPREAD, TARGET_SPREAD, len(path_names))))
    target = robot.forward(target_q)
    seed = np.zeros(len(names))
    goal = {robot.tip: target}
    result = phase("solve", lambda: solver.solve(goal, seed=seed, timeout=spec["solve_timeout"]))
    check = {"claimed": bool(result.success)}
    if result.q is not None and sorted(names) == sorted(path_names):
        pose = robot.forward(dict(zip(names, np.asarray(result.q, dtype=float))))
        check["position_error"] = float(np.linalg.norm(pose[:3, 3] - target[:3, 3]))
        check["rotation_error"] = _rotation_angle(pose[:3, :3].T @ target[:3, :3])
        check["confirmed"] = bool(
            check["position_error"] <= POSITION_TOLERANCE and check["rotation_error"] <= ORIENTATION_TOLERANCE
        )
    emit({"check": check})


# --------------------------------------------------------------------------- the parent


def run_case(name: str, arguments: argparse.Namespace) -> dict:
    """Run one case in a capped child; the phases it reported and how it ended."""
    kind, size = CASES[name]
    spec = {
        "name": name,
        "kind": kind,
        "size": size,
        "memory_limit": int(arguments.memory_limit * GIB),
        "tracemalloc": arguments.tracemalloc,
        "solve_timeout": arguments.solve_timeout,
    }
    environment = dict(os.environ)
    if arguments.ik_node_path:
        environment["PYTHONPATH"] = os.pathsep.join(
            [arguments.ik_node_path, *filter(None, [environment.get("PYTHONPATH")])]
        )
    command = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)]
    outcome = {"case": name, "phases": {}, "notes": []}
    with tempfile.TemporaryFile("w+") as output, tempfile.TemporaryFile("w+") as errors:
        start = time.perf_counter()
        process = subprocess.Popen(
            command, stdout=output, stderr=errors, env=environment, start_new_session=True
        )
        try:
            status = process.wait(timeout=arguments.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the child's own session: it and nothing else
            process.wait()
            status = None
        outcome["wall_seconds"] = time.perf_counter() - start
        output.seek(0)
        errors.seek(0)
        started = None
        for line in output:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "started" in record:
                started = record["started"]
            elif "phase" in record:
                outcome["phases"][record["phase"]] = record
            elif "check" in record:
                outcome["check"] = record["check"]
            elif "ik_node" in record:
                outcome["ik_node"] = record["ik_node"]
            elif "note" in record:
                outcome["notes"].append(record["note"])
        error_tail = errors.read()[-2000:]
    failed = [name for name, record in outcome["phases"].items() if "error" in record]
    finished = [name for name, record in outcome["phases"].items() if "error" not in record]
    unfinished = failed[0] if failed else started if started is not None and started not in finished else None
    if status is None:
        outcome["status"] = f"timeout ({arguments.timeout:g} s, in {unfinished or 'start-up'})"
    elif status == 0:
        outcome["status"] = "ok"
    elif status == MEMORY_ERROR_EXIT or failed:
        outcome["status"] = f"over memory limit (MemoryError in {unfinished or 'start-up'})"
    elif status < 0:
        name_of_signal = signal.Signals(-status).name
        outcome["status"] = (
            f"killed by {name_of_signal} in {unfinished or 'start-up'} (likely over the memory limit)"
        )
    else:
        last = error_tail.strip().splitlines()[-1] if error_tail.strip() else ""
        if "MemoryError" in error_tail or "std::bad_alloc" in error_tail or "Cannot allocate" in error_tail:
            outcome["status"] = f"over memory limit (in {unfinished or 'start-up'}: {last})"
        else:
            outcome["status"] = f"error (exit {status}) in {unfinished or 'start-up'}: {last}"
    return outcome


def _cell(record: dict | None, key: str, scale: float = 1.0, digits: int = 2) -> str:
    if record is None or key not in record:
        return "-"
    return f"{record[key] * scale:.{digits}f}"


def report(outcomes: list[dict], arguments: argparse.Namespace, started) -> None:
    print(f"date: {started.isoformat(timespec='seconds')}")
    system = f"{platform.system()} {platform.release()}"
    print(f"machine: {platform.machine()}, {os.cpu_count()} logical CPUs, {system}")
    print(f"Python {platform.python_version()}, numpy {np.__version__}")
    paths = sorted({o["ik_node"] for o in outcomes if "ik_node" in o})
    print(f"ik_node: {', '.join(paths) or '(not imported)'}")
    print(
        f"limits per case: address space {arguments.memory_limit:g} GiB (RLIMIT_AS), wall clock "
        f"{arguments.timeout:g} s; solve timeout {arguments.solve_timeout:g} s; NUMBA_CACHE_DIR "
        f"{os.environ.get('NUMBA_CACHE_DIR', '(default: __pycache__ by the sources)')}"
    )
    print()
    header = (
        f"{'case':<14}{'joints':>7}{'import s':>9}{'warm-up s':>10}{'load s':>9}{'peak MiB':>9}"
        f"{'build s':>9}{'peak MiB':>9}{'solve ms':>10}{'peak MiB':>9}{'solved':>8}  status"
    )
    print("Times per phase; peak = ru_maxrss after the phase (the process's peak so far)")
    print(header)
    print("-" * (len(header) + 12))
    for outcome in outcomes:
        phases = outcome["phases"]
        kind, size = CASES[outcome["case"]]
        joints = size if kind == "chain" else size[0] * size[1]
        check = outcome.get("check", {})
        solved = "-"
        if "confirmed" in check:
            solved = "yes" if check["confirmed"] else "no"
            if check["claimed"] != check["confirmed"]:
                solved += "*"
        load, build, solve = phases.get("load"), phases.get("build"), phases.get("solve")
        print(
            f"{outcome['case']:<14}{joints:>7}{_cell(phases.get('import'), 'seconds'):>9}"
            f"{_cell(phases.get('warm-up'), 'seconds'):>10}"
            f"{_cell(load, 'seconds'):>9}{_cell(load, 'maxrss_mib', digits=0):>9}"
            f"{_cell(build, 'seconds'):>9}{_cell(build, 'maxrss_mib', digits=0):>9}"
            f"{_cell(solve, 'seconds', 1e3, 1):>10}{_cell(solve, 'maxrss_mib', digits=0):>9}"
            f"{solved:>8}  {outcome['status']}"
        )
    print("solved: the returned configuration within 1e-5 m / rad by this file's FK")
    print("        (* = ik_node's own flag says otherwise)")
    print()
    print(
        "Memory after each phase [MiB]: peak RSS / current RSS / peak address space (VmPeak, what the "
        "cap limits)" + (" / tracemalloc peak in the phase" if arguments.tracemalloc else "")
    )
    for outcome in outcomes:
        cells = []
        for name in ("import", "warm-up", "load", "build", "solve"):
            record = outcome["phases"].get(name)
            if record is None or "seconds" not in record:
                continue
            cell = f"{name} {record['maxrss_mib']:.0f}/{record['rss_mib']:.0f}/{record['vmpeak_mib']:.0f}"
            if "tracemalloc_peak_mib" in record:
                cell += f"/{record['tracemalloc_peak_mib']:.0f}"
            cells.append(cell)
        print(f"  {outcome['case']:<14}{'; '.join(cells) or '-'}")
    notes = [f"{o['case']}: {note}" for o in outcomes for note in o["notes"]]
    for outcome in outcomes:
        check = outcome.get("check", {})
        if "position_error" in check:
            errors = f"{check['position_error']:.2e} m, {check['rotation_error']:.2e} rad"
            notes.append(f"{outcome['case']}: the solve's errors {errors}")
    if notes:
        print()
        print("Notes")
        for note in notes:
            print(f"  - {note}")


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(json.loads(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cases",
        nargs="+",
        choices=list(CASES),
        default=list(CASES),
        metavar="NAME",
        help=f"subset of {' '.join(CASES)} (default: all)",
    )
    parser.add_argument("--memory-limit", type=float, default=4.0, help="address-space cap per case, GiB (4)")
    parser.add_argument("--timeout", type=float, default=300.0, help="wall-clock limit per case, s (300)")
    parser.add_argument("--solve-timeout", type=float, default=1.0, help="the one solve's budget, s (1)")
    parser.add_argument(
        "--tracemalloc", action="store_true", help="also the tracemalloc peak per phase (slow)"
    )
    parser.add_argument("--ik-node-path", metavar="DIR", help="put DIR first on the children's PYTHONPATH")
    parser.add_argument("--json", metavar="FILE", help="also write the raw outcomes as JSON")
    arguments = parser.parse_args()
    if arguments.memory_limit <= 0 or arguments.timeout <= 0:
        parser.error("--memory-limit and --timeout must be positive")
    started = datetime.datetime.now().astimezone()
    outcomes = []
    for name in arguments.cases:
        print(f"  {name} ...", file=sys.stderr, flush=True)
        outcome = run_case(name, arguments)
        print(f"  {name}: {outcome['status']} ({outcome['wall_seconds']:.1f} s)", file=sys.stderr, flush=True)
        outcomes.append(outcome)
    report(outcomes, arguments, started)
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(outcomes, indent=1))


if __name__ == "__main__":
    main()
