"""The work of a reachability map: chunks of voxels solved with :meth:`IKSolver.solve_many` on
this machine or on a Dask cluster's workers, each chunk's result handed to a store as it
finishes (:mod:`ik_node.reach.store`: a file per chunk, written atomically, so that an interrupted
run resumes from them).

A chunk's result depends on its voxels, the orientations and the solvers only (each target is
solved from the same seed with its own restart stream, and with an attempt budget no clock ends
a search), never on the chunking, the order or the machine's load: so a local run and a
cluster's give the same map, bit for bit.

How the cost of unreachable samples is bounded (measured in docs/reach.md):

* **reach test**: voxel centres outside the tip's reach sphere are never sampled;
* **position screen**: a voxel's orientations are solved only if its position alone (a position
  task, the same attempt budget) is reached: where the position is not, no orientation is;
* **attempt budget**: each search ends after ``attempts`` attempts (restarts included), not after
  a time budget: an unreachable pose costs ``attempts`` short attempts rather than 5 ms.
"""

from __future__ import annotations

import pickle
import socket
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ..errors import IKNodeError

__all__ = ["MapSolvers", "connect", "run_dask", "run_local", "solve_chunk", "solve_chunk_on_worker"]

#: How long ``--scheduler`` may take to answer before the run is refused [s].
SCHEDULER_TIMEOUT = 5.0
#: Chunks in flight per worker thread on a cluster (the next is sent as one finishes).
CHUNKS_IN_FLIGHT_PER_THREAD = 2
#: A chunk that fails on a worker (an exception, not a worker's death) is tried this many more times.
TASK_RETRIES = 2


@dataclass
class MapSolvers:
    """What solves a chunk: the pose solver (None for a position-only map), the position solver
    (None without the position screen in a pose map), and the time budget per solve [s] (None:
    the solvers' ``max_attempts`` alone bounds each search)."""

    pose: object
    position: object
    timeout: float | None

    @property
    def position_only(self) -> bool:
        return self.pose is None


def solve_chunk(solvers: MapSolvers, voxels: np.ndarray, rotations: np.ndarray) -> dict:
    """Solve the poses of ``voxels`` (k, 3) [m] × ``rotations`` (N, 3, 3) (one, unused, for a
    position-only map). Returns arrays: ``position_reached`` (k,) bool (the screen's or the
    position-only map's verdict; all True without a screen), ``reached`` (k, N) bool,
    ``solutions`` (r, nq) of the reached poses in voxel-major, orientation-minor order,
    ``manipulability`` (k,) (mean over the voxel's solutions; NaN where none) and, for a
    position-only map, ``quaternions`` (r, 4) ``x y z w`` of the orientations reached."""
    count, orientations = len(voxels), len(rotations)
    position_reached = np.ones(count, dtype=bool)
    if solvers.position is not None:
        targets = np.repeat(np.eye(4)[None], count, axis=0)
        targets[:, :3, 3] = voxels
        batch = solvers.position.solve_many(targets, timeout=solvers.timeout)
        position_reached = batch.success
        if solvers.position_only:
            return _results(solvers.position, position_reached[:, None], batch.q[batch.success], count, True)
    candidates = np.flatnonzero(position_reached)
    targets = np.empty((len(candidates), orientations, 4, 4))
    targets[:, :, :3, :3] = rotations[None]
    targets[:, :, :3, 3] = voxels[candidates, None]
    targets[:, :, 3, :] = (0.0, 0.0, 0.0, 1.0)
    reached = np.zeros((count, orientations), dtype=bool)
    solutions = np.empty((0, len(solvers.pose.joint_names)))
    if len(candidates):
        batch = solvers.pose.solve_many(targets.reshape(-1, 4, 4), timeout=solvers.timeout)
        reached[candidates] = batch.success.reshape(len(candidates), orientations)
        solutions = batch.q[batch.success]
    result = _results(solvers.pose, reached, solutions, count, False)
    result["position_reached"] = position_reached
    return result


def _results(solver, reached: np.ndarray, solutions: np.ndarray, count: int, position_only: bool) -> dict:
    """The chunk's arrays (see :func:`solve_chunk`), the figures of the solutions computed here."""
    solutions = np.ascontiguousarray(solutions, dtype=float)
    points, manipulability = solver.solution_figures(solutions)
    per_voxel = reached.sum(axis=1)
    owner = np.repeat(np.arange(count), per_voxel)
    sums = np.bincount(owner, weights=manipulability, minlength=count)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(per_voxel > 0, sums / np.maximum(per_voxel, 1), np.nan)
    result = {
        "position_reached": reached[:, 0].copy() if position_only else None,
        "reached": reached,
        "solutions": solutions,
        "manipulability": mean,
    }
    if position_only:
        from .sampling import quaternions_xyzw

        result["quaternions"] = quaternions_xyzw(points[:, :3, :3])
    return result


