"""Reachability maps as a Python API: :func:`reachability_map` samples a voxel grid around the
base and orientations per voxel (:mod:`ik_node.reach.sampling`), solves every pose in chunks
(:mod:`ik_node.reach.job`, here or on a Dask cluster) and returns a :class:`ReachMap`; with
``out`` it also writes the map in Reuleaux's HDF5 layout (:mod:`ik_node.reach.file`).
Units: m, rad, s; quaternions ``x y z w``."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..compiled import jit
from ..errors import IKNodeError, OptionError
from ..solver import IKSolver
from . import sampling as reach_sampling
from .file import FORMAT, load_map_arrays, plot_map, require_h5py
from .job import MapSolvers, connect, run_dask, run_local
from .store import ChunkStore, assemble, open_store, prepare_output

__all__ = ["CHUNK_POSES", "MAX_POSES", "ReachMap", "estimate_seconds", "load_map", "reachability_map"]

#: Poses a map may hold without ``force`` (10 million: ~8 min at the planning rate on 2 cores).
MAX_POSES = 10_000_000
#: Map poses per second per core for estimates: measured on arm7 (0.05 and 0.1 m, 50
#: orientations, 8 attempts, position screen: 20,000-22,500 poses/s on a 2-core VM), rounded down.
PLANNING_RATE_PER_CORE = 10_000
#: Poses per chunk (a chunk is a run of whole voxels): ~2 s of work here, the unit of resuming.
CHUNK_POSES = 16384
#: Each search's attempt budget by default: 99.5 % of what 64 attempts solve on arm7 (docs/reach.md).
DEFAULT_ATTEMPTS = 8
DEFAULT_ORIENTATIONS = 50


@dataclass
class ReachMap:
    """A reachability map. Per voxel (V): ``voxels`` (V, 3) centres [m, base frame],
    ``reachability`` (V,) [%] (reachable poses / poses sampled × 100: Reuleaux's index),
    ``manipulability`` (V,) the mean Yoshikawa manipulability ``sqrt(det(J J^T))`` of the
    solutions (NaN: none), ``position_reachable`` (V,) bool, ``reached`` (V, N) bool per
    orientation; ``orientations`` (N, 4) ``x y z w``; per reachable pose (P, in voxel then
    orientation order): ``poses`` (P, 7) ``x y z qx qy qz qw`` and ``solutions`` (P, nq) in
    ``joint_names`` order (both None when not kept); ``metadata``: what the file stores; ``run``:
    timings and counts of this run."""

    voxels: np.ndarray
    reachability: np.ndarray
    manipulability: np.ndarray
    position_reachable: np.ndarray
    reached: np.ndarray
    orientations: np.ndarray
    poses: np.ndarray | None
    solutions: np.ndarray | None
    joint_names: tuple
    metadata: dict
    run: dict = field(default_factory=dict)

    @property
    def resolution(self) -> float:
        return float(self.metadata["resolution"])

    def spheres(self) -> np.ndarray:
        """Reuleaux's ``sphere_dataset`` rows ``x y z ri`` (S, 4) of the voxels with ri > 0."""
        keep = self.reachability > 0
        return np.concatenate([self.voxels[keep], self.reachability[keep, None]], axis=1)


def load_map(path) -> ReachMap:
    """A map file written by :func:`reachability_map` (or ``ik_node reach``), read back."""
    arrays = load_map_arrays(path)
    metadata = arrays["metadata"]
    rows = arrays["poses_dataset"].astype(float)
    return ReachMap(
        voxels=arrays["voxels"],
        reachability=arrays["reachability"],
        manipulability=arrays["manipulability"],
        position_reachable=arrays["position_reachable"],
        reached=arrays["reached"],
        orientations=arrays["orientations"],
        poses=rows[:, 3:],
        solutions=arrays["solutions"],
        joint_names=tuple(metadata.get("joint_names", ())),
        metadata=metadata,
    )


def estimate_seconds(poses: int, cores: int | None = None) -> float:
    """A rough duration [s] of a map of ``poses`` on ``cores`` cores (default: this machine's)."""
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return poses / (PLANNING_RATE_PER_CORE * max(cores or 1, 1))


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _positive(name: str, value, integer: bool = False) -> None:
    """:class:`~ik_node.errors.OptionError` naming option ``name`` unless ``value`` is a positive
    finite number (an integer: at least 1)."""
    kind = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or not math.isfinite(value) or value <= 0:
        raise OptionError(
            name, "must be at least 1 (an integer)" if integer else "must be a positive number", value
        )


def _description_digest(solver: IKSolver) -> str:
    """SHA-256 of what the solver's kinematics are: the tree's and task's arrays and the limits."""
    digest = hashlib.sha256()

    def add(value) -> None:
        if isinstance(value, tuple):
            for item in value:
                add(item)
        else:
            digest.update(np.ascontiguousarray(value).tobytes())

    add((solver.problem.tree_arrays, solver.problem.task, solver.lower, solver.upper))
    return digest.hexdigest()


def _sources_digest() -> str:
    package = Path(__file__).resolve().parent.parent
    paths = sorted([*jit.KERNEL_SOURCES, *package.glob("solver/*.py"), *package.glob("reach/*.py")])
    return hashlib.sha256(b"".join(path.read_bytes() for path in paths)).hexdigest()


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": platform.python_version()}
    for name in ("ik_node", "numpy", "numba"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


@dataclass(frozen=True)
class MapOptions:
    """What a map samples and how each pose is solved: the content of a map (the same options
    give the same map, here or on a cluster; a ``timeout`` makes it depend on the machine).

    Samples: voxel centres every ``resolution`` [m] within ``radius`` [m] of the centre of the
    tip's reach sphere (default: the whole sphere; needed behind a floating or planar joint),
    and per voxel ``orientations`` orientations: ``orientations / rolls`` approach directions
    on a Fibonacci sphere × ``rolls`` rolls (:mod:`ik_node.reach.sampling`); ``position_only``:
    the position alone, one sample per voxel. Each pose is solved from the rest posture with
    ``attempts`` attempts at most (restarts included; ``random_seed`` seeds the seed table and
    restarts), within ``tolerance`` [m and rad]; ``timeout`` [s] adds a time budget per solve.
    ``position_screen``: skip the orientations of voxels whose position alone is not reached.
    Unusable values raise :class:`~ik_node.errors.IKNodeError` naming the option (an
    :class:`~ik_node.errors.OptionError` for a value out of its range)."""

    resolution: float
    orientations: int = DEFAULT_ORIENTATIONS
    rolls: int = 1
    radius: float | None = None
    position_only: bool = False
    attempts: int | None = DEFAULT_ATTEMPTS
    timeout: float | None = None
    tolerance: float = 1e-5
    random_seed: int = 0
    position_screen: bool = True

    def __post_init__(self) -> None:
        for name in ("resolution", "tolerance"):
            _positive(name, getattr(self, name))
        for name in ("orientations", "rolls"):
            _positive(name, getattr(self, name), integer=True)
        for name in ("attempts", "timeout", "radius"):
            if getattr(self, name) is not None:
                _positive(name, getattr(self, name), integer=name == "attempts")
        if self.attempts is None and self.timeout is None:
            raise IKNodeError("a map needs attempts or a timeout per solve, or a search may never end")
        if not self.position_only and self.orientations % self.rolls:
            raise IKNodeError(
                f"orientations ({self.orientations}) must be a multiple of rolls ({self.rolls})"
            )

    @property
    def per_voxel(self) -> int:
        """Poses sampled per voxel."""
        return 1 if self.position_only else self.orientations


def reachability_map(
    robot,
    base_link: str,
    tip_link: str,
    options: MapOptions,
    *,
    out=None,
    overwrite: bool = False,
    resume: bool = False,
    scheduler: str | None = None,
    chunk_poses: int = CHUNK_POSES,
    max_poses: int | None = MAX_POSES,
    progress: Callable[[int, int], None] | None = None,
    keep_poses: bool = True,
    plot=None,
    metadata: dict | None = None,
) -> ReachMap:
    """The reachability map of ``tip_link`` over a voxel grid around ``base_link``, sampled and
    solved as ``options`` say (:class:`MapOptions`).

    How it runs: ``out``: write the map there (HDF5; an existing file is refused unless
    ``overwrite``), the chunks of ``chunk_poses`` poses kept as they finish in ``out + '.parts'``
    (removed at the end); ``resume`` continues from them. ``scheduler``: a Dask scheduler's
    address (``tcp://HOST:PORT``) whose workers solve the chunks. ``max_poses``: refuse bigger
    maps (None: no limit). ``progress(done, total)`` is called with pose counts after each
    chunk. ``keep_poses``: the reached poses and their solutions in the result. ``plot``: a
    picture of the map there. ``metadata``: more entries for the file's metadata.
    """
    started = time.perf_counter()
    _positive("chunk_poses", chunk_poses, integer=True)
    centre, reach, sample_radius = _sampled_sphere(robot, base_link, tip_link, options)
    pose_total = _counted_poses(options, centre, sample_radius, max_poses)
    store = prepare_output(out, overwrite, resume)
    if out is not None:
        require_h5py()
    with contextlib.ExitStack() as cleanup:
        client = None
        if scheduler:
            client = connect(scheduler)  # (before anything is built: a clear error within seconds)
            cleanup.callback(client.close)
        solvers = _map_solvers(robot, base_link, tip_link, options)
        samples = _samples(options, centre, sample_radius, chunk_poses)
        file_metadata = {
            **_file_metadata(robot, base_link, tip_link, options, solvers, centre, reach, sample_radius),
            "voxels": len(samples.voxels),
            "poses": len(samples.voxels) * options.per_voxel,
            **(metadata or {}),
        }
        job = {**file_metadata, "chunk_voxels": samples.chunk_voxels, "chunks": len(samples.bounds)}
        job_digest = hashlib.sha256(json.dumps(job, sort_keys=True).encode()).hexdigest()
        store = open_store(store, job, job_digest, resume)
        run = _solve_chunks(
            client,
            job_digest,
            solvers,
            samples,
            store,
            per_voxel=options.per_voxel,
            pose_total=pose_total,
            progress=progress,
        )
        reach_map = _assembled_map(store, samples, options, keep_poses, out, file_metadata)
        if plot is not None:
            title = (
                f"{robot.name}: {tip_link} from {base_link}, {options.resolution:g} m, "
                f"{options.per_voxel} orientations"
            )
            plot_map(reach_map.voxels, reach_map.reachability, options.resolution, plot, title)
        if isinstance(store, ChunkStore):
            store.remove()
        reach_map.run = {"seconds": time.perf_counter() - started, **run}
        return reach_map


def _counted_poses(options: MapOptions, centre, radius: float, max_poses: int | None) -> int:
    """The poses the map samples; IKNodeError when they are more than ``max_poses``."""
    voxel_total = reach_sampling.voxel_count(options.resolution, centre, radius)
    pose_total = voxel_total * options.per_voxel
    if max_poses is not None and pose_total > max_poses:
        raise IKNodeError(
            f"the map would hold {pose_total:,} poses ({voxel_total:,} voxels x {options.per_voxel} "
            f"orientations), more than {max_poses:,}: about {_duration(estimate_seconds(pose_total))} "
            "on this machine; pass force (--force) to run it, or a coarser resolution, fewer "
            "orientations or a smaller radius"
        )
    return pose_total


@dataclass(frozen=True)
class _Samples:
    """The poses of a map: ``voxels`` (V, 3) centres [m, base frame]; the orientations sampled
    in each, as ``rotations`` (N, 3, 3) and ``quaternions`` (N, 4) ``x y z w``; the chunks, runs
    of ``chunk_voxels`` voxels, as voxel ranges ``bounds`` ``[(start, stop), ...]``."""

    voxels: np.ndarray
    rotations: np.ndarray
    quaternions: np.ndarray
    chunk_voxels: int
    bounds: list


def _samples(options: MapOptions, centre, radius: float, chunk_poses: int) -> _Samples:
    """The voxels within ``radius`` of ``centre``, the orientations, in chunks of whole voxels
    of about ``chunk_poses`` poses."""
    voxels = reach_sampling.voxel_grid(options.resolution, centre, radius)
    rotations = (
        np.eye(3)[None]
        if options.position_only
        else reach_sampling.orientation_samples(options.orientations // options.rolls, options.rolls)
    )
    chunk_voxels = max(1, chunk_poses // options.per_voxel)
    bounds = [
        (start, min(start + chunk_voxels, len(voxels))) for start in range(0, len(voxels), chunk_voxels)
    ]
    return _Samples(voxels, rotations, reach_sampling.quaternions_xyzw(rotations), chunk_voxels, bounds)


def _solve_chunks(
    client,
    job_digest: str,
    solvers: MapSolvers,
    samples: _Samples,
    store,
    *,
    per_voxel: int,
    pose_total: int,
    progress: Callable[[int, int], None] | None,
) -> dict:
    """Solve the chunks ``store`` does not hold yet into it, here or (``client``) on the Dask
    cluster's workers; ``progress(done, pose_total)`` with pose counts after each chunk. Returns
    the run's time and counts (``ReachMap.run``)."""
    done_before = store.done()
    pending = [
        (index, samples.voxels[start:stop])
        for index, (start, stop) in enumerate(samples.bounds)
        if index not in done_before
    ]
    counted = [sum(samples.bounds[index][1] - samples.bounds[index][0] for index in done_before) * per_voxel]
    if progress:
        progress(counted[0], pose_total)

    def chunk_done(index: int, result: dict) -> None:
        counted[0] += len(result["reached"]) * per_voxel
        if progress:
            progress(counted[0], pose_total)

    solving = time.perf_counter()
    if client is not None:
        run_dask(client, job_digest, solvers, pending, samples.rotations, store, chunk_done)
    else:
        run_local(solvers, pending, samples.rotations, store, chunk_done)
    return {
        "solve_seconds": time.perf_counter() - solving,
        "chunks": len(samples.bounds),
        "chunks_resumed": len(done_before),
        "poses_solved": sum(len(voxels) for _, voxels in pending) * per_voxel,
    }


def _assembled_map(store, samples: _Samples, options, keep_poses: bool, out, metadata: dict) -> ReachMap:
    """The map from the chunks in ``store``, written to ``out`` when given
    (:func:`~ik_node.reach.store.assemble`)."""
    arrays, poses, solutions, metadata = assemble(
        store,
        samples.bounds,
        samples.voxels,
        samples.quaternions,
        options.per_voxel,
        keep_poses,
        out,
        metadata,
    )
    return ReachMap(
        voxels=samples.voxels,
        reachability=arrays["reachability"],
        manipulability=arrays["manipulability"],
        position_reachable=arrays["position_reachable"],
        reached=arrays["reached"],
        orientations=samples.quaternions,
        poses=poses,
        solutions=solutions,
        joint_names=tuple(metadata["joint_names"]),
        metadata=metadata,
    )


def _sampled_sphere(robot, base_link: str, tip_link: str, options: MapOptions) -> tuple:
    """(centre [m, base frame], reach radius, sampled radius) of the tip's reach sphere."""
    centre, reach = robot.tree(base_link, [tip_link]).reach(tip_link)
    if options.radius is None and not math.isfinite(reach):
        raise IKNodeError(
            f"'{tip_link}' has no bounded reach from '{base_link}' (a floating or planar joint on the way): "
            "give a radius"
        )
    radius = options.radius if options.radius is not None else reach
    return centre, reach, min(radius, reach * (1 + 1e-6) + options.tolerance)


def _map_solvers(robot, base_link: str, tip_link: str, options: MapOptions) -> MapSolvers:
    """The pose solver (none for a position-only map) and the position solver (the screen's,
    or a position-only map's), with the options' attempts, random seed and tolerance."""
    settings = dict(
        max_attempts=options.attempts,
        random_seed=options.random_seed,
        position_tolerance=options.tolerance,
        orientation_tolerance=options.tolerance,
    )
    pose_solver = None if options.position_only else IKSolver(robot, base_link, [tip_link], **settings)
    position_solver = (
        IKSolver(robot, base_link, [tip_link], tasks={tip_link: "position"}, **settings)
        if options.position_only or options.position_screen
        else None
    )
    return MapSolvers(pose_solver, position_solver, options.timeout)


def _file_metadata(robot, base_link, tip_link, options: MapOptions, solvers, centre, reach, radius) -> dict:
    """What the file says of how the map was made (the job's identity when resuming)."""
    reference = solvers.pose or solvers.position
    return {
        "format": FORMAT,
        "robot": robot.name,
        "description_sha256": _description_digest(reference),
        "base": base_link,
        "tip": tip_link,
        "joint_names": list(reference.joint_names),
        "task": "position" if options.position_only else "pose",
        "resolution": float(options.resolution),
        "centre": [float(value) for value in centre],
        "radius": float(radius),
        "reach_radius": float(reach),
        "directions": 1 if options.position_only else options.orientations // options.rolls,
        "rolls": 1 if options.position_only else options.rolls,
        "orientations": options.per_voxel,
        "approach_axis": "z",
        "sampling": reach_sampling.SAMPLING,
        "position_screen": bool(options.position_screen and not options.position_only),
        "attempts": options.attempts if options.attempts is not None else "none",
        "timeout": options.timeout if options.timeout is not None else "none",
        "deterministic": options.timeout is None,
        "tolerance": float(options.tolerance),
        "random_seed": int(options.random_seed),
        "method": reference.options.method,
        "seed": "the rest posture (mid-range)",
        "versions": _versions(),
        "sources_sha256": _sources_digest(),
    }
