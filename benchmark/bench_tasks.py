"""Tasks beyond a pose (issue 50): each task kind's success and time per solve on the bundled robots.

Usage: python benchmark/bench_tasks.py [--goals N] [--seed N]

Every goal can be met: it comes from a configuration drawn uniformly in the middle 80 % of each
joint's range (a continuous joint's within [-pi, pi]; a free-floating base within 1 m, facing
anywhere), by ik_node's FK (a random stream per case, keyed on --seed and the case's name, as
``bench_ik.harness_rng``). Each goal is solved once from the solver's default seed (the rest
posture; a free-floating base placed from the goals) unless the case says, with its budget;
"solved" is ``result.success`` (the tests check the same answers by independent FK:
test_gaze.py, test_bands.py, test_relative_tasks.py). Time: the wall time of ``solve`` [us],
mean, median and p90 over every goal, failures included; iterations: mean over every goal.

Cases:

* **pose** (arm6, arm7): the tool's pose, the reference;
* **turned pose, full** vs **turned pose, band pi on wz** (arm6): the same goals turned by a
  random angle about the tool's z. The full pose must meet the turn (the wrist's last joint
  reaches +-pi, so most turns can be met, through other branches); the band leaves it free;
* **gaze** (the mobile manipulator's pan/tilt camera, two joints; arm6's and arm7's tool z):
  a point 0.3-3 m along the drawn configuration's axis;
* **relative pose** (the dual arm): the right tool's pose in the left tool's frame, with the left
  tool's pose as a target too, or without (the left held at the seed: the torso and left arm at
  the drawn configuration, the right arm at rest);
* **whole body** (the bundled humanoid, free-floating, 100 attempts per goal, no time budget):
  feet and hands at poses with the head at a pose (five poses) vs looking at a point 0.5-3 m
  along its x (four poses and a gaze).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from ik_node import IKSolver, TipTask, load_robot
from ik_node.description.catalogue import URDF_DIR

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import cpu_model  # noqa: E402

HUMANOID_LIMBS = ["left_foot", "right_foot", "left_hand", "right_hand"]


def case_rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(zlib.crc32(name.encode()),)))


def middle_configuration(solver, rng) -> np.ndarray:
    """A configuration uniform in the middle 80 % of each joint's range (within [-pi, pi] where a
    joint has no limits); a free-floating base at the origin, upright."""
    lower, upper = np.maximum(solver.lower, -math.pi), np.minimum(solver.upper, math.pi)
    middle, half = 0.5 * (lower + upper), 0.4 * (upper - lower)
    q = rng.uniform(middle - half, middle + half)
    return solver.tree.normalized(q)


def about_z(angle: float) -> np.ndarray:
    turn = np.eye(4)
    turn[:2, :2] = [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]]
    return turn


def along(pose: np.ndarray, axis, distance: float) -> np.ndarray:
    return pose[:3, 3] + distance * (pose[:3, :3] @ np.asarray(axis, dtype=float))


def run(solver, goals, timeout) -> dict:
    """Solve each goal once (a goal ``(targets, seed)``: from that seed; else the default);
    success, times [us], iterations."""
    solver.solve(goals[0][0] if isinstance(goals[0], tuple) else goals[0], timeout=timeout)  # (loads them)
    times, solved, iterations = [], 0, []
    for goal in goals:
        goal, seed = goal if isinstance(goal, tuple) else (goal, None)
        began = time.perf_counter()
        result = solver.solve(goal, seed=seed, timeout=timeout)
        times.append((time.perf_counter() - began) * 1e6)
        solved += result.success
        iterations.append(result.iterations)
    return {"solved": solved / len(goals), "times": np.array(times), "iterations": float(np.mean(iterations))}


def single_tip_cases(count: int, seed: int):
    """(name, robot, solver, goals, timeout) of the one-tip cases."""
    arm6, arm7 = load_robot(URDF_DIR / "arm6.urdf"), load_robot(URDF_DIR / "arm7.urdf")
    mobile = load_robot(URDF_DIR / "mobile_manipulator.urdf")
    for name, robot in (("arm6", arm6), ("arm7", arm7)):
        solver = IKSolver(robot, "base_link", ["tool0"])
        rng = case_rng(seed, f"pose {name}")
        goals = [solver.tip_poses(middle_configuration(solver, rng))[0] for _ in range(count)]
        yield "pose", name, solver, goals, 0.005
    full = IKSolver(arm6, "base_link", ["tool0"])
    free = IKSolver(arm6, "base_link", ["tool0"], tasks={"tool0": TipTask(bands=(0, 0, 0, 0, 0, math.pi))})
    rng = case_rng(seed, "turned arm6")
    turned = [
        full.tip_poses(middle_configuration(full, rng))[0] @ about_z(rng.uniform(-math.pi, math.pi))
        for _ in range(count)
    ]
    yield "turned pose, full", "arm6", full, turned, 0.005
    yield "turned pose, band pi on wz", "arm6", free, turned, 0.005
    for name, robot, tip, axis in (
        ("mobile_manipulator head", mobile, "camera_link", (1.0, 0.0, 0.0)),
        ("arm6", arm6, "tool0", (0.0, 0.0, 1.0)),
        ("arm7", arm7, "tool0", (0.0, 0.0, 1.0)),
    ):
        solver = IKSolver(robot, "base_link", [tip], tasks={tip: TipTask("gaze", axis=axis)})
        rng = case_rng(seed, f"gaze {name}")
        goals = [
            along(solver.tip_poses(middle_configuration(solver, rng))[0], axis, rng.uniform(0.3, 3.0))
            for _ in range(count)
        ]
        yield "gaze", name, solver, goals, 0.005


def relative_cases(count: int, seed: int):
    """The dual arm's right tool in its left tool's frame (10 cm along each flange's z), the left
    at a target too, or held at the seed (the torso and left arm as drawn, the right arm at rest)."""
    dual = load_robot(URDF_DIR / "dual_arm.urdf")
    tips = ["left_tool0", "right_tool0"]
    tasks = {
        "left_tool0": TipTask(offset=(0, 0, 0.1)),
        "right_tool0": TipTask(relative_to="left_tool0", offset=(0, 0, 0.1)),
    }
    solver = IKSolver(dual, "base_link", tips, tasks=tasks)
    rng = case_rng(seed, "relative dual_arm")
    is_right = np.array([name.startswith("right_") for name in solver.joint_names])
    both, held = [], []
    for _ in range(count):
        q = middle_configuration(solver, rng)
        left, right = solver.tip_poses(q)
        relative = np.linalg.inv(left) @ right
        both.append({"left_tool0": left, "right_tool0": relative})
        held.append(({"right_tool0": relative}, np.where(is_right, solver.rest_posture, q)))
    yield "relative pose + reference's pose", "dual_arm", solver, both, 0.005
    yield "relative pose, reference held", "dual_arm", solver, held, 0.005


def whole_body_cases(count: int, seed: int):
    humanoid = load_robot(URDF_DIR / "humanoid.urdf", root_joint="floating")
    tips = HUMANOID_LIMBS + ["head"]
    poses = IKSolver(humanoid, "world", tips, max_attempts=100)
    gaze = IKSolver(
        humanoid, "world", tips, tasks={"head": TipTask("gaze", axis=(1, 0, 0))}, max_attempts=100
    )
    rng = case_rng(seed, "whole body humanoid")
    pose_goals, gaze_goals = [], []
    for _ in range(count):
        q = middle_configuration(poses, rng)
        q[:3] = (*rng.uniform(-1.0, 1.0, 2), 0.0)
        q[3:7] = (0.0, 0.0, math.sin(0.5 * (yaw := rng.uniform(-math.pi, math.pi))), math.cos(0.5 * yaw))
        points = dict(zip(tips, poses.tip_poses(q)))
        pose_goals.append(points)
        gaze_goals.append({**points, "head": along(points["head"], (1, 0, 0), rng.uniform(0.5, 3.0))})
    yield "whole body: 5 poses", "humanoid", poses, pose_goals, None
    yield "whole body: 4 poses + head gaze", "humanoid", gaze, gaze_goals, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goals", type=int, default=500, help="goals per case (whole body: a fifth)")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    print(f"bench_tasks: {arguments.goals} goals per case (whole body {arguments.goals // 5}), seed "
          f"{arguments.seed}; {cpu_model()}")  # fmt: skip
    print(f"{'task':34s} {'robot':24s} {'solved':>7s} {'mean':>8s} {'median':>8s} {'p90':>8s} {'iter':>6s}")
    cases = [*single_tip_cases(arguments.goals, arguments.seed)]
    cases += [*relative_cases(arguments.goals, arguments.seed)]
    cases += [*whole_body_cases(max(1, arguments.goals // 5), arguments.seed)]
    for kind, name, solver, goals, timeout in cases:
        solver.wait_for_kernels()
        figures = run(solver, goals, timeout)
        times = figures["times"]
        print(
            f"{kind:34s} {name:24s} {100 * figures['solved']:6.1f}% {times.mean():7.1f}u "
            f"{np.median(times):7.1f}u {np.percentile(times, 90):7.1f}u {figures['iterations']:6.1f}"
        )


if __name__ == "__main__":
    main()
