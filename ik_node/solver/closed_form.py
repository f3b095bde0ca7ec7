"""Which 6R chains have closed-form IK, read from the tree, and their branches.

A serial chain of six revolute joints between the base and one tip is, by the product of
exponentials (Lynch & Park eq. 4.14), ``T(q) = exp([S1] θ1) ⋯ exp([S6] θ6) M`` with ``θ = q −
q_ref``, the screws ``S_i = [v_i; w_i]`` the spatial Jacobian's columns at the reference
configuration ``q_ref`` and ``M = T(q_ref)`` (all in the base frame; m, rad). With joints locked
(a 7-joint chain and one locked joint), ``q_ref`` holds their values and the six free joints'
screws are read there, so the same holds. :func:`decompose` reads each axis ``w_i`` and a point
``c_i = w_i × v_i`` on it, checks the product of exponentials on random configurations (a mimic
joint or a multi-DOF joint fails it), and classifies the axes (as IK-Geo's 6R solvers, Elias & Wen 2024):

* a spherical wrist (axes 4, 5, 6 meet in one point) with axes 2 ∥ 3 (PUMA, KUKA, ABB) or axes 1
  and 2 meeting: :func:`~ik_node.compiled.decompositions.spherical_two_parallel`,
  :func:`~ik_node.compiled.decompositions.spherical_two_intersecting`;
* axes 2 ∥ 3 ∥ 4 and axes 5, 6 meeting (Universal Robots):
  :func:`~ik_node.compiled.decompositions.three_parallel_two_intersecting`.

Axes within :data:`EXACT_TOLERANCE` of such a geometry are solved as they are. Axes within
:data:`NEAR_TOLERANCE` (a calibrated URDF) are snapped to the nearest such geometry (parallel axes
made parallel to axis 2, meeting axes through their least-squares common point): its branches are
seeds that the caller polishes on the real tree.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..compiled import decompositions, solution_sets
from ..lie import inverse

__all__ = [
    "BRANCH_ROOTS",
    "EXACT_TOLERANCE",
    "NEAR_TOLERANCE",
    "Branches",
    "ClosedForm",
    "branch_labels",
    "decompose",
    "screw_motion",
]

#: The two-root subproblems a branch label names, each with its root (``+`` or ``-``), in every
#: decomposition (in another order per kernel: ``('shoulder+', 'wrist-', 'elbow+')``).
BRANCH_ROOTS = tuple(dict.fromkeys(root for roots in decompositions.BRANCH_BITS.values() for root in roots))
#: Geometry within this of a decomposable one [rad for axis directions, m for axis distances]
#: is solved as it is: its branches' FK residual is of this order, far below the tolerances.
EXACT_TOLERANCE = 1e-9
#: Geometry within this [rad, m] is snapped to the decomposable one and its branches polished.
NEAR_TOLERANCE = 1e-3
#: The product of exponentials must reproduce the tree's FK to this [m, rad] (else: no closed form).
MODEL_TOLERANCE = 1e-9
#: Random configurations the product-of-exponentials model is checked on.
MODEL_CHECKS = 3


def screw_motion(screw: np.ndarray, theta: float) -> np.ndarray:
    """``exp([S] θ)`` (4x4) of a unit revolute screw ``S = [v; w]`` (‖w‖ = 1) by an angle θ [rad]
    (Lynch & Park Prop. 3.25)."""
    v, w = screw[:3], screw[3:]
    W = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    rotation = np.eye(3) + math.sin(theta) * W + (1.0 - math.cos(theta)) * W @ W
    motion = np.eye(4)
    motion[:3, :3] = rotation
    motion[:3, 3] = (np.eye(3) * theta + (1.0 - math.cos(theta)) * W + (theta - math.sin(theta)) * W @ W) @ v
    return motion


def _line_gap(w1, c1, w2, c2) -> float:
    """Distance [m] between the lines through ``c1`` along ``w1`` and ``c2`` along ``w2``
    (unit, not parallel)."""
    normal = np.cross(w1, w2)
    return abs(float((c2 - c1) @ normal)) / float(np.linalg.norm(normal))


def _common_point(directions, points) -> tuple[np.ndarray, float]:
    """The least-squares common point of lines (unit ``directions``, ``points`` on them) and its
    largest distance [m] from them: ``Σ (I − w wᵀ) x = Σ (I − w wᵀ) c``."""
    projectors = [np.eye(3) - np.outer(w, w) for w in directions]
    point = np.linalg.solve(sum(projectors), sum(P @ c for P, c in zip(projectors, points)))
    return point, max(float(np.linalg.norm(P @ (point - c))) for P, c in zip(projectors, points))


def _parallel_gap(w1, w2) -> float:
    """The angle [rad] between two axes as lines (0: parallel or anti-parallel)."""
    return float(np.linalg.norm(np.cross(w1, w2)))


def _along(w, reference) -> np.ndarray:
    """``reference`` with the sign that points it along ``w`` (a parallel axis snapped onto it)."""
    return reference if w @ reference >= 0 else -reference


def _candidates(w: np.ndarray, c: np.ndarray):
    """``(kernel name, deviation [rad, m], axes, points)`` for each geometry the axes are near:
    the snapped axes and the points of the nominal model (see :mod:`..compiled.decompositions`)."""
    distinct = all(_parallel_gap(w[i], w[i + 1]) > NEAR_TOLERANCE for i in (0, 3, 4))
    if not distinct:
        return
    wrist, wrist_gap = _common_point(w[3:], c[3:])
    if _parallel_gap(w[1], w[2]) <= NEAR_TOLERANCE and wrist_gap <= NEAR_TOLERANCE:
        axes, points = w.copy(), c.copy()
        axes[2] = _along(w[2], w[1])
        points[3:] = wrist
        yield "spherical_two_parallel", max(_parallel_gap(w[1], w[2]), wrist_gap), axes, points
    if _parallel_gap(w[0], w[1]) > NEAR_TOLERANCE and _line_gap(w[0], c[0], w[1], c[1]) <= NEAR_TOLERANCE:
        shoulder, shoulder_gap = _common_point(w[:2], c[:2])
        if wrist_gap <= NEAR_TOLERANCE:
            points = c.copy()
            points[:2], points[3:] = shoulder, wrist
            yield "spherical_two_intersecting", max(shoulder_gap, wrist_gap), w.copy(), points
    parallel_gap = max(_parallel_gap(w[1], w[2]), _parallel_gap(w[1], w[3]))
    if parallel_gap <= NEAR_TOLERANCE and _parallel_gap(w[1], w[4]) > NEAR_TOLERANCE:
        elbow_wrist, gap = _common_point(w[4:], c[4:])
        if gap <= NEAR_TOLERANCE:
            axes, points = w.copy(), c.copy()
            axes[2], axes[3] = _along(w[2], w[1]), _along(w[3], w[1])
            points[4:] = elbow_wrist
            yield "three_parallel_two_intersecting", max(parallel_gap, gap), axes, points


@dataclass(frozen=True)
class Branches:
    """The branches of one target: ``q`` (k, nq) full configurations (solver joint order, rad),
    ``status`` (k,) bits (:data:`~ik_node.compiled.subproblems.LEAST_SQUARES`,
    :data:`~ik_node.compiled.subproblems.FREE`), ``branch`` (k,) the kernel's choice of roots and
    ``root_names`` what its bits choose (:data:`~ik_node.compiled.decompositions.BRANCH_BITS`)."""

    q: np.ndarray
    status: np.ndarray
    branch: np.ndarray
    root_names: tuple


@functools.cache
def branch_labels(root_names: tuple) -> tuple:
    """The labels of the 8 choices of roots (index: a kernel's ``branch`` code), bit 2 (value 4)
    the first of ``root_names``, set for its ``−`` root."""
    return tuple(
        tuple(name + ("-" if code >> (2 - bit) & 1 else "+") for bit, name in enumerate(root_names))
        for code in range(decompositions.MAX_BRANCHES)
    )


class ClosedForm:
    """A chain's nominal decomposable geometry and its kernel: ``kind`` (the kernel's name; its
    code ``code``, :data:`~ik_node.compiled.decompositions.DECOMPOSITION_CODES`), ``joints``
    (indices of the six solved joints in the solver's order, in the kernel's order),
    ``reference`` (q_ref, nq), ``deviation`` [rad, m] of the real axes from the nominal ones,
    ``exact`` (deviation within :data:`EXACT_TOLERANCE`: the branches need no polish), ``length``
    [m] the sum of the offsets' lengths (at least 1: the scale a direction's deviation moves the
    tip by), ``inverted``: the kernel solves the chain read from the tool back (see
    :func:`decompose`: targets are inverted, ``joints`` reversed, the labels' shoulder and wrist
    swapped back)."""

    def __init__(
        self, kind: str, joints, reference, axes, points, tool: np.ndarray, deviation: float,
        inverted: bool = False,
    ):  # fmt: skip
        self.kind, self.joints, self.reference = kind, np.asarray(joints, dtype=np.int64), reference
        self.inverted = inverted
        self.deviation, self.exact = deviation, deviation <= EXACT_TOLERANCE
        self.axes = np.ascontiguousarray(axes)
        self.offsets = np.ascontiguousarray(
            np.vstack((points[:1], np.diff(points, axis=0), tool[None, :3, 3] - points[5:]))
        )
        self.tool_rotation = np.ascontiguousarray(tool[:3, :3])
        self.length = max(1.0, float(np.linalg.norm(self.offsets, axis=1).sum()))
        self.kernel = getattr(decompositions, kind)
        self.code = np.int64(decompositions.DECOMPOSITION_CODES[kind])  # (the compiled sets' kind)
        roots = decompositions.BRANCH_BITS[kind]
        swapped = {"shoulder": "wrist", "wrist": "shoulder", "elbow": "elbow"}
        self.root_names = tuple(swapped[root] for root in roots) if inverted else roots
        self._no_hint = np.zeros(6)

    def __repr__(self) -> str:
        return f"ClosedForm({self.kind!r}, deviation={self.deviation:.1e})"

    def hint(self, seed: np.ndarray | None) -> np.ndarray:
        """The angles (6,) a singularity's free joint takes: ``seed``'s (nq,) about the reference,
        else 0."""
        if seed is None:
            return self._no_hint
        return np.ascontiguousarray(seed[self.joints] - self.reference[self.joints])

    def solve(self, target: np.ndarray, seed: np.ndarray | None = None) -> tuple:
        """The decomposition kernel's output for ``target`` (4x4 ``T_base_point``, C-contiguous
        floats): ``(angles (8, 6) [rad] about the reference, count, status (8,), branch (8,))``,
        the first ``count`` rows written; where a singularity leaves a joint free, it is at its
        value in ``seed`` (nq,; default the reference's)."""
        angles = np.empty((decompositions.MAX_BRANCHES, 6))  # (per call: a solver serves threads)
        status = np.empty(decompositions.MAX_BRANCHES, dtype=np.int64)
        branch = np.empty(decompositions.MAX_BRANCHES, dtype=np.int64)
        if self.inverted:
            target = inverse(target)
        count = self.kernel(
            self.axes, self.offsets, self.tool_rotation, target, self.hint(seed), angles, status, branch
        )
        return angles, count, status, branch

    def branches(self, target: np.ndarray, seed: np.ndarray | None = None) -> Branches:
        """Every branch of the nominal geometry for ``target`` (as :meth:`solve`) as full
        configurations, angles wrapped into [−π, π) about the reference."""
        angles, count, status, branch = self.solve(target, seed)
        q = solution_sets.branch_configurations(angles, count, self.reference, self.joints)
        return Branches(q, status[:count], branch[:count], self.root_names)


def decompose(tree, tool_pose, free: list[int], reference: np.ndarray) -> ClosedForm | None:
    """The :class:`ClosedForm` of ``tree``'s chain with joints ``free`` (six indices into its
    joint names; the others held at ``reference``), or None where its axes are not within
    :data:`NEAR_TOLERANCE` of a decomposable geometry, it is not a chain of six revolute joints
    or its FK is not their product of exponentials. ``tool_pose(q)``: the controlled point's
    pose (4x4, base frame) at ``q``."""
    if len(free) != 6 or len(tree.tangent_names) != len(tree.joint_names):
        return None
    screws = tree.spatial_jacobian(reference)[:, free].T  # (6, 6): rows [v; w]
    w, v = screws[:, 3:], screws[:, :3]
    if not np.allclose(np.linalg.norm(w, axis=1), 1.0, rtol=0.0, atol=MODEL_TOLERANCE):
        return None  # (a prismatic joint, or a mimic multiplier)
    tool = tool_pose(reference)
    if not _product_of_exponentials_holds(tree, tool_pose, screws, free, reference, tool):
        return None
    points = np.cross(w, v)
    best = min(_candidates(w, points), key=lambda candidate: candidate[1], default=None)
    if best is not None:
        kind, deviation, axes, nominal_points = best
        return ClosedForm(kind, free, reference, axes, nominal_points, tool, deviation)
    # From the tool back (Lynch & Park eq. 3.85, Ad of the inverse): T⁻¹ = exp([S6']θ6) ⋯
    # exp([S1']θ1) M⁻¹ with S_i' = −Ad(M⁻¹) S_i, an axis −Rᵀw_i through the point M⁻¹ c_i; a chain
    # whose first three axes meet (a spherical shoulder, e.g. a Panda with joint 7 locked) has
    # a spherical wrist read so.
    rotation, position = tool[:3, :3], tool[:3, 3]
    back_axes, back_points = -(w @ rotation)[::-1], ((points - position) @ rotation)[::-1]
    best = min(_candidates(back_axes, back_points), key=lambda candidate: candidate[1], default=None)
    if best is None:
        return None
    kind, deviation, axes, nominal_points = best
    return ClosedForm(kind, free[::-1], reference, axes, nominal_points, inverse(tool), deviation, True)


def _product_of_exponentials_holds(tree, tool_pose, screws, free, reference, tool) -> bool:
    """Whether ``exp([S1] θ1) ⋯ exp([S6] θ6) M`` is the tree's FK on :data:`MODEL_CHECKS` random
    configurations (θ uniform in [−π, π], seeded: the answer is the same at every call)."""
    rng = np.random.default_rng(0)
    for _ in range(MODEL_CHECKS):
        theta = rng.uniform(-np.pi, np.pi, 6)
        q = reference.copy()
        q[free] += theta
        model = np.eye(4)
        for screw, angle in zip(screws, theta):
            model = model @ screw_motion(screw, angle)
        scale = max(1.0, float(np.abs(tool).max()))
        if not np.allclose(model @ tool, tool_pose(q), rtol=0.0, atol=MODEL_TOLERANCE * scale):
            return False
    return True
