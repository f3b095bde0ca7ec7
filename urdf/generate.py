#!/usr/bin/env python3
"""Generate ik_node's sample robot descriptions (the ``*.urdf`` files next to this script).

The URDFs are committed; this script only makes them reproducible and easy to change:

    python3 urdf/generate.py          # rewrite every sample URDF
    python3 urdf/generate.py --check  # exit 1 if a committed file differs from the generator

Standard library only. Each link gets simple visual/collision shapes (cylinders, boxes,
spheres) and an ``<inertial>`` computed from those shapes (uniform density, principal axes),
so the files load in RViz, urdf_parser_py, KDL and pinocchio alike. Units: m, rad, kg.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path

PI = math.pi
HALF_PI = math.pi / 2

#: The palette; each file defines (once, at the top) only the colours it uses.
MATERIALS = {
    "dark_grey": (0.20, 0.20, 0.22, 1.0),
    "grey": (0.60, 0.61, 0.63, 1.0),
    "white": (0.92, 0.92, 0.90, 1.0),
    "blue": (0.12, 0.36, 0.72, 1.0),
    "orange": (0.95, 0.45, 0.10, 1.0),
    "green": (0.20, 0.60, 0.30, 1.0),
    "red": (0.80, 0.15, 0.15, 1.0),
    "skin": (0.85, 0.70, 0.58, 1.0),
    "black": (0.05, 0.05, 0.05, 1.0),
}


# --------------------------------------------------------------------------------------------
# Small 3-D helpers (rotation matrices as nested lists, URDF rpy = Rz(yaw) @ Ry(pitch) @ Rx(roll))
# --------------------------------------------------------------------------------------------


def rot_rpy(rpy):
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = (
        math.cos(r),
        math.sin(r),
        math.cos(p),
        math.sin(p),
        math.cos(y),
        math.sin(y),
    )
    return [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]


def rpy_from_rot(m):
    sp = -m[2][0]
    if abs(sp) > 1.0 - 1e-12:  # gimbal lock: put everything in yaw
        pitch = math.copysign(HALF_PI, sp)
        return (0.0, pitch, math.atan2(-m[0][1], m[1][1]))
    return (math.atan2(m[2][1], m[2][2]), math.asin(sp), math.atan2(m[1][0], m[0][0]))


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def transpose(a):
    return [[a[j][i] for j in range(3)] for i in range(3)]


def rpy_aligning_z(direction):
    """rpy of a frame whose z axis points along ``direction`` (roll 0)."""
    x, y, z = direction
    norm = math.sqrt(x * x + y * y + z * z)
    return (0.0, math.acos(max(-1.0, min(1.0, z / norm))), math.atan2(y, x) if x or y else 0.0)


def sym_eig(a):
    """Eigen-decomposition of a symmetric 3x3 matrix (cyclic Jacobi): (values, column vectors)."""
    a = [row[:] for row in a]
    v = [[1.0 if i == j else 0.0 for j in range(3)] for i in range(3)]
    for _ in range(100):
        off = sum(a[i][j] ** 2 for i in range(3) for j in range(3) if i != j)
        if off < 1e-30 * max(1e-300, sum(a[i][i] ** 2 for i in range(3))):
            break
        for p, q in ((0, 1), (0, 2), (1, 2)):
            if abs(a[p][q]) < 1e-300:
                continue
            theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q])
            t = math.copysign(1.0, theta) / (abs(theta) + math.sqrt(theta * theta + 1.0))
            c = 1.0 / math.sqrt(t * t + 1.0)
            s = t * c
            for k in range(3):  # A <- A J
                akp, akq = a[k][p], a[k][q]
                a[k][p], a[k][q] = c * akp - s * akq, s * akp + c * akq
            for k in range(3):  # A <- J^T A
                apk, aqk = a[p][k], a[q][k]
                a[p][k], a[q][k] = c * apk - s * aqk, s * apk + c * aqk
            for k in range(3):
                vkp, vkq = v[k][p], v[k][q]
                v[k][p], v[k][q] = c * vkp - s * vkq, s * vkp + c * vkq
    return [a[i][i] for i in range(3)], v


# --------------------------------------------------------------------------------------------
# Shapes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    kind: str  # "cylinder" (along its z), "box", "sphere"
    size: tuple  # cylinder (radius, length); box (x, y, z); sphere (radius,)
    xyz: tuple = (0.0, 0.0, 0.0)
    rpy: tuple = (0.0, 0.0, 0.0)
    material: str | None = None  # None: the link's material

    @property
    def volume(self) -> float:
        if self.kind == "cylinder":
            r, h = self.size
            return PI * r * r * h
        if self.kind == "box":
            return self.size[0] * self.size[1] * self.size[2]
        return 4.0 / 3.0 * PI * self.size[0] ** 3

    def unit_inertia(self):
        """Diagonal inertia per unit mass about the shape's centre, in the shape frame."""
        if self.kind == "cylinder":
            r, h = self.size
            side = (3 * r * r + h * h) / 12.0
            return (side, side, r * r / 2.0)
        if self.kind == "box":
            x, y, z = self.size
            return ((y * y + z * z) / 12.0, (x * x + z * z) / 12.0, (x * x + y * y) / 12.0)
        return (0.4 * self.size[0] ** 2,) * 3

    def mirrored(self) -> Shape:
        """Reflection through the xz plane (left <-> right)."""
        r, p, y = self.rpy
        return replace(self, xyz=(self.xyz[0], -self.xyz[1], self.xyz[2]), rpy=(-r, p, -y))


def cylinder(radius, length, xyz=(0, 0, 0), rpy=(0, 0, 0), material=None):
    return Shape("cylinder", (radius, length), tuple(xyz), tuple(rpy), material)


def box(sx, sy, sz, xyz=(0, 0, 0), rpy=(0, 0, 0), material=None):
    return Shape("box", (sx, sy, sz), tuple(xyz), tuple(rpy), material)


