"""ARCHITECTURE.md's map read as paths, so a module is named only where it lives.

The map is the fenced tree under "## The folders": a line starting with folder names
(``reads/``) opens them, indented lines below belong to them, and a line's file names,
first in the line (``series.py catalog.py``) or in its words (``(exithooks.py ...)``),
name files of the folders it stands in. ``stats/counts.py`` in a line's words is looked
for from that folder up to the root, so a line may name a neighbour's module. A name
that resolves to no file is "gone"; ``reads/live.py`` is not named by a ``live.py``
under another folder, nor by the word "live".
"""

from __future__ import annotations

import re
from pathlib import Path

FILE = re.compile(r"[\w./-]*\w\.(?:py|js|css)\b")
HEADING = "## The folders"


def tree_block(text: str) -> list[str]:
    """The lines of the first fenced block after the folders' heading."""
    after = text[text.index(HEADING):]
    start = after.index("```") + 3
    return after[start:after.index("```", start)].splitlines()[1:]


def _names(line: str) -> tuple[list[str], str]:
    """The folder and file names a line starts with, and the words after them."""
    tokens = line.split()
    names = []
    for token in tokens:
        if token.endswith("/") or FILE.fullmatch(token):
            names.append(token)
        else:
            break
    rest = line.strip()[len(" ".join(names)):] if names else line.strip()
    return names, rest


def _resolve(root: Path, folders: list[Path], name: str) -> list[Path]:
    """``name`` in each of ``folders`` or, failing that, in the nearest folder above."""
    found = []
    for folder in folders:
        for base in (folder, *folder.parents):
            candidate = base / name
            if candidate.is_file() and root in (candidate, *candidate.parents):
                found.append(candidate)
                break
    return found


def read_map(text: str, root: Path) -> tuple[set[Path], list[str]]:
    """(every file the tree names, by path; each name in it that resolves to none)."""
    named: set[Path] = set()
    gone: list[str] = []
    stack: list[tuple[int, list[Path]]] = [(-1, [root])]
    context = [root]
    for line in tree_block(text):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        names, words = _names(line)
        if names:
            while stack[-1][0] >= indent:
                stack.pop()
            parents = stack[-1][1]
            folders = [parent / name.rstrip("/") for parent in parents
                       for name in names if name.endswith("/")]
            if folders:
                stack.append((indent, folders))
            context = folders or parents
            for name in names:
                if not name.endswith("/"):
                    words = f"{name} {words}"
        for name in FILE.findall(words):
            found = _resolve(root, context, name)
            named.update(found)
            if not found:
                gone.append(name)
    return named, gone


def unnamed(text: str, root: Path, packages: tuple[str, ...]) -> list[str]:
    """The modules of ``packages`` (packages' ``__init__.py`` aside) the map does not name
    by path."""
    named, _gone = read_map(text, root)
    return sorted(str(path.relative_to(root)) for package in packages
                  for path in (root / package).rglob("*.py")
                  if path.name != "__init__.py" and path not in named)
