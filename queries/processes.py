"""Worker processes for bulk work (an ingest's line mapping, its rollups), one way.

Started with ``spawn`` (nothing of the parent's open store or threads is inherited),
they ignore Ctrl-C (the parent stops them) and die with the parent even when it is
killed (``PR_SET_PDEATHSIG``), so no orphan writes after it. Each connects to the store
itself in its ``initializer``: the embedded store takes writers from several processes,
MongoDB from anywhere.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor

_PR_SET_PDEATHSIG = 1


def pool(jobs: int, initializer, *initargs) -> ProcessPoolExecutor:
    """``jobs`` worker processes, each running ``initializer(*initargs)`` first (a
    module-level function: it is sent to the new interpreter by name)."""
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_started,
                               initargs=(os.getpid(), initializer, initargs))


def _started(parent: int, initializer, initargs: tuple) -> None:
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    initializer(*initargs)


def _die_with_parent(parent: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):   # not Linux: the pool's own checks remain
        pass
    if os.getppid() != parent:          # the parent died before prctl took effect
        os._exit(1)
