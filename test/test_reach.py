"""Reachability maps (ik_node.reach): a small map of the bundled 7-DOF arm whose every listed pose
the FK of its solution reproduces (pinocchio, independent of ik_node), the HDF5 layout
(Reuleaux's datasets and ours), the same map through a Dask LocalCluster on loopback (bit for
bit, with a worker killed mid-run), resume after an interruption, the sampling, and bad input."""

import dataclasses
import hashlib
import io
import math
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from ik_node import IKNodeError, lie, load_robot
from ik_node.reach import MapOptions, load_map, main, reachability_map
from ik_node.reach.sampling import (
    approach_directions,
    orientation_samples,
    quaternions_xyzw,
    voxel_count,
    voxel_grid,
)
from ik_node.reach.store import ChunkStore

h5py = pytest.importorskip("h5py", reason="maps are HDF5 files (the reach extra)")
pin = pytest.importorskip("pinocchio", reason="the independent FK of the map's solutions")

URDF = Path(__file__).resolve().parent.parent / "urdf" / "arm7.urdf"
#: A coarse map that solves in about a second: 506 voxels x 10 orientations.
SMALL = MapOptions(0.2, orientations=10)
SMALL_ARGS = ["--urdf", str(URDF), "--base", "base_link", "--tip", "tool0", "--resolution", "0.2",
              "--orientations", "10", "--quiet"]  # fmt: skip
#: float32 rows in /Poses/poses_dataset: ~1e-7 of a metre-sized coordinate and of a quaternion.
FLOAT32_SLACK = 1e-6


def sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def run_cli(*arguments) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(argument) for argument in arguments])
    return code, out.getvalue(), err.getvalue()


class PinocchioFK:
    """tool0 in base_link by pinocchio, and the body Jacobian's manipulability."""

    def __init__(self, joint_names):
        self.model = pin.buildModelFromUrdf(str(URDF))
        self.data = self.model.createData()
        self.slots = [self.model.joints[self.model.getJointId(name)].idx_q for name in joint_names]
        self.base, self.tip = self.model.getFrameId("base_link"), self.model.getFrameId("tool0")

    def configuration(self, q):
        configuration = pin.neutral(self.model)
        configuration[self.slots] = q
        return configuration

    def pose(self, q) -> np.ndarray:
        pin.framesForwardKinematics(self.model, self.data, self.configuration(q))
        return (self.data.oMf[self.base].inverse() * self.data.oMf[self.tip]).homogeneous

    def manipulability(self, q) -> float:
        configuration = self.configuration(q)
        pin.computeJointJacobians(self.model, self.data, configuration)
        pin.framesForwardKinematics(self.model, self.data, configuration)
        jacobian = pin.getFrameJacobian(self.model, self.data, self.tip, pin.ReferenceFrame.LOCAL)
        return math.sqrt(max(np.linalg.det(jacobian @ jacobian.T), 0.0))


def rotation_angle(R) -> float:
    """The angle [rad] of a rotation matrix, accurate near 0 (atan2 of its sine and cosine parts)."""
    sine = 0.5 * np.linalg.norm((R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]))
    return float(np.arctan2(sine, 0.5 * (np.trace(R) - 1.0)))


@pytest.fixture(scope="module")
def robot():
    return load_robot(URDF)


