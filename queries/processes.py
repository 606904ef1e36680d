"""Worker processes for bulk work (an ingest's line mapping, its rollups), one way.

Started with ``spawn`` (nothing of the parent's open store or threads is inherited), or
forked when the caller asks before it opens a store and while it runs no other thread
(children then start with its modules imported, nothing else worth inheriting); they
ignore Ctrl-C (the parent stops them) and die with the parent even when it is
killed (``PR_SET_PDEATHSIG``), so no orphan writes after it. Each connects to the store
itself in its ``initializer``: the embedded store takes writers from several processes,
MongoDB from anywhere. Also the halt points the fault tests kill a run at (``halt_point``,
inert unless a test armed ``halt_at``).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from contextlib import suppress

_PR_SET_PDEATHSIG = 1


def can_fork() -> bool:
    """Whether workers may be forked now, as far as this process can tell: no other
    thread runs. Opening no store before is the caller's part (SQLite and pymongo
    connections must not cross a fork). Nor may Polars' pool, whose threads Python does
    not count: a child forked once they run hangs on its first frame."""
    return (threading.active_count() == 1 and not _polars_pool()
            and "fork" in multiprocessing.get_all_start_methods())


def _polars_pool() -> bool:
    """Whether Polars' thread pool runs here (its threads are named ``polars-N``)."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return False
    names = []
    for task in tasks:
        with suppress(OSError), open(f"/proc/self/task/{task}/comm") as comm:
            names.append(comm.read())
    return any(name.startswith("polars-") and name[7:8].isdigit() for name in names)


def pool(jobs: int, initializer=None, *initargs, fork: bool = False) -> ProcessPoolExecutor:
    """``jobs`` worker processes, each running ``initializer(*initargs)`` first if given
    (a module-level function: it is sent to the new interpreter by name). ``fork``
    (only when :func:`can_fork`): the workers are forked at once, sparing each the
    ~0.6 s of imports a spawned interpreter makes."""
    executor = ProcessPoolExecutor(
        jobs, mp_context=multiprocessing.get_context("fork" if fork else "spawn"),
        initializer=_started, initargs=(os.getpid(), initializer, initargs))
    # Every worker starts now, from this thread: forked before a thread or store opens;
    # spawned here, not by whichever thread submits first (the death signal that ties a
    # worker to its parent fires when the *thread* that started it ends).
    for _ in range(1 if fork else jobs):
        executor.submit(int)
    return executor


def _started(parent: int, initializer, initargs: tuple) -> None:
    as_child(parent)
    if initializer is not None:
        initializer(*initargs)


def as_child(parent: int) -> None:
    """What a worker process does first: die with ``parent`` (its pid), ignore Ctrl-C."""
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _die_with_parent(parent: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):   # not Linux: the pool's own checks remain
        pass
    if os.getppid() != parent:          # the parent died before prctl took effect
        os._exit(1)


# -- halt points: where a fault test kills a process ------------------------------------
# Inert unless a test armed them (``halt_at``, from the wrapper script it runs ingest with:
# tests/ingestkit.py); ``halt_point`` then costs one comparison.
_halt: tuple[str, int] | None = None
_reached: dict[str, int] = {}


def halt_at(step: str, nth: int = 1) -> None:
    """Test-only: the ``nth`` time this process reaches ``halt_point(step)``, it stops its
    whole process group (SIGSTOP), so the test that started it in a group of its own
    learns the moment from ``waitid`` and kills it exactly there."""
    global _halt
    _halt = (step, nth)


def halt_point(step: str) -> None:
    """A named moment of a run (the steps of an ingest's flush) a fault test may kill the
    process at; nothing happens unless ``halt_at`` armed it."""
    if _halt is None:
        return
    _reached[step] = _reached.get(step, 0) + 1
    if _halt == (step, _reached[step]):
        os.killpg(os.getpgrp(), signal.SIGSTOP)
