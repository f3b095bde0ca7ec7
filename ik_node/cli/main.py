"""The ``ik_node`` command: IK and FK questions without ROS, a parameter file for your own robot,
or the ROS 2 node.

* ``ik_node info --urdf FILE`` describes a robot: links, movable joints with their limits, chains,
  and the base and tip links to choose from;
* ``ik_node config --urdf FILE --base B --tip T`` writes the node's parameter file for it;
* ``ik_node solve --urdf FILE --base B --tip T --xyz X Y Z [--rpy R P Y | --quat X Y Z W]``
  prints joint values reaching the pose (m, rad; quaternion in ROS order x y z w; ``--all``:
  every solution, one line each); ``--task``
  (``position``, axis names such as ``'vz'``), ``--task-axes tip|base`` and ``--offset X Y Z``
  say what the goal controls, as the node's ``tip_tasks``, ``tip_task_axes`` and ``tip_offsets``;
* ``ik_node fk --urdf FILE --base B --tip T [--q V ...] [--joint NAME=V ...]`` prints the pose;
* ``ik_node path --urdf FILE --base B --tip T [--q V ...] [--joint NAME=V ...] --waypoint X Y Z
  [R P Y] ...`` prints a straight-line path of the tip from that start through the waypoints,
  point by point with its time (``--relative``, ``--max-step``, ``--max-acceleration``,
  ``--plot FILE.png``, ``--json``; :mod:`.cartesian_path`);
* ``ik_node node [--ros-args ...]``, or any command line with ``--ros-args`` (as ``ros2 run`` and
  ``ros2 launch`` give), runs the node. A bare ``ik_node`` prints the help and exits 0.

``--urdf`` takes a URDF or a xacro file (``--xacro-arg NAME:=VALUE``, ``--package-path DIR``);
``--root-joint floating|planar`` adds a joint from a new link ``world`` to its root (a free-flying
or planar base, for whole-body IK: ``--base world``), as the node's ``root_joint`` parameter.
Warnings (a joint that cannot be used, an ignored mimic tag) go to stderr as ``warning: ...``
lines. Errors go to stderr as ``error: ...`` with a non-zero exit code: 2 for unusable input
(unknown link, unreadable file, malformed numbers), 1 when a goal cannot be reached (with the
best error reached; a path that ends early, with the part planned).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np

from ..decisions.control import JointLayout
from ..decisions.conversions import pose_from_fields, pose_to_fields
from ..decisions.parameters import MODES
from ..description import add_robot_arguments, robot_from_arguments
from ..errors import IKNodeError
from ..lie import matrix_to_rpy, rpy_to_matrix
from ..reach import add_reach_command
from ..solver import (
    METHODS,
    OPTION_SPECS,
    SOLVE_TYPES,
    TASK_AXES,
    IKSolver,
    SolverOptions,
    TipTask,
    task_kind,
    task_offset,
)
from .arguments import (
    EXIT_BAD_INPUT,
    EXIT_NOT_REACHED,
    EXIT_OK,
    add_chain_arguments,
    joint_values,
    named_values,
)
from .cartesian_path import add_path_command
from .robot_setup import parameter_file, print_summary, robot_summary, xacro_options

#: The subcommands, in the order the help lists them.
SUBCOMMANDS = ("info", "config", "solve", "fk", "path", "reach", "warmup", "node")
_HELP_FLAGS = ("-h", "--help")

_EPILOG = """\
your own robot:
  ik_node info --urdf robot.urdf                  # joints, limits, suggested base and tip links
  ik_node config --urdf robot.urdf --base BASE --tip TIP --output my_robot.yaml
  ik_node --ros-args --params-file my_robot.yaml  # run the node with it

