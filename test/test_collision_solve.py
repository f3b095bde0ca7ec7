"""Collision-aware IK (issue 18): the compiled distances against coal's, the constraint rows
against finite differences, and the solver's promises over seeded random goals, checked by an
independent reference (pinocchio + coal on the robots' real meshes, benchmark/collision_reference.py):
no success in collision, obstacles respected, reason ``collision`` when the goal is only reachable
in collision, the same answers as before when collision checking is off."""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from ik_node import IKNodeError, IKSolver, Obstacle, load_robot
from ik_node.compiled import bundles, contacts
from ik_node.description.catalogue import example_robot_data_dir
from ik_node.solver import kernels
from ik_node.solver.collision_task import obstacle_row

pytest.importorskip("trimesh", reason="the collision extra (trimesh) is not installed")
coal = pytest.importorskip("coal", reason="coal (the reference distances) is not installed")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmark"))
from collision_reference import ReferenceCollision  # noqa: E402

ROBOTS = example_robot_data_dir()
needs_erd = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
SHARE = None if ROBOTS is None else ROBOTS.parent.parent


def _random_rotation(rng) -> np.ndarray:
    q = rng.normal(size=4)
    x, y, z, w = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def _coal_distance(shape_a, pose_a, shape_b, pose_b) -> float:
    request, result = coal.DistanceRequest(), coal.DistanceResult()
    transform_a = coal.Transform3s(pose_a[:3, :3], pose_a[:3, 3])
    transform_b = coal.Transform3s(pose_b[:3, :3], pose_b[:3, 3])
    return coal.distance(shape_a, transform_a, shape_b, transform_b, request, result)


def _random_obstacle(rng, kind: str) -> Obstacle:
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = _random_rotation(rng), rng.uniform(-0.3, 0.3, 3)
    if kind == "sphere":
        return Obstacle.sphere(rng.uniform(0.02, 0.2), pose[:3, 3])
    if kind == "capsule":
        return Obstacle.capsule(rng.uniform(0.02, 0.15), rng.uniform(0.0, 0.4), pose)
    return Obstacle.box(rng.uniform(0.02, 0.4, 3), pose)


def _coal_shape(obstacle: Obstacle):
    if obstacle.kind == "sphere":
        return coal.Sphere(obstacle.size[0])
    if obstacle.kind == "capsule":
        return coal.Capsule(*obstacle.size)
    return coal.Box(*obstacle.size)


@pytest.mark.parametrize("second_kind", ["sphere", "capsule", "box"])
def test_pair_distances_equal_coal_and_witness_points_lie_on_the_surfaces(second_kind):
    """Capsule against sphere, capsule and box, in random poses (overlapping ones included):
    the kernel's signed distance equals coal's where they are apart (coal reports overlap as a
    negative depth only for some shapes: there, both are negative), and the witness points are
    the distance apart along the normal."""
    rng = np.random.default_rng(7)
    poses = np.repeat(np.eye(4)[None], 1, axis=0)
    record = np.empty(contacts.CONTACT_COLUMNS)
    apart = 0
    for _ in range(300):
        first = _random_obstacle(rng, "capsule")
        second = _random_obstacle(rng, second_kind)
        shapes = np.ascontiguousarray(np.stack([obstacle_row(first), obstacle_row(second)]))
        distance = kernels.pair_distance(poses, shapes, 0, 1, record)
        reference = _coal_distance(_coal_shape(first), first.pose, _coal_shape(second), second.pose)
        if reference > 1e-6:
            apart += 1
            assert distance == pytest.approx(reference, abs=1e-6)
        else:
            assert distance <= 1e-6
        normal = record[contacts.NORMAL : contacts.NORMAL + 3]
        gap = (
            record[contacts.POINT_A : contacts.POINT_A + 3] - record[contacts.POINT_B : contacts.POINT_B + 3]
        )
        assert np.linalg.norm(normal) == pytest.approx(1.0)
        np.testing.assert_allclose(gap, distance * normal, atol=1e-6)
    assert apart > 100