def sphere(radius, xyz=(0, 0, 0), material=None):
    return Shape("sphere", (radius,), tuple(xyz), (0.0, 0.0, 0.0), material)


def along(axis, radius, length, center=(0, 0, 0), material=None):
    """A cylinder of ``length`` centred at ``center`` whose axis points along ``axis``."""
    return cylinder(radius, length, center, rpy_aligning_z(axis), material)


def rod(p0, p1, radius, material=None):
    """A cylinder from point ``p0`` to point ``p1``."""
    d = [b - a for a, b in zip(p0, p1, strict=True)]
    length = math.sqrt(sum(c * c for c in d))
    center = tuple((a + b) / 2.0 for a, b in zip(p0, p1, strict=True))
    return cylinder(radius, length, center, rpy_aligning_z(d), material)


def polyline(points, radius, material=None):
    shapes = []
    for p0, p1 in zip(points, points[1:], strict=False):
        if math.dist(p0, p1) > 1e-9:
            shapes.append(rod(p0, p1, radius, material))
    return shapes


def marker(radius=0.01, material="orange"):
    """Geometry of a (nearly) massless frame such as tool0 or a camera frame."""
    return [sphere(radius, material=material)]


# --------------------------------------------------------------------------------------------
# Robot model
# --------------------------------------------------------------------------------------------


@dataclass
class Link:
    name: str
    shapes: list
    material: str = "grey"
    mass: float | None = None  # None: density * volume

    def inertial(self, density: float):
        volumes = [s.volume for s in self.shapes]
        total_volume = sum(volumes)
        mass = self.mass if self.mass is not None else density * total_volume
        masses = [mass * v / total_volume for v in volumes]
        com = [sum(m * s.xyz[i] for m, s in zip(masses, self.shapes, strict=True)) / mass for i in range(3)]
        tensor = [[0.0] * 3 for _ in range(3)]
        for m, s in zip(masses, self.shapes, strict=True):
            rot = rot_rpy(s.rpy)
            diag = [[(s.unit_inertia()[i] * m if i == j else 0.0) for j in range(3)] for i in range(3)]
            local = matmul(matmul(rot, diag), transpose(rot))
            d = [s.xyz[i] - com[i] for i in range(3)]
            d2 = sum(c * c for c in d)
            for i in range(3):
                for j in range(3):
                    tensor[i][j] += local[i][j] + m * ((d2 if i == j else 0.0) - d[i] * d[j])
        values, vectors = sym_eig(tensor)
        vectors, values = _tidy_principal_axes(vectors, values)
        return mass, com, rpy_from_rot(vectors), values

    def mirrored(self, name: str) -> Link:
        return Link(name, [s.mirrored() for s in self.shapes], self.material, self.mass)


def _tidy_principal_axes(vectors, values):
    """Order/sign the eigenvectors so the principal frame is as close to the link frame as
    possible (keeps the printed rpy small) and is right-handed."""
    columns = [[vectors[i][j] for i in range(3)] for j in range(3)]
    order, used = [], set()
    for axis in range(3):  # greedily give each link axis the eigenvector most aligned with it
        best = max((j for j in range(3) if j not in used), key=lambda j: abs(columns[j][axis]))
        order.append(best)
        used.add(best)
    cols = [columns[j][:] for j in order]
    vals = [values[j] for j in order]
    for axis in range(3):
        if cols[axis][axis] < 0:
            cols[axis] = [-c for c in cols[axis]]
    det = (
        cols[0][0] * (cols[1][1] * cols[2][2] - cols[1][2] * cols[2][1])
        - cols[1][0] * (cols[0][1] * cols[2][2] - cols[0][2] * cols[2][1])
        + cols[2][0] * (cols[0][1] * cols[1][2] - cols[0][2] * cols[1][1])
    )
    if det < 0:
        weakest = min(range(3), key=lambda a: abs(cols[a][a]))
        cols[weakest] = [-c for c in cols[weakest]]
    # snap numerically-aligned frames to exactly aligned
    if all(abs(cols[a][a]) > 1.0 - 1e-12 for a in range(3)):
        cols = [[1.0 if i == a else 0.0 for i in range(3)] for a in range(3)]
    return [[cols[j][i] for j in range(3)] for i in range(3)], vals


@dataclass
class Joint:
    name: str
    type: str  # revolute, continuous, prismatic, fixed
    parent: str
    child: str
    xyz: tuple = (0.0, 0.0, 0.0)
    rpy: tuple = (0.0, 0.0, 0.0)
    axis: tuple | None = None
    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None
    safety: dict | None = None  # safety_controller attributes
    mimic: dict | None = None  # mimic attributes

    def mirrored(self, name: str, parent: str, child: str) -> Joint:
        """Reflection through the xz plane. A rotation axis is a pseudo-vector, so rotations
        about x or z run the other way on the mirrored side: keep the axis, flip the limits."""
        r, p, y = self.rpy
        out = replace(
            self,
            name=name,
            parent=parent,
            child=child,
            xyz=(self.xyz[0], -self.xyz[1], self.xyz[2]),
            rpy=(-r, p, -y),
        )
        if self.type == "fixed" or self.axis is None:
            return out
        ax, ay, az = self.axis
        if self.type == "prismatic":
            return replace(out, axis=(ax, -ay, az))
        if ay == 0.0 and (ax == 0.0 or az == 0.0):  # about x or z: q -> -q
            if self.lower is not None:
                out = replace(out, lower=-self.upper, upper=-self.lower)
            return out
        if ax == 0.0 and az == 0.0:  # about y: unchanged
            return out
        return replace(out, axis=(-ax, ay, -az))


