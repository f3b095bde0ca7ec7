"""The compiled core around the solver: batch solving equals one-by-one solving, budgets hold per
target, and the kernels run where numba cannot cache (a read-only install)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import URDF_DIR

from ik_node import IKSolver, load_robot
from ik_node.description.catalogue import BUNDLED
from ik_node.errors import TargetError

BY_NAME = {case.name: case for case in BUNDLED}
PACKAGE_ROOT = Path(__file__).resolve().parent.parent
DETERMINISTIC = {"max_attempts": 6, "max_iterations": 60, "random_seed": 5}


def random_targets(solver: IKSolver, count: int, seed: int) -> tuple[np.ndarray, dict]:
    """FK targets of configurations uniform within the limits (continuous joints in +-pi)."""
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(solver.lower), solver.lower, -np.pi)
    upper = np.where(np.isfinite(solver.upper), solver.upper, np.pi)
    q = rng.uniform(lower, upper, size=(count, len(lower)))
    return q, {tip: np.array([solver.tree.forward(row, tip) for row in q]) for tip in solver.tip_links}


@pytest.mark.parametrize("name", ["arm7", "mobile_manipulator", "dual_arm"])
def test_solve_many_equals_solve_target_by_target(name):
    """Same seeds, deterministic budgets: the same success and the same q for every target, with
    one seed for all and with a seed per target."""
    case = BY_NAME[name]
    solver = IKSolver(load_robot(case.urdf), case.base, case.tips, **DETERMINISTIC)
    q, targets = random_targets(solver, 24, seed=3)
    rng = np.random.default_rng(4)
    seeds = np.clip(q + rng.normal(scale=0.3, size=q.shape), solver.lower, solver.upper)
    for seed in (None, seeds[0], seeds):
        batch = solver.solve_many(targets, seed=seed, timeout=None)
        assert batch.q.shape == q.shape and batch.success.shape == (len(q),)
        for index in range(len(q)):
            one_seed = None if seed is None else (seed if seed.ndim == 1 else seed[index])
            single = solver.solve(
                {tip: pose[index] for tip, pose in targets.items()}, seed=one_seed, timeout=None
            )
            assert batch.success[index] == single.success, index
            np.testing.assert_allclose(batch.q[index], single.q, atol=1e-12)
            assert batch.position_error[index] == pytest.approx(single.position_error, abs=1e-15)
            assert batch.orientation_error[index] == pytest.approx(single.orientation_error, abs=1e-15)
        assert batch.success.mean() >= 0.8
        assert np.all(batch.q >= solver.lower) and np.all(batch.q <= solver.upper)


def test_solve_many_spends_its_budget_per_target():
    """Unreachable targets use each target's whole budget, and no more: the batch takes at least
    targets x timeout / cores of wall time, and its threads no more than targets x timeout (+10 %)
    of CPU time (CPU time, not wall time: another process holding a core stretches the wall clock,
    not the work)."""
    case = BY_NAME["arm7"]
    solver = IKSolver(load_robot(case.urdf), case.base, case.tips)
    far = np.repeat(np.eye(4)[None], 8, axis=0)
    far[:, 0, 3] = 5.0  # m: beyond the arm's reach
    timeout = 0.01
    solver.solve_many(far[:2], timeout=timeout)  # its kernel's first call compiles or loads it
    began = time.process_time()
    batch = solver.solve_many(far, timeout=timeout)
    cpu = time.process_time() - began
    assert not batch.success.any()
    cores = os.cpu_count() or 1
    assert len(far) * timeout / cores * 0.9 <= batch.elapsed
    assert cpu <= len(far) * timeout * 1.1 + 0.02, cpu


def test_solve_returns_within_its_timeout():
    """An unreachable goal runs until the budget ends, then returns: the CPU time the solve takes
    stays within 10 % of the timeout plus the result's assembly (wall time too on a quiet
    machine, which the benchmark checks on every call; here other processes may hold the CPU
    for a scheduler slice, so wall time gets a looser bound)."""
    case = BY_NAME["humanoid"]
    solver = IKSolver(load_robot(case.urdf), case.base, case.tips)
    targets = {tip: np.eye(4) for tip in case.tips}
    for timeout in (0.002, 0.005, 0.02):
        began = time.thread_time()
        result = solver.solve(targets, timeout=timeout)
        cpu = time.thread_time() - began
        assert not result.success and result.reason in ("unreachable", "timeout")
        assert cpu <= 1.1 * timeout + 0.001, (timeout, cpu)
        assert result.elapsed <= 2.0 * timeout + 0.02, (timeout, result.elapsed)


def test_solve_many_refuses_bad_input_clearly():
    case = BY_NAME["dual_arm"]
    solver = IKSolver(load_robot(case.urdf), case.base, case.tips)
    poses = np.repeat(np.eye(4)[None], 3, axis=0)
    with pytest.raises(TargetError, match="every tip"):
        solver.solve_many({"left_tool0": poses})
    with pytest.raises(TargetError, match="same N"):
        solver.solve_many({"left_tool0": poses, "right_tool0": poses[:2]})
    with pytest.raises(TargetError, match="seed must have shape"):
        solver.solve_many({"left_tool0": poses, "right_tool0": poses}, seed=np.zeros(5))
    bad = poses.copy()
    bad[1, 0, 0] = np.nan
    with pytest.raises(TargetError, match="right_tool0.*NaN"):
        solver.solve_many({"left_tool0": poses, "right_tool0": bad})


# ---------------------------------------------------------------- installs numba cannot cache in

SOLVE_ONCE = """
import warnings, numpy as np
warnings.simplefilter("always")
from ik_node import IKSolver, load_robot
solver = IKSolver(load_robot({urdf!r}), "base_link", ["tool0"], seed_table_size=64)
q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
result = solver.solve(solver.tree.forward(q, "tool0"), timeout=1.0)
print("solved", result.success)
import ik_node
print(ik_node.__file__)
"""


#: The tests observing one cold process, in :func:`cold_install_run` (one worker runs them all:
#: scripts/test.sh passes ``--dist loadgroup``).
observes_the_cold_run = pytest.mark.xdist_group("compiled_core_cold_run")


@pytest.fixture(scope="module")
def installed_package(tmp_path_factory):
    """(A copy of the ik_node package with no compiled cache, the reason it is not read-only or
    None): bind-mounted read-only where this machine allows the mount, else the copy as it is."""
    root = tmp_path_factory.mktemp("install")
    source, mount = root / "source", root / "read_only"
    shutil.copytree(
        PACKAGE_ROOT / "ik_node", source / "ik_node", ignore=shutil.ignore_patterns("__pycache__")
    )
    mount.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(source), str(mount)], capture_output=True, text=True)
    if mounted.returncode != 0:
        yield source, f"cannot bind-mount here ({mounted.stderr.strip()}); a read-only install needs it"
        return
    try:
        remounted = subprocess.run(
            ["mount", "-o", "remount,ro,bind", str(mount)], capture_output=True, text=True
        )
        yield (
            mount,
            (f"cannot remount read-only here ({remounted.stderr.strip()})" if remounted.returncode else None),
        )
    finally:
        subprocess.run(["umount", str(mount)], check=False)


@pytest.fixture
def read_only_package(installed_package):
    """The copy of the package read-only; skips where this machine does not allow the mount."""
    package, not_read_only = installed_package
    if not_read_only:
        pytest.skip(not_read_only)
    return package


def run_script(script: str, package_parent: Path, environment: dict) -> subprocess.CompletedProcess:
    """``script`` in a fresh process importing ik_node from ``package_parent``, the kernel cache
    and the compile helper as ``environment`` says (numba's own variables only from there)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    env.update(environment, PYTHONPATH=str(package_parent))
    # cwd: not the source tree, whose ik_node would shadow the mounted one for "python -c"
    return subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=package_parent.parent,
        capture_output=True,
        text=True,
        timeout=900,
    )


