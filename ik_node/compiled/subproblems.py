"""Paden–Kahan subproblems in IK-Geo's linear-algebra form, compiled.

After Elias & Wen, "IK-Geo: Unified robot inverse kinematics using subproblem decomposition",
Mechanism and Machine Theory 196 (2024) 105632 (arXiv:2211.05737), whose subproblems state each
subproblem as a least-squares problem so that it has an answer when no exact one exists:

* SP1 (circle and point): ``min_θ ‖R(k, θ) p1 − p2‖``;
* SP2 (two circles): ``min_{θ1, θ2} ‖R(k1, θ1) p1 − R(k2, θ2) p2‖``;
* SP3 (circle and sphere): ``min_θ | ‖R(k, θ) p1 − p2‖ − d |``;
* SP4 (circle and plane): ``min_θ | hᵀ R(k, θ) p − d |``.

Conventions. Vectors are tuples ``(x, y, z)`` of floats, all in one frame (the base frame where
:mod:`.decompositions` calls them) [m, or unitless for directions]; axes ``k`` are unit vectors;
angles [rad] in (−π, π]. ``R(k, θ) p = (kᵀp) k + cos θ (p − (kᵀp) k) + sin θ (k × p)`` (Rodrigues,
Lynch & Park eq. 3.51, applied to a vector). Every kernel returns its solutions and a *status*,
bit flags: :data:`EXACT` (0), :data:`LEAST_SQUARES` (no exact solution: the least-squares
minimiser is returned) and :data:`FREE` (every θ, or a one-parameter family, is a solution: the
problem is singular there; θ = 0 is returned as the family's representative). Where two
solutions exist they come in a fixed order, the ``+`` root of the quadratic first, so that a
branch keeps its index along a path (away from singularities).
"""

from __future__ import annotations

import math

from .elementary import atan2, sin_cos
from .jit import inner_kernel, kernel

__all__ = [
    "EXACT",
    "FREE",
    "LEAST_SQUARES",
    "SINGULAR_TOLERANCE",
    "add",
    "cross",
    "dot",
    "norm",
    "rotate",
    "rotate_by",
    "scaled",
    "sp1",
    "sp2",
    "sp3",
    "sp4",
    "subtract",
]

#: Status bits of a subproblem's answer (or of an IK branch: the OR of its subproblems').
EXACT = 0
LEAST_SQUARES = 1
FREE = 2

#: Relative size [unitless] below which a vector is taken as parallel to an axis (its component
#: perpendicular to the axis over its length) or two axes as parallel: the angle is then not
#: determined (:data:`FREE`). At 1e-9 rad from such a singularity, θ = 0 instead of the true
#: angle moves the tip by about 1e-9 of the arm's length, far below the solver's tolerances.
SINGULAR_TOLERANCE = 1e-9
#: Relative mismatch [unitless] of lengths or heights above which SP1 and SP2 have no exact
#: solution and answer in the least-squares sense.
LENGTH_TOLERANCE = 1e-9


@kernel
def dot(a, b):
    """``aᵀ b``."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@kernel
def cross(a, b):
    """``a × b``."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@kernel
def add(a, b):
    """``a + b``."""
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@kernel
def subtract(a, b):
    """``a − b``."""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@kernel
def scaled(s, a):
    """``s a`` for a scalar ``s``."""
    return (s * a[0], s * a[1], s * a[2])


@kernel
def norm(a):
    """``‖a‖``."""
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@kernel
def rotate(k, theta, p):
    """``R(k, θ) p`` by Rodrigues' formula (unit ``k``, θ [rad])."""
    sine, cosine = sin_cos(theta)
    return rotate_by(k, sine, cosine, p)


@inner_kernel
def rotate_by(k, sine, cosine, p):
    """``R(k, θ) p`` by Rodrigues' formula given ``sin θ`` and ``cos θ`` (unit ``k``): for
    several vectors turned by one angle, one sine and cosine."""
    along = dot(k, p)
    k_cross_p = cross(k, p)
    return (
        along * k[0] + cosine * (p[0] - along * k[0]) + sine * k_cross_p[0],
        along * k[1] + cosine * (p[1] - along * k[1]) + sine * k_cross_p[1],
        along * k[2] + cosine * (p[2] - along * k[2]) + sine * k_cross_p[2],
    )


@kernel
def sp1(p1, p2, k):
    """Subproblem 1: θ with ``R(k, θ) p1 = p2`` (circle and point): with ``A = [k × p1, −k × (k ×
    p1)]``, ``x = Aᵀ p2`` and ``θ = atan2(x₁, x₂)``, the least-squares minimiser of ``‖R(k, θ) p1 −
    p2‖`` whether or not an exact solution exists. Returns ``(θ, status)``: :data:`LEAST_SQUARES`
    where ``p1`` and ``p2`` differ in their height along ``k`` or their distance from it;
    :data:`FREE` where either lies on the axis."""
    k_cross_p1 = cross(k, p1)
    p1_perpendicular = subtract(p1, scaled(dot(k, p1), k))  # = −k × (k × p1)
    p2_perpendicular = subtract(p2, scaled(dot(k, p2), k))
    radius1, radius2 = norm(p1_perpendicular), norm(p2_perpendicular)
    scale = max(norm(p1), norm(p2), 1.0)
    if radius1 <= SINGULAR_TOLERANCE * scale or radius2 <= SINGULAR_TOLERANCE * scale:
        return 0.0, FREE
    theta = atan2(dot(k_cross_p1, p2), dot(p1_perpendicular, p2))
    mismatch = max(abs(radius1 - radius2), abs(dot(k, p1) - dot(k, p2)))
    return theta, LEAST_SQUARES if mismatch > LENGTH_TOLERANCE * scale else EXACT


