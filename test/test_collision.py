"""The collision model (ik_node.collision) and SRDF pairs (ik_node.collision.srdf): the approximation
contains the real geometry (never more clearance than pinocchio + coal measure on the meshes)."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import numpy as np
import pytest

from ik_node import load_robot
from ik_node.collision import (
    MAX_SHAPES_PER_LINK,
    collision_model,
    enclosing_capsule,
    load_mesh,
    shape_distance,
)
from ik_node.description.catalogue import example_robot_data_dir

trimesh = pytest.importorskip("trimesh", reason="the collision extra (trimesh) is not installed")
ROBOTS = example_robot_data_dir()
needs_erd = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
PANDA = None if ROBOTS is None else ROBOTS / "panda_description" / "urdf" / "panda.urdf"
UR5 = None if ROBOTS is None else ROBOTS / "ur_description" / "urdf" / "ur5_robot.urdf"
SHARE = None if ROBOTS is None else ROBOTS.parent.parent  # holds the package 'example-robot-data'

PRIMITIVES = """<robot name="shapes">
  <link name="base">
    <collision><origin xyz="0 0 0.1" rpy="0.3 0 0"/><geometry><box size="0.2 0.1 0.3"/></geometry></collision>
  </link>
  <link name="arm">
    <collision><geometry><cylinder radius="0.05" length="0.4"/></geometry></collision>
    <collision><origin xyz="0 0 0.25"/><geometry><sphere radius="0.07"/></geometry></collision>
  </link>
  <link name="hand">
    <collision><origin rpy="0 1.57 0"/><geometry><capsule radius="0.03" length="0.1"/></geometry></collision>
  </link>
  <link name="bare"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.4"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="arm"/><child link="hand"/><origin xyz="0 0 0.35"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="j3" type="fixed"><parent link="hand"/><child link="bare"/></joint>
</robot>"""


def _inside(model, link, points_in_link, tolerance=1e-9):
    """Whether every point lies in one of the link's shapes."""
    best = np.full(len(points_in_link), np.inf)
    for i in model.shapes_of(link):
        a, b, r = model.point_a[i], model.point_b[i], model.radius[i]
        d = b - a
        t = np.clip(((points_in_link - a) @ d) / max(d @ d, 1e-300), 0.0, 1.0)
        gap = np.linalg.norm(points_in_link - (a + np.outer(t, d)), axis=1) - r
        best = np.minimum(best, gap)
    return bool(np.all(best <= tolerance)), float(best.max())


def _capsule_volume(a, b, radius):
    return np.pi * radius**2 * np.linalg.norm(b - a) + 4.0 / 3.0 * np.pi * radius**3


def _meshes(robot, link):
    """The link's meshes, in the link frame."""
    for geometry in robot.collision_geometry[link]:
        if geometry.kind == "mesh":
            yield load_mesh(geometry, robot.package_paths).apply_transform(geometry.origin)


def _winding_numbers(mesh, points):
    """The winding number of a closed mesh around each point (1 inside, 0 outside): its
    triangles' solid angles seen from the point over 4 pi (Van Oosterom & Strackee 1983)."""
    total = np.zeros(len(points))
    for a, b, c in np.asarray(mesh.vertices)[np.asarray(mesh.faces)]:
        ra, rb, rc = a - points, b - points, c - points
        la, lb, lc = (np.linalg.norm(r, axis=1) for r in (ra, rb, rc))
        numerator = np.einsum("ij,ij->i", ra, np.cross(rb, rc))
        denominator = la * lb * lc + np.einsum("ij,ij->i", ra, rb) * lc
        denominator += np.einsum("ij,ij->i", rb, rc) * la + np.einsum("ij,ij->i", rc, ra) * lb
        total += 2.0 * np.arctan2(numerator, denominator)
    return np.abs(total) / (4.0 * np.pi)


def _link_points(robot, link):
    """Every vertex of the link's meshes (no padding): what the single capsule used to hold."""
    points = np.concatenate([np.asarray(mesh.vertices) for mesh in _meshes(robot, link)])
    return points, np.zeros(len(points))


