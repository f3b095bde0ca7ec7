"""IKSolver.solve_all: every solution of decomposable arms against EAIK (PyPI ``eaik``, an
independent implementation of the subproblem decompositions), a calibrated copy (axes tilted
1e-4 rad) checked by pinocchio's FK, search for other chains, bad input.

The arms are written from Denavit–Hartenberg tables (``dh_arms``; standard convention: ``T_i =
Rz(θi) Tz(di) Tx(ai) Rx(αi)``), and EAIK's model is built from the same tables by its own formulas: a UR5
(three parallel axes), a KUKA KR-type arm (spherical wrist, axes 2 ∥ 3), an arm with a spherical
wrist and meeting axes 1, 2 but 2 ∦ 3, a 7-joint KUKA iiwa-type arm with joint 3 locked, and a
Panda-type arm with joint 7 locked (a spherical shoulder: solved read from the tool back). Poses
come from random configurations inside the limits (every one reachable), some at the wrist
singularity.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from dh_arms import ARMS, LOCKED, PI, dh_axes, dh_urdf

from ik_node import IKSolutions, IKSolver, load_robot
from ik_node.errors import IKNodeError

try:
    from eaik.IK_HP import HPRobot
except ImportError:  # (a test dependency: pip install eaik)
    HPRobot = None

needs_eaik = pytest.mark.skipif(
    HPRobot is None, reason="eaik (the reference IK) is not installed: pip install eaik"
)

POSES = 1000
SINGULAR_POSES = 50
#: Solutions equal within this [rad] are the same; FK residuals below this [m, rad] count as reached.
SAME = 1e-6
REACHED = 1e-5
ARM6 = Path(__file__).parents[1] / "urdf" / "arm6.urdf"

KERNELS = {
    "ur5": "three_parallel_two_intersecting",
    "kuka_kr": "spherical_two_parallel",
    "shoulder_meeting": "spherical_two_intersecting",
    "iiwa": "spherical_two_intersecting",
    "panda_like": "spherical_two_intersecting",  # (read from the tool back: its shoulder is spherical)
}
#: Which of the six free joints at 0 is the arm's singularity (a wrist, or the Panda's shoulder
#: with axes 1 and 3 in line): the fifth unless said.
SINGULAR_JOINT = {"panda_like": 1}
#: Joints a wrist singularity leaves undetermined (one family), per arm: the others are compared.
FAMILY = {
    "ur5": (1, 2, 3, 5), "kuka_kr": (3, 5), "shoulder_meeting": (3, 5), "iiwa": (3, 5), "panda_like": (0, 2),
}  # fmt: skip


def wrapped(angles):
    return np.remainder(np.asarray(angles) + PI, 2 * PI) - PI


def variants_inside(q, lower, upper) -> list:
    """Every ``q + 2πk`` (per joint) within the limits (slack 1e-9)."""
    choices = [
        [value + 2 * PI * k for k in range(-3, 4) if low - 1e-9 <= value + 2 * PI * k <= high + 1e-9]
        for value, low, high in zip(q, lower, upper)
    ]
    rows = [[]]
    for values in choices:
        rows = [row + [value] for row in rows for value in values]
    return rows


def distinct(rows, columns: int = 6) -> np.ndarray:
    kept = []
    for row in rows:
        if all(np.abs(wrapped(row - other)).max() > SAME for other in kept):
            kept.append(row)
    return np.array(kept).reshape(-1, columns)


def same_sets(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two sets of wrapped solutions (k, m) are equal within :data:`SAME`."""
    if len(a) != len(b):
        return False
    gaps = np.abs(wrapped(a[:, None] - b[None])).max(axis=2)
    return gaps.min(axis=1).max() <= SAME and gaps.min(axis=0).max() <= SAME


