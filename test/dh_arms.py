"""Arms written from Denavit–Hartenberg tables (standard convention: ``T_i = Rz(θi) Tz(di)
Tx(ai) Rx(αi)``), as a URDF and as EAIK's model built from the same table by its own formulas:
what ``test_closed_form`` checks ``solve_all`` on and ``benchmark/bench_solve_all.py`` times.
Units: m, rad.
"""

from __future__ import annotations

import math

import numpy as np

PI = math.pi

# name: (d, a, alpha, lower, upper) [m, rad]
ARMS = {
    "ur5": (
        [0.089159, 0, 0, 0.10915, 0.09465, 0.0823], [0, -0.425, -0.39225, 0, 0, 0],
        [PI / 2, 0, 0, PI / 2, -PI / 2, 0], [-2 * PI] * 6, [2 * PI] * 6,
    ),
    "kuka_kr": (
        [0.4, 0, 0, 0.42, 0, 0.08], [0.025, 0.455, 0.035, 0, 0, 0], [-PI / 2, 0, -PI / 2, PI / 2, -PI / 2, 0],
        [-2.9, -3.0, -2.0, -3.0, -2.0, -3.1], [2.9, 1.0, 2.6, 3.0, 2.0, 3.1],
    ),
    "shoulder_meeting": (
        [0.3, 0.0, 0.1, 0.4, 0, 0.1], [0, 0.4, 0.05, 0, 0, 0], [PI / 2, PI / 3, PI / 2, PI / 2, -PI / 2, 0],
        [-PI] * 6, [PI] * 6,
    ),
    "iiwa": (
        [0.36, 0, 0.42, 0, 0.4, 0, 0.126], [0] * 7, [-PI / 2, PI / 2, PI / 2, -PI / 2, -PI / 2, PI / 2, 0],
        [-2.96, -2.09, -2.96, -2.09, -2.96, -2.09, -3.05], [2.96, 2.09, 2.96, 2.09, 2.96, 2.09, 3.05],
    ),
    # a Panda's geometry (axes 1-3 meet at the shoulder, 5 and 6 meet, offsets at 4 and 7)
    "panda_like": (
        [0.333, 0, 0.316, 0, 0.384, 0, 0.107], [0, 0, 0.0825, -0.0825, 0, 0.088, 0],
        [-PI / 2, PI / 2, PI / 2, -PI / 2, PI / 2, PI / 2, 0],
        [-2.9, -1.76, -2.9, -3.07, -2.9, -0.02, -2.9], [2.9, 1.76, 2.9, -0.07, 2.9, 3.75, 2.9],
    ),
}  # fmt: skip
#: The 7-joint arms' locked joint (index) and its value [rad].
LOCKED = {"iiwa": (2, 0.4), "panda_like": (6, 0.4)}


def dh_urdf(name: str, d, a, alpha, lower, upper, tilt: float = 0.0, rng=None, continuous=()) -> str:
    """A URDF of the DH table: joint i at frame i−1 (axis z, or z tilted by ``tilt`` [rad] in a
    random direction), the constant ``Tz(d) Tx(a) Rx(α)`` in the next joint's origin; the joints
    (indices) ``continuous`` without limits."""
    links = ['<link name="base_link"/>', '<link name="tool0"/>']
    joints, origin = [], (0.0, 0.0, 0.0)
    for i in range(len(d)):
        links.append(f'<link name="link{i + 1}"/>')
        direction = rng.uniform(0, 2 * PI) if tilt else 0.0
        axis = (math.sin(tilt) * math.cos(direction), math.sin(tilt) * math.sin(direction), math.cos(tilt))
        parent = "base_link" if i == 0 else f"link{i}"
        kind = "continuous" if i in continuous else "revolute"
        limit = f'<limit lower="{lower[i]!r}" upper="{upper[i]!r}" effort="1" velocity="1"/>'
        limit = "" if i in continuous else limit
        joints.append(
            f'<joint name="joint{i + 1}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="link{i + 1}"/>'
            f'<origin xyz="{origin[0]!r} 0 {origin[1]!r}" rpy="{origin[2]!r} 0 0"/>'
            f'<axis xyz="{axis[0]!r} {axis[1]!r} {axis[2]!r}"/>'
            f"{limit}</joint>"
        )
        origin = (a[i], d[i], alpha[i])
    joints.append(
        f'<joint name="tool_joint" type="fixed"><parent link="link{len(d)}"/><child link="tool0"/>'
        f'<origin xyz="{origin[0]!r} 0 {origin[1]!r}" rpy="{origin[2]!r} 0 0"/></joint>'
    )
    return f'<robot name="{name}">' + "".join(links + joints) + "</robot>"


def dh_axes(d, a, alpha):
    """EAIK's model of the DH table: axes H (n, 3) and offsets P (n + 1, 3) at q = 0, and the
    tool's rotation there (EAIK's tool frame is the base's orientation)."""
    frame, axes, points = np.eye(4), [], []
    for i in range(len(d)):
        axes.append(frame[:3, 2].copy())
        points.append(frame[:3, 3].copy())
        c, s = math.cos(alpha[i]), math.sin(alpha[i])
        frame = frame @ np.array([[1, 0, 0, a[i]], [0, c, -s, 0], [0, s, c, d[i]], [0, 0, 0, 1.0]])
    offsets = [points[0], *np.diff(points, axis=0), frame[:3, 3] - points[-1]]
    return np.array(axes), np.array(offsets), frame[:3, :3]
