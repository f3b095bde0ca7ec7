"""The streaming servo (:mod:`.servo`): twists, joint jogs and joint goals turned into joint
commands one period at a time, within position, velocity and acceleration limits
(:mod:`.limits`), smooth through singularities and near collisions; commands in :mod:`.commands`.
Free of ROS: the node streams topics through it."""

from .commands import TWIST_AXES, JointGoalCommand, JointJogCommand, ServoCommandError, TwistCommand
from .limits import MotionLimits, braking_speed, goal_velocity, scaled_velocity, velocity_bounds
from .servo import (
    COLLISION,
    HALTED,
    JOINT_LIMIT,
    OK,
    REACHED,
    SINGULARITY,
    WAITING_FOR_KERNELS,
    Servo,
    ServoState,
    ServoStatus,
)

__all__ = [
    "COLLISION",
    "HALTED",
    "JOINT_LIMIT",
    "JointGoalCommand",
    "JointJogCommand",
    "MotionLimits",
    "OK",
    "REACHED",
    "SINGULARITY",
    "Servo",
    "ServoCommandError",
    "ServoState",
    "ServoStatus",
    "TWIST_AXES",
    "TwistCommand",
    "WAITING_FOR_KERNELS",
    "braking_speed",
    "goal_velocity",
    "scaled_velocity",
    "velocity_bounds",
]