class Arm:
    """The arm ``name`` as a solver, and EAIK's model of it."""

    def __init__(self, name: str, tilt: float = 0.0):
        d, a, alpha, self.lower, self.upper = ARMS[name]
        self.name = name
        self.urdf = dh_urdf(name, d, a, alpha, self.lower, self.upper, tilt, np.random.default_rng(7))
        self.solver = IKSolver(load_robot(self.urdf), "base_link", "tool0", compile_helper=False)
        self.lock = LOCKED.get(name)
        self.locked = None if self.lock is None else {f"joint{self.lock[0] + 1}": self.lock[1]}
        self.free = [i for i in range(len(d)) if self.lock is None or i != self.lock[0]]
        self.axes, self.offsets, self.tool_rotation = dh_axes(d, a, alpha)
        self.eaik = None
        if HPRobot is not None:
            fixed = [self.lock] if self.lock else []
            self.eaik = HPRobot(self.axes, self.offsets, fixed_axes=fixed)

    def random_configurations(self, rng, count: int, singular: int) -> np.ndarray:
        q = rng.uniform(self.lower, self.upper, (count, len(self.lower)))
        if self.lock:
            q[:, self.lock[0]] = self.lock[1]
        q[:singular, self.free[SINGULAR_JOINT.get(self.name, 4)]] = 0.0  # (θ5 = 0 of the six: a wrist)
        return q

    def reference_solutions(self, pose: np.ndarray) -> np.ndarray:
        """EAIK's solutions of ``pose`` that reach it (FK residual, not its least-squares flag),
        wrapped, distinct, those with a variant inside the limits (free joints only)."""
        eaik_pose = pose.copy()
        eaik_pose[:3, :3] = pose[:3, :3] @ self.tool_rotation.T
        found = []
        for q in self.eaik.IK(eaik_pose).Q:
            reached = self.eaik.fwdKin(q)
            if np.abs(reached - eaik_pose).max() < REACHED and variants_inside(q, self.lower, self.upper):
                found.append(wrapped(q[self.free]))
        return distinct(found)


@pytest.fixture(scope="module", params=list(ARMS))
def arm(request) -> Arm:
    return Arm(request.param)


@needs_eaik
def test_every_solution_equals_eaiks(arm):
    rng = np.random.default_rng(30)
    configurations = arm.random_configurations(rng, POSES, SINGULAR_POSES)
    poses = np.array([arm.solver.tree.forward(q) for q in configurations])
    for index, (q, pose) in enumerate(zip(configurations, poses)):
        found = arm.solver.solve_all(pose, seed=q, locked=arm.locked)
        assert isinstance(found, IKSolutions) and len(found.labels) == len(found.q)
        assert found.complete and found.success and found.method == KERNELS[arm.name]
        assert np.abs(found.q[0] - q).max() < SAME, "the seed's own configuration first"
        assert np.all((found.q >= np.array(arm.lower) - 1e-9) & (found.q <= np.array(arm.upper) + 1e-9))
        # (2π variants are equal to ~1e-15 once wrapped: np.unique first, for speed)
        different = distinct(np.unique(np.round(wrapped(found.q), 9), axis=0), len(q))
        reached = arm.solver.tree.link_poses(different)[:, arm.solver.tree.frame_index("tool0")]
        assert np.abs(reached - pose).max() < REACHED
        expected = sum(len(variants_inside(row, arm.lower, arm.upper)) for row in different)
        assert len(found.q) == expected, "every 2π variant inside the limits, once"
        ours = distinct(wrapped(found.q[:, arm.free]))
        reference = arm.reference_solutions(pose)
        if index < SINGULAR_POSES:
            assert found.singular
            kept = [i for i in range(6) if i not in FAMILY[arm.name]]
            covered = np.abs(wrapped(reference[:, None, kept] - ours[None, :, kept])).max(axis=2).min(axis=1)
            assert np.all(covered <= SAME), "EAIK's regular branches are among ours"
        else:
            assert not found.singular
            assert same_sets(ours, reference), (index, ours, reference)


