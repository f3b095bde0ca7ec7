"""How the solver's kernels are compiled: numba's ``njit`` with an on-disk cache, or plain Python.

* With numba, kernels are ``@njit(cache=True)``. numba caches next to the source
  (``__pycache__``), or, when that is not writable (a system install), in the user's cache
  directory or ``NUMBA_CACHE_DIR``. Where no location is writable, caching is turned off and
  that is said once (every process then compiles again).
* numba finds a cached kernel again while the stamp of its own source file is unchanged, although
  the kernel holds the code of every kernel it calls, in other modules too. So every kernel's
  stamp here is a SHA-256 of all the kernel sources (:data:`KERNEL_SOURCES`:
  ``ik_node/compiled/*.py``, where every kernel lives, this module among them): an edit in any of
  them recompiles all kernels at their next use.
* Without numba (or with ``NUMBA_DISABLE_JIT=1``, numba's own switch), the same functions run as
  plain Python, several hundred times slower; a warning says so once, with how to install numba.
* :func:`python_module` loads this package a second time as plain Python (the same files, the
  kernels undecorated and calling each other's plain versions), so that a process can answer
  with them while its compiled kernels are being compiled (see ``ik_node.solver.IKSolver``).
  :func:`kernel_ready` says whether a call would compile.
* A cache warmed ahead into a directory the runtime user cannot write (a container image, a
  read-only install): numba's locators pass such a ``NUMBA_CACHE_DIR`` over, so this module
  adds one that loads from it (:class:`ReadOnlyCacheLocator`); a kernel compiled anew there
  (another CPU or numba version: numba keys the cache to both) is not saved, said once.

:func:`monotonic_ns` reads ``CLOCK_MONOTONIC`` [ns] inside compiled code (nopython mode cannot
call ``time``), so a solve can stop at its deadline between two iterations.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import threading
import time
import warnings
from pathlib import Path

__all__ = [
    "BATCH_THREADS",
    "COLD_COMPILE",
    "JIT_ENABLED",
    "CompiledCall",
    "IS_PYTHON_COPY",
    "SLOWDOWN_WITHOUT_NUMBA",
    "allocating_kernel",
    "batch_kernel",
    "cache_is_cold",
    "cache_location",
    "cache_writable",
    "cgutils",
    "compiler",
    "inline_allocating_kernel",
    "inline_kernel",
    "inner_allocating_kernel",
    "inner_kernel",
    "intrinsic",
    "kernel",
    "compiled_entry",
    "kernel_ready",
    "llvm_ir",
    "monotonic_ns",
    "numba_types",
    "overload",
    "python_module",
    "reduction_kernel",
    "structref",
]

#: Measured on arm7 (solve from the mid-range seed, 5 ms budget): plain Python iterations are
#: this many times slower than compiled ones.
SLOWDOWN_WITHOUT_NUMBA = 300
#: How long the default problem's kernels take to compile after an install, as
#: benchmark/bench_compile.py measured it on a 2-core VM (docs/performance.md): what every notice
#: about a cold compile says.
COLD_COMPILE = "about 54 s on 2 cores"

try:
    import numba
    from numba import config as _numba_config
except ImportError:  # pragma: no cover - exercised by the no-numba CI run's import path
    numba = None

#: The package's plain-Python copy is named after it with this suffix (see :func:`python_module`).
_COPY_SUFFIX = "_as_python"
_PACKAGE_NAME = __name__.rpartition(".")[0]
#: Whether this module belongs to the plain-Python copy (whose kernels are never compiled).
IS_PYTHON_COPY = _PACKAGE_NAME.endswith(_COPY_SUFFIX)

#: Whether numba compiles the kernels (False: they run as plain Python: numba missing,
#: ``NUMBA_DISABLE_JIT=1``, or this module is the plain-Python copy's).
JIT_ENABLED = numba is not None and not _numba_config.DISABLE_JIT and not IS_PYTHON_COPY

if (numba is None or not JIT_ENABLED) and not IS_PYTHON_COPY:
    warnings.warn(
        "ik_node's IK kernels run as plain Python ("
        + ("numba is not installed" if numba is None else "NUMBA_DISABLE_JIT is set")
        + f"): solves are about {SLOWDOWN_WITHOUT_NUMBA} times slower and most 5 ms budgets will "
        "not be met. Install numba ('pip install numba', or apt's python3-numba) for real use.",
        RuntimeWarning,
        stacklevel=2,
    )

_cache_refused = False

_PACKAGE = Path(__file__).resolve().parent
#: The files whose kernels call each other; any change to one invalidates every cached kernel.
KERNEL_SOURCES = tuple(sorted(_PACKAGE.glob("*.py")))


def _sources_stamp() -> str:
    """SHA-256 of the kernel sources' contents, in order (the stamp of every cached kernel)."""
    digest = hashlib.sha256()
    for path in KERNEL_SOURCES:
        digest.update(path.read_bytes())
    return digest.hexdigest()