class Robot:
    def __init__(self, name: str, density: float, comment: str):
        self.name = name
        self.density = density
        self.comment = comment
        self.links: dict[str, Link] = {}
        self.joints: list[Joint] = []

    def link(self, name, shapes, material="grey", mass=None):
        assert name not in self.links, name
        self.links[name] = Link(name, list(shapes), material, mass)
        return name

    def joint(self, name, type, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=None, **kw):
        assert parent in self.links and child in self.links, (name, parent, child)
        if type != "fixed":
            assert axis is not None, name
        self.joints.append(Joint(name, type, parent, child, tuple(xyz), tuple(rpy), axis, **kw))

    def mirror(self, old: str, new: str):
        """Add the mirror image (through the xz plane) of every link and joint whose name starts
        with ``old``, renamed with ``new``; joints attaching them to the rest keep their parent."""

        def rename(n):
            return new + n[len(old) :] if n.startswith(old) else n

        for name in [n for n in self.links if n.startswith(old)]:
            self.links[rename(name)] = self.links[name].mirrored(rename(name))
        for joint in [j for j in self.joints if j.name.startswith(old)]:
            self.joints.append(joint.mirrored(rename(joint.name), rename(joint.parent), rename(joint.child)))

    # ---- XML ---------------------------------------------------------------------------------

    def to_xml(self) -> str:
        children = {name: [] for name in self.links}
        has_parent = set()
        for joint in self.joints:
            children[joint.parent].append(joint)
            has_parent.add(joint.child)
        roots = [n for n in self.links if n not in has_parent]
        assert len(roots) == 1, roots
        used = []
        for link in self.links.values():
            for shape in link.shapes:
                colour = shape.material or link.material
                if colour not in used:
                    used.append(colour)
        out = [
            '<?xml version="1.0"?>',
            "<!-- Generated by urdf/generate.py (python3 urdf/generate.py); edit the generator,",
            "     not this file. Units: m, rad, kg. -->",
            f"<!-- {self.comment} -->",
            f'<robot name="{self.name}">',
        ]
        for colour in [c for c in MATERIALS if c in used]:
            out.append(f'  <material name="{colour}">')
            out.append(f'    <color rgba="{_v(MATERIALS[colour])}"/>')
            out.append("  </material>")
        stack = [roots[0]]
        order = []
        while stack:  # depth-first: each link followed by its child joints' subtrees
            name = stack.pop()
            order.append(("link", name))
            for joint in reversed(children[name]):
                stack.append(joint.child)
                stack.append(joint)
            while stack and isinstance(stack[-1], Joint):
                order.append(("joint", stack.pop()))
        for kind, item in order:
            out.append("")
            out.extend(self._link_xml(self.links[item]) if kind == "link" else _joint_xml(item))
        out.append("</robot>")
        return "\n".join(out) + "\n"

    def _link_xml(self, link: Link):
        mass, com, rpy, moments = link.inertial(self.density)
        lines = [f'  <link name="{link.name}">']
        lines += [
            "    <inertial>",
            f'      <origin xyz="{_v(com)}" rpy="{_v(rpy)}"/>',
            f'      <mass value="{_n(mass)}"/>',
            f'      <inertia ixx="{_n(moments[0])}" ixy="0" ixz="0" iyy="{_n(moments[1])}" '
            f'iyz="0" izz="{_n(moments[2])}"/>',
            "    </inertial>",
        ]
        for tag in ("visual", "collision"):
            for shape in link.shapes:
                lines.append(f"    <{tag}>")
                lines.append(f'      <origin xyz="{_v(shape.xyz)}" rpy="{_v(shape.rpy)}"/>')
                lines.append(f"      <geometry>{_geometry(shape)}</geometry>")
                if tag == "visual":
                    lines.append(f'      <material name="{shape.material or link.material}"/>')
                lines.append(f"    </{tag}>")
        lines.append("  </link>")
        return lines


def _joint_xml(joint: Joint):
    lines = [f'  <joint name="{joint.name}" type="{joint.type}">']
    lines.append(f'    <parent link="{joint.parent}"/>')
    lines.append(f'    <child link="{joint.child}"/>')
    lines.append(f'    <origin xyz="{_v(joint.xyz)}" rpy="{_v(joint.rpy)}"/>')
    if joint.axis is not None:
        lines.append(f'    <axis xyz="{_v(joint.axis)}"/>')
    if joint.type != "fixed":
        bounds = ""
        if joint.type in ("revolute", "prismatic"):
            bounds = f'lower="{_n(joint.lower)}" upper="{_n(joint.upper)}" '
        lines.append(f'    <limit {bounds}effort="{_n(joint.effort)}" velocity="{_n(joint.velocity)}"/>')
    if joint.safety:
        attrs = " ".join(f'{k}="{_n(v)}"' for k, v in joint.safety.items())
        lines.append(f"    <safety_controller {attrs}/>")
    if joint.mimic:
        attrs = " ".join(f'{k}="{v if isinstance(v, str) else _n(v)}"' for k, v in joint.mimic.items())
        lines.append(f"    <mimic {attrs}/>")
    lines.append("  </joint>")
    return lines


def _geometry(shape: Shape) -> str:
    if shape.kind == "cylinder":
        return f'<cylinder radius="{_n(shape.size[0])}" length="{_n(shape.size[1])}"/>'
    if shape.kind == "box":
        return f'<box size="{_v(shape.size)}"/>'
    return f'<sphere radius="{_n(shape.size[0])}"/>'


def _n(x) -> str:
    """A number, compactly: up to 9 significant digits, no '-0'."""
    text = f"{float(x):.9g}"
    if float(text) == 0.0:
        return "0"
    return text


def _v(values) -> str:
    return " ".join(_n(x) for x in values)


# --------------------------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------------------------


def arm_segment(axis, radius, path, housing_length=None, extra=()):
    """A link body: a motor housing along the link's own joint ``axis`` at its origin, and a
    tube (slightly thinner) through ``path`` (link-frame points, normally ending at the next
    joint's origin)."""
    shapes = [along(axis, radius, housing_length or 2.3 * radius)]
    shapes += polyline([tuple(p) for p in path], 0.85 * radius)
    return shapes + list(extra)


# --------------------------------------------------------------------------------------------
# The robots
# --------------------------------------------------------------------------------------------


