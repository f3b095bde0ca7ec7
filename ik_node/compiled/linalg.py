"""Small dense linear algebra as loops: the LDL^T solve, the damped (singularity-robust) step, the
null-space projection, the task-priority step before limits, and the pseudo-inverse by a singular
value decomposition (one-sided Jacobi)."""

from __future__ import annotations

import math

import numpy as np

from .bundles import FIRST_ROW, GRAM, IMAGE, PROJECTED, SECONDARY, SOLUTION
from .jit import allocating_kernel, inline_kernel, inner_kernel, kernel, reduction_kernel

#: Regularisation of the null-space projector's pseudo-inverse [m^2 or rad^2].
NULL_SPACE_REGULARISATION = 1e-10
#: One-sided Jacobi counts two rows orthogonal once ``|r_p . r_q| <= JACOBI_TOLERANCE |r_p| |r_q|``
#: (a few units of double rounding: the singular values then have high relative accuracy, Demmel &
#: Veselic 1992).
JACOBI_TOLERANCE = 1e-15
#: Sweeps over every pair of rows at most (the rule converges quadratically: a 6 x 7 Jacobian takes
#: ~6); a bound against a cycle of rounding, never reached in practice.
JACOBI_SWEEPS = 60
#: Singular values at most this share of the largest count as zero in a pseudo-inverse
#: (``numpy.linalg.pinv``'s default ``rcond``).
PSEUDO_INVERSE_CUTOFF = 1e-15


@kernel
def ldl_factor(matrix, size):
    """Factor the SPD ``A = matrix[:size, :size]`` (its diagonal and lower triangle read) in
    place as ``A = L D L^T`` (``L`` unit lower triangular, ``D`` diagonal), left-looking (Crout;
    Golub & Van Loan, Algorithm 4.1.1): ``d_j = a_jj - sum_k l_jk^2 d_k`` and
    ``l_ij = (a_ij - sum_k l_ik (l_jk d_k)) / d_j`` (k < j), each sum along two rows (contiguous
    in C order; ``l_jk d_k`` left in row ``j``'s lower part once its column is done). ``L^T``
    overwrites the strict upper triangle and ``1 / D`` the diagonal (what
    :func:`ldl_substitute` and :func:`ldl_rank_one` read). No square roots, two divisions per
    column; a humanoid's 30 x 30 took 10.6 us down the columns of a right-looking
    factorisation, 6.1 us so (with the substitutions). Returns False if ``A`` is not positive
    definite to working precision."""
    for j in range(size):
        diagonal = matrix[j, j]
        for k in range(j):  # row j: l_jk -> l_jk d_k, and l_jk into L^T
            lower = matrix[j, k]
            scaled = lower * matrix[k, k]
            diagonal -= lower * scaled
            matrix[j, k] = scaled
            matrix[k, j] = lower
        if not diagonal > 0.0:
            return False
        matrix[j, j] = diagonal
        inverse = 1.0 / diagonal
        for i in range(j + 1, size):
            value = matrix[i, j]
            for k in range(j):
                value -= matrix[i, k] * matrix[j, k]
            matrix[i, j] = value * inverse
    for i in range(size):
        matrix[i, i] = 1.0 / matrix[i, i]
    return True


@kernel
def ldl_substitute(matrix, rhs, size):
    """``x = A^-1 b`` in place of ``rhs[:size]`` from :func:`ldl_factor`'s factors in
    ``matrix`` (``L^T`` in the strict upper triangle, ``1 / D`` on the diagonal): ``L y = b``,
    ``z = D^-1 y``, ``L^T x = z``, each along rows of ``L^T``."""
    for k in range(size):  # L y = b, by columns of L (rows of L^T)
        value = rhs[k]
        for i in range(k + 1, size):
            rhs[i] -= matrix[k, i] * value
    for i in range(size):  # D z = y
        rhs[i] *= matrix[i, i]
    for i in range(size - 1, -1, -1):  # L^T x = z
        value = rhs[i]
        for k in range(i + 1, size):
            value -= matrix[i, k] * rhs[k]
        rhs[i] = value


@kernel
def ldl_solve(matrix, rhs, size):
    """Solve ``A x = b`` for the SPD ``A = matrix[:size, :size]`` (diagonal and lower triangle
    read) in place: :func:`ldl_factor`, then :func:`ldl_substitute` into ``rhs[:size]``. Returns
    False (and ``x = 0``) if ``A`` is not positive definite to working precision."""
    if not ldl_factor(matrix, size):
        for i in range(size):
            rhs[i] = 0.0
        return False
    ldl_substitute(matrix, rhs, size)
    return True


