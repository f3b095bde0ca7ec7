"""The robots the tests run on: the bundled URDFs and, when installed, example-robot-data's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

URDF_DIR = Path(__file__).resolve().parent.parent / "urdf"


@dataclass(frozen=True)
class RobotCase:
    name: str
    urdf: str  # file path
    base: str
    tips: tuple[str, ...]

    def __str__(self) -> str:
        return self.name


BUNDLED = [
    RobotCase("arm6", str(URDF_DIR / "arm6.urdf"), "base_link", ("tool0",)),
    RobotCase("arm7", str(URDF_DIR / "arm7.urdf"), "base_link", ("tool0",)),
    RobotCase("arm7_gripper", str(URDF_DIR / "arm7.urdf"), "world", ("left_finger", "right_finger")),
    RobotCase("mobile_manipulator", str(URDF_DIR / "mobile_manipulator.urdf"), "odom", ("tool0",)),
    RobotCase("dual_arm", str(URDF_DIR / "dual_arm.urdf"), "base_link", ("left_tool0", "right_tool0")),
    RobotCase(
        "humanoid",
        str(URDF_DIR / "humanoid.urdf"),
        "pelvis",
        ("left_hand", "right_hand", "left_foot", "right_foot"),
    ),
]


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
    specs = [
        ("panda", "panda_description/urdf/panda.urdf", "panda_link0", ("panda_link8",)),
        ("ur5", "ur_description/urdf/ur5_robot.urdf", "base_link", ("tool0",)),
        ("tiago", "tiago_description/robots/tiago.urdf", "base_link", ("arm_tool_link",)),
        ("pr2_right_arm", "pr2_description/urdf/pr2.urdf", "torso_lift_link", ("r_wrist_roll_link",)),
    ]
    return [
        RobotCase(name, str(robots / relative), base, tips)
        for name, relative, base, tips in specs
        if (robots / relative).is_file()
    ]


ALL = BUNDLED + example_robot_data_cases()