def test_a_calibrated_copy_is_polished_exact_on_the_real_tree():
    pinocchio = pytest.importorskip("pinocchio")
    for name in ("ur5", "kuka_kr"):
        nominal, tilted = Arm(name), Arm(name, tilt=1e-4)
        model = pinocchio.buildModelFromXML(tilted.urdf)
        data, tool = model.createData(), model.getFrameId("tool0")
        rng = np.random.default_rng(31)
        same_count = complete_count = 0
        configurations = tilted.random_configurations(rng, 200, 10)
        for index, q in enumerate(configurations):
            pose = tilted.solver.tree.forward(q)
            found = tilted.solver.solve_all(pose, seed=q)
            assert found.success and found.method == KERNELS[name] + "+polish"
            complete_count += found.complete
            if found.complete and index >= 10:  # (near the nominal singularity: another member)
                assert np.abs(found.q[0] - q).max() < 1e-5, "the pose's own configuration is found"
            for row in found.q:
                pinocchio.framesForwardKinematics(model, data, row)
                placement = data.oMf[tool]
                assert np.linalg.norm(placement.translation - pose[:3, 3]) < REACHED
                assert np.linalg.norm(pinocchio.log3(placement.rotation.T @ pose[:3, :3])) < REACHED
            same_count += len(found.q) == len(nominal.solver.solve_all(pose).q)
        assert same_count >= 0.9 * len(configurations), "the branches of the nominal arm, polished"
        assert complete_count >= 0.9 * len(configurations), "incomplete only near singularities"


def test_continuous_joints_give_one_value_nearest_the_seed():
    d, a, alpha, lower, upper = ARMS["kuka_kr"]
    urdf = dh_urdf("kr_continuous", d, a, alpha, lower, upper, continuous=(0, 5))
    solver = IKSolver(load_robot(urdf), "base_link", "tool0", compile_helper=False)
    bounded = Arm("kuka_kr").solver
    rng = np.random.default_rng(33)
    for _ in range(50):
        q = rng.uniform(lower, upper)
        seed = q + rng.uniform(-0.3, 0.3, 6) + np.array([4 * PI, 0, 0, 0, 0, -2 * PI])
        found = solver.solve_all(solver.tree.forward(q), seed=seed)
        assert found.complete and np.all(np.abs(found.q[:, [0, 5]] - seed[[0, 5]]) <= PI + 1e-9)
        assert np.abs(wrapped(found.q[0] - q)).max() < SAME
        wider = bounded.solve_all(bounded.tree.forward(q)).q  # (the same arm, joints 1 and 6 bounded)
        assert len(found.q) >= len(distinct(wrapped(wider)))


def test_solve_distance_returns_the_solution_nearest_the_seed_of_the_whole_set():
    """``solve_type='distance'`` on a UR5 (a closed form): ``solve`` returns the member of
    ``solve_all``'s set with the least ``Σ (q − seed)² / w`` (joint weights unequal), checked
    against the set by brute force; with ``max_joint_move``, a nearest one beyond it is no
    success (``joint_move``); the default ``speed`` keeps the numeric search."""
    d, a, alpha, lower, upper = ARMS["ur5"]
    robot = load_robot(dh_urdf("ur5", d, a, alpha, lower, upper))
    weights = {f"joint{j + 1}": w for j, w in enumerate([4.0, 1.0, 0.5, 2.0, 1.0, 0.25])}
    solver = IKSolver(robot, "base_link", "tool0", solve_type="distance", joint_weights=weights)
    bounded = IKSolver(robot, "base_link", "tool0", solve_type="distance", max_joint_move=0.5)
    w = np.array(list(weights.values()))
    rng = np.random.default_rng(34)
    refused = 0
    for _ in range(60):
        q, seed = rng.uniform(lower, upper), rng.uniform(lower, upper)
        target = solver.tree.forward(q)
        every = solver.solve_all(target).q
        result = solver.solve(target, seed=seed)
        assert result.success and result.reason == "success" and result.attempts == 1
        assert np.abs(solver.tree.forward(result.q) - target).max() < REACHED
        costs = (((every - seed) ** 2) / w).sum(axis=1)
        assert (((result.q - seed) ** 2) / w).sum() <= costs.min() + 1e-9
        near = bounded.solve(target, seed=seed)
        move = np.abs(near.q - seed).max()
        assert near.success == (move <= 0.5) and near.reason == ("success" if near.success else "joint_move")
        refused += not near.success
    assert refused > 0
    speed = IKSolver(robot, "base_link", "tool0")
    assert speed.solve(speed.tree.forward(q), seed=seed).iterations > 0  # (the numeric search)


