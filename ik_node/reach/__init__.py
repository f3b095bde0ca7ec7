"""Reachability maps: where a robot's tip can reach, and how dexterously, over a voxel grid around
its base (docs/reach.md). The command and its parser (:mod:`.command`; ``ik_node reach`` or
``python -m ik_node.reach``), the Python API (:mod:`.map`), the poses sampled
(:mod:`.sampling`), the work on this machine or a Dask cluster (:mod:`.job`), the chunks kept
while a map is made (:mod:`.store`) and the HDF5 file in Reuleaux's layout (:mod:`.file`)."""

from .command import (
    MapOptions,
    ReachMap,
    add_reach_command,
    estimate_seconds,
    load_map,
    main,
    reachability_map,
    run_reach,
)

__all__ = [
    "MapOptions",
    "ReachMap",
    "add_reach_command",
    "estimate_seconds",
    "load_map",
    "main",
    "reachability_map",
    "run_reach",
]
