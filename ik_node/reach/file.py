"""Reachability maps on disk, in Reuleaux's HDF5 layout (its ``map_creator`` writes and its RViz
plugin and inverse-reachability tools read it) plus ik_node's own datasets, and as a picture.

Reuleaux's datasets, with its shapes, types and meaning:

* ``/Spheres/sphere_dataset``: float64 (S, 4), rows ``x y z ri`` [m, %]: every voxel with at least
  one reachable pose, its centre and reachability index (reachable poses / poses sampled × 100);
  attribute ``Resolution``: float32 (1,) [m];
* ``/Poses/poses_dataset``: float32 (P, 10), chunked, unlimited rows, rows ``x y z`` (the voxel's
  centre) ``x y z qx qy qz qw`` (a reachable tip pose in the base frame, quaternion in ROS
  order). Reuleaux puts its poses on a small sphere around the voxel centre; ours are at the
  centre (what was solved), the orientation carrying the approach direction.

ik_node's, under ``/ik_node`` (with the map's metadata as attributes of that group):
``voxels`` (V, 3) every sampled voxel centre [m]; ``reachability`` (V,) [%];
``manipulability`` (V,) the mean Yoshikawa manipulability of the voxel's solutions (NaN: none);
``position_reachable`` (V,) bool; ``orientations`` (N, 4) the sampled orientations ``x y z w``;
``reached`` (V, N) bool; ``solutions`` (P, nq) float64, the joint values of each row of
``/Poses/poses_dataset`` (``joint_names`` attribute).

A map is written whole, in one order, to a temporary name and renamed: the same map gives the
same bytes, and a file at the map's path is always complete.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ..errors import IKNodeError

__all__ = ["MapWriter", "load_map_arrays", "plot_map", "require_h5py"]

#: Rows per HDF5 chunk (and per write) of the pose-sized datasets.
ROWS_PER_BLOCK = 65536
#: The layout's name and version, an attribute of ``/ik_node``.
FORMAT = "reuleaux+ik_node 1"


def require_h5py():
    try:
        import h5py
    except ImportError:
        raise IKNodeError(
            "writing a map file needs h5py: pip install h5py (or ik_node's reach extra: pip install "
            "'.[reach]')"
        ) from None
    return h5py


class _Rows:
    """An (R, C) dataset filled in order in whole blocks of :data:`ROWS_PER_BLOCK` rows (so the
    bytes written do not depend on how the rows arrived)."""

    def __init__(self, dataset):
        self.dataset, self.buffer, self.filled, self.written = dataset, [], 0, 0

    def add(self, rows: np.ndarray) -> None:
        self.buffer.append(rows)
        self.filled += len(rows)
        while self.filled >= ROWS_PER_BLOCK:
            self._flush(ROWS_PER_BLOCK)

    def _flush(self, count: int) -> None:
        rows = np.concatenate(self.buffer) if len(self.buffer) != 1 else self.buffer[0]
        self.dataset[self.written : self.written + count] = rows[:count]
        self.buffer, self.filled, self.written = [rows[count:]], self.filled - count, self.written + count

    def close(self) -> None:
        if self.filled:
            self._flush(self.filled)


class MapWriter:
    """Writes a map of ``pose_count`` reachable poses to ``path`` (through ``path.tmp-PID``,
    renamed by :meth:`finish`). Add the rows in order with :meth:`add_poses`."""

    def __init__(self, path, pose_count: int, joint_count: int):
        h5py = require_h5py()
        self.path = Path(path)
        self.temporary = self.path.with_name(f"{self.path.name}.tmp-{os.getpid()}")
        self.file = h5py.File(self.temporary, "w")
        block = max(1, min(pose_count, ROWS_PER_BLOCK))
        poses = self.file.create_group("Poses").create_dataset(
            "poses_dataset", shape=(pose_count, 10), maxshape=(None, 10), chunks=(block, 10), dtype=np.float32
        )
        own = self.file.create_group("ik_node")
        solutions = own.create_dataset(
            "solutions",
            shape=(pose_count, joint_count),
            chunks=(block, max(joint_count, 1)),
            dtype=np.float64,
        )
        self._poses, self._solutions = _Rows(poses), _Rows(solutions)

    def add_poses(self, voxel_centres: np.ndarray, poses: np.ndarray, solutions: np.ndarray) -> None:
        """Rows: voxel centres (r, 3), poses (r, 7) ``x y z qx qy qz qw``, solutions (r, nq)."""
        self._poses.add(np.concatenate([voxel_centres, poses], axis=1).astype(np.float32))
        self._solutions.add(np.asarray(solutions, dtype=np.float64))

    def finish(self, arrays: dict, metadata: dict, resolution: float) -> None:
        """Write the per-voxel ``arrays`` (the ``/ik_node`` datasets but ``solutions``), the
        spheres and ``metadata`` (attributes of ``/ik_node``; lists and dicts as JSON), close the
        file and rename it to the map's path."""
        self._poses.close()
        self._solutions.close()
        reachable = arrays["reachability"] > 0
        spheres = np.concatenate(
            [arrays["voxels"][reachable], arrays["reachability"][reachable, None]], axis=1
        )
        sphere_dataset = self.file.create_group("Spheres").create_dataset(
            "sphere_dataset", data=spheres.astype(np.float64).reshape(-1, 4)
        )
        sphere_dataset.attrs.create("Resolution", np.array([resolution], dtype=np.float32))
        own = self.file["ik_node"]
        for name in (
            "voxels",
            "reachability",
            "manipulability",
            "position_reachable",
            "orientations",
            "reached",
        ):
            own.create_dataset(name, data=arrays[name])
        for name, value in metadata.items():
            own.attrs[name] = json.dumps(value) if isinstance(value, (list, tuple, dict)) else value
        self.file.close()
        os.replace(self.temporary, self.path)

    def abandon(self) -> None:
        try:
            self.file.close()
        finally:
            self.temporary.unlink(missing_ok=True)


