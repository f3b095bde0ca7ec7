"""One attempt of a search, or the continuation: the step from the seed's tip poses to the
targets followed in pieces, each piece's end solved by one attempt from the previous answer, so
that the answer stays on the seed's branch (natural-parameter continuation, Allgower & Georg
1990, ch. 1; see :func:`attempt_in_pieces`)."""

from __future__ import annotations

from .attempt import run_attempt
from .bundles import CONVERGED, DEADLINE, EVALUATION, FRAME_LINKS, FRAMES, ITERATIONS, POSES, STUCK
from .jit import inline_kernel, inner_kernel
from .joints import largest_move
from .rotations import interpolate_pose
from .spatial import forward_kinematics
from .tasks import tip_points

#: The continuation (see :func:`attempt_in_pieces`) cuts the step from the seed's tip poses to the
#: targets into 2 pieces, then 4, ... up to this many, before the restarts around the seed.
CONTINUATION_PIECES = 8
#: Slots of the continuation's pieces space (a search workspace's ``PIECES_SPACE``, see
#: :func:`attempt_in_pieces`).
PIECES_SEED_POINTS, PIECES_TARGETS, PIECES_RELATIVE, PIECES_ROTATION_VECTOR = range(4)


@inner_kernel
def _piece_targets(seed_points, targets, fraction, relative, rotation_vector, out):
    """The targets (T, 4, 4) of a piece of the step from ``seed_points`` to ``targets`` ending
    ``fraction`` of the way (:func:`interpolate_pose`; at 1, ``targets`` themselves), into
    ``out``."""
    for tip in range(targets.shape[0]):
        if fraction >= 1.0:
            for i in range(4):
                for j in range(4):
                    out[tip, i, j] = targets[tip, i, j]
        else:
            interpolate_pose(seed_points[tip], targets[tip], fraction, relative, rotation_vector, out[tip])


@inline_kernel
def attempt_in_pieces(
    continuing, attempt_space, pieces_space, tree, task, joints, targets, tuning, method, posture,
    collision, seed, primary_rows, max_joint_move, deadline, q, norms, displacement,
):  # fmt: skip
    """One attempt of :func:`~.search.search_in`: :func:`run_attempt` from ``q``, or with ``continuing``
    the continuation from ``seed``. Returns (outcome, iterations) as :func:`run_attempt`, ``q``
    and ``norms`` those of its last attempt.

    The continuation follows the step from ``seed`` to ``targets`` in pieces, so that the answer
    stays on the seed's branch where one attempt over the whole step lands on another
    (natural-parameter continuation, Allgower & Georg 1990, ch. 1): the tips' controlled points
    go from their poses at the seed to the targets along :func:`interpolate_pose`, cut into 2,
    4, ... up to ``CONTINUATION_PIECES`` equal pieces; each piece's end is solved by one attempt
    from the previous piece's answer (the first from the seed), the last one's being ``targets``.
    A cut is given up at the first piece that does not converge or moves a joint farther than
    ``max_joint_move`` [rad or m] from the seed (:func:`largest_move`), and the next, finer,
    begins from the seed again; it ends ``CONVERGED`` within ``max_joint_move`` once a cut
    succeeds; else not converged (``q`` and ``norms`` may be a piece's: :func:`~.search.search_in` keeps
    no failed continuation as its answer). One call of :func:`run_attempt` for both, inlined
    at one call site of :func:`~.search.search_in` (the default problem's cold compile: +3 s; a copy at
    each of its three sites had cost +10 s, see docs/solver.md). ``pieces_space``: the seed's
    tip points and the pieces' targets (T, 4, 4) each, a relative rotation (3, 3), a rotation
    vector (3,); ``displacement`` (nv,): work space."""
    seed_points, piece_targets = pieces_space[PIECES_SEED_POINTS], pieces_space[PIECES_TARGETS]
    relative, rotation_vector = pieces_space[PIECES_RELATIVE], pieces_space[PIECES_ROTATION_VECTOR]
    cut, finest = 1, 1
    if continuing:
        poses = attempt_space[EVALUATION][POSES]
        forward_kinematics(tree[FRAMES], tree[FRAME_LINKS], seed, poses)
        tip_points(poses, task, seed_points)
        cut, finest = 2, CONTINUATION_PIECES
    outcome, iterations, final = ITERATIONS, 0, True
    while cut <= finest:
        if continuing:
            for i in range(seed.shape[0]):
                q[i] = seed[i]
        for piece in range(1, cut + 1):
            final = piece == cut
            _piece_targets(seed_points, targets, piece / cut, relative, rotation_vector, piece_targets)
            outcome, used = run_attempt(
                attempt_space, tree, task, joints, piece_targets, tuning, method, posture, collision, seed,
                primary_rows, deadline, q, norms,
            )  # fmt: skip
            iterations += used
            if outcome != CONVERGED or (
                continuing and largest_move(tree, joints, q, seed, displacement) > max_joint_move
            ):
                break
        if not continuing or outcome == DEADLINE:
            break
        if (
            final
            and outcome == CONVERGED
            and largest_move(tree, joints, q, seed, displacement) <= max_joint_move
        ):
            break
        cut *= 2
    if not final and outcome != DEADLINE:  # (stopped at a piece: q and norms are that piece's)
        outcome = STUCK
    return outcome, iterations