_STAMP = _sources_stamp()


def _stamp_with_sources(dispatcher) -> None:
    """Give ``dispatcher``'s cache the stamp of every kernel source rather than of its own file
    (numba reads the stamp when the cache object is made; its index keeps the kernel while the
    stamp matches). numba versions whose cache lacks these attributes keep numba's own stamp."""
    try:
        dispatcher._cache._cache_file._source_stamp = _STAMP
    except AttributeError:  # pragma: no cover - another numba's internals
        pass


def _compile(function, **options):
    """``numba.njit(cache=True, **options)(function)``, or without the cache when numba has no
    writable location for it (said once); ``function`` itself without numba and in the
    plain-Python copy."""
    global _cache_refused
    if not JIT_ENABLED:
        return function
    if not _cache_refused:
        try:
            dispatcher = numba.njit(cache=True, **_NO_C_WRAPPER, **options)(function)
            _stamp_with_sources(dispatcher)
            _load_only_if_read_only(dispatcher)
            return dispatcher
        except RuntimeError as error:  # "cannot cache function ...: no locator available"
            _cache_refused = True
            warnings.warn(
                f"ik_node cannot cache its compiled IK kernels: no writable directory for them "
                f"({Path(function.__code__.co_filename).parent / '__pycache__'}, the user's cache "
                f"directory, NUMBA_CACHE_DIR: {error}); every process compiles them again at its "
                f"first solves ({COLD_COMPILE}). Set NUMBA_CACHE_DIR to a writable directory, or "
                "warm one ahead with 'ik_node warmup' (docs/install.md).",
                RuntimeWarning,
                stacklevel=3,
            )
    return numba.njit(cache=False, **_NO_C_WRAPPER, **options)(function)


def compiled_entry(dispatcher, arguments: tuple):
    """``dispatcher``'s compiled function for the types of ``arguments``, to call without numba's
    dispatch: numba finds the compiled function for a call's argument types at every call (a
    fingerprint of each argument; ~1.5 us of a ~25 us solve with the solver's 24 arrays). The
    caller must pass arguments of exactly these types at every call (dtype, dimensions, layout,
    writability, alignment): the compiled function reads them as such, unchecked. ``dispatcher``
    itself where there is no such function (plain Python, not compiled for these types, another
    numba's internals)."""
    if not JIT_ENABLED:
        return dispatcher
    try:
        signature = tuple(dispatcher.typeof_pyval(value) for value in arguments)
        return dispatcher.overloads[signature].entry_point
    except (AttributeError, KeyError):
        return dispatcher


class CompiledCall:
    """``dispatcher`` called with trailing arguments ``fixed`` (made once), through its compiled
    function (:func:`compiled_entry`) from the call after the first (which compiles or loads it),
    or from the first where ``leading`` (arguments of the calls' types) finds it compiled in this
    process already (not looked up inside the first call's time budget then): the leading
    arguments must have the same types at every call."""

    def __init__(self, dispatcher, fixed: tuple, leading: tuple | None = None):
        self._dispatcher, self._fixed, self._entry = dispatcher, fixed, None
        if leading is not None:
            entry = compiled_entry(dispatcher, leading + fixed)
            self._entry = None if entry is dispatcher else entry

    def __call__(self, *leading):
        arguments = leading + self._fixed
        if self._entry is not None:
            return self._entry(*arguments)
        result = self._dispatcher(*arguments)
        self._entry = compiled_entry(self._dispatcher, arguments)
        return result

    def __reduce__(self):
        """Pickled (with a solver sent to a Dask worker, say) without the compiled function, a
        pointer into this process: the copy finds its own at its first call."""
        return CompiledCall, (self._dispatcher, self._fixed)


