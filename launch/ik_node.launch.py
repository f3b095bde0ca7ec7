"""Launch ik_node beside a running robot, or as a demo with robot_state_publisher and RViz.

    ros2 launch ik_node ik_node.launch.py                      # demo: the bundled 7-DOF arm in RViz
    ros2 launch ik_node ik_node.launch.py robot:=dual_arm      # another bundled robot
    ros2 launch ik_node ik_node.launch.py urdf_file:=/path/robot.urdf params_file:=/path/ik.yaml \
        command_output:=position command_topic:=/forward_position_controller/commands
                                                               # beside your running robot
    ros2 launch ik_node ik_node.launch.py params_file:=/path/ik.yaml use_rviz:=false
                                                               # description from /robot_description
    ros2 launch ik_node ik_node.launch.py urdf_file:=/path/robot.urdf params_file:=/path/ik.yaml \
        demo:=true                                             # your robot, no robot running: RViz
    ros2 launch ik_node ik_node.launch.py urdf_file:=/path/robot.urdf.xacro \
        xacro_args:="arm_id:=fr3 hand:=true" params_file:=/path/ik.yaml   # expanded by xacro
    ros2 launch ik_node ik_node.launch.py urdf_file:=/path/robot.urdf srdf_file:=/path/robot.srdf \
        params_file:=/path/ik.yaml   # self-collision pairs from the robot's SRDF (MoveIt's)

Two set-ups (``demo``):

* **beside a running robot** (``demo:=false``; the default with your own ``urdf_file`` or
  ``params_file``): the robot's bringup already runs robot_state_publisher and publishes the
  measured ``/joint_states``, which ik_node reads as its seed. This launch starts ik_node (and
  RViz) only, publishes nothing on ``/joint_states`` (ik_node's steady joint state stays on
  ``~/joint_states``) and sends no command before the first goal;
* **demo** (``demo:=true``; the default with a bundled robot, which no real robot runs): no robot
  is running, so robot_state_publisher is started with the description and ik_node's steady joint
  state (``~/joint_states``: the latest command, the rest posture before the first goal) is
  remapped to ``/joint_states``: RViz shows the robot from the first second and every solution
  after; one command at the rest posture is published at start.

``use_robot_state_publisher`` and ``publish_joint_states`` override either half of ``demo``.

The description: ``urdf_file`` (a ``.xacro`` file run through ``xacro`` first, with
``xacro_args``, as ROS launch files do) becomes the ``robot_description`` parameter of
robot_state_publisher and ik_node; it needs ``params_file`` (your robot's base and tips: a
bundled robot's parameter file would name links your robot does not have), else the launch stops
with an error saying how to write one. With ``params_file`` alone ik_node takes the description
its parameter file names, else the ``/robot_description`` topic your robot_state_publisher
publishes. Neither: the bundled ``robot`` with ``config/<robot>.yaml``.

Commands (``command_output``): ``~/joint_commands`` (``JointState``) always; ``position`` also
publishes ``~/position_commands`` (``Float64MultiArray``, ros2_control's forward position
controller), ``trajectory`` ``~/joint_trajectory`` (``JointTrajectory``, its joint trajectory
controller). ``command_topic`` remaps the selected output to the controller's topic.
``srdf_file`` (optional; a ``.xacro`` file through ``xacro`` with the same ``xacro_args``)
becomes ik_node's ``robot_description_semantic``: the link pairs its ``<disable_collisions>``
name are not checked when ``self_collision`` is on (the parameter file sets it).

The set-up is decided by :func:`launch_setup`, plain Python over the argument strings (launch is
imported only to run it, so the decision is tested where launch is not installed).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

BUNDLED_ROBOTS = ("arm6", "arm7", "mobile_manipulator", "dual_arm", "humanoid")
#: command_output -> (the node's topic it is published on, the parameter that turns it on).
COMMAND_OUTPUTS = {
    "joint_state": ("~/joint_commands", None),
    "position": ("~/position_commands", "publish_position_commands"),
    "trajectory": ("~/joint_trajectory", "publish_trajectory"),
}
#: Every launch argument: (name, default, description).
ARGUMENTS = (
    (
        "robot",
        "arm7",
        f"bundled robot: {', '.join(BUNDLED_ROBOTS)} (used when urdf_file and params_file are empty)",
    ),
    ("urdf_file", "", "your robot's URDF or .xacro file (needs params_file; empty: see params_file, robot)"),
    (
        "params_file",
        "",
        "ik_node parameter file; required with urdf_file (ros2 run ik_node ik_node config --urdf FILE "
        "--base B --tip T > my_robot.yaml); alone: the description it names, else /robot_description",
    ),
    ("xacro_args", "", "arguments of a .xacro urdf_file or srdf_file, space-separated NAME:=VALUE pairs"),
    (
        "srdf_file",
        "",
        "SRDF (or .xacro) file: ik_node's robot_description_semantic, the link pairs not checked for "
        "self-collision (empty: none; the pairs are computed)",
    ),
    (
        "demo",
        "auto",
        "true: no robot is running (start robot_state_publisher, publish ik_node's joint state on "
        "/joint_states, command the rest posture at start); false: beside a running robot (none of "
        "these); auto: true for a bundled robot, false with urdf_file or params_file",
    ),
    ("use_robot_state_publisher", "auto", "start robot_state_publisher with the description (auto: as demo)"),
    (
        "publish_joint_states",
        "auto",
        "remap ik_node's steady joint state ~/joint_states onto /joint_states (auto: as demo); never "
        "beside a robot that publishes its own",
    ),
    ("use_rviz", "true", "start RViz"),
    (
        "command_output",
        "joint_state",
        "the commands for your controller besides ~/joint_commands (JointState): joint_state (none), "
        "position (~/position_commands, Float64MultiArray: forward position controller) or trajectory "
        "(~/joint_trajectory, JointTrajectory: joint trajectory controller)",
    ),
    (
        "command_topic",
        "",
        "where the selected command output goes, e.g. /forward_position_controller/commands "
        "(empty: the node's own topic)",
    ),
    ("rviz_config", "", "RViz configuration (empty: the package's config/ik_node.rviz)"),
)


@dataclass(frozen=True)
class LaunchSetup:
    """What the launch starts, decided from its arguments (:func:`launch_setup`).

    ``urdf_file``: the description given to robot_state_publisher and ik_node (None: ik_node
    takes the one its parameter file names, else ``/robot_description``); ``node_parameters``:
    ik_node's parameters set over ``params_file``'s; ``remappings``: ik_node's ``(from, to)``
    topic remappings; ``fixed_frame``: RViz's fixed frame (the parameter file's ``base_link``)."""

    params_file: str
    urdf_file: str | None
    srdf_file: str | None
    xacro_args: tuple[str, ...]
    robot_state_publisher: bool
    rviz: bool
    rviz_config: str
    fixed_frame: str
    node_parameters: dict = field(default_factory=dict)
    remappings: tuple[tuple[str, str], ...] = ()


def launch_setup(arguments: Mapping[str, str], share: Path) -> LaunchSetup:
    """The set-up for the launch ``arguments`` (name -> string; missing ones at their defaults),
    with the package's files under ``share``. Raises ValueError naming the argument and what to
    do when they are inconsistent (``urdf_file`` without ``params_file``, robot_state_publisher
    without a description, an unknown value)."""
    values = {name: default for name, default, _ in ARGUMENTS}
    values.update({name: str(value).strip() for name, value in arguments.items()})
    urdf_file, params_file = values["urdf_file"], values["params_file"]
    if urdf_file and not params_file:
        raise ValueError(
            f"urdf_file:={urdf_file} needs params_file:=... (your robot's base_link and tip_links; "
            "a bundled robot's parameter file names links your robot does not have). Write one with "
            f"'ros2 run ik_node ik_node config --urdf {urdf_file} --base BASE --tip TIP > my_robot.yaml' "
            "and pass params_file:=my_robot.yaml"
        )
    bundled = not urdf_file and not params_file
    if bundled:
        robot = _choice(values, "robot", BUNDLED_ROBOTS)
        urdf_file = str(share / "urdf" / f"{robot}.urdf")
        params_file = str(share / "config" / f"{robot}.yaml")
    demo = _flag(values, "demo", auto=bundled)
    robot_state_publisher = _flag(values, "use_robot_state_publisher", auto=demo)
    publish_joint_states = _flag(values, "publish_joint_states", auto=demo)
    if robot_state_publisher and not urdf_file:
        raise ValueError(
            "robot_state_publisher needs the description: pass urdf_file:=..., or "
            "use_robot_state_publisher:=false (beside a robot whose bringup runs it)"
        )
    output = _choice(values, "command_output", tuple(COMMAND_OUTPUTS))
    topic, switch = COMMAND_OUTPUTS[output]
    node_parameters = {} if switch is None else {switch: True}
    if demo:
        node_parameters["publish_rest_posture_at_start"] = True
    remappings = []
    if publish_joint_states:
        remappings.append(("~/joint_states", "/joint_states"))
    if values["command_topic"]:
        remappings.append((topic, values["command_topic"]))
    return LaunchSetup(
        params_file=params_file,
        urdf_file=urdf_file or None,
        srdf_file=values["srdf_file"] or None,
        xacro_args=tuple(values["xacro_args"].split()),
        robot_state_publisher=robot_state_publisher,
        rviz=_flag(values, "use_rviz"),
        rviz_config=values["rviz_config"] or str(share / "config" / "ik_node.rviz"),
        fixed_frame=_base_link(params_file),
        node_parameters=node_parameters,
        remappings=tuple(remappings),
    )


def _flag(values: Mapping[str, str], name: str, auto: bool | None = None) -> bool:
    """A boolean launch argument (``true``/``false``, ``1``/``0``; ``auto`` where given)."""
    value = values[name].lower()
    if value == "auto" and auto is not None:
        return auto
    if value in ("true", "1", "false", "0"):
        return value in ("true", "1")
    allowed = "true, false" + (", auto" if auto is not None else "")
    raise ValueError(f"{name}:={values[name]}: expected one of {allowed}")


def _choice(values: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    if values[name] not in choices:
        raise ValueError(f"{name}:={values[name]}: expected one of {', '.join(choices)}")
    return values[name]


def _base_link(params_file: str) -> str:
    """The parameter file's ``base_link`` (RViz's fixed frame), else ``base_link``."""
    try:
        parameters = yaml.safe_load(Path(params_file).read_text()) or {}
    except OSError as error:
        raise ValueError(f"params_file:={params_file}: cannot read it ({error.strerror})") from None
    settings = next(iter(parameters.values()), {}) if isinstance(parameters, dict) else {}
    return (settings or {}).get("ros__parameters", {}).get("base_link") or "base_link"


def _description(path: str, xacro_args: tuple[str, ...]):
    """The text of a URDF or SRDF file; a ``.xacro`` file through the ``xacro`` command."""
    from launch.substitutions import Command, FindExecutable
    from launch_ros.parameter_descriptions import ParameterValue

    if path.endswith(".xacro"):
        return ParameterValue(
            Command([FindExecutable(name="xacro"), " ", path, *(" " + argument for argument in xacro_args)]),
            value_type=str,
        )
    return Path(path).read_text()


def _nodes(context):
    """The nodes of :func:`launch_setup`'s set-up for this launch's arguments."""
    from ament_index_python.packages import get_package_share_directory
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    arguments = {name: LaunchConfiguration(name).perform(context) for name, _, _ in ARGUMENTS}
    setup = launch_setup(arguments, Path(get_package_share_directory("ik_node")))
    overrides = dict(setup.node_parameters)
    nodes = []
    if setup.urdf_file is not None:
        description = _description(setup.urdf_file, setup.xacro_args)
        overrides["robot_description"] = description
        if setup.robot_state_publisher:
            nodes.append(
                Node(
                    package="robot_state_publisher",
                    executable="robot_state_publisher",
                    parameters=[{"robot_description": description}],
                )
            )
    if setup.srdf_file is not None:
        overrides["robot_description_semantic"] = _description(setup.srdf_file, setup.xacro_args)
    nodes.append(
        Node(
            package="ik_node",
            executable="ik_node",
            parameters=[setup.params_file, overrides],
            remappings=list(setup.remappings),
            output="screen",
        )
    )
    if setup.rviz:
        nodes.append(
            Node(
                package="rviz2",
                executable="rviz2",
                arguments=["-d", setup.rviz_config, "-f", setup.fixed_frame],
            )
        )
    return nodes


def generate_launch_description():
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    return LaunchDescription(
        [
            *(
                DeclareLaunchArgument(name, default_value=default, description=description)
                for name, default, description in ARGUMENTS
            ),
            OpaqueFunction(function=_nodes),
        ]
    )
