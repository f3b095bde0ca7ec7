"""Every inverse-kinematics branch of 6R arms whose axes decompose into subproblems, compiled.

The arm in IK-Geo's product-of-exponentials form (Elias & Wen, "IK-Geo: Unified robot inverse
kinematics using subproblem decomposition", MMT 196 (2024) 105632), all in the base frame at
the reference configuration, units m and rad:

    R_0T = R(h1, θ1) ⋯ R(h6, θ6) R_6T,
    p_0T = p_01 + R_01 p_12 + R_02 p_23 + ⋯ + R_05 p_56 + R_06 p_6T,     R_0i = R(h1, θ1) ⋯ R(hi, θi),

``axes`` (6, 3): the unit axes ``h_i``; ``offsets`` (7, 3): ``p_01`` (base origin to a point on
axis 1), ``p_i,i+1`` (a point on axis i to one on axis i+1), ``p_6T`` (axis 6's point to the tool
point); ``tool_rotation`` (3, 3): ``R_6T``; ``target`` (4, 4): ``T_0T``; ``hint`` (6,): θ where a
singularity leaves a joint free (the shoulder's θ1 with the wrist centre on axis 1, the wrist's θ4
or, for three parallel axes, θ6 with the wrist at zero): the family's member reported is the one
with that joint at its hint (the seed's value, for the solution nearest the seed). Each kernel
writes up to
:data:`MAX_BRANCHES` rows of θ into ``q_out`` (8, 6), their status bits (:mod:`.subproblems`:
least squares, free) into ``status_out`` (8,) and their choice of roots into ``branch_out`` (8,),
and returns how many rows it wrote. A branch's choice has one bit per two-root subproblem, set
for its ``−`` root: bit 2 (value 4) for the first solved, bit 0 for the last (what they choose:
:data:`BRANCH_BITS`).

The points the kernels assume (the caller picks them on the axes): ``spherical_two_parallel`` and
``spherical_two_intersecting``: axes 4, 5, 6 meet at one point (the wrist centre, so ``p_45 =
p_56 = 0``); the latter also ``p_12 = 0`` (axes 1 and 2 meet). ``three_parallel_two_intersecting``:
``p_56 = 0`` (axes 5 and 6 meet).
"""

from __future__ import annotations

from .elementary import sin_cos
from .jit import inner_kernel, kernel
from .subproblems import FREE, add, dot, norm, rotate, rotate_by, scaled, sp1, sp2, sp3, sp4, subtract

__all__ = [
    "BRANCH_BITS",
    "DECOMPOSITION_CODES",
    "MAX_BRANCHES",
    "as_solved",
    "branches_of",
    "spherical_two_intersecting",
    "spherical_two_parallel",
    "three_parallel_two_intersecting",
]

#: At most this many branches (2 × 2 × 2 roots).
MAX_BRANCHES = 8
#: What the bits of a branch's index choose, highest first, per kernel (the ``−`` root where set).
BRANCH_BITS = {
    "spherical_two_parallel": ("shoulder", "elbow", "wrist"),
    "spherical_two_intersecting": ("elbow", "shoulder", "wrist"),
    "three_parallel_two_intersecting": ("shoulder", "wrist", "elbow"),
}


@kernel
def row(array, index):
    """Row ``index`` of an (n, 3) array as a vector tuple."""
    return (array[index, 0], array[index, 1], array[index, 2])


@kernel
def times(rotation, v):
    """``R v`` for a (3, 3) array ``R``."""
    return (
        rotation[0, 0] * v[0] + rotation[0, 1] * v[1] + rotation[0, 2] * v[2],
        rotation[1, 0] * v[0] + rotation[1, 1] * v[1] + rotation[1, 2] * v[2],
        rotation[2, 0] * v[0] + rotation[2, 1] * v[1] + rotation[2, 2] * v[2],
    )


@inner_kernel
def transposed_times(rotation, v):
    """``Rᵀ v`` for a (3, 3) array ``R``."""
    return (
        rotation[0, 0] * v[0] + rotation[1, 0] * v[1] + rotation[2, 0] * v[2],
        rotation[0, 1] * v[0] + rotation[1, 1] * v[1] + rotation[2, 1] * v[2],
        rotation[0, 2] * v[0] + rotation[1, 2] * v[1] + rotation[2, 2] * v[2],
    )


@inner_kernel
def wrist_rotation(target, tool_rotation, v):
    """``R_06 v = R_0T R_6Tᵀ v``."""
    return times(target, transposed_times(tool_rotation, v))


