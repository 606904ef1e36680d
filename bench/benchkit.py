"""What several benchmarks share: loading a module by its path (``bench/dashboard.py``
and ``tests/hostilekit.py`` would be shadowed by, or are not on the path of, the
project's packages)."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def load(name: str, path: Path):
    """The module at ``path``, imported under ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
