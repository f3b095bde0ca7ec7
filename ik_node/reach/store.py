"""Where a reachability map's chunks are kept while it is made (in memory, or a directory beside
the map file, resumable), the checks of the output path, and the map put together from the chunks
in order (and written, :class:`ik_node.reach.file.MapWriter`)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np

from ..errors import IKNodeError
from .file import MapWriter

__all__ = ["ChunkStore", "MemoryStore", "assemble", "open_store", "prepare_output"]


class MemoryStore:
    """Chunk results in memory (a map without an output file)."""

    def __init__(self):
        self._chunks: dict[int, dict] = {}

    def done(self) -> set[int]:
        return set(self._chunks)

    def write(self, index: int, result: dict) -> bool:
        """Keep ``result`` unless chunk ``index`` is kept already; True if it was new."""
        if index in self._chunks:
            return False
        self._chunks[index] = result
        return True

    def read(self, index: int) -> dict:
        return self._chunks[index]

    def remove(self) -> None:
        self._chunks.clear()


class ChunkStore(MemoryStore):
    """Chunk results in a directory beside the map (``map.h5.parts/``), one ``.npz`` file per
    chunk, written to a temporary name and renamed (a chunk file is whole or absent, whenever
    the run stops), with ``job.json``: the job's digest, which a resumed run must match."""

    _NAME = re.compile(r"chunk-(\d+)\.npz$")

    def __init__(self, directory: Path):
        super().__init__()
        self.directory = Path(directory)

    @property
    def job_file(self) -> Path:
        return self.directory / "job.json"

    def exists(self) -> bool:
        return self.job_file.is_file()

    def create(self, job_text: str) -> None:
        """A new, empty store holding ``job_text`` (the job's JSON); IKNodeError if the
        directory cannot be written."""
        try:
            self.directory.mkdir(parents=False, exist_ok=True)
            _write_atomically(self.job_file, job_text.encode())
        except OSError as error:
            raise IKNodeError(
                f"cannot write beside the map: {self.directory} ({error.strerror or error}); "
                "choose an --output in a writable directory"
            ) from None

    def done(self) -> set[int]:
        return {
            int(match.group(1)) for path in self.directory.iterdir() if (match := self._NAME.match(path.name))
        }

    def _path(self, index: int) -> Path:
        return self.directory / f"chunk-{index:07d}.npz"

    def write(self, index: int, result: dict) -> bool:
        path = self._path(index)
        if path.exists():
            return False
        arrays = {name: value for name, value in result.items() if value is not None}
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(temporary, "wb") as handle:
            np.savez(handle, **arrays)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        return True

    def read(self, index: int) -> dict:
        with np.load(self._path(index)) as data:
            return {name: data[name] for name in data.files}

    def remove(self) -> None:
        for path in self.directory.iterdir():
            path.unlink()
        self.directory.rmdir()


def _write_atomically(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def prepare_output(out, overwrite: bool, resume: bool):
    """The chunk store for ``out`` (a :class:`MemoryStore` without one), after the checks of an
    existing file and of the directory; IKNodeError naming the problem."""
    if out is None:
        return MemoryStore()
    path = Path(out)
    store = ChunkStore(path.with_name(path.name + ".parts"))
    if path.is_dir():
        raise IKNodeError(f"--output '{out}' is a directory; give a file name such as map.h5")
    if not path.parent.is_dir():
        raise IKNodeError(f"--output '{out}': the directory '{path.parent}' does not exist")
    if overwrite:
        if store.directory.is_dir():
            store.remove()
        return store
    if store.exists() and not resume:
        raise IKNodeError(
            f"an interrupted run of '{out}' left its chunks in '{store.directory}': pass --resume to "
            "continue it, or --overwrite to start again"
        )
    if path.exists() and not store.exists():
        raise IKNodeError(
            f"'{out}' exists"
            + (" and no interrupted run of it is left to resume" if resume else "")
            + "; pass --overwrite to replace it"
        )
    return store


def open_store(store, job: dict, job_digest: str, resume: bool):
    """``store`` ready for the job: a new one, or (resuming) the interrupted run's, which must be
    of the same job."""
    if not isinstance(store, ChunkStore):
        return store
    text = json.dumps({"digest": job_digest, "job": job}, indent=1, sort_keys=True)
    if resume and store.exists():
        previous = json.loads(store.job_file.read_text())
        if previous.get("digest") != job_digest:
            different = sorted(
                name
                for name in set(job) | set(previous.get("job", {}))
                if job.get(name) != previous.get("job", {}).get(name)
            )
            raise IKNodeError(
                f"--resume: the chunks in '{store.directory}' are of another job (it differs in "
                f"{', '.join(different) or 'its digest'}); run the same command, or --overwrite"
            )
        return store
    store.create(text)
    return store


def assemble(store, bounds, voxels, quaternions, per_voxel, keep_poses, out, metadata) -> tuple:
    """The map from the chunks in order, and its file when ``out``: (the per-voxel arrays, the
    reachable poses (P, 7) and their solutions (P, nq), or None without ``keep_poses``, the
    metadata with the counts)."""
    count = len(voxels)
    reached = np.zeros((count, per_voxel), dtype=bool)
    position_reachable = np.zeros(count, dtype=bool)
    manipulability = np.full(count, np.nan)
    for index, (start, stop) in enumerate(bounds):
        chunk = store.read(index)
        reached[start:stop] = chunk["reached"]
        position_reachable[start:stop] = chunk["position_reached"]
        manipulability[start:stop] = chunk["manipulability"]
    pose_count = int(reached.sum())
    joint_count = len(metadata["joint_names"])
    writer = MapWriter(out, pose_count, joint_count) if out is not None else None
    poses, solutions = [], []
    try:
        for index, (start, _) in enumerate(bounds):
            chunk = store.read(index)
            voxel_index, orientation_index = np.nonzero(chunk["reached"])
            centres = voxels[start + voxel_index]
            rotation = chunk["quaternions"] if "quaternions" in chunk else quaternions[orientation_index]
            rows = np.concatenate([centres, rotation], axis=1)
            if writer is not None:
                writer.add_poses(centres, rows, chunk["solutions"])
            if keep_poses:
                poses.append(rows)
                solutions.append(chunk["solutions"])
        reachability = reached.sum(axis=1) * (100.0 / per_voxel)
        arrays = {
            "voxels": voxels,
            "reachability": reachability,
            "manipulability": manipulability,
            "position_reachable": position_reachable,
            "orientations": quaternions,
            "reached": reached,
        }
        metadata = {
            **metadata,
            "reachable_poses": pose_count,
            "reachable_voxels": int(np.sum(reachability > 0)),
        }
        if writer is not None:
            writer.finish(arrays, metadata, float(metadata["resolution"]))
    except BaseException:
        if writer is not None:
            writer.abandon()
        raise
    if keep_poses:
        poses = np.concatenate(poses) if poses else np.empty((0, 7))
        solutions = np.concatenate(solutions) if solutions else np.empty((0, joint_count))
    else:
        poses = solutions = None
    return arrays, poses, solutions, metadata