def build_arm6() -> Robot:
    """UR5-like 6-DOF arm: shoulder offset, two long links, non-intersecting wrist."""
    r = Robot(
        "arm6",
        density=1000.0,
        comment="6-DOF industrial arm (UR-like), reach ~0.85 m; q = 0: arm stretched along +x",
    )
    z, y = (0, 0, 1), (0, 1, 0)
    r.link("world", [box(0.40, 0.40, 0.02, (0, 0, -0.01), material="dark_grey")], "dark_grey")
    r.link("base_link", [cylinder(0.08, 0.12, (0, 0, 0.06))], "dark_grey")
    r.link("shoulder_link", arm_segment(z, 0.065, [(0, 0, 0), (0, 0.135, 0)], 0.15), "blue")
    r.link(
        "upper_arm_link",
        arm_segment(y, 0.065, [(0, 0, 0), (0, 0, 0.40), (0, -0.115, 0.40)]),
        "grey",
    )
    r.link("forearm_link", arm_segment(y, 0.055, [(0, 0, 0), (0, 0, 0.36)]), "grey")
    r.link("wrist_1_link", arm_segment(y, 0.045, [(0, 0, 0), (0, 0.095, 0)]), "blue")
    r.link("wrist_2_link", arm_segment(z, 0.045, [(0, 0, 0), (0, 0, 0.085)]), "blue")
    r.link(
        "flange",
        [
            cylinder(0.045, 0.10, (0, 0, 0.0)),
            cylinder(0.032, 0.02, (0, 0, 0.06), material="dark_grey"),
            cylinder(0.012, 0.03, (0, 0, 0.085), material="orange"),
        ],
        "grey",
    )
    r.link("tool0", marker(0.008), "orange")

    r.joint("world_joint", "fixed", "world", "base_link")
    r.joint(
        "shoulder_pan_joint",
        "revolute",
        "base_link",
        "shoulder_link",
        (0, 0, 0.152),
        axis=z,
        lower=-PI,
        upper=PI,
        effort=150,
        velocity=2.094,
    )
    r.joint(
        "shoulder_lift_joint",
        "revolute",
        "shoulder_link",
        "upper_arm_link",
        (0, 0.135, 0),
        (0, HALF_PI, 0),
        axis=y,
        lower=-PI,
        upper=0.8,
        effort=150,
        velocity=2.094,
    )
    r.joint(
        "elbow_joint",
        "revolute",
        "upper_arm_link",
        "forearm_link",
        (0, -0.115, 0.40),
        axis=y,
        lower=-2.8,
        upper=2.8,
        effort=150,
        velocity=3.14,
        # soft lower limit outside the hard one, soft upper inside: effective [-2.8, 2.6]
        safety=dict(soft_lower_limit=-3.0, soft_upper_limit=2.6, k_position=20, k_velocity=0.5),
    )
    r.joint(
        "wrist_1_joint",
        "revolute",
        "forearm_link",
        "wrist_1_link",
        (0, 0, 0.36),
        (0, HALF_PI, 0),
        axis=y,
        lower=-PI,
        upper=PI,
        effort=28,
        velocity=3.2,
    )
    # axis deliberately not normalised: "0 0 2" means the same as "0 0 1"
    r.joint(
        "wrist_2_joint",
        "revolute",
        "wrist_1_link",
        "wrist_2_link",
        (0, 0.095, 0),
        axis=(0, 0, 2),
        lower=-PI,
        upper=PI,
        effort=28,
        velocity=3.2,
    )
    r.joint(
        "wrist_3_joint",
        "revolute",
        "wrist_2_link",
        "flange",
        (0, 0, 0.085),
        (-HALF_PI, 0, 0),
        axis=z,
        lower=-2 * PI,
        upper=2 * PI,
        effort=28,
        velocity=3.2,
    )
    # a tool 0.1 m out along the flange's approach (z) axis, mounted tilted and rotated
    r.joint("tool0_joint", "fixed", "flange", "tool0", (0, 0, 0.1), (0.25, -0.4, PI / 4))
    return r


