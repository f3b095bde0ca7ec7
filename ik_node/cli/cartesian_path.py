"""``ik_node path``: the one tip on straight lines from a start configuration through waypoints
(:meth:`ik_node.IKSolver.cartesian_path`), printed point by point with its timing, and plotted.

A waypoint is a position in the base frame [m], optionally with roll, pitch, yaw [rad] about the
base's fixed x, y, z axes (as ``solve --rpy``); without them the orientation stays the start's.
With ``--relative`` each waypoint is an offset from the start pose, in the base's axes: its
position is added to the start's, its rotation applied to the start's (``R = R(r, p, y) R_start``).
The start: ``--q`` / ``--joint NAME=V``, joints not given at the middle of their range (the
solver's rest posture). Planning waits for the kernels' compile where it is not done (said on
stderr): each step's solve has a time budget, which plain-Python solves can miss and end a
reachable path as ``unreachable``.

The output: a ``#`` header (fraction, reason, points, duration, the largest deviation from the
line), a ``#`` line naming the columns, then one line per point: the time [s] (``nan`` untimed)
and the joint values [rad, m]; ``--json`` an object instead. ``--plot FILE.png``: the joints'
positions and velocities against time (the timed spline sampled at :data:`PLOT_RATE`, the path's
points marked), drawn by matplotlib's Agg backend.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import sys
from pathlib import Path

import numpy as np

from ..description import add_robot_arguments, robot_from_arguments
from ..errors import IKNodeError
from ..lie import rpy_to_matrix
from ..solver import IKSolver
from .arguments import (
    EXIT_BAD_INPUT,
    EXIT_NOT_REACHED,
    EXIT_OK,
    add_chain_arguments,
    joint_values,
)

__all__ = [
    "MAX_STEP",
    "PLOT_ACCELERATION",
    "PLOT_RATE",
    "STEP_TIMEOUT",
    "add_path_command",
    "run_path",
    "waypoint_poses",
]

#: The joints' acceleration limit [rad/s^2, m/s^2] that times a path for ``--plot`` when
#: ``--max-acceleration`` is not given (a plot against time needs a timing).
PLOT_ACCELERATION = 2.0
#: The rate [Hz] at which ``--plot`` samples the timed spline between the points.
PLOT_RATE = 200.0
#: ``--max-step`` [m] and ``--timeout`` (each step's solve budget [s]) unless given: the library's.
MAX_STEP, STEP_TIMEOUT = (
    inspect.signature(IKSolver.cartesian_path).parameters[name].default for name in ("max_step", "timeout")
)

DESCRIPTION = """\
The tip on straight lines (its orientation on the shortest turn) from a start configuration
through waypoints, in steps of at most --max-step, never jumping: where it cannot go on, the path
ends and says how far it got (fraction of the length) and why. Printed: a '#' header, then one
line per point: time [s] and joint values [rad, m] in the order of the '# time' line."""

EPILOG = f"""\
example (15 cm along the base's x from the start, timed, plotted):
  ik_node path --urdf urdf/arm7.urdf --base base_link --tip tool0 \\
      --q 0.3 -0.4 0.2 -2.0 0.1 1.9 0.5 --relative --waypoint 0.15 0 0 --plot path.png

exit codes: {EXIT_OK} complete, {EXIT_NOT_REACHED} ended early (the part planned is printed), \
{EXIT_BAD_INPUT} bad input (a message names it)"""

#: Why a path ended, for the message on stderr (:class:`~ik_node.solver.cartesian.CartesianPath`'s
#: reasons).
ENDINGS = {
    "unreachable": "the next step is out of reach or of the joint limits",
    "collision": "the next step is in collision",
    "jump": "going on needs a jump of the joints (another branch)",
    "singularity": "the arm is at a singular configuration",
    "deviation": "the tip would leave the line by more than 1 mm however short the step",
}


def add_path_command(subparsers) -> argparse.ArgumentParser:
    """Add the ``path`` subcommand to an ``add_subparsers()`` object; returns its parser (whose
    ``run`` default is :func:`run_path`)."""
    command = subparsers.add_parser(
        "path",
        help="a straight-line path of a tip through waypoints, timed, printed and plotted",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.set_defaults(run=run_path)
    add_robot_arguments(command)
    add_chain_arguments(
        command,
        "--q",
        "start configuration, one value per joint [rad or m] (default, and joints --joint leaves out: the "
        "middle of each joint's range)",
    )
    waypoints = command.add_argument_group("waypoints of the tip, in the base frame")
    waypoints.add_argument(
        "--waypoint",
        action="append",
        nargs="+",
        type=float,
        required=True,
        metavar=("X Y Z", "R P Y"),
        help="a position X Y Z [m], and optionally roll, pitch, yaw R P Y about the base's fixed axes "
        "[rad] (without them the orientation stays the start's); repeat it for several, in order",
    )
    waypoints.add_argument(
        "--relative",
        action="store_true",
        help="waypoints are offsets from the start pose in the base's axes: X Y Z added to its "
        "position, R P Y applied to its orientation",
    )
    path = command.add_argument_group("path")
    path.add_argument(
        "--max-step",
        type=float,
        default=MAX_STEP,
        metavar="M",
        help=f"the longest step [m] (default: {MAX_STEP:g})",
    )
    path.add_argument(
        "--timeout",
        type=float,
        default=STEP_TIMEOUT,
        metavar="S",
        help=f"time budget of each step's solve [s] (default: {STEP_TIMEOUT:g}; a step not solved within "
        "it ends the path)",
    )
    path.add_argument(
        "--max-acceleration",
        type=float,
        metavar="A",
        help="time the path time-optimally within each joint's velocity limit and this acceleration "
        f"[rad/s^2 or m/s^2] (needs toppra; default: untimed, or {PLOT_ACCELERATION:g} with --plot)",
    )
    output = command.add_argument_group("output")
    output.add_argument(
        "--plot",
        metavar="FILE.png",
        help="draw the joints' positions and velocities against time into this PNG (needs matplotlib; "
        f"timed at --max-acceleration, default {PLOT_ACCELERATION:g} rad/s^2)",
    )
    output.add_argument(
        "--json",
        action="store_true",
        help="print a JSON object instead: joint_names, fraction, reason, deviation [m], duration [s], "
        "time, q, velocity, acceleration (null: untimed), xyz of the tip [m]",
    )
    return command


def run_path(arguments) -> int:
    """Plan (and time) the path the options ask for, print it, plot it; returns the exit code."""
    _check_positive(arguments.max_step, "--max-step", "m")
    _check_positive(arguments.timeout, "--timeout", "s")
    acceleration = arguments.max_acceleration
    if acceleration is None and arguments.plot:
        acceleration = PLOT_ACCELERATION
    if acceleration is not None:
        _check_positive(acceleration, "--max-acceleration", "rad/s^2 or m/s^2")
    if arguments.plot:
        _figure_classes()  # (matplotlib missing: said before any work)
        if not Path(arguments.plot).resolve().parent.is_dir():
            raise IKNodeError(f"--plot '{arguments.plot}': its directory does not exist")
    for index, numbers in enumerate(arguments.waypoint):
        _check_waypoint(index, numbers)
    solver = IKSolver(robot_from_arguments(arguments), arguments.base, arguments.tip)
    given = joint_values(arguments, solver.joint_names, arguments.q)
    start = solver.tree.joint_vector(
        {**dict(zip(solver.joint_names, solver.rest_posture)), **given}, "--q/--joint"
    )
    if not solver.compiled:  # (each step's solve has a time budget: plain-Python solves can miss it)
        print(
            "ik_node: waiting for the IK kernels' compile before planning (once per install)",
            file=sys.stderr,
            flush=True,
        )
        solver.wait_for_kernels()
    goals = waypoint_poses(arguments.waypoint, solver.tip_poses(start)[0], arguments.relative)
    path = solver.cartesian_path(
        goals,
        seed=start,
        max_step=arguments.max_step,
        max_acceleration=acceleration,
        timeout=arguments.timeout,
    )
    if arguments.json:
        print(json.dumps(_as_json(path, solver.joint_names), indent=2))
    else:
        _print_path(path, solver.joint_names, acceleration)
    if arguments.plot:
        plot_path(path, solver.joint_names, arguments.plot)
        print(f"wrote {arguments.plot}", file=sys.stderr)
    if path.reason != "complete":
        print(
            f"error: the path ended at fraction {path.fraction:.4f} of its length ({path.reason}: "
            f"{ENDINGS.get(path.reason, path.reason)}); the {len(path.q)} points printed are the part "
            "planned",
            file=sys.stderr,
            flush=True,
        )
    return EXIT_OK if path.reason == "complete" else EXIT_NOT_REACHED


def waypoint_poses(waypoints, start: np.ndarray, relative: bool) -> np.ndarray:
    """The goal poses (k, 4, 4) ``T_base_point`` of ``waypoints`` (``[x, y, z]`` [m] or ``[x, y, z,
    roll, pitch, yaw]`` [m, rad] each) from the tip's ``start`` pose (4x4): absolute in the base
    frame, or with ``relative`` offsets from ``start`` in the base's axes (the position added, the
    rotation applied on the left); without an orientation, the start's."""
    poses = np.repeat(np.asarray(start, dtype=float)[None], len(waypoints), axis=0)
    for pose, numbers in zip(poses, waypoints):
        position = np.asarray(numbers[:3], dtype=float)
        pose[:3, 3] = pose[:3, 3] + position if relative else position
        if len(numbers) == 6:
            rotation = rpy_to_matrix(*numbers[3:])
            pose[:3, :3] = rotation @ pose[:3, :3] if relative else rotation
    return poses


