"""Which kernels serve a solver's solves, and their compile.

The kernels a problem uses (one specialisation per combination of feature switches: see
:mod:`.warmup`) are compiled once per install into numba's cache. The first solver of each
combination in a process prepares them (:func:`prepare_kernels`: compiles them, or loads them
from the cache) when built. Where they are neither compiled nor cached, a helper process compiles
them (:class:`~.compile_helper.HelperCompile`) while the solver answers with the same functions as plain
Python, and a thread swaps the compiled ones in when they are ready (:class:`KernelSwitch`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

import numpy as np

from ..compiled.jit import COLD_COMPILE, JIT_ENABLED, SLOWDOWN_WITHOUT_NUMBA, cache_writable, kernel_ready
from . import kernels
from .compile_helper import HELPER_VARIABLE, HelperCompile
from .core import SolverCore
from .inputs import check_pose, timeout_ns
from .search_call import SearchArguments

__all__ = ["KernelSwitch", "kernels_prepared", "prepare_kernels", "search_budget"]

#: Said (``logging`` warning, shown without any logging set up) before a compile in this process,
#: and when a helper process compiles while the solves run as plain Python.
COLD_COMPILE_NOTICE = (
    f"compiling the IK kernels this problem uses (once per install and set of features: {COLD_COMPILE}; "
    "later runs load them from the cache in under a second)"
)
BACKGROUND_COMPILE_NOTICE = (
    "compiling the IK kernels this problem uses in {where} (once per install and set of features: "
    f"{COLD_COMPILE}); meanwhile the solves run as plain Python, about {SLOWDOWN_WITHOUT_NUMBA} times "
    "slower, with their time budgets scaled alike (1 s at most)"
)

#: A solve's budget while the kernels run as plain Python: ``SLOWDOWN_WITHOUT_NUMBA`` times the
#: one asked for (the same work), at most this [ns] (an unreachable goal must not hold a node
#: for its 50 ms x 300 = 15 s).
PYTHON_BUDGET_NS = 1_000_000_000
#: The search that prepares the kernels runs at most this long once compiled [ns].
PREPARATION_SEARCH_NS = 1_000_000

_log = logging.getLogger("ik_node.solver")
# (seconds, compiled) per combination of feature switches whose kernels are ready in this process
_prepared: dict[tuple, tuple[float, bool]] = {}
_preparing = threading.Lock()
_helpers: dict[tuple, HelperCompile | None] = {}  # switch combination -> its helper process
_helpers_lock = threading.Lock()


def search_budget(timeout: float | None, max_attempts: int | None, kernel_set) -> int:
    """A search's time budget [ns] for ``timeout`` [s] (:func:`.inputs.timeout_ns`; -1: none) on
    ``kernel_set``: on the plain-Python kernels (while the compiled ones compile) the same work,
    ``SLOWDOWN_WITHOUT_NUMBA`` times as long, at most ``PYTHON_BUDGET_NS``."""
    budget = timeout_ns(timeout, max_attempts)
    if budget > 0 and kernel_set is not kernels:
        budget = max(budget, min(budget * SLOWDOWN_WITHOUT_NUMBA, PYTHON_BUDGET_NS))
    return budget


def kernels_ready(arguments: SearchArguments) -> bool:
    """Whether the search for a solver's ``arguments`` (:func:`.search_call.search_arguments`)
    runs without compiling: compiled in this process or cached for this machine (what is
    compiled depends on the arguments' types only, which these stand-ins share with a solve's)."""
    context_arguments = (
        arguments.tree,
        arguments.task,
        arguments.joints,
        arguments.table,
        arguments.collision,
        1,
    )
    if not kernel_ready(kernels.search_context, context_arguments):
        return False
    leading = (
        arguments.context(kernels, 1), np.zeros((1, 1, 4, 4)), np.zeros((1, 1)), -1, kernels.NO_DEADLINE,
        kernels.NO_PRIORITY, np.zeros((1, 1)), np.zeros((1, 1, 2)),
        np.zeros((1, kernels.RESULT_COLUMNS), dtype=np.int64),
    )  # fmt: skip
    return kernel_ready(kernels.search_many, leading + arguments.trailing)


def _helper_compile(key: tuple) -> HelperCompile | None:
    """The helper process compiling the kernels of switch combination ``key`` (one per key and
    process), or None where what it compiled could not be saved for this process to load (numba
    has no writable cache for the kernels) or it cannot start: they compile in this one then."""
    with _helpers_lock:
        if key not in _helpers:
            helper = None
            if cache_writable(kernels.search_many):
                try:
                    helper = HelperCompile(key)
                except OSError as error:
                    _log.warning("cannot start a helper process to compile the IK kernels (%s)", error)
            _helpers[key] = helper
        return _helpers[key]


def _switch_key(arguments: SearchArguments) -> tuple:
    """Which feature switches of a solver's search arguments are on (see :mod:`.kernels`): the
    problems with the same key run the same compiled kernels."""
    return tuple(switch is not None for switch in arguments.switches)


def prepare_kernels(core: SolverCore, notice: bool = True) -> tuple[float, bool]:
    """Compile the kernels a solver's ``core`` (:attr:`IKSolver.core
    <ik_node.solver.IKSolver.core>`, on the compiled kernels) uses, or load them from numba's
    cache, by running its search once (problems with the same feature switches share them: the
    first :class:`~ik_node.solver.IKSolver` of each kind does it when built, so that no solve
    spends its budget on it; ``solve`` and ``solve_many`` run the same kernel). Returns (seconds
    taken, True if they were compiled rather than loaded), the same on later calls. Safe to call
    from another thread. ``notice``: say before compiling (:data:`COLD_COMPILE_NOTICE`)."""
    key = _switch_key(core.arguments)
    with _preparing:
        if key not in _prepared:
            _prepared[key] = _prepare_search_kernels(core, notice)
    return _prepared[key]


def _prepare_search_kernels(core: SolverCore, notice: bool) -> tuple[float, bool]:
    if notice and not kernels_ready(core.arguments):
        _log.warning(COLD_COMPILE_NOTICE)
    began = time.perf_counter()
    misses = sum(kernels.search_many.stats.cache_misses.values()) if JIT_ENABLED else 0
    problem = core.problem
    identity = np.repeat(np.eye(4)[None], len(problem.tips), axis=0)
    check_pose(problem.tips[0], identity)
    rest_posture = problem.rest_posture
    problem.points(
        problem.tree.normalized(rest_posture)
    )  # (what a solve with some tips' targets left out calls)
    deadline = time.monotonic_ns() + PREPARATION_SEARCH_NS  # (whatever the solver's max_attempts)
    core.search(identity, rest_posture, deadline)
    compiled = JIT_ENABLED and sum(kernels.search_many.stats.cache_misses.values()) > misses
    preparation = (time.perf_counter() - began, bool(compiled))
    _log.info(
        "IK kernels %s in %.1f s",
        "compiled (cached for later starts)" if compiled else "loaded",
        preparation[0],
    )
    return preparation


def kernels_prepared() -> tuple[float, bool] | None:
    """What :func:`prepare_kernels` returned for the first solver prepared in this process, or
    None before."""
    return next(iter(_prepared.values()), None)


class KernelSwitch:
    """Whether the compiled kernels serve a solver's solves yet (:attr:`compiled`), and the
    switch to them. ``compiled=True``: they do already (a solver unpickled from another process,
    which loads or compiles them at its first solve); else :meth:`start` decides."""

    def __init__(self, compiled: bool = False):
        self._compiled = threading.Event()  # set once the compiled kernels serve the solves
        self._ended = threading.Event()  # set then, or once their compile failed
        if compiled:
            self._serve_compiled()

    @property
    def compiled(self) -> bool:
        """Whether the compiled kernels serve the solves."""
        return self._compiled.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the compiled kernels serve the solves, or their compile failed (at most
        ``timeout`` [s]); returns :attr:`compiled`."""
        self._ended.wait(timeout)
        return self.compiled

    def start(
        self, install: Callable[[object], SolverCore], probe: SearchArguments, compile_helper: bool | None
    ) -> None:
        """Serve a solver with the compiled kernels, prepared before this returns, where they are
        cached or ``compile_helper`` is False (None: unless ``IK_NODE_COMPILE_HELPER=0``); else
        with the plain-Python ones while they compile (:meth:`_compile_meanwhile`).
        ``install(kernel_set)`` makes the solver's core for a kernel set, serves the solves with
        it and returns it; ``probe``: search arguments of the solver's problem (every search's
        types: what decides whether the kernels are ready)."""
        if compile_helper is None:
            compile_helper = os.environ.get(HELPER_VARIABLE, "1") != "0"
        if not compile_helper or kernels_ready(probe):
            prepare_kernels(install(kernels))
            self._serve_compiled()
        else:
            self._compile_meanwhile(install, _switch_key(probe))

    def _serve_compiled(self) -> None:
        self._compiled.set()
        self._ended.set()

    def _compile_meanwhile(self, install: Callable[[object], SolverCore], key: tuple) -> None:
        """The kernels are neither compiled nor cached: a helper process compiles them
        (:class:`~.compile_helper.HelperCompile`; where numba cannot cache, a thread here) while the
        solves run as plain Python, each with ``SLOWDOWN_WITHOUT_NUMBA`` times its budget (at most
        ``PYTHON_BUDGET_NS``); a thread then loads them and swaps them in (said in the log)."""
        helper = _helper_compile(key)
        where = "a helper process" if helper else "the background"
        _log.warning(BACKGROUND_COMPILE_NOTICE.format(where=where))
        install(kernels.python_kernels())

        def switch() -> None:
            if helper is not None and not helper.wait():
                _log.warning(
                    "the helper process compiling the IK kernels failed; compiling them in this one:\n%s",
                    helper.output(),
                )
            try:
                prepare_kernels(install(kernels), notice=False)
            except Exception:  # (the plain-Python kernels keep answering)
                _log.exception("the IK kernels could not be compiled; solves go on as plain Python")
                install(kernels.python_kernels())
            else:
                self._compiled.set()
                _log.info("IK kernels ready: solves now run compiled")
            finally:
                self._ended.set()

        threading.Thread(target=switch, name="ik_node-compile", daemon=True).start()