def test_the_set_is_ordered_nearest_the_seed_first():
    """``solve_all`` with a seed orders its set by ``Σ (q − seed)² / w`` (joint weights unequal),
    nearest first, and holds the same solutions as without one: on a UR5 of ±2π (up to 8 × 2⁶
    solutions, sorted by merging) and the same arm of ±π (at most 8, sorted in place)."""
    d, a, alpha, lower, upper = ARMS["ur5"]
    weights = {f"joint{j + 1}": w for j, w in enumerate([4.0, 1.0, 0.5, 2.0, 1.0, 0.25])}
    w = np.array(list(weights.values()))
    rng = np.random.default_rng(35)
    sizes = []
    for limit in (2 * PI, PI):
        bounds = [-limit] * 6, [limit] * 6
        robot = load_robot(dh_urdf("ur5", d, a, alpha, *bounds))
        solver = IKSolver(robot, "base_link", "tool0", joint_weights=weights, compile_helper=False)
        for _ in range(40):
            q, seed = rng.uniform(*bounds), rng.uniform(*bounds)
            target = solver.tree.forward(q)
            ordered, unordered = solver.solve_all(target, seed=seed), solver.solve_all(target)
            costs = (((ordered.q - seed) ** 2) / w).sum(axis=1)
            assert np.all(np.diff(costs) >= 0.0), "nearest the seed first"
            assert len(ordered.q) == len(unordered.q)
            gaps = np.abs(ordered.q[:, None] - unordered.q[None]).max(axis=2)
            assert gaps.min(axis=1).max() == 0.0 and gaps.min(axis=0).max() == 0.0, "the same solutions"
            for row, label in enumerate(ordered.labels):  # (each row's label moved with it)
                assert label == unordered.labels[int(np.argmin(gaps[row]))]
            sizes.append(len(ordered.q))
    assert max(sizes) > 16 and 2 <= min(sizes) <= 8


def test_solve_many_distance_gives_each_target_the_nearest_solution():
    """``solve_many`` with ``solve_type='distance'`` through the closed form: on a UR5 each
    answer is as near as ``solve``'s and the nearest of the whole set (brute force over ``solve_all``),
    verified by FK; on a calibrated copy (axes tilted 1e-4 rad) each answer is exact on the real
    tree by pinocchio's FK and within the polish's reach of the nominal nearest; a target out of
    reach comes back unsolved; with ``max_joint_move`` a nearest solution beyond it is no success."""
    pinocchio = pytest.importorskip("pinocchio")
    rng = np.random.default_rng(35)
    for tilt in (0.0, 1e-4):
        arm = Arm("ur5", tilt=tilt)
        robot = load_robot(arm.urdf)
        solver = IKSolver(robot, "base_link", "tool0", solve_type="distance", compile_helper=False)
        bounded = IKSolver(robot, "base_link", "tool0", solve_type="distance", max_joint_move=0.5)
        q = arm.random_configurations(rng, 200, 10)
        seeds = arm.random_configurations(rng, 200, 0)
        seeds[10:20] = q[10:20] + rng.uniform(-0.1, 0.1, (10, 6))  # (near ones too)
        poses = np.array([solver.tree.forward(row) for row in q])
        far = poses[-5:, :3, 3]
        poses[-5:, :3, 3] = 3.0 * far / np.linalg.norm(far, axis=1)[:, None]  # (out of reach: 3 m)
        batch = solver.solve_many(poses, seed=seeds, timeout=0.05)  # (ample: a loaded machine)
        assert not batch.success[-5:].any() and batch.success[:-5].all()
        model = pinocchio.buildModelFromXML(arm.urdf)
        data, tool = model.createData(), model.getFrameId("tool0")
        for index in range(len(q) - 5):
            pinocchio.framesForwardKinematics(model, data, batch.q[index])
            assert np.linalg.norm(data.oMf[tool].translation - poses[index, :3, 3]) < REACHED
            every = solver.solve_all(poses[index], seed=seeds[index])
            if every.success:  # (else a singular family's member at the seed is out of reach: searched)
                costs = ((every.q - seeds[index]) ** 2).sum(axis=1)
                gap = ((batch.q[index] - seeds[index]) ** 2).sum() - costs.min()
                assert gap <= (1e-9 if tilt == 0.0 else 1e-2), (index, gap)
            if tilt == 0.0 and every.success:  # (at a singularity on a limit, nearer: a duplicate's turn)
                single = solver.solve(poses[index], seed=seeds[index]).q - seeds[index]
                assert ((batch.q[index] - seeds[index]) ** 2).sum() <= (single**2).sum() + 1e-9
        near = bounded.solve_many(poses[:-5], seed=seeds[:-5], timeout=0.05)
        moves = np.abs(near.q - seeds[:-5]).max(axis=1)
        assert np.array_equal(near.success, moves <= 0.5) and 0 < near.success.sum() < len(moves)


