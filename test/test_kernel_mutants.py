"""Tests written against the mutants of ``ik_node/solver/kernels.py`` that the core solver tests
(``-m plain_python`` over test_solver.py and test_compiled_core.py) let through in a mutation
check (issue 20, item 4): each states a property of the math from an independent reference
(finite differences of the model's numpy forward kinematics, a numpy formula written here, a
documented property), never the kernels' internals. The mutants each one was checked against are
named in its docstring (``kernels.py`` line numbers of commit 5c72e21, where the check ran).
"""

from __future__ import annotations

import numpy as np
import pytest

from ik_node import IKSolver, load_robot
from ik_node.compiled import linalg
from ik_node.description.catalogue import URDF_DIR
from ik_node.solver import kernels

pytestmark = pytest.mark.plain_python  # every test here takes well under a second as plain Python


@pytest.fixture(scope="module")
def arm7():
    return load_robot(URDF_DIR / "arm7.urdf")


def vee(skew: np.ndarray) -> np.ndarray:
    return np.array((skew[2, 1], skew[0, 2], skew[1, 0]))


def numeric_body_jacobian(robot, names, q, tip, base, step=1e-6) -> np.ndarray:
    """Central differences of ``T^-1 dT/dq_j`` = the twist ``[v; w]`` in tip axes, per joint, from
    the model's own (numpy) forward kinematics, not the kernels'."""
    pose = robot.forward(dict(zip(names, q)), tip, base)
    columns = []
    for j in range(len(q)):
        ahead, behind = q.copy(), q.copy()
        ahead[j] += step
        behind[j] -= step
        derivative = (
            robot.forward(dict(zip(names, ahead)), tip, base)
            - robot.forward(dict(zip(names, behind)), tip, base)
        ) / (2 * step)
        body = np.linalg.inv(pose) @ derivative
        columns.append(np.concatenate((body[:3, 3], vee(body[:3, :3]))))
    return np.array(columns).T


@pytest.mark.parametrize(
    ("urdf", "base", "tip"),
    [
        ("arm6", "base_link", "tool0"),  # joints about y as well as z
        ("mobile_manipulator", "odom", "tool0"),  # prismatic joints
        ("humanoid", "pelvis", "left_hand"),  # joints about x, y and z
    ],
)
def test_the_task_jacobian_is_the_derivative_of_the_tip_pose(urdf, base, tip):
    """The Jacobian the solver inverts (``IKSolver.task_jacobian``: the kernels' FK and body
    Jacobian) equals finite differences of the tip pose, at random configurations.

    The tree's ``body_jacobian`` (the same compiled kernel, with its own FK) gives the same.

    Kills: ``tip_body_jacobian`` line 142 ``pose[1, 1]`` -> ``pose[0, 1]`` (wrong for joints with a
    y component in their axis, none on arm7; a wrong Jacobian only slows the damped least squares
    down, as every step is checked against the true error);
    ``forward_and_jacobian`` line 240, its ``tip_body_jacobian`` call deleted."""
    robot = load_robot(URDF_DIR / f"{urdf}.urdf")
    solver = IKSolver(robot, base, tip)
    rng = np.random.default_rng(20)
    lower = np.where(np.isfinite(solver.lower), solver.lower, -np.pi)
    upper = np.where(np.isfinite(solver.upper), solver.upper, np.pi)
    for q in rng.uniform(lower, upper, size=(4, len(lower))):
        expected = numeric_body_jacobian(robot, solver.joint_names, q, tip, base)
        np.testing.assert_allclose(solver.task_jacobian(q), expected, atol=1e-6)
        np.testing.assert_allclose(solver.tree.body_jacobian(q, tip), expected, atol=1e-6)


# ---------------------------------------------------------------- linear algebra


