"""First answers and kernel compiles after an install: the default problem and each feature, cold
and warm, with a per-kernel profile of the default problem's compile.

Usage: python benchmark/bench_compile.py [--repeat N] [--urdf URDF --base BASE --tip TIP]
       [--features F ...] [--no-profile] [--json FILE]
Default robot: the bundled 7-DOF arm (urdf/arm7.urdf, base_link -> tool0). The ik_node measured
is the one in this file's tree (a copy of the repository measures that copy).

Each run is a fresh process (``--child``) on a kernel cache of its own (``NUMBA_CACHE_DIR``) that
times, from its start:

* ``import``: ``import ik_node`` (numba's own import is most of it);
* ``solver``: ``load_robot`` and the first ``IKSolver(...)`` (with the feature's option);
* ``first answer``: the first ``solve`` returned, from the process's start: what a user of the
  library, the CLI or the node waits for (while the kernels compile, the solver answers with them
  as plain Python; see ik_node.solver.IKSolver);
* ``compiled``: the compiled kernels serving the solves (``wait_for_kernels``), from the start:
  the cold compile (in a helper process) and its load.

Runs: ``cold`` on an empty cache (a first start after an install); ``warm`` on the cache the cold
default run left (a later start); per feature (``posture``, ``collision``, ``method``,
``solve_type``): on a copy of the warm default cache, a solver with the feature on (its kernels
compile on top of the default's). Each repeated ``--repeat`` times; the minimum wall time [s] is
kept (on a shared machine the least disturbed), the others in brackets.

The profile: numba's ``"numba:compile"`` events (``numba.core.event``) of a cold default compile
in the measured process itself (``compile_helper=False``); a kernel's *exclusive* time is the
process CPU time between its compile event's start and end less that of the compile events
nested in it (the kernels it calls), so the column sums to the compile time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
PHASES = ("import", "solver", "first answer", "compiled")
#: The solver options that turn each feature on.
FEATURE_OPTIONS = {
    "default": {},
    "posture": {"posture_gain": 0.1},
    "collision": {"self_collision": True},
    "method": {"method": "pinv"},
    "solve_type": {"solve_type": "distance"},
}


def child(urdf: str, base: str, tip: str, feature: str, profiled: bool) -> dict:
    """One process's phases (wall [s] from its start) and, ``profiled``, its compile events."""
    began = time.perf_counter()
    marks = {}
    import ik_node  # noqa: F401  (timed: the first phase)

    marks["import"] = time.perf_counter() - began
    import numpy as np
    from numba.core import event

    from ik_node import IKSolver, load_robot

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
        robot = load_robot(urdf)
        solver = IKSolver(robot, base, [tip], compile_helper=not profiled, **FEATURE_OPTIONS[feature])
        marks["solver"] = time.perf_counter() - began
        q = np.clip(np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])[: len(solver.joint_names)], solver.lower,
                    solver.upper)  # fmt: skip
        target = solver.tip_poses(q)[0]
        answer = solver.solve(target)
        marks["first answer"] = time.perf_counter() - began
        solver.wait_for_kernels()
        marks["compiled"] = time.perf_counter() - began
        again = solver.solve(target)
    events = [
        {
            "time": stamp,
            "cpu": cpu,
            "start": item.is_start,
            "name": item.data["dispatcher"].py_func.__qualname__,
        }
        for stamp, cpu, item in recorder.buffer
    ]
    return {"phases": marks, "events": events, "solved": [answer.success, again.success]}


