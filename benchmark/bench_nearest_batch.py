"""``solve_many`` with ``solve_type='distance'`` on an arm with a closed form: the nearest solution
of every target, against the numeric search it replaced.

Usage: python benchmark/bench_nearest_batch.py [--targets N] [--timeout S]

Protocol: the bundled arm6 (three parallel axes, the UR type: a closed form) and a copy whose joint
axes are tilted by 1e-4 rad (a calibrated URDF: its nominal branches polished on the real tree).
N goals from random configurations inside the limits, seeded (a) at random configurations, (b)
within 0.05 rad of the goal's (tracking). Per case: ``solve_many`` through the closed form, and
the numeric search with the distance score it replaced (the closed form switched off in this
process only); ``speed`` (the default numeric search) for scale. Reported: solves per second
(wall time of the whole batch, 2 batch threads), success, and how often the answer is the
nearest of the complete set (``solve_all`` from the same seed, on the first 200 targets: within
1e-3 rad of its first solution).
"""

from __future__ import annotations

import argparse
import re
import time

import numpy as np

from ik_node import IKSolver, load_robot
from ik_node.description.resources import bundled_urdf
from ik_node.solver import batch

SAMPLE = 200
#: An answer within this [rad] of the set's nearest is that solution (a polish stops within the
#: solver's tolerance, ``solve_all``'s within 1e-9).
SAME_SOLUTION = 1e-3


def tilted(urdf: str, angle: float, rng) -> str:
    """``urdf`` with every joint axis turned by ``angle`` [rad] about a random perpendicular."""

    def turn(match) -> str:
        axis = np.array([float(value) for value in match.group(1).split()])
        side = np.cross(axis, rng.normal(size=3))
        side /= np.linalg.norm(side)
        new = np.cos(angle) * axis + np.sin(angle) * side
        return '<axis xyz="{:.12f} {:.12f} {:.12f}"'.format(*new)

    return re.sub(r'<axis xyz="([^"]+)"', turn, urdf)


def nearest_share(solver: IKSolver, poses, seeds, q) -> float:
    """Share of the first ``SAMPLE`` answers that are the nearest of ``solve_all``'s set."""
    hits = total = 0
    for pose, seed, answer in zip(poses[:SAMPLE], seeds[:SAMPLE], q[:SAMPLE]):
        every = solver.solve_all(pose, seed=seed)
        if not every.success:
            continue
        total += 1
        hits += np.abs(answer - every.q[0]).max() <= SAME_SOLUTION
    return hits / max(total, 1)


def run(name: str, urdf: str, count: int, timeout: float, rng) -> None:
    robot = load_robot(urdf)
    distance = IKSolver(robot, "base_link", "tool0", solve_type="distance", compile_helper=False)
    speed = IKSolver(robot, "base_link", "tool0", compile_helper=False)
    q = rng.uniform(distance.lower, distance.upper, (count, 6))
    poses = distance.tree.link_poses(q)[:, distance.tree.frame_index("tool0")]
    near = np.clip(q + rng.uniform(-0.05, 0.05, q.shape), distance.lower, distance.upper)
    far = rng.uniform(distance.lower, distance.upper, (count, 6))
    ways = ((distance, "closed form"), (distance, "numeric distance"), (speed, "numeric speed"))
    for label, seeds in (("random seeds", far), ("seeds within 0.05 rad", near)):
        for solver, how in ways:
            switch = batch.uses_closed_form
            if how == "numeric distance":
                batch.uses_closed_form = lambda solver: False
            try:
                solver.solve_many(poses[:4], seed=seeds[:4], timeout=timeout)  # (compiled, warm)
                began = time.perf_counter()
                result = solver.solve_many(poses, seed=seeds, timeout=timeout)
                elapsed = time.perf_counter() - began
            finally:
                batch.uses_closed_form = switch
            nearest = nearest_share(distance, poses, seeds, result.q)
            print(
                f"{name:10s} {label:22s} {how:17s} {count / elapsed:9.0f} /s  "
                f"success {100 * result.success.mean():5.1f} %  nearest {100 * nearest:5.1f} %"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=5000)
    parser.add_argument("--timeout", type=float, default=0.005)
    arguments = parser.parse_args()
    rng = np.random.default_rng(36)
    urdf = bundled_urdf("arm6").read_text()
    run("arm6", urdf, arguments.targets, arguments.timeout, rng)
    run("arm6 1e-4", tilted(urdf, 1e-4, rng), arguments.targets, arguments.timeout, rng)


if __name__ == "__main__":
    main()