def run_solve_once(package_parent: Path, environment: dict) -> subprocess.CompletedProcess:
    return run_script(
        SOLVE_ONCE.format(urdf=str(PACKAGE_ROOT / "urdf" / "arm7.urdf")), package_parent, environment
    )


@observes_the_cold_run
def test_read_only_install_caches_elsewhere_or_solves_uncached_with_one_warning(
    read_only_package, cold_install_run
):
    """A read-only package directory: with NUMBA_CACHE_DIR the kernels are compiled and cached
    there (the cold run of :func:`cold_install_run`); with no writable location at all they run
    uncached after one warning that says so."""
    run, seen, cache = cold_install_run
    assert seen["solved"], run.stderr
    assert seen["package"].startswith(str(read_only_package))  # the mounted copy, not the source tree
    assert any(cache.rglob("*.nbi")), "nothing cached in NUMBA_CACHE_DIR"
    assert "cannot cache" not in run.stderr
    nowhere = run_solve_once(
        read_only_package,
        {"HOME": str(read_only_package), "XDG_CACHE_HOME": str(read_only_package / "cache")},
    )
    assert "solved True" in nowhere.stdout, nowhere.stderr
    assert nowhere.stderr.count("ik_node cannot cache its compiled IK kernels") == 1, nowhere.stderr
    assert "NUMBA_CACHE_DIR" in nowhere.stderr