def test_the_box_gap_bounds_the_segment_box_distance_from_below_and_is_exact_over_a_face():
    """``segment_box_gap`` (the separating-axis bound that lets far capsule-box pairs go
    unmeasured) never exceeds coal's segment-box distance, in random poses; for a segment above a
    face, within its outline, it equals that distance."""
    from ik_node.compiled.shapes import segment_box_gap

    rng = np.random.default_rng(11)
    poses = np.eye(4)[None]
    placed, bounded = np.empty((2, 7, 3)), 0
    for _ in range(400):
        segment = _random_obstacle(rng, "capsule")
        box = _random_obstacle(rng, "box")
        shapes = np.ascontiguousarray(np.stack([obstacle_row(segment), obstacle_row(box)]))
        for k in range(2):
            contacts._bounds(poses[0], shapes[k], placed[k])
        gap = segment_box_gap(placed[0], placed[1])
        axis = coal.Capsule(0.0, segment.size[1])  # the capsule's segment
        reference = _coal_distance(axis, segment.pose, _coal_shape(box), box.pose)
        assert gap <= max(reference, 0.0) + 1e-9
        bounded += gap > 0.0
    assert bounded > 100
    box = Obstacle.box((0.4, 0.6, 0.2), np.eye(4))
    for height in (0.01, 0.3):
        ends = np.array([[-0.1, 0.2, 0.1 + height + 0.05], [0.15, -0.25, 0.1 + height]])
        row = obstacle_row(box)
        contacts._bounds(poses[0], row, placed[1])
        assert segment_box_gap(ends, placed[1]) == pytest.approx(height)


def test_hull_distances_equal_coal_between_convex_hulls():
    """GJK on point sets against coal's distance between their convex hulls, in random poses:
    equal where apart (witness points that far apart), 0 where coal finds them overlapping."""
    from ik_node.compiled.gjk import gjk_workspace, hull_distance

    def convex(points):
        vertices = coal.StdVec_Vec3s()
        for point in points:
            vertices.append(np.asarray(point, dtype=float))
        return coal.Convex.convexHull(vertices, False, "")

    rng = np.random.default_rng(0)
    apart = 0
    for _ in range(200):
        a = rng.normal(size=(40, 3)) * rng.uniform(0.02, 0.2, 3)
        b = rng.normal(size=(30, 3)) * rng.uniform(0.02, 0.2, 3)
        pose_a, pose_b = np.eye(4), np.eye(4)
        pose_b[:3, :3], pose_b[:3, 3] = _random_rotation(rng), rng.uniform(-0.4, 0.4, 3)
        witness_a, witness_b = np.empty(3), np.empty(3)
        guess = np.array([1.0, 0.0, 0.0])
        distance = hull_distance(
            np.vstack([a, b]),
            0,
            40,
            pose_a,
            40,
            70,
            pose_b,
            guess,
            math.inf,
            witness_a,
            witness_b,
            gjk_workspace(),
        )
        reference = _coal_distance(convex(a), pose_a, convex(b), pose_b)
        if reference > 1e-6:
            apart += 1
            assert distance == pytest.approx(reference, abs=1e-9)
            assert np.linalg.norm(witness_a - witness_b) == pytest.approx(distance, abs=1e-9)
            # told a distance it need not exceed, GJK may stop at a lower bound past it
            np.testing.assert_allclose(guess / np.linalg.norm(guess), (witness_a - witness_b) / distance)
            bound = hull_distance(
                np.vstack([a, b]), 0, 40, pose_a, 40, 70, pose_b, np.array([0.0, 1.0, 0.0]), reference / 2,
                witness_a, witness_b, gjk_workspace(),
            )  # fmt: skip
            assert reference / 2 <= bound <= reference + 1e-9
        else:
            assert distance <= 1e-9
    assert 50 < apart < 190


def test_a_simplified_hull_grown_by_its_error_holds_every_point():
    """``simplified_hull`` keeps a subset of a hull's points; every point lies within the error it
    returns of the subset's hull (by coal), whether the subset's size or the tolerance ended it."""
    from ik_node.compiled.gjk import simplified_hull

    rng = np.random.default_rng(5)
    points = rng.normal(size=(1500, 3))
    points /= np.linalg.norm(points, axis=1, keepdims=True)  # a sphere's: every point on the hull
    for count, tolerance in ((24, 1e-3), (400, 0.02)):
        chosen = np.empty(count, dtype=np.int64)
        error, used = simplified_hull(points, count, tolerance, chosen)
        vertices = coal.StdVec_Vec3s()
        for point in points[chosen[:used]]:
            vertices.append(point)
        hull = coal.Convex.convexHull(vertices, False, "")
        distances = [_coal_distance(coal.Sphere(0.0), _at(point), hull, np.eye(4)) for point in points]
        assert max(distances) <= error + 1e-9 and max(distances) > 0.5 * error


def _at(point) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, 3] = point
    return pose