def build_arm7() -> Robot:
    """Panda-like 7-DOF arm with a parallel gripper."""
    r = Robot(
        "arm7",
        density=900.0,
        comment="7-DOF redundant arm (Panda-like), reach ~0.85 m, with a parallel gripper; "
        "NB joint4's range [-3.0718, -0.0698] excludes 0, like the real Panda",
    )
    z = (0, 0, 1)
    r.link("world", [box(0.40, 0.40, 0.02, (0, 0, -0.01), material="dark_grey")], "dark_grey")
    r.link(
        "base_link",
        [cylinder(0.09, 0.14, (0, 0, 0.07)), box(0.12, 0.16, 0.10, (-0.09, 0, 0.05))],
        "white",
    )
    r.link("link1", arm_segment(z, 0.06, [(0, 0, -0.19), (0, 0, 0)], 0.16), "white")
    r.link("link2", arm_segment(z, 0.06, [(0, 0, 0), (0, -0.316, 0)]), "white")
    r.link("link3", arm_segment(z, 0.055, [(0, 0, -0.10), (0, 0, 0), (0.0825, 0, 0)], 0.14), "white")
    r.link("link4", arm_segment(z, 0.055, [(0, 0, 0), (-0.0825, 0, 0), (-0.0825, 0.25, 0)]), "white")
    r.link("link5", arm_segment(z, 0.05, [(0, 0, -0.22), (0, 0, 0)], 0.12), "white")
    r.link("link6", arm_segment(z, 0.045, [(0, 0, 0), (0.088, 0, 0)]), "white")
    r.link("link7", arm_segment(z, 0.045, [(0, 0, 0), (0, 0, 0.09)], 0.08), "dark_grey")
    r.link("flange", [cylinder(0.04, 0.012, (0, 0, -0.006))], "dark_grey")
    r.link("tool0", marker(0.008), "orange")
    r.link(
        "hand",
        [box(0.06, 0.20, 0.065, (0, 0, 0.0325)), cylinder(0.035, 0.01, (0, 0, 0.005))],
        "white",
    )
    r.link("left_finger", [box(0.02, 0.018, 0.05, (0, 0.009, 0.025))], "dark_grey")
    r.link("right_finger", [box(0.02, 0.018, 0.05, (0, -0.009, 0.025))], "dark_grey")
    r.link("fingertip_center", marker(0.005), "orange")

    panda = dict(effort=87, velocity=2.175)
    wrist = dict(effort=12, velocity=2.61)
    r.joint("world_joint", "fixed", "world", "base_link")
    r.joint(
        "joint1",
        "revolute",
        "base_link",
        "link1",
        (0, 0, 0.333),
        axis=z,
        lower=-2.8973,
        upper=2.8973,
        **panda,
    )
    r.joint(
        "joint2",
        "revolute",
        "link1",
        "link2",
        rpy=(-HALF_PI, 0, 0),
        axis=z,
        lower=-1.7628,
        upper=1.7628,
        **panda,
    )
    r.joint(
        "joint3",
        "revolute",
        "link2",
        "link3",
        (0, -0.316, 0),
        (HALF_PI, 0, 0),
        axis=z,
        lower=-2.8973,
        upper=2.8973,
        **panda,
    )
    r.joint(
        "joint4",
        "revolute",
        "link3",
        "link4",
        (0.0825, 0, 0),
        (HALF_PI, 0, 0),
        axis=z,
        lower=-3.0718,
        upper=-0.0698,
        **panda,
    )
    r.joint(
        "joint5",
        "revolute",
        "link4",
        "link5",
        (-0.0825, 0.384, 0),
        (-HALF_PI, 0, 0),
        axis=z,
        lower=-2.8973,
        upper=2.8973,
        **wrist,
    )
    r.joint(
        "joint6",
        "revolute",
        "link5",
        "link6",
        rpy=(HALF_PI, 0, 0),
        axis=z,
        lower=-0.0175,
        upper=3.7525,
        **wrist,
    )
    r.joint(
        "joint7",
        "revolute",
        "link6",
        "link7",
        (0.088, 0, 0),
        (HALF_PI, 0, 0),
        axis=z,
        lower=-2.8973,
        upper=2.8973,
        **wrist,
    )
    r.joint("flange_joint", "fixed", "link7", "flange", (0, 0, 0.107))
    r.joint("tool0_joint", "fixed", "flange", "tool0", rpy=(0, 0, -PI / 4))
    r.joint("hand_joint", "fixed", "flange", "hand", rpy=(0, 0, -PI / 4))
    r.joint(
        "finger_joint1",
        "prismatic",
        "hand",
        "left_finger",
        (0, 0, 0.0584),
        axis=(0, 1, 0),
        lower=0.0,
        upper=0.04,
        effort=20,
        velocity=0.2,
    )
    r.joint(
        "finger_joint2",
        "prismatic",
        "hand",
        "right_finger",
        (0, 0, 0.0584),
        axis=(0, -1, 0),
        lower=0.0,
        upper=0.04,
        effort=20,
        velocity=0.2,
        mimic=dict(joint="finger_joint1", multiplier=1, offset=0),
    )
    r.joint("fingertip_center_joint", "fixed", "hand", "fingertip_center", (0, 0, 0.1034))
    return r


def add_spherical_wrist_arm(
    r: Robot,
    prefix: str,
    parent: str,
    mount_xyz,
    mount_rpy,
    *,
    upper=0.35,
    forearm=(0.15, 0.17),
    wrist_offset=0.04,
    tool=0.06,
    continuous=(),
    scale=1.0,
    colours=("white", "blue"),
    tool_name=None,
):
    """A 6-DOF arm: shoulder yaw, shoulder pitch, elbow, then a spherical wrist (roll, pitch,
    roll) whose axes meet at the wrist centre.

    q = 0: the upper arm points along the mount's (rotated) y, the forearm along its x; the
    flange sits ``wrist_offset`` beyond the wrist centre and the tool frame ``tool`` beyond that,
    both along the flange's z (approach) axis. Joints ``{prefix}joint1..6``; links
    ``{prefix}link1..5``, ``{prefix}flange`` and ``tool_name`` (default ``{prefix}tool0``).
    """
    z = (0, 0, 1)
    s = scale
    j = [f"{prefix}joint{i}" for i in range(1, 7)]
    links = [parent] + [f"{prefix}link{i}" for i in range(1, 6)] + [f"{prefix}flange"]
    tool_name = tool_name or f"{prefix}tool0"
    light, accent = colours
    fa1, fa2 = forearm
    r.link(links[1], arm_segment(z, 0.055 * s, [(0, 0, -0.04 * s), (0, 0, 0.12 * s)], 0.09 * s), accent)
    r.link(links[2], arm_segment(z, 0.055 * s, [(0, 0, 0), (0, upper, 0)], 0.14 * s), light)
    r.link(links[3], arm_segment(z, 0.05 * s, [(0, 0, 0), (0, fa1, 0)], 0.12 * s), light)
    r.link(links[4], arm_segment(z, 0.042 * s, [(0, 0, 0), (0, 0, fa2)]), accent)
    r.link(links[5], arm_segment(z, 0.04 * s, [(0, 0, 0), (0, wrist_offset, 0)], 0.10 * s), light)
    r.link(
        links[6],
        [
            cylinder(0.035 * s, 0.04, (0, 0, -0.01)),
            cylinder(0.03 * s, 0.01, (0, 0, 0.015), material="dark_grey"),
            cylinder(0.01, tool - 0.02, (0, 0, 0.02 + (tool - 0.02) / 2), material="orange"),
        ],
        light,
    )
    r.link(tool_name, marker(0.008), "orange")
    big = dict(effort=40 * s, velocity=1.4)
    small = dict(effort=12 * s, velocity=2.4)

    def kind(i):
        return "continuous" if i in continuous else "revolute"

    def lim(i, lower, upper):
        return {} if i in continuous else dict(lower=lower, upper=upper)

    r.joint(j[0], kind(1), links[0], links[1], mount_xyz, mount_rpy, axis=z, **lim(1, -2.9, 2.9), **big)
    r.joint(
        j[1],
        kind(2),
        links[1],
        links[2],
        (0, 0, 0.12 * s),
        (HALF_PI, 0, 0),
        axis=z,
        **lim(2, -2.0, 2.0),
        **big,
    )
    r.joint(
        j[2],
        kind(3),
        links[2],
        links[3],
        (0, upper, 0),
        (0, 0, -HALF_PI),
        axis=z,
        **lim(3, -2.6, 2.6),
        **big,
    )
    r.joint(
        j[3],
        kind(4),
        links[3],
        links[4],
        (0, fa1, 0),
        (-HALF_PI, 0, 0),
        axis=z,
        **lim(4, -2.8, 2.8),
        **small,
    )
    r.joint(
        j[4],
        kind(5),
        links[4],
        links[5],
        (0, 0, fa2),
        (HALF_PI, 0, 0),
        axis=z,
        **lim(5, -2.2, 2.2),
        **small,
    )
    r.joint(
        j[5],
        kind(6),
        links[5],
        links[6],
        (0, wrist_offset, 0),
        (-HALF_PI, 0, 0),
        axis=z,
        **lim(6, -PI, PI),
        **small,
    )
    r.joint(f"{tool_name}_joint", "fixed", links[6], tool_name, (0, 0, tool), (0, 0, HALF_PI))
    return links[6], tool_name


