"""The combinations of feature switches whose kernels compile apart, and the helper process that
compiles one while a solver answers as plain Python (:class:`HelperCompile`).

A problem compiles only the kernels its options use (see :mod:`ik_node.compiled.bundles`): the
feature switches ``method`` (any method but ``dls``), ``solve_type`` (``distance`` or
``manipulability``), ``posture`` (a posture gain) and ``collision`` (collision pairs) pick one
compiled specialisation each; a key is a tuple of four booleans in :data:`FEATURES`' order. The
helper runs ``python -m ik_node.solver`` (:mod:`.warmup` does the compiling there).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["DEFAULT", "FEATURES", "HELPER_VARIABLE", "HelperCompile", "feature_names", "switch_key"]

#: The feature switches, in the order of a key (and of the kernels' trailing arguments).
FEATURES = ("method", "solve_type", "posture", "collision")
#: The default problem's key: no feature on.
DEFAULT = (False, False, False, False)
#: The environment variable that turns the helper process off (``0``): a solver whose kernels
#: are not compiled then compiles them when it is built, as the warm-up does.
HELPER_VARIABLE = "IK_NODE_COMPILE_HELPER"


def switch_key(features: Iterable[str]) -> tuple[bool, ...]:
    """The key of the combination of ``features`` (names from :data:`FEATURES`)."""
    chosen = set(features)
    unknown = chosen - set(FEATURES)
    if unknown:
        raise ValueError(f"unknown feature(s) {sorted(unknown)}; the features are {list(FEATURES)}")
    return tuple(feature in chosen for feature in FEATURES)


def feature_names(key: tuple[bool, ...]) -> list[str]:
    """The features a key turns on."""
    return [feature for feature, on in zip(FEATURES, key) if on]


class HelperCompile:
    """``python -m ik_node.solver --features ...`` compiling the combination ``key`` into numba's
    cache in a process of its own (the same interpreter, environment and ik_node; its output in
    a temporary file), so that this process's solves go on meanwhile (as plain Python) without
    waiting for numba's compiler lock or sharing the GIL with it. :meth:`wait` says whether it
    succeeded; the kernels are then loaded from the cache in well under a second."""

    def __init__(self, key: tuple[bool, ...]):
        self.key = key
        self.log = tempfile.TemporaryFile(prefix="ik_node_compile_")
        package_parent = str(Path(__file__).resolve().parents[2])
        environment = {**os.environ, HELPER_VARIABLE: "0"}
        environment["PYTHONPATH"] = os.pathsep.join(
            filter(None, [package_parent, os.environ.get("PYTHONPATH")])
        )
        command = [sys.executable, "-m", "ik_node.solver", "--quiet", "--background", "--features"]
        command += feature_names(key)
        if not feature_names(key):
            command.append("none")
        self.process = subprocess.Popen(
            command, env=environment, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT
        )

    def wait(self, timeout: float | None = None) -> bool | None:
        """True once the helper compiled the kernels, False if it failed, None while it runs
        (after ``timeout`` [s])."""
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        return code == 0

    def output(self) -> str:
        """What the helper printed (its error, when it failed)."""
        self.log.seek(0)
        return self.log.read().decode(errors="replace").strip()
