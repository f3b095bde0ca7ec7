"""Robot descriptions: a URDF or xacro file read into a validated :class:`Robot`
(:mod:`.model`, with xacro expanded by :mod:`.xacro_expansion`), the package's own files and ROS
package lookups (:mod:`.resources`), and the robots ik_node is tested and benchmarked on
(:mod:`.catalogue`, not imported here)."""

from .model import Joint, Robot, load_robot
from .resources import bundled_urdf, resolve_path, share_directory
from .xacro_expansion import xacro_arguments

__all__ = [
    "Joint",
    "Robot",
    "bundled_urdf",
    "load_robot",
    "resolve_path",
    "share_directory",
    "xacro_arguments",
]