def build_mobile_manipulator() -> Robot:
    r = Robot(
        "mobile_manipulator",
        density=1200.0,
        comment="planar base (x, y, theta) + vertical lift + 6-DOF spherical-wrist arm, "
        "and a pan/tilt head with a camera",
    )
    r.link("odom", marker(0.01, "green"), "green")
    r.link("base_x_link", marker(0.01, "green"), "green")
    r.link("base_y_link", marker(0.01, "green"), "green")
    wheels = [
        cylinder(0.08, 0.05, (x, y, 0.08), (HALF_PI, 0, 0), material="black")
        for x in (0.22, -0.22)
        for y in (0.26, -0.26)
    ]
    r.link(
        "base_link",
        [box(0.70, 0.46, 0.28, (0, 0, 0.20))]
        + wheels
        + [
            box(0.10, 0.10, 0.82, (0.15, 0, 0.75), material="grey"),  # lift column
            box(0.05, 0.05, 0.85, (-0.22, 0, 0.76), material="grey"),  # head mast
        ],
        "dark_grey",
        mass=75.0,
    )
    r.link(
        "lift_link",
        [box(0.16, 0.18, 0.14, (0.02, 0, 0.07)), box(0.14, 0.16, 0.04, (0.15, 0, 0.06))],
        "grey",
    )

    r.joint(
        "base_x_joint",
        "prismatic",
        "odom",
        "base_x_link",
        axis=(1, 0, 0),
        lower=-10,
        upper=10,
        effort=1000,
        velocity=1.0,
    )
    r.joint(
        "base_y_joint",
        "prismatic",
        "base_x_link",
        "base_y_link",
        axis=(0, 1, 0),
        lower=-10,
        upper=10,
        effort=1000,
        velocity=1.0,
    )
    r.joint(
        "base_theta_joint",
        "continuous",
        "base_y_link",
        "base_link",
        axis=(0, 0, 1),
        effort=500,
        velocity=1.5,
    )
    r.joint(
        "lift_joint",
        "prismatic",
        "base_link",
        "lift_link",
        (0.15, 0, 0.34),
        axis=(0, 0, 1),
        lower=0.0,
        upper=0.5,
        effort=1500,
        velocity=0.15,
    )
    add_spherical_wrist_arm(
        r,
        "arm_",
        "lift_link",
        (0.17, 0, 0.08),
        (0, 0, 0),
        upper=0.36,
        forearm=(0.14, 0.18),
        continuous=(4, 6),
        colours=("white", "orange"),
        tool_name="tool0",
    )

    r.link("head_pan_link", [cylinder(0.04, 0.05, (0, 0, 0.025))], "dark_grey")
    r.link(
        "head_tilt_link",
        [
            box(0.08, 0.22, 0.06, (0.02, 0, 0)),
            cylinder(0.02, 0.02, (0.065, 0.05, 0), (0, HALF_PI, 0), material="black"),
            cylinder(0.02, 0.02, (0.065, -0.05, 0), (0, HALF_PI, 0), material="black"),
        ],
        "white",
    )
    r.link("camera_link", marker(0.01), "orange")
    r.joint(
        "head_pan_joint",
        "revolute",
        "base_link",
        "head_pan_link",
        (-0.22, 0, 1.185),
        axis=(0, 0, 1),
        lower=-2.6,
        upper=2.6,
        effort=6,
        velocity=2.0,
    )
    r.joint(
        "head_tilt_joint",
        "revolute",
        "head_pan_link",
        "head_tilt_link",
        (0, 0, 0.08),
        axis=(0, 1, 0),
        lower=-0.75,
        upper=1.1,
        effort=6,
        velocity=2.0,
    )
    r.joint("camera_joint", "fixed", "head_tilt_link", "camera_link", (0.075, 0, 0.0))
    return r