@pytest.fixture(scope="module")
def small_map(tmp_path_factory):
    """The small map written by the command (python -m ik_node.reach, a real process), with a plot."""
    directory = tmp_path_factory.mktemp("reach")
    out, plot = directory / "arm7.h5", directory / "arm7.png"
    completed = subprocess.run(
        [sys.executable, "-m", "ik_node.reach", *SMALL_ARGS, "--output", out, "--plot", plot],
        capture_output=True, text=True, timeout=240, cwd=directory,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    return out, plot, completed.stdout


# ------------------------------------------------------------------ the map's content


@pytest.fixture(scope="module")
def api_map(robot, tmp_path_factory):
    """The same small map written through the Python API: (its path, the ReachMap returned)."""
    out = tmp_path_factory.mktemp("api") / "arm7.h5"
    return out, reachability_map(robot, "base_link", "tool0", SMALL, out=out)


def assert_same_map(path_a, path_b, attributes_apart=()) -> None:
    """Every dataset equal bit for bit (NaN where NaN), every attribute but ``attributes_apart``."""
    with h5py.File(path_a, "r") as a, h5py.File(path_b, "r") as b:
        names_a, names_b = [], []
        a.visit(names_a.append)
        b.visit(names_b.append)
        assert names_a == names_b
        for name in names_a:
            if isinstance(a[name], h5py.Dataset):
                np.testing.assert_array_equal(a[name][()], b[name][()], err_msg=name)
                assert a[name].dtype == b[name].dtype
        attributes_a = {
            key: value for key, value in a["ik_node"].attrs.items() if key not in attributes_apart
        }
        attributes_b = {
            key: value for key, value in b["ik_node"].attrs.items() if key not in attributes_apart
        }
        assert attributes_a.keys() == attributes_b.keys()
        for key, value in attributes_a.items():
            assert np.array_equal(value, attributes_b[key]), key


def test_every_listed_pose_is_reproduced_by_the_fk_of_its_solution(small_map, robot):
    out, _, stdout = small_map
    assert "5,060 poses" in stdout and "reachable" in stdout
    with h5py.File(out, "r") as handle:
        rows = handle["Poses/poses_dataset"][()]
        solutions = handle["ik_node/solutions"][()]
        joint_names = handle["ik_node"].attrs["joint_names"]
    fk = PinocchioFK(load_map(out).joint_names)
    tree = robot.tree("base_link", ["tool0"])
    assert joint_names and len(rows) == len(solutions) > 1000
    worst_position = worst_angle = 0.0
    for row, q in zip(rows.astype(float), solutions):
        assert np.all(q >= tree.lower - 1e-9) and np.all(q <= tree.upper + 1e-9)
        pose = fk.pose(q)
        target = np.eye(4)
        target[:3, :3] = lie.quaternion_to_matrix(*row[6:10])
        target[:3, 3] = row[3:6]
        np.testing.assert_array_equal(row[:3], row[3:6])  # at the voxel centre
        worst_position = max(worst_position, np.linalg.norm(pose[:3, 3] - target[:3, 3]))
        worst_angle = max(worst_angle, rotation_angle(pose[:3, :3].T @ target[:3, :3]))
    assert worst_position <= 1e-5 + FLOAT32_SLACK
    assert worst_angle <= 1e-5 + FLOAT32_SLACK


def test_reachability_index_and_manipulability_per_voxel(small_map):
    out = small_map[0]
    reach_map = load_map(out)
    counts = reach_map.reached.sum(axis=1)
    np.testing.assert_allclose(reach_map.reachability, counts * 100.0 / 10)
    assert 0 < np.sum(reach_map.reachability == 100) < np.sum(reach_map.reachability > 0) < len(counts)
    # the position screen: no orientation reached where the position alone was not
    assert not np.any(reach_map.reached[~reach_map.position_reachable])
    # the dexterity figure: the mean of sqrt(det(J J^T)) over the voxel's solutions, by pinocchio
    fk = PinocchioFK(reach_map.joint_names)
    owner = np.repeat(np.arange(len(counts)), counts)
    for voxel in np.flatnonzero(counts)[::25]:
        expected = np.mean([fk.manipulability(q) for q in reach_map.solutions[owner == voxel]])
        assert reach_map.manipulability[voxel] == pytest.approx(expected, rel=1e-9)
    assert np.all(np.isnan(reach_map.manipulability[counts == 0]))


def test_hdf5_layout_is_reuleaux_s_with_ours_beside_it(small_map):
    out = small_map[0]
    with h5py.File(out, "r") as handle:
        spheres, poses = handle["Spheres/sphere_dataset"], handle["Poses/poses_dataset"]
        assert spheres.dtype == np.float64 and spheres.shape[1] == 4
        assert poses.dtype == np.float32 and poses.shape[1] == 10
        assert poses.maxshape == (None, 10) and poses.chunks is not None
        resolution = spheres.attrs["Resolution"]
        assert (
            resolution.dtype == np.float32 and resolution.shape == (1,) and resolution[0] == np.float32(0.2)
        )
        own = handle["ik_node"]
        voxels, reachability = own["voxels"][()], own["reachability"][()]
        assert own["orientations"].shape == (10, 4) and own["reached"].shape == (len(voxels), 10)
        assert own["solutions"].shape == (len(poses), 7) and own["solutions"].dtype == np.float64
        metadata = dict(own.attrs)
        rows, sphere_rows = poses[()], spheres[()]
    # spheres: the voxels with ri > 0, rows x y z ri; poses: each reachable pose with its voxel
    keep = reachability > 0
    np.testing.assert_array_equal(
        sphere_rows, np.concatenate([voxels[keep], reachability[keep, None]], axis=1)
    )
    assert len(np.unique(rows[:, :3], axis=0)) == keep.sum()
    np.testing.assert_allclose(np.linalg.norm(rows[:, 6:10], axis=1), 1.0, atol=1e-6)
    for name in ("robot", "base", "tip", "resolution", "sampling", "attempts", "random_seed", "versions"):
        assert name in metadata
    assert metadata["deterministic"] and metadata["task"] == "pose" and metadata["urdf_sha256"]


def test_plot_is_written(small_map):
    plot = small_map[1]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 10_000


def test_api_gives_the_command_s_map_and_the_same_file_whatever_the_chunks(
    small_map, api_map, robot, tmp_path
):
    # the command adds the URDF's path and digest to the metadata; everything else is the same
    assert_same_map(small_map[0], api_map[0], attributes_apart=("urdf", "urdf_sha256"))
    out = tmp_path / "api.h5"
    reach_map = reachability_map(robot, "base_link", "tool0", SMALL, out=out, chunk_poses=700)
    assert sha256(out) == sha256(api_map[0])
    assert reach_map.run["chunks"] == 8 and reach_map.solutions.shape == (len(reach_map.poses), 7)
    np.testing.assert_array_equal(reach_map.spheres(), load_map(out).spheres())
    np.testing.assert_array_equal(reach_map.solutions, api_map[1].solutions)
    assert not (tmp_path / "api.h5.parts").exists()


def test_position_only_map(robot):
    reach_map = reachability_map(robot, "base_link", "tool0", MapOptions(0.15, position_only=True))
    assert set(np.unique(reach_map.reachability)) == {0.0, 100.0}
    assert reach_map.reached.shape == (len(reach_map.voxels), 1)
    fk = PinocchioFK(reach_map.joint_names)
    for row, q in zip(reach_map.poses, reach_map.solutions):
        pose = fk.pose(q)
        assert np.linalg.norm(pose[:3, 3] - row[:3]) <= 1e-5
        # the orientation listed is the one reached
        assert rotation_angle(pose[:3, :3].T @ lie.quaternion_to_matrix(*row[3:])) < 1e-9
    # translational manipulability: 3 rows of the body Jacobian
    q = reach_map.solutions[0]
    configuration = fk.configuration(q)
    jacobian = pin.computeFrameJacobian(fk.model, fk.data, configuration, fk.tip, pin.ReferenceFrame.LOCAL)[
        :3
    ]
    voxel = int(np.flatnonzero(reach_map.reached[:, 0])[0])
    assert reach_map.manipulability[voxel] == pytest.approx(math.sqrt(np.linalg.det(jacobian @ jacobian.T)))


def test_timeout_mode_is_marked_machine_dependent(robot):
    reach_map = reachability_map(
        robot, "base_link", "tool0", MapOptions(0.3, orientations=4, attempts=None, timeout=0.002)
    )
    assert reach_map.metadata["deterministic"] is False and reach_map.metadata["attempts"] == "none"


# ------------------------------------------------------------------ a Dask cluster on loopback


def test_local_cluster_gives_the_same_file_with_a_worker_killed_mid_run(
    api_map, robot, tmp_path, monkeypatch
):
    distributed = pytest.importorskip("distributed", reason="the reach extra's dask[distributed]")
    written = []
    original_write = ChunkStore.write

    def counting_write(self, index, result):
        new = original_write(self, index, result)
        written.append((index, new))
        return new

    monkeypatch.setattr(ChunkStore, "write", counting_write)
    out = tmp_path / "cluster.h5"
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:  # fmt: skip
        pids = client.run(os.getpid)
        killed = []

        def kill_one_worker(done, total):
            if done and not killed:
                victim = sorted(pids.values())[0]
                os.kill(victim, signal.SIGKILL)
                killed.append(victim)

        reach_map = reachability_map(
            robot, "base_link", "tool0", SMALL, out=out, scheduler=cluster.scheduler_address,
            chunk_poses=150, progress=kill_one_worker,
        )  # fmt: skip
    assert killed
    assert sha256(out) == sha256(api_map[0])
    indices = [index for index, new in written]  # (a chunk offered twice would appear twice)
    assert sorted(indices) == list(range(reach_map.run["chunks"])), "a chunk lost or written twice"
    assert all(new for _, new in written)
    assert reach_map.run["chunks"] > 20


def test_unreachable_scheduler_is_refused_within_seconds(tmp_path):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    began = time.monotonic()
    code, _, err = run_cli(
        *SMALL_ARGS, "--output", tmp_path / "m.h5", "--scheduler", f"tcp://127.0.0.1:{port}"
    )
    assert code == 2 and "cannot reach the Dask scheduler" in err
    assert time.monotonic() - began < 15
    assert not (tmp_path / "m.h5").exists()


# ------------------------------------------------------------------ resume


class InterruptError(Exception):
    pass


def test_interrupted_run_resumes_from_its_chunks(api_map, robot, tmp_path):
    out = tmp_path / "resumed.h5"
    calls = []

    def stop_after_three_chunks(done, total):
        calls.append(done)
        if len(calls) == 4:  # (the first call reports what was done before: nothing)
            raise InterruptError

    with pytest.raises(InterruptError):
        reachability_map(robot, "base_link", "tool0", SMALL, out=out, chunk_poses=500,
                         progress=stop_after_three_chunks)  # fmt: skip
    parts = tmp_path / "resumed.h5.parts"
    assert not out.exists() and len(list(parts.glob("chunk-*.npz"))) == 3
    # the same command without --resume is refused, and so is --resume of another job
    code, _, err = run_cli(*SMALL_ARGS, "--output", out, "--chunk-poses", 500)
    assert code == 2 and "--resume" in err
    code, _, err = run_cli(*SMALL_ARGS, "--output", out, "--chunk-poses", 500, "--resume", "--random-seed", 3)
    assert code == 2 and "another job" in err and "random_seed" in err
    with pytest.raises(IKNodeError, match="another job"):
        reachability_map(
            robot,
            "base_link",
            "tool0",
            dataclasses.replace(SMALL, rolls=2),
            out=out,
            chunk_poses=500,
            resume=True,
        )
    reach_map = reachability_map(robot, "base_link", "tool0", SMALL, out=out, chunk_poses=500, resume=True)
    assert reach_map.run["chunks_resumed"] == 3 and reach_map.run["chunks"] == 11
    assert sha256(out) == sha256(api_map[0]) and not parts.exists()


def test_command_resumes_after_ctrl_c(tmp_path):
    out = tmp_path / "m.h5"
    arguments = [sys.executable, "-m", "ik_node.reach", *SMALL_ARGS, "--output", out, "--chunk-poses", "100"]
    process = subprocess.Popen(
        arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    parts = tmp_path / "m.h5.parts"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(parts.glob("chunk-*.npz"))) < 5:
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    if process.returncode == 0:
        pytest.skip("the map finished before the interruption arrived")
    assert process.returncode == 130 and "--resume" in stderr
    kept = len(list(parts.glob("chunk-*.npz")))
    assert kept >= 5 and not out.exists()
    completed = subprocess.run(
        [*arguments, "--resume"], capture_output=True, text=True, timeout=240, cwd=tmp_path
    )
    assert completed.returncode == 0, completed.stderr
    assert f"{kept} of 51 chunks resumed" in completed.stdout


# ------------------------------------------------------------------ sampling


def test_orientation_samples_follow_the_documented_sampling():
    rotations = orientation_samples(12, 3)
    assert rotations.shape == (36, 3, 3)
    identity = np.broadcast_to(np.eye(3), (36, 3, 3))
    np.testing.assert_allclose(rotations @ rotations.transpose(0, 2, 1), identity, atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(rotations), 1.0)
    directions = approach_directions(12)
    np.testing.assert_allclose(rotations[:, :, 2], np.repeat(directions, 3, axis=0), atol=1e-12)
    # rolls: turns of 2 pi / 3 about the approach axis
    relative = rotations[0].T @ rotations[1]
    assert rotation_angle(relative) == pytest.approx(2 * math.pi / 3)
    np.testing.assert_allclose(relative[:, 2], [0, 0, 1], atol=1e-12)
    # the Fibonacci sphere spreads directions evenly: mean direction ~ 0, z evenly spaced
    assert np.linalg.norm(approach_directions(500).mean(axis=0)) < 0.01
    np.testing.assert_allclose(np.diff(directions[:, 2]), -2 / 12)
    # a direction straight down (antipodal to the base's z) is a half turn
    np.testing.assert_allclose(orientation_samples(1)[0][:, 2], approach_directions(1)[0])


def test_quaternions_match_ik_node_lie_including_half_turns():
    rng = np.random.default_rng(5)
    rotations = [lie.quaternion_to_matrix(*q / np.linalg.norm(q)) for q in rng.normal(size=(200, 4))]
    rotations += [
        np.diag([1.0, -1.0, -1.0]),
        np.diag([-1.0, 1.0, -1.0]),
        np.diag([-1.0, -1.0, 1.0]),
        np.eye(3),
    ]
    expected = np.array([lie.matrix_to_quaternion(R) for R in rotations])
    np.testing.assert_allclose(quaternions_xyzw(np.array(rotations)), expected, atol=1e-12)


def test_voxel_grid_is_at_multiples_of_the_resolution_within_the_radius():
    centre, radius, resolution = np.array([0.01, -0.02, 0.333]), 0.5, 0.05
    voxels = voxel_grid(resolution, centre, radius)
    assert len(voxels) == voxel_count(resolution, centre, radius)
    assert np.all(np.linalg.norm(voxels - centre, axis=1) <= radius)
    np.testing.assert_allclose(voxels / resolution, np.rint(voxels / resolution), atol=1e-9)
    assert np.any(np.all(np.isclose(voxels, [0.0, 0.0, 0.3]), axis=1))


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--resolution", "0"], "--resolution must be a positive number"),
        (["--resolution", "nan"], "--resolution must be a positive number"),
        (["--orientations", "0"], "--orientations must be at least 1"),
        (["--orientations", "10", "--rolls", "3"], "must be a multiple of rolls"),
        (["--tip", "no_such_link"], "no_such_link"),
        (["--overwrite", "--resume"], "exclude each other"),
    ],
)
def test_bad_input_exits_2_naming_the_problem(tmp_path, arguments, message):
    code, _, err = run_cli(*SMALL_ARGS, "--output", tmp_path / "m.h5", *arguments)
    assert code == 2 and message in err, err
    assert not list(tmp_path.iterdir())


