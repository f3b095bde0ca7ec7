"""The solver's kernels compiled ahead of their use, per combination of feature switches.

A problem compiles only the kernels its options use; the combinations of feature switches
(:data:`~.compile_helper.FEATURES`) compile apart. :func:`warm` compiles one in this process on a
small sample robot (the types of a problem's arrays, not its robot, decide what is compiled, so
the sample serves every robot); :func:`warm_trees` and :func:`warm_closed_form` what trees and the
closed form add. ``python -m ik_node.solver`` and ``ik_node warmup`` run them, and so does the
helper process that compiles while a solver answers as plain Python
(:class:`~.compile_helper.HelperCompile`).
"""

from __future__ import annotations

import time

import numpy as np

from ..compiled import decompositions, nearest_branches, solution_sets
from ..compiled.gjk import simplified_hull
from ..compiled.jit import JIT_ENABLED
from ..description import bundled_urdf, load_robot
from . import kernels
from .all_solutions import chain_closed_form, solution_set
from .compile_helper import FEATURES, feature_names
from .ik_solver import IKSolver
from .kernel_switch import prepare_kernels

__all__ = ["FEATURE_OPTIONS", "warm", "warm_closed_form", "warm_trees"]

#: The sample robot's pairs of links left unchecked: the adjacent ones. Its one pair left, base /
#: tip, never touches (which the pairs a robot without an SRDF gets would leave out too: then no
#: pair, and no collision kernel in the search), but a solve moves them apart: it is checked.
SAMPLE_SRDF = """<robot name="sample">
  <disable_collisions link1="base" link2="a" reason="Adjacent"/>
  <disable_collisions link1="a" link2="tip" reason="Adjacent"/>
</robot>"""

#: Options turning each feature on for the sample robot (any value of the option compiles the same
#: specialisation: ``pinv``, ``transpose`` and ``ccd`` share one, as do the two solve types).
FEATURE_OPTIONS = {
    "method": {"method": "pinv"},
    "solve_type": {"solve_type": "distance"},
    "posture": {"posture_gain": 0.1},
    "collision": {"self_collision": True, "srdf": SAMPLE_SRDF},
}

#: Two revolute joints and a prismatic one (every joint type's branch of the kernels) with
#: collision geometry (primitives: the collision kernels need no mesh reader).
SAMPLE_URDF = """<robot name="sample">
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

#: A trunk joint and two limbs of their own, to hang from a floating joint: the kernels of several
#: tips (each limb's seed-table features) and of a free base placed from its targets.
TREE_SAMPLE_URDF = """<robot name="tree_sample">
  <link name="pelvis"/><link name="torso"/><link name="left"/><link name="right"/>
  <joint name="trunk" type="revolute"><parent link="pelvis"/><child link="torso"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="left_joint" type="revolute"><parent link="torso"/><child link="left"/>
    <origin xyz="0 0.2 0.3"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="right_joint" type="revolute"><parent link="torso"/><child link="right"/>
    <origin xyz="0 -0.2 0.3"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