def build_dual_arm() -> Robot:
    r = Robot(
        "dual_arm",
        density=1300.0,
        comment="torso on a pedestal with a waist joint and two mirrored 6-DOF arms "
        "mounted at the shoulders, swept 15 deg forward",
    )
    r.link("world", [box(0.6, 0.6, 0.02, (0, 0, -0.01))], "dark_grey")
    r.link(
        "base_link",
        [cylinder(0.14, 0.76, (0, 0, 0.38)), cylinder(0.25, 0.04, (0, 0, 0.02))],
        "dark_grey",
        mass=60.0,
    )
    r.link(
        "torso_link",
        [
            cylinder(0.12, 0.06, (0, 0, 0.03)),
            box(0.24, 0.40, 0.46, (0, 0, 0.29)),
            sphere(0.10, (0.02, 0, 0.66), material="white"),
        ],
        "grey",
        mass=25.0,
    )
    r.joint("world_joint", "fixed", "world", "base_link")
    r.joint(
        "torso_joint",
        "revolute",
        "base_link",
        "torso_link",
        (0, 0, 0.78),
        axis=(0, 0, 1),
        lower=-2.7,
        upper=2.7,
        effort=200,
        velocity=1.0,
    )
    # left shoulder: mount z (joint1 axis) points out to +y, swept 15 deg forward and tilted
    add_spherical_wrist_arm(
        r,
        "left_",
        "torso_link",
        (0.0, 0.20, 0.42),
        (-HALF_PI, 0.0, -PI / 12),
        upper=0.30,
        forearm=(0.13, 0.15),
        scale=0.9,
        colours=("white", "red"),
    )
    r.mirror("left_", "right_")
    return r


