"""``python -m ik_node.solver``: compile the IK kernels into numba's cache (or load them from it)
and say how long it took. Run once after installing, so that no process pays the compile at its
first solve; the test script runs it before pytest's workers start."""

from __future__ import annotations

import time

import numpy as np

from ..collision.geometry import HULL_TOLERANCE, HULL_VERTICES
from ..collision.obstacles import Obstacle
from ..compiled.gjk import simplified_hull
from ..compiled.jit import COMPILED
from ..description.model import load_robot
from .ik_solver import IKSolver, prepare_kernels

#: Two revolute joints and a prismatic one: every kernel and branch type the solver compiles; and
#: collision geometry for the collision kernels (with the ``collision`` extra).
_SAMPLE_URDF = """<robot name="sample">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="a"><collision><origin xyz="0.15 0 0"/><geometry><cylinder radius="0.03" length="0.3"/>
    </geometry></collision></link>
  <link name="b"/>
  <link name="tip"><collision><geometry><sphere radius="0.04"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="prismatic"><parent link="a"/><child link="b"/><origin xyz="0.3 0 0"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.5" effort="1" velocity="1"/></joint>
  <joint name="j3" type="continuous"><parent link="b"/><child link="tip"/><origin xyz="0 0 0.2"/>
    <axis xyz="0 1 0"/></joint>
</robot>"""


def main() -> int:
    began = time.perf_counter()
    solver = IKSolver(
        load_robot(_SAMPLE_URDF), "base", ["tip"], tasks={"tip": "position"}, seed_table_size=64
    )
    seconds, compiled = prepare_kernels(solver)  # done while building the solver: its figures
    target = solver.tree.forward(np.array([0.5, 0.2, 0.3]), "tip")
    solver.solve(target)
    solver.solve_many(np.repeat(target[None], 2, axis=0))
    solver.null_space_motion(solver.task_jacobian(np.zeros(3)), np.ones(3))
    _prepare_collision_kernels(solver, target)
    if not COMPILED:
        print("IK kernels: numba is not in use (plain Python); nothing to compile")
    else:
        what = "compiled (cached for later starts)" if compiled else "loaded from the cache"
        total = time.perf_counter() - began
        print(f"IK kernels {what}: the default problem's {seconds:.1f} s, all {total:.1f} s")
    return 0


def _prepare_collision_kernels(solver: IKSolver, target: np.ndarray) -> None:
    """The kernels collision checking calls from Python (hull simplification, group distances),
    compiled too where the ``collision`` extra is installed."""
    try:
        import trimesh  # noqa: F401  (the collision extra)
    except ImportError:
        return
    obstacle = Obstacle.sphere(0.05, (0.0, 0.6, 0.0))
    checked = IKSolver(solver.robot, "base", ["tip"], tasks={"tip": "position"}, seed_table_size=64,
                       self_collision=True, obstacles=[obstacle])  # fmt: skip
    checked.solve(target)
    checked.clearance(checked.rest_posture)
    points = np.random.default_rng(0).normal(size=(HULL_VERTICES + 2, 3))
    simplified_hull(points, HULL_VERTICES, HULL_TOLERANCE, np.empty(HULL_VERTICES, dtype=np.int64))


if __name__ == "__main__":
    raise SystemExit(main())