def test_plain_python_mode_warns_once_and_solves():
    """NUMBA_DISABLE_JIT=1 (or no numba): the same kernels as plain Python, one warning."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    env["NUMBA_DISABLE_JIT"] = "1"
    began = time.perf_counter()
    script = SOLVE_ONCE.format(urdf=str(PACKAGE_ROOT / "urdf" / "arm7.urdf"))
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=240)
    assert "solved True" in run.stdout, run.stderr
    assert run.stderr.count("run as plain Python") == 1, run.stderr
    assert "pip install numba" in run.stderr
    assert time.perf_counter() - began < 120


def test_read_only_and_strided_inputs_reuse_the_compiled_kernels():
    """Seeds and targets given as read-only or strided arrays (np.broadcast_to, slices) are
    solved by the kernels already compiled: no new signature (each would cost a compile)."""
    from ik_node.solver import kernels

    case = BY_NAME["arm7"]
    solver = IKSolver(load_robot(case.urdf), case.base, case.tips)
    q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.9, 0.5])
    target = solver.tree.forward(q, "tool0")
    solver.solve(target, seed=q)
    signatures = len(kernels.search_many.signatures), len(kernels.check_poses.signatures)
    read_only_seed = np.broadcast_to(q, (7,))
    strided_seed = np.repeat(q, 2)[::2]
    read_only_target = np.broadcast_to(target, (4, 4))
    for seed, goal in ((read_only_seed, read_only_target), (strided_seed, target.T.copy().T)):
        assert solver.solve(goal, seed=seed).success
    assert (len(kernels.search_many.signatures), len(kernels.check_poses.signatures)) == signatures


EACH_KERNEL_ONCE = """
import json, warnings, numpy as np
warnings.simplefilter("always")
import ik_node
from ik_node import IKSolver, TipTask, load_robot
from ik_node.compiled import (attempt, contacts, continuation, elementary, gjk, joints, linalg, manifold,
                              restarts, rotations, search, spatial, steps, table_search, tasks)
MODULES = (attempt, contacts, continuation, elementary, gjk, joints, linalg, manifold, restarts, rotations,
           search, spatial, steps, table_search, tasks)
def compiled():
    return {{f"{{module.__name__}}.{{name}}": len(function.signatures)
            for module in MODULES
            for name, function in vars(module).items()
            if hasattr(function, "signatures") and function.__module__ == module.__name__}}
task = TipTask("pose", weight=2, position_tolerance=1, orientation_tolerance=1)  # ints, not floats
arm = IKSolver(load_robot({arm7!r}), "base_link", ["tool0"], posture_gain=0, max_joint_move=1,
               tasks={{"tool0": task}})
solved = arm.solve(arm.tree.forward(arm.rest_posture + 0.1, "tool0")).success
arm.null_space_motion(arm.task_jacobian(arm.rest_posture), np.ones(7))
pair = IKSolver(load_robot({dual_arm!r}), "base_link", ["left_tool0", "right_tool0"], min_damping=0)
far = np.eye(4)
far[0, 3] = 9.0  # m: out of reach, a task-priority solve
pair.solve({{"left_tool0": pair.tree.forward(pair.rest_posture, "left_tool0"), "right_tool0": far}})
pair.solve_many({{tip: np.repeat(np.eye(4)[None], 3, axis=0) for tip in pair.tip_links}})
default = compiled()
goal = arm.tree.forward(arm.rest_posture + 0.2, "tool0")
checked = IKSolver(arm.robot, "base_link", ["tool0"], self_collision=True)
answer = checked.solve(goal)
print(json.dumps({{"default": default, "after": compiled(), "collision_solved": answer.success,
                  "solved": solved, "package": ik_node.__file__}}))
