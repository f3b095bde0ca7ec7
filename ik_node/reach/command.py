"""Reachability maps: where a robot's tip can reach, and how dexterously, over a voxel grid
around its base, on this machine or a Dask cluster; written in Reuleaux's HDF5 layout.

The library: :func:`reachability_map` (returns a :class:`ReachMap` of arrays; writes the file
when given ``out``), :func:`load_map`. The command: ``ik_node reach --urdf FILE --base B --tip T
--resolution 0.05 --output map.h5`` (also ``python -m ik_node.reach ...``); the parser and its run
function live here (:func:`add_reach_command`, :func:`run_reach`), registered by
:mod:`ik_node.cli`. Details, sampling, file layout and measured rates: docs/reach.md.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
import warnings
from pathlib import Path

from ..description import add_robot_arguments, robot_from_arguments
from ..errors import IKNodeError, OptionError
from .job import SCHEDULER_TIMEOUT
from .map import (
    CHUNK_POSES,
    DEFAULT_ATTEMPTS,
    DEFAULT_ORIENTATIONS,
    MAX_POSES,
    MapOptions,
    ReachMap,
    estimate_seconds,
    load_map,
    reachability_map,
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

#: Exit codes, as the ``ik_node`` command's: 2 for unusable input; 1 when a run stopped before
#: its end (a worker's error, a lost scheduler: the chunks kept resume with --resume); 130 Ctrl-C.
EXIT_OK, EXIT_STOPPED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130

DESCRIPTION = """\
A reachability map: voxel centres every --resolution metres around the base (within the tip's
reach), --orientations orientations per voxel (approach directions on a Fibonacci sphere x
--rolls rolls about them; the tip's z axis along the direction), IK on every pose; per voxel the
reachability index (%% of orientations solved) and the mean manipulability of the solutions.
Written to --output in Reuleaux's HDF5 layout (/Spheres/sphere_dataset, /Poses/poses_dataset) with
ik_node's datasets under /ik_node."""

EPILOG = """\
examples:
  ik_node reach --urdf urdf/arm7.urdf --base base_link --tip tool0 --resolution 0.05 --output arm7.h5
  ik_node reach ... --position-only --output arm7_position.h5 --plot arm7.png
  ik_node reach ... --scheduler tcp://10.0.0.5:8786          # a Dask cluster's workers solve

Each search stops after --attempts attempts: the same command and --random-seed give the same file,
bit for bit, here or on a cluster. --timeout adds a time budget per solve (results then depend
on the machine). Chunks are kept in OUT.parts/ as they finish: after an interruption, run the
same command with --resume.

exit codes: 0 done; 1 stopped before the end (resume with --resume); 2 bad input; 130 Ctrl-C
"""


def add_reach_command(subparsers) -> argparse.ArgumentParser:
    """Add the ``reach`` subcommand to an ``add_subparsers()`` object; returns its parser (whose
    ``run`` default is :func:`run_reach`)."""
    command = subparsers.add_parser(
        "reach",
        help="a reachability map of a tip over a voxel grid (HDF5, Reuleaux's layout), here or on Dask",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_arguments(command)
    command.set_defaults(run=run_reach)
    return command


def _add_arguments(command: argparse.ArgumentParser) -> None:
    """The command's options: the robot and chain, the samples, the solver, the output, the
    cluster. :class:`MapOptions` and :func:`reachability_map` check their values."""
    add_robot_arguments(command, root_joint=False)
    robot = command.add_argument_group("chain")
    robot.add_argument("--base", required=True, metavar="LINK", help="base link: the map is in its frame")
    robot.add_argument("--tip", required=True, metavar="LINK", help="tip link")
    _add_sample_arguments(command.add_argument_group("samples"))
    _add_solver_arguments(command.add_argument_group("solver"))
    _add_output_arguments(command.add_argument_group("output"))
    cluster = command.add_argument_group("cluster")
    cluster.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help=f"a Dask scheduler whose workers solve the chunks (given up after {SCHEDULER_TIMEOUT:g} s)",
    )
    cluster.add_argument(
        "--chunk-poses",
        type=int,
        default=CHUNK_POSES,
        metavar="N",
        help=f"poses per chunk, the unit of work and of resuming (default {CHUNK_POSES})",
    )


def _add_sample_arguments(grid) -> None:
    """What the map samples: ``MapOptions``' resolution, orientations, rolls, radius, position_only."""
    grid.add_argument("--resolution", required=True, type=float, metavar="M", help="voxel size [m]")
    grid.add_argument(
        "--orientations",
        type=int,
        default=DEFAULT_ORIENTATIONS,
        metavar="N",
        help=f"orientations per voxel: N / R approach directions x R rolls (default {DEFAULT_ORIENTATIONS})",
    )
    grid.add_argument(
        "--rolls",
        type=int,
        default=1,
        metavar="R",
        help="rolls about each approach direction, 2 pi j / R (default 1)",
    )
    grid.add_argument(
        "--radius",
        type=float,
        metavar="M",
        help="sample within this radius of the tip's reach centre [m] (default: its whole reach)",
    )
    grid.add_argument("--position-only", action="store_true", help="reach the position, any orientation")


def _add_solver_arguments(solve) -> None:
    """How each pose is solved: ``MapOptions``' attempts, timeout, tolerance, random_seed,
    position_screen."""
    solve.add_argument(
        "--attempts",
        type=int,
        default=DEFAULT_ATTEMPTS,
        metavar="K",
        help=f"attempts per pose, restarts included (default {DEFAULT_ATTEMPTS}); the map is reproducible",
    )
    solve.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="also a time budget per solve [s] (the map then depends on the machine's speed)",
    )
    solve.add_argument(
        "--tolerance",
        type=float,
        default=1e-5,
        metavar="TOL",
        help="success threshold on position [m] and orientation [rad] (default 1e-5)",
    )
    solve.add_argument(
        "--random-seed", type=int, default=0, metavar="N", help="random seed of restarts (default 0)"
    )
    solve.add_argument(
        "--no-position-screen",
        action="store_true",
        help="solve every orientation, also of voxels whose position alone is not reached",
    )


