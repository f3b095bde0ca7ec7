"""Launch ik_node with robot_state_publisher and (optionally) RViz.

    ros2 launch ik_node ik_node.launch.py                      # the bundled 7-DOF arm
    ros2 launch ik_node ik_node.launch.py robot:=dual_arm      # another bundled robot
    ros2 launch ik_node ik_node.launch.py urdf_file:=/path/robot.urdf params_file:=/path/ik.yaml
    ros2 launch ik_node ik_node.launch.py urdf_file:=/path/robot.urdf.xacro \
        xacro_args:="arm_id:=fr3 hand:=true" params_file:=/path/ik.yaml   # expanded by xacro
    ros2 launch ik_node ik_node.launch.py use_rviz:=false

    ros2 launch ik_node ik_node.launch.py command_topic:=/forward_position_controller/commands
    ros2 launch ik_node ik_node.launch.py urdf_file:=/path/robot.urdf srdf_file:=/path/robot.srdf \
        params_file:=/path/ik.yaml   # self-collision pairs from the robot's SRDF (MoveIt's)

The URDF (a ``.xacro`` file run through ``xacro`` first, with ``xacro_args``, as ROS launch files
do) becomes the ``robot_description`` parameter of robot_state_publisher and ik_node.
ik_node's steady joint state (``~/joint_states``: the latest command at ``joint_state_rate``, the
rest posture before the first goal) is remapped to ``/joint_states``, so robot_state_publisher
and RViz show the robot from the first second and every solution after. Its commands stay on
``~/joint_commands`` (JointState); ``command_topic`` remaps ``~/position_commands``
(Float64MultiArray, for ros2_control's forward position controller, which it then enables).
``srdf_file`` (optional; a ``.xacro`` file through ``xacro`` with the same ``xacro_args``) becomes
ik_node's ``robot_description_semantic`` parameter: the link pairs its ``<disable_collisions>``
name are not checked when ``self_collision`` is on (the parameter file sets it).
"""

from pathlib import Path

import yaml
from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import Command, FindExecutable, LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue


def _description(path: str, arguments) -> object:
    """The text of a URDF or SRDF file; a ``.xacro`` file through the ``xacro`` command."""
    if path.endswith(".xacro"):
        return ParameterValue(
            Command([FindExecutable(name="xacro"), " ", path, *(" " + argument for argument in arguments)]),
            value_type=str,
        )
    return Path(path).read_text()


def _nodes(context):
    share = Path(get_package_share_directory("ik_node"))
    robot = LaunchConfiguration("robot").perform(context)
    urdf_file = LaunchConfiguration("urdf_file").perform(context) or str(share / "urdf" / f"{robot}.urdf")
    params_file = LaunchConfiguration("params_file").perform(context) or str(
        share / "config" / f"{robot}.yaml"
    )
    arguments = LaunchConfiguration("xacro_args").perform(context).split()
    description = _description(urdf_file, arguments)
    srdf_file = LaunchConfiguration("srdf_file").perform(context)
    parameters = yaml.safe_load(Path(params_file).read_text()) or {}
    settings = next(iter(parameters.values()), {}).get("ros__parameters", {})
    fixed_frame = settings.get("base_link") or "base_link"
    command_topic = LaunchConfiguration("command_topic").perform(context)
    overrides = {"robot_description": description, "publish_rest_posture_at_start": True}
    if srdf_file:
        overrides["robot_description_semantic"] = _description(srdf_file, arguments)
    remappings = [("~/joint_states", "/joint_states")]
    if command_topic:
        overrides["publish_position_commands"] = True
        remappings.append(("~/position_commands", command_topic))
    return [
        Node(
            package="robot_state_publisher",
            executable="robot_state_publisher",
            parameters=[{"robot_description": description}],
        ),
        Node(
            package="ik_node",
            executable="ik_node",
            parameters=[params_file, overrides],
            remappings=remappings,
            output="screen",
        ),
        Node(
            package="rviz2",
            executable="rviz2",
            arguments=["-d", LaunchConfiguration("rviz_config").perform(context), "-f", fixed_frame],
            condition=IfCondition(LaunchConfiguration("use_rviz")),
        ),
    ]


def generate_launch_description():
    share = Path(get_package_share_directory("ik_node"))
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "robot",
                default_value="arm7",
                description="bundled robot: arm6, arm7, mobile_manipulator, dual_arm, humanoid",
            ),
            DeclareLaunchArgument(
                "urdf_file",
                default_value="",
                description="URDF or .xacro file (default: the bundled robot's)",
            ),
            DeclareLaunchArgument(
                "params_file",
                default_value="",
                description="ik_node parameter file (default: config/<robot>.yaml)",
            ),
            DeclareLaunchArgument(
                "xacro_args",
                default_value="",
                description="arguments of a .xacro urdf_file, space-separated NAME:=VALUE pairs",
            ),
            DeclareLaunchArgument(
                "srdf_file",
                default_value="",
                description="SRDF (or .xacro) file: ik_node's robot_description_semantic, the link pairs "
                "not checked for self-collision (empty: none; the pairs are computed)",
            ),
            DeclareLaunchArgument("use_rviz", default_value="true", description="start RViz"),
            DeclareLaunchArgument(
                "command_topic",
                default_value="",
                description="where ~/position_commands (Float64MultiArray) go, e.g. "
                "/forward_position_controller/commands (empty: not published)",
            ),
            DeclareLaunchArgument(
                "rviz_config",
                default_value=str(share / "config" / "ik_node.rviz"),
                description="RViz configuration",
            ),
            OpaqueFunction(function=_nodes),
        ]
    )
