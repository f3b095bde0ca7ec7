"""The package's compiled (numba) code: kernels over flat arrays, imported as modules. Its API is
those modules (``from ik_node.compiled import spatial``); they import only numpy, math and each
other, and numba only through :mod:`.jit`.

:mod:`.jit` (numba or plain Python, the kernel decorators, the cache), :mod:`.spatial` (kinematics
of a tree: FK, Jacobians) and :mod:`.manifold` (its configurations: ``q (+) dq``), also
:mod:`ik_node.kinematics`', over :mod:`.rotations` (SO(3)) and :mod:`.elementary` (``sin_cos``,
``atan2``),
:mod:`.bundles` (the bundles the kernels pass and the codes shared with Python), :mod:`.tasks`,
:mod:`.linalg`, :mod:`.joints`, :mod:`.steps`, :mod:`.attempt`, :mod:`.search` (the solve; its
restarts and continuation are ``restarts``' and ``continuation``'s; :mod:`.context` the record
its calls take), :mod:`.table_search` (the seed table's features and nearest entries),
:mod:`.fitting` (a free base placed from its targets), :mod:`.contacts` and :mod:`.gjk`
(collision distances and rows; ``shapes`` is theirs), :mod:`.subproblems`,
:mod:`.decompositions` and :mod:`.solution_sets` (every IK branch of 6R arms whose axes decompose
into Paden–Kahan subproblems, and the set of solutions inside the limits; compiled only when
``IKSolver.solve_all`` first uses them), :mod:`.nearest_branches` (``solve_many``'s nearest
solution per target from them), :mod:`.straight_lines` (the step loop of a straight-line path,
each step solved by the search; compiled only when ``IKSolver.cartesian_path`` first uses it)."""

__all__ = [
    "attempt",
    "bundles",
    "contacts",
    "context",
    "decompositions",
    "elementary",
    "fitting",
    "gjk",
    "jit",
    "joints",
    "linalg",
    "manifold",
    "nearest_branches",
    "rotations",
    "search",
    "solution_sets",
    "spatial",
    "steps",
    "straight_lines",
    "subproblems",
    "table_search",
    "tasks",
]