def _add_output_arguments(output) -> None:
    """Where the map goes and how the run shows: the file, overwriting or resuming it, the
    picture, the size limit, the progress bar."""
    output.add_argument("--output", required=True, metavar="FILE.h5", help="the map (HDF5)")
    output.add_argument(
        "--overwrite", action="store_true", help="replace an existing map (or interrupted run)"
    )
    output.add_argument("--resume", action="store_true", help="continue an interrupted run from OUT.parts/")
    output.add_argument(
        "--plot", metavar="FILE.png", help="also draw slices of the map coloured by the index"
    )
    output.add_argument("--force", action="store_true", help=f"allow maps of more than {MAX_POSES:,} poses")
    output.add_argument("--quiet", action="store_true", help="no progress bar")


def _progress_bar(quiet: bool):
    """(callback(done, total), close()) drawing a progress bar with an ETA on stderr (tqdm; a
    line every 10 s without it)."""
    if quiet:
        return None, lambda: None
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    state = {"bar": None, "last": 0.0}

    def update(done: int, total: int) -> None:
        if tqdm is not None:
            if state["bar"] is None:
                state["bar"] = tqdm(
                    total=total,
                    initial=done,
                    unit="pose",
                    unit_scale=True,
                    file=sys.stderr,
                    smoothing=0.05,
                    dynamic_ncols=True,
                )
            else:
                state["bar"].update(done - state["bar"].n)
        elif time.monotonic() - state["last"] > 10 or done == total:
            state["last"] = time.monotonic()
            print(
                f"{done:,} / {total:,} poses ({100 * done / max(total, 1):.0f} %)",
                file=sys.stderr,
                flush=True,
            )

    def close() -> None:
        if state["bar"] is not None:
            state["bar"].close()

    return update, close


def run_reach(arguments) -> int:
    """Run ``ik_node reach`` from parsed arguments; IKNodeError for unusable input (the caller
    prints it and exits 2), a value out of its range naming the option's flag."""
    try:
        return _make_map(arguments)
    except OptionError as error:  # MapOptions' and reachability_map's checks
        raise error.named("--" + error.option.replace("_", "-")) from None


def _make_map(arguments) -> int:
    """The map the arguments ask for, written to --output, and a summary on stdout."""
    if arguments.overwrite and arguments.resume:
        raise IKNodeError("--overwrite and --resume exclude each other")
    options = MapOptions(
        arguments.resolution,
        orientations=arguments.orientations,
        rolls=arguments.rolls,
        radius=arguments.radius,
        position_only=arguments.position_only,
        attempts=arguments.attempts,
        timeout=arguments.timeout,
        tolerance=arguments.tolerance,
        random_seed=arguments.random_seed,
        position_screen=not arguments.no_position_screen,
    )
    robot = robot_from_arguments(arguments)
    description = Path(arguments.urdf).read_bytes() if Path(arguments.urdf).is_file() else b""
    metadata = {"urdf": arguments.urdf, "urdf_sha256": hashlib.sha256(description).hexdigest()}
    update, close = _progress_bar(arguments.quiet)
    try:
        reach_map = reachability_map(
            robot,
            arguments.base,
            arguments.tip,
            options,
            out=arguments.output,
            overwrite=arguments.overwrite,
            resume=arguments.resume,
            scheduler=arguments.scheduler,
            chunk_poses=arguments.chunk_poses,
            max_poses=None if arguments.force else MAX_POSES,
            progress=update,
            keep_poses=False,
            plot=arguments.plot,
            metadata=metadata,
        )
    except KeyboardInterrupt:
        close()
        print(
            f"\ninterrupted: the chunks solved are kept in {arguments.output}.parts; run the same command "
            "with --resume to continue",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except IKNodeError:
        close()
        raise
    except Exception as error:  # a worker's error, a lost scheduler: what is kept resumes
        close()
        print(
            f"error: the map stopped before its end ({type(error).__name__}: {error}); the chunks solved "
            f"are kept in {arguments.output}.parts: run the same command with --resume",
            file=sys.stderr,
        )
        return EXIT_STOPPED
    close()
    metadata, run = reach_map.metadata, reach_map.run
    solved = run["poses_solved"]
    rate = f", {solved / run['solve_seconds']:,.0f} poses/s" if solved and run["solve_seconds"] > 0 else ""
    print(
        f"{arguments.output}: {metadata['voxels']:,} voxels x {metadata['orientations']} orientations = "
        f"{metadata['poses']:,} poses; {metadata['reachable_poses']:,} reachable, in "
        f"{metadata['reachable_voxels']:,} voxels; {run['seconds']:.1f} s{rate}"
        + (f" ({run['chunks_resumed']} of {run['chunks']} chunks resumed)" if run["chunks_resumed"] else "")
    )
    if arguments.plot:
        print(f"picture: {arguments.plot}")
    return EXIT_OK


def main(argv=None) -> int:
    """``python -m ik_node.reach ...``: the ``reach`` subcommand on its own."""
    parser = argparse.ArgumentParser(
        prog="python -m ik_node.reach",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_arguments(parser)
    arguments = parser.parse_args(argv)
    warnings.showwarning = lambda message, *_, **__: print(f"warning: {message}", file=sys.stderr)
    try:
        return run_reach(arguments)
    except IKNodeError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
