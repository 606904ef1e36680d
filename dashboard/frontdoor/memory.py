"""Large blocks from the kernel and straight back to it, so a worker's memory follows
what it holds.

glibc serves a block of 128 KiB or more with its own mmap, returned to the kernel when
freed, but raises that threshold (up to 32 MiB) each time such a block is freed: after a
few History renders, every chart's frame, pickle and JSON comes from the heap, where freed
blocks between live ones are never given back. Under a flood of distinct minute views
(issue 44, row 4) the worker grew 136 → 368 → 417 MB after 200 and 400 views with the
result cache bounded at 64 MiB; with the threshold fixed, 131 → 287 → 298 MB.
"""

from __future__ import annotations

import ctypes
import os

M_MMAP_THRESHOLD = -3                       # glibc's malloc.h
MMAP_THRESHOLD = 128 * 1024                 # glibc's default, kept fixed
ENVIRONMENT = "MALLOC_MMAP_THRESHOLD_"      # glibc's own tunable: an operator's choice wins


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at ``threshold`` bytes; False where there is no glibc
    (musl, macOS) or the environment already sets it."""
    if ENVIRONMENT in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, threshold) == 1
