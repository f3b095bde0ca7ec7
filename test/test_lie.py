"""Properties of the SO(3)/SE(3) helpers (mink-style): hat is the cross product, the SO(3) log
(the solver kernels', the one ik_node has) inverts the exponential over the whole range (angles
near 0 and near pi included), the adjoint moves a twist between frames (``T exp(xi) = exp(Ad(T)
xi) T``), poses invert; the quaternion and roll-pitch-yaw conversions (ROS order ``(x, y, z, w)``)
agree with transforms3d and pinocchio on seeded random rotations, round-trip, and stay accurate
at half turns (w = 0) and at gimbal lock (pitch = +-pi/2)."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
from transforms3d.axangles import axangle2mat
from transforms3d.euler import euler2mat, mat2euler
from transforms3d.quaternions import mat2quat, quat2mat

from ik_node.compiled import elementary, rotations
from ik_node.lie import (
    GIMBAL_LOCK_COSINE,
    adjoint,
    hat,
    inverse,
    matrix_to_quaternion,
    matrix_to_rpy,
    pose_from_xyz_rpy,
    quaternion_to_matrix,
    rpy_to_matrix,
)

RNG_SEED = 20261123


def expm(matrix: np.ndarray) -> np.ndarray:
    """Matrix exponential by scaling and squaring a Taylor series (independent of the code
    under test; exact to ~1e-14 for the small matrices here)."""
    squarings = max(0, int(np.ceil(np.log2(max(np.abs(matrix).max(), 1e-300)))) + 1)
    scaled = matrix / 2.0**squarings
    term, total = np.eye(len(matrix)), np.eye(len(matrix))
    for k in range(1, 25):
        term = term @ scaled / k
        total = total + term
    for _ in range(squarings):
        total = total @ total
    return total


def twist_matrix(twist: np.ndarray) -> np.ndarray:
    """The 4x4 se(3) matrix of a twist ``[v; w]``."""
    out = np.zeros((4, 4))
    out[:3, :3] = hat(twist[3:])
    out[:3, 3] = twist[:3]
    return out


def so3_log(rotation: np.ndarray) -> np.ndarray:
    """The kernels' SO(3) log of one rotation."""
    out = np.empty(3)
    rotations.so3_log(np.ascontiguousarray(rotation, dtype=float), out)
    return out


def random_pose(rng) -> np.ndarray:
    return pose_from_xyz_rpy(rng.uniform(-2, 2, 3), rng.uniform(-np.pi, np.pi, 3))


def random_unit(rng) -> np.ndarray:
    vector = rng.normal(size=3)
    return vector / np.linalg.norm(vector)


def test_hat_is_the_cross_product_and_skew():
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(100):
        a, b = rng.normal(size=3), rng.normal(size=3)
        np.testing.assert_allclose(hat(a) @ b, np.cross(a, b), atol=1e-12)
        np.testing.assert_array_equal(hat(a), -hat(a).T)
    stacked = rng.normal(size=(5, 3))
    np.testing.assert_allclose(hat(stacked), np.array([hat(row) for row in stacked]))


@pytest.mark.parametrize(
    "angles",
    [
        np.linspace(1e-9, 1e-3, 50),
        np.linspace(0.1, np.pi - 0.1, 50),
        np.pi - np.logspace(-12, -1, 50),
        np.full(10, np.pi),
    ],
    ids=["near_zero", "middle", "near_pi", "pi"],
)
def test_so3_log_inverts_the_exponential(angles):
    """log(exp(theta u)) = theta u for theta in (0, pi); at pi either sign of the axis is the
    same rotation."""
    rng = np.random.default_rng(RNG_SEED)
    axes = np.array([random_unit(rng) for _ in angles])
    rotations = np.array([axangle2mat(axis, angle) for axis, angle in zip(axes, angles)])
    for axis, angle, rotation in zip(axes, angles, rotations):
        log = so3_log(rotation)
        if angle < np.pi:
            np.testing.assert_allclose(log, angle * axis, atol=1e-9)
        else:
            assert np.linalg.norm(log) == pytest.approx(np.pi, abs=1e-9)
            assert abs(abs(log @ axis) - np.pi) < 1e-9
        np.testing.assert_allclose(expm(hat(log)), rotation, atol=1e-9)


