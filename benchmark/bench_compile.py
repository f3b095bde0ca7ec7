"""The IK kernels' cold-compile and warm-load times, phase by phase, with a per-kernel profile.

Usage: python benchmark/bench_compile.py [--repeat N] [--urdf URDF --base BASE --tip TIP]
       [--json FILE]
Default robot: the bundled 7-DOF arm (urdf/arm7.urdf, base_link -> tool0). The ik_node measured
is the one in this file's tree (a copy of the repository measures that copy).

Each run is a fresh process (``--child``) that times, in order:

* ``import``: ``import ik_node`` (numba's own import is most of it);
* ``solver``: the first ``IKSolver(...)``, which prepares the solve kernels (``prepare_kernels``);
* ``solve``: the first ``solve`` after that (nothing should be left to compile);
* ``solve_many``: the first ``solve_many`` (4 targets): its kernel, ``kernels.search_many``;
* ``to answer``: ``solver`` + ``solve``, what a node waits for before it answers a goal.

``cold``: ``NUMBA_CACHE_DIR`` an empty directory (a first start after an install); ``warm``: a
second process on the cache the cold one left. Each is repeated ``--repeat`` times (cold ones each
on a new empty directory); the table gives the minimum wall time [s] (on a shared machine the
least disturbed), the other runs' in brackets, and the minimum CPU time of the process [s] (less
sensitive to other processes; compiling is single-threaded).

The profile: numba's ``"numba:compile"`` events (``numba.core.event``, numba >= 0.53), recorded in
the cold run with the smallest wall time; a kernel's *exclusive* time is the process CPU time
between its compile event's start and end less that of the compile events nested in it (the
kernels it calls, compiled as it is typed), so the column sums to the compile time; numba's own
helpers (``np.empty``'s implementation, ...) appear under their names. Kernels compiled for more
than one signature are listed with the arguments that differ: each extra one is a whole compile
more.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
PHASES = ("import", "solver", "solve", "solve_many")


def child(urdf: str, base: str, tip: str) -> dict:
    """One process's phases (wall [s], CPU [s]), its compile events and the kernels' signatures."""
    marks, last = {}, [time.perf_counter(), time.process_time()]

    def mark(phase: str) -> None:
        now = [time.perf_counter(), time.process_time()]
        marks[phase] = [now[0] - last[0], now[1] - last[1]]
        last[:] = time.perf_counter(), time.process_time()

    import ik_node  # noqa: F401  (timed: the first phase)

    mark("import")
    import numpy as np
    from numba.core import event

    from ik_node import IKSolver, load_robot
    from ik_node.solver import kernels

    robot = load_robot(urdf)
    q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])[: len(robot.tree(base, tip).joint_names)]
    phase_starts = {}

    class CompileRecorder(event.Listener):
        """Keeps (wall time, process CPU time, event) of each start and end of a compile
        (numba's ``RecordingListener`` keeps the wall time only)."""

        def __init__(self):
            self.buffer = []

        def on_start(self, item) -> None:
            self.buffer.append((time.time(), time.process_time(), item))

        on_end = on_start

    recorder = CompileRecorder()
    with event.install_listener("numba:compile", recorder):
        phase_starts["solver"] = time.time()
        mark("setup")
        solver = IKSolver(robot, base, [tip])
        mark("solver")
        target = solver.tree.forward(q, tip)
        phase_starts["solve"] = time.time()
        mark("setup")
        solver.solve(target, timeout=0.05)
        mark("solve")
        phase_starts["solve_many"] = time.time()
        solver.solve_many(np.repeat(target[None], 4, axis=0), timeout=0.05)
        mark("solve_many")
    events = [
        {
            "time": stamp,
            "cpu": cpu,
            "start": item.is_start,
            "name": item.data["dispatcher"].py_func.__qualname__,
        }
        for stamp, cpu, item in recorder.buffer
    ]
    signatures = {
        name: [[str(argument) for argument in signature] for signature in function.signatures]
        for name, function in vars(kernels).items()
        if hasattr(function, "signatures") and len(function.signatures) > 1
    }
    return {"phases": marks, "phase_starts": phase_starts, "events": events, "signatures": signatures}


def run_child(cache: str, arguments) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = cache
    # this tree's ik_node (a copy elsewhere measures that copy), before an installed one
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), env.get("PYTHONPATH")]))
    command = [sys.executable, __file__, "--child", "--urdf", arguments.urdf, "--base", arguments.base]
    run = subprocess.run(
        command + ["--tip", arguments.tip], env=env, cwd=PACKAGE_ROOT, capture_output=True, text=True
    )
    if run.returncode != 0:
        raise SystemExit(f"the measured process failed:\n{run.stderr}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def exclusive_times(run: dict) -> list[tuple[str, str, float, float]]:
    """Per compile event: (kernel, phase, exclusive CPU [s], inclusive CPU [s]), nesting undone."""
    stack, rows = [], []
    starts = sorted(run["phase_starts"].items(), key=lambda item: item[1])
    for item in run["events"]:
        if item["start"]:
            stack.append([item, 0.0])
            continue
        opened, nested = stack.pop()
        inclusive = item["cpu"] - opened["cpu"]
        if stack:
            stack[-1][1] += inclusive
        phase = [name for name, stamp in starts if stamp <= opened["time"]][-1]
        rows.append((opened["name"], phase, inclusive - nested, inclusive))
    return rows


def table(title: str, runs: list[dict]) -> None:
    print(f"{title}, {len(runs)} runs: wall [s] (min, then the others), CPU [s] (min)")
    for phase in PHASES + ("to answer",):
        if phase == "to answer":  # what a node waits for before it can answer a goal
            walls = sorted(run["phases"]["solver"][0] + run["phases"]["solve"][0] for run in runs)
            cpus = sorted(run["phases"]["solver"][1] + run["phases"]["solve"][1] for run in runs)
        else:
            walls = sorted(run["phases"][phase][0] for run in runs)
            cpus = sorted(run["phases"][phase][1] for run in runs)
        rest = ", ".join(f"{value:.2f}" for value in walls[1:])
        print(f"  {phase:<11} {walls[0]:7.2f} {'[' + rest + ']' if rest else '':<16} {cpus[0]:7.2f}")


def profile(run: dict) -> None:
    rows = exclusive_times(run)
    by_kernel = defaultdict(lambda: [0.0, 0, set()])
    for name, phase, exclusive, _ in rows:
        by_kernel[name][0] += exclusive
        by_kernel[name][1] += 1
        by_kernel[name][2].add(phase)
    total = sum(value[0] for value in by_kernel.values())
    print(f"exclusive compile CPU time per kernel [s] (the fastest cold run; {total:.1f} s in all):")
    for name, (seconds, count, phases) in sorted(by_kernel.items(), key=lambda item: -item[1][0]):
        compiles = f" x{count}" if count > 1 else ""
        print(f"  {name:<22} {seconds:6.2f}{compiles:<4}  {', '.join(p for p in PHASES if p in phases)}")
    for phase in PHASES[1:]:
        seconds = sum(exclusive for _, where, exclusive, _ in rows if where == phase)
        print(f"  (compiled in {phase}: {seconds:.1f} s)")
    if run["signatures"]:
        print("kernels compiled for more than one signature (the arguments that differ):")
        for name, signatures in run["signatures"].items():
            differing = [index for index, types in enumerate(zip(*signatures)) if len(set(types)) > 1]
            variants = [
                ", ".join(f"#{index} {signature[index]}" for index in differing) for signature in signatures
            ]
            print(f"  {name}: " + " | ".join(variants))
    else:
        print("every kernel compiled for one signature")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs of each kind (the minimum is kept)")
    parser.add_argument("--urdf", default=str(PACKAGE_ROOT / "urdf/arm7.urdf"))
    parser.add_argument("--base", default="base_link")
    parser.add_argument("--tip", default="tool0")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", help="also write the runs to this file")
    arguments = parser.parse_args()
    if arguments.child:
        print(json.dumps(child(arguments.urdf, arguments.base, arguments.tip)))
        return
    cold, warm = [], []
    with tempfile.TemporaryDirectory(prefix="ik_node_bench_compile_") as root:
        for index in range(arguments.repeat):
            cache = str(Path(root) / f"cache{index}")
            cold.append(run_child(cache, arguments))
            warm.append(run_child(cache, arguments))
    print(
        f"ik_node in {PACKAGE_ROOT}; {Path(arguments.urdf).name} {arguments.base} -> {arguments.tip}; "
        f"Python {sys.version.split()[0]}"
    )
    table("cold (empty NUMBA_CACHE_DIR)", cold)
    table("warm (the cold run's cache)", warm)
    profile(min(cold, key=lambda run: sum(wall for wall, _ in run["phases"].values())))
    if arguments.json:
        runs = {"package": str(PACKAGE_ROOT), "cold": cold, "warm": warm}
        Path(arguments.json).write_text(json.dumps(runs))


if __name__ == "__main__":
    main()