@needs_erd
def test_constraint_rows_are_the_distance_rates_by_finite_differences():
    robot = load_robot(ROBOTS / "panda_description" / "urdf" / "panda.urdf", package_paths=[SHARE])
    solver = IKSolver(
        robot, "panda_link0", "panda_link8", self_collision=True, collision_margin=1.0,
        obstacles=[Obstacle.sphere(0.1, (0.5, 0.0, 0.3))],
    )  # fmt: skip
    problem, tree = solver.problem, solver.problem.tree_arrays
    task, collision = problem.task, problem.collision
    rng = np.random.default_rng(3)
    dof = len(solver.joint_names)
    checked = 0
    for _ in range(10):
        q = rng.uniform(solver.lower, solver.upper)
        space = kernels.evaluation_workspace(tree, task, np.int64(dof), collision)
        kernels.evaluate(
            tree, task, collision, np.repeat(np.eye(4)[None], 1, 0), q, space, np.empty(6), np.empty((1, 2))
        )
        contact = space[bundles.CONTACT]
        count = int(contact[bundles.CONTACT_BUFFER][bundles.NEAR_COUNT])
        rows = np.empty((count, dof))
        kernels.contact_rows(tree, collision, space[bundles.POSES], contact, np.empty((2, 6, dof)), rows)
        groups, near = collision[bundles.GROUPS], contact[bundles.NEAR_PAIRS]
        for c in range(count):
            group = int(np.flatnonzero((groups[:, 2] <= near[c]) & (near[c] < groups[:, 3]))[0])
            step = 1e-6
            for j in range(dof):
                moved = []
                for sign in (1.0, -1.0):
                    shifted = q.copy()
                    shifted[j] += sign * step
                    distances = np.empty(len(groups))
                    kernels.group_distances(tree_poses(solver, shifted), collision, distances)
                    moved.append(distances[group])
                assert rows[c, j] == pytest.approx((moved[0] - moved[1]) / (2 * step), abs=1e-5)
            checked += 1
    assert checked >= 20


def tree_poses(solver, q):
    return solver.tree.link_poses(q)


@pytest.fixture(scope="module")
def panda():
    robot = load_robot(ROBOTS / "panda_description" / "urdf" / "panda.urdf", package_paths=[SHARE])
    srdf = ROBOTS / "panda_description" / "srdf" / "panda.srdf"
    return robot, srdf


@needs_erd
def test_no_success_in_self_collision_on_the_real_meshes(panda):
    """Seeded random goals (FK of random in-limit configurations that are collision-free on the
    meshes) from the rest posture: every success is collision-free by coal on the Panda's meshes
    with its SRDF's pairs; the joint limits hold; the residual is below tolerance by the plain
    solver's FK; and nearly all are solved."""
    robot, srdf = panda
    solver = IKSolver(robot, "panda_link0", "panda_link8", self_collision=True, srdf=srdf)
    plain = IKSolver(robot, "panda_link0", "panda_link8")
    reference = ReferenceCollision(
        ROBOTS / "panda_description" / "urdf" / "panda.urdf", SHARE, srdf, (), "panda_link0",
        solver.joint_names,
    )  # fmt: skip
    rng = np.random.default_rng(11)
    goals, solved = 0, 0
    for q in rng.uniform(solver.lower, solver.upper, (400, len(solver.joint_names))):
        if goals == 60:
            break
        if reference.in_collision(q, first_only=True)[0]:
            continue
        goals += 1
        target = plain.tip_poses(q)[0]
        result = solver.solve(target, timeout=0.02)
        assert np.all(result.q >= solver.lower) and np.all(result.q <= solver.upper)
        if result.success:
            solved += 1
            assert not reference.in_collision(result.q)[0], reference.in_collision(result.q)[1]
            reached = plain.tip_poses(result.q)[0]
            assert np.linalg.norm(reached[:3, 3] - target[:3, 3]) <= 1e-5 + 1e-9
        else:
            assert result.reason in ("collision", "timeout", "unreachable", "iterations")
    assert goals == 60 and solved >= 0.95 * goals