"""


@pytest.fixture(scope="module")
def cold_install_run(installed_package, tmp_path_factory):
    """(the process, what it printed, its kernel cache) of ``EACH_KERNEL_ONCE`` run once on the
    installed copy of the package (read-only where the machine allows) with an empty kernel
    cache given by NUMBA_CACHE_DIR, compiling in its own process (no helper): so every kernel it
    uses is compiled there, and shows a signature (one loaded from the cache holds its callees'
    code and lists none)."""
    cache = tmp_path_factory.mktemp("cold_cache")
    script = EACH_KERNEL_ONCE.format(arm7=str(BY_NAME["arm7"].urdf), dual_arm=str(BY_NAME["dual_arm"].urdf))
    run = run_script(
        script, installed_package[0], {"NUMBA_CACHE_DIR": str(cache), "IK_NODE_COMPILE_HELPER": "0"}
    )
    assert run.returncode == 0, run.stderr
    return run, json.loads(run.stdout.strip().splitlines()[-1]), cache


def test_solves_leave_the_search_contexts_references_as_they_were():
    """The search reads its context's fields borrowed (``context.record_fields``: no reference
    counted per array): solves that converge and searches that fail leave the record's reference
    count where it was, so the context and its work arrays are freed with the solver (a count that
    grows by one a call, as a search compiled without reference counts leaked it, never frees
    them); a batch (contexts of its own, per slice) solves beside it."""
    from ik_node.compiled.jit import JIT_ENABLED

    if not JIT_ENABLED:
        pytest.skip("the reference counts are numba's: compiled kernels only")
    case = BY_NAME["arm7"]
    solver = IKSolver(load_robot(case.urdf), case.base, case.tips, **DETERMINISTIC)
    solver.wait_for_kernels()
    q, targets = random_targets(solver, 40, seed=11)
    solver.solve(targets["tool0"][0], seed=q[0])
    context = solver.core.search._arrays[-1]  # (the call's search context: SearchCall._new_call_arrays)
    references = context._meminfo.refcount
    unreachable = np.eye(4)
    unreachable[:3, 3] = 5.0  # (m: beyond arm7's reach, so every restart runs)
    for row, target in zip(q, targets["tool0"]):
        assert solver.solve(target, seed=row).success
    assert not solver.solve(unreachable, seed=q[0]).success
    assert solver.solve_many(targets["tool0"], seed=q).success.all()
    assert context._meminfo.refcount == references


@observes_the_cold_run
def test_the_default_problem_compiles_only_its_kernels_once_and_a_feature_after_it_works(cold_install_run):
    """A fresh process on an empty kernel cache (:func:`cold_install_run`) building solvers with
    the default options (some given as ints, a task-priority solve, solve_many, the Jacobian
    helpers) gets every kernel it uses for one signature (each more would be a whole compile) and
    none of the collision (contacts, GJK), posture, CCD, transpose or solve-type scoring kernels
    (the feature switches: see ik_node.compiled.bundles); a collision-aware solver built
    afterwards in the same process compiles those and solves."""
    _, seen, _ = cold_install_run
    default, after = seen["default"], seen["after"]
    used = {name for name, count in default.items() if count}
    twice = {name: default[name] for name in used if default[name] > 1}
    assert not twice, f"kernels compiled for more than one signature: {twice}"
    unused = {
        "contacts.contacts", "gjk.hull_distance", "attempt._task_restored", "attempt.posture_cost",
        "steps.ccd_sweep", "steps.transpose_step", "steps.constrained_step", "linalg.manipulability",
    }  # fmt: skip
    assert not {name for name in used if name.split(".", 2)[-1] in unused}, used
    assert "ik_node.compiled.search.search_many" in used
    assert seen["collision_solved"]
    assert after["ik_node.compiled.contacts.contacts"] >= 1
    assert after["ik_node.compiled.gjk.hull_distance"] >= 1
    assert after["ik_node.compiled.attempt._task_restored"] == 0


COLD_PROBE = """
from ik_node.solver import kernels
from ik_node.compiled.jit import cache_is_cold
print(cache_is_cold(kernels.search_many))
"""


def test_a_cold_cache_is_recognised_before_compiling_and_said_once(tmp_path):
    """The notice a user sees before a cold compile: numba's cache for the kernels missing (an
    empty NUMBA_CACHE_DIR) is cold, the cache the test script warmed is not; the CLI's first
    solve prints the notice once, on one line, and its next run none."""
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    probe = [sys.executable, "-c", COLD_PROBE]
    assert (
        subprocess.run(probe, env=environment, capture_output=True, text=True, check=True).stdout.strip()
        == "True"
    )
    # the suite's own environment: scripts/test.sh warmed its cache (NUMBA_CACHE_DIR or __pycache__)
    assert (
        subprocess.run(probe, env=dict(os.environ), capture_output=True, text=True, check=True).stdout.strip()
        == "False"
    )
    solve = [sys.executable, "-m", "ik_node.cli", "solve", "--urdf", str(URDF_DIR / "arm6.urdf"), "--base",
             "base_link", "--tip", "tool0", "--xyz", "0.4", "0.1", "0.4", "--position-only"]  # fmt: skip
    first = subprocess.run(solve, env=environment, capture_output=True, text=True)
    assert first.returncode == 0 and first.stderr.count("compiling the IK kernels") == 1, first.stderr
    again = subprocess.run(solve, env=environment, capture_output=True, text=True)
    assert again.returncode == 0 and "compiling" not in again.stderr, again.stderr


def test_a_warm_cache_stays_warm_when_the_sources_times_change():
    """numba keeps a cached kernel while the kernel sources' contents (the stamp) are unchanged:
    a checkout or a copy that only changes their files' times must not make the notice say
    "compiling" (the cache of the suite's environment, warmed by scripts/test.sh)."""
    from ik_node.compiled import jit

    source = jit.KERNEL_SOURCES[0]
    times = os.stat(source)
    os.utime(source, ns=(times.st_atime_ns, time.time_ns() + 10**9))  # newer than every index
    try:
        probe = [sys.executable, "-c", COLD_PROBE]
        said = subprocess.run(probe, env=dict(os.environ), capture_output=True, text=True, check=True).stdout
    finally:
        os.utime(source, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert said.strip() == "False"


INNER_DECORATORS = ("inner_kernel", "inner_allocating_kernel")


def inner_kernels() -> dict[str, str]:
    """``{name: module}`` of the kernels compiled without a CPython wrapper (``jit.inner_kernel``):
    only other kernels may call them."""
    import ast

    found = {}
    for path in sorted((PACKAGE_ROOT / "ik_node" / "compiled").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(decorator, ast.Name) and decorator.id in INNER_DECORATORS
                for decorator in node.decorator_list
            ):
                found[node.name] = path.stem
    return found


def test_no_python_outside_the_kernels_names_an_inner_kernel():
    """An inner kernel has no CPython wrapper, so a call from Python would fail: no module outside
    ``compiled/`` (the package's others, the tests, the benchmarks) names one, and each is called
    by some kernel."""
    import re

    inner = inner_kernels()
    assert len(inner) > 40, inner  # (the kernels only kernels call: most of the small ones)
    outside = [
        path
        for folder in ("ik_node", "test", "benchmark")
        for path in (PACKAGE_ROOT / folder).rglob("*.py")
        if path.parent.name != "compiled"
    ]
    word = re.compile(r"\b(" + "|".join(map(re.escape, inner)) + r")\b")
    named = {
        f"{path.relative_to(PACKAGE_ROOT)}: {match}"
        for path in outside
        for match in word.findall(path.read_text())
    }
    assert not named, sorted(named)
    compiled_sources = "".join(
        path.read_text() for path in (PACKAGE_ROOT / "ik_node" / "compiled").glob("*.py")
    )
    uncalled = [
        name for name in inner if not re.search(rf"\b{name}\(", compiled_sources.replace(f"def {name}(", ""))
    ]
    assert not uncalled, uncalled
