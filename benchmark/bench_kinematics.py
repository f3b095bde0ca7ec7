"""FK + body Jacobian per call (the compiled kernel, and through KinematicTree's Python API), the
batch solver's throughput, and the kernels' compile and load times.

Usage: python benchmark/bench_kinematics.py [URDF BASE TIP] [--calls N] [--batch N]
Default robot: the bundled 7-DOF arm (urdf/arm7.urdf, base_link -> tool0).

* FK + Jacobian: one call from Python each, at random in-limit configurations: the kernel
  (``ik_node.compiled.spatial.frame_jacobian``: FK and the body Jacobian, the code the solver runs)
  and the public ``KinematicTree.body_jacobian`` (the same kernel behind the input checks).
* ``solve_many``: FK targets of N random in-limit configurations, default options, 5 ms per
  target, spread over the machine's cores; solves per second of wall time.
* Cold compile and warm start: ``python -m ik_node.solver`` in fresh processes, the first with an
  empty cache directory (``NUMBA_CACHE_DIR``), the second loading what the first cached.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ik_node import IKSolver, load_robot
from ik_node.compiled import spatial

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def summary(times: np.ndarray) -> str:
    return (
        f"median {np.median(times) * 1e6:.2f} us, mean {times.mean() * 1e6:.2f} us, "
        f"p99 {np.percentile(times, 99) * 1e6:.2f} us"
    )


def measure_kinematics(tree, tip: str, configurations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-call times [s] of the kernel's and of ``KinematicTree.body_jacobian``'s FK + body
    Jacobian."""
    tip_frame, offset = tree.frame_index(tip), np.eye(4)
    jacobian = np.empty((6, len(tree.tangent_names)))
    kernel_times, api_times = np.empty(len(configurations)), np.empty(len(configurations))
    spatial.frame_jacobian(
        tree.frames, tree.frame_links, configurations[0], tip_frame, offset, False, jacobian
    )
    for index, q in enumerate(configurations):
        start = time.perf_counter()
        spatial.frame_jacobian(tree.frames, tree.frame_links, q, tip_frame, offset, False, jacobian)
        kernel_times[index] = time.perf_counter() - start
        start = time.perf_counter()
        tree.body_jacobian(q, tip)
        api_times[index] = time.perf_counter() - start
    return kernel_times, api_times


def measure_compile() -> tuple[str, str]:
    """Output of ``python -m ik_node.solver`` with an empty cache, then with that cache."""
    with tempfile.TemporaryDirectory(prefix="ik_node_numba_cache_") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        runs = [
            subprocess.run(
                [sys.executable, "-m", "ik_node.solver"], env=env, capture_output=True, text=True, check=True
            ).stdout.strip()
            for _ in range(2)
        ]
    return runs[0], runs[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "robot",
        nargs="*",
        default=[str(PACKAGE_ROOT / "urdf/arm7.urdf"), "base_link", "tool0"],
        help="URDF BASE TIP",
    )
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=20000, help="targets for solve_many")
    parser.add_argument("--no-compile", action="store_true", help="skip the cold-compile measurement (~30 s)")
    arguments = parser.parse_args()
    urdf, base, tip = arguments.robot
    robot = load_robot(urdf)
    tree = robot.tree(base, tip)
    rng = np.random.default_rng(0)
    lower = np.where(np.isfinite(tree.lower), tree.lower, -np.pi)
    upper = np.where(np.isfinite(tree.upper), tree.upper, np.pi)
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, "
        f"Python {platform.python_version()}, numpy {np.__version__}"
    )
    configurations = rng.uniform(lower, upper, size=(arguments.calls, len(lower)))
    kernel_times, api_times = measure_kinematics(tree, tip, configurations)
    name = f"{Path(urdf).name} {base} -> {tip} ({len(tree.joint_names)} DOF)"
    print(f"{name}, FK + body Jacobian, {arguments.calls} calls:")
    print(f"  kernel: {summary(kernel_times)}")
    print(f"  KinematicTree.body_jacobian: {summary(api_times)}")

    solver = IKSolver(robot, base, [tip])
    q = rng.uniform(lower, upper, size=(arguments.batch, len(lower)))
    targets = np.array([tree.forward(row, tip) for row in q])
    solver.solve_many(targets[:4])  # the parallel kernel's first call compiles or loads it
    batch = solver.solve_many(targets, timeout=0.005)
    print(
        f"solve_many: {arguments.batch} FK targets in {batch.elapsed:.2f} s: "
        f"{arguments.batch / batch.elapsed:,.0f} solves/s, solved {batch.success.mean() * 100:.2f} %"
    )
    if not arguments.no_compile:
        cold, warm = measure_compile()
        print(f"cold start (empty cache): {cold}")
        print(f"warm start: {warm}")


if __name__ == "__main__":
    main()
