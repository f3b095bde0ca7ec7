"""The ``ik_node`` command: one-off IK and FK questions without ROS, or the ROS 2 node.

* ``ik_node solve --urdf FILE --base B --tip T --xyz X Y Z [--rpy R P Y | --quat X Y Z W]``
  prints joint values reaching the pose (m, rad; quaternion in ROS order x y z w);
* ``ik_node fk --urdf FILE --base B --tip T [--q V ...] [--joint NAME=V ...]`` prints the pose;
* anything else (e.g. ``ik_node --ros-args --params-file config/arm7.yaml``) runs the node.

Warnings (a joint that cannot be used, an ignored mimic tag) go to stderr as ``warning: ...``
lines. Errors go to stderr with a non-zero exit code: 2 for unusable input (unknown link, malformed
numbers), 1 when a goal cannot be reached (with the best error reached).
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from .conversions import pose_from_fields, pose_to_fields
from .errors import IKNodeError
from .lie import matrix_to_rpy, rpy_to_matrix
from .model import load_robot
from .solver import METHODS, SOLVE_TYPES, IKSolver, SolverOptions

SUBCOMMANDS = ("solve", "fk")


def main(argv=None) -> int:
    """Dispatch to ``solve``/``fk`` or, for any other arguments, to the ROS 2 node."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in SUBCOMMANDS:
        try:
            from .node import main as node_main  # imports rclpy only when the node is wanted
        except ImportError as error:
            print(
                f"error: the ROS 2 node needs rclpy and the message packages ({error}); source a ROS 2 "
                "install, or pip install '.[ros]' in the source tree for the PyPI wheels. Without ROS: "
                "ik_node solve or ik_node fk (see ik_node solve --help).",
                file=sys.stderr,
            )
            return 2
        return node_main(argv)
    arguments = _parser().parse_args(argv)
    warnings.showwarning = _print_warning
    try:
        return arguments.run(arguments)
    except IKNodeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _print_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as plain ``warning: ...`` lines on stderr, without a Python source line."""
    print(f"warning: {message}", file=sys.stderr)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ik_node", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name, run, help_text in (
        ("solve", _solve, "joint values that bring the tip to a pose"),
        ("fk", _forward, "the pose of the tip for joint values"),
    ):
        command = commands.add_parser(name, help=help_text)
        command.set_defaults(run=run)
        command.add_argument("--urdf", required=True, help="URDF file (or XML)")
        command.add_argument("--base", required=True, help="base link: poses are in its frame")
        command.add_argument("--tip", required=True, help="tip link")
        values = command.add_argument_group("joint values (rad, m), in the order printed by fk")
        values.add_argument("--q" if name == "fk" else "--seed", nargs="+", type=float, metavar="V")
        values.add_argument(
            "--joint", action="append", default=[], metavar="NAME=V", help="one joint by name"
        )
    solve = commands.choices["solve"]
    solve.add_argument("--xyz", nargs=3, type=float, required=True, metavar=("X", "Y", "Z"))
    orientation = solve.add_mutually_exclusive_group()
    orientation.add_argument("--rpy", nargs=3, type=float, metavar=("R", "P", "Y"), help="rad")
    orientation.add_argument("--quat", nargs=4, type=float, metavar=("X", "Y", "Z", "W"))
    solve.add_argument("--position-only", action="store_true", help="ignore the orientation")
    solve.add_argument("--method", choices=METHODS, default="dls")
    solve.add_argument("--solve-type", choices=SOLVE_TYPES, default="speed")
    solve.add_argument("--timeout", type=float, default=0.05, help="time budget [s] (0.05)")
    solve.add_argument("--tolerance", type=float, default=1e-5, help="m and rad (1e-5)")
    return parser


def _joint_values(arguments, names, vector) -> dict:
    """Joint values from ``--q``/``--seed`` (in order) and ``--joint NAME=V`` (by name)."""
    values = {}
    if vector is not None:
        if len(vector) != len(names):
            raise IKNodeError(f"expected {len(names)} joint values for {list(names)}, got {len(vector)}")
        values.update(zip(names, vector))
    for item in arguments.joint:
        name, separator, text = item.partition("=")
        if not separator:
            raise IKNodeError(f"--joint takes NAME=VALUE, got '{item}'")
        try:
            values[name] = float(text)
        except ValueError:
            raise IKNodeError(f"--joint {name}: '{text}' is not a number") from None
    return values


def _print_pose(pose: np.ndarray) -> None:
    position, quaternion = pose_to_fields(pose)
    print("xyz [m]:", " ".join(f"{value:.6f}" for value in position))
    print("rpy [rad]:", " ".join(f"{value:.6f}" for value in matrix_to_rpy(pose[:3, :3])))
    print("quaternion xyzw:", " ".join(f"{value:.6f}" for value in quaternion))


def _forward(arguments) -> int:
    tree = load_robot(arguments.urdf).tree(arguments.base, arguments.tip)
    values = _joint_values(arguments, tree.joint_names, arguments.q)
    print("joints:", " ".join(tree.joint_names))
    _print_pose(tree.forward(values, arguments.tip))
    return 0


def _solve(arguments) -> int:
    robot = load_robot(arguments.urdf)
    task = "position" if arguments.position_only else "pose"
    options = SolverOptions(
        tasks={arguments.tip: task},
        method=arguments.method,
        solve_type=arguments.solve_type,
        position_tolerance=arguments.tolerance,
        orientation_tolerance=arguments.tolerance,
    )
    solver = IKSolver(robot, arguments.base, arguments.tip, options=options)
    try:
        target = pose_from_fields(arguments.xyz, arguments.quat or (0.0, 0.0, 0.0, 1.0))  # x y z w
    except IKNodeError as error:
        raise IKNodeError(f"--xyz/--quat: {error} (--quat wants a non-zero quaternion x y z w)") from None
    if arguments.rpy is not None:
        target[:3, :3] = rpy_to_matrix(*arguments.rpy)
    seed = _joint_values(arguments, solver.joint_names, arguments.seed) or None
    result = solver.solve({arguments.tip: target}, seed=seed, timeout=arguments.timeout)
    for name, value in zip(solver.joint_names, result.q):
        print(f"{name} {value:.6f}")
    summary = (
        f"position error {result.position_error:.3g} m, orientation error "
        f"{result.orientation_error:.3g} rad, {result.iterations} iterations, "
        f"{result.elapsed * 1e3:.2f} ms"
    )
    if result.success:
        print(f"# success: {summary}")
        return 0
    print(
        f"error: no solution within {arguments.timeout} s ({result.reason}); the joint values "
        f"above are the best reached: {summary}",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