@needs_erd
def test_obstacles_are_respected_and_changeable_between_solves(panda):
    robot, srdf = panda
    table = Obstacle.box((0.6, 1.0, 0.04), (0.65, 0.0, 0.1), name="table")  # top at z = 0.12 m
    solver = IKSolver(robot, "panda_link0", "panda_link8", self_collision=True, srdf=srdf, obstacles=[table])
    plain = IKSolver(robot, "panda_link0", "panda_link8")
    reference = ReferenceCollision(
        ROBOTS / "panda_description" / "urdf" / "panda.urdf", SHARE, srdf, [table], "panda_link0",
        solver.joint_names,
    )  # fmt: skip
    rng = np.random.default_rng(5)
    goals, solved, plain_in_table = 0, 0, 0
    for q in rng.uniform(solver.lower, solver.upper, (20000, len(solver.joint_names))):
        if goals == 40:
            break
        target = plain.tip_poses(q)[0]
        over_table = target[2, 3] < 0.3 and abs(target[0, 3] - 0.65) < 0.3 and abs(target[1, 3]) < 0.5
        if not over_table or reference.in_collision(q, first_only=True)[0]:
            continue
        goals += 1
        seed = rng.uniform(solver.lower, solver.upper)  # (some in the table: a seed may collide)
        result = solver.solve(target, seed=seed, timeout=0.02)
        plain_result = plain.solve(target, seed=seed)
        plain_in_table += plain_result.success and reference.in_collision(plain_result.q)[0]
        if result.success:
            solved += 1
            assert not reference.in_collision(result.q)[0]
            assert solver.clearance(result.q) >= 0.0
    assert goals == 40 and solved >= 0.75 * goals  # (near the table, from random seeds)
    assert plain_in_table > 0  # (the check has something to catch)
    solver.set_obstacles([])
    assert solver.obstacles == ()
    assert all("table" not in pair for pair in solver.collision_distances(solver.rest_posture))


@needs_erd
def test_collision_shapes_name_every_shape_by_its_own_owner(panda):
    """``collision_shapes`` gives every checked shape once, named by its owner: each of the
    Panda's fingers is two capsules (two rows of one owner), and the obstacles follow the links
    under their names (they were cut off, and shapes named by the next owner, when a link had
    more than one row)."""
    robot, srdf = panda
    obstacles = [
        Obstacle.sphere(0.05, (0.5, 0.0, 0.5), name="ball"),
        Obstacle.box((0.6, 1.0, 0.04), name="table"),
    ]
    solver = IKSolver(
        robot, "panda_link0", "panda_link8", self_collision=True, srdf=srdf, obstacles=obstacles
    )
    task = solver.collision_task
    owners = [shape[0] for shape in solver.collision_shapes(solver.rest_posture)]
    assert owners == [*task.link_owners, "ball", "table"]
    assert owners.count("panda_leftfinger") == owners.count("panda_rightfinger") == 2


@needs_erd
def test_a_goal_reached_only_in_collision_is_refused_with_reason_collision(panda):
    robot, srdf = panda
    plain = IKSolver(robot, "panda_link0", "panda_link8")
    target = plain.tip_poses(plain.rest_posture)[0].copy()
    target[:3, 3] = (0.5, 0.0, 0.4)
    assert plain.solve(target).success
    wall = Obstacle.sphere(0.12, (0.5, 0.0, 0.4), name="ball")  # the target inside it
    solver = IKSolver(robot, "panda_link0", "panda_link8", self_collision=True, srdf=srdf, obstacles=[wall])
    result = solver.solve(target, timeout=0.02)
    assert not result.success and result.reason == "collision"
    assert solver.clearance(result.q) >= 0.0  # the closest collision-free configuration found
    batch = solver.solve_many(target[None], timeout=0.02)
    assert not batch.success[0]


@needs_erd
def test_a_seed_in_collision_still_returns_within_the_budget(panda):
    robot, srdf = panda
    solver = IKSolver(robot, "panda_link0", "panda_link8", self_collision=True, srdf=srdf)
    seed = solver.rest_posture.copy()
    seed[solver.joint_names.index("panda_joint4")] = solver.lower[3]
    seed[solver.joint_names.index("panda_joint6")] = solver.upper[5]
    seed[solver.joint_names.index("panda_joint2")] = solver.upper[1]
    target = solver.tip_poses(solver.rest_posture)[0]
    result = solver.solve(target, seed=seed, timeout=0.01)
    assert result.elapsed < 0.05
    if result.success:
        assert solver.clearance(result.q) >= 0.0


@needs_erd
def test_solve_many_answers_are_collision_free(panda):
    robot, srdf = panda
    solver = IKSolver(robot, "panda_link0", "panda_link8", self_collision=True, srdf=srdf)
    rng = np.random.default_rng(2)
    configurations = [
        q for q in rng.uniform(solver.lower, solver.upper, (200, 7)) if solver.clearance(q) > 0
    ][:100]
    targets = np.stack([solver.tip_poses(q)[0] for q in configurations])
    batch = solver.solve_many(targets, timeout=0.01)
    assert batch.success.mean() >= 0.95
    for q, success in zip(batch.q, batch.success):
        if success:
            assert solver.clearance(q) >= 0.0


