"""The compiled Paden–Kahan subproblems (ik_node.compiled.subproblems) on random instances: an
angle is drawn, the data made from it, and the angle must be among the answers; instances with no
exact answer come back flagged least squares with the minimiser of the problem's residual."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ik_node.compiled import subproblems
from ik_node.compiled.subproblems import EXACT, FREE, LEAST_SQUARES, sp1, sp2, sp3, sp4

INSTANCES = 300
ANGLE_TOLERANCE = 1e-8  # [rad]


def rotation(k, theta) -> np.ndarray:
    """R(k, θ) by the matrix exponential's closed form (independent of the kernels' Rodrigues)."""
    k = np.asarray(k, float)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(theta) * K + (1 - math.cos(theta)) * K @ K


def unit(rng) -> np.ndarray:
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def angle_gap(a: float, b: float) -> float:
    return abs((a - b + math.pi) % (2 * math.pi) - math.pi)


def vec(v) -> tuple:
    return tuple(float(x) for x in v)


@pytest.fixture
def rng():
    return np.random.default_rng(30)


def test_sp1_recovers_the_angle_and_flags_mismatched_lengths(rng):
    for _ in range(INSTANCES):
        k, p1, theta = unit(rng), rng.normal(size=3), rng.uniform(-math.pi, math.pi)
        p2 = rotation(k, theta) @ p1
        found, status = sp1(vec(p1), vec(p2), vec(k))
        assert status == EXACT and angle_gap(found, theta) < ANGLE_TOLERANCE
        stretched = 1.5 * p2
        found, status = sp1(vec(p1), vec(stretched), vec(k))
        assert status == LEAST_SQUARES
        grid = np.linspace(-math.pi, math.pi, 721)
        residuals = [np.linalg.norm(rotation(k, t) @ p1 - stretched) for t in grid]
        assert np.linalg.norm(rotation(k, found) @ p1 - stretched) <= min(residuals) + 1e-12
    assert sp1((0.0, 0.0, 2.0), (0.0, 0.0, 2.0), (0.0, 0.0, 1.0)) == (0.0, FREE)


def test_sp4_both_roots_and_the_least_squares_one(rng):
    for _ in range(INSTANCES):
        h, k, p, theta = unit(rng), unit(rng), rng.normal(size=3), rng.uniform(-math.pi, math.pi)
        d = h @ rotation(k, theta) @ p
        count, plus, minus, status = sp4(vec(h), vec(p), vec(k), d)
        assert status == EXACT and count == 2
        assert min(angle_gap(plus, theta), angle_gap(minus, theta)) < 1e-7
        for root in (plus, minus):
            assert abs(h @ rotation(k, root) @ p - d) < 1e-12 * max(1.0, np.linalg.norm(p))
        far = 10.0 * np.linalg.norm(p) + 1.0
        count, plus, _, status = sp4(vec(h), vec(p), vec(k), far)
        assert (count, status) == (1, LEAST_SQUARES)
        values = [h @ rotation(k, t) @ p for t in np.linspace(-math.pi, math.pi, 721)]
        assert h @ rotation(k, plus) @ p >= max(values) - 1e-9
    assert sp4((0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0), 0.0)[3] == FREE


def test_sp3_distance_from_a_point(rng):
    for _ in range(INSTANCES):
        k, p1, p2, theta = unit(rng), rng.normal(size=3), rng.normal(size=3), rng.uniform(-math.pi, math.pi)
        d = np.linalg.norm(rotation(k, theta) @ p1 - p2)
        count, plus, minus, status = sp3(vec(p1), vec(p2), vec(k), d)
        assert status == EXACT and count == 2
        assert min(angle_gap(plus, theta), angle_gap(minus, theta)) < 1e-6
        for root in (plus, minus):
            assert abs(np.linalg.norm(rotation(k, root) @ p1 - p2) - d) < 1e-9
        count, plus, _, status = sp3(vec(p1), vec(p2), vec(k), 100.0)
        assert (count, status) == (1, LEAST_SQUARES)
        distances = [np.linalg.norm(rotation(k, t) @ p1 - p2) for t in np.linspace(-math.pi, math.pi, 721)]
        assert np.linalg.norm(rotation(k, plus) @ p1 - p2) >= max(distances) - 1e-9


def test_sp2_pairs_and_least_squares(rng):
    for _ in range(INSTANCES):
        k1, k2, p1 = unit(rng), unit(rng), rng.normal(size=3)
        theta1, theta2 = rng.uniform(-math.pi, math.pi, size=2)
        p2 = rotation(k2, theta2).T @ rotation(k1, theta1) @ p1
        count, t1p, t2p, t1m, t2m, status = sp2(vec(p1), vec(p2), vec(k1), vec(k2))
        assert status == EXACT and count == 2
        for a, b in ((t1p, t2p), (t1m, t2m)):
            assert np.linalg.norm(rotation(k1, a) @ p1 - rotation(k2, b) @ p2) < 1e-9
        assert (
            min(
                max(angle_gap(t1p, theta1), angle_gap(t2p, theta2)),
                max(angle_gap(t1m, theta1), angle_gap(t2m, theta2)),
            )
            < 1e-6
        )
        count, *_, status = sp2(vec(p1), vec(1.3 * p2), vec(k1), vec(k2))
        assert status & LEAST_SQUARES
    # heights along the axes no rotation can match: one least-squares pair
    count, *_, status = sp2((0.0, 0.6, 0.8), (0.8, 0.6, 0.0), (0.0, 0.0, 1.0), (1.0, 0.0, 0.0))
    assert (count, status) == (1, LEAST_SQUARES)
    assert sp2((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (0.0, 0.0, 1.0))[0] == 0


def test_the_vector_helpers_match_numpy(rng):
    k, p, theta = unit(rng), rng.normal(size=3), 0.7
    assert np.allclose(subproblems.rotate(vec(k), theta, vec(p)), rotation(k, theta) @ p, atol=1e-14)
    assert np.allclose(subproblems.cross(vec(k), vec(p)), np.cross(k, p))
