"""Elementary functions inside compiled code without a call into the C library: ``sin`` and
``cos`` of one angle at once (:func:`sin_cos`) and :func:`atan2`, each within 1 ulp of the C
library's and faster (fdlibm's polynomials, the quadrant by selects rather than branches): every
FK's joint rotations, every pose error and closed-form angle take them.
"""

from __future__ import annotations

import math

from .jit import kernel

#: :func:`sin_cos`'s constants: 2/π, π/2 in two parts (the first exact in 33 bits: ``n π/2``
#: is exact for ``|n| < 2²⁰``), and the minimax polynomials of ``sin`` and ``cos`` on [−π/4, π/4]
#: (fdlibm's ``k_sin.c`` and ``k_cos.c``, error below 1 ulp there).
TWO_OVER_PI = 6.36619772367581382433e-01
HALF_PI_HEAD, HALF_PI_TAIL = 1.57079632673412561417e00, 6.07710050650619224932e-11
SINE_TERMS = (
    -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
    2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10,
)  # fmt: skip
COSINE_TERMS = (
    4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
    -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11,
)  # fmt: skip
#: Beyond this |angle| [rad] :func:`sin_cos` calls the C library (and for NaN and infinities).
SIN_COS_REDUCED_BELOW = 1.0e5


@kernel
def sin_cos(angle):
    """``(sin θ, cos θ)`` of ``angle`` [rad] within 1 ulp of the C library's, about twice as fast
    and without a call into it (a joint's rotation takes both, at every frame of every FK): the
    angle reduced by the nearest multiple ``n`` of π/2 (Cody–Waite, two parts: ``r = θ − n π/2``,
    exact to ~1e-21 rad for ``|θ| < 1e5``), fdlibm's polynomials of ``r`` (``sin r = r + r³ S(r²)``,
    ``cos r = 1 − r²/2 + r⁴ C(r²)``), and the quadrant ``n mod 4`` by selects, not branches (the
    quadrants of a solve's angles are unpredictable). Larger angles, NaN and infinities go to
    ``math.sin``/``math.cos``."""
    if not abs(angle) < SIN_COS_REDUCED_BELOW:
        return math.sin(angle), math.cos(angle)
    quadrant = round(angle * TWO_OVER_PI)
    r = (angle - quadrant * HALF_PI_HEAD) - quadrant * HALF_PI_TAIL
    z = r * r
    s1, s2, s3, s4, s5, s6 = SINE_TERMS
    c1, c2, c3, c4, c5, c6 = COSINE_TERMS
    sine = r + r * z * (s1 + z * (s2 + z * (s3 + z * (s4 + z * (s5 + z * s6)))))
    half_z = 0.5 * z
    w = 1.0 - half_z  # (fdlibm's compensated 1 − z/2: the rounding of w added back)
    cosine = w + (((1.0 - w) - half_z) + z * z * (c1 + z * (c2 + z * (c3 + z * (c4 + z * (c5 + z * c6))))))
    odd = (quadrant & 1) != 0
    sine, cosine = (cosine if odd else sine), (sine if odd else cosine)
    return (-sine if quadrant & 2 else sine), (-cosine if (quadrant + 1) & 2 else cosine)


#: :func:`atan2`'s constants: ``atan(1/2)``, π/4, π/2 and π, each in two parts (head and the rest),
#: and the odd minimax polynomial of ``atan`` on [−7/16, 7/16] (fdlibm's ``s_atan.c``).
ATAN_HALF_PARTS = (4.63647609000806093515e-01, 2.26987774529616870924e-17)
QUARTER_PI_PARTS = (7.85398163397448278999e-01, 3.06161699786838301793e-17)
HALF_PI_PARTS = (1.57079632679489655800e00, 6.12323399573676603587e-17)
PI_PARTS = (3.14159265358979311600e00, 1.22464679914735320717e-16)
ARC_TANGENT_TERMS = (
    3.33333333333329318027e-01, -1.99999999998764832476e-01, 1.42857142725034663711e-01,
    -1.11111104054623557880e-01, 9.09088713343650656196e-02, -7.69187620504482999495e-02,
    6.66107313738753120669e-02, -5.83357013379057348645e-02, 4.97687799461593236017e-02,
    -3.65315727442169155270e-02, 1.62858201153657823623e-02,
)  # fmt: skip


@kernel
def atan2(y, x):
    """``atan2(y, x)`` [rad] within 1 ulp of the C library's, ~1.6× as fast and without a call
    into it (a closed-form set takes ~40: every subproblem's angle and every pose error). With
    ``s ≤ l`` the smaller and larger of ``|x|``, ``|y|``, ``atan(s / l)`` is reduced to ``|u| ≤
    7/16`` as fdlibm's ``atan`` does, but in one division of exact differences (Sterbenz): ``u =
    s / l``, ``(2s − l) / (2l + s)`` (plus ``atan ½``) or ``(s − l) / (s + l)`` (plus π/4), then
    ``atan u = u − u z P(z)``, ``z = u²``; then ``π/2 − ·`` where ``|y| > |x|``, ``π − ·`` where
    ``x < 0``, and ``y``'s sign, by selects (the quadrants of a solve's angles are unpredictable).
    Zeros, infinities and NaN go to ``math.atan2``."""
    ax, ay = abs(x), abs(y)
    if not 0.0 < ax + ay < math.inf:
        return math.atan2(y, x)
    steep = ay > ax
    small, large = (ax, ay) if steep else (ay, ax)
    middle, upper = small >= 0.4375 * large, small >= 0.6875 * large
    numerator = (small - large) if upper else ((2.0 * small - large) if middle else small)
    denominator = (small + large) if upper else ((2.0 * large + small) if middle else large)
    head = QUARTER_PI_PARTS[0] if upper else (ATAN_HALF_PARTS[0] if middle else 0.0)
    tail = QUARTER_PI_PARTS[1] if upper else (ATAN_HALF_PARTS[1] if middle else 0.0)
    u = numerator / denominator
    z = u * u
    w = z * z
    t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10 = ARC_TANGENT_TERMS
    odd = z * (t0 + w * (t2 + w * (t4 + w * (t6 + w * (t8 + w * t10)))))
    even = w * (t1 + w * (t3 + w * (t5 + w * (t7 + w * t9))))
    angle = head - ((u * (odd + even) - tail) - u)
    angle = ((HALF_PI_PARTS[0] - angle) + HALF_PI_PARTS[1]) if steep else angle
    angle = ((PI_PARTS[0] - angle) + PI_PARTS[1]) if x < 0.0 else angle
    return math.copysign(angle, y)