def _check_positive(value: float, option: str, unit: str) -> None:
    if not (math.isfinite(value) and value > 0.0):
        raise IKNodeError(f"{option} must be a positive number [{unit}], got {value}")


def _check_waypoint(index: int, numbers: list[float]) -> None:
    if len(numbers) not in (3, 6):
        raise IKNodeError(
            f"--waypoint {index + 1} takes 3 numbers X Y Z [m] or 6 X Y Z R P Y [m, rad], got "
            f"{len(numbers)}: {' '.join(f'{value:g}' for value in numbers)}"
        )
    if not all(math.isfinite(value) for value in numbers):
        raise IKNodeError(f"--waypoint {index + 1} is not finite: {' '.join(map(str, numbers))}")


# ------------------------------------------------------------------ output


def _print_path(path, joint_names, acceleration: float | None) -> None:
    """The header, the columns' names, one line per point: time [s] (nan untimed), joints."""
    if path.time is None:
        duration = "untimed (--max-acceleration times it)"
    else:
        duration = f"duration {path.duration:.6f} s (max acceleration {acceleration:g} rad/s^2 or m/s^2)"
    print(
        f"# fraction {path.fraction:.6f}, reason {path.reason}, {len(path.q)} points, {duration}, "
        f"deviation from the line at most {path.deviation:.3g} m"
    )
    print("# time [s], joints [rad, m]:", " ".join(joint_names))
    times = np.full(len(path.q), np.nan) if path.time is None else path.time
    for time, row in zip(times, path.q):
        print(f"{time:.6f} " + " ".join(f"{value:.6f}" for value in row))


