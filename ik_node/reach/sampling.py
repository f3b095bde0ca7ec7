"""What a reachability map samples: voxel centres on a grid around the base, and orientations
per voxel (approach directions spread on a sphere × rolls about them). Plain numpy, no solver.

Conventions (written into every map's metadata, :data:`SAMPLING`):

* **Voxels**: centres at integer multiples of the resolution along the base's x, y and z axes
  (the base origin is a voxel centre, so ``x = 0`` or ``y = 0`` is a slice through the base),
  kept where the centre lies within ``radius`` of ``centre`` (the tip's reach sphere:
  :meth:`ik_node.kinematics.KinematicTree.reach`), in lexicographic order of (x, y, z), z fastest.
* **Approach directions**: ``D`` unit vectors on a Fibonacci sphere (Swinbank & Purser 2006;
  González 2010, "Measurement of areas on a sphere using Fibonacci and latitude-longitude
  lattices"): ``z_i = 1 - (2 i + 1) / D``, azimuth ``i * pi (3 - sqrt 5)`` (the golden angle),
  ``i = 0 .. D-1``: every direction stands for about the same solid angle.
* **Orientations**: the tip's z axis along approach direction ``a_i``, turned by roll
  ``psi_j = 2 pi j / R`` (``j = 0 .. R-1``) about that axis: ``R_ij = Rot(e_z -> a_i) Rot_z(psi_j)``,
  where ``Rot(e_z -> a)`` is the shortest rotation taking the base's z axis onto ``a`` (a half
  turn about x for ``a = -e_z``). Orientation index ``i * R + j``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "SAMPLING",
    "approach_directions",
    "orientation_samples",
    "quaternions_xyzw",
    "voxel_count",
    "voxel_grid",
]

#: The sampling in one sentence, stored with every map.
SAMPLING = (
    "voxel centres at integer multiples of the resolution in the base frame, within the radius of "
    "the centre; per voxel D approach directions on a Fibonacci sphere (z_i = 1 - (2i+1)/D, azimuth "
    "i * golden angle) x R rolls 2 pi j / R: the tip's z axis along the direction, R_ij = "
    "Rot(e_z -> a_i) Rot_z(2 pi j / R); orientation index i * R + j"
)

#: Below this, ``a`` counts as antipodal to the base's z axis (``Rot(e_z -> a)`` is then a half
#: turn about x): 1 + a_z underflows the Rodrigues formula's denominator well before 1e-12.
ANTIPODAL_MARGIN = 1e-12


def voxel_grid(resolution: float, centre, radius: float) -> np.ndarray:
    """Voxel centres (V, 3) [m] at integer multiples of ``resolution`` [m] within ``radius`` [m]
    of ``centre`` (3,) [m], ordered by (x, y, z), z fastest."""
    centre = np.asarray(centre, dtype=float)
    low = np.floor((centre - radius) / resolution).astype(np.int64)
    high = np.ceil((centre + radius) / resolution).astype(np.int64)
    axes = [np.arange(low[axis], high[axis] + 1) * resolution for axis in range(3)]
    points = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    inside = np.einsum("ij,ij->i", points - centre, points - centre) <= radius * radius
    return np.ascontiguousarray(points[inside])


def voxel_count(resolution: float, centre, radius: float) -> int:
    """How many voxels :func:`voxel_grid` holds, without making them (one x-y plane at a time)."""
    centre = np.asarray(centre, dtype=float)
    low = np.floor((centre - radius) / resolution).astype(np.int64)
    high = np.ceil((centre + radius) / resolution).astype(np.int64)
    x = np.arange(low[0], high[0] + 1) * resolution - centre[0]
    y = np.arange(low[1], high[1] + 1) * resolution - centre[1]
    planar = (x[:, None] ** 2 + y[None, :] ** 2).ravel()
    count = 0
    for z in np.arange(low[2], high[2] + 1) * resolution - centre[2]:
        count += int(np.count_nonzero(planar + z * z <= radius * radius))
    return count


def approach_directions(count: int) -> np.ndarray:
    """``count`` unit vectors (D, 3) on a Fibonacci sphere (see the module's docstring)."""
    index = np.arange(count, dtype=float)
    z = 1.0 - (2.0 * index + 1.0) / count
    ring = np.sqrt(np.maximum(0.0, 1.0 - z * z))
    azimuth = index * math.pi * (3.0 - math.sqrt(5.0))
    return np.stack([ring * np.cos(azimuth), ring * np.sin(azimuth), z], axis=1)


def _aligning_rotation(direction: np.ndarray) -> np.ndarray:
    """The shortest rotation taking ``e_z`` onto the unit vector ``direction``: Rodrigues'
    formula ``I + hat(v) + hat(v)^2 / (1 + c)`` with ``v = e_z x a``, ``c = a_z``."""
    x, y, z = direction
    if 1.0 + z < ANTIPODAL_MARGIN:
        return np.diag([1.0, -1.0, -1.0])
    v = np.array([-y, x, 0.0])  # e_z x a
    skew = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    return np.eye(3) + skew + skew @ skew / (1.0 + z)


def orientation_samples(directions: int, rolls: int = 1) -> np.ndarray:
    """Rotations (directions * rolls, 3, 3) of the sampled tip orientations, index ``i * rolls +
    j``: the tip's z axis along approach direction ``i``, turned by roll ``2 pi j / rolls``."""
    rotations = np.empty((directions * rolls, 3, 3))
    for i, direction in enumerate(approach_directions(directions)):
        align = _aligning_rotation(direction)
        for j in range(rolls):
            angle = 2.0 * math.pi * j / rolls
            cosine, sine = math.cos(angle), math.sin(angle)
            roll = np.array([[cosine, -sine, 0.0], [sine, cosine, 0.0], [0.0, 0.0, 1.0]])
            rotations[i * rolls + j] = align @ roll
    return rotations


def quaternions_xyzw(rotations: np.ndarray) -> np.ndarray:
    """Unit quaternions (K, 4) in ROS order ``x y z w``, ``w >= 0``, of rotations (K, 3, 3):
    Shepperd's method, as :func:`ik_node.lie.matrix_to_quaternion`, over a stack at once."""
    R = np.asarray(rotations, dtype=float).reshape(-1, 3, 3)
    trace = R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2]
    largest = np.argmax(np.stack([trace, R[:, 0, 0], R[:, 1, 1], R[:, 2, 2]], axis=1), axis=1)
    out = np.empty((len(R), 4))  # x y z w
    # the component that is largest, from the diagonal; the others from off-diagonal sums
    diagonal = {
        0: 1.0 + trace,
        1: 1.0 + 2 * R[:, 0, 0] - trace,
        2: 1.0 + 2 * R[:, 1, 1] - trace,
        3: 1.0 + 2 * R[:, 2, 2] - trace,
    }
    wx, wy, wz = R[:, 2, 1] - R[:, 1, 2], R[:, 0, 2] - R[:, 2, 0], R[:, 1, 0] - R[:, 0, 1]
    xy, xz, yz = R[:, 0, 1] + R[:, 1, 0], R[:, 0, 2] + R[:, 2, 0], R[:, 1, 2] + R[:, 2, 1]
    # (w x y z) times 4 * the largest, for each case: rows of (w, x, y, z)
    products = {0: (None, wx, wy, wz), 1: (wx, None, xy, xz), 2: (wy, xy, None, yz), 3: (wz, xz, yz, None)}
    for case, terms in products.items():
        rows = largest == case
        if not np.any(rows):
            continue
        big = 0.5 * np.sqrt(np.maximum(diagonal[case][rows], 0.0))
        wxyz = [big if term is None else term[rows] / (4.0 * big) for term in terms]
        out[rows] = np.stack([wxyz[1], wxyz[2], wxyz[3], wxyz[0]], axis=1)
    out *= np.where(out[:, 3:] < 0.0, -1.0, 1.0) / np.linalg.norm(out, axis=1, keepdims=True)
    return out