def kernel_ready(dispatcher, arguments: tuple) -> bool:
    """Whether calling ``dispatcher`` (a :func:`kernel`) with ``arguments`` runs without
    compiling: compiled for their types in this process, or in numba's cache for this machine
    (the same numba, CPU and kernel sources: the cache index's key). True without numba; False
    where numba's internals differ from the ones known here (the call may compile)."""
    if not JIT_ENABLED:
        return True
    try:
        signature = tuple(dispatcher.typeof_pyval(value) for value in arguments)
        if signature in dispatcher.overloads:
            return True
        cache = dispatcher._cache
        key = cache._index_key(signature, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except AttributeError:  # no cache (NullCache), or another numba's internals
        return False


def cache_writable(dispatcher) -> bool:
    """Whether what numba compiles for ``dispatcher`` is saved to its cache (False without a
    cache, or in a read-only one: see :class:`ReadOnlyCacheLocator`)."""
    locator = getattr(getattr(getattr(dispatcher, "_cache", None), "_impl", None), "locator", None)
    return JIT_ENABLED and locator is not None and not isinstance(locator, ReadOnlyCacheLocator)


def cache_location(dispatcher) -> str | None:
    """The directory numba keeps ``dispatcher``'s cache in (None without one)."""
    locator = getattr(getattr(getattr(dispatcher, "_cache", None), "_impl", None), "locator", None)
    return None if locator is None else locator.get_cache_path()


def compiler() -> str:
    """What compiles the kernels, as numba keys its cache: numba's version and the host CPU
    (``"numba 0.61.2, CPU znver3"``). Only where :data:`JIT_ENABLED`."""
    import llvmlite.binding

    return f"numba {numba.__version__}, CPU {llvmlite.binding.get_host_cpu_name()}"


def python_module(name: str):
    """Module ``name`` of this package (``"search"``, ...) loaded a second time as plain Python,
    as ``ik_node.compiled_as_python.<name>``: the same source files, whose kernels are left
    undecorated (this module's copy sets :data:`JIT_ENABLED` False there) and call each other's
    plain versions. What answers while the compiled kernels are being compiled: about
    :data:`SLOWDOWN_WITHOUT_NUMBA` times slower, without compiling anything."""
    package = _PACKAGE_NAME if IS_PYTHON_COPY else _PACKAGE_NAME + _COPY_SUFFIX
    with _copy_lock:
        if package not in sys.modules:
            spec = importlib.util.spec_from_file_location(
                package, _PACKAGE / "__init__.py", submodule_search_locations=[str(_PACKAGE)]
            )
            module = importlib.util.module_from_spec(spec)
            sys.modules[package] = module
            spec.loader.exec_module(module)
    return importlib.import_module(f"{package}.{name}")


_copy_lock = threading.Lock()


def cache_is_cold(compiled_function) -> bool:
    """Whether numba will compile ``compiled_function`` (a :func:`kernel`) at its first call
    rather than load it: its cache index (read as numba reads it) holds no kernel for these
    sources (the stamp: their contents, not their files' times, which a checkout or a copy
    changes) compiled for this CPU (numba's key). False without numba or without a cache."""
    if not JIT_ENABLED or compiled_function._cache is None:
        return False
    try:
        machine = compiled_function.targetctx.codegen().magic_tuple()
        kept = compiled_function._cache._cache_file._load_index()
        return not any(key[1] == machine for key in kept)
    except Exception:  # noqa: BLE001 - another numba's internals: say nothing rather than guess
        return False


def _reference_counting_option() -> dict:
    """numba's switch that compiles a function without its runtime's reference counting
    (``_nrt=False``), where this numba's CPU target has it (else kernels keep the counting)."""
    if numba is None:
        return {}
    try:
        from numba.core.cpu import CPUTargetOptions
    except ImportError:  # pragma: no cover - an older numba
        return {}
    known = hasattr(CPUTargetOptions, "_nrt") or "_nrt" in getattr(CPUTargetOptions, "OPTIONS", {})
    return {"_nrt": False} if known else {}


#: The options of a kernel that creates no arrays (see :func:`kernel`), and of one that does
#: (said explicitly: a function without the option inherits its caller's).
_WITHOUT_REFERENCE_COUNTS = _reference_counting_option()
_WITH_REFERENCE_COUNTS = {key: True for key in _WITHOUT_REFERENCE_COUNTS}
#: No kernel is called through a C function pointer (numba's ``cfunc`` wrapper: first-class
#: function values, ``@cfunc``): none is made. An inner kernel has no CPython wrapper either.
_NO_C_WRAPPER = {"no_cfunc_wrapper": True} if numba is not None else {}
_NO_PYTHON_WRAPPER = {"no_cpython_wrapper": True}


def kernel(function):
    """Compile ``function`` in nopython mode, cached (a no-op without numba), without numba's
    reference counting: it may not create arrays (``np.empty``, ``copy``) nor return one (views
    included), only read and write the arrays it is given and call kernels.

    Why: numba counts references to every array a function receives, views and tuples of arrays
    included, with an atomic increment and decrement (a full memory barrier) that its pruning
    pass often cannot remove. Measured on arm7's ``solve_many`` (perf, one thread): 31 % of the
    time was in ``NRT_incref``/``NRT_decref``. A function that needs arrays made uses
    :func:`allocating_kernel`; a search's work arrays are made once (per batch slice in
    ``solve_many``) and handed down."""
    return _compile(function, **_WITHOUT_REFERENCE_COUNTS)


def inner_kernel(function):
    """Like :func:`kernel`, for a kernel that only other kernels call (never Python): compiled
    without the CPython wrapper that boxes and unboxes its arguments for a call from Python
    (numba's ``no_cpython_wrapper``), a module of its own that numba would type, optimise and
    emit for each kernel. Calling it from Python fails; ``test_compiled_core`` checks that no
    module outside ``compiled/`` names one."""
    return _compile(function, **_NO_PYTHON_WRAPPER, **_WITHOUT_REFERENCE_COUNTS)


def inner_allocating_kernel(function):
    """Like :func:`allocating_kernel`, for a kernel that only other kernels call (see
    :func:`inner_kernel`)."""
    return _compile(function, **_NO_PYTHON_WRAPPER, **_WITH_REFERENCE_COUNTS)


def allocating_kernel(function):
    """Like :func:`kernel`, with numba's reference counting: for the functions that create arrays
    (work space, copies) or return them. Called from a :func:`kernel`, it must return no array."""
    return _compile(function, **_WITH_REFERENCE_COUNTS)


def inline_allocating_kernel(function):
    """Like :func:`allocating_kernel`, inlined into its compiled callers (numba's
    ``inline="always"``): for a function that makes arrays and is both an entry from Python and
    part of a larger entry (the larger one then compiles its code once, not as a callee of its
    own linked in and optimised again). Not for a function with feature switches: numba prunes
    the branches of ``None`` arguments before it inlines, so an inlined copy keeps them all."""
    return _compile(function, inline="always", **_WITH_REFERENCE_COUNTS)


def inline_kernel(function):
    """Like :func:`kernel`, inlined into its compiled callers (numba's ``inline="always"``): for
    small helpers on the hot path that return several values (a call and its tuple cost more than
    their arithmetic), or views of a caller's arrays, and for the hot path's functions that take
    the bundles and call on (numba passes each array of a tuple as its own seven or more
    arguments, so such a call copies a few hundred words: arm7's ``evaluate_task`` took ~110 ns
    to call beside its ~320 ns of work). Not for a :func:`reduction_kernel`: inlined, it would
    lose its floating-point flags."""
    return _compile(function, inline="always", **_WITHOUT_REFERENCE_COUNTS)


def reduction_kernel(function):
    """Like :func:`kernel`, with floating-point sums reassociated and multiply-adds fused (numba's
    ``fastmath={"reassoc", "contract"}``; no assumptions about NaN or infinity), so that LLVM
    vectorises its dot products: for the dense linear algebra of many rows. Results differ from
    the sequential sums by rounding only."""
    return _compile(function, fastmath={"reassoc", "contract"}, **_WITHOUT_REFERENCE_COUNTS)


def batch_kernel(function):
    """Like :func:`allocating_kernel`, releasing the GIL while it runs, so that threads can run it
    on slices of a batch at once (:data:`BATCH_THREADS`). Not numba's ``parallel=True`` and
    ``prange``: its gufunc lowering compiles the whole call tree three times over (arm7: 6.8 s,
    against 1.8 s)."""
    return _compile(function, nogil=True, **_WITH_REFERENCE_COUNTS)


#: Threads a batch is spread over: numba's thread count (``NUMBA_NUM_THREADS``, default every
#: CPU), read without starting numba's threading layer; 1 in plain Python (the GIL serialises).
BATCH_THREADS = _numba_config.NUMBA_NUM_THREADS if JIT_ENABLED else 1


if JIT_ENABLED:
    from numba.core import caching as _caching

    class ReadOnlyCacheLocator(_caching.UserProvidedCacheLocator):
        """``NUMBA_CACHE_DIR`` when it exists but this user cannot write it (a cache warmed
        ahead, e.g. into a container image, or an install's): numba's own locators need to
        write a test file, so they pass it over and every process would compile again. This one
        loads from it; :func:`_load_only_if_read_only` keeps numba from saving there."""

        @classmethod
        def from_function(cls, py_func, py_file):
            directory = _numba_config.CACHE_DIR
            if not directory or not os.path.isdir(directory) or os.access(directory, os.W_OK):
                return None  # (numba's own locators)
            return cls(py_func, py_file)

    _cache_implementation = getattr(_caching, "CacheImpl", None) or getattr(_caching, "_CacheImpl", None)
    if _cache_implementation is not None:  # (numba >= 0.55 has it under one of these names)
        _cache_implementation._locator_classes.insert(0, ReadOnlyCacheLocator)
else:
    ReadOnlyCacheLocator = type(None)  # (no cache without numba)

_unsaved_said = False


def _load_only_if_read_only(dispatcher) -> None:
    """Where ``dispatcher``'s cache is read-only (:class:`ReadOnlyCacheLocator`), what it
    compiles is kept in memory only (numba would fail to save it): said once, naming the
    directory and the variable to set."""
    cache = getattr(dispatcher, "_cache", None)
    if isinstance(getattr(getattr(cache, "_impl", None), "locator", None), ReadOnlyCacheLocator):

        def save_overload(signature, data) -> None:
            global _unsaved_said
            if not _unsaved_said:
                _unsaved_said = True
                warnings.warn(
                    f"the IK kernels' cache {_numba_config.CACHE_DIR} (NUMBA_CACHE_DIR) is read-only and "
                    "lacks kernels this process needs (warmed on another CPU or numba version, or "
                    "for other features): they are compiled now and not saved. Warm it again "
                    "with 'ik_node warmup', or point NUMBA_CACHE_DIR at a writable directory.",
                    RuntimeWarning,
                    stacklevel=2,
                )

        cache.save_overload = save_overload


if JIT_ENABLED:  # (this module's clock, and what :mod:`.context` defines and reads its records with)
    import llvmlite.ir as llvm_ir
    from numba.core import cgutils
    from numba.core import types as numba_types
    from numba.core.extending import intrinsic, overload
    from numba.experimental import structref

    @intrinsic
    def _clock_monotonic_ns(typing_context):
        """``clock_gettime(CLOCK_MONOTONIC)`` in ns, as LLVM IR calling libc (POSIX)."""

        def codegen(context, builder, signature, arguments):
            int64, int32 = llvm_ir.IntType(64), llvm_ir.IntType(32)
            timespec = llvm_ir.LiteralStructType([int64, int64])
            function_type = llvm_ir.FunctionType(int32, [int32, timespec.as_pointer()])
            clock_gettime = cgutils.get_or_insert_function(builder.module, function_type, "clock_gettime")
            slot = cgutils.alloca_once(builder, timespec)
            builder.call(clock_gettime, [llvm_ir.Constant(int32, 1), slot])  # 1: CLOCK_MONOTONIC
            zero = llvm_ir.Constant(int32, 0)
            seconds = builder.load(builder.gep(slot, [zero, zero]))
            nanoseconds = builder.load(builder.gep(slot, [zero, llvm_ir.Constant(int32, 1)]))
            return builder.add(builder.mul(seconds, llvm_ir.Constant(int64, 1_000_000_000)), nanoseconds)

        return numba_types.int64(), codegen

    @kernel
    def monotonic_ns():
        """Monotonic clock [ns], the same as ``time.monotonic_ns()`` on Linux."""
        return _clock_monotonic_ns()

else:
    cgutils = intrinsic = llvm_ir = numba_types = overload = structref = None
    monotonic_ns = time.monotonic_ns
