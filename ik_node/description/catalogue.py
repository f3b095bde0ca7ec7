"""The robots ik_node is tested and benchmarked on, in one list: the bundled URDFs (``urdf/``)
and, when the PyPI package example-robot-data is installed, its Panda, UR5, TIAGo (torso + arm)
and PR2 right arm. Each case names a URDF, a base link and the tips a solver serves."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .resources import bundled_urdf

__all__ = [
    "BUNDLED",
    "URDF_DIR",
    "RobotCase",
    "all_cases",
    "case",
    "example_robot_data_cases",
    "example_robot_data_dir",
]


@dataclass(frozen=True)
class RobotCase:
    name: str
    urdf: Path
    base: str
    tips: tuple[str, ...]

    @property
    def single_chain(self) -> bool:
        return len(self.tips) == 1

    def __str__(self) -> str:
        return self.name


#: The directory of the bundled URDFs.
URDF_DIR = bundled_urdf("arm7").parent
#: The bundled robots; ``dual_arm_left`` is the two-arm robot's left chain (a chain peers can take).
BUNDLED = [
    RobotCase("arm6", bundled_urdf("arm6"), "base_link", ("tool0",)),
    RobotCase("arm7", bundled_urdf("arm7"), "base_link", ("tool0",)),
    RobotCase("arm7_gripper", bundled_urdf("arm7"), "world", ("left_finger", "right_finger")),
    RobotCase("mobile_manipulator", bundled_urdf("mobile_manipulator"), "odom", ("tool0",)),
    RobotCase("dual_arm", bundled_urdf("dual_arm"), "base_link", ("left_tool0", "right_tool0")),
    RobotCase("dual_arm_left", bundled_urdf("dual_arm"), "base_link", ("left_tool0",)),
    RobotCase(
        "humanoid", bundled_urdf("humanoid"), "pelvis", ("left_hand", "right_hand", "left_foot", "right_foot")
    ),
]

_EXAMPLE_ROBOT_DATA = (
    ("panda", "panda_description/urdf/panda.urdf", "panda_link0", ("panda_link8",)),
    ("ur5", "ur_description/urdf/ur5_robot.urdf", "base_link", ("tool0",)),
    ("tiago", "tiago_description/robots/tiago.urdf", "base_link", ("arm_tool_link",)),
    ("pr2_right_arm", "pr2_description/urdf/pr2.urdf", "torso_lift_link", ("r_wrist_roll_link",)),
)


def example_robot_data_dir() -> Path | None:
    """Where PyPI's example-robot-data put its robot descriptions, or None if not installed."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        share = distribution("example-robot-data").locate_file("cmeel.prefix/share/example-robot-data")
    except PackageNotFoundError:
        return None
    robots = Path(share) / "robots"
    return robots if robots.is_dir() else None


def example_robot_data_cases() -> list[RobotCase]:
    """example-robot-data's Panda, UR5, TIAGo (torso + arm) and PR2 right arm, if installed."""
    robots = example_robot_data_dir()
    if robots is None:
        return []
    return [
        RobotCase(name, robots / relative, base, tips)
        for name, relative, base, tips in _EXAMPLE_ROBOT_DATA
        if (robots / relative).is_file()
    ]


def all_cases() -> list[RobotCase]:
    """The bundled robots, then example-robot-data's when installed."""
    return BUNDLED + example_robot_data_cases()


def case(name: str) -> RobotCase:
    """The case called ``name`` (KeyError listing the names otherwise)."""
    cases = {robot.name: robot for robot in all_cases()}
    if name not in cases:
        raise KeyError(f"no robot case '{name}'; cases: {sorted(cases)}")
    return cases[name]
