"""ik_node: inverse kinematics for URDF robots, as a library and as a ROS 2 node.

Packages by concern: :mod:`ik_node.description` (URDF and xacro into a robot model),
:mod:`ik_node.kinematics` (kinematic trees), :mod:`ik_node.solver` (IK) over :mod:`ik_node.compiled`
(the numba kernels), :mod:`ik_node.collision` (collision models, obstacles, SRDF pairs),
:mod:`ik_node.reach` (reachability maps), :mod:`ik_node.cli` (the ``ik_node`` command),
:mod:`ik_node.decisions` (what the node decides, free of rclpy) and :mod:`ik_node.ros` (the node's
rclpy shell), with :mod:`ik_node.errors` and :mod:`ik_node.lie` beneath them all.

The math core (:mod:`ik_node.description.model`, :mod:`ik_node.kinematics`, :mod:`ik_node.solver`,
:mod:`ik_node.lie`) and the node's decisions do not import rclpy; :mod:`ik_node.ros` is the ROS 2
layer.
"""

from .collision import Obstacle
from .description import Joint, Robot, load_robot
from .errors import IKNodeError, TargetError, UnknownJointError, UnknownLinkError, URDFError
from .kinematics import KinematicTree
from .solver import BatchResult, IKResult, IKSolutions, IKSolver, SolverOptions, TipTask

__all__ = [
    "BatchResult",
    "IKNodeError",
    "IKResult",
    "IKSolutions",
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
