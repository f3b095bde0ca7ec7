"""ik_node: inverse kinematics for URDF robots, as a library and as a ROS 2 node.

The math core (:mod:`ik_node.model`, :mod:`ik_node.kinematics`, :mod:`ik_node.solver`,
:mod:`ik_node.lie`) does not import rclpy; :mod:`ik_node.node` is the ROS 2 layer.
"""

from .errors import IKNodeError, TargetError, UnknownJointError, UnknownLinkError, URDFError
from .kinematics import KinematicTree
from .model import Joint, Robot, load_robot
from .obstacles import Obstacle
from .solver import BatchResult, IKResult, IKSolver, SolverOptions, TipTask

__all__ = [
    "BatchResult",
    "IKNodeError",
    "IKResult",
    "IKSolver",
    "Joint",
    "KinematicTree",
    "Obstacle",
    "Robot",
    "SolverOptions",
    "TargetError",
    "TipTask",
    "URDFError",
    "UnknownJointError",
    "UnknownLinkError",
    "load_robot",
]
