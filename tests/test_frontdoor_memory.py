"""The front door's worker fixes glibc's mmap threshold, so large
blocks freed after a History render go back to the kernel."""

from __future__ import annotations

import ctypes
import platform
import subprocess
import sys

import pytest

from dashboard.frontdoor import limits as memory

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")


# Rounds of 400 blocks of 256 KiB among small ones that stay, as a render leaves them:
# the RSS (MiB) at each round's peak and once its blocks are freed.
ROUNDS = """
import sys
from dashboard.frontdoor import limits as memory

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024

if sys.argv[1] == "fixed":
    assert memory.fix_mmap_threshold()
kept = []
for _ in range(3):
    big = []
    for _ in range(400):
        big.append(bytearray(256 * 1024))
        kept.append(bytearray(512))
    peak = rss()
    del big
    print(peak, rss())
"""


def rounds(mode: str) -> list[tuple[int, int]]:
    out = subprocess.run([sys.executable, "-c", ROUNDS, mode], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    return [tuple(map(int, line.split())) for line in out.splitlines()]


@glibc
def test_freed_large_blocks_go_back_to_the_kernel(monkeypatch):
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    fixed, dynamic = rounds("fixed"), rounds("dynamic")
    print(f"\nRSS MiB (peak, freed) a round: fixed threshold {fixed}, glibc's own {dynamic}")
    for peak, freed in fixed:
        assert freed < peak / 4


@glibc
def test_the_threshold_is_fixed_on_glibc():
    assert memory.fix_mmap_threshold() is True


def test_without_mallopt_nothing_happens(monkeypatch):

    class NoMallopt:
        def __init__(self, name):
            pass

    monkeypatch.setattr(ctypes, "CDLL", NoMallopt)
    assert memory.fix_mmap_threshold() is False