def test_too_many_poses_need_force_and_say_how_long(tmp_path):
    began = time.monotonic()
    code, _, err = run_cli(*SMALL_ARGS, "--output", tmp_path / "m.h5", "--resolution", "0.01")
    assert code == 2 and "--force" in err and "poses" in err and "about" in err and "voxels" in err
    assert time.monotonic() - began < 5  # refused before any solver is built
    assert not list(tmp_path.iterdir())


def test_unwritable_output_and_existing_file_are_refused(tmp_path):
    code, _, err = run_cli(*SMALL_ARGS, "--output", tmp_path / "missing" / "m.h5")
    assert code == 2 and "does not exist" in err
    code, _, err = run_cli(*SMALL_ARGS, "--output", "/proc/ik_node_reach_test.h5")
    assert code == 2 and "cannot write" in err
    code, _, err = run_cli(*SMALL_ARGS, "--output", tmp_path)
    assert code == 2 and "is a directory" in err
    existing = tmp_path / "m.h5"
    existing.write_bytes(b"not a map")
    code, _, err = run_cli(*SMALL_ARGS, "--output", existing)
    assert code == 2 and "exists" in err and "--overwrite" in err
    assert existing.read_bytes() == b"not a map"


def test_ik_node_reach_subcommand_when_registered(tmp_path):
    from ik_node import cli

    if "reach" not in cli.SUBCOMMANDS:
        pytest.skip("ik_node.cli does not register the reach subcommand yet")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["reach", *SMALL_ARGS, "--output", str(tmp_path / "m.h5"), "--resolution", "0.3"])
    assert code == 0, err.getvalue()
    assert (tmp_path / "m.h5").is_file()
