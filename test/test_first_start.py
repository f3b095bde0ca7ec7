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

FIRST_START = """
import json, sys, time
import numpy as np
from numba.core import event
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
    solver_compiles = [name for name in compiles if name in ("search_many", "search_in", "run_attempt")]
    ready = solver.wait_for_kernels(900)
    again = solver.solve(target, seed=first.q)
reached = robot.forward(dict(zip(solver.joint_names, first.q)), "tool0", "base_link")
print(json.dumps({
    "first": [first.success, first.reason], "compiled_at_first": compiled_at_first,
    "residual": float(np.abs(reached - target).max()), "ready": ready, "again": again.success,
    "search_compiled_here": solver_compiles, "compiles": compiles,
}))
"""


def first_start(cache: Path, **options) -> dict:
    """A fresh process on the kernel cache ``cache``: build a solver with ``options``, solve, wait
    for the compiled kernels and solve again; what it saw (see ``FIRST_START``)."""
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    environment.pop("IK_NODE_COMPILE_HELPER", None)
    run = subprocess.run(
        [sys.executable, "-c", FIRST_START, str(ARM7), json.dumps(options)],
        cwd=PACKAGE_ROOT, env=environment, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return {**json.loads(run.stdout.strip().splitlines()[-1]), "stderr": run.stderr}


def test_the_first_solve_on_an_empty_cache_answers_as_plain_python_then_compiled(tmp_path):
    """An empty kernel cache (a first start after an install): the solver answers its first goal
    with the kernels as plain Python (correct by an independent FK), says once that they are
    compiling, compiles none of the search in this process (a helper process does), and then
    serves the compiled ones; a second process finds them in the cache."""
    seen = first_start(tmp_path)
    assert seen["first"] == [True, "success"] and seen["residual"] < 1e-4
    assert seen["compiled_at_first"] is False
    assert seen["search_compiled_here"] == [], seen["compiles"]
    assert seen["stderr"].count("compiling the IK kernels") == 1, seen["stderr"]
    assert seen["ready"] and seen["again"]
    later = first_start(tmp_path)
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


def test_a_warmed_read_only_cache_and_package_answer_without_compiling(tmp_path):
    """``ik_node warmup`` into a directory, then that directory and the package made read-only (a
    container image run by another user): a new process loads the kernels from it and compiles
    none of the search; a feature the warm-up left out is compiled there (said once: not saved)
    and still solves."""
    package = tmp_path / "site"
    shutil.copytree(
        PACKAGE_ROOT / "ik_node", package / "ik_node", ignore=shutil.ignore_patterns("__pycache__")
    )
    cache = tmp_path / "cache"
    cache.mkdir()
    environment = {**os.environ, "PYTHONPATH": str(package)}
    warm = subprocess.run(
        [sys.executable, "-m", "ik_node.solver", "--features", "none", "--cache-dir", str(cache)],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert warm.returncode == 0, warm.stderr
    assert str(cache) in warm.stdout and "CPU" in warm.stdout
    with read_only(package, cache):
        probe = FIRST_START.replace("from ik_node import", "import ik_node\nfrom ik_node import")
        script = probe + f"\nassert ik_node.__file__.startswith({str(package)!r}), ik_node.__file__\n"
        command = [sys.executable, "-c", script, str(ARM7)]
        environment["NUMBA_CACHE_DIR"] = str(cache)
        run = subprocess.run(
            command + ["{}"], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=900
        )
        assert run.returncode == 0, run.stderr
        seen = json.loads(run.stdout.strip().splitlines()[-1])
        assert seen["compiled_at_first"] is True and seen["first"] == [True, "success"]
        assert seen["search_compiled_here"] == [], seen["compiles"]
        posture = command + ['{"posture_gain": 0.2}']
        other = subprocess.run(posture, cwd=tmp_path, env=environment, capture_output=True, text=True)
        assert other.returncode == 0, other.stderr
        seen = json.loads(other.stdout.strip().splitlines()[-1])
        assert seen["first"] == [True, "success"] and seen["ready"] and seen["again"]
        assert other.stderr.count("is read-only") == 1, other.stderr
        assert "NUMBA_CACHE_DIR" in other.stderr


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
