"""Branch flips while following smooth paths: the largest joint change between consecutive commands.

Usage: python benchmark/bench_branch_flips.py [--paths N] [--robots NAME ...] [--solve-type T]
       [--max-joint-move RAD]

``--robots`` also takes example-robot-data's chains (panda, ur5, tiago, pr2_right_arm) where the
package is installed.

Protocol, per bundled arm: N smooth joint-space paths inside the limits (a random start, a random
direction, 0.3-1.5 rad of total motion on the largest joint, eased in and out), turned into goal
paths by FK with consecutive goals at most 1 mm and 0.5 degree apart (so a continuous solution
exists by construction: the path itself). The goals are fed in order, each seeded at the previous
command, as the node does in ``solve`` mode (``solve_many`` advances all paths a step at a time:
it equals ``solve`` target by target), with the node's default 50 ms budget. Recorded per step:
the largest joint change [rad or m] from the previous command (continuous joints wrapped); a goal
that is not solved publishes no command (counted apart).

Goal: <= 0.05 rad in >= 99.9 % of steps and never more than 0.5 rad.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time

import numpy as np

from ik_node import IKSolver, load_robot
from ik_node.description import catalogue

ARMS = ("arm6", "arm7", "mobile_manipulator", "dual_arm_left")  # bundled chains (catalogue)
#: example-robot-data's chains, where it is installed (``--robots panda ur5 ...``).
OTHER_ARMS = tuple(case.name for case in catalogue.example_robot_data_cases() if case.single_chain)
STEP_DISTANCE = 1e-3  # m: largest goal-to-goal move
STEP_ANGLE = np.radians(0.5)  # rad: largest goal-to-goal rotation
SMALL, LARGE = 0.05, 0.5  # rad: the goal's thresholds on the largest joint change
TIMEOUT = 0.05  # s: the node's default budget


def rotation_angle(R: np.ndarray) -> np.ndarray:
    """Angles [rad] of a stack of rotation matrices."""
    cosine = np.clip((np.trace(R, axis1=-2, axis2=-1) - 1.0) / 2.0, -1.0, 1.0)
    return np.arccos(cosine)


def smooth_path(solver: IKSolver, rng) -> tuple[np.ndarray, np.ndarray]:
    """Joint configurations (K, n) along one eased path, and their tip poses (K, 4, 4), spaced so
    that consecutive poses are within STEP_DISTANCE and STEP_ANGLE."""
    lower = np.where(np.isfinite(solver.lower), solver.lower, -np.pi)
    upper = np.where(np.isfinite(solver.upper), solver.upper, np.pi)
    margin = 0.05 * (upper - lower)
    start = rng.uniform(lower + margin, upper - margin)
    direction = rng.normal(size=len(start))
    direction /= np.abs(direction).max()
    length = rng.uniform(0.3, 1.5)
    # shorten to stay inside the limits (with the margin)
    room = np.where(direction > 0, (upper - margin - start) / np.maximum(direction, 1e-12),
                    (lower + margin - start) / np.minimum(direction, -1e-12))  # fmt: skip
    length = min(length, float(room.min()))
    tip = solver.tip_links[0]
    count = 64
    while True:
        s = np.linspace(0.0, 1.0, count)
        eased = s * s * (3.0 - 2.0 * s)
        q = start + length * eased[:, None] * direction
        poses = np.array([solver.tree.forward(row, tip) for row in q])
        moves = np.linalg.norm(np.diff(poses[:, :3, 3], axis=0), axis=1)
        turns = rotation_angle(np.swapaxes(poses[:-1, :3, :3], -1, -2) @ poses[1:, :3, :3])
        if moves.max() <= STEP_DISTANCE and turns.max() <= STEP_ANGLE:
            return q, poses
        count *= 2


def largest_changes(solver: IKSolver, paths: list) -> tuple[np.ndarray, int, int]:
    """Largest joint change per solved step (all paths), failed steps, steps; every path starts
    seeded at its own first configuration."""
    length = max(len(q) for q, _ in paths)
    commands = np.array([q[0] for q, _ in paths])
    changes, failed, steps = [], 0, 0
    wraps = solver.continuous
    for step in range(1, length):
        active = [index for index, (q, _) in enumerate(paths) if step < len(q)]
        targets = np.array([paths[index][1][step] for index in active])
        batch = solver.solve_many(targets, seed=commands[active], timeout=TIMEOUT)
        steps += len(active)
        failed += int((~batch.success).sum())
        difference = batch.q - commands[active]
        difference[:, wraps] = (difference[:, wraps] + np.pi) % (2 * np.pi) - np.pi
        largest = np.abs(difference).max(axis=1)
        changes.append(largest[batch.success])
        solved = np.array(active)[batch.success]
        commands[solved] = batch.q[batch.success]
    return np.concatenate(changes), failed, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=1000)
    parser.add_argument("--robots", nargs="*", default=list(ARMS), choices=ARMS + OTHER_ARMS)
    parser.add_argument(
        "--solve-type", default=None, help="the solver's solve_type (default: its own default)"
    )
    parser.add_argument(
        "--max-joint-move", type=float, default=None, help="the solver's max_joint_move [rad]"
    )
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    print(
        f"date: {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs"
    )
    print(
        f"{arguments.paths} smooth paths per robot, goals <= {STEP_DISTANCE * 1e3:g} mm / "
        f"{np.degrees(STEP_ANGLE):g} deg apart, each seeded at the previous command, "
        f"{TIMEOUT * 1e3:g} ms budget"
    )
    header = (
        f"{'robot':20s} {'steps':>8s} {'failed':>7s} {'<= 0.05 rad':>12s} {'> 0.5 rad':>10s} "
        f"{'p99.9 rad':>10s} {'max rad':>9s} {'time s':>7s}"
    )
    print(header)
    print("-" * len(header))
    for name in arguments.robots:
        robot = catalogue.case(name)
        options = {} if arguments.solve_type is None else {"solve_type": arguments.solve_type}
        if arguments.max_joint_move is not None:
            options["max_joint_move"] = arguments.max_joint_move
        solver = IKSolver(load_robot(robot.urdf), robot.base, list(robot.tips), **options)
        rng = np.random.default_rng((arguments.seed, sum(map(ord, name))))
        paths = [smooth_path(solver, rng) for _ in range(arguments.paths)]
        began = time.perf_counter()
        changes, failed, steps = largest_changes(solver, paths)
        elapsed = time.perf_counter() - began
        small = (changes <= SMALL).mean() * 100
        large = int((changes > LARGE).sum())
        print(
            f"{name:20s} {steps:8d} {failed:7d} {small:11.3f}% {large:10d} "
            f"{np.percentile(changes, 99.9):10.4f} {changes.max():9.4f} {elapsed:7.1f}"
        )
    print(f"goal: <= {SMALL} rad in >= 99.9 % of steps, none > {LARGE} rad")


if __name__ == "__main__":
    main()