def _as_json(path, joint_names) -> dict:
    def listed(values):
        return None if values is None else np.asarray(values).tolist()

    return {
        "joint_names": list(joint_names),
        "fraction": path.fraction,
        "reason": path.reason,
        "points": len(path.q),
        "deviation": path.deviation,
        "duration": None if path.time is None else path.duration,
        "time": listed(path.time),
        "q": listed(path.q),
        "velocity": listed(path.velocity),
        "acceleration": listed(path.acceleration),
        "xyz": listed(path.points[:, 0, :3, 3]),  # (points: (m, tips, 4, 4); one tip here)
    }


def _figure_classes():
    """matplotlib's ``Figure`` and Agg canvas (no pyplot: no global state, no display)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise IKNodeError(f"--plot needs matplotlib ({error}): pip install matplotlib") from None
    return Figure, FigureCanvasAgg


def plot_path(path, joint_names, file) -> None:
    """Two stacked plots into ``file`` (PNG) of a timed ``path``: the joints' positions [rad, m]
    and velocities [rad/s, m/s] against time [s], the timed spline sampled at :data:`PLOT_RATE` as
    lines and the path's points as dots (a path of one point, nothing to time: its dot at 0 s)."""
    Figure, FigureCanvasAgg = _figure_classes()
    figure = Figure(figsize=(9.0, 6.5), constrained_layout=True)
    FigureCanvasAgg(figure)
    positions, velocities = figure.subplots(2, 1, sharex=True)
    sampled = None if path.trajectory is None else path.sample(PLOT_RATE)
    for index, name in enumerate(joint_names):
        color = f"C{index % 10}"
        if sampled is not None:
            times, q, velocity, _ = sampled
            positions.plot(times, q[:, index], color=color, linewidth=1.2)
            velocities.plot(times, velocity[:, index], color=color, linewidth=1.2)
        positions.plot(path.time, path.q[:, index], "o", color=color, markersize=2.5, label=name)
        velocities.plot(path.time, path.velocity[:, index], "o", color=color, markersize=2.5)
    positions.set_title(
        f"{len(path.q)} points, fraction {path.fraction:.3f} ({path.reason}), {path.duration:.3f} s"
    )
    positions.set_ylabel("position [rad, m]")
    velocities.set_ylabel("velocity [rad/s, m/s]")
    velocities.set_xlabel("time [s]")
    for axes in (positions, velocities):
        axes.grid(True, alpha=0.3)
    positions.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize="small", frameon=False)
    try:
        figure.savefig(file, dpi=100)
    except OSError as error:
        raise IKNodeError(f"--plot '{file}' cannot be written ({error.strerror or error})") from None