running the ROS 2 node (goals: geometry_msgs/PoseStamped on /ik_node/target_pose):
  ik_node --ros-args --params-file my_robot.yaml -p robot_description_file:=robot.urdf
  ik_node node --ros-args --params-file my_robot.yaml       (the same)
  ros2 run ik_node ik_node --ros-args --params-file my_robot.yaml
  ros2 launch ik_node ik_node.launch.py urdf_file:=robot.urdf params_file:=my_robot.yaml
      (beside the robot's bringup; demo:=true adds robot_state_publisher and RViz without one)

--urdf takes a URDF file or a xacro file (robot.urdf.xacro), expanded with --xacro-arg NAME:=VALUE;
--package-path DIR names a directory holding ROS packages, for $(find PKG) and package://PKG.
--root-joint floating (or planar) adds a joint from a new link 'world' to the URDF's root: a
free-flying base (x y z qx qy qz qw) for whole-body IK with --base world.
Units: m, rad, m/s, rad/s; quaternions in ROS order x y z w. Each subcommand has its own --help.

exit codes:
  0  ok
  1  goal not reached (solve prints the best joint values found; path the part it planned)
  2  bad input or unusable configuration (unknown link, unreadable file, malformed number):
     the error on stderr names it and says what to do
"""


def main(argv=None) -> int:
    """Dispatch to a subcommand; ``node`` (or a command line with ``--ros-args``) runs the node.
    Returns the exit code (help and argparse's usage errors exit from argparse: 0 and 2)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "node" and not _asks_for_help(argv[1:]):
        return _run_node(argv[1:])
    if argv and argv[0] == "warmup":  # (its own parser: python -m ik_node.solver)
        from ..solver.__main__ import main as warmup

        return warmup(argv[1:])
    if argv and argv[0] not in SUBCOMMANDS and argv[0] not in _HELP_FLAGS:
        if "--ros-args" in argv:  # ros2 run / ros2 launch: ik_node --ros-args ...
            return _run_node(argv)
        _parser().print_usage(sys.stderr)
        what = "option" if argv[0].startswith("-") else "subcommand"
        print(
            f"error: unknown {what} '{argv[0]}'; choose a subcommand: {', '.join(SUBCOMMANDS)}; to run "
            "the node, put ROS arguments after --ros-args (ik_node --ros-args --params-file FILE)",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    arguments = _parser().parse_args(argv or ["--help"])  # bare: the help, exit 0
    warnings.showwarning = _print_warning
    try:
        return arguments.run(arguments)
    except IKNodeError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _asks_for_help(arguments) -> bool:
    """Whether ``-h``/``--help`` comes before any ``--ros-args`` (after it, it is rclpy's)."""
    before_ros = arguments[: arguments.index("--ros-args")] if "--ros-args" in arguments else arguments
    return any(flag in before_ros for flag in _HELP_FLAGS)


def _run_node(arguments) -> int:
    try:
        from ..ros.node import main as node_main  # imports rclpy only when the node is wanted
    except ImportError as error:
        print(
            f"error: the ROS 2 node needs rclpy and the message packages ({error}); source a ROS 2 "
            "install, or pip install '.[ros]' in the source tree for the PyPI wheels. Without ROS: "
            "ik_node info, config, solve, fk and path (see ik_node --help).",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    return node_main(arguments)


def _print_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as plain ``warning: ...`` lines on stderr, without a Python source line."""
    print(f"warning: {message}", file=sys.stderr)


# ------------------------------------------------------------------ the command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ik_node",
        description="Inverse kinematics for URDF robots: questions without ROS, a parameter file for\n"
        "your own robot, or the ROS 2 node.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(
        title="subcommands", dest="command", metavar="{" + ",".join(SUBCOMMANDS) + "}"
    )
    done = f"exit codes: {EXIT_OK} done, {EXIT_BAD_INPUT} bad input (a message names it)"
    for name, run, help_text, exit_codes in (
        (
            "info",
            _info,
            "the robot's links, movable joints and limits, chains, suggested base/tip links",
            done,
        ),
        (
            "config",
            _config,
            "write a ROS 2 parameter file for the node (base, tips, the URDF's limits)",
            done,
        ),
        (
            "solve",
            _solve,
            "joint values that bring a tip to a pose",
            f"exit codes: {EXIT_OK} reached, {EXIT_NOT_REACHED} not reached (the closest found is printed), "
            f"{EXIT_BAD_INPUT} bad input",
        ),
        ("fk", _forward, "the pose of a tip for joint values", done),
    ):
        command = commands.add_parser(
            name, help=help_text, description=help_text[0].upper() + help_text[1:], epilog=exit_codes
        )
        command.set_defaults(run=run)
        add_robot_arguments(command)
    _add_info_arguments(commands.choices["info"])
    _add_config_arguments(commands.choices["config"])
    add_chain_arguments(
        commands.choices["solve"],
        "--seed",
        "start configuration, one value per joint [rad or m] (default: the solver's own)",
    )
    add_chain_arguments(commands.choices["fk"], "--q", "one value per joint [rad or m] (default: 0)")
    _add_solve_arguments(commands.choices["solve"])
    add_path_command(commands)
    add_reach_command(commands)
    commands.add_parser(
        "warmup",
        help="compile the IK kernels into numba's cache ahead of their use (images, read-only installs)",
        add_help=False,
    )
    node = commands.add_parser(
        "node",
        help="run the ROS 2 node (the same as ik_node --ros-args ...)",
        description="Run the ROS 2 node. Its parameters (robot_description_file, base_link, tip_links,\n"
        "joint_limits...) come from a parameter file (ik_node config writes one) or -p NAME:=VALUE.\n"
        "Stop it with Ctrl-C (exit 0); an unusable configuration exits 2.\n\n"
        "exit codes: 0 stopped, 2 an unusable configuration",
        epilog="example:\n  ik_node node --ros-args --params-file my_robot.yaml "
        "-p robot_description_file:=robot.urdf",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    node.add_argument(
        "ros_arguments",
        nargs=argparse.REMAINDER,
        metavar="--ros-args ...",
        help="ROS arguments: --params-file FILE, -p NAME:=VALUE, -r FROM:=TO (remap), ...",
    )
    return parser


def _add_info_arguments(info) -> None:
    info.add_argument(
        "--json",
        action="store_true",
        help="print JSON instead (limits in rad or m, rad/s or m/s; null: no limit)",
    )


def _add_config_arguments(config) -> None:
    chain = config.add_argument_group("chain (ik_node info suggests links)")
    chain.add_argument(
        "--base",
        required=True,
        metavar="LINK",
        help="link the goals are expressed in and the chain starts from",
    )
    chain.add_argument(
        "--tip",
        metavar="LINK",
        action="append",
        required=True,
        help="link that reaches a goal; repeat it for several tips (one goal topic each)",
    )
    config.add_argument(
        "--mode",
        choices=MODES,
        default="solve",
        help="solve: one command per goal; track: steps toward the latest goal at publish_rate "
        "within the velocity limits [rad/s or m/s] (default: solve)",
    )
    config.add_argument(
        "--name", default="ik_node", help="node name the parameters are for (default: ik_node)"
    )
    config.add_argument("--output", metavar="FILE", help="write the file here (default: stdout)")


def _add_solve_arguments(solve) -> None:
    """``solve``'s goal (:func:`_add_goal_arguments`), task and solver options."""
    _add_goal_arguments(solve)
    task = solve.add_argument_group(
        "task: what the goal controls (the node's tip_tasks, tip_task_axes, tip_offsets)"
    )
    kind = task.add_mutually_exclusive_group()
    kind.add_argument("--position-only", action="store_true", help="reach the position, any orientation")
    kind.add_argument(
        "--task",
        default="pose",
        metavar="KIND",
        help="pose (default), position, orientation, or axis names among vx vy vz wx wy wz (linear, "
        "then angular), e.g. vz or 'vx vy wz'",
    )
    task.add_argument(
        "--task-axes",
        choices=TASK_AXES,
        default="tip",
        help="tip: the task's axes are the tip's own (default); base: the base frame's axes at the "
        "controlled point (--task vz: the point's height along the base z)",
    )
    task.add_argument(
        "--offset",
        nargs=3,
        type=float,
        default=(0.0, 0.0, 0.0),
        metavar=("X", "Y", "Z"),
        help="the controlled point in the tip's frame [m], e.g. a tool centre that is not a link: the "
        "goal is that point's pose, with the tip's axes (default: 0 0 0, the tip's origin)",
    )
    settings = solve.add_argument_group("solver")
    settings.add_argument(
        "--method",
        choices=METHODS,
        default="dls",
        help="dls: damped least squares; pinv: pseudo-inverse; transpose: Jacobian transpose; ccd: "
        "cyclic coordinate descent (default: dls)",
    )
    settings.add_argument(
        "--solve-type",
        choices=SOLVE_TYPES,
        default="speed",
        help="speed: the first solution; distance: the nearest to the seed (sum of dq^2 / joint weight), "
        "manipulability: the most manipulable, found within the timeout (default: speed)",
    )
    settings.add_argument(
        "--timeout", type=float, default=0.05, metavar="S", help="time budget [s] (default: 0.05)"
    )
    settings.add_argument(
        "--all",
        action="store_true",
        help="print every solution, one line of joint values each (in the order of the '# joints:' "
        "line, nearest the --seed first, branch labels after '#'): all of them where the chain has a "
        "closed form, else those a search finds within --timeout",
    )
    settings.add_argument(
        "--lock",
        action="append",
        default=[],
        metavar="NAME=V",
        help="hold a joint at a value [rad or m] (repeatable; with --all, a 7-joint arm with one joint "
        "held is solved in closed form where the other six decompose)",
    )
    settings.add_argument(
        "--tolerance",
        type=float,
        metavar="TOL",
        default=1e-5,
        help="success threshold on the position [m] and orientation [rad] errors (default: 1e-5)",
    )


def _add_goal_arguments(solve) -> None:
    """``solve``'s goal pose: ``--xyz`` and ``--rpy`` or ``--quat``."""
    goal = solve.add_argument_group("goal pose of the tip (of its --offset point), in the base frame")
    goal.add_argument(
        "--xyz", nargs=3, type=float, required=True, metavar=("X", "Y", "Z"), help="position [m]"
    )
    orientation = goal.add_mutually_exclusive_group()
    orientation.add_argument(
        "--rpy",
        nargs=3,
        type=float,
        metavar=("R", "P", "Y"),
        help="roll, pitch, yaw about the base's fixed x, y, z axes [rad] (default: identity)",
    )
    orientation.add_argument(
        "--quat",
        nargs=4,
        type=float,
        metavar=("X", "Y", "Z", "W"),
        help="quaternion in ROS order x y z w [unitless; normalised] (default: 0 0 0 1)",
    )


def _print_pose(pose: np.ndarray) -> None:
    position, quaternion = pose_to_fields(pose)
    print("xyz [m]:", " ".join(f"{value:.6f}" for value in position))
    print("rpy [rad]:", " ".join(f"{value:.6f}" for value in matrix_to_rpy(pose[:3, :3])))
    print("quaternion xyzw:", " ".join(f"{value:.6f}" for value in quaternion))


def _forward(arguments) -> int:
    tree = robot_from_arguments(arguments).tree(arguments.base, arguments.tip)
    values = joint_values(arguments, tree.joint_names, arguments.q)
    print("joints:", " ".join(tree.joint_names))
    _print_pose(tree.forward(values, arguments.tip))
    return 0


def _task(arguments) -> TipTask:
    """The tip's task from ``--position-only``/``--task``, ``--task-axes``, ``--offset`` and
    ``--tolerance``; a refusal names the option."""
    for option in ("position_tolerance", "orientation_tolerance"):
        OPTION_SPECS[option].check(arguments.tolerance, "--tolerance")
    try:
        kind = task_kind("position" if arguments.position_only else arguments.task)
    except IKNodeError as error:
        raise IKNodeError(f"--task: {error}") from None
    try:
        offset = task_offset(arguments.offset)
    except IKNodeError as error:
        raise IKNodeError(f"--offset: {error}") from None
    return TipTask(
        kind,
        position_tolerance=arguments.tolerance,
        orientation_tolerance=arguments.tolerance,
        axes=arguments.task_axes,
        offset=offset,
    )


def _solve(arguments) -> int:
    robot = robot_from_arguments(arguments)
    locked = named_values(arguments.lock, "--lock")
    options = SolverOptions(
        tasks={arguments.tip: _task(arguments)},
        method=arguments.method,
        solve_type=arguments.solve_type,
        position_tolerance=arguments.tolerance,
        orientation_tolerance=arguments.tolerance,
        lower=None if arguments.all else locked or None,  # (--all: solve_all holds them itself)
        upper=None if arguments.all else locked or None,
    )
    solver = IKSolver(robot, arguments.base, arguments.tip, options=options)
    try:
        target = pose_from_fields(arguments.xyz, arguments.quat or (0.0, 0.0, 0.0, 1.0))  # x y z w
    except IKNodeError as error:
        raise IKNodeError(f"--xyz/--quat: {error} (--quat wants a non-zero quaternion x y z w)") from None
    if arguments.rpy is not None:
        target[:3, :3] = rpy_to_matrix(*arguments.rpy)
    seed = joint_values(arguments, solver.joint_names, arguments.seed) or None
    if arguments.all:
        return _print_all(
            solver,
            solver.solve_all({arguments.tip: target}, seed=seed, timeout=arguments.timeout, locked=locked),
        )
    result = solver.solve({arguments.tip: target}, seed=seed, timeout=arguments.timeout)
    for name, value in zip(solver.joint_names, result.q):
        print(f"{name} {value:.6f}")
    summary = (
        f"position error {result.position_error:.3g} m, orientation error "
        f"{result.orientation_error:.3g} rad, {result.iterations} iterations, "
        f"{result.elapsed * 1e3:.2f} ms"
    )
    if result.success:
        print(f"# success: {summary}", flush=True)
    else:
        print(
            f"error: no solution within {arguments.timeout} s ({result.reason}); the joint values "
            f"above are the best reached: {summary}",
            file=sys.stderr,
            flush=True,
        )
    if not solver.compiled:  # (answered as plain Python: the next run should not have to)
        print("ik_node: finishing the IK kernels' compile for later runs (Ctrl-C stops it)", file=sys.stderr)
        try:
            solver.wait_for_kernels()
        except KeyboardInterrupt:
            pass
    return EXIT_OK if result.success else EXIT_NOT_REACHED


def _print_all(solver, found) -> int:
    """``solve --all``: the joint names, each solution of ``found`` (an
    :class:`~ik_node.solver.results.IKSolutions`) on a line [rad, m] with its branch labels,
    and a summary (complete or searched, the method); unreached: the closest approaches, said on
    stderr. Returns the exit code."""
    print("# joints:", " ".join(solver.joint_names))
    for index, row in enumerate(found.q):
        labels = "" if found.labels is None else "  # " + " ".join(found.labels[index])
        print(" ".join(f"{value:.6f}" for value in row) + labels)
    kind = "every solution" if found.complete else "the solutions a search found (maybe not all)"
    singular = ", at a singularity: one member of a family" if found.singular else ""
    summary = f"{kind} ({found.method}{singular}), {found.elapsed * 1e3:.2f} ms"
    if found.success:
        print(f"# success: {len(found.q)} solutions, {summary}", flush=True)
        return EXIT_OK
    print(
        f"error: no solution reaches the goal; the {len(found.q)} lines above are the closest approaches "
        f"inside the limits: {summary}",
        file=sys.stderr,
        flush=True,
    )
    return EXIT_NOT_REACHED


# ------------------------------------------------------------------ info and config: ik_node.cli.robot_setup


def _info(arguments) -> int:
    summary = robot_summary(robot_from_arguments(arguments))
    if arguments.json:
        print(json.dumps(summary, indent=2))
    else:
        options = xacro_options(arguments.xacro_arg, arguments.package_path)
        if arguments.root_joint:
            options = f" --root-joint {arguments.root_joint}{options}"
        print_summary(summary, f"--urdf {arguments.urdf}{options}")
    return EXIT_OK


def _config(arguments) -> int:
    robot = robot_from_arguments(arguments)
    urdf = Path(arguments.urdf)
    if not urdf.is_file():
        raise IKNodeError("config: --urdf must name a file (the node reads it as robot_description_file)")
    tree = robot.tree(arguments.base, arguments.tip)
    if not tree.joint_names:
        raise IKNodeError(
            f"no movable joint between base link '{arguments.base}' and {list(arguments.tip)}; choose "
            "links with movable joints between them (ik_node info --urdf FILE suggests some)"
        )
    if arguments.mode == "track":  # (1-DOF joints: a floating base has no velocity limit)
        layout = JointLayout.of(tree)
        velocities = zip(layout.names, tree.max_velocity[layout.configuration])
        unknown = [name for name, velocity in velocities if not math.isfinite(velocity)]
        if unknown:
            raise IKNodeError(
                f"track mode needs a velocity limit for joints {unknown}, and the URDF gives none; add "
                "<limit velocity=...> to them, or use --mode solve and set "
                "joint_limits.<joint>.has_velocity_limits / max_velocity [rad/s or m/s] in the file"
            )
    output = Path(arguments.output) if arguments.output else None
    text = parameter_file(
        robot,
        tree,
        urdf.resolve(),
        mode=arguments.mode,
        node_name=arguments.name,
        xacro_args=arguments.xacro_arg,
        package_paths=arguments.package_path,
        output=output,
        root_joint=arguments.root_joint,
    )
    if output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        output.write_text(text)
    except OSError as error:
        raise IKNodeError(
            f"--output '{output}' cannot be written ({error.strerror or error}); choose a writable path"
        ) from None
    rename = "" if arguments.name == "ik_node" else f" -r __node:={arguments.name}"
    run = f"ik_node --ros-args --params-file {output}{rename}"
    print(f"wrote {output}; run the node with: {run}", file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