@needs_erd
def test_checking_off_gives_the_same_answers(panda):
    """Without pairs the solve is the plain one: an obstacle set and removed leaves the answers
    bit for bit as a solver that never had one."""
    robot, _ = panda
    plain = IKSolver(robot, "panda_link0", "panda_link8", max_attempts=50)
    other = IKSolver(
        robot, "panda_link0", "panda_link8", max_attempts=50, obstacles=[Obstacle.sphere(0.05, (2.0, 0, 0))]
    )
    other.set_obstacles([])
    rng = np.random.default_rng(4)
    for q in rng.uniform(plain.lower, plain.upper, (30, 7)):
        target = plain.tip_poses(q)[0]
        a, b = plain.solve(target, timeout=None), other.solve(target, timeout=None)
        np.testing.assert_array_equal(a.q, b.q)


def test_bad_obstacles_are_refused_naming_them():
    with pytest.raises(IKNodeError, match="obstacle 'shelf'.*NaN"):
        Obstacle.box((0.1, 0.1, 0.1), (math.nan, 0, 0), name="shelf")
    with pytest.raises(IKNodeError, match="radius must be finite and > 0"):
        Obstacle.sphere(0.0)
    with pytest.raises(IKNodeError, match="quaternion"):
        Obstacle.box((0.1, 0.1, 0.1), ((0, 0, 0), (0, 0, 0, 0)))
    with pytest.raises(IKNodeError, match="takes 3 size values"):
        Obstacle.box((0.1, 0.1))


@needs_erd
def test_set_obstacles_refuses_what_is_not_an_obstacle(panda):
    robot, _ = panda
    solver = IKSolver(robot, "panda_link0", "panda_link8")
    with pytest.raises(IKNodeError, match=r"obstacles\[0\] must be an ik_node.Obstacle"):
        solver.set_obstacles([(0.1, (0, 0, 0))])


@needs_erd
def test_an_srdf_naming_unknown_links_is_warned_about_and_the_rest_used(panda):
    robot, srdf = panda
    text = (
        Path(srdf)
        .read_text()
        .replace(
            "</robot>",
            '<disable_collisions link1="no_such_link" link2="panda_link1" reason="Never"/></robot>',
        )
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        solver = IKSolver(robot, "panda_link0", "panda_link8", self_collision=True, srdf=text)
    assert any("no_such_link" in str(warning.message) for warning in caught)
    assert len(solver.collision_task.pairs) > 0


@needs_erd
def test_static_link_boxes_contain_their_meshes_and_are_used_when_tight():
    """TALOS's torso and pelvis (not moved by an arm's solve) are checked as their oriented boxes:
    every vertex of their collision meshes lies inside."""
    from ik_node.collision import link_boxes, load_mesh

    robot = load_robot(ROBOTS / "talos_data" / "robots" / "talos_reduced.urdf", package_paths=[SHARE])
    boxes = link_boxes(robot)
    for link in ("torso_2_link", "base_link"):
        pose, size = boxes[link]
        for geometry in robot.collision_geometry[link]:
            vertices = np.asarray(load_mesh(geometry, [str(SHARE)]).vertices)
            in_link = vertices @ geometry.origin[:3, :3].T + geometry.origin[:3, 3]
            in_box = (in_link - pose[:3, 3]) @ pose[:3, :3]
            assert np.all(np.abs(in_box) <= size / 2.0 + 1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = IKSolver(
            robot, "torso_2_link", "gripper_left_base_link", self_collision=True,
            srdf=ROBOTS / "talos_data" / "srdf" / "talos.srdf",
        )  # fmt: skip
    kinds = {
        owner: row[contacts.KIND]
        for owner, row in zip(solver.collision_task.owners, solver.collision_task.shapes)
    }
    assert kinds["torso_2_link"] == contacts.BOX and kinds["arm_left_4_link"] == contacts.SWEPT


def test_collision_checking_without_the_extra_says_which_extra(monkeypatch):
    """Without trimesh/scipy, asking for collision checks is refused naming the extra to install."""
    from ik_node.solver import collision_task

    def missing(*_args, **_kwargs):
        raise ImportError("No module named 'trimesh'")

    monkeypatch.setattr(collision_task, "link_hulls", missing)
    robot = load_robot(Path(__file__).resolve().parents[1] / "urdf" / "arm7.urdf")
    with pytest.raises(IKNodeError, match=r"pip install 'ik_node\[collision\]'"):
        IKSolver(robot, "base_link", "tool0", obstacles=[Obstacle.sphere(0.1, (1.0, 0.0, 0.0))])