@inner_kernel
def wrist_rotation_transposed(target, tool_rotation, v):
    """``R_06ᵀ v = R_6T R_0Tᵀ v``."""
    return times(tool_rotation, transposed_times(target, v))


@inner_kernel
def wrist_axes(axes, target, tool_rotation):
    """``(R_06 h5, R_06 h6)``: a spherical wrist's last two axes at the target, in the base frame
    (the same for every branch: :func:`spherical_wrist` takes them)."""
    h5, h6 = row(axes, 4), row(axes, 5)
    return wrist_rotation(target, tool_rotation, h5), wrist_rotation(target, tool_rotation, h6)


@inner_kernel
def unrotate_three(axes, q, u, v):
    """``(R_03ᵀ u, R_03ᵀ v)``, ``R_03ᵀ = R(h3, −θ3) R(h2, −θ2) R(h1, −θ1)``: one sine and cosine
    for each angle."""
    for i in range(3):
        sine, cosine = sin_cos(-q[i])
        u = rotate_by(row(axes, i), sine, cosine, u)
        v = rotate_by(row(axes, i), sine, cosine, v)
    return u, v


@inner_kernel
def spherical_wrist(axes, wrist_h5, wrist_h6, q, hint, first, q_out, status_out, branch_out, status, branch):
    """θ4, θ5, θ6 of a spherical wrist for a branch whose θ1..θ3 are ``q[0:3]``, given ``R_06 h5``
    and ``R_06 h6`` (the target's, the same for every branch): SP2 for (θ4, θ5) from ``R(h4, θ4)
    R(h5, θ5) h6 = R_03ᵀ R_06 h6``, then SP1 for θ6 from ``R(h6, θ6) h5 = R_05ᵀ R_06 h5``
    (IK-Geo's spherical wrist; θ4 at ``hint[3]`` where free). Writes rows ``first`` and ``first +
    1`` (both roots of SP2, the second a copy of the first where SP2 has one, with ``status`` and
    the choice ``2 branch + root``); returns their count (2)."""
    h4, h5, h6 = row(axes, 3), row(axes, 4), row(axes, 5)
    wrist_h5, wrist_h6 = unrotate_three(axes, q, wrist_h5, wrist_h6)
    count, q4_plus, q5_plus, q4_minus, q5_minus, wrist_status = sp2(wrist_h6, h6, scaled(-1.0, h4), h5)
    if count == 0:  # (h4 ∥ h5: not a wrist the caller sends here)
        q4_plus = q5_plus = q4_minus = q5_minus = 0.0
    if wrist_status & FREE:  # (R_03ᵀ R_06 h6 along h4: θ4 free, θ6 takes up the rest)
        q4_plus = q4_minus = hint[3]
    if count < 2:
        q4_minus, q5_minus = q4_plus, q5_plus
    for offset, q4, q5 in ((0, q4_plus, q5_plus), (1, q4_minus, q5_minus)):
        seen_h5 = rotate(h5, -q5, rotate(h4, -q4, wrist_h5))
        q6, last_status = sp1(h5, seen_h5, h6)
        index = first + offset
        q_out[index, 0], q_out[index, 1], q_out[index, 2] = q[0], q[1], q[2]
        q_out[index, 3], q_out[index, 4], q_out[index, 5] = q4, q5, q6
        status_out[index] = status | wrist_status | last_status
        branch_out[index] = 2 * branch + offset
    return 2


@kernel
def spherical_two_parallel(axes, offsets, tool_rotation, target, hint, q_out, status_out, branch_out):
    """Every branch of a 6R arm with a spherical wrist and axes 2 ∥ 3 (PUMA, KUKA KR, ABB IRB
    type; IK-Geo's ``IK_spherical_2_parallel``). With the wrist centre ``p_1W = p_0T − R_06 p_6T −
    p_01``: θ1 by SP4 from ``h2ᵀ R(h1, −θ1) p_1W = h2ᵀ(p_12 + p_23 + p_34)`` (rotations about
    h2 = ±h3 keep the height along h2), θ3 by SP3 from ``‖p_23 + R(h3, θ3) p_34‖ = ‖R(h1, −θ1)
    p_1W − p_12‖``, θ2 by SP1, then :func:`spherical_wrist`. Returns the branch count."""
    h1, h2, h3 = row(axes, 0), row(axes, 1), row(axes, 2)
    p01, p12, p23, p34 = row(offsets, 0), row(offsets, 1), row(offsets, 2), row(offsets, 3)
    p6t = row(offsets, 6)
    tool_point = (target[0, 3], target[1, 3], target[2, 3])
    wrist = subtract(subtract(tool_point, wrist_rotation(target, tool_rotation, p6t)), p01)
    wrist_h5, wrist_h6 = wrist_axes(axes, target, tool_rotation)
    height = dot(h2, add(add(p12, p23), p34))
    count1, q1_plus, q1_minus, status1 = sp4(h2, wrist, scaled(-1.0, h1), height)
    if status1 & FREE:  # (the wrist centre on axis 1)
        q1_plus = q1_minus = hint[0]
    found = 0
    for shoulder in range(count1):
        q1 = q1_plus if shoulder == 0 else q1_minus
        elbow_to_wrist = subtract(rotate(h1, -q1, wrist), p12)
        count3, q3_plus, q3_minus, status3 = sp3(p34, scaled(-1.0, p23), h3, norm(elbow_to_wrist))
        for elbow in range(count3):
            q3 = q3_plus if elbow == 0 else q3_minus
            q2, status2 = sp1(add(p23, rotate(h3, q3, p34)), elbow_to_wrist, h2)
            found += spherical_wrist(
                axes, wrist_h5, wrist_h6, (q1, q2, q3), hint, found, q_out, status_out, branch_out,
                status1 | status3 | status2, 2 * shoulder + elbow,
            )  # fmt: skip
    return found


