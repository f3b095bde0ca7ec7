"""``python -m ik_node.solver`` (also ``ik_node warmup``): compile the IK kernels into numba's
cache ahead of their use, so that no process pays the compile at its first solves: after an
install, in a container image's build (docs/install.md), before the test suite's workers start.

By default it compiles the default problem's kernels, each feature's alone, those trees add
(several tips, a free base), the closed form's (``solve_all``) and the default problem's
straight lines' (``cartesian_path``; see :mod:`ik_node.solver.warmup`);
``--features F ...`` exactly that combination (``none``: the default problem), ``--all`` every
combination and the rest. ``--cache-dir DIR`` warms ``DIR`` (it must exist and be writable),
what ``NUMBA_CACHE_DIR=DIR`` does for a later process. It prints where the cache lives, what it
holds and for which CPU (numba keys the cache to the CPU and its own version: a cache warmed on
another CPU is compiled again, and not saved when read-only).

Exit codes: 0 warmed (or nothing to compile: plain Python); 2 bad input (an unknown feature, a
cache directory that does not exist or is not writable); 1 a compile failed.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys

from .compile_helper import DEFAULT, FEATURES, feature_names, switch_key

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def parser() -> argparse.ArgumentParser:
    command = argparse.ArgumentParser(
        prog="ik_node warmup", description=__doc__.split("\n\n")[0].replace("\n", " "),
        epilog="exit codes: 0 warmed, 1 a compile failed, 2 bad input",
    )  # fmt: skip
    command.add_argument(
        "--features", nargs="+", metavar="F", choices=[*FEATURES, "none"],
        help=f"exactly this combination of features ({', '.join(FEATURES)}; 'none': the default problem)",
    )  # fmt: skip
    command.add_argument("--all", action="store_true", help="every combination of features (16; minutes)")
    command.add_argument(
        "--cache-dir", metavar="DIR", help="the kernel cache to warm (as NUMBA_CACHE_DIR=DIR)"
    )
    command.add_argument("--quiet", action="store_true", help="print nothing but errors")
    command.add_argument(
        "--background", action="store_true", help="at a lower CPU priority (nice 10), as a solver's helper"
    )
    return command


def combinations(arguments) -> list[tuple[bool, ...]]:
    """The switch combinations to compile."""
    if arguments.all:
        return [tuple(key) for key in itertools.product((False, True), repeat=len(FEATURES))]
    if arguments.features:
        return [switch_key(feature for feature in arguments.features if feature != "none")]
    return [DEFAULT] + [switch_key([feature]) for feature in FEATURES]


def main(argv: list[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    if arguments.background:  # (behind the process it compiles for: its start and solves come first)
        os.nice(10)
    if arguments.cache_dir is not None:
        directory = os.path.abspath(arguments.cache_dir)
        if not os.path.isdir(directory):
            why = "is not a directory" if os.path.exists(directory) else "does not exist; create it first"
            print(f"error: the cache directory {directory} {why}", file=sys.stderr)
            return EXIT_BAD_INPUT
        if not os.access(directory, os.W_OK):
            print(f"error: the cache directory {directory} is not writable by this user", file=sys.stderr)
            return EXIT_BAD_INPUT
        if os.environ.get("NUMBA_CACHE_DIR") != directory:  # (numba reads it when it is imported)
            environment = {**os.environ, "NUMBA_CACHE_DIR": directory}
            command = [sys.executable, "-m", "ik_node.solver", *(argv if argv is not None else sys.argv[1:])]
            os.execve(sys.executable, command, environment)
    return warm_all(combinations(arguments), arguments.quiet, trees=not arguments.features)


def warm_all(keys: list[tuple[bool, ...]], quiet: bool, trees: bool = True) -> int:
    """Compile every combination of ``keys`` and, with ``trees``, the kernels trees add
    (:func:`~.warmup.warm_trees`); says what it did unless ``quiet``."""
    import time

    from ..compiled.jit import JIT_ENABLED, cache_location, compiler
    from . import kernels
    from .warmup import warm, warm_closed_form, warm_paths, warm_trees

    if not JIT_ENABLED:
        if not quiet:
            print("IK kernels: numba is not in use (plain Python); nothing to compile")
        return EXIT_OK
    began = time.perf_counter()
    for key in keys:
        name = "+".join(feature_names(key)) or "default"
        try:
            seconds, compiled = warm(key)
        except ImportError as error:  # (collision needs the collision extra)
            print(f"{name}: skipped ({error})", file=sys.stderr)
            continue
        except Exception as error:  # noqa: BLE001  (said, and the exit code tells)
            print(f"{name}: the compile failed: {error!r}", file=sys.stderr)
            return EXIT_FAILED
        if not quiet:
            print(f"{name}: {'compiled' if compiled else 'loaded from the cache'} in {seconds:.1f} s")
    if trees:
        seconds, compiled = warm_trees()
        if not quiet:
            done = "compiled" if compiled else "loaded from the cache"
            print(f"trees (several tips, a free base): {done} in {seconds:.1f} s")
        seconds, compiled = warm_closed_form()
        if not quiet:
            done = "compiled" if compiled else "loaded from the cache"
            print(f"closed form (solve_all, nearest solutions): {done} in {seconds:.1f} s")
        seconds, compiled = warm_paths()
        if not quiet:
            done = "compiled" if compiled else "loaded from the cache"
            print(f"straight lines (cartesian_path): {done} in {seconds:.1f} s")
    if not quiet:
        print(
            f"IK kernels ready in {time.perf_counter() - began:.1f} s; cache: "
            f"{cache_location(kernels.search_many)} ({compiler()})"
        )
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