def test_sin_cos_is_within_one_ulp_of_the_c_librarys():
    """The kernels' ``sin_cos`` against ``math.sin``/``math.cos`` (the C library) on seeded random
    angles of every scale it reduces (|θ| up to 1e5 rad), near each multiple of π/2 (where the
    reduction cancels: the error is absolute there), at the C library's side of its range and on
    NaN and infinities."""
    rng = np.random.default_rng(RNG_SEED)
    angles = np.concatenate(
        [rng.uniform(-scale, scale, 20000) for scale in (1.0, 4.0, 100.0, 1e4, 9.9e4)]
        + [k * np.pi / 2 + rng.uniform(-1e-9, 1e-9, 50) for k in range(-16, 17)]
        + [np.array([0.0, -0.0, np.pi, -np.pi, 2e5, -3e7])]
    )
    for angle in angles:
        sine, cosine = elementary.sin_cos(angle)
        expected_sine, expected_cosine = math.sin(angle), math.cos(angle)
        assert abs(sine - expected_sine) <= max(np.spacing(abs(expected_sine)), 1e-24), angle
        assert abs(cosine - expected_cosine) <= max(np.spacing(abs(expected_cosine)), 1e-24), angle
    for value in (np.nan, np.inf, -np.inf):
        assert all(math.isnan(part) for part in elementary.sin_cos(value))


SIGN_PAIRS = ((1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0))


def test_atan2_is_within_one_ulp_of_the_c_librarys():
    """The kernels' ``atan2`` against ``math.atan2`` (the C library) on seeded random points of
    every scale and quadrant (both orders of ``|y|`` and ``|x|``), on the unit circle, at each
    interval's edge of its reduction (``|y / x|`` at 7/16, 11/16, 1 and their inverses) and on
    zeros (signed), infinities and NaN, where it must agree exactly (or both be NaN)."""
    rng = np.random.default_rng(RNG_SEED)
    circle = rng.uniform(-np.pi, np.pi, 20000)
    edges = np.array([7 / 16, 11 / 16, 1.0, 16 / 11, 16 / 7])
    edges = np.concatenate([edges * (1.0 + step) for step in (-1e-15, 0.0, 1e-15)])
    points = np.concatenate(
        [rng.normal(size=(20000, 2)) * (scale, 1.0) for scale in (1e-12, 1e-3, 1.0, 1e3, 1e12)]
        + [np.column_stack([np.sin(circle), np.cos(circle)])]
        + [np.column_stack([sign_y * edges, np.full_like(edges, sign_x)]) for sign_y, sign_x in SIGN_PAIRS]
    )
    for y, x in points:
        expected = math.atan2(y, x)
        assert abs(elementary.atan2(y, x) - expected) <= np.spacing(abs(expected)), (y, x)
    special = (0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan)
    for y, x in itertools.product(special, special):
        angle, expected = elementary.atan2(y, x), math.atan2(y, x)
        assert (math.isnan(angle) and math.isnan(expected)) or (
            angle == expected and math.copysign(1.0, angle) == math.copysign(1.0, expected)
        ), (y, x)


def test_so3_log_of_the_identity_is_zero():
    np.testing.assert_array_equal(so3_log(np.eye(3)), np.zeros(3))


def test_adjoint_moves_a_twist_between_frames():
    """T exp(xi^) = exp((Ad(T) xi)^) T (Lynch & Park eq. 3.83), for random poses and twists."""
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(100):
        pose, twist = random_pose(rng), rng.normal(size=6)
        left = pose @ expm(twist_matrix(twist))
        right = expm(twist_matrix(adjoint(pose) @ twist)) @ pose
        np.testing.assert_allclose(left, right, atol=1e-10)


def test_adjoint_is_a_homomorphism_and_inverse_inverts():
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(50):
        a, b = random_pose(rng), random_pose(rng)
        np.testing.assert_allclose(adjoint(a @ b), adjoint(a) @ adjoint(b), atol=1e-12)
        np.testing.assert_allclose(adjoint(inverse(a)), np.linalg.inv(adjoint(a)), atol=1e-10)
        np.testing.assert_allclose(inverse(a) @ a, np.eye(4), atol=1e-12)


# ---------------------------------------------------------------- quaternions and roll-pitch-yaw


def random_quaternions(rng, count: int) -> np.ndarray:
    """Uniformly distributed unit quaternions (x, y, z, w), both signs of w."""
    quaternions = rng.normal(size=(count, 4))
    return quaternions / np.linalg.norm(quaternions, axis=1, keepdims=True)


