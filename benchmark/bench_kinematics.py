"""Median time of forward kinematics + the full body Jacobian of a tip (one call each).

Usage: python benchmark/bench_kinematics.py [URDF BASE TIP] [--calls N]
Default robot: the bundled 7-DOF arm (urdf/arm7.urdf, base_link -> tool0).
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from ik_node import load_robot

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def measure(urdf: str, base: str, tip: str, calls: int, seed: int = 0) -> dict:
    """Time ``link_poses`` + ``frame_body_jacobian`` at random in-limit configurations (s)."""
    tree = load_robot(urdf).tree(base, tip)
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(tree.lower), tree.lower, -np.pi)
    upper = np.where(np.isfinite(tree.upper), tree.upper, np.pi)
    configurations = rng.uniform(lower, upper, size=(calls, len(lower)))
    tip_frame = tree.frame_index(tip)
    times = np.empty(calls)
    for index, q in enumerate(configurations):
        start = time.perf_counter()
        poses = tree.link_poses(q)
        tree.frame_body_jacobian(poses, tip_frame)
        times[index] = time.perf_counter() - start
    return {
        "dof": len(tree.joint_names),
        "median": np.median(times),
        "mean": times.mean(),
        "p99": np.percentile(times, 99),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "robot",
        nargs="*",
        default=[str(PACKAGE_ROOT / "urdf/arm7.urdf"), "base_link", "tool0"],
        help="URDF BASE TIP",
    )
    parser.add_argument("--calls", type=int, default=20000)
    arguments = parser.parse_args()
    urdf, base, tip = arguments.robot
    result = measure(urdf, base, tip, arguments.calls)
    print(
        f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"numpy {np.__version__}"
    )
    print(
        f"{Path(urdf).name} {base} -> {tip} ({result['dof']} DOF), FK + body Jacobian, "
        f"{arguments.calls} calls: median {result['median'] * 1e6:.1f} us, "
        f"mean {result['mean'] * 1e6:.1f} us, p99 {result['p99'] * 1e6:.1f} us"
    )


if __name__ == "__main__":
    main()
