"""A first start after an install: the first answer comes from the kernels as plain Python while a
helper process compiles them, then the compiled ones serve; a cache warmed ahead (``ik_node
warmup``) serves a new process at once, read-only too; bad cache directories are said clearly."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
ARM7 = PACKAGE_ROOT / "urdf" / "arm7.urdf"

#: The kernels of the search (what the cache must hold for a process to answer compiled at once).
SEARCH_KERNELS = ("search_many", "search_in", "run_attempt")

FIRST_START = (
    f"SEARCH_KERNELS = {SEARCH_KERNELS!r}\n"
    + """
import json, sys, time
import numpy as np
from numba.core import event
import ik_node
from ik_node import IKSolver, load_robot
compiles = []
class Compiles(event.Listener):
    def on_start(self, item):
        compiles.append(item.data["dispatcher"].py_func.__qualname__)
    def on_end(self, item):
        pass
options = json.loads(sys.argv[2])
with event.install_listener("numba:compile", Compiles()):
    robot = load_robot(sys.argv[1])
    solver = IKSolver(robot, "base_link", ["tool0"], **options)
    q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
    target = robot.forward(dict(zip(solver.joint_names, q)), "tool0", "base_link")
    first = solver.solve(target)
    compiled_at_first = solver.compiled
    solver_compiles = [name for name in compiles if name in SEARCH_KERNELS]
    ready = solver.wait_for_kernels(900)
    again = solver.solve(target, seed=first.q)
