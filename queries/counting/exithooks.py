"""Flush every live HitRecorder when the interpreter exits or receives SIGTERM."""

from __future__ import annotations

import atexit
import signal
import threading
import weakref

_LIVE: weakref.WeakSet = weakref.WeakSet()
_HANDLERS_INSTALLED = False


def register(recorder) -> None:
    """Flush every live recorder at interpreter exit and on SIGTERM (then defer to the
    previous SIGTERM handler, or exit with status 143 as the default one would)."""
    global _HANDLERS_INSTALLED
    _LIVE.add(recorder)
    if _HANDLERS_INSTALLED:
        return
    _HANDLERS_INSTALLED = True
    atexit.register(close_all)
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum, frame):
        close_all()
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_sigterm)


def close_all() -> None:
    for recorder in list(_LIVE):
        recorder.close()
