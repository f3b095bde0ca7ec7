"""The threads batches run on (:data:`~ik_node.compiled.jit.BATCH_THREADS`), and a batch cut into
slices for them: what :mod:`.batch` and :mod:`.nearest_batch` share."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from ..compiled.jit import BATCH_THREADS

__all__ = ["SLICES_PER_THREAD", "in_slices"]

#: ``solve_many`` cuts a batch into this many slices per thread, which the threads take in turn
#: as they finish (a slice of targets that use their whole budget holds up one thread, not all).
SLICES_PER_THREAD = 4

_batch_pool: tuple[int, ThreadPoolExecutor] | None = None  # (the process it serves, the pool)
_batch_pool_lock = threading.Lock()


def _batch_threads() -> ThreadPoolExecutor:
    """The threads ``solve_many`` spreads batches over, made at its first call (again in a
    forked child, where the parent's threads do not exist)."""
    global _batch_pool
    with _batch_pool_lock:
        if _batch_pool is None or _batch_pool[0] != os.getpid():
            _batch_pool = (os.getpid(), ThreadPoolExecutor(BATCH_THREADS, thread_name_prefix="ik_node-batch"))
        return _batch_pool[1]


def in_slices(count: int, work) -> None:
    """``work(first, stop)`` over ``range(count)`` cut into ``SLICES_PER_THREAD`` slices per batch
    thread, which the threads take in turn (the caller's thread alone for one thread or item);
    ``work`` must release the GIL (a :func:`~ik_node.compiled.jit.batch_kernel`) to run in parallel."""
    slices = min(count, BATCH_THREADS * SLICES_PER_THREAD)
    if BATCH_THREADS == 1 or slices <= 1:
        work(0, count)
        return
    bounds = [(count * index // slices, count * (index + 1) // slices) for index in range(slices)]
    for _ in _batch_threads().map(lambda pair: work(*pair), bounds):  # (re-raises a thread's error)
        pass