def load_map_arrays(path) -> dict:
    """Every dataset of a map file by its name (``Spheres``, ``Poses``, then ``/ik_node``'s) and
    ``metadata`` (``/ik_node``'s attributes, JSON decoded)."""
    h5py = require_h5py()
    try:
        handle = h5py.File(path, "r")
    except OSError as error:
        raise IKNodeError(f"cannot read map '{path}' ({error})") from None
    with handle:
        if "ik_node" not in handle or "Poses" not in handle:
            raise IKNodeError(f"'{path}' is not an ik_node reachability map (no /ik_node or /Poses group)")
        out = {name: handle["ik_node"][name][()] for name in handle["ik_node"]}
        out["sphere_dataset"] = handle["Spheres/sphere_dataset"][()]
        out["poses_dataset"] = handle["Poses/poses_dataset"][()]
        metadata = {}
        for name, value in handle["ik_node"].attrs.items():
            if isinstance(value, bytes):
                value = value.decode()
            if isinstance(value, str) and value[:1] in "[{":
                value = json.loads(value)
            elif isinstance(value, np.generic):
                value = value.item()
            metadata[name] = value
        out["metadata"] = metadata
    return out


def plot_map(voxels, reachability, resolution: float, path, title: str = "") -> None:
    """Three slices through the base (the planes ``y = 0``, ``x = 0`` and ``z`` = the voxel layer
    holding the most reachable voxels) coloured by the reachability index [%], to ``path`` (PNG
    or any format matplotlib writes). Voxels not sampled are blank; sampled but unreachable ones
    are 0 %."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise IKNodeError("--plot needs matplotlib: pip install matplotlib") from None
    index = np.rint(np.asarray(voxels) / resolution).astype(np.int64)
    counts = np.bincount(index[:, 2] - index[:, 2].min(), weights=reachability > 0)
    layer = int(np.argmax(counts)) + index[:, 2].min() if len(index) else 0
    slices = (("x", "z", 1, 0, "y = 0"), ("y", "z", 0, 0, "x = 0"), ("x", "y", 2, layer, None))
    figure, axes = plt.subplots(1, 3, figsize=(15, 4.8), constrained_layout=True)
    image = None
    for axis, (horizontal, vertical, fixed, level, label) in zip(axes, slices):
        columns = {"x": 0, "y": 1, "z": 2}
        h, v = columns[horizontal], columns[vertical]
        rows = index[:, fixed] == level
        if not np.any(rows):
            axis.set_axis_off()
            continue
        low_h, low_v = index[rows, h].min(), index[rows, v].min()
        grid = np.full((index[rows, v].max() - low_v + 1, index[rows, h].max() - low_h + 1), np.nan)
        grid[index[rows, v] - low_v, index[rows, h] - low_h] = reachability[rows]
        extent = (
            (low_h - 0.5) * resolution,
            (low_h + grid.shape[1] - 0.5) * resolution,
            (low_v - 0.5) * resolution,
            (low_v + grid.shape[0] - 0.5) * resolution,
        )
        image = axis.imshow(grid, origin="lower", extent=extent, cmap="viridis", vmin=0, vmax=100)
        axis.plot(0, 0, marker="+", color="red", markersize=12)
        axis.set_xlabel(f"{horizontal} [m]")
        axis.set_ylabel(f"{vertical} [m]")
        axis.set_title(f"slice {label or f'z = {level * resolution:.3g} m'}")
        axis.set_aspect("equal")
    if image is not None:
        figure.colorbar(image, ax=list(axes), label="reachability index [%]", shrink=0.9)
    if title:
        figure.suptitle(title)
    try:
        figure.savefig(path, dpi=110)
    except OSError as error:
        raise IKNodeError(f"cannot write the plot '{path}' ({error.strerror or error})") from None
    finally:
        plt.close(figure)