@kernel
def spherical_two_intersecting(axes, offsets, tool_rotation, target, hint, q_out, status_out, branch_out):
    """Every branch of a 6R arm with a spherical wrist whose axes 1 and 2 meet (IK-Geo's
    ``IK_spherical_2_intersecting``): θ3 by SP3 from ``‖p_23 + R(h3, θ3) p_34‖ = ‖p_1W‖`` (the
    shoulder point to the wrist centre, ``p_12 = 0``), (θ1, θ2) by SP2 from ``R(h1, θ1) R(h2, θ2)
    (p_23 + R(h3, θ3) p_34) = p_1W``, then :func:`spherical_wrist`. Returns the branch count."""
    h1, h2, h3 = row(axes, 0), row(axes, 1), row(axes, 2)
    p01, p23, p34, p6t = row(offsets, 0), row(offsets, 2), row(offsets, 3), row(offsets, 6)
    tool_point = (target[0, 3], target[1, 3], target[2, 3])
    wrist = subtract(subtract(tool_point, wrist_rotation(target, tool_rotation, p6t)), p01)
    wrist_h5, wrist_h6 = wrist_axes(axes, target, tool_rotation)
    count3, q3_plus, q3_minus, status3 = sp3(p34, scaled(-1.0, p23), h3, norm(wrist))
    found = 0
    for elbow in range(count3):
        q3 = q3_plus if elbow == 0 else q3_minus
        arm = add(p23, rotate(h3, q3, p34))
        count12, q1_plus, q2_plus, q1_minus, q2_minus, status12 = sp2(wrist, arm, scaled(-1.0, h1), h2)
        if status12 & FREE:  # (the wrist centre on axis 1)
            q1_plus = q1_minus = hint[0]
        for shoulder in range(count12):
            q1, q2 = (q1_plus, q2_plus) if shoulder == 0 else (q1_minus, q2_minus)
            found += spherical_wrist(
                axes, wrist_h5, wrist_h6, (q1, q2, q3), hint, found, q_out, status_out, branch_out,
                status3 | status12, 2 * elbow + shoulder,
            )  # fmt: skip
    return found