def half_turn_quaternions(rng) -> np.ndarray:
    """w = 0 exactly and within 1e-16..1e-4 of it (either sign), about random and coordinate axes."""
    axes = [random_unit(rng) for _ in range(40)] + list(np.eye(3)) + list(-np.eye(3))
    axes += [np.array([1.0, 1.0, 0.0]) / math.sqrt(2), np.array([0.0, 1.0, -1.0]) / math.sqrt(2)]
    rows = []
    for index, axis in enumerate(axes):
        w = 0.0 if index % 3 == 0 else (-1) ** index * 10.0 ** rng.uniform(-16, -4)
        rows.append([*(axis * math.sqrt(1 - w * w)), w])
    return np.array(rows)


def same_rotation(q1, q2) -> bool:
    return min(np.abs(np.subtract(q1, q2)).max(), np.abs(np.add(q1, q2)).max()) < 1e-12


def test_conversion_golden_values():
    """The docstrings' examples: a quarter turn about z."""
    quarter_turn_z = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(
        quaternion_to_matrix(0, 0, math.sin(math.pi / 4), math.cos(math.pi / 4)), quarter_turn_z, atol=1e-15
    )
    np.testing.assert_allclose(rpy_to_matrix(0, 0, math.pi / 2), quarter_turn_z, atol=1e-15)
    np.testing.assert_allclose(matrix_to_quaternion(quarter_turn_z), [0, 0, math.sqrt(0.5), math.sqrt(0.5)])
    np.testing.assert_allclose(matrix_to_rpy(quarter_turn_z), [0, 0, math.pi / 2])
    assert matrix_to_quaternion(np.eye(3)) == (0.0, 0.0, 0.0, 1.0)
    assert matrix_to_rpy(np.eye(3)) == (0.0, 0.0, 0.0)


def test_quaternion_to_matrix_agrees_with_transforms3d_and_pinocchio():
    pinocchio = pytest.importorskip("pinocchio")
    rng = np.random.default_rng(RNG_SEED)
    for x, y, z, w in np.vstack([random_quaternions(rng, 500), half_turn_quaternions(rng)]):
        rotation = quaternion_to_matrix(x, y, z, w)
        np.testing.assert_allclose(rotation, quat2mat([w, x, y, z]), atol=1e-14)
        reference = pinocchio.Quaternion(np.array([x, y, z, w])).toRotationMatrix()  # coeffs x y z w
        np.testing.assert_allclose(rotation, reference, atol=1e-14)
        np.testing.assert_allclose(rotation @ rotation.T, np.eye(3), atol=1e-14)
        assert np.linalg.det(rotation) == pytest.approx(1.0, abs=1e-14)


def test_matrix_to_quaternion_round_trips_and_agrees_with_transforms3d():
    """Every rotation back to its quaternion (up to sign; ours has w >= 0), half turns included."""
    rng = np.random.default_rng(RNG_SEED + 1)
    for quaternion in np.vstack([random_quaternions(rng, 500), half_turn_quaternions(rng)]):
        rotation = quaternion_to_matrix(*quaternion)
        found = matrix_to_quaternion(rotation)
        assert found[3] >= 0.0
        assert same_rotation(found, quaternion), (quaternion, found)
        w, x, y, z = mat2quat(rotation)
        assert same_rotation(found, [x, y, z, w])
        np.testing.assert_allclose(quaternion_to_matrix(*found), rotation, atol=1e-14)


def test_quaternion_length_is_normalised_and_a_zero_quaternion_refused():
    rng = np.random.default_rng(RNG_SEED + 2)
    for quaternion in random_quaternions(rng, 50):
        scale = 10.0 ** rng.uniform(-5, 200)
        np.testing.assert_allclose(
            quaternion_to_matrix(*(scale * quaternion)), quaternion_to_matrix(*quaternion), atol=1e-13
        )
    for bad in ([0.0, 0.0, 0.0, 0.0], [math.nan, 0.0, 0.0, 1.0], [1e-300, 0.0, 0.0, 0.0]):
        with pytest.raises(ValueError, match=r"no direction; identity is \(0 0 0 1\)"):
            quaternion_to_matrix(*bad)