reached = robot.forward(dict(zip(solver.joint_names, first.q)), "tool0", "base_link")
print(json.dumps({
    "first": [first.success, first.reason], "compiled_at_first": compiled_at_first,
    "residual": float(np.abs(reached - target).max()), "ready": ready, "again": again.success,
    "search_compiled_here": solver_compiles, "compiles": compiles, "package": ik_node.__file__,
}))
"""
)


#: The tests observing the one cold first start of :func:`cold_first_start` (one worker runs them
#: all: scripts/test.sh passes ``--dist loadgroup``).
observes_the_cold_start = pytest.mark.xdist_group("first_start_cold_start")


def first_start(package: Path, cache: Path, helper: bool = True, **options) -> dict:
    """A fresh process importing the ik_node of ``package`` (a directory holding it) on the kernel
    cache ``cache``: build a solver with ``options``, solve, wait for the compiled kernels and
    solve again; what it saw (see ``FIRST_START``). ``helper``: the helper process compiles
    (the default outside the suite), else the solver's own process."""
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(package)}
    environment.pop("IK_NODE_COMPILE_HELPER", None)
    if not helper:
        environment["IK_NODE_COMPILE_HELPER"] = "0"
    # cwd: not the source tree, whose ik_node "python -c" would import first
    run = subprocess.run(
        [sys.executable, "-c", FIRST_START, str(ARM7), json.dumps(options)],
        cwd=package.parent, env=environment, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    seen = {**json.loads(run.stdout.strip().splitlines()[-1]), "stderr": run.stderr}
    assert seen["package"].startswith(str(package)), seen["package"]
    return seen


@pytest.fixture(scope="module")
def cold_first_start(tmp_path_factory):
    """A copy of the package (no compiled cache) and an empty kernel cache (a first start after an
    install): (the package, the cache, what the first process saw, what a second process saw).
    The first process's helper process compiles the default problem's kernels into the cache:
    ``python -m ik_node.solver --features none``, the warm-up."""
    root = tmp_path_factory.mktemp("first_start")
    package, cache = root / "site", root / "cache"
    shutil.copytree(
        PACKAGE_ROOT / "ik_node", package / "ik_node", ignore=shutil.ignore_patterns("__pycache__")
    )
    cache.mkdir()
    return package, cache, first_start(package, cache), first_start(package, cache)


@observes_the_cold_start
def test_the_first_solve_on_an_empty_cache_answers_as_plain_python_then_compiled(cold_first_start):
    """An empty kernel cache (a first start after an install: :func:`cold_first_start`): the
    solver answers its first goal with the kernels as plain Python (correct by an independent FK),
    says once that they are compiling, compiles none of the search in this process (a helper
    process does), and then serves the compiled ones; a second process finds them in the cache."""
    _, _, seen, later = cold_first_start
    assert seen["first"] == [True, "success"] and seen["residual"] < 1e-4
    assert seen["compiled_at_first"] is False
    assert seen["search_compiled_here"] == [], seen["compiles"]
    assert seen["stderr"].count("compiling the IK kernels") == 1, seen["stderr"]
    assert seen["ready"] and seen["again"]
    assert later["compiled_at_first"] is True and later["first"] == [True, "success"]
    assert "compiling the IK kernels" not in later["stderr"]


@contextlib.contextmanager
def read_only(*paths: Path):
    """``paths`` read-only for this process's children: bind-mounted read-only onto themselves
    where this user may (root here: a mode does not stop root from writing), else by mode."""
    mounted = []
    try:
        for path in paths:
            if os.geteuid() == 0:
                if subprocess.run(["mount", "--bind", str(path), str(path)], capture_output=True).returncode:
                    pytest.skip(
                        "running as root without the right to bind-mount: cannot make a directory read-only"
                    )
                mounted.append(path)
                subprocess.run(["mount", "-o", "remount,ro,bind", str(path)], check=True, capture_output=True)
            else:
                for directory, _, files in os.walk(path):
                    for name in files:
                        os.chmod(os.path.join(directory, name), 0o444)
                    os.chmod(directory, 0o555)
        yield
    finally:
        for path in reversed(mounted):
            subprocess.run(["umount", str(path)], capture_output=True)
        if os.geteuid() != 0:
            for path in paths:
                for directory, _, _ in os.walk(path):
                    os.chmod(directory, 0o755)


@observes_the_cold_start
def test_a_warmed_read_only_cache_and_package_answer_without_compiling(cold_first_start):
    """A cache the warm-up compiled into (the helper process of :func:`cold_first_start`: ``python
    -m ik_node.solver``; no other process compiled any search kernel into it), which ``ik_node
    warmup --cache-dir`` then finds warm, and that directory and the package made read-only (a
    container image run by another user): a new process loads the kernels from it and compiles
    none of the search; a feature the warm-up left out is compiled there (said once: not saved)
    and still solves."""
    package, cache, seen, later = cold_first_start
    for process in (seen, later):
        assert not set(SEARCH_KERNELS) & set(process["compiles"]), process["compiles"]
    environment = {**os.environ, "PYTHONPATH": str(package)}
    warm = subprocess.run(
        [sys.executable, "-m", "ik_node.solver", "--features", "none", "--cache-dir", str(cache)],
        cwd=package.parent, env=environment, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert warm.returncode == 0, warm.stderr
    assert str(cache) in warm.stdout and "CPU" in warm.stdout
    assert "default: loaded from the cache" in warm.stdout, warm.stdout
    with read_only(package, cache):
        seen = first_start(package, cache, helper=False)
        assert seen["compiled_at_first"] is True and seen["first"] == [True, "success"]
        assert seen["search_compiled_here"] == [], seen["compiles"]
        other = first_start(package, cache, helper=False, posture_gain=0.2)
        assert other["first"] == [True, "success"] and other["ready"] and other["again"]
        assert other["stderr"].count("is read-only") == 1, other["stderr"]
        assert "NUMBA_CACHE_DIR" in other["stderr"]


@pytest.mark.parametrize(
    ("directory", "message"),
    [("missing", "does not exist"), ("file", "is not a directory")],
    ids=["missing", "a file"],
)
def test_a_warm_up_into_an_unusable_directory_is_refused_clearly(tmp_path, directory, message):
    (tmp_path / "file").write_text("")
    run = subprocess.run(
        [sys.executable, "-m", "ik_node.cli", "warmup", "--cache-dir", str(tmp_path / directory)],
        cwd=PACKAGE_ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2
    assert str(tmp_path / directory) in run.stderr and message in run.stderr
    assert "Traceback" not in run.stderr