def test_ldl_solve_refuses_a_singular_matrix_and_solves_a_definite_one():
    """``ldl_solve``'s documented contract: ``A x = b`` for a symmetric positive definite
    ``A`` (checked against numpy), and ``False`` with ``x = 0`` for a matrix that is only positive
    semi-definite (a zero pivot, as at a singular Jacobian's Gram matrix).

    Kills: ``ldl_solve``'s ``not diagonal > 0.0`` -> ``not diagonal >= 0.0``."""
    rng = np.random.default_rng(4)
    factor = rng.normal(size=(4, 4))
    matrix = factor @ factor.T + 0.1 * np.eye(4)
    rhs = rng.normal(size=4)
    x = rhs.copy()
    assert kernels.ldl_solve(matrix.copy(), x, 4)
    np.testing.assert_allclose(x, np.linalg.solve(matrix, rhs), rtol=1e-10)
    singular = np.array([[1.0, 1.0], [1.0, 1.0]])  # rank 1: the second pivot is exactly 0
    x = np.array([1.0, 2.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        assert not kernels.ldl_solve(singular, x, 2)
    np.testing.assert_array_equal(x, 0.0)


def test_ldl_solve_reads_only_the_lower_triangle():
    """``ldl_solve`` reads ``A``'s diagonal and lower triangle only (the Gram matrices are made
    there alone): NaN above the diagonal changes nothing, and ``1 / D`` left on the diagonal
    multiplies to ``1 / det A`` (what ``manipulability`` reads)."""
    rng = np.random.default_rng(5)
    factor = rng.normal(size=(30, 36))
    matrix = factor @ factor.T + 1e-3 * np.eye(30)
    rhs = rng.normal(size=30)
    lower_only = np.tril(matrix) + np.triu(np.full((30, 30), np.nan), 1)
    x = rhs.copy()
    assert kernels.ldl_solve(lower_only, x, 30)
    np.testing.assert_allclose(x, np.linalg.solve(matrix, rhs), rtol=1e-8)
    sign, log_det = np.linalg.slogdet(matrix)
    assert sign > 0
    np.testing.assert_allclose(np.sum(np.log(np.diag(lower_only))), -log_det, rtol=1e-10)


def test_a_pinned_column_taken_out_of_the_factors_gives_the_step_without_it():
    """``limited_step``'s limit rounds: ``weighted_gram`` and ``factor_gram``, then the rank-one
    downdate ``ldl_rank_one(-w_j J_j)`` of each pinned joint j, give through ``gram_step`` the
    damped step ``W J^T (J W J^T + lambda^2 I)^-1 e`` (numpy) with those joints' weights 0 (their
    step 0), and ``1 / D`` on the diagonal multiplies to that matrix's ``1 / det``."""
    rng = np.random.default_rng(6)
    jacobian = rng.normal(size=(12, 15))
    jacobian[6:, 3:9] = 0.0  # (a tree: the second tip's rows do not see the first limb's joints)
    weights, error, damping = rng.uniform(0.5, 2.0, 15), rng.normal(size=12), 1e-3
    gram, row = np.empty((12, 12)), np.empty(15)
    linalg.weighted_gram(jacobian, weights, 0, 12, gram, row)
    assert linalg.factor_gram(gram, damping, 12)
    for pinned in (4, 11):
        assert linalg.ldl_rank_one(gram, 12, jacobian[:, pinned].copy(), -weights[pinned])
        weights[pinned] = 0.0
    matrix = jacobian @ np.diag(weights) @ jacobian.T + damping * np.eye(12)
    step = np.empty(15)
    linalg.gram_step(jacobian, error, weights, 0, 12, gram, True, np.empty(12), step)
    expected = weights * (jacobian.T @ np.linalg.solve(matrix, error))
    np.testing.assert_allclose(step, expected, rtol=1e-9, atol=1e-12)
    assert step[4] == 0.0 and step[11] == 0.0
    np.testing.assert_allclose(np.sum(np.log(np.diag(gram))), -np.linalg.slogdet(matrix)[1], rtol=1e-10)


def test_the_pseudo_inverse_is_numpys_over_the_columns_chosen():
    """``pseudo_inverse_times`` (one-sided Jacobi): ``A_C^+ b`` over the flagged columns (the others
    0) equals numpy's ``pinv`` (LAPACK's SVD) and returns ``A_C``'s smallest singular value, on
    wide, square and tall matrices, rank-deficient ones (a column twice another: numpy's cutoff
    drops the zero singular value alike), badly scaled ones (a column 1e-6 of the others) and
    with no column at all (0 and 0)."""
    rng = np.random.default_rng(8)
    for trial in range(200):
        rows, dof = (int(size) for size in rng.integers(1, 14, size=2))
        matrix = rng.normal(size=(rows, dof))
        if trial % 5 == 0 and dof > 1:
            matrix[:, -1] = 2.0 * matrix[:, 0]
        if trial % 7 == 0:
            matrix[:, 0] *= 1e-6
        columns = rng.random(dof) > 0.3
        rhs, out, size = rng.normal(size=rows), np.full(dof, np.nan), max(rows, dof)
        work = (np.empty((size, size)), np.empty((size, size)), np.empty(size))
        smallest = linalg.pseudo_inverse_times(matrix, columns, rhs, *work, out)
        expected = np.zeros(dof)
        if columns.any():
            expected[columns] = np.linalg.pinv(matrix[:, columns]) @ rhs
            values = np.linalg.svd(matrix[:, columns], compute_uv=False)
            assert smallest == pytest.approx(values[-1], rel=1e-9, abs=1e-14 * values[0]), trial
        else:
            assert smallest == 0.0
        np.testing.assert_allclose(out, expected, rtol=1e-9, atol=1e-11 * max(1.0, np.abs(expected).max()))


def test_ldl_rank_one_updates_and_refuses_an_indefinite_downdate():
    """``ldl_rank_one``: ``A + z z^T`` factored equals numpy's solve of it; a downdate that would
    leave ``A - 2 v v^T`` indefinite (``v`` a unit eigenvector of ``A`` with eigenvalue 1)
    returns False."""
    rng = np.random.default_rng(7)
    factor = rng.normal(size=(8, 8))
    matrix = factor @ factor.T + 0.5 * np.eye(8)
    z, rhs = rng.normal(size=8), rng.normal(size=8)
    factored = matrix.copy()
    assert linalg.ldl_factor(factored, 8)
    assert linalg.ldl_rank_one(factored, 8, z.copy(), 1.0)
    x = rhs.copy()
    linalg.ldl_substitute(factored, x, 8)
    np.testing.assert_allclose(x, np.linalg.solve(matrix + np.outer(z, z), rhs), rtol=1e-9)
    values, vectors = np.linalg.eigh(matrix)
    shifted = matrix - (values[0] - 1.0) * np.outer(vectors[:, 0], vectors[:, 0])  # (eigenvalue 1)
    factored = shifted.copy()
    assert linalg.ldl_factor(factored, 8)
    assert not linalg.ldl_rank_one(factored, 8, vectors[:, 0].copy(), -2.0)


def joints_array(lower, upper, weights=None, rest=None) -> np.ndarray:
    """The kernels' ``joints`` (n, 7) rows for bounded joints (see ``kernels``' module docstring)."""
    n = len(lower)
    weights = np.ones(n) if weights is None else weights
    rest = 0.5 * (lower + upper) if rest is None else rest
    columns = (lower, upper, weights, rest, lower, upper, np.zeros(n))
    return np.ascontiguousarray(np.stack(columns, axis=1))


def reference_limited_step(jacobian, error, lower, upper, weights, q, damping) -> np.ndarray:
    """The documented step, in numpy: the weighted damped step ``W J^T (J W J^T + lambda^2 I)^-1 e``;
    each joint it pushes past a limit is pinned there (its motion ``bound - q``, its weight set
    to 0) and the error that motion leaves, ``e - J dq_pinned``, is solved by the other joints;
    twice at most."""
    weights = weights.astype(float).copy()
    pinned = np.zeros(len(q), dtype=bool)
    pinned_motion = np.zeros(len(q))

    def free_step(residual):
        gram = jacobian @ np.diag(weights) @ jacobian.T + damping * np.eye(len(residual))
        return weights * (jacobian.T @ np.linalg.solve(gram, residual))

    step = free_step(error)
    for _ in range(2):
        candidate = q + step
        violating = ~pinned & ((candidate < lower) | (candidate > upper))
        if not violating.any():
            break
        bound = np.where(candidate < lower, lower, upper)
        pinned_motion[violating] = bound[violating] - q[violating]
        pinned |= violating
        weights[violating] = 0.0
        step = free_step(error - jacobian @ pinned_motion) + pinned_motion
    return step


def test_limited_step_pins_a_joint_at_its_limit_and_hands_the_rest_to_the_others():
    """``limited_step`` equals the documented selection-row step written in numpy: a joint the free
    step pushes past a limit ends exactly at that limit, and the others solve what it leaves.

    Kills: ``limited_step`` line 424 ``if pinned[j]`` negated (no joint is ever pinned); line 437
    ``value -= jacobian[r, j] * pinned_motion[j]`` deleted (the others ignore the pinned motion)."""
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(20):
        jacobian = rng.normal(size=(6, 7))
        error = 0.3 * rng.normal(size=6)
        lower, upper = np.full(7, -1.0), np.full(7, 1.0)
        q = rng.uniform(-0.9, 0.9, size=7)
        joints = joints_array(lower, upper)
        damping = 1e-3
        expected = reference_limited_step(jacobian, error, lower, upper, np.ones(7), q, damping)
        step = np.empty(7)
        kernels.limited_step(
            jacobian,
            error,
            joints,
            np.arange(7),
            q,
            damping,
            damping,
            kernels.NO_PRIORITY,
            kernels.step_workspace(6, 7),
            step,
        )
        np.testing.assert_allclose(step, expected, atol=1e-9)
        assert np.all(q + step >= lower - 1e-12) and np.all(q + step <= upper + 1e-12)
        free = jacobian.T @ np.linalg.solve(jacobian @ jacobian.T + damping * np.eye(6), error)
        checked += np.any((q + free < lower) | (q + free > upper))
    assert checked >= 5  # most of these steps do meet a limit


# ---------------------------------------------------------------- methods: transpose and CCD


def one_attempt(robot, method, max_iterations, **options):
    return IKSolver(
        robot, "base_link", "tool0", method=method, max_attempts=1, max_iterations=max_iterations,
        seed_table_size=0, **options,
    )  # fmt: skip


def total_error(result) -> float:
    return result.position_error + result.orientation_error


def seed_error(robot, names, q, target) -> float:
    """``|p - p_target| + angle(R^T R_target)`` at ``q`` (m + rad), from the model's numpy FK."""
    pose = robot.forward(dict(zip(names, q)), "tool0", "base_link")
    relative = pose[:3, :3].T @ target[:3, :3]
    angle = np.arccos(np.clip(0.5 * (np.trace(relative) - 1.0), -1.0, 1.0))
    return float(np.linalg.norm(pose[:3, 3] - target[:3, 3]) + angle)


def test_the_transpose_method_moves_toward_a_near_goal(arm7):
    """Jacobian transpose (Buss 2004) from a seed 0.05 rad from a solution, far from every limit:
    its steps, shortened only at a limit, reduce the error several times over in 30 iterations.

    Kills: ``_transpose_step`` line 473 ``step[j] > 0.0`` -> ``step[j] > 1.0`` (a positive step
    under 1 rad measured against the lower limit: every step shortened to nothing)."""
    solver = one_attempt(arm7, "transpose", 30)
    rng = np.random.default_rng(3)
    middle = 0.5 * (solver.lower + solver.upper)
    for _ in range(3):
        goal = middle + rng.uniform(-0.5, 0.5, size=7)
        target = arm7.forward(dict(zip(solver.joint_names, goal)), "tool0", "base_link")
        seed = goal + rng.choice((-0.05, 0.05), size=7)
        start = solver.solve(target, seed=seed, timeout=None)
        assert start.iterations > 0
        initial = seed_error(arm7, solver.joint_names, seed, target)
        assert total_error(start) < 0.2 * initial, (initial, total_error(start))


def test_one_ccd_sweep_turns_each_joint_by_its_own_least_squares_step(arm7):
    """Cyclic coordinate descent, one sweep, toward a goal that differs from the seed in one joint
    only, every other joint locked (weight 0): that joint's 1-D least-squares step
    ``J_j . e / (J_j . J_j + lambda_min^2)`` is exact to first order, so the sweep nearly reaches
    the goal, for the last joint and for the first (every joint takes part).

    Kills: ``_ccd_sweep`` line 661 ``range(dof - 1, -1, -1)`` -> ``range(dof - 1, 0, -1)`` (the
    first joint never moves); line 668 ``J_j . J_j`` -> ``sum J_rj / J_rj`` (steps m / |J_j|^2
    times too short)."""
    names = None
    for joint in (6, 0):
        weights = np.zeros(7)
        weights[joint] = 1.0
        solver = one_attempt(arm7, "ccd", 1, joint_weights=weights)
        names = solver.joint_names
        middle = 0.5 * (solver.lower + solver.upper)
        goal = middle.copy()
        goal[joint] += 0.05
        target = arm7.forward(dict(zip(names, goal)), "tool0", "base_link")
        initial = seed_error(arm7, names, middle, target)
        result = solver.solve(target, seed=middle, timeout=None)
        assert abs(result.q[joint] - goal[joint]) < 0.05 * 0.05, result.q - middle
        assert total_error(result) < 0.05 * initial, (initial, total_error(result))


# ---------------------------------------------------------------- the seed table's features and ranking


@pytest.mark.parametrize(
    ("urdf", "base", "tips"),
    [("arm7", "base_link", ("tool0",)), ("dual_arm", "base_link", ("left_tool0", "right_tool0"))],
)
def test_seed_table_features_are_the_scaled_tip_positions_and_rotations(urdf, base, tips):
    """``Problem.features_of`` (the kernels' ``table_features``): feature ``f`` is
    ``feature_scale[f]`` times component ``feature_spec[f, 1]`` of tip ``feature_spec[f, 0]``'s
    pose (0-2 position, 3-11 the rotation matrix row-major), here from the model's numpy FK.

    Kills: ``_fk_features`` line 707, its ``pose_features`` call deleted (features left
    uninitialised)."""
    robot = load_robot(URDF_DIR / f"{urdf}.urdf")
    solver = IKSolver(robot, base, tips)
    problem = solver.problem
    rng = np.random.default_rng(5)
    configurations = rng.uniform(solver.lower, solver.upper, size=(5, len(solver.lower)))
    features = problem.features_of(configurations)
    for q, row in zip(configurations, features):
        poses = [robot.forward(dict(zip(solver.joint_names, q)), tip, base) for tip in tips]
        expected = [
            scale * (poses[tip][component, 3] if component < 3 else poses[tip][:3, :3].ravel()[component - 3])
            for (tip, component), scale in zip(problem.feature_spec, problem.feature_scale)
        ]
        np.testing.assert_allclose(row, expected, atol=1e-12)
    assert {int(c) for c in problem.feature_spec[:, 1]} == set(range(kernels.TIP_FEATURES))


def ranked(distances: np.ndarray, ranges=None) -> np.ndarray:
    """``rank_nearest`` of ``distances`` (over ``ranges`` in turn, default all of them) into
    ``TABLE_RESTARTS`` slots: the entries it ranks."""
    chosen = np.empty(kernels.TABLE_RESTARTS, dtype=np.int64)
    chosen_distance = np.empty(kernels.TABLE_RESTARTS)
    found = 0
    for start, stop in ranges or [(0, len(distances))]:
        found = kernels.rank_nearest(distances, start, stop, 0, found, chosen, chosen_distance)
    return chosen[:found]


def blocked(features: np.ndarray, starts) -> np.ndarray:
    """The seed table's kernel layout of ``features`` (S, F): each range ``starts[c]:starts[c + 1]``
    a block, feature by feature, in single precision."""
    blocks = [features[a:b].T.ravel() for a, b in zip(starts[:-1], starts[1:])]
    return np.concatenate(blocks).astype(np.float32)


def test_the_nearest_table_entries_are_ranked_by_squared_feature_distance():
    """``table_distances`` and ``rank_nearest``'s documented contract against numpy: the
    squared Euclidean feature distances of a block's entries (a block inside a table laid out
    by blocks, written to the front of ``out``, the rest untouched) and the position of its
    nearest; the ``TABLE_RESTARTS`` entries nearest the target, nearest first, equal distances by
    lower index (duplicated rows in the table make ties), the same when the entries are ranked
    a range at a time, and a range's positions shifted to the entries they stand for.

    Kills: ``_squared_distance`` line 735 ``(a - b)^2`` -> ``(a + b)(a - b)``; ``rank_nearest``
    line 963 (the kept entry's store) and line 964 (the count of entries kept) deleted."""
    rng = np.random.default_rng(6)
    table = rng.normal(size=(300, 12)).astype(np.float32).astype(float)
    table[150:200] = table[:50]  # ties
    starts = [0, 100, 220, 300]
    layout = blocked(table, starts)
    for _ in range(5):
        target = rng.normal(size=12)
        distances = np.sum((table - target) ** 2, axis=1)
        expected = np.argsort(distances, kind="stable")[: kernels.TABLE_RESTARTS]
        computed = np.full(len(table), -1.0)
        nearest = kernels.table_distances(layout, target, 100, 220, computed)
        assert nearest == np.argmin(distances[100:220])
        np.testing.assert_allclose(computed[:120], distances[100:220], rtol=1e-12)
        assert np.all(computed[120:] == -1.0)
        for a, b in zip(starts[:-1], starts[1:]):
            kernels.table_distances(layout, target, a, b, computed[a:])
        np.testing.assert_allclose(computed, distances, rtol=1e-12)
        np.testing.assert_array_equal(ranked(computed), expected)
        np.testing.assert_array_equal(ranked(computed, list(zip(starts[:-1], starts[1:]))), expected)
        chosen, chosen_distance = np.empty(3, dtype=np.int64), np.empty(3)
        assert kernels.rank_nearest(distances[100:220], 0, 120, 100, 0, chosen, chosen_distance) == 3
        np.testing.assert_array_equal(chosen, 100 + np.argsort(distances[100:220], kind="stable")[:3])
    small = table[:10]  # fewer entries than TABLE_RESTARTS: all of them, ranked
    target = rng.normal(size=12)
    computed = np.empty(len(small))
    kernels.table_distances(blocked(small, [0, 10]), target, 0, 10, computed)
    np.testing.assert_array_equal(
        ranked(computed), np.argsort(np.sum((small - target) ** 2, axis=1), kind="stable")
    )
    assert kernels.table_distances(layout, target, 5, 5, computed) == -1  # an empty range


# ---------------------------------------------------------------- the stationarity (KKT) test


def reference_stationary(jacobian, error, lower, upper, weights, q) -> bool:
    """The documented KKT test in numpy: the descent direction ``W J^T e`` without the joints at a
    limit it pushes against (at the lower limit going down, at the upper going up) is at most
    ``STATIONARY |J| |e|``."""
    descent = weights * (jacobian.T @ error)
    blocked = ((q <= lower) & (descent < 0.0)) | ((q >= upper) & (descent > 0.0))
    free = np.linalg.norm(np.where(blocked, 0.0, descent))
    return bool(free <= kernels.STATIONARY * np.linalg.norm(jacobian) * np.linalg.norm(error))


def test_stationary_leaves_out_only_the_joints_held_at_a_limit_they_are_pushed_against():
    """``_stationary`` (when an attempt is given up as a local minimum) agrees with the KKT test in
    numpy: an interior point with any descent is not stationary, whatever the descent's sign, and
    a point whose whole descent pushes joints into the limits they sit at is.

    Kills: ``_stationary`` line 495 ``q >= upper and descent > 0`` -> ``q >= upper or descent > 0``
    (any joint moving up counted as blocked: attempts given up as stuck while they can progress)."""
    rng = np.random.default_rng(8)
    lower, upper = np.full(6, -1.0), np.full(6, 1.0)
    joints = joints_array(lower, upper)
    interior = np.zeros(6)
    error = np.abs(rng.normal(size=6)) + 0.1
    assert not kernels.stationary(np.eye(6), error, joints, np.arange(6), interior)  # every descent positive
    assert not kernels.stationary(np.eye(6), -error, joints, np.arange(6), interior)  # every descent negative
    assert kernels.stationary(
        np.eye(6), error, joints, np.arange(6), upper.copy()
    )  # all pushed into the upper limits
    assert kernels.stationary(np.eye(6), -error, joints, np.arange(6), lower.copy())
    for _ in range(50):
        jacobian = rng.normal(size=(6, 6))
        q = rng.choice((-1.0, 0.0, 1.0), size=6)
        error = rng.normal(size=6)
        expected = reference_stationary(jacobian, error, lower, upper, np.ones(6), q)
        assert kernels.stationary(jacobian, error, joints, np.arange(6), q) == expected


# ---------------------------------------------------------------- what the search returns


def reachable_goals(solver, count, seed):
    rng = np.random.default_rng(seed)
    middle, half = 0.5 * (solver.lower + solver.upper), 0.5 * (solver.upper - solver.lower)
    return middle + rng.uniform(-0.8, 0.8, size=(count, len(middle))) * half


def test_reported_errors_are_the_tip_errors_at_the_returned_q(arm7):
    """A result's ``position_error`` and ``orientation_error`` are the tip's distance and rotation
    angle from its target at the returned ``q`` (the model's numpy FK), here for attempts cut
    short (one iteration) so both are well above zero.

    Kills: ``search`` line 898, the orientation norm copied from the position norm."""
    solver = one_attempt(arm7, "dls", 1)
    names = solver.joint_names
    goals = reachable_goals(solver, 4, 11)
    for goal, seed in zip(goals, goals[::-1]):
        target = arm7.forward(dict(zip(names, goal)), "tool0", "base_link")
        result = solver.solve(target, seed=seed, timeout=None)
        pose = arm7.forward(dict(zip(names, result.q)), "tool0", "base_link")
        relative = pose[:3, :3].T @ target[:3, :3]
        angle = np.arctan2(0.5 * np.linalg.norm(vee(relative - relative.T)), 0.5 * (np.trace(relative) - 1.0))
        assert result.position_error == pytest.approx(np.linalg.norm(pose[:3, 3] - target[:3, 3]), rel=1e-9)
        assert result.orientation_error == pytest.approx(angle, rel=1e-9, abs=1e-12)
        assert result.orientation_error > 1e-3


def test_solve_many_reports_each_targets_outcome(arm7):
    """``solve_many`` (the batch kernel) gives each target the success and errors of ``solve`` from
    the same seed, successes and failures mixed (an unreachable target among them).

    Kills: ``search_many`` line 989 ``outcomes[index] = outcome`` deleted (outcomes left
    uninitialised)."""
    solver = IKSolver(arm7, "base_link", "tool0", max_attempts=2, seed_table_size=0, max_iterations=30)
    names = solver.joint_names
    goals = reachable_goals(solver, 3, 12)
    targets = np.array([arm7.forward(dict(zip(names, goal)), "tool0", "base_link") for goal in goals])
    targets[1, :3, 3] = (5.0, 0.0, 0.0)  # out of reach
    seeds = np.clip(goals + 0.05, solver.lower, solver.upper)
    batch = solver.solve_many(targets, seed=seeds, timeout=None)
    singles = [solver.solve(target, seed=seed, timeout=None) for target, seed in zip(targets, seeds)]
    assert [bool(s) for s in batch.success] == [single.success for single in singles] == [True, False, True]
    np.testing.assert_allclose(
        batch.position_error, [single.position_error for single in singles], atol=1e-15
    )


def weighted_move(q, seed, weights):
    return float(np.sum((q - seed) ** 2 / weights))


def manipulability(solver, q):
    jacobian = solver.task_jacobian(q)
    return float(np.sqrt(np.linalg.det(jacobian @ jacobian.T)))


def test_solve_types_pick_by_their_measure_among_the_same_attempts(arm7):
    """With a fixed attempt budget (the same starts for every solve type), ``distance`` returns a
    solution moving no more than ``speed``'s by the weighted norm ``sum dq^2 / w``, and
    ``manipulability`` one with ``sqrt(det(J J^T))`` (numpy, 6-row pose task) no smaller; each
    differs from ``speed``'s for some goal (they do compare several solutions).

    Kills: ``_score`` line 754 ``solve_type == DISTANCE`` negated (``distance`` returns the first
    solution); line 778 ``volume = 1.0`` deleted."""
    weights = np.array([1.0, 2.0, 0.5, 1.0, 3.0, 1.0, 0.7])
    options = dict(max_attempts=6, seed_table_size=0, max_iterations=60, joint_weights=weights)
    solvers = {
        kind: IKSolver(arm7, "base_link", "tool0", solve_type=kind, **options)
        for kind in ("speed", "distance", "manipulability")
    }
    names = solvers["speed"].joint_names
    goals = reachable_goals(solvers["speed"], 4, 13)
    seed = 0.5 * (solvers["speed"].lower + solvers["speed"].upper)
    closer = better = 0
    for goal in goals:
        target = arm7.forward(dict(zip(names, goal)), "tool0", "base_link")
        results = {kind: solver.solve(target, seed=seed, timeout=None) for kind, solver in solvers.items()}
        assert all(result.success for result in results.values())
        speed, distance = (
            weighted_move(results["speed"].q, seed, weights),
            weighted_move(results["distance"].q, seed, weights),
        )
        assert distance <= speed + 1e-12
        closer += distance < speed - 1e-6
        volume = manipulability(solvers["speed"], results["manipulability"].q)
        assert volume >= manipulability(solvers["speed"], results["speed"].q) - 1e-12
        better += volume > manipulability(solvers["speed"], results["speed"].q) + 1e-9
    assert closer >= 1 and better >= 1, (closer, better)


def test_max_joint_move_returns_a_solution_near_the_seed(arm7):
    """``max_joint_move`` (no branch flips): from a seed 0.1 rad from a solution, the one returned
    moves no joint farther than the bound.

    Kills: ``_largest_move`` line 788 ``largest = 0.0`` deleted."""
    solver = IKSolver(arm7, "base_link", "tool0", max_joint_move=0.3, max_attempts=20, seed_table_size=0)
    names = solver.joint_names
    for goal in reachable_goals(solver, 3, 14):
        target = arm7.forward(dict(zip(names, goal)), "tool0", "base_link")
        seed = np.clip(goal + 0.1, solver.lower, solver.upper)
        result = solver.solve(target, seed=seed, timeout=None)
        assert result.success
        assert np.max(np.abs(result.q - seed)) <= 0.3


def test_a_continuous_joint_comes_back_at_the_turn_nearest_the_seed():
    """A joint that turns freely (the mobile base's heading, continuous) is returned as the
    2 pi-equivalent angle nearest the seed: a seed a turn away from the goal gets the goal plus
    that turn, and the pose is the target's (the model's numpy FK).

    Kills: ``_near`` line 801 ``reference + (value - reference + pi) % 2 pi - pi`` ->
    ``reference - ...`` (another angle, another pose)."""
    robot = load_robot(URDF_DIR / "mobile_manipulator.urdf")
    solver = IKSolver(robot, "odom", "tool0", max_attempts=4, seed_table_size=0)
    names = solver.joint_names
    heading = names.index("base_theta_joint")
    lower = np.where(np.isfinite(solver.lower), solver.lower, -np.pi)
    upper = np.where(np.isfinite(solver.upper), solver.upper, np.pi)
    rng = np.random.default_rng(15)
    for turn in (2 * np.pi, -2 * np.pi):
        goal = rng.uniform(0.8 * lower + 0.2 * upper, 0.2 * lower + 0.8 * upper)
        target = robot.forward(dict(zip(names, goal)), "tool0", "odom")
        seed = goal + 0.02
        seed[heading] += turn
        result = solver.solve(target, seed=seed, timeout=None)
        assert result.success
        assert result.q[heading] == pytest.approx(goal[heading] + turn, abs=0.1)
        pose = robot.forward(dict(zip(names, result.q)), "tool0", "odom")
        np.testing.assert_allclose(pose[:3, 3], target[:3, 3], atol=2e-5)


def test_the_search_tries_the_nearest_table_entries_in_turn(arm7):
    """``search``'s documented restarts: the nearest table entry first (the seed lies farther from
    the target than the table's spacing), then the seed, then the next nearest entries in turn.
    A hand-made table (features chosen here) whose third-nearest entry is the solution and whose
    two nearest are far from it, attempts of one iteration: the fourth attempt converges.

    Kills: ``search`` line 929 ``next_nearest += 1`` deleted (the same entry tried again and
    again)."""
    solver = one_attempt(arm7, "dls", 1)
    problem = solver.problem
    middle = 0.5 * (solver.lower + solver.upper)
    goal = np.clip(middle + 0.3, solver.lower, solver.upper)
    far = np.clip(middle - 1.0, solver.lower, solver.upper)
    targets = arm7.forward(dict(zip(solver.joint_names, goal)), "tool0", "base_link")[None]
    table_q = np.ascontiguousarray([far, far[::-1], goal, far, far])
    nearest = problem.features_of(goal[None])[0]  # the target's own features
    table_features = np.ascontiguousarray([nearest + offset for offset in (0.0, 0.01, 0.02, 10.0, 10.0)])
    seed = np.clip(middle - 0.8, solver.lower, solver.upper)
    q_out, norms_out = np.empty((1, 7)), np.empty((1, 1, 2))
    results = np.empty((1, kernels.RESULT_COLUMNS), dtype=np.int64)
    table = (
        problem.feature_spec, problem.feature_scale, table_q, blocked(table_features, [0, 5]), 1e-3,
        blocked(table_features.mean(axis=0)[None], [0, 1]), np.array([0, 5]),
        problem.limb_frames, problem.limb_starts, problem.limb_coordinates, problem.limb_scale,
        np.zeros((0, 7)), np.zeros((1, kernels.TIP_FEATURES, 0), dtype=np.float32),
    )  # (one cell; no limbs)  # fmt: skip
    context = kernels.search_context(problem.tree_arrays, problem.task, problem.joints, table, None, 7)
    kernels.search_many(
        context, targets[None], seed[None], -1, kernels.NO_DEADLINE, kernels.NO_PRIORITY, q_out, norms_out,
        results, (1e-3, 1, 6, 0, 0.0),
        None, None, None, None,  # (dls, speed, no posture, no collision)
    )  # fmt: skip
    outcome, attempts, q_out = results[0, kernels.OUTCOME], results[0, kernels.ATTEMPTS], q_out[0]
    assert (outcome, attempts) == (kernels.CONVERGED, 4)
    np.testing.assert_allclose(q_out, goal)