def test_other_chains_are_searched_and_say_so():
    ur5 = Arm("ur5")
    five = IKSolver(load_robot(ur5.urdf), "base_link", "link5", compile_helper=False)
    q = np.array([0.3, -1.0, 1.2, -0.4, 0.8])
    found = five.solve_all(five.tree.forward(q), seed=q, timeout=0.05)
    assert (found.complete, found.method, found.labels) == (False, "search", None)
    target = five.tree.forward(q)
    assert found.success and all(np.abs(five.tree.forward(row) - target).max() < REACHED for row in found.q)
    iiwa = Arm("iiwa").solver
    q7 = np.array([0.3, -1.0, 0.4, 1.2, -0.4, 0.8, 0.1])
    found = iiwa.solve_all(iiwa.tree.forward(q7), timeout=0.05)
    assert not found.complete and found.success and len(found.q) >= 1


def test_solve_all_takes_targets_and_seeds_of_any_layout():
    """The exact closed form's compiled call reads C float arrays of one type at every call
    (after its first, without numba's type checks): a Fortran-ordered, read-only or nested-list
    target and a list, read-only, strided or mapping seed give the same set, in the same order,
    as C arrays, in any order of calls, and in a pickled copy of the solver."""
    kuka = Arm("kuka_kr").solver
    q = np.array([0.2, -0.5, 0.6, 0.3, 0.8, 0.1])
    pose = np.ascontiguousarray(kuka.tree.forward(q))
    expected = kuka.solve_all(pose, seed=q)
    read_only_pose, read_only_seed = pose.copy(), q.copy()
    read_only_pose.flags.writeable = read_only_seed.flags.writeable = False
    inputs = [
        (np.asfortranarray(pose), q.tolist()),
        (read_only_pose, read_only_seed),
        (pose.tolist(), np.repeat(q, 2)[::2]),
        (np.pad(pose, ((0, 0), (0, 1)))[:, :4], q),  # (rows 40 bytes apart)
        ({"tool0": pose}, dict(zip(kuka.joint_names, q))),
        (pose, q),
    ]
    assert len(expected.q) >= 2, "an order to keep"
    copy = pickle.loads(pickle.dumps(kuka))  # (a solver sent to a worker, after its calls)
    for solver in (kuka, copy):
        for target, seed in inputs:
            found = solver.solve_all(target, seed=seed)
            assert np.array_equal(found.q, expected.q) and found.labels == expected.labels
            assert np.array_equal(found.position_error, expected.position_error)