# ------------------------------------------------------------------ running the chunks

#: Progress callback: (chunk index, its result) after each chunk is kept.
ChunkDone = Callable[[int, dict], None]


def run_local(
    solvers: MapSolvers, chunks: Iterable[tuple[int, np.ndarray]], rotations, store, done: ChunkDone
):
    """Solve ``chunks`` ((index, voxels) pairs) here, one after another (each over every core:
    :meth:`IKSolver.solve_many`), keeping each in ``store`` as it finishes."""
    for index, voxels in chunks:
        result = solve_chunk(solvers, voxels, rotations)
        if store.write(index, result):
            done(index, result)


# One entry: the solvers of the job this worker process serves (by the digest of their pickle).
_worker_solvers: dict[str, MapSolvers] = {}


def solve_chunk_on_worker(key: str, solvers_pickle: bytes, voxels, rotations) -> dict:
    """:func:`solve_chunk` on a Dask worker: the solvers are unpickled once per worker process
    (their kernels then load from the worker's numba cache at the first solve), not per chunk."""
    solvers = _worker_solvers.get(key)
    if solvers is None:
        solvers = pickle.loads(solvers_pickle)
        _worker_solvers.clear()
        _worker_solvers[key] = solvers
    return solve_chunk(solvers, voxels, rotations)


def connect(address: str, timeout: float = SCHEDULER_TIMEOUT):
    """A ``distributed.Client`` of the scheduler at ``address``, or IKNodeError within
    ``timeout`` [s] saying why (the address is parsed, then its port tried with a plain TCP
    connection: a refused or silent one fails before any Client exists)."""
    try:
        from distributed import Client
        from distributed.comm.addressing import parse_address, parse_host_port
    except ImportError:
        raise IKNodeError(
            "--scheduler needs Dask's distributed package: pip install 'dask[distributed]' (or "
            "ik_node's reach extra: pip install '.[reach]')"
        ) from None
    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location)
    except ValueError as error:
        raise IKNodeError(
            f"--scheduler '{address}' is not an address like tcp://HOST:PORT ({error})"
        ) from None
    advice = "start one with 'dask scheduler' and workers with 'dask worker ADDRESS' (docs/reach.md)"
    if scheme in ("tcp", "tls"):
        try:
            socket.create_connection((host, port), timeout=timeout).close()
        except OSError as error:
            raise IKNodeError(
                f"cannot reach the Dask scheduler at '{address}' within {timeout:g} s "
                f"({error.strerror or error}); {advice}"
            ) from None
    try:
        return Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        raise IKNodeError(
            f"cannot reach the Dask scheduler at '{address}' within {timeout:g} s ({error}); {advice}"
        ) from None


def run_dask(
    client, job_digest: str, solvers: MapSolvers, chunks: list[tuple[int, np.ndarray]], rotations, store, done
):
    """Solve ``chunks`` on the cluster behind ``client``, a few chunks in flight per worker
    thread, keeping each in ``store`` as its result arrives. A worker that dies loses the chunks it
    held; the scheduler runs them again elsewhere (``distributed.scheduler.allowed-failures``), and
    a chunk already kept is never written again."""
    from distributed import as_completed

    solvers_pickle = pickle.dumps(solvers)
    threads = sum(client.nthreads().values())
    if not threads:
        warnings.warn(
            "the Dask scheduler has no workers yet: the chunks wait for the first to connect "
            "('dask worker ADDRESS' on the machines that solve)",
            RuntimeWarning,
            stacklevel=2,
        )
    window = max(2, CHUNKS_IN_FLIGHT_PER_THREAD * max(threads, 1))
    pending = list(reversed(chunks))
    outstanding = {}  # future key -> (chunk index, future)

    def submit_next():
        index, voxels = pending.pop()
        future = client.submit(
            solve_chunk_on_worker,
            job_digest,
            solvers_pickle,
            voxels,
            rotations,
            key=f"ik_node-reach-{job_digest[:16]}-{index}",
            retries=TASK_RETRIES,
            pure=False,
        )
        outstanding[future.key] = (index, future)
        return future

    try:
        running = as_completed([submit_next() for _ in range(min(window, len(pending)))], loop=client.loop)
        for future in running:
            index, _ = outstanding.pop(future.key)
            result = future.result()
            future.release()
            if store.write(index, result):
                done(index, result)
            if pending:
                running.add(submit_next())
    finally:
        if outstanding:
            client.cancel([future for _, future in outstanding.values()])
