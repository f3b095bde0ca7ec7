"""Reachability-map benchmark: the map job's poses/s on this machine and on a Dask LocalCluster,
beside solve_many alone on the same poses, and what bounds the cost of unreachable samples.

Usage: python benchmark/bench_reach.py [--robot arm7] [--resolution 0.1] [--orientations 50]
           [--attempts 8] [--no-cluster] [--budget-sample 2000] [--recall-voxels 300] [--chains]
           [--only-chains] [--repeat 3]

Measured, for one robot (default: the bundled 7-DOF arm, base_link -> tool0):

* **map job**: :func:`ik_node.reach.reachability_map` end to end (solvers built, targets made,
  solved in chunks, manipulability, the chunk files, the HDF5 file, a progress callback);
* **solve_many alone**: the same solve_many calls on the same poses with the same solvers, the
  targets made beforehand (the position screen on every voxel, then every orientation of the
  voxels it passes): the job must be within 10 % of it. The two alternate ``--repeat`` times
  (the median ratio is the verdict): other work on the machine weighs on both alike;
* **LocalCluster**: the same map through a ``distributed.LocalCluster`` of 2 worker processes
  (1 thread each; loopback), total and per worker, and whether its file equals the local one;
* **bounding unreachable samples**: poses/s and poses solved with a 5 ms budget per solve
  (sampled: unreachable poses take the whole budget), with the attempt budget alone, and with the
  position screen; the attempt budget's recall against 64 attempts on a sample of voxels;
* ``--chains`` (``--only-chains``: without the map): solve_many's solves/s on every bundled single
  chain, TRAC-IK-protocol targets (FK of uniform in-limit configurations, seeded at mid-range,
  5 ms, 1e-5 m and rad), ``--repeat`` runs each (median, slowest, fastest).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
from machine import cpu_model  # (benchmark/, the script's directory)

from ik_node import IKSolver, load_robot
from ik_node.description import catalogue
from ik_node.reach import MapOptions, reachability_map
from ik_node.reach.sampling import orientation_samples


def _robot(name: str):
    case = catalogue.case(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return case, load_robot(case.urdf)


def _pose_targets(voxels, rotations) -> np.ndarray:
    targets = np.empty((len(voxels), len(rotations), 4, 4))
    targets[:, :, :3, :3] = rotations[None]
    targets[:, :, :3, 3] = voxels[:, None]
    targets[:, :, 3, :] = (0.0, 0.0, 0.0, 1.0)
    return targets.reshape(-1, 4, 4)


def _position_targets(voxels) -> np.ndarray:
    targets = np.repeat(np.eye(4)[None], len(voxels), axis=0)
    targets[:, :3, 3] = voxels
    return targets


def map_job(robot, case, arguments, directory: Path, scheduler=None) -> tuple[float, object, Path]:
    out = directory / ("cluster.h5" if scheduler else "local.h5")
    began = time.perf_counter()
    reach_map = reachability_map(
        robot,
        case.base,
        case.tips[0],
        MapOptions(arguments.resolution, orientations=arguments.orientations, attempts=arguments.attempts),
        out=out,
        overwrite=True,
        scheduler=scheduler,
        keep_poses=False,
        progress=lambda done, total: None,
    )
    return time.perf_counter() - began, reach_map, out


class SolveManyAlone:
    """The map's solve_many calls on their own: the same solvers' options, the targets made
    beforehand (the position screen on every voxel, then every orientation of the voxels it
    passes)."""

    def __init__(self, robot, case, arguments, reach_map):
        options = dict(max_attempts=arguments.attempts, position_tolerance=1e-5, orientation_tolerance=1e-5)
        tip = case.tips[0]
        self.pose_solver = IKSolver(robot, case.base, [tip], **options)
        self.position_solver = IKSolver(robot, case.base, [tip], tasks={tip: "position"}, **options)
        self.rotations = orientation_samples(arguments.orientations)
        self.voxels, self.reached = reach_map.voxels, int(reach_map.reached.sum())
        self.screen_targets = _position_targets(self.voxels)
        self.pose_solver.solve_many(self.screen_targets[:2], timeout=None)  # solve_many's kernel loaded
        screen = self.position_solver.solve_many(self.screen_targets, timeout=None)
        self.pose_targets = _pose_targets(self.voxels[screen.success], self.rotations)

    def same_calls(self) -> float:
        """Seconds of the screen's and the poses' solve_many calls."""
        began = time.perf_counter()
        self.position_solver.solve_many(self.screen_targets, timeout=None)
        solved = self.pose_solver.solve_many(self.pose_targets, timeout=None)
        seconds = time.perf_counter() - began
        assert solved.success.sum() == self.reached, "solve_many alone disagrees with the map"
        return seconds

    def unscreened(self) -> tuple[float, int]:
        """(seconds, poses solved) of solve_many on every pose, without the screen."""
        everything = _pose_targets(self.voxels, self.rotations)
        began = time.perf_counter()
        batch = self.pose_solver.solve_many(everything, timeout=None)
        return time.perf_counter() - began, int(batch.success.sum())


def budget_sample(robot, case, arguments, reach_map) -> tuple[float, float, int]:
    """solve_many with a 5 ms budget (no attempt bound) on a random sample of the map's poses:
    (poses/s, fraction solved, sample size)."""
    rng = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(zlib.crc32(b"budget"),)))
    targets = _pose_targets(reach_map.voxels, orientation_samples(arguments.orientations))
    sample = targets[np.sort(rng.choice(len(targets), arguments.budget_sample, replace=False))]
    solver = IKSolver(robot, case.base, [case.tips[0]], position_tolerance=1e-5, orientation_tolerance=1e-5)
    solver.solve_many(sample[:2])
    began = time.perf_counter()
    batch = solver.solve_many(sample, timeout=0.005)
    return len(sample) / (time.perf_counter() - began), float(batch.success.mean()), len(sample)


def recall(robot, case, arguments, reach_map) -> list[tuple[int, int, float]]:
    """Poses solved with 1, 2, 4, 8, 16 attempts against 64, on the orientations of a sample of
    the voxels the screen passes: [(attempts, solved, seconds)]."""
    rng = np.random.default_rng(1)
    passed = np.flatnonzero(reach_map.position_reachable)
    voxels = reach_map.voxels[
        np.sort(rng.choice(passed, min(arguments.recall_voxels, len(passed)), replace=False))
    ]
    targets = _pose_targets(voxels, orientation_samples(arguments.orientations))
    rows = []
    for attempts in (1, 2, 4, 8, 16, 64):
        solver = IKSolver(robot, case.base, [case.tips[0]], max_attempts=attempts)
        began = time.perf_counter()
        batch = solver.solve_many(targets, timeout=None)
        rows.append((attempts, int(batch.success.sum()), time.perf_counter() - began))
    return rows


def cluster_run(robot, case, arguments, directory: Path):
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        # a first small map loads the kernels in the workers (as a long run amortises it)
        reachability_map(
            robot, case.base, case.tips[0], 0.3, orientations=4, scheduler=cluster.scheduler_address
        )
        return map_job(robot, case, arguments, directory, scheduler=cluster.scheduler_address)


def chains(samples: int, repeat: int) -> None:
    print(
        f"\nsolve_many on the bundled single chains: {samples} FK targets of uniform in-limit configurations,"
    )
    print(
        "seeded at mid-range (the rest posture), 5 ms, 1e-5 m and rad (solver's own verdict); "
        f"{repeat} runs each, after one of 4 targets"
    )
    print(f"{'robot':<22}{'DOF':>4}{'solved %':>10}{'solves/s, median':>18}{'slowest':>10}{'fastest':>10}")
    for case in catalogue.BUNDLED:
        if not case.single_chain:
            continue
        _, robot = _robot(case.name)
        solver = IKSolver(robot, case.base, list(case.tips))
        rng = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(zlib.crc32(case.name.encode()),)))
        lower = np.where(np.isfinite(solver.lower), solver.lower, -np.pi)
        upper = np.where(np.isfinite(solver.upper), solver.upper, np.pi)
        targets = np.array([solver.tip_poses(q)[0] for q in rng.uniform(lower, upper, (samples, len(lower)))])
        solver.solve_many(targets[:4])
        rates = []
        for _ in range(repeat):
            began = time.perf_counter()
            batch = solver.solve_many(targets, timeout=0.005)
            rates.append(samples / (time.perf_counter() - began))
        print(
            f"{case.name:<22}{len(lower):>4}{100 * batch.success.mean():>10.1f}{np.median(rates):>18,.0f}"
            f"{min(rates):>10,.0f}{max(rates):>10,.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="arm7", help="a catalogue case with one tip (arm7)")
    parser.add_argument("--resolution", type=float, default=0.1, help="voxel size [m] (0.1)")
    parser.add_argument("--orientations", type=int, default=50, help="orientations per voxel (50)")
    parser.add_argument("--attempts", type=int, default=8, help="attempts per pose (8)")
    parser.add_argument("--repeat", type=int, default=3, help="map job / solve_many alone pairs (3)")
    parser.add_argument("--no-cluster", action="store_true", help="skip the LocalCluster run")
    parser.add_argument(
        "--budget-sample", type=int, default=2000, help="poses solved with a 5 ms budget (2000)"
    )
    parser.add_argument("--recall-voxels", type=int, default=300, help="voxels of the attempts' recall (300)")
    parser.add_argument("--chains", action="store_true", help="also solve_many on every bundled chain")
    parser.add_argument("--chain-samples", type=int, default=20000, help="targets per chain (20000)")
    parser.add_argument("--only-chains", action="store_true", help="solve_many on the chains, no map")
    arguments = parser.parse_args()
    case, robot = _robot(arguments.robot)
    print(f"machine: {cpu_model()}, {len(os.sched_getaffinity(0))} usable CPUs")
    if arguments.only_chains:
        chains(arguments.chain_samples, arguments.repeat)
        return
    print(
        f"map: {case.name} {case.base} -> {case.tips[0]}, resolution {arguments.resolution:g} m, "
        f"{arguments.orientations} orientations, {arguments.attempts} attempts, position screen"
    )
    with tempfile.TemporaryDirectory() as directory:
        directory = Path(directory)
        map_job(robot, case, argparse.Namespace(**{**vars(arguments), "resolution": 0.3}), directory)  # warm
        seconds, reach_map, local_file = map_job(robot, case, arguments, directory)
        poses = reach_map.metadata["poses"]
        alone_runner = SolveManyAlone(robot, case, arguments, reach_map)
        # alternated, so that a load elsewhere on the machine weighs on both alike
        pairs = [(seconds, alone_runner.same_calls())]
        for _ in range(arguments.repeat - 1):
            pairs.append((map_job(robot, case, arguments, directory)[0], alone_runner.same_calls()))
        header = f"{'run':<6}{'map job s':>11}{'poses/s':>10}{'solve_many alone s':>20}{'poses/s':>10}"
        print(f"\n{header}{'ratio':>8}")
        for run, (job, alone) in enumerate(pairs, 1):
            rates = f"{poses / job:>10,.0f}{alone:>20.2f}{poses / alone:>10,.0f}"
            print(f"{run:<6}{job:>11.2f}{rates}{job / alone:>8.3f}")
        seconds = float(np.median([job for job, _ in pairs]))
        alone = float(np.median([alone for _, alone in pairs]))
        ratio = float(np.median([job / alone for job, alone in pairs]))
        print(
            f"median: map job {poses / seconds:,.0f} poses/s, solve_many alone {poses / alone:,.0f} poses/s, "
            f"map job / solve_many alone {ratio:.3f} (goal <= 1.10)"
        )
        unscreened, unscreened_solved = alone_runner.unscreened()
        reachable, screened = reach_map.reached.sum(), reach_map.position_reachable.sum()
        print(
            f"{reach_map.metadata['voxels']:,} voxels, {poses:,} poses, {reachable:,} reachable "
            f"({100 * reach_map.reached.mean():.1f} %), {screened:,} voxels pass the screen"
        )
        print("\nbounding unreachable samples (poses/s over the map's poses):")
        print(f"  attempt budget + position screen (the map):  {poses / alone:>9,.0f}  solved {reachable:,}")
        rate_unscreened = poses / unscreened
        label = "attempt budget alone (no screen):"
        print(f"  {label:<45}{rate_unscreened:>9,.0f}  solved {unscreened_solved:,}")
        rate, solved, sample = budget_sample(robot, case, arguments, reach_map)
        print(
            f"  5 ms budget, no attempt bound ({sample} sampled): {rate:>7,.0f}  solved {100 * solved:.1f} % "
            f"(the map: {100 * reach_map.reached.mean():.1f} %)"
        )
        rows = recall(robot, case, arguments, reach_map)
        reference = rows[-1][1]
        print(f"\nattempts' recall on {arguments.recall_voxels} screened voxels (against 64 attempts):")
        for attempts, solved_count, took in rows:
            print(
                f"  {attempts:>3} attempts: {solved_count:,} solved "
                f"({100 * solved_count / reference:.2f} %), {took:.2f} s"
            )
        if not arguments.no_cluster:
            cluster_seconds, _, cluster_file = cluster_run(robot, case, arguments, directory)
            same = (
                hashlib.sha256(cluster_file.read_bytes()).digest()
                == hashlib.sha256(local_file.read_bytes()).digest()
            )
            print(
                f"\nLocalCluster, 2 worker processes x 1 thread (loopback): {cluster_seconds:.2f} s, "
                f"{poses / cluster_seconds:,.0f} poses/s, {poses / cluster_seconds / 2:,.0f} per worker; "
                f"file {'identical to' if same else 'DIFFERENT from'} the local one"
            )
    if arguments.chains:
        chains(arguments.chain_samples, arguments.repeat)


if __name__ == "__main__":
    sys.exit(main())