@kernel
def three_parallel_two_intersecting(
    axes, offsets, tool_rotation, target, hint, q_out, status_out, branch_out
):
    """Every branch of a 6R arm with axes 2 ∥ 3 ∥ 4 and axes 5, 6 meeting (Universal Robots type;
    IK-Geo's ``IK_3_parallel_2_intersecting``). With ``p_16 = p_0T − R_06 p_6T − p_01`` and ``R_14``
    a rotation about h2: θ1 by SP4 from ``h2ᵀ R(h1, −θ1) p_16 = h2ᵀ(p_12 + p_23 + p_34 + p_45)``;
    (θ5, θ6) by SP2 from ``R(h5, −θ5) h2 = R(h6, θ6) R_06ᵀ R_01 h2`` (``h2ᵀ R_14 = h2ᵀ``); θ3 by
    SP3 and θ2 by SP1 from ``R(h2, θ2)(p_23 + R(h3, θ3) p_34) = R_01ᵀ p_16 − R_14 p_45 − p_12``;
    θ4 by SP1 from ``R(h4, θ4) h5 = R_13ᵀ R_14 h5``. Returns the branch count."""
    h1, h2, h3 = row(axes, 0), row(axes, 1), row(axes, 2)
    h4, h5, h6 = row(axes, 3), row(axes, 4), row(axes, 5)
    p01, p12, p23, p34, p45, p6t = (
        row(offsets, 0), row(offsets, 1), row(offsets, 2), row(offsets, 3), row(offsets, 4), row(offsets, 6)
    )  # fmt: skip
    tool_point = (target[0, 3], target[1, 3], target[2, 3])
    p16 = subtract(subtract(tool_point, wrist_rotation(target, tool_rotation, p6t)), p01)
    height = dot(h2, add(add(add(p12, p23), p34), p45))
    count1, q1_plus, q1_minus, status1 = sp4(h2, p16, scaled(-1.0, h1), height)
    if status1 & FREE:
        q1_plus = q1_minus = hint[0]
    found = 0
    for shoulder in range(count1):
        q1 = q1_plus if shoulder == 0 else q1_minus
        sine1, cosine1 = sin_cos(q1)
        seen_h2 = wrist_rotation_transposed(target, tool_rotation, rotate_by(h1, sine1, cosine1, h2))
        count56, q5_plus, q6_plus, q5_minus, q6_minus, status56 = sp2(h2, seen_h2, scaled(-1.0, h5), h6)
        if status56 & FREE:  # (the wrist at zero: R_06ᵀ R_01 h2 along h6, θ6 free)
            q6_plus = q6_minus = hint[5]
        p16_at_1 = rotate_by(h1, -sine1, cosine1, p16)  # R_01ᵀ p_16
        for wrist in range(count56):
            q5, q6 = (q5_plus, q6_plus) if wrist == 0 else (q5_minus, q6_minus)
            # R_14 v = R_01ᵀ R_06 R(h6, −θ6) R(h5, −θ5) v
            sine6, cosine6 = sin_cos(-q6)
            p45_at_6 = rotate_by(h6, sine6, cosine6, rotate(h5, -q5, p45))
            r14_p45 = rotate_by(h1, -sine1, cosine1, wrist_rotation(target, tool_rotation, p45_at_6))
            r14_h5 = rotate_by(
                h1, -sine1, cosine1, wrist_rotation(target, tool_rotation, rotate_by(h6, sine6, cosine6, h5))
            )
            arm = subtract(subtract(p16_at_1, r14_p45), p12)
            count3, q3_plus, q3_minus, status3 = sp3(p34, scaled(-1.0, p23), h3, norm(arm))
            for elbow in range(count3):
                q3 = q3_plus if elbow == 0 else q3_minus
                q2, status2 = sp1(add(p23, rotate(h3, q3, p34)), arm, h2)
                q4, status4 = sp1(h5, rotate(h3, -q3, rotate(h2, -q2, r14_h5)), h4)
                q_out[found, 0], q_out[found, 1], q_out[found, 2] = q1, q2, q3
                q_out[found, 3], q_out[found, 4], q_out[found, 5] = q4, q5, q6
                status_out[found] = status1 | status56 | status3 | status2 | status4
                branch_out[found] = 4 * shoulder + 2 * wrist + elbow
                found += 1
    return found


#: The decomposition kernels' codes (:func:`branches_of`' ``kind``), by name.
DECOMPOSITION_CODES = {
    "spherical_two_parallel": 0,
    "spherical_two_intersecting": 1,
    "three_parallel_two_intersecting": 2,
}


@inner_kernel
def branches_of(kind, axes, offsets, tool_rotation, target, hint, angles, status, branch):
    """The branches (count returned) of decomposition ``kind`` (:data:`DECOMPOSITION_CODES`) for
    ``target``, as its kernel writes them: one compiled entry for every kind."""
    if kind == 0:
        return spherical_two_parallel(axes, offsets, tool_rotation, target, hint, angles, status, branch)
    if kind == 1:
        return spherical_two_intersecting(axes, offsets, tool_rotation, target, hint, angles, status, branch)
    return three_parallel_two_intersecting(axes, offsets, tool_rotation, target, hint, angles, status, branch)


@inner_kernel
def as_solved(target, inverted, out):
    """``target`` (4x4) into ``out`` as the decomposition solves it: itself, or for an
    ``inverted`` chain (read from the tool back) its inverse ``(Rᵀ, −Rᵀ p)``."""
    for i in range(4):
        for j in range(4):
            out[i, j] = target[j, i] if inverted and i < 3 and j < 3 else target[i, j]
    if inverted:
        for i in range(3):
            out[i, 3] = -(
                target[0, i] * target[0, 3] + target[1, i] * target[1, 3] + target[2, i] * target[2, 3]
            )
