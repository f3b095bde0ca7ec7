"""Digests of the solver's answers on seeded goals, to show that a refactor changes no answer.

Each case solves seeded goals with budgets of attempts and iterations only (no time budget, so
that a run is deterministic) through every path of ``IKSolver``: ``solve`` (one tip, several
tips with task priority, a free base placed from its targets, each method, posture, collision,
obstacles set after construction), ``solve_many``, ``solve_all`` and the closed form's nearest
solutions. It prints one SHA-256 per case over the answers' bytes (q, success, errors, iterations,
reason); ``--save FILE`` also stores the arrays (``.npz``) and ``--compare FILE`` reports the first
difference against a stored run.

    python benchmark/answer_digest.py --save before.npz     # at the old commit
    python benchmark/answer_digest.py --compare before.npz  # at the new one: every case "same"
"""

from __future__ import annotations

import argparse
import hashlib
import sys

import numpy as np

from ik_node import IKSolver, load_robot
from ik_node.description import bundled_urdf

GOALS = 40  # per case
BUDGET = {"timeout": None}  # (attempts and iterations bound each solve: deterministic)


def _goals(solver: IKSolver, count: int, rng: np.random.Generator) -> list[dict]:
    """Reachable goals: the tips' poses at random configurations within the limits."""
    low = np.where(np.isfinite(solver.lower), solver.lower, -np.pi)
    high = np.where(np.isfinite(solver.upper), solver.upper, np.pi)
    goals = []
    for _ in range(count):
        q = solver.tree.normalized(rng.uniform(low, high))
        goals.append(dict(zip(solver.tip_links, solver.tip_poses(q))))
    return goals


def _record(result) -> list:
    return [
        np.asarray(result.q, dtype=float),
        np.array([result.success, result.position_error, result.orientation_error, result.iterations]),
        np.frombuffer(result.reason.encode(), dtype=np.uint8),
    ]


def _solver(name: str, base: str, tips, **options) -> IKSolver:
    robot = load_robot(str(bundled_urdf(name)))
    return IKSolver(robot, base, tips, max_attempts=8, compile_helper=False, **options)


def case_solves(solver: IKSolver, seed_offset: int, rng, far: str | None = None) -> list:
    """``solve`` of seeded goals, from the rest posture and from a nearby seed; with ``far``,
    that tip's goal moved out of reach (task priority)."""
    arrays = []
    for goal in _goals(solver, GOALS, rng):
        if far is not None:
            goal[far] = goal[far].copy()
            goal[far][:3, 3] += 5.0
        arrays += _record(solver.solve(goal, **BUDGET))
        seed = solver.rest_posture + 0.05 * seed_offset
        arrays += _record(solver.solve(goal, seed=seed, **BUDGET))
    return arrays


def cases() -> dict:
    """name -> function returning the list of arrays of that case."""
    rng = lambda: np.random.default_rng(7)  # noqa: E731  (each case its own stream)

    def arm7():
        return case_solves(_solver("arm7", "base_link", ["tool0"]), 1, rng())

    def arm7_methods():
        arrays = []
        for method in ("pinv", "transpose", "ccd"):
            solver = _solver("arm7", "base_link", ["tool0"], method=method, max_iterations=60)
            arrays += case_solves(solver, 1, rng())
        return arrays

    def arm7_posture():
        return case_solves(_solver("arm7", "base_link", ["tool0"], posture_gain=0.1), 1, rng())

    def arm7_collision():
        solver = _solver("arm7", "base_link", ["tool0"], self_collision=True)
        arrays = case_solves(solver, 1, rng())
        from ik_node.collision import Obstacle

        solver.set_obstacles([Obstacle.sphere(0.1, (0.4, 0.3, 0.5), "ball")])
        return arrays + case_solves(solver, 2, rng())

    def dual_arm_priority():
        solver = _solver("dual_arm", "base_link", ["left_tool0", "right_tool0"])
        return case_solves(solver, 1, rng()) + case_solves(solver, 1, rng(), far="right_tool0")

    def humanoid_free_base():
        robot = load_robot(str(bundled_urdf("humanoid")), root_joint="floating")
        solver = IKSolver(
            robot, "world", ["left_hand", "right_hand", "left_foot", "right_foot"], max_attempts=8,
            compile_helper=False,
        )  # fmt: skip
        return case_solves(solver, 0, rng())

    def arm7_many():
        solver = _solver("arm7", "base_link", ["tool0"])
        goals = np.array([goal["tool0"] for goal in _goals(solver, 200, rng())])
        batch = solver.solve_many(goals, timeout=None)
        return [batch.q, batch.success, batch.position_error, batch.orientation_error]

    def arm6_closed_form():
        solver = _solver("arm6", "base_link", ["tool0"], solve_type="distance")
        goals = _goals(solver, GOALS, rng())
        arrays = []
        for goal in goals:
            arrays += _record(solver.solve(goal, seed=solver.rest_posture + 0.1))
            found = solver.solve_all(goal["tool0"], seed=solver.rest_posture)
            arrays += [found.q, found.position_error, found.orientation_error]
        batch = solver.solve_many(np.array([goal["tool0"] for goal in goals]), timeout=None)
        return arrays + [batch.q, batch.success, batch.position_error, batch.orientation_error]

    return {
        "arm7": arm7,
        "arm7_methods": arm7_methods,
        "arm7_posture": arm7_posture,
        "arm7_collision": arm7_collision,
        "dual_arm_priority": dual_arm_priority,
        "humanoid_free_base": humanoid_free_base,
        "arm7_many": arm7_many,
        "arm6_closed_form": arm6_closed_form,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--save", help="store the answers' arrays in this .npz")
    parser.add_argument("--compare", help="compare with the answers stored in this .npz")
    parser.add_argument("--only", nargs="+", help="these cases only")
    arguments = parser.parse_args(argv)
    stored = dict(np.load(arguments.compare)) if arguments.compare else None
    saved, differ = {}, 0
    for name, run in cases().items():
        if arguments.only and name not in arguments.only:
            continue
        arrays = [np.ascontiguousarray(array) for array in run()]
        digest = hashlib.sha256(b"".join(array.tobytes() for array in arrays)).hexdigest()[:16]
        verdict = ""
        for index, array in enumerate(arrays):
            saved[f"{name}/{index}"] = array
        if stored is not None:
            old = [stored[f"{name}/{index}"] for index in range(len(stored)) if f"{name}/{index}" in stored]
            same = len(old) == len(arrays) and all(
                a.shape == b.shape and a.tobytes() == b.tobytes() for a, b in zip(old, arrays)
            )
            if not same:
                differ += 1
                first = next(
                    (i for i, (a, b) in enumerate(zip(old, arrays)) if a.tobytes() != b.tobytes()),
                    min(len(old), len(arrays)),
                )
                verdict = f"  DIFFERENT (first at array {first} of {len(arrays)})"
            else:
                verdict = "  same"
        print(f"{name:22s} {digest}  ({len(arrays)} arrays){verdict}", flush=True)
    if arguments.save:
        np.savez(arguments.save, **saved)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