def run_child(cache: str, arguments, feature: str, profiled: bool = False) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = cache
    # this tree's ik_node (a copy elsewhere measures that copy), before an installed one
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), env.get("PYTHONPATH")]))
    command = [
        sys.executable,
        __file__,
        "--child",
        feature,
        "--urdf",
        arguments.urdf,
        "--base",
        arguments.base,
    ]
    command += ["--tip", arguments.tip] + (["--profiled"] if profiled else [])
    run = subprocess.run(command, env=env, cwd=PACKAGE_ROOT, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"the measured process failed:\n{run.stderr}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def exclusive_times(run: dict) -> list[tuple[str, float]]:
    """Per compile event: (kernel, exclusive CPU [s]), nesting undone."""
    stack, rows = [], []
    for item in run["events"]:
        if item["start"]:
            stack.append([item, 0.0])
            continue
        opened, nested = stack.pop()
        inclusive = item["cpu"] - opened["cpu"]
        if stack:
            stack[-1][1] += inclusive
        rows.append((opened["name"], inclusive - nested))
    return rows


def table(title: str, runs: list[dict]) -> None:
    print(f"{title}, {len(runs)} runs: wall [s] from the process's start (min, then the others)")
    for phase in PHASES:
        walls = sorted(run["phases"][phase] for run in runs)
        rest = ", ".join(f"{value:.2f}" for value in walls[1:])
        print(f"  {phase:<13} {walls[0]:7.2f} {'[' + rest + ']' if rest else ''}")
    if not all(all(run["solved"]) for run in runs):
        print("  (a solve failed)")


def profile(run: dict) -> None:
    rows = exclusive_times(run)
    by_kernel = defaultdict(lambda: [0.0, 0])
    for name, exclusive in rows:
        by_kernel[name][0] += exclusive
        by_kernel[name][1] += 1
    total = sum(value[0] for value in by_kernel.values())
    print(
        "the default problem compiled in the process: exclusive CPU time per kernel [s] "
        f"({total:.1f} s in all)"
    )
    for name, (seconds, count) in sorted(by_kernel.items(), key=lambda item: -item[1][0]):
        compiles = f" x{count}" if count > 1 else ""
        print(f"  {name:<34} {seconds:6.2f}{compiles}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs of each kind (the minimum is kept)")
    parser.add_argument("--urdf", default=str(PACKAGE_ROOT / "urdf/arm7.urdf"))
    parser.add_argument("--base", default="base_link")
    parser.add_argument("--tip", default="tool0")
    parser.add_argument("--features", nargs="*", default=[f for f in FEATURE_OPTIONS if f != "default"],
                        choices=[f for f in FEATURE_OPTIONS if f != "default"])  # fmt: skip
    parser.add_argument("--no-profile", action="store_true", help="skip the per-kernel profile")
    parser.add_argument("--child", choices=tuple(FEATURE_OPTIONS), help=argparse.SUPPRESS)
    parser.add_argument("--profiled", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", help="also write the runs to this file")
    arguments = parser.parse_args()
    if arguments.child:
        print(
            json.dumps(
                child(arguments.urdf, arguments.base, arguments.tip, arguments.child, arguments.profiled)
            )
        )
        return
    print(
        f"ik_node in {PACKAGE_ROOT}; {Path(arguments.urdf).name} {arguments.base} -> {arguments.tip}; "
        f"Python {sys.version.split()[0]}; {os.cpu_count()} CPUs"
    )
    runs = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="ik_node_bench_compile_") as root:
        for index in range(arguments.repeat):
            cache = str(Path(root) / f"cache{index}")
            runs["cold"].append(run_child(cache, arguments, "default"))
            time.sleep(1.0)  # (the helper process has exited once the kernels were loaded)
            runs["warm"].append(run_child(cache, arguments, "default"))
            for feature in arguments.features:
                copy = str(Path(root) / f"cache{index}-{feature}")
                shutil.copytree(cache, copy)
                runs[feature].append(run_child(copy, arguments, feature))
        table("cold: the default problem on an empty cache", runs["cold"])
        table("warm: the default problem on the cold run's cache", runs["warm"])
        for feature in arguments.features:
            table(f"{feature}: its kernels on top of the warm default cache", runs[feature])
        if not arguments.no_profile:
            runs["profiled"].append(
                run_child(str(Path(root) / "profiled"), arguments, "default", profiled=True)
            )
            profile(runs["profiled"][0])
    if arguments.json:
        Path(arguments.json).write_text(json.dumps({"package": str(PACKAGE_ROOT), **runs}))


if __name__ == "__main__":
    main()