@kernel
def sp4(h, p, k, d):
    """Subproblem 4: θ with ``hᵀ R(k, θ) p = d`` (circle and plane). By Rodrigues, ``hᵀ R(k, θ) p =
    (hᵀk)(kᵀp) + a₁ sin θ + a₂ cos θ`` with ``a = (hᵀ(k × p), hᵀ(p − (kᵀp) k))``; with ``b = d −
    (hᵀk)(kᵀp)`` the solutions are ``(sin θ, cos θ) = (a b ± a⊥ √(‖a‖² − b²)) / ‖a‖²``, ``a⊥ =
    (−a₂, a₁)``: two where ``‖a‖² > b²``, else the one least-squares ``(sin θ, cos θ) = a b /
    (‖a‖ |b|)`` (:data:`LEAST_SQUARES`; within :data:`LENGTH_TOLERANCE` of tangency, the double
    root, exact). Returns ``(count, θ₊, θ₋, status)``; :data:`FREE` (count
    1, θ = 0) where ``hᵀ R(k, θ) p`` does not depend on θ (``h`` or ``p`` along ``k``)."""
    along = dot(k, p)
    a1 = dot(h, cross(k, p))
    a2 = dot(h, subtract(p, scaled(along, k)))
    b = d - dot(h, k) * along
    size = a1 * a1 + a2 * a2
    if math.sqrt(size) <= SINGULAR_TOLERANCE * max(norm(h) * norm(p), 1e-300):
        return 1, 0.0, 0.0, FREE
    if b * b - size > LENGTH_TOLERANCE * size:
        sign = 1.0 if b >= 0.0 else -1.0
        theta = atan2(sign * a1, sign * a2)
        return 1, theta, theta, LEAST_SQUARES
    root = math.sqrt(max(size - b * b, 0.0))  # (a tangent plane within rounding: one double root)
    plus = atan2((a1 * b - a2 * root) / size, (a2 * b + a1 * root) / size)
    minus = atan2((a1 * b + a2 * root) / size, (a2 * b - a1 * root) / size)
    return 2, plus, minus, EXACT


@kernel
def sp3(p1, p2, k, d):
    """Subproblem 3: θ with ``‖R(k, θ) p1 − p2‖ = d`` (circle and sphere), as SP4: squaring,
    ``‖p1‖² + ‖p2‖² − 2 p2ᵀ R(k, θ) p1 = d²``, so ``p2ᵀ R(k, θ) p1 = (‖p1‖² + ‖p2‖² − d²) / 2``.
    Returns :func:`sp4`'s ``(count, θ₊, θ₋, status)`` (least squares in ``‖·‖²``)."""
    return sp4(p2, p1, k, 0.5 * (dot(p1, p1) + dot(p2, p2) - d * d))


@kernel
def sp2(p1, p2, k1, k2):
    """Subproblem 2: ``(θ1, θ2)`` with ``R(k1, θ1) p1 = R(k2, θ2) p2`` (two circles). The
    common point ``x`` keeps each vector's height along its axis and its length: ``x = α k1 + β k2
    + γ (k1 × k2)`` with ``α + c β = k1ᵀp1``, ``c α + β = k2ᵀp2`` (``c = k1ᵀk2``) and ``γ² ‖k1 ×
    k2‖² = ‖p1‖² − ‖α k1 + β k2‖²`` (Murray, Li & Sastry, Sec. 3.2.2); then θ1 and θ2 by
    :func:`sp1`. Lengths that differ are first made unit (as IK-Geo does); no real γ gives the
    least-squares ``γ = 0``. Returns ``(count, θ1₊, θ2₊, θ1₋, θ2₋, status)`` (the ``+γ`` pair
    first); :data:`FREE` where ``k1 ∥ k2`` (count 0) or a vector lies on its axis (that angle 0)."""
    length1, length2 = norm(p1), norm(p2)
    status = EXACT
    if abs(length1 - length2) > LENGTH_TOLERANCE * max(length1, length2, 1.0):
        status = LEAST_SQUARES
        p1, p2 = scaled(1.0 / length1, p1), scaled(1.0 / length2, p2)
        length1 = 1.0
    c = dot(k1, k2)
    k1_cross_k2 = cross(k1, k2)
    sine_squared = dot(k1_cross_k2, k1_cross_k2)
    if math.sqrt(sine_squared) <= SINGULAR_TOLERANCE:
        return 0, 0.0, 0.0, 0.0, 0.0, status | FREE
    height1, height2 = dot(k1, p1), dot(k2, p2)
    alpha = (height1 - c * height2) / sine_squared
    beta = (height2 - c * height1) / sine_squared
    in_plane = add(scaled(alpha, k1), scaled(beta, k2))
    gamma_squared = (length1 * length1 - dot(in_plane, in_plane)) / sine_squared
    count = 2
    if gamma_squared < -LENGTH_TOLERANCE * length1 * length1:
        count = 1
        status |= LEAST_SQUARES
    gamma = math.sqrt(max(gamma_squared, 0.0))  # (a tangent within rounding: one double root)
    x_plus = add(in_plane, scaled(gamma, k1_cross_k2))
    x_minus = add(in_plane, scaled(-gamma, k1_cross_k2))
    theta1_plus, status1 = sp1(p1, x_plus, k1)
    theta2_plus, status2 = sp1(p2, x_plus, k2)
    theta1_minus, status3 = sp1(p1, x_minus, k1)
    theta2_minus, status4 = sp1(p2, x_minus, k2)
    status |= (status1 | status2 | status3 | status4) & FREE
    return count, theta1_plus, theta2_plus, theta1_minus, theta2_minus, status