def test_each_solutions_errors_and_branch_are_its_own():
    """The exact set's rows carry each solution's errors and branch beside its joints: on targets
    out of reach (least-squares branches, errors large and different), each reported position and
    orientation error equals pinocchio's FK error of that solution, and the solutions of one
    branch label are one configuration (its 2π variants)."""
    pinocchio = pytest.importorskip("pinocchio")
    for name in ("kuka_kr", "ur5"):
        arm = Arm(name)
        model = pinocchio.buildModelFromXML(arm.urdf)
        data, tool = model.createData(), model.getFrameId("tool0")
        rng = np.random.default_rng(32)
        checked = 0
        for q in arm.random_configurations(rng, 20, 0):
            far = arm.solver.tree.forward(q)
            far[:3, 3] *= 1.0 + 3.0 / np.linalg.norm(far[:3, 3])  # (3 m farther: beyond reach)
            found = arm.solver.solve_all(far, seed=q)  # (its closest approaches within the limits)
            assert not found.success and len(found.labels) == len(found.q)
            checked += len(found.q)
            errors = zip(found.q, found.position_error, found.orientation_error)
            for row, position_error, orientation_error in errors:
                pinocchio.framesForwardKinematics(model, data, row)
                placement = data.oMf[tool]
                distance = np.linalg.norm(placement.translation - far[:3, 3])
                assert position_error == pytest.approx(distance, abs=1e-9)
                angle = np.linalg.norm(pinocchio.log3(placement.rotation.T @ far[:3, :3]))
                assert orientation_error == pytest.approx(angle, abs=1e-6)
            configurations = {}
            for row, label in zip(wrapped(found.q), found.labels):
                assert np.abs(wrapped(configurations.setdefault(label, row) - row)).max() < SAME
        assert checked >= 20


def test_a_locked_joint_moved_along_a_path_keeps_a_bounded_memory():
    """Each locked value is a closed form of its own (made at its first use, kept for the next
    calls); a path that moves the locked joint keeps the latest ``LOCKED_SETS_KEPT`` of them, and
    every goal along it is solved exactly."""
    from ik_node.solver.all_solutions import LOCKED_SETS_KEPT

    arm = Arm("iiwa")
    joint, at = arm.lock
    rng = np.random.default_rng(33)
    q = arm.random_configurations(rng, 1, 0)[0]
    values = np.linspace(at - 0.5, at + 0.5, 2 * LOCKED_SETS_KEPT + 5)
    for value in values:
        q[joint] = value
        pose = arm.solver.tree.forward(q)
        found = arm.solver.solve_all(pose, seed=q, locked={f"joint{joint + 1}": value})
        assert found.complete and found.success and np.abs(found.q[0] - q).max() < SAME
    caches = arm.solver.solution_caches
    for kept in (caches.exact_sets, caches.closed_forms, caches.locked_references):
        assert len(kept) == LOCKED_SETS_KEPT


def test_the_exact_set_holds_the_gil_while_it_uses_its_work_arrays():
    """``solve_all``'s exact path keeps one context's work arrays for every call on a solver
    (``all_solutions.ExactSet``): safe from threads only while the compiled set holds the GIL from
    start to end, as a kernel without ``nogil`` does."""
    from ik_node.compiled import solution_sets

    assert not getattr(solution_sets.closed_form_set, "targetoptions", {}).get("nogil", False)


