"""Properties of the SO(3)/SE(3) helpers (mink-style): hat is the cross product, the SO(3) log
(the solver kernels', the one ik_node has) inverts the exponential over the whole range (angles
near 0 and near pi included), the adjoint moves a twist between frames (``T exp(xi) = exp(Ad(T)
xi) T``), poses invert."""

from __future__ import annotations

import numpy as np
import pytest
from transforms3d.axangles import axangle2mat

from ik_node.lie import adjoint, hat, inverse, pose_from_xyz_rpy
from ik_node.solver import kernels

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
    kernels.so3_log(np.ascontiguousarray(rotation, dtype=float), out)
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
