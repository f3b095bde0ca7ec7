"""Robot descriptions: a URDF or xacro file read into a validated :class:`Robot` (:mod:`.model`;
read by :mod:`.urdf_parsing`, with xacro expanded by :mod:`.xacro_expansion`), the package's own
files and ROS package lookups (:mod:`.resources`), the command-line options naming a robot
(:mod:`.arguments`), and the robots ik_node is tested and benchmarked on (:mod:`.catalogue`, not
imported here)."""

from .arguments import add_robot_arguments, robot_from_arguments
from .model import Joint, Robot
from .resources import bundled_urdf, resolve_path, share_directory
from .urdf_parsing import ROOT_JOINT_TYPES, load_robot
from .xacro_expansion import xacro_arguments

__all__ = [
    "Joint",
    "ROOT_JOINT_TYPES",
    "Robot",
    "add_robot_arguments",
    "bundled_urdf",
    "load_robot",
    "resolve_path",
    "robot_from_arguments",
    "share_directory",
    "xacro_arguments",
]