def test_matrix_to_quaternion_of_a_rotation_off_by_round_off_is_unit():
    rng = np.random.default_rng(RNG_SEED + 3)
    for quaternion in random_quaternions(rng, 100):
        rotation = quaternion_to_matrix(*quaternion) + rng.normal(scale=1e-9, size=(3, 3))
        found = matrix_to_quaternion(rotation)
        assert np.linalg.norm(found) == pytest.approx(1.0, abs=1e-15)
        assert min(np.abs(found - quaternion).max(), np.abs(found + quaternion).max()) < 1e-8


def test_rpy_to_matrix_is_urdf_fixed_axis_xyz():
    """R = Rz(yaw) Ry(pitch) Rx(roll): transforms3d's static-axes 'sxyz', pinocchio's rpyToMatrix,
    and the product of the three elementary rotations."""
    pinocchio = pytest.importorskip("pinocchio")
    rng = np.random.default_rng(RNG_SEED + 4)
    for roll, pitch, yaw in rng.uniform(-2 * np.pi, 2 * np.pi, size=(300, 3)):
        rotation = rpy_to_matrix(roll, pitch, yaw)
        np.testing.assert_allclose(rotation, euler2mat(roll, pitch, yaw, axes="sxyz"), atol=1e-14)
        np.testing.assert_allclose(rotation, pinocchio.rpy.rpyToMatrix(roll, pitch, yaw), atol=1e-14)
        elementary = (
            axangle2mat([0, 0, 1], yaw) @ axangle2mat([0, 1, 0], pitch) @ axangle2mat([1, 0, 0], roll)
        )
        np.testing.assert_allclose(rotation, elementary, atol=1e-14)


def test_matrix_to_rpy_inverts_rpy_to_matrix_and_agrees_with_transforms3d():
    """Angles in the principal ranges come back unchanged; any rotation rebuilds from its angles."""
    rng = np.random.default_rng(RNG_SEED + 5)
    for _ in range(500):
        roll, yaw = rng.uniform(-np.pi, np.pi, 2)
        pitch = rng.uniform(-np.pi / 2 + 1e-6, np.pi / 2 - 1e-6)
        found = matrix_to_rpy(rpy_to_matrix(roll, pitch, yaw))
        np.testing.assert_allclose(found, [roll, pitch, yaw], atol=1e-9)
        np.testing.assert_allclose(found, mat2euler(rpy_to_matrix(roll, pitch, yaw), axes="sxyz"), atol=1e-9)
    for quaternion in random_quaternions(rng, 300):
        rotation = quaternion_to_matrix(*quaternion)
        roll, pitch, yaw = matrix_to_rpy(rotation)
        assert -np.pi <= roll <= np.pi and -np.pi / 2 <= pitch <= np.pi / 2 and -np.pi <= yaw <= np.pi
        np.testing.assert_allclose(rpy_to_matrix(roll, pitch, yaw), rotation, atol=1e-14)


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["pitch_up", "pitch_down"])
def test_matrix_to_rpy_near_and_at_gimbal_lock_rebuilds_the_rotation(sign):
    """Pitch +-pi/2 and within 1e-16..1e-1 rad of it: the angles rebuild the matrix to round-off
    (only roll -+ yaw is defined there); at the lock itself yaw is 0."""
    rng = np.random.default_rng(RNG_SEED + 6)
    for gap in [0.0, *np.logspace(-16, -1, 61)]:
        roll, yaw = rng.uniform(-np.pi, np.pi, 2)
        pitch = sign * (np.pi / 2 - gap)
        rotation = rpy_to_matrix(roll, pitch, yaw)
        found = matrix_to_rpy(rotation)
        np.testing.assert_allclose(rpy_to_matrix(*found), rotation, atol=4e-15)
        assert found[1] == pytest.approx(pitch, abs=1e-7)
        if math.cos(pitch) < GIMBAL_LOCK_COSINE:
            assert found[2] == 0.0
            expected_roll = roll - yaw if sign > 0 else roll + yaw  # the turn about the vertical
            assert math.remainder(found[0] - expected_roll, 2 * np.pi) == pytest.approx(0.0, abs=1e-9)


def test_the_package_runs_without_transforms3d():
    """Ubuntu 22.04's python3-transforms3d crashes at import under numpy >= 1.24: ik_node must not
    need it (tests keep it as an independent reference)."""
    code = (
        "import sys; sys.modules['transforms3d'] = None\n"
        "import ik_node, ik_node.cli, ik_node.decisions.conversions, ik_node.ros.demo, ik_node.lie\n"
        "import ik_node.description.model\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