def build_humanoid() -> Robot:
    r = Robot(
        "humanoid",
        density=1050.0,
        comment="31-DOF humanoid: 2 x 6-DOF legs, 3-DOF waist, 2 x 7-DOF arms, 2-DOF neck; "
        "pelvis frame at hip height, x forward, z up",
    )
    x, y, z = (1, 0, 0), (0, 1, 0), (0, 0, 1)
    r.link("pelvis", [box(0.16, 0.30, 0.14, (0, 0, 0.0))], "grey")

    def seg(axis, radius, path, housing=None, extra=()):
        return arm_segment(axis, radius, path, housing, extra)

    # ---- left leg (the right one is its mirror image) ---------------------------------------
    hip_tilt = math.radians(8)  # hip yaw axes lean outwards at the top; the roll joint undoes it
    r.link("left_hip_yaw_link", seg(z, 0.045, [(0, 0, 0), (0, 0, -0.05)], 0.07), "white")
    r.link("left_hip_roll_link", seg(x, 0.05, [(0, 0, 0), (0, 0, -0.03)], 0.10), "white")
    r.link("left_hip_pitch_link", seg(y, 0.06, [(0, 0, 0), (0, 0, -0.40)], 0.12), "white")
    r.link("left_knee_link", seg(y, 0.05, [(0, 0, 0), (0, 0, -0.38)], 0.10), "white")
    r.link("left_ankle_pitch_link", seg(y, 0.035, [], 0.07), "dark_grey")
    r.link("left_ankle_roll_link", seg(x, 0.03, [(0, 0, 0), (0.03, 0, -0.05)], 0.07), "dark_grey")
    r.link("left_foot", [box(0.22, 0.10, 0.03, (0.0, 0, 0.015))], "dark_grey")
    r.joint(
        "left_hip_yaw_joint",
        "revolute",
        "pelvis",
        "left_hip_yaw_link",
        (0, 0.09, -0.07),
        (hip_tilt, 0, 0),
        axis=z,
        lower=-0.5,
        upper=0.8,
        effort=120,
        velocity=6.0,
    )
    r.joint(
        "left_hip_roll_joint",
        "revolute",
        "left_hip_yaw_link",
        "left_hip_roll_link",
        (0, 0, -0.05),
        (-hip_tilt, 0, 0),
        axis=x,
        lower=-0.4,
        upper=0.8,
        effort=150,
        velocity=6.0,
    )
    r.joint(
        "left_hip_pitch_joint",
        "revolute",
        "left_hip_roll_link",
        "left_hip_pitch_link",
        (0, 0, -0.03),
        axis=y,
        lower=-2.0,
        upper=0.5,
        effort=200,
        velocity=6.0,
    )
    r.joint(
        "left_knee_joint",
        "revolute",
        "left_hip_pitch_link",
        "left_knee_link",
        (0, 0, -0.40),
        axis=y,
        lower=-0.05,
        upper=2.4,
        effort=250,
        velocity=7.0,
    )
    r.joint(
        "left_ankle_pitch_joint",
        "revolute",
        "left_knee_link",
        "left_ankle_pitch_link",
        (0, 0, -0.38),
        axis=y,
        lower=-0.8,
        upper=0.6,
        effort=120,
        velocity=7.0,
    )
    r.joint(
        "left_ankle_roll_joint",
        "revolute",
        "left_ankle_pitch_link",
        "left_ankle_roll_link",
        axis=x,
        lower=-0.35,
        upper=0.35,
        effort=60,
        velocity=7.0,
    )
    r.joint(  # a sole pitch joint: 31 DOF on the paths to the four tips
        "left_foot_joint",
        "revolute",
        "left_ankle_roll_link",
        "left_foot",
        (0.03, 0, -0.065),
        axis=y,
        lower=-0.3,
        upper=0.3,
        effort=40,
        velocity=5.0,
    )

    # ---- waist, chest, neck, head -----------------------------------------------------------
    r.link("torso_yaw_link", seg(z, 0.06, [(0, 0, 0), (0, 0, 0.08)], 0.06), "dark_grey")
    r.link("torso_pitch_link", seg(y, 0.06, [(0, 0, 0), (0, 0, 0.05)], 0.14), "dark_grey")
    r.link("torso_roll_link", seg(x, 0.055, [], 0.12), "dark_grey")
    r.link("chest", [box(0.20, 0.32, 0.34, (0, 0, 0.18)), box(0.12, 0.44, 0.08, (0, 0, 0.31))], "white")
    r.link("neck_yaw_link", seg(z, 0.035, [(0, 0, 0), (0, 0, 0.06)], 0.06), "dark_grey")
    r.link("neck_pitch_link", seg(y, 0.035, [], 0.08), "dark_grey")
    r.link(
        "head",
        [sphere(0.10, (0, 0, 0)), box(0.03, 0.12, 0.04, (0.09, 0, 0.01), material="black")],
        "skin",
    )
    r.joint(
        "torso_yaw_joint",
        "revolute",
        "pelvis",
        "torso_yaw_link",
        (0, 0, 0.08),
        axis=z,
        lower=-1.0,
        upper=1.0,
        effort=150,
        velocity=4.0,
    )
    r.joint(
        "torso_pitch_joint",
        "revolute",
        "torso_yaw_link",
        "torso_pitch_link",
        (0, 0, 0.08),
        axis=y,
        lower=-0.4,
        upper=1.2,
        effort=200,
        velocity=4.0,
    )
    r.joint(
        "torso_roll_joint",
        "revolute",
        "torso_pitch_link",
        "torso_roll_link",
        (0, 0, 0.05),
        axis=x,
        lower=-0.5,
        upper=0.5,
        effort=200,
        velocity=4.0,
    )
    r.joint("chest_joint", "fixed", "torso_roll_link", "chest", (0, 0, 0.02))
    r.joint(
        "neck_yaw_joint",
        "revolute",
        "chest",
        "neck_yaw_link",
        (0, 0, 0.36),
        axis=z,
        lower=-1.3,
        upper=1.3,
        effort=20,
        velocity=4.0,
    )
    r.joint(
        "neck_pitch_joint",
        "revolute",
        "neck_yaw_link",
        "neck_pitch_link",
        (0, 0, 0.07),
        axis=y,
        lower=-0.6,
        upper=0.9,
        effort=20,
        velocity=4.0,
    )
    r.joint("head_joint", "fixed", "neck_pitch_link", "head", (0.01, 0, 0.11))

    # ---- left arm ---------------------------------------------------------------------------
    shoulder_tilt = math.radians(15)  # arms hang 15 deg away from the body at q = 0
    r.link("left_shoulder_pitch_link", seg(y, 0.05, [(0, 0, 0), (0, 0.04, 0)], 0.08), "white")
    r.link("left_shoulder_roll_link", seg(x, 0.048, [(0, 0, 0), (0, 0, -0.06)], 0.08), "white")
    r.link("left_shoulder_yaw_link", seg(z, 0.045, [(0, 0, 0), (0, 0, -0.17)], 0.06), "white")
    r.link("left_elbow_link", seg(y, 0.04, [(0, 0, 0), (0, 0, -0.10)], 0.08), "white")
    r.link("left_wrist_yaw_link", seg(z, 0.035, [(0, 0, 0), (0, 0, -0.14)], 0.05), "white")
    r.link("left_wrist_pitch_link", seg(y, 0.03, [], 0.06), "dark_grey")
    r.link("left_wrist_roll_link", seg(x, 0.028, [(0, 0, 0), (0, 0, -0.04)], 0.05), "dark_grey")
    r.link(
        "left_hand",
        [box(0.04, 0.09, 0.10, (0, 0, 0.05)), box(0.03, 0.02, 0.05, (0.025, 0.03, 0.03))],
        "skin",
    )
    r.joint(
        "left_shoulder_pitch_joint",
        "revolute",
        "chest",
        "left_shoulder_pitch_link",
        (0, 0.20, 0.28),
        (shoulder_tilt, 0, 0),
        axis=y,
        lower=-3.0,
        upper=1.0,
        effort=80,
        velocity=5.0,
    )
    r.joint(
        "left_shoulder_roll_joint",
        "revolute",
        "left_shoulder_pitch_link",
        "left_shoulder_roll_link",
        (0, 0.04, 0),
        axis=x,
        lower=-0.3,
        upper=2.8,
        effort=80,
        velocity=5.0,
    )
    r.joint(
        "left_shoulder_yaw_joint",
        "revolute",
        "left_shoulder_roll_link",
        "left_shoulder_yaw_link",
        (0, 0, -0.06),
        axis=z,
        lower=-1.3,
        upper=1.8,
        effort=50,
        velocity=5.0,
    )
    r.joint(
        "left_elbow_joint",
        "revolute",
        "left_shoulder_yaw_link",
        "left_elbow_link",
        (0, 0, -0.22),
        axis=y,
        lower=-2.5,
        upper=0.05,
        effort=50,
        velocity=6.0,
    )
    r.joint(
        "left_wrist_yaw_joint",
        "revolute",
        "left_elbow_link",
        "left_wrist_yaw_link",
        (0, 0, -0.10),
        axis=z,
        lower=-1.6,
        upper=1.6,
        effort=20,
        velocity=6.0,
    )
    r.joint(
        "left_wrist_pitch_joint",
        "revolute",
        "left_wrist_yaw_link",
        "left_wrist_pitch_link",
        (0, 0, -0.14),
        axis=y,
        lower=-1.3,
        upper=1.2,
        effort=15,
        velocity=6.0,
    )
    r.joint(
        "left_wrist_roll_joint",
        "revolute",
        "left_wrist_pitch_link",
        "left_wrist_roll_link",
        axis=x,
        lower=-0.35,
        upper=0.6,
        effort=15,
        velocity=6.0,
    )
    # palm frame: z along the fingers (pointing down the arm), x out of the palm (forward)
    r.joint("left_hand_joint", "fixed", "left_wrist_roll_link", "left_hand", (0, 0, -0.05), (PI, 0, 0))

    r.mirror("left_", "right_")
    return r


ROBOTS = {
    "arm6": build_arm6,
    "arm7": build_arm7,
    "mobile_manipulator": build_mobile_manipulator,
    "dual_arm": build_dual_arm,
    "humanoid": build_humanoid,
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report files that are out of date")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent, help="output folder")
    args = parser.parse_args(argv)
    stale = []
    for name, build in ROBOTS.items():
        path = args.out / f"{name}.urdf"
        text = build().to_xml()
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(path)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    for path in stale:
        print(f"out of date: {path} (run python3 urdf/generate.py)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