</robot>"""


def warm(key: tuple[bool, ...]) -> tuple[float, bool]:
    """Compile (or load from numba's cache) the kernels of the combination ``key`` in this
    process, on the sample robot: the search, the seed table's and the task's kernels, and with
    ``collision`` the ones collision queries call from Python (a self pair's, and a mesh hull's:
    :func:`warm_mesh_hull`). Returns (seconds, whether anything was compiled)."""
    began = time.perf_counter()
    options = {
        name: value for feature in feature_names(key) for name, value in FEATURE_OPTIONS[feature].items()
    }
    solver = IKSolver(
        load_robot(SAMPLE_URDF), "base", ["tip"], tasks={"tip": "position"}, seed_table_size=64,
        compile_helper=False, **options,
    )  # fmt: skip
    _, compiled = prepare_kernels(solver.core)
    target = solver.tree.forward(np.array([0.5, 0.2, 0.3]), "tip")
    solver.solve(target)
    solver.solve_many(np.repeat(target[None], 2, axis=0))
    solver.null_space_motion(solver.task_jacobian(solver.rest_posture), np.ones(3))
    if key[FEATURES.index("collision")]:
        solver.clearance(solver.rest_posture)
        warm_mesh_hull()
    return time.perf_counter() - began, compiled


def warm_mesh_hull() -> None:
    """Compile (or load) the kernel that thins a collision mesh's hull to ``HULL_VERTICES``
    (:func:`~ik_node.compiled.gjk.simplified_hull`, as ``collision.shape_fitting`` calls it), on
    points of a sphere (more than that many)."""
    from ..collision import HULL_TOLERANCE, HULL_VERTICES

    directions = np.random.default_rng(0).normal(size=(4 * HULL_VERTICES, 3))
    points = np.ascontiguousarray(directions / np.linalg.norm(directions, axis=1)[:, None])
    simplified_hull(points, HULL_VERTICES, HULL_TOLERANCE, np.empty(HULL_VERTICES, dtype=np.int64))


def warm_trees() -> tuple[float, bool]:
    """Compile (or load) the kernels that trees add to any combination: the limbs' seed-table
    features of several tips, and the rigid fit that places a free base (a solve with no seed
    whose targets face the other way). Returns (seconds, whether anything was compiled)."""
    began = time.perf_counter()
    watched = (kernels.limb_table_features, kernels.place_free_base)
    misses = [sum(kernel.stats.cache_misses.values()) if JIT_ENABLED else 0 for kernel in watched]
    tips = ["left", "right"]
    solver = IKSolver(
        load_robot(TREE_SAMPLE_URDF, root_joint="floating"), "world", tips, seed_table_size=64,
        max_attempts=2, compile_helper=False,
    )  # fmt: skip
    half_turn = np.diag([-1.0, -1.0, 1.0, 1.0])  # (about z: the fit turns the base)
    targets = half_turn @ solver.tip_poses(solver.rest_posture)
    solver.solve(dict(zip(tips, targets)), timeout=None)
    compiled = JIT_ENABLED and [sum(kernel.stats.cache_misses.values()) for kernel in watched] != misses
    return time.perf_counter() - began, bool(compiled)


def warm_paths() -> tuple[float, bool]:
    """Compile (or load) the straight-line kernel of the default problem
    (:meth:`IKSolver.cartesian_path`'s step loop, ``straight_line_steps``), which no solve
    needs: a short line on the sample robot. Returns (seconds, whether anything was compiled)."""
    began = time.perf_counter()
    watched = kernels.straight_line_steps
    misses = sum(watched.stats.cache_misses.values()) if JIT_ENABLED else 0
    solver = IKSolver(
        load_robot(SAMPLE_URDF), "base", ["tip"], tasks={"tip": "position"}, seed_table_size=64,
        compile_helper=False,
    )  # fmt: skip
    seed = np.array([0.5, 0.2, 0.3])
    goal = solver.tree.forward(seed, "tip")
    goal[0, 3] += 0.01  # m
    solver.cartesian_path(goal, seed=seed)
    compiled = JIT_ENABLED and sum(watched.stats.cache_misses.values()) != misses
    return time.perf_counter() - began, bool(compiled)


def warm_closed_form() -> tuple[float, bool]:
    """Compile (or load) the closed-form kernels (:meth:`IKSolver.solve_all` and ``solve_many``
    with ``solve_type='distance'`` on a chain that decomposes): on the bundled arm6 (three
    parallel axes: the exact set, and the branches' configurations and solution set a calibrated
    arm's polish calls), then the other decompositions for the same argument types. Returns
    (seconds, whether anything was compiled)."""
    began = time.perf_counter()
    watched = (
        decompositions.spherical_two_parallel, decompositions.spherical_two_intersecting,
        decompositions.three_parallel_two_intersecting, solution_sets.solution_set,
        solution_sets.branch_configurations, solution_sets.closed_form_context, solution_sets.closed_form_set,
        nearest_branches.nearest_branches,
    )  # fmt: skip
    misses = [sum(kernel.stats.cache_misses.values()) if JIT_ENABLED else 0 for kernel in watched]
    solver = IKSolver(
        load_robot(str(bundled_urdf("arm6"))), "base_link", "tool0", solve_type="distance",
        seed_table_size=64, compile_helper=False,
    )  # fmt: skip
    target = solver.tip_poses(solver.rest_posture)[0]
    solver.solve_all(target)
    branches = chain_closed_form(solver).branches(target)  # (as a calibrated arm's polish calls them)
    solution_set(solver, branches.q, branches.status, target, None, (np.inf, np.inf))
    solver.solve_many(np.repeat(target[None], 2, axis=0))
    if JIT_ENABLED:  # (the decompositions arm6 does not use: the same argument types)
        signature = decompositions.three_parallel_two_intersecting.signatures[0]
        for kernel in watched[:2]:
            kernel.compile(signature)
    compiled = JIT_ENABLED and [sum(kernel.stats.cache_misses.values()) for kernel in watched] != misses
    return time.perf_counter() - began, bool(compiled)