@kernel
def ldl_rank_one(matrix, size, vector, alpha):
    """Update :func:`ldl_factor`'s factors in ``matrix`` to those of ``A + alpha z z^T`` (``z`` =
    ``vector[:size]``, overwritten), in ``m^2`` operations rather than a new factorisation's
    ``m^3 / 6``: Gill, Golub, Murray & Saunders (1974), method C1, for ``j = 0, 1, ...``:
    ``p = z_j``, ``d_j' = d_j + alpha p^2``, ``beta = alpha p / d_j'``, ``alpha <- alpha d_j /
    d_j'``, then for ``i > j``: ``z_i <- z_i - p l_ij``, ``l_ij <- l_ij + beta z_i``. Leading
    zeros of ``z`` are skipped (a column of a tree's Jacobian is zero on the other limbs' rows).
    Returns False (the factors then unusable) where a pivot ``d_j'`` is not positive: a
    downdate (``alpha < 0``) that leaves ``A`` indefinite to working precision."""
    for j in range(size):
        p = vector[j]
        if p == 0.0:
            continue
        diagonal = 1.0 / matrix[j, j]
        updated = diagonal + alpha * p * p
        if not updated > 0.0:
            return False
        beta = alpha * p / updated
        alpha *= diagonal / updated
        matrix[j, j] = 1.0 / updated
        for i in range(j + 1, size):
            vector[i] -= p * matrix[j, i]
            matrix[j, i] += beta * vector[i]
    return True


@reduction_kernel
def weighted_gram(jacobian, weights, row_start, row_end, gram, row):
    """The Gram matrix ``G = J W J^T`` of the rows ``row_start:row_end`` into ``gram`` (m, m), its
    lower triangle and diagonal (what :func:`ldl_solve` reads); ``row`` (n,) is work space (each
    weighted row ``W J_a`` in turn: rows are indexed, not sliced, and the inner loops run along
    contiguous rows)."""
    size = row_end - row_start
    dof = jacobian.shape[1]
    for a in range(size):
        row_a = row_start + a
        for j in range(dof):
            row[j] = jacobian[row_a, j] * weights[j]
        for b in range(a + 1):
            row_b = row_start + b
            value = 0.0
            for j in range(dof):
                value += row[j] * jacobian[row_b, j]
            gram[a, b] = value


@kernel
def factor_gram(gram, damping, size):
    """:func:`ldl_factor` of ``G + lambda^2 I`` (``damping`` is ``lambda^2``) in place of the
    Gram matrix ``G`` = ``gram[:size, :size]`` (:func:`weighted_gram`'s lower triangle)."""
    for a in range(size):
        gram[a, a] += damping
    return ldl_factor(gram, size)


@kernel
def gram_step(jacobian, error, weights, row_start, row_end, gram, factored, solution, step):
    """``dq = W J^T (G + lambda^2 I)^-1 e`` over the rows ``row_start:row_end`` into ``step``
    (n,), from the factors :func:`factor_gram` left in ``gram`` (``factored``: its answer; the
    step 0 where it refused the matrix). ``solution`` (m,): work space."""
    size = row_end - row_start
    dof = jacobian.shape[1]
    for a in range(size):
        solution[a] = error[row_start + a] if factored else 0.0
    if factored:
        ldl_substitute(gram, solution, size)
    for j in range(dof):
        step[j] = 0.0
    for a in range(size):
        row_a, coefficient = row_start + a, solution[a]
        for j in range(dof):
            step[j] += jacobian[row_a, j] * coefficient
    for j in range(dof):
        step[j] *= weights[j]


@inner_kernel
def damped_step(jacobian, error, weights, damping, row_start, row_end, gram, solution, step):
    """``dq = W J^T (J W J^T + lambda^2 I)^-1 e`` over the rows ``row_start:row_end`` (the
    singularity-robust inverse, Nakamura & Hanafusa 1986; an LDL^T solve, no inverse), into
    ``step`` (n,): :func:`weighted_gram`, :func:`factor_gram`, :func:`gram_step`. ``damping`` is
    ``lambda^2``; ``gram`` (m, m) and ``solution`` (m,) are work space."""
    weighted_gram(jacobian, weights, row_start, row_end, gram, step)
    factored = factor_gram(gram, damping, row_end - row_start)
    gram_step(jacobian, error, weights, row_start, row_end, gram, factored, solution, step)