def test_primitives_are_kept_as_records_and_enclosed():
    robot = load_robot(PRIMITIVES)
    kinds = {link: [g.kind for g in items] for link, items in robot.collision_geometry.items()}
    assert kinds == {"base": ["box"], "arm": ["cylinder", "sphere"], "hand": ["capsule"]}
    assert robot.collision_geometry["base"][0].size == (0.2, 0.1, 0.3)
    model = collision_model(robot)
    assert tuple(dict.fromkeys(model.link_names)) == ("base", "arm", "hand")
    rng = np.random.default_rng(0)
    # random points on each primitive's surface, in the link frame
    directions = rng.normal(size=(2000, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    box = robot.collision_geometry["base"][0]
    corners = np.clip(directions * 10, -1, 1) * np.array(box.size) / 2
    around = directions[:, :2] / np.linalg.norm(directions[:, :2], axis=1, keepdims=True)
    cylinder = np.column_stack([0.05 * around, rng.uniform(-0.2, 0.2, len(directions))])
    sphere = 0.07 * directions + [0, 0, 0.25]
    segment = np.outer(rng.uniform(-0.05, 0.05, len(directions)), [0, 0, 1])
    capsule = (segment + 0.03 * directions) @ robot.collision_geometry["hand"][0].origin[:3, :3].T
    for link, points in (
        ("base", corners @ box.origin[:3, :3].T + box.origin[:3, 3]),
        ("arm", np.concatenate([cylinder, sphere])),
        ("hand", capsule),
    ):
        inside, worst = _inside(model, link, points)
        assert inside, (link, worst)
    assert all(1.0 <= value < 4.0 for value in model.overshoot().values())


def test_the_model_is_cached_per_description():
    assert collision_model(load_robot(PRIMITIVES)) is collision_model(load_robot(PRIMITIVES))


def test_enclosing_capsule_of_a_single_point_is_a_sphere():
    a, b, radius = enclosing_capsule(np.array([[1.0, 2.0, 3.0]]), np.array([0.5]))
    assert np.allclose(a, [1, 2, 3]) and np.allclose(b, [1, 2, 3]) and radius == pytest.approx(0.5, abs=1e-5)


def test_a_missing_mesh_warns_naming_link_and_path_and_is_left_out(tmp_path):
    urdf = tmp_path / "robot.urdf"
    urdf.write_text(
        PRIMITIVES.replace(
            '<link name="bare"/>',
            '<link name="bare"><collision><geometry><mesh filename="meshes/nowhere.stl"/></geometry>'
            "</collision></link>",
        )
    )
    robot = load_robot(urdf)
    with pytest.warns(UserWarning, match=r"link 'bare'.*meshes/nowhere\.stl") as caught:
        model = collision_model(robot)
    assert len([w for w in caught if "nowhere" in str(w.message)]) == 1
    assert "bare" not in model.link_names and "hand" in model.link_names


def test_bad_collision_elements_load_silently_and_are_warned_by_the_model():
    urdf = PRIMITIVES.replace('<link name="bare"/>', '<link name="bare"><collision><geometry>'
                              '<sphere radius="-1"/></geometry></collision></link>')  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot = load_robot(urdf)
    with pytest.warns(UserWarning, match="link 'bare'.*negative"):
        collision_model(robot, package_paths=["elsewhere"])


def test_relative_mesh_paths_resolve_against_the_urdf_file(tmp_path):
    (tmp_path / "meshes").mkdir()
    trimesh.creation.box(extents=(0.1, 0.2, 0.3)).export(tmp_path / "meshes" / "box.stl")
    urdf = tmp_path / "robot.urdf"
    urdf.write_text(
        '<robot name="r"><link name="a"><collision><geometry><mesh filename="meshes/box.stl" '
        'scale="2 1 1"/></geometry></collision></link></robot>'
    )
    model = collision_model(load_robot(urdf))
    inside, _ = _inside(model, "a", np.array([[0.1, 0.1, 0.15], [-0.1, -0.1, -0.15]]))
    assert inside
    assert model.geometry_volume[0] == pytest.approx(0.2 * 0.2 * 0.3)


def test_the_solid_of_a_mesh_of_long_triangles_is_inside_its_capsules(tmp_path):
    """An L of two long boxes, 12 triangles each, as one mesh: the triangles span the cuts, so the
    slabs' capsules hold the surface and the solid only because the edges are clipped at the cuts
    (not whole triangles in the slab of their centroid)."""
    (tmp_path / "meshes").mkdir()
    extents = [(0.4, 0.06, 0.06), (0.06, 0.4, 0.06)]
    centres = [(0.2, 0.0, 0.0), (0.0, 0.2, 0.0)]
    boxes = [
        trimesh.creation.box(extents=e, transform=trimesh.transformations.translation_matrix(c))
        for e, c in zip(extents, centres, strict=True)
    ]
    trimesh.util.concatenate(boxes).export(tmp_path / "meshes" / "ell.stl")
    urdf = tmp_path / "robot.urdf"
    urdf.write_text(
        '<robot name="r"><link name="a"><collision><origin xyz="0.1 0 0" rpy="0.2 0.3 0.4"/><geometry>'
        '<mesh filename="meshes/ell.stl"/></geometry></collision></link></robot>'
    )
    robot = load_robot(urdf)
    model = collision_model(robot)
    assert 2 <= len(model.shapes_of("a")) <= MAX_SHAPES_PER_LINK
    origin = robot.collision_geometry["a"][0].origin
    rng = np.random.default_rng(5)
    for extent, centre in zip(extents, centres, strict=True):
        solid = rng.uniform(-0.5, 0.5, size=(20000, 3)) * extent + centre
        inside, worst = _inside(model, "a", solid @ origin[:3, :3].T + origin[:3, 3])
        assert inside, worst
    single = enclosing_capsule(*_link_points(robot, "a"))
    assert model.volume.sum() < 0.8 * _capsule_volume(*single)


@needs_erd
def test_a_dae_mesh_through_package_paths_is_enclosed(tmp_path):
    pytest.importorskip("collada", reason="pycollada (trimesh's DAE reader) is not installed")
    filename = "package://example-robot-data/robots/go1_description/meshes/hip.dae"
    mesh = f'<mesh filename="{filename}" scale="1 2 1"/>'
    urdf = f'<robot name="r"><link name="hip"><collision><geometry>{mesh}</geometry></collision></link>'
    urdf += "</robot>"
    robot = load_robot(urdf, package_paths=[SHARE])
    model = collision_model(robot)
    vertices = np.asarray(load_mesh(robot.collision_geometry["hip"][0], robot.package_paths).vertices)
    assert len(vertices) > 1000 and _inside(model, "hip", vertices)[0]


# ------------------------------------------------------------------ against coal on real meshes


@pytest.fixture(scope="module")
def panda():
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    return load_robot(PANDA, package_paths=[SHARE])


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_every_mesh_vertex_and_sampled_surface_point_is_inside_its_links_capsules(name):
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    robot = load_robot(PANDA if name == "panda" else UR5, package_paths=[SHARE])
    model = collision_model(robot)
    rng = np.random.default_rng(7)
    for link in robot.collision_geometry:
        assert 1 <= len(model.shapes_of(link)) <= MAX_SHAPES_PER_LINK
        for mesh in _meshes(robot, link):
            corners = np.asarray(mesh.vertices)[np.asarray(mesh.faces)]  # (triangles, 3, 3)
            weights = rng.dirichlet(np.ones(3), size=(len(corners), 8))  # 8 points on each triangle
            weights[:, :3] = [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5]]  # edge middles
            samples = np.einsum("tsk,tkd->tsd", weights, corners).reshape(-1, 3)
            for points in (np.asarray(mesh.vertices), samples):
                inside, worst = _inside(model, link, points)
                assert inside, (link, worst)


@needs_erd
def test_the_panda_capsules_are_tighter_than_one_capsule_a_link(panda):
    """Measured: 1.69 times the meshes' volume (fingers 2.97, which are boxes), against 2.39 for
    one capsule a link along the vertices' principal axis."""
    model = collision_model(panda)
    with_meshes = [link for link in panda.collision_geometry if "finger" not in link]
    before = sum(_capsule_volume(*enclosing_capsule(*_link_points(panda, link))) for link in with_meshes)
    meshes = [i for i, link in enumerate(model.link_names) if link in with_meshes]
    assert model.volume[meshes].sum() < 0.75 * before
    assert model.volume.sum() / model.geometry_volume.sum() < 1.8
    assert all(value < 3.1 for value in model.overshoot().values())
    assert set(model.overshoot()) == set(panda.collision_geometry)


@needs_erd
def test_the_approximation_never_reports_more_clearance_than_coal_on_the_meshes(panda):
    pin = pytest.importorskip("pinocchio")
    model = collision_model(panda)
    pin_model = pin.buildModelFromUrdf(str(PANDA))
    geometry_model = pin.buildGeomFromUrdf(pin_model, str(PANDA), pin.COLLISION, package_dirs=[str(SHARE)])
    geometry_model.addAllCollisionPairs()
    pin_data, geometry_data = pin_model.createData(), pin.GeometryData(geometry_model)
    link_of = [pin_model.frames[g.parentFrame].name for g in geometry_model.geometryObjects]
    tree = panda.full_tree
    rng = np.random.default_rng(18)
    checked = 0
    for _ in range(40):
        q = rng.uniform(tree.lower, tree.upper)
        poses = tree.link_poses(q)
        values = dict(zip(tree.joint_names, q, strict=True))
        pin_q = np.zeros(pin_model.nq)
        for joint_id in range(1, pin_model.njoints):
            leader, multiplier, offset = panda.mimic_map(pin_model.names[joint_id])
            pin_q[pin_model.joints[joint_id].idx_q] = multiplier * values[leader] + offset
        pin.computeDistances(pin_model, pin_data, geometry_model, geometry_data, pin_q)
        for index, pair in enumerate(geometry_model.collisionPairs):
            link_a, link_b = link_of[pair.first], link_of[pair.second]
            if link_a == link_b:
                continue
            reference = geometry_data.distanceResults[index].min_distance
            approx = min(
                shape_distance(model, i, tree.pose_of(poses, link_a), j, tree.pose_of(poses, link_b))
                for i, j in itertools.product(model.shapes_of(link_a), model.shapes_of(link_b))
            )
            assert approx <= reference + 1e-9, (link_a, link_b, approx, reference)
            checked += 1
    assert checked > 1000


def test_load_robot_never_imports_trimesh():
    """(That the collision modules import without rclpy, test_layers.py checks for every module.)"""
    import subprocess
    import sys

    code = (
        "import sys; from ik_node import load_robot; "
        f"load_robot({str(Path(PANDA)) if PANDA else ''!r} or {PRIMITIVES!r}); "
        "import ik_node.collision, ik_node.collision.srdf; assert 'trimesh' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_segment_distances_match_brute_force_including_point_segments():
    from ik_node.collision import segment_distances

    rng = np.random.default_rng(3)
    ends = rng.normal(size=(300, 4, 3))
    ends[100:200, 1] = ends[100:200, 0]  # first segment a point
    ends[150:250, 3] = ends[150:250, 2]  # second segment a point (both: 150-199)
    exact = segment_distances(ends[:, 0], ends[:, 1], ends[:, 2], ends[:, 3])
    s = np.linspace(0.0, 1.0, 301)[None, :, None]
    first = ends[:, None, 0] + s * (ends[:, None, 1] - ends[:, None, 0])
    second = ends[:, None, 2] + s * (ends[:, None, 3] - ends[:, None, 2])
    sampled = np.linalg.norm(first[:, :, None] - second[:, None, :], axis=-1).min(axis=(1, 2))
    assert np.all(exact <= sampled + 1e-12)
    assert np.all(sampled - exact <= 2e-3)


# ------------------------------------------------------------------ SRDF and computed pairs

SRDF = """<robot name="shapes">
  <disable_collisions link1="base" link2="arm" reason="Adjacent"/>
  <disable_collisions link1="hand" link2="nowhere" reason="Never"/>
  <disable_collisions link1="ghost" link2="base" reason="Never"/>
  <disable_collisions link1="hand" link2="base"/>
</robot>"""


def test_srdf_pairs_are_read_and_unknown_links_warned_and_ignored(tmp_path):
    from ik_node.collision.srdf import collision_pairs, disabled_pairs

    robot = load_robot(PRIMITIVES)
    with pytest.warns(
        UserWarning, match=r"2 <disable_collisions>.*unknown: nowhere.*unknown: ghost"
    ) as caught:
        pairs = disabled_pairs(SRDF, robot)
    assert len(caught) == 1
    assert pairs == {("arm", "base"): "Adjacent", ("base", "hand"): ""}
    path = tmp_path / "robot.srdf"
    path.write_text(SRDF)
    with pytest.warns(UserWarning):
        assert disabled_pairs(path, robot) == pairs
        assert collision_pairs(robot, srdf=SRDF.encode()) == [("arm", "hand")]


def test_srdf_errors_name_the_problem():
    from ik_node.collision.srdf import disabled_pairs
    from ik_node.errors import URDFError

    robot = load_robot(PRIMITIVES)
    with pytest.raises(URDFError, match="SRDF file not found"):
        disabled_pairs("no/such.srdf", robot)
    with pytest.raises(URDFError, match="malformed SRDF"):
        disabled_pairs("<robot><disable_collisions", robot)


def test_computed_pairs_are_adjacent_first_and_seeded():
    from ik_node.collision.srdf import compute_disabled_pairs

    robot = load_robot(PRIMITIVES)
    pairs = compute_disabled_pairs(robot, samples=500, seed=1)
    assert pairs[("arm", "base")] == "Adjacent" and pairs[("arm", "hand")] == "Adjacent"
    assert pairs == compute_disabled_pairs(robot, samples=500, seed=1)


@needs_erd
def test_computed_panda_pairs_agree_with_its_srdf_where_they_must(panda):
    """The Setup Assistant's reasons on our capsules: the SRDF's adjacent pairs are adjacent here
    too, and a pair never in contact on our (larger) capsules is disabled in the SRDF as well."""
    from ik_node.collision.srdf import compute_disabled_pairs, disabled_pairs

    reference = disabled_pairs(ROBOTS / "panda_description" / "srdf" / "panda.srdf", panda)
    ours = compute_disabled_pairs(panda)
    assert {p for p, r in reference.items() if r == "Adjacent"} <= {
        p for p, r in ours.items() if r == "Adjacent"
    }
    assert {p for p, r in ours.items() if r == "Never"} <= set(reference)
    # tight enough to find every pair the SRDF never checks (one capsule a link missed 3 of 22)
    assert {p for p, r in reference.items() if r == "Never"} <= set(ours)


@needs_erd
def test_the_pieces_of_concave_links_contain_their_meshes_surface_and_solid():
    """Baxter's pedestal (a post on wide feet) and torso are cut into convex pieces: every mesh
    vertex, sampled surface point and (for a closed mesh) sampled solid point lies in one piece's
    hull (grown by its padding) and in both its capsule and its box; the pieces' hulls hold far
    less than the link's one hull."""
    from scipy.spatial import ConvexHull

    from ik_node.collision import link_hulls, link_pieces
    from ik_node.compiled.gjk import gjk_workspace, hull_distance

    robot = load_robot(ROBOTS / "baxter_description" / "urdf" / "baxter.urdf", package_paths=[SHARE])
    rng = np.random.default_rng(3)
    work, witness_a, witness_b = gjk_workspace(), np.empty(3), np.empty(3)
    for link, most in (("pedestal", 0.6), ("torso", 0.8)):
        pieces = link_pieces(robot, link)
        whole = ConvexHull(link_hulls(robot)[link][0]).volume
        assert len(pieces) > 1 and sum(piece.hull_volume for piece in pieces) < most * whole
        samples = []
        for mesh in _meshes(robot, link):
            corners = np.asarray(mesh.vertices)[np.asarray(mesh.faces)]
            weights = rng.dirichlet(np.ones(3), size=(len(corners), 4))
            samples += [np.asarray(mesh.vertices), np.einsum("tsk,tkd->tsd", weights, corners).reshape(-1, 3)]
            welded = mesh.copy()
            welded.merge_vertices()
            if welded.is_watertight:  # solid points: inside by their winding number
                low, high = welded.bounds
                trial = rng.uniform(low, high, (20000, 3))
                samples.append(trial[_winding_numbers(welded, trial) > 0.5])
        points = np.concatenate(samples)
        held = np.zeros(len(points), dtype=bool)
        for piece in pieces:
            hull = ConvexHull(piece.vertices)
            outside = (points @ hull.equations[:, :3].T + hull.equations[:, 3]).max(axis=1)
            in_hull = outside <= piece.pad
            for index in np.flatnonzero(in_hull & (outside > 0.0)):  # near the hull: its distance
                single = np.vstack([piece.vertices, points[index]])
                count = len(piece.vertices)
                gap = hull_distance(
                    single, 0, count, np.eye(4), count, count + 1, np.eye(4), np.array([1.0, 0.0, 0.0]),
                    np.inf, witness_a, witness_b, work,
                )  # fmt: skip
                in_hull[index] = gap <= piece.pad + 1e-9
            a, b, radius, _ = piece.capsule
            axis = b - a
            t = np.clip((points - a) @ axis / max(axis @ axis, 1e-300), 0.0, 1.0)
            in_capsule = np.linalg.norm(points - (a + np.outer(t, axis)), axis=1) <= radius + 1e-9
            box_pose, size = piece.box
            in_box = np.all(np.abs((points - box_pose[:3, 3]) @ box_pose[:3, :3]) <= size / 2 + 1e-9, axis=1)
            held |= in_hull & in_capsule & in_box
        assert held.all(), (link, points[~held][:5])
