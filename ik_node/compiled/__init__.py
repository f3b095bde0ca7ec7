"""The package's compiled (numba) code: :mod:`.spatial` (kinematics of a tree: FK, Jacobians, the
configuration manifold), used by :mod:`ik_node.kinematics` and the solver's kernels."""