@kernel
def null_space_motion(jacobian, motion, weights, row_start, row_end, gram, solution, image, out):
    """``(I - J^+ J) z`` with ``J^+ = W J^T (J W J^T)^-1`` over rows ``row_start:row_end`` (a
    regularisation of ``NULL_SPACE_REGULARISATION`` keeps it finite at singularities): the part of
    ``z`` that leaves those task rows unchanged to first order (Siciliano 1990). ``image`` (m,)
    is work space; ``out`` may not alias ``motion``."""
    for r in range(row_start, row_end):
        value = 0.0
        for j in range(jacobian.shape[1]):
            value += jacobian[r, j] * motion[j]
        image[r] = value
    damped_step(jacobian, image, weights, NULL_SPACE_REGULARISATION, row_start, row_end, gram, solution, out)
    for j in range(out.shape[0]):
        out[j] = motion[j] - out[j]


@allocating_kernel
def step_workspace(rows, dof):
    """Work arrays of :func:`limited_step` for ``rows`` task rows and ``dof`` joints, made once
    per attempt: (gram (m, m), solution (m,), image (m,), remaining (m,), projected (n,),
    secondary (n,), weights (n,), pinned_motion (n,), pinned (n,) bool): slots ``GRAM`` ...
    ``PINNED`` of :mod:`.bundles`."""
    return (
        np.empty((rows, rows)),  # GRAM
        np.empty(rows),  # SOLUTION
        np.empty(rows),  # IMAGE
        np.empty(rows),  # REMAINING
        np.empty(dof),  # PROJECTED
        np.empty(dof),  # SECONDARY
        np.empty(dof),  # STEP_WEIGHTS
        np.empty(dof),  # PINNED_MOTION
        np.empty(dof, dtype=np.bool_),  # PINNED
    )


@inline_kernel
def free_step(jacobian, error, weights, damping, min_damping2, primary_rows, work, step):
    """The step before limits, for the joint ``weights`` given (``work``: :func:`step_workspace`).

    Without priority (``primary_rows == 0``): :func:`damped_step` over every row. With priority
    (rows ``:primary_rows`` first; Siciliano & Slotine 1991):
    ``dq = J1^+ e1 + (I - J1^+ J1) J2^+ (e2 - J2 J1^+ e1)`` (damped inverses, ``damping`` on
    the secondary rows' inverse, ``min_damping2`` on the primary's)."""
    gram, solution, image = work[GRAM], work[SOLUTION], work[IMAGE]
    projected, secondary = work[PROJECTED], work[SECONDARY]
    rows = jacobian.shape[0]
    if primary_rows == 0:
        damped_step(jacobian, error, weights, damping, FIRST_ROW, rows, gram, solution, step)
        return
    # J1^+ e1
    damped_step(jacobian, error, weights, min_damping2, FIRST_ROW, primary_rows, gram, solution, step)
    for r in range(primary_rows, rows):
        value = error[r]
        for j in range(jacobian.shape[1]):
            value -= jacobian[r, j] * step[j]
        image[r] = value
    damped_step(jacobian, image, weights, damping, primary_rows, rows, gram, solution, secondary)
    null_space_motion(jacobian, secondary, weights, FIRST_ROW, primary_rows, gram, solution, image, projected)
    for j in range(step.shape[0]):
        step[j] += projected[j]


@kernel
def manipulability(jacobian, gram, rhs):
    """Yoshikawa's manipulability ``sqrt(det(J J^T))`` of ``jacobian`` (m, n) (Yoshikawa 1985):
    the square root of the product of ``D`` in ``J J^T = L D L^T`` (:func:`ldl_solve` leaves
    ``1 / D`` on the diagonal); 0 where ``J`` loses rank (the factorisation refuses a pivot).
    ``gram`` (m, m) and ``rhs`` (m,) are work space. Invariant to the frame the rows are
    expressed in (``det Ad = 1``); linear rows in m, angular in rad."""
    rows, dof = jacobian.shape
    for a in range(rows):
        for b in range(a + 1):
            value = 0.0
            for j in range(dof):
                value += jacobian[a, j] * jacobian[b, j]
            gram[a, b] = value
            gram[b, a] = value
        rhs[a] = 0.0
    if not ldl_solve(gram, rhs, rows):
        return 0.0
    inverse_determinant = 1.0
    for a in range(rows):
        inverse_determinant *= gram[a, a]
    return 1.0 / math.sqrt(inverse_determinant)


