"""``IKSolver.solve_all`` per call against EAIK on the same poses, and ``solve`` of the nearest
branch against the numeric solve.

Usage: python benchmark/bench_solve_all.py [--poses N] [--arms ur5 kuka_kr ...]

Protocol: the arms of ``test/dh_arms.py`` (Denavit–Hartenberg tables: a UR5, a KUKA KR-type arm, an
arm whose axes 1 and 2 meet, a KUKA iiwa-type arm with joint 3 locked at 0.4 rad, a Panda-type arm
with joint 7 locked at 0.4 rad), each as a URDF for ik_node and as EAIK's own model of the same
table. N poses from random configurations inside the limits; every call from Python, one at a
time, on one thread; the mean and median of each call's wall time (``perf_counter``) over the
poses, from the fastest of 5 rounds (each round runs each library over all the poses in turn;
this VM's speed drifts from second to second, so the calls compared come from one round).

ik_node's call returns every solution inside the limits, checked by FK, deduplicated, ordered
nearest the seed and labelled. Each ``θ + 2πk`` of a joint with limits wider than 2π is a
solution of its own: a UR5 of ±2π has up to 8 × 2⁶, so such an arm is timed again with its limits
cut to ±π, where ik_node's set is EAIK's, each branch once. EAIK's call returns its 8 branches
(least-squares ones flagged) without limits, FK check or order. Each result makes its arrays at
their first read (EAIK's ``.Q`` converts its solutions at each read, ik_node's ``.q`` is a view
made at the first): a second line times the calls with the solutions read.

Then, seeded at a configuration 0.3 rad from the goal's: ``solve`` with ``solve_type='distance'``
(the nearest solution of the complete set) against ``solve`` with the default ``speed`` (the
numeric search, one answer), 5 ms.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from ik_node import IKSolver, load_robot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
from dh_arms import ARMS, LOCKED, dh_axes, dh_urdf  # noqa: E402  (test/ is not a package)

NEAR = 0.3
ROUNDS = 5


def timed(calls, items, rounds: int = ROUNDS) -> list[tuple[float, float]]:
    """Per call of ``calls``: mean and median wall time [µs] of ``call(item)`` over ``items``,
    each round running every call over all the items in turn, from the round of least total
    time: this VM's speed drifts by up to 2× from second to second, so the calls compared come
    from one round, the same phase (the fastest round of each call, as before, paired rounds
    seconds apart)."""
    best, least = None, math.inf
    for _ in range(rounds):
        kept = [[] for _ in calls]
        for index, call in enumerate(calls):
            for item in items:
                began = time.perf_counter()
                call(item)
                kept[index].append(time.perf_counter() - began)
        total = sum(map(sum, kept))
        if total < least:
            least = total
            best = [(1e6 * statistics.fmean(times), 1e6 * statistics.median(times)) for times in kept]
    return best


def run(name: str, count: int, rng, one_turn: bool = False) -> None:
    """Both lines for the arm ``name``; ``one_turn``: its joints' limits cut to [-π, π], where
    each branch is one solution (EAIK's set)."""
    from eaik.IK_HP import HPRobot

    d, a, alpha, lower, upper = ARMS[name]
    if one_turn:
        lower, upper = np.maximum(lower, -np.pi).tolist(), np.minimum(upper, np.pi).tolist()
        name += " ±π"
    solver = IKSolver(load_robot(dh_urdf(name.split()[0], d, a, alpha, lower, upper)), "base_link", "tool0")
    distance = IKSolver(solver.robot, "base_link", "tool0", solve_type="distance")
    lock = LOCKED.get(name)
    locked = None if lock is None else {f"joint{lock[0] + 1}": lock[1]}
    axes, offsets, tool_rotation = dh_axes(d, a, alpha)
    eaik = HPRobot(axes, offsets, fixed_axes=[lock] if lock else [])
    q = rng.uniform(lower, upper, (count, len(d)))
    if lock:
        q[:, lock[0]] = lock[1]
    poses = [np.ascontiguousarray(solver.tree.forward(row)) for row in q]
    eaik_poses = [pose.copy() for pose in poses]
    for pose in eaik_poses:  # (EAIK's tool frame has the base's orientation)
        pose[:3, :3] = pose[:3, :3] @ tool_rotation.T
    seeds = np.clip(q + rng.uniform(-NEAR, NEAR, q.shape), lower, upper)
    if lock:
        seeds[:, lock[0]] = lock[1]
    items = list(zip(poses, seeds, eaik_poses))
    solver.solve_all(poses[0], locked=locked)  # (compiled or loaded before timing)
    ours, ours_unseeded, theirs, ours_read, theirs_read = timed(
        [
            lambda item: solver.solve_all(item[0], seed=item[1], locked=locked),
            lambda item: solver.solve_all(item[0], locked=locked),
            lambda item: eaik.IK(item[2]),
            lambda item: solver.solve_all(item[0], seed=item[1], locked=locked).q,
            lambda item: eaik.IK(item[2]).Q,
        ],
        items,
    )
    solutions = statistics.fmean(len(solver.solve_all(pose, locked=locked).q) for pose in poses)
    eaik_solutions = statistics.fmean(len(eaik.IK(pose).Q) for pose in eaik_poses)
    print(
        f"{name:17s} solve_all {ours[0]:6.1f} / {ours[1]:6.1f} µs (no seed {ours_unseeded[0]:6.1f}), "
        f"{solutions:5.1f} solutions | EAIK {theirs[0]:5.1f} / {theirs[1]:5.1f} µs, {eaik_solutions:.1f} "
        f"| ratio of means {ours[0] / theirs[0]:.2f}"
    )
    print(
        f"{'':17s} the solutions read too (.q / EAIK's .Q) {ours_read[0]:6.1f} / {theirs_read[0]:5.1f} µs "
        f"| ratio of means {ours_read[0] / theirs_read[0]:.2f}"
    )
    if lock:
        return
    nearest, numeric = timed(
        [
            lambda item: distance.solve(item[0], seed=item[1], timeout=0.005),
            lambda item: solver.solve(item[0], seed=item[1], timeout=0.005),
        ],
        items,
    )
    print(
        f"{'':17s} solve nearest branch (distance) {nearest[0]:6.1f} / {nearest[1]:6.1f} µs | "
        f"numeric solve (speed) {numeric[0]:6.1f} / {numeric[1]:6.1f} µs"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poses", type=int, default=1000)
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=list(ARMS))
    arguments = parser.parse_args()
    print(f"{arguments.poses} poses per arm; mean / median per call")
    for name in arguments.arms:
        run(name, arguments.poses, np.random.default_rng(27))
        lower, upper = ARMS[name][3:]
        if np.any(np.subtract(upper, lower) > 2 * np.pi):  # (the same arm, each branch once)
            run(name, arguments.poses, np.random.default_rng(27), one_turn=True)


if __name__ == "__main__":
    main()