def test_bad_input_is_named():
    iiwa = Arm("iiwa").solver
    with pytest.raises(IKNodeError, match=r"joint3.*\[-2\.96, 2\.96\]"):
        iiwa.solve_all(np.eye(4), locked={"joint3": 4.0})
    with pytest.raises(IKNodeError, match="joint9"):
        iiwa.solve_all(np.eye(4), locked={"joint9": 0.0})
    with pytest.raises(IKNodeError, match="joint3' must be a number, got 'a'"):
        iiwa.solve_all(np.eye(4), locked={"joint3": "a"})
    pose = iiwa.tree.forward([0.2, -0.5, 0.4, 0.3, 0.8, 0.1, 0.3])
    as_float = iiwa.solve_all(pose, locked={"joint3": 0.4})
    as_array = iiwa.solve_all(pose, locked={"joint3": np.array(0.4)})  # (a value of no hash)
    assert as_float.success and np.array_equal(as_array.q, as_float.q)
    for timeout in (0.0, -1.0, float("nan"), float("inf"), "1", None):
        with pytest.raises(IKNodeError, match="timeout must be a positive number of seconds"):
            iiwa.solve_all(pose, timeout=timeout)
    for timeout in (0, -0.5, float("nan")):
        with pytest.raises(IKNodeError, match="timeout must be a positive number of seconds"):
            iiwa.solve(pose, timeout=timeout)
    for arm in (Arm("ur5"), Arm("ur5", tilt=1e-4)):  # (joints of ±2π: every approach fits)
        far = arm.solver.tree.forward([0.2, -0.5, 0.6, 0.3, 0.8, 0.1])
        far[:3, 3] *= 3.0
        found = arm.solver.solve_all(far)
        assert found.complete and not found.success and len(found.q) >= 1, "the closest approaches"
        assert np.all(found.position_error > 1.0)
    kuka = Arm("kuka_kr").solver  # (an exact closed form: the seed checked in the compiled set)
    pose = kuka.tree.forward([0.2, -0.5, 0.6, 0.3, 0.8, 0.1])
    seed = np.array([0.2, -0.5, np.nan, 0.3, 0.8, 0.1])
    with pytest.raises(IKNodeError, match=r"seed.*NaN.*joint3"):
        kuka.solve_all(pose, seed=seed)
    with pytest.raises(IKNodeError, match="target for tip 'tool0' contains NaN"):
        kuka.solve_all(np.full((4, 4), np.nan), seed=seed)
    with pytest.raises(IKNodeError, match=r"'tool0' must be one 4x4 pose, got shape \(2, 4, 4\)"):
        kuka.solve_all(np.repeat(pose[None], 2, axis=0))
    with pytest.raises(IKNodeError, match=r"'tool0' must be one 4x4 pose, got shape \(4, 3\)"):
        kuka.solve_all(np.ascontiguousarray(pose)[:, :3])  # (a 4x4's strides, three columns)
    with pytest.raises(IKNodeError, match="seed"):
        kuka.solve_all(pose, seed=[0.1, 0.2])  # (six joints)


def test_the_default_solve_compiles_no_subproblem_kernel():
    """``solve`` (and building the solver) leave the closed-form and solution-set kernels
    uncompiled: the default problem's compile is unchanged."""
    script = textwrap.dedent(
        f"""
        import numpy as np
        from ik_node import IKSolver, load_robot
        from ik_node.compiled import decompositions, solution_sets, subproblems
        solver = IKSolver(load_robot({str(ARM6)!r}), "base_link", "tool0")
        solver.solve(solver.tip_poses(solver.rest_posture)[0])
        kernels = [decompositions.spherical_two_parallel, decompositions.three_parallel_two_intersecting,
                   decompositions.spherical_two_intersecting, subproblems.sp1, subproblems.sp4,
                   solution_sets.solution_set]
        print(sum(len(getattr(k, "signatures", ())) for k in kernels))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "0"


def plain_python_probe() -> list:
    """Per arm and pose (3 random configurations, one singular, each arm), the number of
    solutions and the first one: what the plain-Python run must reproduce."""
    found = []
    for name in ("ur5", "kuka_kr", "shoulder_meeting"):
        arm = Arm(name)
        for q in arm.random_configurations(np.random.default_rng(32), 3, 1):
            solutions = arm.solver.solve_all(arm.solver.tree.forward(q), seed=q)
            found.append((name, len(solutions.q), solutions.q[0].round(9).tolist()))
    return found


def test_the_same_source_as_plain_python():
    """The kernels run as plain Python (``NUMBA_DISABLE_JIT=1``) give the same solution sets."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_closed_form import plain_python_probe
        print(repr(plain_python_probe()))
        """
    )
    environment = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=environment
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == repr(plain_python_probe())