@inner_kernel
def orthogonalize_rows(rows, count, length, rotation):
    """One-sided Jacobi (Hestenes 1958) on the rows ``R = rows[:count, :length]``, in place: plane
    rotations of pairs of rows ``(r_p, r_q) <- (c r_p - s r_q, s r_p + c r_q)`` until every pair is
    orthogonal (``JACOBI_TOLERANCE``), each zeroing ``r_p . r_q``: ``zeta = (|r_q|^2 - |r_p|^2) /
    (2 r_p . r_q)``, ``t = sign(zeta) / (|zeta| + sqrt(1 + zeta^2))``, ``c = 1 / sqrt(1 + t^2)``,
    ``s = c t`` (the symmetric 2 x 2 Schur decomposition of the pair's Gram matrix: Golub & Van
    Loan's ``symSchur2``). The rotations are accumulated from the identity into ``Q =
    rotation[:count, :count]``, so that afterwards ``R' = Q R_0`` with orthogonal rows: ``R_0 = Q^T
    S U^T`` is ``R_0``'s singular value decomposition, the singular values ``s_k = |r'_k|``, the
    left singular vectors the rows of ``Q``, the right ones ``r'_k / s_k``."""
    for i in range(count):
        for j in range(count):
            rotation[i, j] = 1.0 if i == j else 0.0
    for _ in range(JACOBI_SWEEPS):
        rotated = False
        for p in range(count - 1):
            for q in range(p + 1, count):
                alpha, beta, gamma = 0.0, 0.0, 0.0
                for k in range(length):
                    alpha += rows[p, k] * rows[p, k]
                    beta += rows[q, k] * rows[q, k]
                    gamma += rows[p, k] * rows[q, k]
                if abs(gamma) <= JACOBI_TOLERANCE * math.sqrt(alpha * beta):
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * gamma)
                t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                cosine = 1.0 / math.sqrt(1.0 + t * t)
                sine = cosine * t
                for k in range(length):
                    a, b = rows[p, k], rows[q, k]
                    rows[p, k], rows[q, k] = cosine * a - sine * b, sine * a + cosine * b
                for k in range(count):
                    a, b = rotation[p, k], rotation[q, k]
                    rotation[p, k], rotation[q, k] = cosine * a - sine * b, sine * a + cosine * b
        if not rotated:
            return


@kernel
def pseudo_inverse_times(matrix, columns, rhs, rows, rotation, squares, out):
    """``out = A_C^+ b`` (n,): the least-squares solution of least norm ``A_C x = b`` over the
    columns ``C`` of ``matrix`` (m, n) flagged in ``columns`` (n,) bool (the others' entries 0),
    ``b = rhs`` (m,), by ``A_C``'s singular value decomposition (:func:`orthogonalize_rows` on its
    shorter side: ``R_0 = A_C`` when ``m <= |C|``, ``A_C^T`` otherwise): ``A_C^+ b = sum_k r'_k (Q
    b)_k / s_k^2`` (``R_0^+ = U S^-1 Q``), or ``sum_k q_k (r'_k . b) / s_k^2`` (``(R_0^T)^+ = Q^T
    S^-1 U^T``); singular values at most ``PSEUDO_INVERSE_CUTOFF`` times the largest count as 0
    (``numpy.linalg.pinv``'s rule). Returns the smallest of ``A_C``'s ``min(m, |C|)`` singular
    values (0 without columns). ``rows`` (at least ``max(m, n)`` square), ``rotation`` (the same)
    and ``squares`` (``max(m, n)``,): work space."""
    size, dof = matrix.shape
    free = 0
    for j in range(dof):
        if columns[j]:
            free += 1
    wide = size <= free
    count, length = (size, free) if wide else (free, size)
    for i in range(size):
        c = 0
        for j in range(dof):
            if columns[j]:
                if wide:
                    rows[i, c] = matrix[i, j]
                else:
                    rows[c, i] = matrix[i, j]
                c += 1
    orthogonalize_rows(rows, count, length, rotation)
    largest, smallest = 0.0, math.inf
    for k in range(count):
        value = 0.0
        for i in range(length):
            value += rows[k, i] * rows[k, i]
        squares[k] = value
        largest, smallest = max(largest, value), min(smallest, value)
    for j in range(dof):
        out[j] = 0.0
    cutoff = PSEUDO_INVERSE_CUTOFF * PSEUDO_INVERSE_CUTOFF * largest
    for k in range(count):
        if not squares[k] > cutoff:
            continue
        coefficient = 0.0
        for i in range(size):
            coefficient += (rotation[k, i] if wide else rows[k, i]) * rhs[i]
        coefficient /= squares[k]
        c = 0
        for j in range(dof):
            if columns[j]:
                out[j] += (rows[k, c] if wide else rotation[k, c]) * coefficient
                c += 1
    return math.sqrt(smallest) if count > 0 else 0.0
